//! `Texts`: every text of a batch in one UTF-8 buffer.

use std::ops::Range;

/// The texts of a batch, back to back in one buffer.
///
/// One allocation for the whole batch instead of one per text: filling it is one pass on the main
/// thread, and no worker ever frees a small allocation another thread made.
#[derive(Debug, Default)]
pub struct Texts {
    /// Invariant: valid UTF-8, and every boundary in `ends` falls on a character boundary; so each
    /// text, `bytes[ends[i-1]..ends[i]]`, is valid UTF-8 on its own.
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Texts {
    /// An empty batch with room for `count` texts of `bytes` bytes in all.
    pub fn with_capacity(count: usize, bytes: usize) -> Self {
        Texts {
            bytes: Vec::with_capacity(bytes),
            ends: Vec::with_capacity(count),
        }
    }

    /// Appends one text.
    pub fn push(&mut self, text: &str) {
        self.bytes.extend_from_slice(text.as_bytes());
        self.ends.push(self.bytes.len());
    }

    /// A writer that appends texts in place and checks them all at once (see [`TextsWriter`]).
    pub fn writer(&mut self) -> TextsWriter<'_> {
        let checked = (self.bytes.len(), self.ends.len());
        TextsWriter {
            texts: self,
            checked,
        }
    }

    /// The texts between consecutive `boundaries` of `bytes` (`boundaries.len() - 1` texts), copied.
    ///
    /// The bytes are checked once as a whole, then each boundary for falling between characters,
    /// which together prove every text valid UTF-8 on its own.
    pub fn from_utf8(bytes: &[u8], boundaries: &[u32]) -> Result<Texts, Utf8BatchError> {
        let (&first, _) = boundaries
            .split_first()
            .ok_or(Utf8BatchError::NoBoundaries)?;
        for (index, pair) in boundaries.windows(2).enumerate() {
            if pair[1] < pair[0] {
                return Err(Utf8BatchError::Decreasing {
                    index: index + 1,
                    boundary: pair[1],
                    previous: pair[0],
                });
            }
        }
        let last = *boundaries.last().expect("boundaries is not empty") as usize;
        if last > bytes.len() {
            return Err(Utf8BatchError::PastEnd {
                boundary: last,
                len: bytes.len(),
            });
        }
        let body = &bytes[first as usize..last];
        let text_of = |offset: usize| {
            boundaries[1..].partition_point(|&end| end as usize - (first as usize) <= offset)
        };
        let body = utf8(body).map_err(|error| Utf8BatchError::NotUtf8 {
            text: text_of(error.valid_up_to()),
            byte: first as usize + error.valid_up_to(),
        })?;
        let mut ends = Vec::with_capacity(boundaries.len() - 1);
        for (index, &end) in boundaries.iter().enumerate().skip(1) {
            let end = (end - first) as usize;
            if !body.is_char_boundary(end) {
                return Err(Utf8BatchError::SplitsCharacter {
                    index,
                    boundary: first as usize + end,
                });
            }
            ends.push(end);
        }
        Ok(Texts {
            bytes: body.as_bytes().to_vec(),
            ends,
        })
    }

    /// How many texts the batch holds.
    #[inline]
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when the batch holds no text.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The UTF-8 bytes of every text together.
    #[inline]
    pub fn total_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Where each text ends in the buffer: text `i` is bytes `ends[i - 1]..ends[i]` (from 0 for
    /// the first), so `ends[i]` is the UTF-8 length of texts `0..=i` together.
    #[inline]
    pub fn ends(&self) -> &[usize] {
        &self.ends
    }

    #[inline]
    fn range(&self, index: usize) -> Range<usize> {
        let start = if index == 0 { 0 } else { self.ends[index - 1] };
        start..self.ends[index]
    }

    /// The UTF-8 length of text `index`.
    #[inline]
    pub fn byte_len(&self, index: usize) -> usize {
        self.range(index).len()
    }

    /// Leaves the first text's first `count` bytes out of it (the batch's texts move down by
    /// them). Panics unless they are a whole start of that text: `count` at most its length, and
    /// a character boundary.
    pub fn leave_out_start(&mut self, count: usize) {
        if count == 0 {
            return;
        }
        assert!(
            !self.is_empty() && self.get(0).is_char_boundary(count),
            "{count} bytes are not a start of the first text"
        );
        self.bytes.drain(..count);
        for end in &mut self.ends {
            *end -= count;
        }
    }

    /// Text `index`.
    #[inline]
    pub fn get(&self, index: usize) -> &str {
        let bytes = &self.bytes[self.range(index)];
        // SAFETY: the invariant on `bytes`: each text's range is valid UTF-8 on its own, checked
        // when the text was pushed.
        unsafe { std::str::from_utf8_unchecked(bytes) }
    }
}

/// Appends texts to a [`Texts`] that a writer fills in place (a JS string, written by V8 through
/// napi), and checks them all at once when [`finish`](Self::finish)ed: one pass over the new
/// bytes, rather than one call per text, which for ~100-byte texts costs several times more.
///
/// The texts it appends are not checked until then, so it holds the `Texts` borrowed meanwhile,
/// and dropping it unfinished removes them: outside a writer, the invariant of `Texts` holds.
pub struct TextsWriter<'t> {
    texts: &'t mut Texts,
    /// The byte and text counts up to which `texts` is checked.
    checked: (usize, usize),
}

impl TextsWriter<'_> {
    /// Appends one text that `fill` writes into `room` bytes of spare capacity (at least `room`;
    /// all the spare capacity the buffer has), returning how many it wrote, or `None` to push
    /// nothing (the writer found the room too small). Whether the bytes are UTF-8 is checked
    /// by [`finish`](Self::finish).
    pub fn push_with(
        &mut self,
        room: usize,
        fill: impl FnOnce(&mut [std::mem::MaybeUninit<u8>]) -> Option<usize>,
    ) -> bool {
        let bytes = &mut self.texts.bytes;
        bytes.reserve(room);
        let start = bytes.len();
        let spare = bytes.spare_capacity_mut();
        let room = spare.len();
        let Some(written) = fill(spare) else {
            return false;
        };
        assert!(
            written <= room,
            "a text writer wrote past the room it was given"
        );
        // SAFETY: `fill` initialised the first `written` bytes of the spare capacity (its contract,
        // and `written <= room`, the spare capacity, was just checked), so `start + written` bytes
        // are initialised.
        unsafe { bytes.set_len(start + written) };
        self.texts.ends.push(bytes.len());
        true
    }

    /// Bytes in the texts, the unchecked ones included.
    pub fn total_bytes(&self) -> usize {
        self.texts.bytes.len()
    }

    /// Bytes appended since the last check.
    pub fn unchecked_bytes(&self) -> usize {
        self.texts.bytes.len() - self.checked.0
    }

    /// Checks the texts appended since the last check, and keeps them if they are all UTF-8;
    /// else returns the index (in the `Texts`) of the first that is not, with its own error, and
    /// the writer removes them when dropped. Checking every few tens of KiB, rather than once at
    /// the end, reads the bytes while they are still in cache.
    ///
    /// The new bytes are checked as a whole, then each end for falling between characters, which
    /// together prove every new text valid UTF-8 on its own (as [`Texts::from_utf8`] argues).
    pub fn check(&mut self) -> Result<(), (usize, std::str::Utf8Error)> {
        let (first_byte, first_text) = self.checked;
        let texts = &*self.texts;
        let all_utf8 = utf8(&texts.bytes[first_byte..]).is_ok_and(|new| {
            texts.ends[first_text..]
                .iter()
                .all(|&end| new.is_char_boundary(end - first_byte))
        });
        if !all_utf8 {
            // Texts that are each UTF-8 are so back to back: one of them is not. Seldom taken (V8
            // writes UTF-8), so each text is checked again to find the first.
            return Err((first_text..texts.ends.len())
                .find_map(|index| {
                    std::str::from_utf8(&texts.bytes[texts.range(index)])
                        .err()
                        .map(|error| (index, error))
                })
                .expect("a text that is not UTF-8"));
        }
        self.checked = (texts.bytes.len(), texts.ends.len());
        Ok(())
    }

    /// [`check`](Self::check)s the last texts and keeps every text appended, or removes all
    /// those not checked before.
    pub fn finish(mut self) -> Result<(), (usize, std::str::Utf8Error)> {
        self.check()
    }
}

impl Drop for TextsWriter<'_> {
    fn drop(&mut self) {
        let (bytes, texts) = self.checked;
        self.texts.bytes.truncate(bytes);
        self.texts.ends.truncate(texts);
    }
}

/// `bytes` as UTF-8, as `std::str::from_utf8` answers. The SIMD check answers valid UTF-8 in a
/// tenth of std's time on text that is not ASCII, and std, only on bytes that are not UTF-8, says
/// where they stop being so. The strings of a call are checked with it on the main thread, which
/// every thread of the call waits for, and the segments of `encodeLines` on the workers.
pub(super) fn utf8(bytes: &[u8]) -> Result<&str, std::str::Utf8Error> {
    simdutf8::basic::from_utf8(bytes).or_else(|_| std::str::from_utf8(bytes))
}

/// Why a byte buffer and its boundaries are not a batch of texts; each says how to fix the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Utf8BatchError {
    /// No boundary at all: even an empty batch has one.
    NoBoundaries,
    /// `boundaries[index]` is below the boundary before it.
    Decreasing {
        index: usize,
        boundary: u32,
        previous: u32,
    },
    /// The last boundary lies past the end of the bytes.
    PastEnd { boundary: usize, len: usize },
    /// The bytes of text `text` are not UTF-8, from `byte` on.
    NotUtf8 { text: usize, byte: usize },
    /// `boundaries[index]` falls inside a multi-byte character.
    SplitsCharacter { index: usize, boundary: usize },
}

impl std::fmt::Display for Utf8BatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Utf8BatchError::NoBoundaries => write!(
                f,
                "offsets is empty; n texts need n + 1 offsets (text i is bytes offsets[i] to offsets[i + 1])"
            ),
            Utf8BatchError::Decreasing {
                index,
                boundary,
                previous,
            } => write!(
                f,
                "offsets[{index}] is {boundary}, below offsets[{}] = {previous}; offsets must not decrease",
                index - 1
            ),
            Utf8BatchError::PastEnd { boundary, len } => write!(
                f,
                "the last offset is {boundary}, past the end of the {len} bytes"
            ),
            Utf8BatchError::NotUtf8 { text, byte } => write!(
                f,
                "text {text} is not valid UTF-8 (at byte {byte} of the buffer); decode it and pass strings, or fix the bytes"
            ),
            Utf8BatchError::SplitsCharacter { index, boundary } => write!(
                f,
                "offsets[{index}] = {boundary} falls inside a multi-byte UTF-8 character; offsets must lie between characters"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pushes `bytes` through `writer` as one text, as a JS string is written.
    fn write(writer: &mut TextsWriter, bytes: &[u8]) {
        let pushed = writer.push_with(bytes.len(), |room| {
            for (slot, &b) in room.iter_mut().zip(bytes) {
                slot.write(b);
            }
            Some(bytes.len())
        });
        assert!(pushed);
    }

    /// The SIMD check stands behind `Texts::get`'s unchecked conversion, so it must refuse
    /// every byte string std refuses and say where it stops being UTF-8 as std does: on the
    /// classic bad sequences (overlong forms, surrogates, past U+10FFFF, cut characters, stray
    /// continuation bytes) at every offset of a block of SIMD width and beyond, and on random
    /// bytes mixed into real multi-byte text.
    #[test]
    fn the_utf8_check_answers_as_std() {
        let same = |bytes: &[u8]| {
            assert_eq!(
                utf8(bytes).map_err(|e| (e.valid_up_to(), e.error_len())),
                std::str::from_utf8(bytes).map_err(|e| (e.valid_up_to(), e.error_len())),
                "{bytes:?}"
            )
        };
        let text = "plain ascii, café, 日本語, 🦀 and more: ".repeat(8);
        let bad: [&[u8]; 10] = [
            b"\xc0\xaf",
            b"\xe0\x80\xaf",
            b"\xed\xa0\x80",
            b"\xf4\x90\x80\x80",
            b"\xf8\x88\x80\x80\x80",
            b"\xe6\x97",
            b"\x80",
            b"\xff",
            b"\xf0\x9f\xa6",
            b"\xc3",
        ];
        same(text.as_bytes());
        for sequence in bad {
            for at in (0..text.len()).filter(|&at| text.is_char_boundary(at)) {
                let mut bytes = text.as_bytes()[..at].to_vec();
                bytes.extend_from_slice(sequence);
                same(&bytes);
                bytes.extend_from_slice(&text.as_bytes()[at..]);
                same(&bytes);
            }
        }
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..20_000 {
            let mut bytes = text.as_bytes()[..rng.usize(0..text.len())].to_vec();
            for _ in 0..rng.usize(1..4) {
                let at = rng.usize(0..=bytes.len());
                bytes.insert(at, rng.u8(..));
            }
            same(&bytes);
        }
    }

    #[test]
    fn texts_come_back_as_pushed() {
        let mut texts = Texts::default();
        texts.push("héllo");
        texts.push("");
        let mut writer = texts.writer();
        write(&mut writer, "日".as_bytes());
        write(&mut writer, b"");
        assert_eq!(writer.total_bytes(), 9);
        writer.finish().unwrap();
        assert_eq!(texts.len(), 4);
        assert_eq!(
            (texts.get(0), texts.get(1), texts.get(2), texts.get(3)),
            ("héllo", "", "日", "")
        );
        assert_eq!(texts.total_bytes(), 9);
    }

    #[test]
    fn the_start_of_the_first_text_is_left_out() {
        let mut texts = Texts::from_utf8(" héllo日".as_bytes(), &[0, 7, 7, 10]).unwrap();
        texts.leave_out_start(0);
        texts.leave_out_start(1);
        assert_eq!(
            (texts.get(0), texts.get(1), texts.get(2)),
            ("héllo", "", "日")
        );
        assert_eq!((texts.total_bytes(), texts.ends()), (9, &[6, 6, 9][..]));
        let inside_a_character = std::panic::catch_unwind(move || texts.leave_out_start(2));
        assert!(inside_a_character.is_err());
        let mut one = Texts::from_utf8(b"ab", &[0, 2]).unwrap();
        one.leave_out_start(2);
        assert_eq!((one.len(), one.get(0)), (1, ""));
    }

    #[test]
    fn a_writer_of_invalid_utf8_is_refused_and_leaves_no_trace() {
        let mut texts = Texts::default();
        texts.push("a");
        let mut writer = texts.writer();
        write(&mut writer, b"ok");
        write(&mut writer, &[0xC3]);
        let (index, _) = writer.finish().unwrap_err();
        assert_eq!(index, 2);
        assert_eq!((texts.len(), texts.total_bytes()), (1, 1));
    }

    #[test]
    fn a_boundary_inside_a_character_is_refused() {
        // Back to back the bytes are "é", but neither text is UTF-8 on its own.
        let mut texts = Texts::default();
        let mut writer = texts.writer();
        write(&mut writer, b"x");
        write(&mut writer, &[0xC3]);
        write(&mut writer, &[0xA9, 0xFF]);
        assert_eq!(
            writer.finish().unwrap_err().0,
            1,
            "the first text that is not UTF-8"
        );
        assert!(texts.is_empty());
    }

    #[test]
    fn an_unfinished_writer_takes_its_texts_back() {
        let mut texts = Texts::default();
        texts.push("kept");
        let mut writer = texts.writer();
        write(&mut writer, b"dropped");
        assert!(
            !writer.push_with(8, |_| None),
            "a writer that declines pushes nothing"
        );
        drop(writer);
        assert_eq!((texts.len(), texts.get(0)), (1, "kept"));
        assert_eq!(texts.total_bytes(), 4);
    }

    #[test]
    fn utf8_bytes_split_at_boundaries() {
        let bytes = "héllo日本\n".as_bytes();
        let texts = Texts::from_utf8(bytes, &[0, 6, 6, 12, 13]).unwrap();
        let got: Vec<&str> = (0..texts.len()).map(|i| texts.get(i)).collect();
        assert_eq!(got, ["héllo", "", "日本", "\n"]);
        let skipped = Texts::from_utf8(bytes, &[1, 6]).unwrap();
        assert_eq!((skipped.len(), skipped.get(0)), (1, "éllo"));
        assert_eq!(Texts::from_utf8(bytes, &[3]).unwrap().len(), 0);
    }

    #[test]
    fn bad_boundaries_and_bytes_are_refused_with_their_place() {
        let bytes = "héllo日本".as_bytes();
        assert_eq!(
            Texts::from_utf8(bytes, &[]).unwrap_err(),
            Utf8BatchError::NoBoundaries
        );
        assert_eq!(
            Texts::from_utf8(bytes, &[0, 6, 5]).unwrap_err(),
            Utf8BatchError::Decreasing {
                index: 2,
                boundary: 5,
                previous: 6
            }
        );
        assert_eq!(
            Texts::from_utf8(bytes, &[0, 13]).unwrap_err(),
            Utf8BatchError::PastEnd {
                boundary: 13,
                len: 12
            }
        );
        assert_eq!(
            Texts::from_utf8(bytes, &[0, 2, 6]).unwrap_err(),
            Utf8BatchError::SplitsCharacter {
                index: 1,
                boundary: 2
            }
        );
        let broken = [b'a', b'b', 0xFF, b'c'];
        assert_eq!(
            Texts::from_utf8(&broken, &[0, 1, 4]).unwrap_err(),
            Utf8BatchError::NotUtf8 { text: 1, byte: 2 }
        );
        let starts_mid_character = "日".as_bytes();
        assert_eq!(
            Texts::from_utf8(starts_mid_character, &[1, 3]).unwrap_err(),
            Utf8BatchError::NotUtf8 { text: 0, byte: 1 }
        );
    }
}
