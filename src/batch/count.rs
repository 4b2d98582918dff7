//! Counting a batch's tokens: ids are computed into a reused scratch buffer and never kept.

use super::{Failure, Texts};
use crate::engine::{EncodeMode, Ids, Scratch, Tokenizer};
use crate::scheduler::{Batch, CancelToken, ItemError, Scheduler};

/// Counting the tokens of every text of `texts`, as scheduler work.
pub struct CountBatch<'a> {
    tokenizer: &'a Tokenizer,
    texts: &'a Texts,
    mode: &'a EncodeMode,
}

/// What one worker produced: its texts' counts; and the buffer it encodes into and the engine's
/// working memory, both reused from text to text.
pub struct CountSink<'a> {
    counts: Vec<u32>,
    ids: Ids,
    scratch: Scratch<'a>,
}

impl<'a> CountBatch<'a> {
    /// The work of counting every text of `texts`.
    pub fn new(tokenizer: &'a Tokenizer, texts: &'a Texts, mode: &'a EncodeMode) -> Self {
        CountBatch {
            tokenizer,
            texts,
            mode,
        }
    }
}

impl<'a> Batch for CountBatch<'a> {
    type Sink = CountSink<'a>;
    type Mark = usize;

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

    fn new_sink(&self) -> CountSink<'a> {
        CountSink {
            counts: Vec::new(),
            ids: Ids::default(),
            scratch: Scratch::new(),
        }
    }

    #[inline]
    fn mark(&self, sink: &CountSink<'a>) -> usize {
        sink.counts.len()
    }

    #[inline]
    fn process(&self, index: usize, sink: &mut CountSink<'a>) -> Result<(), ItemError> {
        sink.ids.clear();
        self.tokenizer.encode_into(
            self.texts.get(index),
            self.mode,
            &mut sink.scratch,
            &mut sink.ids,
        )?;
        let count = u32::try_from(sink.ids.len())
            .map_err(|_| format!("{} tokens do not fit a u32 count", sink.ids.len()))?;
        sink.counts.push(count);
        Ok(())
    }

    fn locks_taken(&self, sink: &CountSink<'a>) -> Option<u64> {
        sink.scratch.locks()
    }

    fn seal_sink(&self, sink: &mut CountSink<'a>) {
        sink.scratch.give_back();
    }
}

/// Counts the tokens of every text of `texts` on `scheduler`, in input order.
pub fn count_all(
    scheduler: &Scheduler,
    tokenizer: &Tokenizer,
    texts: &Texts,
    mode: &EncodeMode,
    cancel: &CancelToken,
) -> Result<Vec<u32>, Failure> {
    tokenizer.wait_before_batch(texts.total_bytes());
    let output = scheduler.run(&CountBatch::new(tokenizer, texts, mode), cancel)?;
    let mut counts = Vec::with_capacity(texts.len());
    for chunk in &output.chunks {
        counts.extend_from_slice(&output.sinks[chunk.sink].counts[chunk.start..chunk.end]);
    }
    Ok(counts)
}
