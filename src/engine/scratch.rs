//! Working memory a thread keeps between the texts it encodes.
//!
//! The release candidate's own `PipelineTokenizer::encode_into` takes its working memory (the BPE
//! word cache, the pre-tokenizer's split buffers, the span list) out of a pool inside the
//! tokenizer and puts it back: two lock acquisitions per text, on 64 mutexes laid side by side,
//! two to a cache line, so two threads can contend for one line. A batch worker encodes thousands
//! of texts in a row, so it holds one scratch for the whole batch instead: a [`Scratch`] leases
//! working memory from its engine's idle stack the first time it is used and gives it back when
//! its worker is done with it ([`Scratch::give_back`], when the scheduler seals the worker's
//! sink) or when it is dropped. That is two locks per worker per batch, none per text, and no
//! memory written by two threads (a lease is padded to its own cache lines). Leases are given
//! back, not dropped, so a word cache filled by one batch serves the next.
//! `benchmark/engine_state.rs` measures both ways on one engine; `benchmark/README.md` has the
//! figures.
//!
//! A single text takes a lease of its own, so every path encodes the same way and every test of
//! one text checks what batches run. [`Scratch::engine_pool`] keeps the engine's own per-call
//! pool instead: the reference the worker path is tested and measured against.
//!
//! Working memory grows with what it is used for and keeps its size: the pre-tokenizer's buffers
//! and the piece lists with the longest text, the model's merge buffers with the longest piece
//! (about 50 bytes per byte of a piece in rc.3: a 40 MB run of spaces, one piece, took 2 GiB).
//! Kept as they are, one such text would hold that memory for the life of the process, in every
//! scratch that met one. So after a text longer than [`KEEP_TEXT_BYTES`] the buffers that grow
//! with the text are let go, and after a piece longer than [`KEEP_PIECE_BYTES`] the model's
//! working memory is made anew ([`let_go_of_oversized`], for every engine); the word cache goes
//! with it, which only texts with such pieces pay. After a piece longer than
//! [`RELEASE_PIECE_BYTES`] the allocator's cache is returned to the operating system too.

use std::sync::{Mutex, PoisonError};

use crossbeam_utils::CachePadded;
use tokenizers::pipeline::{PipelineModelScratch, PreTokenizerScratch, Span};

/// Texts longer than this many bytes leave no text-sized buffers behind (see the module's docs).
/// Below it, the buffers a text of this size grows (a tag byte and a few bits per byte, and the
/// piece lists) are kept: tens of MiB at most.
pub(super) const KEEP_TEXT_BYTES: usize = 4 << 20;

/// Pieces longer than this many bytes leave no piece-sized merge buffers in the scratch (see the
/// module's docs): about 50 MiB of them are kept at most. Pieces of a pattern's cuts are words,
/// numbers and runs of white space, far shorter; but a SentencePiece-style file is cut only before
/// its word markers, so text without spaces (Chinese, Japanese) makes pieces of a whole paragraph
/// or more: with a bound of 64 KiB, CJK documents of 200 KB run at half the speed on Gemma 3's and
/// Llama 2's files, each paying for a new scratch and a collect.
pub(super) const KEEP_PIECE_BYTES: usize = 1 << 20;

/// Pieces longer than this many bytes also return the allocator's cache to the operating system
/// once their buffers are freed: mimalloc would keep them cached for the thread (gigabytes after a
/// run of tens of MB). Below it the freed buffers stay cached for the thread's next allocations,
/// as any freed memory does, and `releaseMemory()` returns them: a collect after every piece of a
/// few MB makes the next one fault its buffers in afresh (CJK documents of 2 MB take up to twice
/// as long on Mistral 7B's file, of Llama 2's shape), where a piece this long takes seconds to
/// merge.
const RELEASE_PIECE_BYTES: usize = 16 << 20;

/// The longest of `spans`, the pieces of a text of `text_len` bytes, where one is longer than
/// [`KEEP_PIECE_BYTES`]; else 0. Only a text longer than that is looked at.
#[inline]
pub(super) fn oversized_piece(text_len: usize, spans: &[Span]) -> usize {
    if text_len <= KEEP_PIECE_BYTES {
        return 0;
    }
    spans
        .iter()
        .map(|span| (span.end - span.start) as usize)
        .filter(|&len| len > KEEP_PIECE_BYTES)
        .max()
        .unwrap_or(0)
}

/// Lets go of what a text of `text_len` bytes, whose longest piece over [`KEEP_PIECE_BYTES`] was
/// `longest` (0 where none was, [`oversized_piece`]), grew past the sizes worth keeping:
/// `drop_text_buffers` after a text longer than [`KEEP_TEXT_BYTES`], `drop_piece_buffers` after
/// such a piece, and then, the buffers freed, the allocator's cache after a piece longer than
/// [`RELEASE_PIECE_BYTES`]. The one rule for every engine's working memory.
pub(super) fn let_go_of_oversized(
    text_len: usize,
    longest: usize,
    drop_text_buffers: impl FnOnce(),
    drop_piece_buffers: impl FnOnce(),
) {
    if text_len > KEEP_TEXT_BYTES {
        drop_text_buffers();
    }
    if longest > 0 {
        drop_piece_buffers();
        if longest > RELEASE_PIECE_BYTES {
            crate::allocator::release_memory();
        }
    }
}

/// The release candidate's working memory for one thread at a time.
pub(super) struct PipelineScratch {
    /// The model's buffers and word cache; built by the model it belongs to.
    pub(super) model: PipelineModelScratch,
    /// The pre-tokenizer's buffers.
    pub(super) split: PreTokenizerScratch,
    /// The pre-tokens of the text being encoded.
    pub(super) spans: Vec<Span>,
    /// The pre-tokens cut where no merge crosses, where the engine cuts them (`marker_cuts.rs`).
    pub(super) cut_spans: Vec<Span>,
    /// The text between added tokens, normalized where the engine normalizes it itself
    /// (`marker_cuts.rs`).
    pub(super) normalized: Vec<u8>,
    /// The longest piece over [`KEEP_PIECE_BYTES`] the text being encoded gave the model; 0 if
    /// none was.
    pub(super) oversized_piece: usize,
}

impl PipelineScratch {
    /// Lets go of what the text just encoded (`text_len` bytes) grew past the sizes worth keeping
    /// ([`let_go_of_oversized`]): the text-sized buffers, and the model's working memory, made
    /// anew by `new_model`.
    pub(super) fn let_go_of_oversized(
        &mut self,
        text_len: usize,
        new_model: impl FnOnce() -> PipelineModelScratch,
    ) {
        let longest = std::mem::take(&mut self.oversized_piece);
        let_go_of_oversized(
            text_len,
            longest,
            || {
                self.split = PreTokenizerScratch::default();
                self.spans = Vec::new();
                self.cut_spans = Vec::new();
                self.normalized = Vec::new();
            },
            || self.model = new_model(),
        );
    }
}

/// The scratches of one engine that no thread holds. The most recently given back is on top and
/// is leased first: its word cache is the warmest.
#[derive(Default)]
pub(super) struct IdleScratches(Mutex<Vec<PipelineScratch>>);

impl IdleScratches {
    /// An idle scratch, if any.
    pub(super) fn take(&self) -> Option<PipelineScratch> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).pop()
    }

    /// Makes `scratch` available to the next lease.
    pub(super) fn give_back(&self, scratch: PipelineScratch) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(scratch);
    }
}

/// What one thread keeps between the texts it encodes, and the count of the locks those texts
/// took on state shared between threads.
pub struct Scratch<'e> {
    /// Whether to lease working memory from the engine, or to leave it to the engine's own
    /// per-call pool.
    leasing: bool,
    /// The leased working memory, each with the idle stack of the engine it belongs to (a
    /// model's scratch fits only that model), given back on drop: one entry in practice (an OpenAI encoding's other
    /// engine, tiktoken's BPE in `ranks.rs`, keeps its working memory per thread and leases
    /// none). Padded: the buffers' lengths in it change with every word, and two workers'
    /// leases must not share a cache line.
    leases: Vec<(&'e IdleScratches, CachePadded<PipelineScratch>)>,
    /// Locks taken so far; `None` once an engine could not tell how many it took.
    locks: Option<u64>,
}

impl Default for Scratch<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'e> Scratch<'e> {
    /// Working memory leased from the engine at first use and kept until this is dropped: for a
    /// batch worker's run of texts, or one text.
    pub fn new() -> Self {
        Scratch {
            leasing: true,
            leases: Vec::new(),
            locks: Some(0),
        }
    }

    /// No lease: the release candidate takes working memory from its own pool for each text, as
    /// `PipelineTokenizer::encode_into` does by itself. The reference for tests and benchmarks.
    pub fn engine_pool() -> Self {
        Scratch {
            leasing: false,
            leases: Vec::new(),
            locks: Some(0),
        }
    }

    /// Locks the texts encoded with this scratch took on state shared between threads, the lease
    /// and its return included; `None` where an engine could not tell (the stable engine's
    /// Unigram cache locks depend on the text).
    pub fn locks(&self) -> Option<u64> {
        self.locks
    }

    /// Counts `locks` more.
    pub(super) fn count_locks(&mut self, locks: u64) {
        self.locks = self.locks.map(|sum| sum + locks);
    }

    /// Notes that an engine took locks it cannot count.
    pub(super) fn count_unknown_locks(&mut self) {
        self.locks = None;
    }

    /// The working memory of the engine whose idle stack is `idle`, leased on first use (an idle
    /// one, else a new one from `new_scratch`); `None` where this scratch leases none.
    #[inline]
    pub(super) fn leased_from(
        &mut self,
        idle: &'e IdleScratches,
        new_scratch: impl FnOnce() -> PipelineScratch,
    ) -> Option<&mut PipelineScratch> {
        if !self.leasing {
            return None;
        }
        let held = match self
            .leases
            .iter()
            .position(|(owner, _)| std::ptr::eq(*owner, idle))
        {
            Some(held) => held,
            None => {
                // Two locks: this take, and the give-back in `drop`.
                self.count_locks(2);
                let scratch = idle.take().unwrap_or_else(new_scratch);
                self.leases.push((idle, CachePadded::new(scratch)));
                self.leases.len() - 1
            }
        };
        Some(&mut *self.leases[held].1)
    }
}

impl Scratch<'_> {
    /// Gives the leased working memory back to its engines now rather than on drop, so another
    /// thread's next lease takes it (warm) instead of building a new one. The lock count stays;
    /// encoding with this scratch again leases again.
    pub fn give_back(&mut self) {
        for (idle, scratch) in self.leases.drain(..) {
            idle.give_back(CachePadded::into_inner(scratch));
        }
    }
}

impl Drop for Scratch<'_> {
    fn drop(&mut self) {
        self.give_back();
    }
}

/// Texts past the limits, for the engines' tests of what their working memory keeps: one piece
/// of white space just over [`KEEP_PIECE_BYTES`], between words, and many short pieces over
/// [`KEEP_TEXT_BYTES`].
#[cfg(test)]
pub(super) fn oversized_texts() -> [String; 2] {
    [
        format!("a{}b", " ".repeat(KEEP_PIECE_BYTES + 1)),
        "word ".repeat(KEEP_TEXT_BYTES / 5 + 1),
    ]
}

#[cfg(test)]
mod tests {
    use tokenizers::pipeline::Span;

    use super::{KEEP_PIECE_BYTES, oversized_piece};

    fn span(start: usize, len: usize) -> Span {
        Span {
            start: start as u32,
            end: (start + len) as u32,
        }
    }

    #[test]
    fn only_a_piece_longer_than_the_limit_is_oversized() {
        let at_limit = [span(0, 3), span(3, KEEP_PIECE_BYTES)];
        assert_eq!(oversized_piece(KEEP_PIECE_BYTES + 3, &at_limit), 0);
        let over = [
            span(0, KEEP_PIECE_BYTES + 1),
            span(KEEP_PIECE_BYTES + 1, KEEP_PIECE_BYTES + 2),
            span(2 * KEEP_PIECE_BYTES + 3, 1),
        ];
        assert_eq!(
            oversized_piece(2 * KEEP_PIECE_BYTES + 4, &over),
            KEEP_PIECE_BYTES + 2
        );
        // A text no longer than the limit has no such piece: its spans are not looked at.
        assert_eq!(oversized_piece(KEEP_PIECE_BYTES, &over), 0);
    }
}
