//! The buffer every engine appends ids to.

use tokenizers::pipeline::PipelineToken;

/// A growable buffer of token ids.
///
/// It stores the release-candidate engine's own token type (`PipelineToken`, a `u32` with
/// `repr(transparent)`), so that engine appends to it directly with no copy, and hands out plain
/// `u32` slices to everyone else.
#[derive(Debug, Default, Clone)]
pub struct Ids {
    tokens: Vec<PipelineToken>,
}

impl Ids {
    /// An empty buffer with room for `capacity` ids.
    pub fn with_capacity(capacity: usize) -> Self {
        Ids {
            tokens: Vec::with_capacity(capacity),
        }
    }

    /// How many ids the buffer holds.
    #[inline]
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// True when the buffer holds no id.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Removes every id, keeping the allocation.
    #[inline]
    pub fn clear(&mut self) {
        self.tokens.clear();
    }

    /// Drops the ids from `len` on.
    #[inline]
    pub fn truncate(&mut self, len: usize) {
        self.tokens.truncate(len);
    }

    /// Appends one id.
    #[inline]
    pub fn push(&mut self, id: u32) {
        self.tokens.push(PipelineToken::from(id));
    }

    /// Appends ids.
    #[inline]
    pub fn extend_from_slice(&mut self, ids: &[u32]) {
        self.tokens
            .extend(ids.iter().map(|&id| PipelineToken::from(id)));
    }

    /// The ids as `u32`.
    #[inline]
    pub fn as_slice(&self) -> &[u32] {
        PipelineToken::cast_slice(&self.tokens)
    }

    /// The ids as a `Vec<u32>`, reusing the buffer's allocation.
    pub fn into_vec(self) -> Vec<u32> {
        let mut tokens = std::mem::ManuallyDrop::new(self.tokens);
        let (ptr, len, capacity) = (tokens.as_mut_ptr(), tokens.len(), tokens.capacity());
        // SAFETY: `PipelineToken` is `repr(transparent)` over `u32`, so an allocation of
        // `capacity` tokens has the size and alignment of one of `capacity` `u32`s, and its first
        // `len` elements are initialised `u32`s. `tokens` is never dropped (ManuallyDrop), so the
        // allocation has one owner: the returned vector.
        unsafe { Vec::from_raw_parts(ptr.cast::<u32>(), len, capacity) }
    }

    /// The engine's view of the buffer, for `PipelineTokenizer::encode_into`.
    #[inline]
    pub(super) fn tokens_mut(&mut self) -> &mut Vec<PipelineToken> {
        &mut self.tokens
    }
}
