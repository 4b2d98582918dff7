//! `encodeLines`: a batch of whole lines of bytes (text, or JSON Lines and a field), cut into
//! documents and encoded on the scheduler's threads (`crate::batch::encode_lines`); the object it
//! returns; and its errors, which name the failing line. `lastSafeCut`: where a line too long to
//! hold whole can be handed over a part at a time.

use std::ffi::CStr;
use std::sync::Arc;

use napi::bindgen_prelude::{TypedArrayType, Uint32Array, Unknown};
use napi::{Env, JsValue, Task, ValueType};
use napi_derive::napi;

use super::args::{bool_option, choice, describe, options_object, property, string, whole_number};
use super::errors::{
    DISALLOWED_CODE, ErrorClass, Property, disallowed_properties, disallowed_token_of, error_with,
    from_engine, from_failure, js_error, type_error,
};
use super::options::{Options, Takes};
use super::raw;
use super::scheduler::Runner;
use super::signal::AbortListener;
use super::tasks::TaskOutput;
use super::tokenizer::{Tokenizer, promise};
use crate::allocator;
use crate::batch::{Failure, LineError, LineFormat, LinesEncoded, LinesFailure, encode_lines};
use crate::engine::{self, EncodeMode};
use crate::scheduler::{BatchError, CancelToken};

/// How `encodeLines`'s bytes hold the documents.
#[napi(object, object_to_js = false, object_from_js = false)]
#[expect(
    dead_code,
    reason = "index.d.ts's type; `read_format` reads it by hand"
)]
pub struct LinesFormat {
    /// `'lines'`: each line is a document (a blank line is an empty one). `'jsonl'`: each line is
    /// a JSON record whose string field `field` is the document; blank lines are skipped.
    #[napi(ts_type = "'lines' | 'jsonl'")]
    pub format: String,
    /// The text field of a `'jsonl'` record.
    pub field: Option<String>,
}

/// The ids of the documents of `encodeLines`: document `i`'s ids are
/// `ids.subarray(offsets[i], offsets[i + 1])`.
#[napi(object, object_from_js = false)]
pub struct LinesEncoding {
    /// Every document's ids, back to back.
    pub ids: Uint32Array,
    /// One boundary per document, and one more: `documents + 1`.
    pub offsets: Uint32Array,
    /// The documents' text in UTF-8 bytes, line ends and JSON left out.
    pub text_bytes: f64,
    /// The lines `bytes` held, blank ones included: where the next batch of a file starts.
    pub lines: f64,
}

/// The keys of `encodeLines`'s format argument.
const FORMAT_KEYS: &[&str] = &["format", "field"];

/// Reads `encodeLines`'s format argument.
fn read_format(env: &Env, value: Unknown) -> napi::Result<LineFormat> {
    let expected = "expected { format: 'lines' } or { format: 'jsonl', field: 'text' }";
    if value.get_type()? != ValueType::Object || value.is_array()? {
        return Err(type_error(
            env,
            &format!("format is {}; {expected}", describe(&value)),
        ));
    }
    let object = options_object(env, Some(value), "encodeLines's format", FORMAT_KEYS)?
        .expect("checked to be an object");
    let format = property(env, &object, c"format")?
        .map(|format| choice(env, &format, "format.format", &["lines", "jsonl"]))
        .transpose()?;
    let field = property(env, &object, c"field")?
        .map(|field| string(env, &field, "format.field"))
        .transpose()?;
    match (format, field) {
        (Some("lines"), None) => Ok(LineFormat::Text),
        (Some("lines"), Some(_)) => Err(type_error(
            env,
            "format.field applies to 'jsonl'; a 'lines' document is the whole line",
        )),
        (Some(_), Some(field)) => Ok(LineFormat::Jsonl { field }),
        (Some(_), None) => Err(type_error(
            env,
            "format.field is missing; name the records' text field, e.g. { format: 'jsonl', field: 'text' }",
        )),
        (None, _) => Err(type_error(
            env,
            &format!("format.format is missing; {expected}"),
        )),
    }
}

/// An `encodeLines` call once its arguments are read.
pub struct LinesCall {
    tokenizer: Arc<engine::Tokenizer>,
    /// The caller's bytes, copied.
    bytes: Vec<u8>,
    /// The first document goes on a text cut before it (`afterCut`).
    after_cut: bool,
    format: LineFormat,
    mode: EncodeMode,
    runner: Runner,
    cancel: CancelToken,
    /// Kept on the caller's signal until the call is dropped, as in `BatchCall`.
    abort_listener: Option<AbortListener>,
}

impl LinesCall {
    fn encode(&self) -> TaskOutput<Result<LinesEncoded, LinesFailure>> {
        if self.cancel.is_cancelled() {
            return TaskOutput::Failed(Failure::Batch(BatchError::Cancelled));
        }
        let output = TaskOutput::of(|| {
            match encode_lines(
                &self.runner.scheduler,
                &self.tokenizer,
                &self.bytes,
                &self.format,
                &self.mode,
                self.after_cut,
                &self.cancel,
            ) {
                Err(LinesFailure::Batch(failure)) => TaskOutput::Failed(failure),
                result => TaskOutput::Done(result),
            }
        });
        if self.runner.release_memory {
            allocator::release_memory();
        }
        output
    }

    fn settle(
        &self,
        env: &Env,
        output: TaskOutput<Result<LinesEncoded, LinesFailure>>,
    ) -> napi::Result<LinesEncoding> {
        match output.into_result(env, self.abort_listener.as_ref())? {
            Ok(LinesEncoded {
                encoded,
                text_bytes,
                lines,
            }) => Ok(LinesEncoding {
                ids: Uint32Array::new(encoded.ids),
                offsets: Uint32Array::new(encoded.offsets),
                text_bytes: text_bytes as f64,
                lines: lines as f64,
            }),
            Err(LinesFailure::Line { line, error }) => Err(line_error(env, line, &error)),
            Err(LinesFailure::Document { line, failure }) => {
                Err(document_error(env, line, &failure))
            }
            Err(LinesFailure::Batch(failure)) => Err(from_failure(env, &failure, None)),
        }
    }
}

/// The error for a line that gives no document.
fn line_error(env: &Env, line: usize, error: &LineError) -> napi::Error {
    let (code, advice) = match error {
        LineError::NotUtf8 { .. } => ("ERR_NOT_UTF8", "convert the input to UTF-8"),
        LineError::Record(crate::batch::RecordError::Malformed { .. }) => {
            ("ERR_MALFORMED_JSON", "fix or remove the line")
        }
        LineError::Record(crate::batch::RecordError::MissingField { .. }) => {
            ("ERR_MISSING_FIELD", "name the text field with format.field")
        }
        LineError::Record(crate::batch::RecordError::NotString { .. }) => (
            "ERR_FIELD_NOT_STRING",
            "name a string field with format.field",
        ),
    };
    with_line(env, line, code, &error.to_string(), advice, &[])
}

/// The error for a line whose document did not encode: `ERR_ENCODE`, or, where a disallowed
/// special token stopped it, that token's code with the token and where it starts in the document.
fn document_error(env: &Env, line: usize, failure: &Failure) -> napi::Error {
    const ADVICE: &str = "the line's document did not encode";
    match failure {
        Failure::Batch(BatchError::ItemFailed { error, .. }) => {
            let reason = error.to_string();
            match disallowed_token_of(error) {
                Some(token) => {
                    let [_, text, at] = disallowed_properties(token);
                    with_line(env, line, DISALLOWED_CODE, &reason, ADVICE, &[text, at])
                }
                None => with_line(env, line, "ERR_ENCODE", &reason, ADVICE, &[]),
            }
        }
        Failure::Batch(BatchError::Panicked { message, .. }) => {
            with_line(env, line, "ERR_ENCODE", message, ADVICE, &[])
        }
        _ => with_line(env, line, "ERR_ENCODE", "it did not encode", ADVICE, &[]),
    }
}

/// An `Error` for line `line` (0-based): its message says the line (1-based), `reason` and
/// `advice`; it carries `lineIndex`, `code`, `reason` and `more`, so that a caller who knows where
/// the bytes came from (a file, from some line on) can say it in its own words.
fn with_line(
    env: &Env,
    line: usize,
    code: &str,
    reason: &str,
    advice: &str,
    more: &[(&CStr, Property)],
) -> napi::Error {
    let message = format!("line {}: {reason}; {advice}", line + 1);
    let properties = [
        (c"lineIndex", Property::Number(line as f64)),
        (c"code", Property::Text(code)),
        (c"reason", Property::Text(reason)),
    ];
    let properties: Vec<_> = properties.into_iter().chain(more.iter().copied()).collect();
    error_with(env, ErrorClass::Error, &message, &properties)
}

/// `encodeLines`'s async work.
pub struct EncodeLinesTask(LinesCall);

impl Task for EncodeLinesTask {
    type Output = TaskOutput<Result<LinesEncoded, LinesFailure>>;
    type JsValue = LinesEncoding;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(self.0.encode())
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<Self::JsValue> {
        self.0.settle(&env, output)
    }
}

#[napi]
impl Tokenizer {
    /// Encodes the documents of `bytes`, whole lines as a file holds them (the last may lack its
    /// `\n`; a `\r` before a `\n` is not part of the line): with `{ format: 'lines' }` each line
    /// is a document; with `{ format: 'jsonl', field }` each non-blank line is a JSON record whose
    /// string field `field` is the document, read as `JSON.parse` reads it. The lines are cut,
    /// checked and read on the scheduler's threads, not the calling one; the bytes are copied
    /// once. The ids equal `encodeUtf8Batch`'s over the same documents.
    ///
    /// A line that is not UTF-8, not JSON, or has no string `field` rejects with an `Error` whose
    /// `lineIndex` is the line's index in `bytes` (0-based, every line counted), `code` is
    /// `'ERR_NOT_UTF8'`, `'ERR_MALFORMED_JSON'`, `'ERR_MISSING_FIELD'` or `'ERR_FIELD_NOT_STRING'`
    /// and `reason` says what is wrong; the first such line in order is named.
    #[napi(
        catch_unwind,
        ts_args_type = "bytes: Uint8Array, format: LinesFormat, options?: BatchOptions",
        ts_return_type = "Promise<LinesEncoding>"
    )]
    pub fn encode_lines<'env>(
        &self,
        env: &'env Env,
        bytes: Unknown<'env>,
        format: Unknown<'env>,
        options: Option<Unknown<'env>>,
    ) -> napi::Result<Unknown<'env>> {
        promise(env, || {
            Ok(EncodeLinesTask(
                self.lines_call(env, &bytes, format, options)?,
            ))
        })
    }

    /// The last place at or after `from` (default 0) where `bytes`, the UTF-8 start of one text
    /// whose rest is still to come (a long line read a part at a time), can be cut so that the
    /// ids of the bytes before it, then those of the text from it, are the ids of the whole text
    /// (under any options but a truncation): where a letter ends and a character that is not part
    /// of a word begins (before the space of `word word`, the comma of `word, word`, the `。` of
    /// `文。中`), outside every special or added token, under the OpenAI encodings' patterns (and
    /// Qwen's, Tekken's, Kimi K2's), and under a tokenizer.json that splits text by one of them
    /// (GPT-4o's, Llama 3's, Qwen's); at a space after a letter under one whose pre-tokenizer
    /// splits at every space (BERT's, `Whitespace`, a `Metaspace` that splits; behind
    /// SentencePiece's character map, XLM-RoBERTa's and T5's, where the map reads the letter and
    /// the space each alone and a character follows the space), and after a letter
    /// no token joins to a `▁` under a SentencePiece-style one that writes each space as `▁`
    /// (Gemma's; one with a `Metaspace` pre-tokenizer and no normalizer); never under a truncation.
    /// A tokenizer.json whose template adds tokens around a text (Llama 3.1's
    /// `<|begin_of_text|>`) is cut only for parts encoded with `{ addSpecialTokens: false }`,
    /// which `options` then says; the caller puts the template's tokens around the whole. With `afterCut: true`, the caller encodes the text from the cut with `{ afterCut:
    /// true }` (as `batchtok/stream` does for a batch after one that `continues`), and a
    /// tokenizer.json that writes each space as `▁` and puts one before each text (Llama 2's and
    /// the files made in its shape) is cut too: at a space after a letter, which that part then
    /// leaves out (the `▁` put before it stands for it). -1 where `bytes` has none from `from`,
    /// and always for a tokenizer whose texts are not cut: a pattern of the user's own, another
    /// tokenizer.json, or one whose truncation or added tokens read across a cut. A place is read
    /// from the character before it to the end of the character at it, or of the one after it
    /// under `afterCut`: after a -1, ask again from `bytes.length - 4` once more bytes are joined.
    #[napi(
        catch_unwind,
        ts_args_type = "bytes: Uint8Array, from?: number, options?: { addSpecialTokens?: boolean, afterCut?: boolean }"
    )]
    pub fn last_safe_cut(
        &self,
        env: Env,
        bytes: Unknown,
        from: Option<Unknown>,
        options: Option<Unknown>,
    ) -> napi::Result<i64> {
        let from = match from {
            Some(from) if from.get_type()? != ValueType::Undefined => {
                whole_number(&env, &from, "from", 0, u32::MAX)? as usize
            }
            _ => 0,
        };
        let (with_template_tokens, after_cut) = match options_object(
            &env,
            options,
            "lastSafeCut",
            &["addSpecialTokens", "afterCut"],
        )? {
            Some(options) => (
                bool_option(&env, &options, c"addSpecialTokens")?.unwrap_or(true),
                bool_option(&env, &options, c"afterCut")?.unwrap_or(false),
            ),
            None => (true, false),
        };
        let cut = with_text_bytes(&env, &bytes, |bytes| {
            self.tokenizer
                .last_safe_cut(bytes, from, with_template_tokens, after_cut)
        })?;
        Ok(cut.map_or(-1, |at| at as i64))
    }

    /// The length of the start of `bytes`, the UTF-8 start of one text whose rest is still to
    /// come (a long line read a part at a time), whose ids under the tokenizer.json's truncation
    /// are the whole text's, whatever follows: where the truncation keeps a text's first ids
    /// (`direction: 'Right'`), the start up to a place the text may be cut before truncation
    /// (as `lastSafeCut` finds one without a truncation) with at least as many ids as the
    /// truncation keeps. A reader then holds and encodes that start (with the file's truncation,
    /// as `encode` and the batch calls apply it by default) and skips the rest of the text. -1
    /// where there is none: a tokenizer without a truncation or whose truncation keeps the last
    /// ids, one whose texts are not cut, or `bytes` with too few ids yet (ask again once more
    /// bytes are joined) or not UTF-8 before such a place.
    #[napi(catch_unwind, ts_args_type = "bytes: Uint8Array")]
    pub fn kept_by_truncation(&self, env: Env, bytes: Unknown) -> napi::Result<i64> {
        let kept = with_text_bytes(&env, &bytes, |bytes| {
            self.tokenizer.kept_by_file_truncation(bytes)
        })?
        .map_err(|e| from_engine(&env, &e))?;
        Ok(kept.map_or(-1, |at| at as i64))
    }
}

/// `read` of the bytes of `bytes`, a Uint8Array of UTF-8 text (or the start of one); a
/// `TypeError` naming what it is otherwise.
fn with_text_bytes<T>(
    env: &Env,
    bytes: &Unknown,
    read: impl FnOnce(&[u8]) -> T,
) -> napi::Result<T> {
    raw::with_uint8_bytes(env, bytes, read)?.ok_or_else(|| {
        type_error(
            env,
            &format!(
                "bytes is {}; expected a Uint8Array or a Buffer of UTF-8",
                describe(bytes)
            ),
        )
    })
}

impl Tokenizer {
    fn lines_call<'env>(
        &self,
        env: &'env Env,
        bytes: &Unknown<'env>,
        format: Unknown<'env>,
        options: Option<Unknown<'env>>,
    ) -> napi::Result<LinesCall> {
        if raw::typed_array_type(env, bytes)? != Some(TypedArrayType::Uint8) {
            return Err(type_error(
                env,
                &format!(
                    "bytes is {}; expected a Uint8Array or a Buffer of lines",
                    describe(bytes)
                ),
            ));
        }
        let format = read_format(env, format)?;
        let mut options = Options::read(env, options, "encodeLines", Takes::Batch)?;
        let mode = options.mode(env, &self.tokenizer)?;
        let runner = options.take_runner(env)?;
        let (cancel, abort_listener) = options.take_cancel(env)?;
        let bytes = raw::with_uint8_bytes(env, bytes, <[u8]>::to_vec)?.ok_or_else(|| {
            js_error(
                env,
                ErrorClass::Error,
                "bytes stopped being a Uint8Array while read",
            )
        })?;
        Ok(LinesCall {
            tokenizer: self.tokenizer.clone(),
            bytes,
            after_cut: options.after_cut,
            format,
            mode,
            runner,
            cancel,
            abort_listener,
        })
    }
}
