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

    /// Appends one text that `fill` writes into `room` bytes of spare capacity (at least `room`;
    /// all the spare capacity the buffer has), returning how many it wrote, or `None` to push
    /// nothing (the writer found the room too small). A `fill` that writes bytes which are not
    /// UTF-8 is refused with `Err`.
    ///
    /// A JS string is written this way, in place, with no intermediate `String`.
    pub fn push_with(
        &mut self,
        room: usize,
        fill: impl FnOnce(&mut [std::mem::MaybeUninit<u8>]) -> Option<usize>,
    ) -> Result<bool, std::str::Utf8Error> {
        self.bytes.reserve(room);
        let start = self.bytes.len();
        let spare = self.bytes.spare_capacity_mut();
        let room = spare.len();
        let Some(written) = fill(spare) else {
            return Ok(false);
        };
        assert!(
            written <= room,
            "a text writer wrote past the room it was given"
        );
        // SAFETY: `fill` initialised the first `written` bytes of the spare capacity (its contract,
        // and `written <= room`, the spare capacity, was just checked), so `start + written` bytes
        // are initialised.
        unsafe { self.bytes.set_len(start + written) };
        if let Err(e) = std::str::from_utf8(&self.bytes[start..]) {
            self.bytes.truncate(start);
            return Err(e);
        }
        self.ends.push(self.bytes.len());
        Ok(true)
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
        let body = std::str::from_utf8(body).map_err(|error| Utf8BatchError::NotUtf8 {
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

    /// Text `index`.
    #[inline]
    pub fn get(&self, index: usize) -> &str {
        let bytes = &self.bytes[self.range(index)];
        // SAFETY: the invariant on `bytes`: each text's range is valid UTF-8 on its own, checked
        // when the text was pushed.
        unsafe { std::str::from_utf8_unchecked(bytes) }
    }
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

    #[test]
    fn texts_come_back_as_pushed() {
        let mut texts = Texts::default();
        texts.push("héllo");
        texts.push("");
        texts
            .push_with(4, |room| {
                for (slot, b) in room.iter_mut().zip("日".bytes()) {
                    slot.write(b);
                }
                Some(3)
            })
            .unwrap();
        assert_eq!(texts.len(), 3);
        assert_eq!(
            (texts.get(0), texts.get(1), texts.get(2)),
            ("héllo", "", "日")
        );
        assert_eq!(texts.total_bytes(), 9);
    }

    #[test]
    fn a_writer_of_invalid_utf8_is_refused_and_leaves_no_trace() {
        let mut texts = Texts::default();
        texts.push("a");
        let refused = texts.push_with(2, |room| {
            room[0].write(0xC3);
            Some(1)
        });
        assert!(refused.is_err());
        assert_eq!(texts.len(), 1);
        assert_eq!(texts.total_bytes(), 1);
    }

    #[test]
    fn a_writer_that_declines_pushes_nothing() {
        let mut texts = Texts::default();
        assert_eq!(texts.push_with(8, |_| None), Ok(false));
        assert!(texts.is_empty());
        assert_eq!(texts.total_bytes(), 0);
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
