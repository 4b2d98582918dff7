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

use std::sync::{Mutex, PoisonError};

use crossbeam_utils::CachePadded;
use tokenizers::pipeline::{PipelineModelScratch, PreTokenizerScratch, Span};

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
