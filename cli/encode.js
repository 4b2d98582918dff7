'use strict'
// `batchtok encode`: inputs → document batches → cli/pipeline → output files, with a checkpoint
// after each group of batches so that the same command, run again, resumes.

const fs = require('node:fs')
const os = require('node:os')
const { documentsIn } = require('../stream')
const { encodeInOrder } = require('./pipeline')
const { resolveInputs } = require('./inputs')
const { parseShard, shardParts, planBatches, partBytes, expectedTextBytes } = require('./plan')
const { loadTokenizer, eosIdOf } = require('./tokenizer')
const { templateEnds } = require('../stream/ends')
const { OutputWriter, makeOutputFolder } = require('./output')
const { CHECKPOINT_VERSION, fingerprint, readCheckpoint, writeCheckpoint } = require('./checkpoint')
const { createProgress } = require('./progress')
const { watchStopSignals, StoppedError } = require('./stop-signals')
const { UsageError, writeError } = require('./errors')
const { lineError, skipLines } = require('./readers')
const timeline = require('./timeline')

/** Text per batch. As many batches encode at once as there are threads (and `SPARE_BATCHES`),
 * each on one thread (cli/pipeline.js); the peak RSS grows with the batch, the CPU does not shrink (measured on
 * 300 MB of text, 2 threads: 192 MiB at 1 MiB, 226 MiB at 2 MiB, 291 MiB at 4 MiB). */
const CLI_BATCH_BYTES = 1 << 20

/**
 * Text per batch of JSONL. A JSONL batch encodes faster per byte than one of short lines, so the
 * hand-over between batches is a larger share of it: at 2 MiB, 2.44-2.67 s against 2.61-2.89 s
 * at 1 MiB on 302 MiB of JSONL (5 quiet runs each, interleaved), with a peak RSS of 215-243 MiB.
 */
const CLI_JSONL_BATCH_BYTES = 2 << 20

/**
 * Batches encoding at once beyond `--threads` when the threads take every core. Between two
 * batches the event loop must run (to take the finished batch and hand over the next), and with
 * every core busy encoding it may wait behind an encoding thread while the finished thread's core
 * idles: about 3 ms a batch, a quarter of the cores' time at 1 MiB batches on two cores (measured
 * with `benchmark/cli-timeline.mjs`). A spare batch already running takes that core at once; the
 * OS shares the cores among the encoding threads, so no more cores are used than there are. With
 * fewer threads than cores the event loop has a core of its own, and no spare batch is run.
 */
const SPARE_BATCHES = 1

/** libuv threads besides the encoding ones: `whenReady`'s wait, and the file reads, writes and
 * background syncs, which must not queue behind the encoding. */
const IO_THREADS = 3

/** Output formats (`--output-format`); `--count-only` is `counts`. */
const OUTPUT_FORMATS = ['megatron', 'flat']

/**
 * Drops the first `count` documents of `batches` (those a resumed run has already written). A
 * batch of lines is counted here, in JS, only while documents are left to drop.
 * @param {AsyncIterable<object>} batches
 * @param {number} count
 */
async function* skipDocuments(batches, count) {
  let left = count
  for await (const batch of batches) {
    if (left === 0) {
      yield batch
      continue
    }
    if (batch.lines) {
      const skipped = skipLines(batch, left)
      left -= skipped.documents
      if (skipped.end === batch.lines.length) {
        batch.source.settle(skipped.lines)
        continue
      }
      batch.source.skipped = skipped.lines
      yield { ...batch, lines: batch.lines.subarray(skipped.end) }
      continue
    }
    const documents = documentsIn(batch)
    // The documents that end in the batch: all but the last where it `continues`, whose start is
    // skipped with the batch only if more documents than end here are to be skipped.
    const ending = batch.continues ? documents - 1 : documents
    if (left > ending || (left === ending && !batch.continues)) {
      left -= ending
      continue
    }
    const source = { ...batch.source, firstLine: batch.source.firstLine + left }
    yield batch.texts
      ? { ...batch, texts: batch.texts.slice(left), source }
      : { ...batch, offsets: batch.offsets.slice(left), source }
    left = 0
  }
  if (left > 0) throw new UsageError(`the checkpoint counts more documents than the input holds; delete the checkpoint to start over`)
}

/** Passes `batches` on, rewriting an error that names a line of a batch into one naming its file
 * and line. */
async function* mapLineErrors(batches) {
  try {
    yield* batches
  } catch (error) {
    throw lineError(error, error?.source) ?? error
  }
}

/**
 * This process's peak resident memory in MiB. On Linux from /proc's VmHWM: `getrusage`'s maxrss
 * survives `exec`, so a process started by a large parent would report the parent's size.
 */
function peakRssMiB() {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))
    if (match) return Math.round(Number(match[1]) / 1024)
  } catch {
    // Not Linux: resourceUsage is right for a process its parent did not outgrow.
  }
  return Math.round(process.resourceUsage().maxRSS / 1024)
}

/**
 * Runs `encode` over `patterns` with the parsed options; returns the summary.
 * @param {string[]} patterns
 * @param {Record<string, any>} options commander's options of `encode`
 */
async function runEncode(patterns, options) {
  const batchtok = require('../index.js')
  const started = Date.now()
  timeline.mark('start', undefined, true)
  const outputFormat = options.countOnly ? 'counts' : options.outputFormat
  if (!options.countOnly && !OUTPUT_FORMATS.includes(outputFormat)) {
    throw new UsageError(`--output-format ${outputFormat} is not a format; use megatron or flat (or --count-only)`)
  }
  const inputs = resolveInputs(patterns, options.format)
  const shard = parseShard(options.shard)
  const parts = shardParts(inputs, shard, options.docPerFile)
  const loaded = loadTokenizer(options, batchtok)
  const eosId = options.appendEos ? eosIdOf(loaded, options.eosToken) : undefined
  const givenBatchBytes = options.batchMib === undefined ? null : Math.max(1, Math.round(options.batchMib * (1 << 20)))
  const batchBytes = (format) => givenBatchBytes ?? (format === 'jsonl' ? CLI_JSONL_BATCH_BYTES : CLI_BATCH_BYTES)
  // Each batch is encoded by the libuv thread that runs its call, alone.
  const threads = options.threads ?? new batchtok.Scheduler().threads
  const scheduler = new batchtok.Scheduler({ threads: 1, policy: 'serial' })
  const concurrency = threads >= os.availableParallelism() ? threads + SPARE_BATCHES : threads
  // Read by libuv when its thread pool starts, at the first file read: in time here. A pool
  // already started (the CLI run inside another program) keeps its size; the encoding is the same.
  process.env.UV_THREADPOOL_SIZE ??= String(Math.max(4, concurrency + IO_THREADS))

  const writer = new OutputWriter(outputFormat, options.output, loaded.tokenizer.vocabSize)
  const checkpointFile = `${options.output}.checkpoint.json`
  const resumable = !inputs.some((input) => input.pipe)
  const settings = {
    outputFormat,
    dtype: writer.dtype,
    tokenizer: loaded.description,
    eosId,
    field: options.field,
    docPerFile: Boolean(options.docPerFile),
    shard,
  }
  const digest = fingerprint(settings, inputs)
  /** The run's summary: its counts (documents, tokens, textBytes) from `counts`. */
  const summary = (counts, resumedFrom, encodingStarted) => ({
    // Set-up before the first batch: loading, and waiting for an OpenAI encoding's full engine.
    startupSeconds: (encodingStarted - started) / 1000,
    documents: counts.documents,
    tokens: counts.tokens,
    bytes: counts.textBytes,
    inputBytes: partBytes(parts),
    seconds: (Date.now() - started) / 1000,
    shard: `${shard.index}/${shard.count}`,
    resumedFrom,
    dtype: writer.dtype,
    outputs: Object.values(writer.finals),
    peakRssMiB: peakRssMiB(),
  })
  makeOutputFolder(options.output)
  let checkpoint = resumable ? readCheckpoint(checkpointFile) : null
  // Checkpoints before the version field are version 1.
  if (checkpoint && (checkpoint.version ?? 1) !== CHECKPOINT_VERSION) {
    if (!options.force) {
      throw new UsageError(
        `${checkpointFile} was written by another version of batchtok's CLI (checkpoint format ${checkpoint.version ?? 1}, this CLI writes ${CHECKPOINT_VERSION}) and cannot be resumed; finish it with that version, or pass --force to start over`,
      )
    }
    checkpoint = null
  }
  if (checkpoint && checkpoint.fingerprint !== digest) {
    if (!options.force) {
      throw new UsageError(
        `${checkpointFile} belongs to another command or changed inputs; run that command again to resume it, or pass --force to start over`,
      )
    }
    checkpoint = null
  }
  if (checkpoint?.finished) {
    // The run completed its files and stopped among the renames that publish them, or before
    // deleting its checkpoint: only that is left to do. With --force, a run whose files are not
    // there to publish starts over.
    try {
      writer.publishFinished(checkpoint.finished)
      fs.rmSync(checkpointFile, { force: true })
      return summary(checkpoint, checkpoint.documents, Date.now())
    } catch (error) {
      if (!options.force) throw writeError(error)
      checkpoint = null
    }
  }
  if (!checkpoint && !options.force) {
    for (const file of Object.values(writer.finals)) {
      if (fs.existsSync(file)) throw new UsageError(`${file} exists; pass --force to overwrite it, or choose another --output`)
    }
  }

  const state = {
    documents: checkpoint?.documents ?? 0,
    tokens: checkpoint?.tokens ?? 0,
    textBytes: checkpoint?.textBytes ?? 0,
    rawBytes: 0,
  }
  /** `state`'s counts where the last document written ends: a checkpoint's, as the writer's
   * sizes are (a document cut into parts is counted once its last part is written). */
  let endOfDocument = { ...state }
  const progress = createProgress({ quiet: options.quiet, totalBytes: partBytes(parts), resumedTextBytes: state.textBytes })
  const intervalMs = (options.checkpointSeconds ?? 10) * 1000
  let lastCheckpoint = Date.now()
  /** The checkpoint of the run so far; `finished` (the files' sizes) once they are complete. */
  const checkpointOf = (finished) => ({
    version: CHECKPOINT_VERSION,
    fingerprint: digest,
    documents: endOfDocument.documents,
    tokens: endOfDocument.tokens,
    textBytes: endOfDocument.textBytes,
    sizes: writer.state(),
    ...(finished ? { finished } : {}),
  })
  const saveCheckpoint = () => {
    try {
      writer.sync()
      writeCheckpoint(checkpointFile, checkpointOf())
    } catch (error) {
      throw writeError(error)
    }
    lastCheckpoint = Date.now()
  }
  let encodingStarted = started
  let completed = false
  // A run that cannot resume (stdin, a pipe) gains nothing from stopping at a batch: a signal
  // ends it.
  const stop = resumable ? watchStopSignals() : { signal: null, dispose() {} }
  try {
    try {
      writer.open(checkpoint?.sizes)
    } catch (error) {
      throw writeError(error)
    }
    // On an input large enough (`engineWaitBytes`; a pipe counts as large), one core is left
    // to the engine's build while it lasts: the first engine encodes on at most the others (on one
    // where there are two), batches of the usual size only: one more than twice that holds a long
    // document, which is better left to the full engine. Every engine gives the same ids.
    const building = expectedTextBytes(parts) >= loaded.tokenizer.engineWaitBytes
    const ready = building ? loaded.tokenizer.whenReady() : Promise.resolve()
    if (timeline.enabled) ready.then(() => timeline.mark('ready', undefined, true), () => {})
    encodingStarted = Date.now()
    // The template's tokens are put around each document where that lets a long document be
    // cut; the end of text follows them.
    const template = templateEnds(loaded.tokenizer)
    const encodeOptions = template ? { addSpecialTokens: false } : undefined
    // The part after a cut is encoded as such (`encodeInOrder`).
    const cutOptions = { ...encodeOptions, afterCut: true }
    const cutLine = (bytes, from) => loaded.tokenizer.lastSafeCut(bytes, from, cutOptions)
    // Under a truncation that keeps a document's first ids, a long line is read up to a start
    // that has them all.
    const keptLine = (bytes) => loaded.tokenizer.keptByTruncation(bytes)
    const batches = skipDocuments(
      planBatches(parts, { docPerFile: options.docPerFile, field: options.field, batchBytes, progress: state, cutLine, keptLine }),
      state.documents,
    )
    const encoded = encodeInOrder(loaded.tokenizer, batches, {
      encoding: { scheduler, encodeOptions, template, eosId },
      concurrency,
      startConcurrency: building ? Math.max(1, Math.min(threads, os.availableParallelism() - 1)) : concurrency,
      startBatchBytes: 2 * Math.max(batchBytes('text'), batchBytes('jsonl')),
      ready,
    })
    let written = 0
    for await (const batch of mapLineErrors(encoded)) {
      if (batch.restarts) {
        // The open document starts over (the writer drops its ids): so do its counts.
        state.tokens = endOfDocument.tokens
        state.textBytes = endOfDocument.textBytes
      }
      // The next batch's first line is this one's first plus its lines, the one it ends inside
      // (`continues`) not counted.
      if (batch.lines !== undefined) batch.source.settle(batch.continues ? batch.lines - 1 : batch.lines)
      try {
        await writer.write(batch)
      } catch (error) {
        throw writeError(error)
      }
      timeline.mark('written', { batch: written++ })
      state.documents += batch.continues ? batch.documents - 1 : batch.documents
      state.tokens += batch.ids.length
      state.textBytes += batch.bytes
      if (!batch.continues) endOfDocument = { ...state }
      progress.update(state)
      if (stop.signal !== null) {
        saveCheckpoint()
        throw new StoppedError(
          stop.signal,
          `stopped by ${stop.signal}; ${endOfDocument.documents} documents are in ${checkpointFile}: run the same command again to resume`,
        )
      }
      if (resumable && Date.now() - lastCheckpoint >= intervalMs) saveCheckpoint()
    }
    timeline.mark('last-written', undefined, true)
    await writer.settle()
    timeline.mark('settled')
    try {
      const finished = await writer.complete()
      if (resumable) writeCheckpoint(checkpointFile, checkpointOf(finished))
      writer.publish()
    } catch (error) {
      throw writeError(error)
    }
    completed = true
  } finally {
    stop.dispose()
    await writer.settle()
    writer.close()
    progress.stop(completed ? 'done' : 'stopped')
    timeline.mark('closed', undefined, true)
  }
  fs.rmSync(checkpointFile, { force: true })
  timeline.flush()
  return summary(state, checkpoint ? checkpoint.documents : 0, encodingStarted)
}

module.exports = { runEncode, skipDocuments }
