//! Encoding a batch: each worker appends ids to its own buffer; one pass assembles the result.

use super::{Failure, Texts, assemble};
use crate::engine::{self, EncodeMode, Ids, Scratch, Tokenizer};
use crate::scheduler::{Batch, CancelToken, Chunk, ItemError, Scheduler};

/// The ids of a whole batch: `ids[offsets[i]..offsets[i + 1]]` are the ids of text `i`.
#[derive(Debug, Default)]
pub struct Encoded {
    /// Every text's ids, back to back.
    pub ids: Vec<u32>,
    /// `len + 1` boundaries into `ids`.
    pub offsets: Vec<u32>,
}

/// Encoding `texts` with `tokenizer`, as scheduler work.
pub struct EncodeBatch<'a> {
    tokenizer: &'a Tokenizer,
    texts: &'a Texts,
    mode: &'a EncodeMode,
    /// Ids each worker's buffer starts with room for.
    sink_capacity: usize,
}

/// What one worker produced: its texts' ids back to back, and how many ids each text has; and
/// the engine's working memory it holds meanwhile.
pub struct IdSink<'a> {
    ids: Ids,
    counts: Vec<u32>,
    scratch: Scratch<'a>,
}

impl<'a> IdSink<'a> {
    /// An empty sink whose id buffer starts with room for `capacity` ids.
    pub(super) fn with_capacity(capacity: usize) -> Self {
        IdSink {
            ids: Ids::with_capacity(capacity),
            counts: Vec::new(),
            scratch: Scratch::new(),
        }
    }

    /// Where the sink ends: its ids and its texts.
    #[inline]
    pub(super) fn mark(&self) -> (usize, usize) {
        (self.ids.len(), self.counts.len())
    }

    /// Appends the ids of `text`; on an error the sink is left as it was.
    #[inline]
    pub(super) fn encode(
        &mut self,
        tokenizer: &'a Tokenizer,
        text: &str,
        mode: &EncodeMode,
    ) -> Result<(), engine::Error> {
        let before = self.ids.len();
        if let Err(e) = tokenizer.encode_into(text, mode, &mut self.scratch, &mut self.ids) {
            self.ids.truncate(before);
            return Err(e);
        }
        self.counts.push((self.ids.len() - before) as u32);
        Ok(())
    }

    /// The engine locks the sink's working memory took.
    pub(super) fn locks(&self) -> Option<u64> {
        self.scratch.locks()
    }

    /// Gives the engine's working memory back once the sink takes no more texts.
    pub(super) fn seal(&mut self) {
        self.scratch.give_back();
    }
}

impl<'a> EncodeBatch<'a> {
    /// The work of encoding every text of `texts`, with each worker's buffer sized for a
    /// `1 / sinks` share of the ids, or left to grow where `sinks` is not known.
    pub fn new(
        tokenizer: &'a Tokenizer,
        texts: &'a Texts,
        mode: &'a EncodeMode,
        sinks: Option<usize>,
    ) -> Self {
        EncodeBatch {
            tokenizer,
            texts,
            mode,
            sink_capacity: sinks.map_or(0, |sinks| {
                tokenizer.expected_ids(texts.total_bytes()) / sinks.max(1)
            }),
        }
    }
}

impl<'a> Batch for EncodeBatch<'a> {
    type Sink = IdSink<'a>;
    type Mark = (usize, usize);

    #[inline]
    fn len(&self) -> usize {
        self.texts.len()
    }

    #[inline]
    fn cost(&self, index: usize) -> usize {
        self.texts.byte_len(index)
    }

    #[inline]
    fn cumulative_costs(&self) -> Option<&[usize]> {
        Some(self.texts.ends())
    }

    fn new_sink(&self) -> IdSink<'a> {
        IdSink::with_capacity(self.sink_capacity)
    }

    #[inline]
    fn mark(&self, sink: &IdSink<'a>) -> (usize, usize) {
        sink.mark()
    }

    #[inline]
    fn process(&self, index: usize, sink: &mut IdSink<'a>) -> Result<(), ItemError> {
        Ok(sink.encode(self.tokenizer, self.texts.get(index), self.mode)?)
    }

    fn locks_taken(&self, sink: &IdSink<'a>) -> Option<u64> {
        sink.locks()
    }

    fn seal_sink(&self, sink: &mut IdSink<'a>) {
        sink.seal();
    }
}

/// Encodes every text of `texts` on `scheduler` and assembles the result in input order.
pub fn encode_all(
    scheduler: &Scheduler,
    tokenizer: &Tokenizer,
    texts: &Texts,
    mode: &EncodeMode,
    cancel: &CancelToken,
) -> Result<Encoded, Failure> {
    tokenizer.wait_before_batch(texts.total_bytes());
    let output = scheduler.run(
        &EncodeBatch::new(tokenizer, texts, mode, scheduler.max_sinks()),
        cancel,
    )?;
    tokenizer.record_batch(texts.total_bytes(), ids_in(&output.sinks));
    assemble_ids(scheduler, output.sinks, output.chunks, texts.len())
}

/// The ids the sinks hold in all.
pub(super) fn ids_in(sinks: &[IdSink]) -> usize {
    sinks.iter().map(|s| s.ids.len()).sum()
}

/// The ids of `len` texts, from the sinks of a finished run whose chunks `chunks` index, put
/// together in input order.
pub(super) fn assemble_ids(
    scheduler: &Scheduler,
    mut sinks: Vec<IdSink>,
    chunks: Vec<Chunk<(usize, usize)>>,
    len: usize,
) -> Result<Encoded, Failure> {
    let total = ids_in(&sinks);
    if total > u32::MAX as usize {
        return Err(Failure::TooLarge { ids: total });
    }
    // One worker that ran its chunks in input order (one thread, or a batch run inline) already
    // holds the result: hand its buffer over rather than copy every id into a fresh one.
    if sinks.len() == 1 && chunks.windows(2).all(|w| w[0].end == w[1].start) {
        let sink = sinks.pop().expect("one sink");
        let mut offsets = Vec::with_capacity(len + 1);
        offsets.push(0u32);
        let mut end = 0u32;
        offsets.extend(sink.counts.iter().map(|&count| {
            end += count;
            end
        }));
        debug_assert_eq!(offsets.len(), len + 1);
        let mut ids = sink.ids.into_vec();
        // The buffer grew by doubling; JS keeps it as long as the result lives, so give back what
        // a quarter or more of it never holds.
        if ids.capacity() - ids.len() > ids.len() / 4 {
            ids.shrink_to_fit();
        }
        return Ok(Encoded { ids, offsets });
    }
    let mut offsets = Vec::with_capacity(len + 1);
    offsets.push(0u32);
    let mut end = 0u32;
    for chunk in &chunks {
        let counts = &sinks[chunk.sink].counts[chunk.start.1..chunk.end.1];
        offsets.extend(counts.iter().map(|&count| {
            end += count;
            end
        }));
    }
    debug_assert_eq!(offsets.len(), len + 1);
    let pieces = chunks
        .iter()
        .map(|chunk| &sinks[chunk.sink].ids.as_slice()[chunk.start.0..chunk.end.0]);
    let ids = assemble::concatenate(scheduler, pieces)?;
    Ok(Encoded { ids, offsets })
}
