//! Documents cut out of whole lines of bytes (text, one document per line, or JSON Lines), and
//! their encoding, both on the scheduler's threads.
//!
//! A caller that reads a file hands over its bytes as they are, a batch of whole lines; the lines
//! are cut, checked to be UTF-8 and, for JSON Lines, read for their text field here, in parallel,
//! rather than by the caller one line at a time. The bytes are cut into segments of whole lines,
//! one scheduler item each, and a worker encodes each document of its segment as it cuts it out,
//! into the same per-worker id buffers as [`encode_all`](super::encode_all): the documents are
//! never copied, which keeps both the time and the memory a batch takes down.
//!
//! A line ends at `\n`; a `\r` before it (or at the very end) is not part of the line. In text
//! the line is the document, blank or not. In JSON Lines a blank line (only whitespace, as
//! JavaScript's `trim` sees it) is skipped, and every other line must be a JSON record whose
//! field is a string ([`jsonl`](super::jsonl)).

use std::fmt;

use super::encode::{IdSink, assemble_ids, ids_in};
use super::jsonl::{self, RecordError};
use super::texts::utf8;
use super::{Encoded, Failure};
use crate::engine::{EncodeMode, Tokenizer};
use crate::scheduler::{Batch, BatchError, CancelToken, ItemError, Scheduler};

/// Bytes per segment of lines: large enough that the per-segment work (a claim, a UTF-8 check)
/// is small beside encoding it, small enough that a batch of 1 MiB makes dozens of segments, so
/// that the threads finish it together.
const SEGMENT_BYTES: usize = 16 << 10;

/// How the lines hold the documents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineFormat {
    /// Each line is one document.
    Text,
    /// Each non-blank line is a JSON record; the document is its string field `field`.
    Jsonl {
        /// The field that holds the text.
        field: String,
    },
}

/// Why a line gives no document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineError {
    /// The line is not UTF-8: `valid_up_to` bytes of it are.
    NotUtf8 { valid_up_to: usize },
    /// The JSON Lines record gives no text.
    Record(RecordError),
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LineError::NotUtf8 { valid_up_to } => {
                write!(
                    f,
                    "the text is not UTF-8 (from byte {valid_up_to} of the line)"
                )
            }
            LineError::Record(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for LineError {}

/// Why [`encode_lines`] produced nothing.
#[derive(Debug)]
pub enum LinesFailure {
    /// Line `line` (0-based, counting every line of the bytes) gives no document.
    Line { line: usize, error: LineError },
    /// The document of line `line` failed to encode (`failure` names the document's index).
    Document { line: usize, failure: Failure },
    /// The batch as a whole failed (cancelled, too large).
    Batch(Failure),
}

/// The ids of the documents of a batch of lines.
#[derive(Debug, Default)]
pub struct LinesEncoded {
    /// The ids, and one boundary per document (`documents + 1`).
    pub encoded: Encoded,
    /// The documents' UTF-8 bytes in all.
    pub text_bytes: usize,
    /// The lines of the bytes, blank ones included.
    pub lines: usize,
}

/// Cuts the documents out of `bytes` (whole lines, the last perhaps without its `\n`) and encodes
/// them with `tokenizer` on `scheduler`: the result is [`encode_all`](super::encode_all)'s over
/// the same documents. Where `after_cut`, the first document goes on a text cut before it, and
/// what [`Tokenizer::left_out_after_cut`] says is left out of it.
pub fn encode_lines(
    scheduler: &Scheduler,
    tokenizer: &Tokenizer,
    bytes: &[u8],
    format: &LineFormat,
    mode: &EncodeMode,
    after_cut: bool,
    cancel: &CancelToken,
) -> Result<LinesEncoded, LinesFailure> {
    tokenizer.wait_before_batch(bytes.len());
    let batch = LinesBatch {
        bytes,
        format,
        segment_ends: segment_ends(bytes, SEGMENT_BYTES),
        tokenizer,
        mode,
        after_cut,
        sink_capacity: scheduler.max_sinks().map_or(0, |sinks| {
            tokenizer.expected_ids(bytes.len()) / sinks.max(1)
        }),
    };
    let output = match scheduler.run(&batch, cancel) {
        Ok(output) => output,
        Err(BatchError::Cancelled) => {
            return Err(LinesFailure::Batch(Failure::Batch(BatchError::Cancelled)));
        }
        // A segment failed: the first failing line may lie in a segment no thread reached, so
        // look for it in order.
        Err(error) => {
            return Err(first_failure(bytes, format, tokenizer, mode)
                .unwrap_or(LinesFailure::Batch(Failure::Batch(error))));
        }
    };
    let text_bytes = output.sinks.iter().map(|sink| sink.text_bytes).sum();
    let documents = output.sinks.iter().map(|sink| sink.ids.mark().1).sum();
    let id_sinks: Vec<IdSink> = output.sinks.into_iter().map(|sink| sink.ids).collect();
    tokenizer.record_batch(text_bytes, ids_in(&id_sinks));
    let encoded =
        assemble_ids(scheduler, id_sinks, output.chunks, documents).map_err(LinesFailure::Batch)?;
    Ok(LinesEncoded {
        encoded,
        text_bytes,
        lines: line_count(bytes),
    })
}

/// Where each segment ends: after the first `\n` at or past every `segment` bytes, and at the
/// end of `bytes`; so each segment is whole lines.
fn segment_ends(bytes: &[u8], segment: usize) -> Vec<usize> {
    let mut ends = Vec::with_capacity(bytes.len() / segment + 1);
    let mut from = 0;
    while from < bytes.len() {
        let probe = (from + segment).min(bytes.len()) - 1;
        let end = memchr::memchr(b'\n', &bytes[probe..]).map_or(bytes.len(), |at| probe + at + 1);
        ends.push(end);
        from = end;
    }
    ends
}

/// How many lines `bytes` holds: one per `\n`, and the last if it has none.
fn line_count(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
        + usize::from(bytes.last().is_some_and(|&b| b != b'\n'))
}

/// The lines of `text`, each without its `\n` and a `\r` before it: the line ends found a word at
/// a time over the whole text, not one search per line.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut ends = memchr::memchr_iter(b'\n', text.as_bytes());
    let mut start = 0;
    let mut done = text.is_empty();
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        // A line end is ASCII, so a character boundary.
        let line = match ends.next() {
            Some(end) => {
                let line = &text[start..end];
                start = end + 1;
                done = start == text.len();
                line
            }
            None => {
                done = true;
                &text[start..]
            }
        };
        Some(line.strip_suffix('\r').unwrap_or(line))
    })
}

/// [`lines`] over bytes that may not be UTF-8, for finding the line that is not.
fn byte_lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = bytes;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let (line, next) = match memchr::memchr(b'\n', rest) {
            Some(at) => (&rest[..at], &rest[at + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        rest = next;
        Some(line.strip_suffix(b"\r").unwrap_or(line))
    })
}

/// Whether a JSON Lines line is blank: only characters JavaScript's `trim` removes (Unicode
/// White_Space but U+0085, and U+FEFF).
#[inline]
fn is_blank(line: &str) -> bool {
    // Most lines start with `{`: one byte decides.
    line.bytes()
        .all(|b| matches!(b, b' ' | b'\t' | 0x0b | 0x0c | b'\r') || b >= 0x80)
        && line
            .chars()
            .all(|c| c == '\u{feff}' || (c.is_whitespace() && c != '\u{85}'))
}

/// The document of one line, or `None` for a blank JSON Lines line; `scratch` holds a record's
/// decoded text.
#[inline]
fn document_of<'l>(
    line: &'l str,
    format: &LineFormat,
    scratch: &'l mut String,
) -> Result<Option<&'l str>, LineError> {
    match format {
        LineFormat::Text => Ok(Some(line)),
        LineFormat::Jsonl { field } => {
            if is_blank(line) {
                return Ok(None);
            }
            scratch.clear();
            jsonl::string_field(line, field, scratch).map_err(LineError::Record)?;
            Ok(Some(scratch))
        }
    }
}

/// Why the batch failed, found line by line in order: the first line that gives no document, or
/// whose document fails to encode; `None` if none does.
#[cold]
fn first_failure(
    bytes: &[u8],
    format: &LineFormat,
    tokenizer: &Tokenizer,
    mode: &EncodeMode,
) -> Option<LinesFailure> {
    let mut scratch = String::new();
    let mut document = 0;
    for (line, bytes) in byte_lines(bytes).enumerate() {
        let text = std::str::from_utf8(bytes)
            .map_err(|e| LineError::NotUtf8 {
                valid_up_to: e.valid_up_to(),
            })
            .and_then(|line| document_of(line, format, &mut scratch));
        match text {
            Err(error) => return Some(LinesFailure::Line { line, error }),
            Ok(None) => {}
            Ok(Some(text)) => {
                // Only a failure is wanted: a fresh sink per document keeps no ids.
                if let Err(error) = IdSink::with_capacity(0).encode(tokenizer, text, mode) {
                    let failure = Failure::Batch(BatchError::ItemFailed {
                        index: document,
                        error: error.into(),
                    });
                    return Some(LinesFailure::Document { line, failure });
                }
                document += 1;
            }
        }
    }
    None
}

/// Cutting the documents out of segments of whole lines and encoding them, as scheduler work:
/// item `k` is segment `k`, its cost its bytes.
struct LinesBatch<'a> {
    bytes: &'a [u8],
    format: &'a LineFormat,
    /// Where each segment ends in `bytes`; segment `k` starts where `k - 1` ends (0 for the
    /// first). Also the running totals of the costs.
    segment_ends: Vec<usize>,
    tokenizer: &'a Tokenizer,
    mode: &'a EncodeMode,
    /// The first document goes on a text cut before it.
    after_cut: bool,
    /// Ids each worker's buffer starts with room for.
    sink_capacity: usize,
}

/// A worker's ids, its scratch buffer for a record's text, and the text bytes it encoded.
struct LinesSink<'a> {
    ids: IdSink<'a>,
    scratch: String,
    text_bytes: usize,
}

impl<'a> Batch for LinesBatch<'a> {
    type Sink = LinesSink<'a>;
    type Mark = (usize, usize);

    fn len(&self) -> usize {
        self.segment_ends.len()
    }

    fn cost(&self, index: usize) -> usize {
        self.segment(index).len()
    }

    fn cumulative_costs(&self) -> Option<&[usize]> {
        Some(&self.segment_ends)
    }

    fn new_sink(&self) -> LinesSink<'a> {
        LinesSink {
            ids: IdSink::with_capacity(self.sink_capacity),
            scratch: String::new(),
            text_bytes: 0,
        }
    }

    fn mark(&self, sink: &LinesSink<'a>) -> (usize, usize) {
        sink.ids.mark()
    }

    fn process(&self, index: usize, sink: &mut LinesSink<'a>) -> Result<(), ItemError> {
        // One check for the whole segment: a line break is ASCII, so every line of a UTF-8
        // segment is UTF-8 on its own. A failing segment is searched line by line afterwards.
        let Ok(segment) = utf8(self.segment(index)) else {
            return Err("not UTF-8".into());
        };
        let mut first = index == 0 && self.after_cut;
        for line in lines(segment) {
            let document = document_of(line, self.format, &mut sink.scratch)?;
            if let Some(text) = document {
                let left_out = if first {
                    self.tokenizer.left_out_after_cut(text.as_bytes())
                } else {
                    0
                };
                first = false;
                sink.ids
                    .encode(self.tokenizer, &text[left_out..], self.mode)?;
                sink.text_bytes += text.len();
            }
        }
        Ok(())
    }

    fn seal_sink(&self, sink: &mut LinesSink<'a>) {
        sink.ids.seal();
    }

    fn locks_taken(&self, sink: &LinesSink<'a>) -> Option<u64> {
        sink.ids.locks()
    }
}

impl LinesBatch<'_> {
    fn segment(&self, index: usize) -> &[u8] {
        let start = if index == 0 {
            0
        } else {
            self.segment_ends[index - 1]
        };
        &self.bytes[start..self.segment_ends[index]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::{Texts, encode_all};
    use crate::engine::AllowedSpecial;
    use crate::scheduler::{Policy, SchedulerConfig};

    fn jsonl() -> LineFormat {
        LineFormat::Jsonl {
            field: "text".to_owned(),
        }
    }

    /// The documents of `bytes` cut in order on one thread, as the reference.
    fn documents_in_order(bytes: &[u8], format: &LineFormat) -> Vec<String> {
        let mut scratch = String::new();
        lines(std::str::from_utf8(bytes).unwrap())
            .filter_map(|line| {
                document_of(line, format, &mut scratch)
                    .unwrap()
                    .map(str::to_owned)
            })
            .collect()
    }

    fn o200k() -> &'static Tokenizer {
        static TOKENIZER: std::sync::OnceLock<std::sync::Arc<Tokenizer>> =
            std::sync::OnceLock::new();
        TOKENIZER.get_or_init(|| Tokenizer::from_encoding("o200k_base").unwrap())
    }

    /// Encodes `bytes` on `threads`, checks the ids against `encode_all`'s over the reference
    /// documents, and returns those documents.
    fn cut(bytes: &[u8], format: &LineFormat, threads: usize) -> Result<Vec<String>, LinesFailure> {
        let scheduler = Scheduler::new(SchedulerConfig {
            threads,
            ..SchedulerConfig::default()
        })
        .unwrap();
        let tokenizer = o200k();
        let mode = tokenizer.encode_mode(None, &AllowedSpecial::None).unwrap();
        let cancel = CancelToken::new();
        let got = encode_lines(&scheduler, tokenizer, bytes, format, &mode, false, &cancel)?;
        let documents = documents_in_order(bytes, format);
        let mut texts = Texts::default();
        documents.iter().for_each(|document| texts.push(document));
        let expected = encode_all(&scheduler, tokenizer, &texts, &mode, &cancel).unwrap();
        assert_eq!(got.encoded.offsets, expected.offsets);
        assert_eq!(got.encoded.ids, expected.ids);
        assert_eq!(got.text_bytes, texts.total_bytes());
        assert_eq!(got.lines, byte_lines(bytes).count());
        Ok(documents)
    }

    #[test]
    fn lines_end_at_newlines_without_their_carriage_returns() {
        let bytes = b"a\r\nb\n\nc\r\r\n \n\rd\re";
        assert_eq!(
            cut(bytes, &LineFormat::Text, 2).unwrap(),
            ["a", "b", "", "c\r", " ", "\rd\re"]
        );
        assert_eq!(cut(b"last\r", &LineFormat::Text, 1).unwrap(), ["last"]);
        assert_eq!(cut(b"x\n", &LineFormat::Text, 1).unwrap(), ["x"]);
        assert!(cut(b"", &LineFormat::Text, 1).unwrap().is_empty());
        assert_eq!(cut(b"\n", &LineFormat::Text, 1).unwrap(), [""]);
        for (bytes, count) in [
            (&b""[..], 0),
            (b"\n", 1),
            (b"a", 1),
            (b"a\n\nb", 3),
            (b"a\r\n", 1),
        ] {
            assert_eq!(line_count(bytes), count, "{bytes:?}");
            assert_eq!(byte_lines(bytes).count(), count, "{bytes:?}");
            let text = std::str::from_utf8(bytes).unwrap();
            assert!(lines(text).eq(byte_lines(bytes).map(|l| std::str::from_utf8(l).unwrap())));
        }
    }

    #[test]
    fn blank_jsonl_lines_are_skipped_as_trim_sees_them() {
        let bytes = "{\"text\":\"a\"}\n\n  \t\r\n\u{a0}\u{3000}\u{feff}\n{\"text\":\"b\"}\r\n{\"text\":\"c\"}";
        assert_eq!(cut(bytes.as_bytes(), &jsonl(), 2).unwrap(), ["a", "b", "c"]);
        // U+0085 is not whitespace to `trim`: that line is a (malformed) record.
        let failure = cut("{\"text\":\"a\"}\n\u{85}\n".as_bytes(), &jsonl(), 1).unwrap_err();
        assert!(matches!(
            failure,
            LinesFailure::Line {
                line: 1,
                error: LineError::Record(RecordError::Malformed { .. })
            }
        ));
    }

    #[test]
    fn lines_agree_with_a_plain_split() {
        let mut rng = fastrand::Rng::with_seed(0x5917);
        let pieces = ["a", "\n", "\r", "\r\n", "é", " "];
        for _ in 0..2000 {
            let text: String = (0..rng.usize(0..20))
                .map(|_| pieces[rng.usize(0..pieces.len())])
                .collect();
            let mut expected: Vec<&str> = text.split('\n').collect();
            if expected.last() == Some(&"") {
                expected.pop();
            }
            let expected: Vec<&str> = expected
                .iter()
                .map(|line| line.strip_suffix('\r').unwrap_or(line))
                .collect();
            assert_eq!(lines(&text).collect::<Vec<_>>(), expected, "{text:?}");
            assert_eq!(byte_lines(text.as_bytes()).count(), expected.len());
            assert_eq!(line_count(text.as_bytes()), expected.len());
        }
    }

    #[test]
    fn segments_are_whole_lines_that_cover_the_bytes() {
        let mut rng = fastrand::Rng::with_seed(0x11e5);
        for _ in 0..200 {
            let len = rng.usize(0..400);
            let bytes: Vec<u8> = (0..len)
                .map(|_| if rng.u8(0..8) == 0 { b'\n' } else { b'x' })
                .collect();
            let segment = rng.usize(1..50);
            let ends = segment_ends(&bytes, segment);
            let mut start = 0;
            for &end in &ends {
                assert!(end > start && end <= bytes.len());
                assert!(end == bytes.len() || bytes[end - 1] == b'\n');
                start = end;
            }
            assert_eq!(start, bytes.len());
        }
    }

    #[test]
    fn many_segments_on_many_threads_keep_the_order() {
        let mut rng = fastrand::Rng::with_seed(0x5e9);
        let words = ["a", "日本", " ", "\u{1f642}", "\r", "x"];
        let mut text = String::new();
        let mut records = String::new();
        for i in 0..20_000 {
            let line: String = (0..rng.usize(0..40))
                .map(|_| words[rng.usize(0..words.len())])
                .collect();
            let line = line.trim_end_matches('\r');
            text.push_str(line);
            text.push_str(if i % 3 == 0 { "\r\n" } else { "\n" });
            records.push_str(&format!("{{\"n\":{i},\"text\":{}}}\n", json_string(line)));
            if i % 7 == 0 {
                records.push('\n');
            }
        }
        for (bytes, format) in [
            (text.as_bytes(), LineFormat::Text),
            (records.as_bytes(), jsonl()),
        ] {
            assert!(bytes.len() > 16 * SEGMENT_BYTES);
            let expected = documents_in_order(bytes, &format);
            for threads in [1, 2, 5] {
                assert_eq!(cut(bytes, &format, threads).unwrap(), expected);
            }
        }
    }

    fn json_string(text: &str) -> String {
        let mut out = String::from("\"");
        for c in text.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    #[test]
    fn the_first_failing_line_is_named_whichever_thread_finds_one() {
        // Good lines, then a bad one in a late segment and another in an early one.
        let good = "{\"text\":\"fine\"}\n".repeat(20_000);
        let mut bytes = good.clone().into_bytes();
        let early = 3_000;
        let early_at = early * 16;
        bytes[early_at + 9] = 0xff;
        let late_at = 15_000 * 16;
        bytes[late_at..late_at + 3].copy_from_slice(b"{{{");
        for threads in [1, 2, 4] {
            match cut(&bytes, &jsonl(), threads) {
                Err(LinesFailure::Line { line, error }) => {
                    assert_eq!(line, early);
                    assert_eq!(error, LineError::NotUtf8 { valid_up_to: 9 });
                }
                other => panic!("{other:?}"),
            }
        }
        match cut(b"a\nb\n\xffc\n", &LineFormat::Text, 2) {
            Err(LinesFailure::Line { line: 2, .. }) => {}
            other => panic!("{other:?}"),
        }
        match cut(b"{\"text\":1}\n", &jsonl(), 1) {
            Err(LinesFailure::Line {
                line: 0,
                error: LineError::Record(RecordError::NotString { .. }),
            }) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn encodes_as_encode_all_over_the_same_documents() {
        let tokenizer = Tokenizer::from_encoding("o200k_base").unwrap();
        let mode = tokenizer.encode_mode(None, &AllowedSpecial::None).unwrap();
        let records: String = (0..5000)
            .map(|i| format!("{{\"text\":\"record {i}: caf\\u00e9 \\ud83d\\ude00\"}}\n\n"))
            .collect();
        let expected_texts = documents_in_order(records.as_bytes(), &jsonl());
        let mut texts = Texts::default();
        expected_texts.iter().for_each(|t| texts.push(t));
        for policy in Policy::ALL {
            let scheduler = Scheduler::new(SchedulerConfig {
                policy,
                threads: 3,
                ..SchedulerConfig::default()
            })
            .unwrap();
            let cancel = CancelToken::new();
            let expected = encode_all(&scheduler, &tokenizer, &texts, &mode, &cancel).unwrap();
            let got = encode_lines(
                &scheduler,
                &tokenizer,
                records.as_bytes(),
                &jsonl(),
                &mode,
                false,
                &cancel,
            )
            .unwrap();
            assert_eq!(got.encoded.ids, expected.ids, "{policy}");
            assert_eq!(got.encoded.offsets, expected.offsets, "{policy}");
            assert_eq!(got.text_bytes, texts.total_bytes());
            assert_eq!(got.lines, 10_000);
        }
    }

    #[test]
    fn a_document_that_fails_to_encode_names_its_line() {
        let tokenizer = Tokenizer::from_encoding("o200k_base").unwrap();
        // A mode that refuses special-token text, as `disallowedSpecial: 'all'` asks.
        let disallowed = tokenizer
            .disallowed_special(&AllowedSpecial::None, &AllowedSpecial::All)
            .unwrap();
        let mode = tokenizer
            .encode_mode(None, &AllowedSpecial::None)
            .unwrap()
            .with_disallowed_special(disallowed);
        let bytes = b"{\"text\":\"a\"}\n\n\n{\"text\":\"<|endoftext|>\"}\n";
        let scheduler = Scheduler::new(SchedulerConfig::default()).unwrap();
        match encode_lines(
            &scheduler,
            &tokenizer,
            bytes,
            &jsonl(),
            &mode,
            false,
            &CancelToken::new(),
        ) {
            Err(LinesFailure::Document { line: 3, .. }) => {}
            other => panic!("{other:?}"),
        }
    }
}
