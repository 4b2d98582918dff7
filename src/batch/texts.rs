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

    /// Appends one text that `fill` writes into `room` bytes of spare capacity, returning how many
    /// it wrote; a `fill` that writes bytes which are not UTF-8 is refused with `Err`.
    ///
    /// For a writer that knows the encoded length in advance (a JS string), this writes the text
    /// in place, with no intermediate `String`.
    pub fn push_with(
        &mut self,
        room: usize,
        fill: impl FnOnce(&mut [std::mem::MaybeUninit<u8>]) -> usize,
    ) -> Result<(), std::str::Utf8Error> {
        self.bytes.reserve(room);
        let start = self.bytes.len();
        let written = fill(&mut self.bytes.spare_capacity_mut()[..room]);
        assert!(
            written <= room,
            "a text writer wrote past the room it was given"
        );
        // SAFETY: `fill` initialised the first `written` bytes of the spare capacity (its contract,
        // and `written <= room <= spare capacity` was just checked), so `start + written` bytes
        // are initialised.
        unsafe { self.bytes.set_len(start + written) };
        if let Err(e) = std::str::from_utf8(&self.bytes[start..]) {
            self.bytes.truncate(start);
            return Err(e);
        }
        self.ends.push(self.bytes.len());
        Ok(())
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
                3
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
            1
        });
        assert!(refused.is_err());
        assert_eq!(texts.len(), 1);
        assert_eq!(texts.total_bytes(), 1);
    }
}
