//! Model inputs for a batch: each worker appends its inputs' rows to its own [`Rows`]; once every
//! row's length is known, so is the rectangle's, and a second batch pads each chunk's rows
//! straight into their places in it, on the scheduler's threads.

use std::sync::Mutex;

use super::{Failure, Texts};
use crate::engine::{
    self, IdElement, Layout, ModelInputs, Padding, Piece, RowOptions, Rows, RowsWindow, Scratch,
    Tokenizer, Unfilled,
};
use crate::scheduler::{Batch, BatchError, CancelToken, ItemError, Scheduler};

/// The inputs of a call: texts, and pairs of texts, as one [`Texts`].
#[derive(Debug, Default)]
pub struct Inputs {
    texts: Texts,
    /// Input `i` is texts `starts[i]..starts[i + 1]`: one text, or two for a pair.
    starts: Vec<u32>,
    /// Running totals of the inputs' UTF-8 lengths, the scheduler's costs.
    cost_ends: Vec<usize>,
}

impl Inputs {
    /// The inputs held in `texts`, input `i` being texts `starts[i]..starts[i + 1]` (one or two).
    pub fn new(texts: Texts, starts: Vec<u32>) -> Inputs {
        let ends = texts.ends();
        let cost_ends = starts
            .windows(2)
            .map(|w| {
                if w[1] == 0 {
                    0
                } else {
                    ends[w[1] as usize - 1]
                }
            })
            .collect();
        Inputs {
            texts,
            starts,
            cost_ends,
        }
    }

    /// How many inputs there are.
    pub fn len(&self) -> usize {
        self.cost_ends.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.cost_ends.is_empty()
    }

    /// Input `index`: its text, and its second text for a pair.
    pub fn get(&self, index: usize) -> (&str, Option<&str>) {
        let (start, end) = (self.starts[index] as usize, self.starts[index + 1] as usize);
        let second = (end - start == 2).then(|| self.texts.get(start + 1));
        (self.texts.get(start), second)
    }
}

/// Encoding every input of `inputs` into rows, as scheduler work.
struct RowsBatch<'a> {
    tokenizer: &'a Tokenizer,
    inputs: &'a Inputs,
    options: &'a RowOptions,
    /// The tokens and rows each worker's [`Rows`] is sized for up front: a `1 / sinks` share of
    /// the expected, so that they do not grow (and copy themselves) on the way; 0 where the
    /// number of sinks is not known.
    sink_tokens: usize,
    sink_rows: usize,
}

/// One worker's rows, and the engine's working memory it holds meanwhile.
struct RowsSink<'a> {
    rows: Rows,
    scratch: Scratch<'a>,
}

impl<'a> Batch for RowsBatch<'a> {
    type Sink = RowsSink<'a>;
    /// Rows, then inputs.
    type Mark = (usize, usize);

    fn len(&self) -> usize {
        self.inputs.len()
    }

    fn cost(&self, index: usize) -> usize {
        let ends = &self.inputs.cost_ends;
        ends[index] - if index == 0 { 0 } else { ends[index - 1] }
    }

    fn cumulative_costs(&self) -> Option<&[usize]> {
        Some(&self.inputs.cost_ends)
    }

    fn new_sink(&self) -> RowsSink<'a> {
        let mut rows = Rows::default();
        rows.ids.reserve(self.sink_tokens);
        rows.type_ids.reserve(self.sink_tokens);
        rows.ends.reserve(self.sink_rows);
        rows.rows_per_input.reserve(self.sink_rows);
        RowsSink {
            rows,
            scratch: Scratch::new(),
        }
    }

    fn mark(&self, sink: &RowsSink<'a>) -> (usize, usize) {
        (sink.rows.ends.len(), sink.rows.rows_per_input.len())
    }

    fn process(&self, index: usize, sink: &mut RowsSink<'a>) -> Result<(), ItemError> {
        let (first, second) = self.inputs.get(index);
        let (rows, inputs) = self.mark(sink);
        self.tokenizer
            .encode_rows(
                first,
                second,
                self.options,
                &mut sink.scratch,
                &mut sink.rows,
            )
            .map_err(|e| {
                sink.rows.truncate_to(rows, inputs);
                e.into()
            })
    }

    fn locks_taken(&self, sink: &RowsSink<'a>) -> Option<u64> {
        sink.scratch.locks()
    }

    fn seal_sink(&self, sink: &mut RowsSink<'a>) {
        sink.scratch.give_back();
    }
}

/// Padding every piece's rows into its window of the rectangle, as scheduler work: item `k` pads
/// piece `k`.
struct PadBatch<'a, 'w, T> {
    pieces: &'a [Piece<'a>],
    layout: &'a Layout<'a>,
    /// Each piece's window, taken by the one item that writes it.
    windows: Vec<Mutex<Option<RowsWindow<'w, T>>>>,
}

impl<T: IdElement> Batch for PadBatch<'_, '_, T> {
    type Sink = ();
    type Mark = ();

    fn len(&self) -> usize {
        self.pieces.len()
    }

    fn cost(&self, index: usize) -> usize {
        self.pieces[index].1.len() * self.layout.sequence
    }

    fn new_sink(&self) {}

    fn mark(&self, _sink: &()) {}

    fn process(&self, index: usize, _sink: &mut ()) -> Result<(), ItemError> {
        let window = self.windows[index]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take()
            .ok_or("a piece of the model inputs was padded twice")?;
        let (rows, range, _) = &self.pieces[index];
        engine::pad_rows(rows, range.clone(), self.layout, window);
        Ok(())
    }
}

/// Encodes every input on `scheduler` and pads the rows into one rectangle, in input order. The
/// outer error is the batch's (an input failed, or the call was cancelled); the inner one says why
/// the rows cannot be made a rectangle (rows of different lengths without padding, a row longer
/// than the fixed length).
pub fn model_inputs_all<T: IdElement>(
    scheduler: &Scheduler,
    tokenizer: &Tokenizer,
    inputs: &Inputs,
    options: &RowOptions,
    padding: Option<&Padding>,
    cancel: &CancelToken,
) -> Result<Result<ModelInputs<T>, engine::Error>, Failure> {
    tokenizer.wait_before_batch(inputs.texts.total_bytes());
    let (sink_tokens, sink_rows) = scheduler.max_sinks().map_or((0, 0), |sinks| {
        let sinks = sinks.max(1);
        let template = tokenizer.template_tokens(false) * inputs.len();
        let tokens = tokenizer.expected_ids(inputs.texts.total_bytes()) + template;
        (tokens / sinks, inputs.len().div_ceil(sinks))
    });
    let batch = RowsBatch {
        tokenizer,
        inputs,
        options,
        sink_tokens,
        sink_rows,
    };
    let output = scheduler.run(&batch, cancel)?;
    let pieces: Vec<Piece<'_>> = output
        .chunks
        .iter()
        .map(|chunk| {
            (
                &output.sinks[chunk.sink].rows,
                chunk.start.0..chunk.end.0,
                chunk.start.1..chunk.end.1,
            )
        })
        .collect();
    let layout = match engine::layout(&pieces, padding) {
        Ok(layout) => layout,
        Err(refused) => return Ok(Err(refused)),
    };
    let mut unfilled = Unfilled::new(&layout, options.returns);
    let windows = unfilled.windows(pieces.iter().map(|(_, rows, _)| rows.len()));
    let pad = PadBatch {
        pieces: &pieces,
        layout: &layout,
        windows: windows.into_iter().map(|w| Mutex::new(Some(w))).collect(),
    };
    // Nothing cancels the padding: it is short next to the encoding before it, and a result that
    // is ready is better handed over than thrown away.
    scheduler.run_untracked(&pad, &CancelToken::new())?;
    let unpadded = pad
        .windows
        .iter()
        .position(|w| w.lock().map_or(true, |w| w.is_some()));
    if let Some(index) = unpadded {
        return Err(Failure::Batch(BatchError::ItemFailed {
            index,
            error: "a piece of the model inputs was not padded".into(),
        }));
    }
    drop(pad);
    // SAFETY: the windows' row counts are the pieces', which add up to the layout's rows, and
    // every window was taken and written by `pad_rows` (checked just above: none is left).
    let mut inputs = unsafe { unfilled.finish() };
    if options.returns.overflowing {
        inputs.overflow_to_sample = Some(engine::overflow_mapping(&pieces));
    }
    Ok(Ok(inputs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{PadTo, Returns, Side, Truncation, TruncationStrategy};
    use crate::scheduler::{Policy, SchedulerConfig};

    #[test]
    fn every_policy_gives_the_rows_of_one_input_at_a_time_in_input_order() {
        let json = std::fs::read_to_string("__test__/fixtures/tokenizers/bert.json").unwrap();
        let tokenizer = Tokenizer::from_json(&json, "bert.json").unwrap();
        tokenizer.wait_until_ready().unwrap();
        let mut rng = fastrand::Rng::with_seed(0x40de1);
        let words = [
            "the",
            "model",
            "inputs",
            "😀",
            "naïve",
            "日本語",
            "[SEP]",
            " ",
        ];
        let mut texts = Texts::default();
        let mut starts = vec![0u32];
        let mut alone = Vec::new();
        for _ in 0..400 {
            let text = |rng: &mut fastrand::Rng| -> String {
                (0..rng.usize(0..40))
                    .map(|_| words[rng.usize(0..words.len())])
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let first = text(&mut rng);
            let second = if rng.bool() {
                Some(text(&mut rng))
            } else {
                None
            };
            texts.push(&first);
            if let Some(second) = &second {
                texts.push(second);
            }
            starts.push(texts.len() as u32);
            alone.push((first, second));
        }
        let inputs = Inputs::new(texts, starts);
        // Ids alone (the release candidate's rows), then every optional part with left padding
        // (the stable engine's rows, overflowing windows included).
        let everything = Returns {
            offsets: true,
            tokens: true,
            word_ids: true,
            sequence_ids: true,
            special_tokens_mask: true,
            overflowing: true,
        };
        let cases = [
            (Returns::default(), None, Side::Right),
            (
                everything,
                Some(Truncation {
                    max_length: 12,
                    strategy: TruncationStrategy::LongestFirst,
                    stride: 2,
                    direction: Side::Right,
                }),
                Side::Left,
            ),
        ];
        for (returns, truncation, side) in cases {
            let options = RowOptions {
                add_special_tokens: true,
                split_special: true,
                truncation: truncation.or(tokenizer.file_truncation()),
                returns,
            };
            let padding = tokenizer
                .resolve_padding(Some(PadTo::Longest), Some(8), Some(side), None)
                .unwrap();
            let one = Scheduler::new(SchedulerConfig {
                threads: 1,
                ..SchedulerConfig::default()
            })
            .unwrap();
            let cancel = CancelToken::new();
            let reference: ModelInputs<i64> = model_inputs_all(
                &one,
                &tokenizer,
                &inputs,
                &options,
                padding.as_ref(),
                &cancel,
            )
            .unwrap()
            .unwrap();
            assert!(reference.rows >= 400);
            for policy in Policy::ALL {
                let scheduler = Scheduler::new(SchedulerConfig {
                    policy,
                    threads: 3,
                    ..SchedulerConfig::default()
                })
                .unwrap();
                let got: ModelInputs<i64> = model_inputs_all(
                    &scheduler,
                    &tokenizer,
                    &inputs,
                    &options,
                    padding.as_ref(),
                    &cancel,
                )
                .unwrap()
                .unwrap();
                assert_eq!(got.input_ids, reference.input_ids, "{policy}");
                assert_eq!(got.token_type_ids, reference.token_type_ids, "{policy}");
                assert_eq!(got.attention_mask, reference.attention_mask, "{policy}");
                assert_eq!(got.offsets, reference.offsets, "{policy}");
                assert_eq!(got.tokens, reference.tokens, "{policy}");
                assert_eq!(got.word_ids, reference.word_ids, "{policy}");
                assert_eq!(got.sequence_ids, reference.sequence_ids, "{policy}");
                assert_eq!(
                    got.special_tokens_mask, reference.special_tokens_mask,
                    "{policy}"
                );
                assert_eq!(
                    got.overflow_to_sample, reference.overflow_to_sample,
                    "{policy}"
                );
            }
        }
    }
}
