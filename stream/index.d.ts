import type { Transform } from 'node:stream'
import type { Scheduler, Tokenizer } from '../index'

/** One batch of documents prepared for the addon: UTF-8 bytes with `documents + 1` boundaries, JS
 * strings, or whole lines as a file holds them (`Tokenizer.encodeLines`: a document per line, or a
 * JSONL record's string `field` per non-blank line, cut and read on the scheduler's threads).
 * `source` is passed on to the batch's `TokenBatch` untouched, and to the error it rejects with,
 * as the error's `source`. `firstDocument` (set by `batchDocuments`) is the index of the batch's
 * first document in the whole stream: an error about one of its texts then names the document by
 * that index (`document 1234 of the stream: …`, with `documentIndex`). `continues: true` says
 * the batch's last document is the start of one whose rest begins the next batch, cut where
 * `Tokenizer.lastSafeCut` allows (asked with `afterCut: true`), so that the two parts' ids are the
 * ids of the whole: `encodeBatches` and the stream's other encoders encode the next batch with
 * `afterCut: true`; with `encodeOne`, pass it in `encodeOptions`.
 * `restarts: true` says the document the batch before left open starts over with this batch's
 * first (as where a long JSONL record gives its text field twice), for a consumer that drops the
 * open document's ids. `recordOutline: true` marks the batch `batchLines` ends a long JSONL record
 * with: one line, the record with its string values emptied, checked by `encodeLines`; after a
 * batch that `continues`, it is encoded with `addSpecialTokens: false` (and `afterCut`), so that
 * it ends the document adding no ids. */
export type DocumentBatch = (
  | { bytes: Uint8Array; offsets: Uint32Array | readonly number[]; source?: unknown; firstDocument?: number }
  | { texts: readonly string[]; source?: unknown; firstDocument?: number }
  | { lines: Uint8Array; format: 'lines'; source?: unknown }
  | { lines: Uint8Array; format: 'jsonl'; field: string; source?: unknown }
) & { continues?: boolean; restarts?: boolean; recordOutline?: boolean }

/** The ids of one batch: document `i`'s ids are `ids.subarray(offsets[i], offsets[i + 1])`. */
export interface TokenBatch {
  ids: Uint32Array
  offsets: Uint32Array
  /** How many documents the batch holds. */
  documents: number
  /** The documents' UTF-8 bytes. */
  bytes: number
  /** For a batch of lines, how many lines it held, blank ones included. */
  lines?: number
  /** The input batch's `source`, if it had one. */
  source?: unknown
  /** Set where the input batch `continues`: the last document's ids go on in the next batch's
   * first document, and `eosId` is not appended to them here. */
  continues?: true
  /** Set where the input batch `restarts`: drop the ids of the document the batches before left
   * open (`continues`); this batch's first document is that document from its start. */
  restarts?: true
}

/** Checked when a function is called: an unknown name is a `TypeError`, and a batch size below 1
 * or an `eosId` outside the tokenizer's ids a `RangeError`, each naming the option. */
export interface EncodeStreamOptions {
  /** The scheduler that runs the batches. @default Scheduler.getDefault() */
  scheduler?: Scheduler
  /** Stops the stream: the running batch rejects with an AbortError. */
  signal?: AbortSignal
  /** An id appended after every document's ids (an end-of-text token). */
  eosId?: number
  /** Text per batch, in bytes. @default 4194304 */
  batchBytes?: number
  /** Documents per batch at most. @default 65536 */
  batchDocuments?: number
  /** Options for every batch call (allowedSpecial, addSpecialTokens, …). */
  encodeOptions?: Record<string, unknown>
}

export type Document = string | Uint8Array

/** Encodes documents into token batches, in order: one batch encodes on the scheduler's threads
 * while the next is gathered, and at most three batches are held at once. The batch with which the
 * batches handed over reach half of `tokenizer.engineWaitBytes` waits for `tokenizer.whenReady()`
 * before it starts, in `encodeBatches`, `encodeLineStream` and `createEncodeStream` too: until
 * then the tokenizer encodes on its first, slower engine, and a stream that keeps every core busy
 * leaves the build of the fastest one none. */
export function encodeStream(
  tokenizer: Tokenizer,
  documents: Iterable<Document> | AsyncIterable<Document>,
  options?: EncodeStreamOptions,
): AsyncGenerator<TokenBatch>

/** Encodes batches already prepared (a file's bytes and line offsets, say), one while the next is
 * read; yields one `TokenBatch` per input batch. */
export function encodeBatches(
  tokenizer: Tokenizer,
  batches: Iterable<DocumentBatch> | AsyncIterable<DocumentBatch>,
  options?: EncodeStreamOptions,
): AsyncGenerator<TokenBatch>

/** Starts encoding one batch; resolves to its `TokenBatch`. A rejection carries the batch's
 * `source`, where it has one, as the error's `source`. */
export function encodeOne(tokenizer: Tokenizer, batch: DocumentBatch, options?: EncodeStreamOptions): Promise<TokenBatch>

/** Groups documents into `DocumentBatch`es of about `batchBytes`. */
export function batchDocuments(
  documents: Iterable<Document> | AsyncIterable<Document>,
  options?: Pick<EncodeStreamOptions, 'batchBytes' | 'batchDocuments'>,
): AsyncGenerator<DocumentBatch>

/** How `batchLines` and `encodeLineStream` read a stream of text chunks. Checked when a function is
 * called: a format other than the two, or a field for `'lines'`, is a `TypeError`. */
export interface LineStreamOptions {
  /** `'lines'`: each line is a document (a blank line is an empty one). `'jsonl'`: each line is a
   * JSON record whose string `field` is the document; blank lines are skipped, and a byte order
   * mark starting the stream too. A line ends at `\n`; a `\r` before it is not part of it.
   * @default 'lines' */
  format?: 'lines' | 'jsonl'
  /** The text field of a `'jsonl'` record. @default 'text' */
  field?: string
  /** Text per batch, in bytes: a batch ends at its last line end within this size, or, where one
   * line is longer, at that line's end (or where `cutLine` cuts it). @default 4194304 */
  batchBytes?: number
  /** For `batchLines`: where a line longer than `batchBytes` may be cut, e.g.
   * `(bytes, from) => tokenizer.lastSafeCut(bytes, from, { afterCut: true })`: -1 (no place) or
   * a number of `bytes` (any other answer is a `TypeError`); the batches of its parts but the last
   * say `continues`. Without it, or where it returns -1 or 0, a line is held whole. With format
   * `'jsonl'`, a record longer than `batchBytes` whose end has not come with the chunks read is
   * read as its bytes come: its field's text in parts cut there, then a batch of one line, the
   * record with its string values emptied, which `encodeLines` checks and which ends the
   * document; where the field comes twice, a batch says `restarts`. */
  cutLine?: (bytes: Uint8Array, from: number) => number
  /** For `batchLines`: the start of a line longer than `batchBytes` whose ids a truncation keeps,
   * e.g. `(bytes) => tokenizer.keptByTruncation(bytes)` (-1 where there is none, as `cutLine`),
   * asked where `cutLine` finds no place, and not about a line once a part of it is handed over;
   * where it returns a length, the batch holds that start as a line and the rest of the line is
   * read past, only checked to be UTF-8 (where it is not, the line is refused as `encodeLines`
   * refuses any such line). With format `'jsonl'` and `cutLine`, a long record's text so: its
   * start is its one part, the rest decoded and checked but not handed over. */
  keptLine?: (bytes: Uint8Array) => number
}

/** A text chunk: UTF-8 bytes or a string, cut anywhere (a file's or a socket's reads, a
 * decompressor's output; a `Readable` of either is an async iterable of them). */
export type TextChunk = string | Uint8Array

/** Cuts text chunks into `DocumentBatch`es of whole lines, for `encodeLines` (`encodeBatches`
 * takes them). A line longer than `batchBytes` makes a batch of its own, or batches of its parts
 * where `cutLine` cuts it; a chunk is read only when the batch before has been taken. */
export function batchLines(
  chunks: Iterable<TextChunk> | AsyncIterable<TextChunk>,
  options?: LineStreamOptions,
): AsyncGenerator<DocumentBatch>

/** Encodes a stream of text chunks, a document per line or per JSONL record: the lines are cut into
 * batches (`batchLines`), each cut into documents and encoded on the scheduler's threads, one
 * while the next is read; at most three batches are held. An error about a line names it by its
 * number in the stream (`line 812 of the stream: …`) and carries `lineNumber` (from 1), besides
 * `encodeLines`' `code`, `reason` and `lineIndex` (in its batch). `batchDocuments` does not apply:
 * a batch's documents are counted as its lines are read. `longLines: 'parts'` hands a line
 * longer than `batchBytes` over in parts where `tokenizer.lastSafeCut` finds a place (for parts
 * encoded as `encodeOptions` says, each after a cut with `afterCut`; a truncation is refused), so
 * memory stays bounded for one line of any length: a `TokenBatch` that `continues` ends with the
 * first ids of a line whose next ids start the next batch. Under a tokenizer.json's truncation
 * that keeps the first ids (and without `truncation: false`), a line longer than `batchBytes` (or
 * a long record's text) is read up to the start `tokenizer.keptByTruncation` finds, which is
 * encoded, and the rest of it is read past. Where a tokenizer.json's template puts
 * tokens around each text (Llama 3.1's `<|begin_of_text|>`, Llama 2's `<s>`) and the file is cut
 * only without them, the lines are then encoded without them and the stream puts them around
 * each line's ids itself, as the template would. With format `'jsonl'`, a record's text field is so handed over (see
 * `LineStreamOptions.cutLine`), and a record whose field comes twice, after parts of its first
 * value, makes a `TokenBatch` that `restarts`: the ids of the document left open are dropped, and
 * the batch's first document is that record's. */
export function encodeLineStream(
  tokenizer: Tokenizer,
  chunks: Iterable<TextChunk> | AsyncIterable<TextChunk>,
  options?: Omit<EncodeStreamOptions, 'batchDocuments'> & Omit<LineStreamOptions, 'cutLine' | 'keptLine'> & { longLines?: 'whole' | 'parts' },
): AsyncGenerator<TokenBatch>

/** A `Transform` in object mode: write documents, read `TokenBatch`es, with backpressure. */
export function createEncodeStream(tokenizer: Tokenizer, options?: EncodeStreamOptions): Transform

export const DEFAULT_BATCH_BYTES: number
export const DEFAULT_BATCH_DOCUMENTS: number
/** How many documents a `DocumentBatch` holds (`NaN` for a batch of lines: known once encoded). */
export function documentsIn(batch: DocumentBatch): number
/**
 * The text bytes a `DocumentBatch` holds (strings counted in UTF-8; a batch of lines as read,
 * line ends and JSON syntax included).
 */
export function bytesIn(batch: DocumentBatch): number
