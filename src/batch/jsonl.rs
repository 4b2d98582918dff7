//! One string field out of a JSON Lines record, read as JavaScript's `JSON.parse` reads it.
//!
//! The whole record is checked against JSON's grammar, but only the named top-level field is
//! decoded; every other value is skipped without being built. Where JSON.parse and a strict JSON
//! library part ways, this follows JSON.parse, since that is what a JSONL text means to the JS
//! tools around it:
//!
//! - an escaped lone surrogate (`"\ud800"`) is accepted, and written as U+FFFD, as V8 writes such a
//!   string as UTF-8 (serde_json refuses it when reading a `str`, and in its byte-string mode,
//!   which accepts it, it also accepts raw control characters JSON.parse refuses: so the string
//!   scanning here is its own);
//! - a key given twice takes its last value;
//! - nesting has no depth limit (skipping is iterative);
//! - numbers are checked for their syntax only, so `1e400` is a number, as JSON.parse's Infinity.
//!
//! The record comes as a `str` (the caller checks whole segments of lines at once), so only ASCII
//! needs looking at here, and every slice copied out of it starts and ends at ASCII: the text
//! comes out as a `String` with no second check.

use std::fmt;

/// Why a record gives no text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordError {
    /// The line is not JSON: what was expected, and the column (1-based, in bytes) where.
    Malformed {
        expected: &'static str,
        column: usize,
    },
    /// The record has no such field; `has` lists its fields as `Object.keys` orders them, or
    /// names its type when it is not an object.
    MissingField { field: String, has: String },
    /// The field's (last) value is not a string: its type as `typeof` names it (`null` for null).
    NotString {
        field: String,
        kind: &'static str,
        has: String,
    },
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordError::Malformed { expected, column } => {
                write!(f, "malformed JSON (expected {expected} at column {column})")
            }
            RecordError::MissingField { field, has } => {
                write!(f, "the record has no \"{field}\" field (it has: {has})")
            }
            RecordError::NotString { field, kind, has } => write!(
                f,
                "the record has a \"{field}\" that is {kind}, not a string (it has: {has})"
            ),
        }
    }
}

/// Appends to `out` the text of the string field `field` of the JSON record `line`, as
/// `JSON.parse(line)[field]` reads it. On an error `out` is left as it was.
pub fn string_field(line: &str, field: &str, out: &mut String) -> Result<(), RecordError> {
    let start = out.len();
    let result = Reader::new(line).record(field, out, start);
    match result {
        Ok(Found::String) => Ok(()),
        Ok(found) => {
            out.truncate(start);
            Err(field_error(line, field, found))
        }
        Err(error) => {
            out.truncate(start);
            Err(error)
        }
    }
}

/// What the record held under the field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    /// A string, now at the end of `out`.
    String,
    /// No such field (`top` is the record's own type, `object` when it is one).
    Nothing { top: &'static str },
    /// A value of another type.
    Other(&'static str),
}

/// The missing-field or not-a-string error, with the record's fields listed: read again, since
/// only a failing record needs its keys.
#[cold]
fn field_error(line: &str, field: &str, found: Found) -> RecordError {
    let has = match found {
        Found::Nothing { top } if top != "object" => top.to_owned(),
        _ => Reader::new(line).keys().join(", "),
    };
    match found {
        Found::Other(kind) => RecordError::NotString {
            field: field.to_owned(),
            kind,
            has,
        },
        _ => RecordError::MissingField {
            field: field.to_owned(),
            has,
        },
    }
}

/// Where the plain text at the start of a string's bytes ends: the index of the first quote,
/// backslash or control character (below U+0020), or `bytes.len()` where there is none. A string's
/// text is most of a record's bytes, so this search is the field reader's main cost: it takes many
/// bytes per step and looks for all three kinds of byte in one pass, rather than a byte at a time
/// or in two searches (the quote and backslash, then control characters).
#[inline]
fn string_stop(bytes: &[u8]) -> usize {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        // SAFETY: the processor has SSE2: the build targets it (the `cfg` above), as every x86-64
        // target does, SSE2 being part of x86-64 itself.
        unsafe { string_stop_sse2(bytes) }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        string_stop_words(bytes)
    }
}

/// [`string_stop`] a 16-byte block per step with SSE2, and the bytes after the last whole block a
/// word at a time. Calling it needs a processor with SSE2.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
#[inline]
fn string_stop_sse2(bytes: &[u8]) -> usize {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    let quote = _mm_set1_epi8(b'"' as i8);
    let backslash = _mm_set1_epi8(b'\\' as i8);
    let last_control = _mm_set1_epi8(0x1f);
    let mut at = 0;
    while at + 16 <= bytes.len() {
        // SAFETY: `at + 16 <= bytes.len()`, so the 16 bytes read lie inside `bytes`; the load
        // takes any alignment.
        let block = unsafe { _mm_loadu_si128(bytes.as_ptr().add(at).cast::<__m128i>()) };
        // A byte is at most 0x1f (unsigned) where the lesser of it and 0x1f is itself.
        let control = _mm_cmpeq_epi8(_mm_min_epu8(block, last_control), block);
        let found = _mm_or_si128(
            _mm_or_si128(
                _mm_cmpeq_epi8(block, quote),
                _mm_cmpeq_epi8(block, backslash),
            ),
            control,
        );
        let mask = _mm_movemask_epi8(found) as u32;
        if mask != 0 {
            return at + mask.trailing_zeros() as usize;
        }
        at += 16;
    }
    at + string_stop_words(&bytes[at..])
}

/// Bytes of a word, for [`string_stop_words`].
const WORD_ONES: u64 = u64::from_le_bytes([1; 8]);
/// The high bit of each byte of a word.
const WORD_HIGHS: u64 = u64::from_le_bytes([0x80; 8]);

/// [`string_stop`] a word (8 bytes) at a time, on any processor: where SSE2 is not there, and after
/// its last whole block.
#[inline]
fn string_stop_words(bytes: &[u8]) -> usize {
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for word in &mut words {
        let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        let quote = word ^ (WORD_ONES * u64::from(b'"'));
        let backslash = word ^ (WORD_ONES * u64::from(b'\\'));
        // The high bit of a byte is set where it is 0 (after the XOR: a quote or a backslash) or
        // below 0x20; a borrow may also set it in a byte above (later than) one that is, never
        // below, so the lowest byte set is exact.
        let found = (quote.wrapping_sub(WORD_ONES) & !quote
            | backslash.wrapping_sub(WORD_ONES) & !backslash
            | word.wrapping_sub(WORD_ONES * 0x20) & !word)
            & WORD_HIGHS;
        if found != 0 {
            return at + (found.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    at + words
        .remainder()
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .unwrap_or(words.remainder().len())
}

/// A cursor over one record.
struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    /// The open arrays (`[`) and objects (`{`) of the value being skipped.
    open: Vec<u8>,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Self {
        Reader {
            text,
            bytes: text.as_bytes(),
            at: 0,
            open: Vec::new(),
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    /// JSON's whitespace: space, tab, line feed, carriage return.
    #[inline]
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    #[cold]
    fn expected<T>(&self, expected: &'static str) -> Result<T, RecordError> {
        Err(RecordError::Malformed {
            expected,
            column: self.at + 1,
        })
    }

    fn eat(&mut self, byte: u8, expected: &'static str) -> Result<(), RecordError> {
        self.skip_whitespace();
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            self.expected(expected)
        }
    }

    /// Reads the whole record; the field's last string value is left in `out` from `start`.
    fn record(
        &mut self,
        field: &str,
        out: &mut String,
        start: usize,
    ) -> Result<Found, RecordError> {
        self.skip_whitespace();
        let found = if self.peek() == Some(b'{') {
            self.at += 1;
            let mut found = Found::Nothing { top: "object" };
            let mut key = String::new();
            self.skip_whitespace();
            if self.peek() == Some(b'}') {
                self.at += 1;
            } else {
                loop {
                    self.skip_whitespace();
                    if self.peek() != Some(b'"') {
                        return self.expected("a string key");
                    }
                    self.at += 1;
                    let is_field = self.key_is(field, &mut key)?;
                    self.eat(b':', "':' after a key")?;
                    self.skip_whitespace();
                    if is_field {
                        if self.peek() == Some(b'"') {
                            self.at += 1;
                            out.truncate(start);
                            self.string(Some(out))?;
                            found = Found::String;
                        } else {
                            found = Found::Other(self.value()?);
                        }
                    } else {
                        self.value()?;
                    }
                    self.skip_whitespace();
                    match self.peek() {
                        Some(b',') => self.at += 1,
                        Some(b'}') => {
                            self.at += 1;
                            break;
                        }
                        _ => return self.expected("',' or '}' after a value"),
                    }
                }
            }
            found
        } else {
            Found::Nothing { top: self.value()? }
        };
        self.skip_whitespace();
        if self.at != self.bytes.len() {
            return self.expected("the end of the line after the record");
        }
        Ok(found)
    }

    /// Reads a key whose opening quote is read, and says whether it is `field`. A key without
    /// escapes, as nearly every key is, is compared where it lies; `decoded` holds one with escapes.
    fn key_is(&mut self, field: &str, decoded: &mut String) -> Result<bool, RecordError> {
        let rest = &self.bytes[self.at..];
        let stop = string_stop(rest);
        if rest.get(stop) == Some(&b'"') {
            self.at += stop + 1;
            return Ok(&rest[..stop] == field.as_bytes());
        }
        decoded.clear();
        self.string(Some(decoded))?;
        Ok(decoded == field)
    }

    /// Skips one value; returns its type as `typeof` names it (`null` for null).
    fn value(&mut self) -> Result<&'static str, RecordError> {
        self.open.clear();
        let mut kind = None;
        loop {
            // A value starts here.
            self.skip_whitespace();
            let this = match self.peek() {
                Some(b'"') => {
                    self.at += 1;
                    self.string(None)?;
                    "string"
                }
                Some(open @ (b'{' | b'[')) => {
                    self.at += 1;
                    self.skip_whitespace();
                    let close = if open == b'{' { b'}' } else { b']' };
                    if self.peek() == Some(close) {
                        self.at += 1;
                    } else {
                        self.open.push(open);
                        if open == b'{' {
                            self.member_key()?;
                        }
                        kind.get_or_insert("object");
                        continue;
                    }
                    "object"
                }
                Some(b't') => self.literal(b"true", "boolean")?,
                Some(b'f') => self.literal(b"false", "boolean")?,
                Some(b'n') => self.literal(b"null", "null")?,
                Some(b'-' | b'0'..=b'9') => self.number()?,
                _ => return self.expected("a value"),
            };
            let kind = *kind.get_or_insert(this);
            // After a value: close what ends here, or go on to the next element or member.
            loop {
                let Some(&open) = self.open.last() else {
                    return Ok(kind);
                };
                self.skip_whitespace();
                match (open, self.peek()) {
                    (_, Some(b',')) => {
                        self.at += 1;
                        if open == b'{' {
                            self.member_key()?;
                        }
                        break;
                    }
                    (b'{', Some(b'}')) | (b'[', Some(b']')) => {
                        self.at += 1;
                        self.open.pop();
                    }
                    (b'{', _) => return self.expected("',' or '}' after a value"),
                    _ => return self.expected("',' or ']' after a value"),
                }
            }
        }
    }

    /// Skips an object member's key and its colon.
    fn member_key(&mut self) -> Result<(), RecordError> {
        self.skip_whitespace();
        if self.peek() != Some(b'"') {
            return self.expected("a string key");
        }
        self.at += 1;
        self.string(None)?;
        self.eat(b':', "':' after a key")
    }

    fn literal(&mut self, word: &[u8], kind: &'static str) -> Result<&'static str, RecordError> {
        if self.bytes[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(kind)
        } else {
            self.expected("a value")
        }
    }

    /// A number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    fn number(&mut self) -> Result<&'static str, RecordError> {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return self.expected("a digit"),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            self.some_digits()?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            self.some_digits()?;
        }
        Ok("number")
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
    }

    fn some_digits(&mut self) -> Result<(), RecordError> {
        if !matches!(self.peek(), Some(b'0'..=b'9')) {
            return self.expected("a digit");
        }
        self.digits();
        Ok(())
    }

    /// The rest of a string whose opening quote is read: checked, and decoded into `out` where
    /// one is given.
    fn string(&mut self, mut out: Option<&mut String>) -> Result<(), RecordError> {
        loop {
            let rest = &self.bytes[self.at..];
            let stop = string_stop(rest);
            if stop == rest.len() || rest[stop] < 0x20 {
                // A control character is named only where a quote or backslash follows it: a
                // string left open is reported as such, wherever its control characters are.
                if memchr::memchr2(b'"', b'\\', &rest[stop..]).is_none() {
                    self.at = self.bytes.len();
                    return self.expected("'\"' to end the string");
                }
                self.at += stop;
                return self.expected("no control character in a string (write it escaped)");
            }
            if let Some(out) = out.as_deref_mut() {
                // From after a quote or an escape to before a quote or a backslash: ASCII at both
                // ends, so character boundaries.
                out.push_str(&self.text[self.at..self.at + stop]);
            }
            self.at += stop + 1;
            if rest[stop] == b'"' {
                return Ok(());
            }
            self.escape(out.as_deref_mut())?;
        }
    }

    /// One escape, its backslash read.
    fn escape(&mut self, out: Option<&mut String>) -> Result<(), RecordError> {
        let simple = match self.peek() {
            Some(b'"') => b'"',
            Some(b'\\') => b'\\',
            Some(b'/') => b'/',
            Some(b'b') => 0x08,
            Some(b'f') => 0x0c,
            Some(b'n') => b'\n',
            Some(b'r') => b'\r',
            Some(b't') => b'\t',
            Some(b'u') => {
                self.at += 1;
                let unit = self.hex4()?;
                let code = match unit {
                    0xd800..=0xdbff => match self.low_surrogate_after() {
                        Some(low) => {
                            self.at += 6;
                            0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00)
                        }
                        None => 0xfffd,
                    },
                    0xdc00..=0xdfff => 0xfffd,
                    _ => unit,
                };
                if let Some(out) = out {
                    out.push(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
                }
                return Ok(());
            }
            _ => return self.expected("an escape: \\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX"),
        };
        self.at += 1;
        if let Some(out) = out {
            out.push(char::from(simple));
        }
        Ok(())
    }

    /// Four hex digits.
    fn hex4(&mut self) -> Result<u32, RecordError> {
        let Some(unit) = self.bytes.get(self.at..self.at + 4).and_then(hex_value) else {
            return self.expected("four hex digits after \\u");
        };
        self.at += 4;
        Ok(unit)
    }

    /// The low surrogate of a `\uXXXX` right here, if one is: a pair's second half.
    fn low_surrogate_after(&self) -> Option<u32> {
        let next = self.bytes.get(self.at..self.at + 6)?;
        let unit = (next.starts_with(b"\\u"))
            .then(|| hex_value(&next[2..]))
            .flatten()?;
        (0xdc00..=0xdfff).contains(&unit).then_some(unit)
    }

    /// The record's keys in `Object.keys` order (array indices first, ascending; then the rest
    /// in the order each first appears), or, for an array, its indices. For the error messages of
    /// a record already known to be well formed.
    fn keys(&mut self) -> Vec<String> {
        self.skip_whitespace();
        let mut indices: Vec<u32> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        match self.peek() {
            Some(b'[') => {
                self.at += 1;
                self.skip_whitespace();
                if self.peek() == Some(b']') {
                    return Vec::new();
                }
                let mut count = 0;
                while self.value().is_ok() {
                    count += 1;
                    self.skip_whitespace();
                    if self.peek() != Some(b',') {
                        break;
                    }
                    self.at += 1;
                }
                return (0..count).map(|i: u32| i.to_string()).collect();
            }
            Some(b'{') => self.at += 1,
            _ => return Vec::new(),
        }
        let mut key = String::new();
        loop {
            self.skip_whitespace();
            if self.peek() != Some(b'"') {
                break;
            }
            self.at += 1;
            key.clear();
            if self.string(Some(&mut key)).is_err() || self.eat(b':', "").is_err() {
                break;
            }
            let name = key.clone();
            match array_index(&name) {
                Some(index) if !indices.contains(&index) => indices.push(index),
                Some(_) => {}
                None if !names.contains(&name) => names.push(name),
                None => {}
            }
            if self.value().is_err() {
                break;
            }
            self.skip_whitespace();
            if self.peek() != Some(b',') {
                break;
            }
            self.at += 1;
        }
        indices.sort_unstable();
        indices.iter().map(u32::to_string).chain(names).collect()
    }
}

/// The value of four hex digits.
fn hex_value(digits: &[u8]) -> Option<u32> {
    digits.iter().try_fold(0u32, |value, &digit| {
        Some(value * 16 + (digit as char).to_digit(16)?)
    })
}

/// `name` as an array index, as JS orders keys: a canonical decimal below 2^32 - 1.
fn array_index(name: &str) -> Option<u32> {
    let canonical = name == "0" || (!name.starts_with('0') && !name.is_empty());
    let index: u32 = name
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| name.parse().ok())
        .flatten()?;
    (canonical && index != u32::MAX).then_some(index)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(line: &str, name: &str) -> Result<String, RecordError> {
        let mut out = String::from("kept");
        let result = string_field(line, name, &mut out);
        match result {
            Ok(()) => {
                assert!(out.starts_with("kept"));
                Ok(out[4..].to_owned())
            }
            Err(error) => {
                assert_eq!(out, "kept", "an error leaves the output as it was");
                Err(error)
            }
        }
    }

    /// `string_stop` and its word-at-a-time form against a byte at a time, on seeded random bytes
    /// drawn mostly from the bytes next to the ones it looks for (so borrows between bytes are
    /// exercised, and the unsigned comparison of the blocks), at every length up to a few blocks
    /// and every alignment of the first stop.
    #[test]
    fn string_stop_finds_the_first_quote_backslash_or_control_character() {
        const PICKS: &[u8] = &[
            b'"', b'\\', 0x00, 0x01, 0x1f, 0x20, 0x21, 0x23, 0x5b, 0x5d, b'a', 0x7f, 0x80, 0xa2,
            0xdc, 0xff,
        ];
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..20_000 {
            let len = (next() % 80) as usize;
            let plain = next() % 4 == 0;
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    let pick = PICKS[(next() % PICKS.len() as u64) as usize];
                    // Some strings hold only plain text, so that the whole length is scanned.
                    if plain && (pick == b'"' || pick == b'\\' || pick < 0x20) {
                        b'a'
                    } else {
                        pick
                    }
                })
                .collect();
            let expected = bytes
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .unwrap_or(len);
            assert_eq!(string_stop(&bytes), expected, "{bytes:x?}");
            assert_eq!(string_stop_words(&bytes), expected, "{bytes:x?}");
        }
    }

    #[test]
    fn an_open_string_is_reported_as_open_even_with_a_control_character() {
        let error = field("{\"text\": \"a\u{1}b", "text").unwrap_err();
        assert!(error.to_string().contains("to end the string"), "{error}");
        let error = field("{\"text\": \"a\u{1}b\"}", "text").unwrap_err();
        assert!(error.to_string().contains("control character"), "{error}");
    }

    fn malformed(line: &str) -> bool {
        matches!(field(line, "text"), Err(RecordError::Malformed { .. }))
    }

    #[test]
    fn reads_the_field_and_skips_the_rest() {
        let line = r#" {"id": 12, "meta": {"a": [1, -2.5e3, true, false, null, {"x": "y"}], "b": {}}, "text": "hello", "z": []} "#;
        assert_eq!(field(line, "text").unwrap(), "hello");
        assert_eq!(field(r#"{"text":""}"#, "text").unwrap(), "");
        assert_eq!(field("{\"text\"\t:\r\"a\"}", "text").unwrap(), "a");
    }

    #[test]
    fn escapes_decode_as_json_parse_reads_them() {
        assert_eq!(
            field(
                r#"{"text":"a\"b\\c\/d\b\f\n\r\t\u00e9\u65e5\ud83d\ude00"}"#,
                "text"
            )
            .unwrap(),
            "a\"b\\c/d\u{8}\u{c}\n\r\té日😀"
        );
        // Lone surrogates: JSON.parse keeps them, V8 writes each as U+FFFD.
        assert_eq!(field(r#"{"text":"\ud800"}"#, "text").unwrap(), "\u{fffd}");
        assert_eq!(field(r#"{"text":"\udc00x"}"#, "text").unwrap(), "\u{fffd}x");
        assert_eq!(
            field(r#"{"text":"\ud800\u0041"}"#, "text").unwrap(),
            "\u{fffd}A"
        );
        assert_eq!(
            field(r#"{"text":"\ud800\ud83d\ude00"}"#, "text").unwrap(),
            "\u{fffd}😀"
        );
        // A key can be escaped too.
        assert_eq!(field(r#"{"te\u0078t":"k"}"#, "text").unwrap(), "k");
        assert_eq!(field(r#"{"t\u00e9xt":"k"}"#, "téxt").unwrap(), "k");
        // Non-ASCII passes through untouched.
        assert_eq!(field(r#"{"text":"日本語 ✓"}"#, "text").unwrap(), "日本語 ✓");
    }

    /// Keys without escapes are compared where they lie: only the whole key is the field.
    #[test]
    fn only_the_whole_key_names_the_field() {
        let line = r#"{"":"0","tex":"1","texts":"2","téxt":"3","text":"4"}"#;
        assert_eq!(field(line, "").unwrap(), "0");
        assert_eq!(field(line, "tex").unwrap(), "1");
        assert_eq!(field(line, "texts").unwrap(), "2");
        assert_eq!(field(line, "téxt").unwrap(), "3");
        assert_eq!(field(line, "text").unwrap(), "4");
        assert!(malformed("{\"te\u{1}xt\":\"a\"}"));
    }

    #[test]
    fn a_key_given_twice_takes_its_last_value() {
        assert_eq!(field(r#"{"text":"a","text":"b"}"#, "text").unwrap(), "b");
        assert_eq!(field(r#"{"text":1,"text":"b"}"#, "text").unwrap(), "b");
        assert!(matches!(
            field(r#"{"text":"a","text":1}"#, "text"),
            Err(RecordError::NotString { kind: "number", .. })
        ));
    }

    #[test]
    fn a_missing_field_lists_the_keys_as_object_keys_does() {
        assert_eq!(
            field(r#"{"body":"b","2":0,"x":1,"10":2,"body":3,"01":4}"#, "text")
                .unwrap_err()
                .to_string(),
            r#"the record has no "text" field (it has: 2, 10, body, x, 01)"#
        );
        assert_eq!(
            field("{}", "text").unwrap_err().to_string(),
            r#"the record has no "text" field (it has: )"#
        );
        for (line, has) in [
            ("3", "number"),
            (r#""s""#, "string"),
            ("true", "boolean"),
            ("null", "null"),
            ("[1, [2], 3]", "0, 1, 2"),
        ] {
            assert_eq!(
                field(line, "text").unwrap_err(),
                RecordError::MissingField {
                    field: "text".into(),
                    has: has.into()
                },
                "{line}"
            );
        }
    }

    #[test]
    fn a_value_of_another_type_is_named_as_typeof_names_it() {
        for (value, kind) in [
            ("3", "number"),
            ("1e400", "number"),
            ("true", "boolean"),
            ("null", "null"),
            ("[]", "object"),
            (r#"{"a":[1]}"#, "object"),
        ] {
            let line = format!(r#"{{"text":{value},"b":1}}"#);
            assert_eq!(
                field(&line, "text").unwrap_err().to_string(),
                format!(
                    r#"the record has a "text" that is {kind}, not a string (it has: text, b)"#
                )
            );
        }
    }

    #[test]
    fn what_json_parse_refuses_is_malformed() {
        for line in [
            "",
            "{",
            "{\"text\": oops}",
            r#"{"text":"a"} x"#,
            r#"{"text":"a",}"#,
            r#"{"text":"a" "b":1}"#,
            r#"{'text':"a"}"#,
            r#"{"text":"a\x"}"#,
            r#"{"text":"\u12"}"#,
            "{\"text\":\"tab\there\"}",
            r#"{"text":"a","n":01}"#,
            r#"{"text":"a","n":1.}"#,
            r#"{"text":"a","n":-}"#,
            r#"{"text":"a","n":+1}"#,
            r#"{"text":"a","n":1e}"#,
            r#"{"text":"a","l":[1,]}"#,
            r#"{"text":"a","l":[1}"#,
            r#"{"text":"a","o":{"k"}}"#,
            r#"{"text":"a","t":tru}"#,
            r#"{"text":"unterminated}"#,
            "\u{feff}{\"text\":\"a\"}",
        ] {
            assert!(malformed(line), "{line:?} should be malformed");
        }
        assert_eq!(
            field(r#"{"text": oops}"#, "text").unwrap_err().to_string(),
            "malformed JSON (expected a value at column 10)"
        );
    }

    #[test]
    fn deep_nesting_is_skipped_without_a_limit() {
        let depth = 100_000;
        let line = format!(
            r#"{{"deep":{}{},"text":"ok"}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        );
        assert_eq!(field(&line, "text").unwrap(), "ok");
    }
}
