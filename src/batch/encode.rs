//! Encoding a batch: each worker appends ids to its own buffer; one pass assembles the result.

use std::borrow::Borrow;

use super::{Failure, Texts, assemble};
use crate::engine::{EncodeMode, Ids, Scratch, Tokenizer};
use crate::scheduler::{Batch, CancelToken, Chunk, Gate, Policy, Scheduler};

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
        IdSink {
            ids: Ids::with_capacity(self.sink_capacity),
            counts: Vec::new(),
            scratch: Scratch::new(),
        }
    }

    #[inline]
    fn mark(&self, sink: &IdSink<'a>) -> (usize, usize) {
        (sink.ids.len(), sink.counts.len())
    }

    #[inline]
    fn process(&self, index: usize, sink: &mut IdSink<'a>) -> Result<(), String> {
        let before = sink.ids.len();
        if let Err(e) = self.tokenizer.encode_into(
            self.texts.get(index),
            self.mode,
            &mut sink.scratch,
            &mut sink.ids,
        ) {
            sink.ids.truncate(before);
            return Err(e.to_string());
        }
        sink.counts.push((sink.ids.len() - before) as u32);
        Ok(())
    }

    fn locks_taken(&self, sink: &IdSink<'a>) -> Option<u64> {
        sink.scratch.locks()
    }
}

/// A worker's ids once its part of the batch is done: the engine's working memory it held is
/// given back, so the next part's workers lease it warm.
struct WorkerIds {
    ids: Ids,
    counts: Vec<u32>,
}

impl From<IdSink<'_>> for WorkerIds {
    fn from(sink: IdSink<'_>) -> Self {
        WorkerIds {
            ids: sink.ids,
            counts: sink.counts,
        }
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
    encode_parts(scheduler, tokenizer, [texts], mode, cancel, None)
}

/// Encodes a batch that arrives in parts, each run on `scheduler` as soon as the iterator yields
/// it (a JS array is read in slices while the first slices already encode); the result is the
/// whole batch's, in input order, as if the parts had been one `Texts`. While `reading` is shut
/// (the producer of the parts is still at work), the parts run on the calling thread alone.
pub fn encode_parts<T: Borrow<Texts>>(
    scheduler: &Scheduler,
    tokenizer: &Tokenizer,
    parts: impl IntoIterator<Item = T>,
    mode: &EncodeMode,
    cancel: &CancelToken,
    reading: Option<&Gate>,
) -> Result<Encoded, Failure> {
    let config = scheduler.config();
    // A sink per thread that works on a part; the rayon policies make one per leaf job, a
    // number rayon decides as it splits.
    let sinks_per_part = match config.policy {
        Policy::Serial => Some(1),
        Policy::Chunked => Some(config.threads),
        Policy::Rayon | Policy::RayonMinLen => None,
    };
    let mut run = scheduler.parted();
    if let Some(reading) = reading {
        run = run.alone_until(reading);
    }
    let mut sinks: Vec<WorkerIds> = Vec::new();
    let mut chunks: Vec<Chunk<(usize, usize)>> = Vec::new();
    let (mut len, mut bytes) = (0, 0);
    for part in parts {
        let texts = part.borrow();
        let output = run.run(
            &EncodeBatch::new(tokenizer, texts, mode, sinks_per_part),
            cancel,
        )?;
        let first_sink = sinks.len();
        chunks.extend(output.chunks.into_iter().map(|chunk| Chunk {
            items: chunk.items.start + len..chunk.items.end + len,
            sink: chunk.sink + first_sink,
            ..chunk
        }));
        sinks.extend(output.sinks.into_iter().map(WorkerIds::from));
        len += texts.len();
        bytes += texts.total_bytes();
    }
    let total: usize = sinks.iter().map(|s| s.ids.len()).sum();
    tokenizer.record_batch(bytes, total);
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
