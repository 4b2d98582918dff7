//! Encoding a batch: each worker appends ids to its own buffer; one pass assembles the result.

use super::{Failure, Texts, assemble};
use crate::engine::{EncodeMode, Ids, Tokenizer};
use crate::scheduler::{Batch, CancelToken, Scheduler};

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
}

/// What one worker produced: its texts' ids back to back, and how many ids each text has.
#[derive(Default)]
pub struct IdSink {
    ids: Ids,
    counts: Vec<u32>,
}

impl<'a> EncodeBatch<'a> {
    /// The work of encoding every text of `texts`.
    pub fn new(tokenizer: &'a Tokenizer, texts: &'a Texts, mode: &'a EncodeMode) -> Self {
        EncodeBatch {
            tokenizer,
            texts,
            mode,
        }
    }
}

impl Batch for EncodeBatch<'_> {
    type Sink = IdSink;
    type Mark = (usize, usize);

    #[inline]
    fn len(&self) -> usize {
        self.texts.len()
    }

    #[inline]
    fn cost(&self, index: usize) -> usize {
        self.texts.byte_len(index)
    }

    fn new_sink(&self) -> IdSink {
        IdSink::default()
    }

    #[inline]
    fn mark(&self, sink: &IdSink) -> (usize, usize) {
        (sink.ids.len(), sink.counts.len())
    }

    #[inline]
    fn process(&self, index: usize, sink: &mut IdSink) -> Result<(), String> {
        let before = sink.ids.len();
        if let Err(e) = self
            .tokenizer
            .encode_into(self.texts.get(index), self.mode, &mut sink.ids)
        {
            sink.ids.truncate(before);
            return Err(e.to_string());
        }
        sink.counts.push((sink.ids.len() - before) as u32);
        Ok(())
    }

    fn locks_taken(&self, sink: &IdSink) -> Option<u64> {
        Some(sink.counts.len() as u64 * self.tokenizer.locks_per_text()?)
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
    let mut output = scheduler.run(&EncodeBatch::new(tokenizer, texts, mode), cancel)?;
    let total: usize = output.sinks.iter().map(|s| s.ids.len()).sum();
    if total > u32::MAX as usize {
        return Err(Failure::TooLarge { ids: total });
    }
    // One worker that ran its chunks in input order (one thread, or a batch run inline) already
    // holds the result: hand its buffer over rather than copy every id into a fresh one.
    if output.sinks.len() == 1 && output.chunks.windows(2).all(|w| w[0].end == w[1].start) {
        let sink = output.sinks.pop().expect("one sink");
        let mut offsets = Vec::with_capacity(texts.len() + 1);
        offsets.push(0u32);
        let mut end = 0u32;
        offsets.extend(sink.counts.iter().map(|&count| {
            end += count;
            end
        }));
        debug_assert_eq!(offsets.len(), texts.len() + 1);
        let mut ids = sink.ids.into_vec();
        // The buffer grew by doubling; JS keeps it as long as the result lives, so give back what
        // a quarter or more of it never holds.
        if ids.capacity() - ids.len() > ids.len() / 4 {
            ids.shrink_to_fit();
        }
        return Ok(Encoded { ids, offsets });
    }
    let mut offsets = Vec::with_capacity(texts.len() + 1);
    offsets.push(0u32);
    let mut end = 0u32;
    for chunk in &output.chunks {
        let counts = &output.sinks[chunk.sink].counts[chunk.start.1..chunk.end.1];
        offsets.extend(counts.iter().map(|&count| {
            end += count;
            end
        }));
    }
    debug_assert_eq!(offsets.len(), texts.len() + 1);
    let pieces = output
        .chunks
        .iter()
        .map(|chunk| &output.sinks[chunk.sink].ids.as_slice()[chunk.start.0..chunk.end.0]);
    let ids = assemble::concatenate(scheduler, pieces)?;
    Ok(Encoded { ids, offsets })
}
