//! `encodeForModel`: its options, the reading of its inputs, its call and task, and the
//! `ModelInputs` object it returns.

use std::sync::Arc;

use napi::bindgen_prelude::{BigInt64Array, Either3, Int32Array, Uint8Array, Uint32Array, Unknown};
use napi::{Env, Task};
use napi_derive::napi;

use super::errors::{from_engine, type_error};
use super::model_input_options::Dtype;
use super::options::Options;
use super::raw;
use super::scheduler::Runner;
use super::signal::AbortListener;
use super::tasks::TaskOutput;
use super::texts::inputs_from_array;
use crate::allocator;
use crate::batch::{Failure, Inputs, model_inputs_all};
use crate::engine::{
    self, Family, IdArray, IdElement, ModelInputs as EngineModelInputs, Padding, RowOptions,
    Tokenizer,
};
use crate::scheduler::{BatchError, CancelToken};

/// Options of `encodeForModel` and `encodeForModelSync`.
#[napi(object, object_to_js = false, object_from_js = false)]
#[expect(
    dead_code,
    reason = "index.d.ts's type; `ModelInputOptions::read` reads the options by hand"
)]
pub struct ModelInputsOptions {
    /// Add the post-processor's template tokens (`[CLS]` … `[SEP]`, `<s>` … `</s>`).
    /// @default true
    pub add_special_tokens: Option<bool>,
    /// Encode the text of added special tokens as ordinary text.
    /// @default false
    pub encode_special_tokens: Option<bool>,
    /// `false`, `true` or `{ maxLength, strategy, stride, direction }`, as in `EncodeOptions`;
    /// `true` and an object without `maxLength` cut to `maxLength` below where it is given.
    /// @default the file's truncation
    #[napi(ts_type = "boolean | TruncationOptions")]
    pub truncation: Option<bool>,
    /// `'longest'` pads every row to the longest row, `'maxLength'` to `maxLength`; `false` pads
    /// nothing, and rows of different lengths are then an error. The pad id, pad token and pad
    /// type id are the file's padding section's, else the model's pad token; `padToken` sets the
    /// token. Padding a tokenizer with none of them throws an `Error`.
    /// @default the file's padding section (none: false)
    #[napi(ts_type = "false | 'longest' | 'maxLength'")]
    pub padding: Option<bool>,
    /// The length of `padding: 'maxLength'` and of `truncation: true`.
    /// @default the file's padding length, else its truncation length, else the model's `model_max_length`
    pub max_length: Option<u32>,
    /// Round the padded length up to a multiple of this (8 suits tensor cores).
    /// @default the file's padding section's, else none
    pub pad_to_multiple_of: Option<u32>,
    /// Which end of a row the padding goes.
    /// @default the file's padding direction, else 'right'
    #[napi(ts_type = "'right' | 'left'")]
    pub pad_side: Option<String>,
    /// The token padding is made of, by its text (`'<|endoftext|>'` for GPT-2, Llama 3's
    /// `'<|end_of_text|>'`), as Python `tokenizers`' `enable_padding(pad_token=...)` and
    /// transformers' `tokenizer.pad_token = tokenizer.eos_token` set it; a token the vocabulary
    /// lacks is a `RangeError`.
    /// @default the file's padding token, else the model's `pad_token`
    pub pad_token: Option<String>,
    /// The type of `inputIds`, `attentionMask` and `tokenTypeIds`: `'int64'` (`BigInt64Array`,
    /// what onnxruntime-node's int64 tensors take), `'int32'` (`Int32Array`) or `'uint32'`
    /// (`Uint32Array`).
    /// @default 'int64'
    #[napi(ts_type = "'int64' | 'int32' | 'uint32'")]
    pub dtype: Option<String>,
    /// Also return `offsets`.
    /// @default false
    pub return_offsets: Option<bool>,
    /// Also return `tokens`.
    /// @default false
    pub return_tokens: Option<bool>,
    /// Also return `wordIds`.
    /// @default false
    pub return_word_ids: Option<bool>,
    /// Also return `sequenceIds`.
    /// @default false
    pub return_sequence_ids: Option<bool>,
    /// Also return `specialTokensMask`.
    /// @default false
    pub return_special_tokens_mask: Option<bool>,
    /// Return the windows truncation cuts off as rows of their own, after their input's row,
    /// each repeating `truncation.stride` tokens of the window before it, with
    /// `overflowToSampleMapping`.
    /// @default false
    pub return_overflowing: Option<bool>,
    /// Aborts the call: the promise rejects with an `AbortError`. (Async method only.)
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<bool>,
    /// The scheduler that runs the call.
    /// @default the process-wide default scheduler (`Scheduler.getDefault()`)
    #[napi(ts_type = "Scheduler")]
    pub scheduler: Option<bool>,
}

/// What `encodeForModel` returns: the inputs of a model's session, as flat row-major typed arrays
/// of `dims[0]` rows by `dims[1]` tokens. Row `i` is input `i` (with `returnOverflowing`, the rows
/// of input `i` are the ones `overflowToSampleMapping` maps to `i`).
#[napi(object, object_from_js = false)]
pub struct ModelInputs {
    /// Token ids, the pad id where a row is padded.
    #[napi(ts_type = "BigInt64Array | Int32Array | Uint32Array")]
    pub input_ids: Either3<BigInt64Array, Int32Array, Uint32Array>,
    /// 1 for a token, 0 for padding.
    #[napi(ts_type = "BigInt64Array | Int32Array | Uint32Array")]
    pub attention_mask: Either3<BigInt64Array, Int32Array, Uint32Array>,
    /// The sequence each token belongs to as the template says (0 for the first text, 1 for the
    /// second of a pair in BERT's), the pad type id for padding.
    #[napi(ts_type = "BigInt64Array | Int32Array | Uint32Array")]
    pub token_type_ids: Either3<BigInt64Array, Int32Array, Uint32Array>,
    /// `[rows, sequence]`.
    pub dims: Vec<u32>,
    /// `returnOffsets`: `[start, end]` of each token, `2 * rows * sequence` numbers, in UTF-16
    /// code units of the token's own text, so `text.slice(start, end)` is the text it stands for:
    /// a pair's first-sequence tokens index the first text, its second-sequence tokens the second
    /// text. Template and pad tokens are `[0, 0]`.
    pub offsets: Option<Uint32Array>,
    /// `returnTokens`: each row's token strings, padding as the pad token.
    pub tokens: Option<Vec<Vec<String>>>,
    /// `returnWordIds`: each token's word index within its text, -1 for template and pad tokens.
    pub word_ids: Option<Int32Array>,
    /// `returnSequenceIds`: the text each token comes from, 0 for the first and 1 for the second
    /// of a pair (transformers' `sequence_ids()`), -1 for template and pad tokens.
    pub sequence_ids: Option<Int32Array>,
    /// `returnSpecialTokensMask`: 1 for template and pad tokens, 0 for the text's.
    pub special_tokens_mask: Option<Uint8Array>,
    /// `returnOverflowing`: the input each row comes from.
    pub overflow_to_sample_mapping: Option<Uint32Array>,
}

/// The model inputs of a call, in the dtype it asked for.
pub enum AnyModelInputs {
    Int64(EngineModelInputs<i64>),
    Int32(EngineModelInputs<i32>),
    Uint32(EngineModelInputs<u32>),
}

/// An `encodeForModel` call once its arguments are read.
pub struct ModelInputsCall {
    tokenizer: Arc<Tokenizer>,
    inputs: Inputs,
    options: RowOptions,
    padding: Option<Padding>,
    dtype: Dtype,
    runner: Runner,
    cancel: CancelToken,
    abort_listener: Option<AbortListener>,
}

impl ModelInputsCall {
    /// Reads the arguments of `method` (`encodeForModel`, async when `is_async`).
    pub fn read<'env>(
        env: &'env Env,
        tokenizer: &Arc<Tokenizer>,
        inputs: &Unknown<'env>,
        options: Option<Unknown<'env>>,
        method: &str,
        is_async: bool,
    ) -> napi::Result<ModelInputsCall> {
        if let Family::OpenAi(encoding) = tokenizer.family() {
            return Err(type_error(
                env,
                &format!(
                    "{method} applies to Hugging Face tokenizers; {} has no template, padding or \
                     type ids. Use encodeBatch for its ids",
                    encoding.name
                ),
            ));
        }
        let mut options = Options::read(env, options, method, super::options::Takes::ModelInputs)?;
        if !is_async {
            options.refuse_signal(env, method)?;
        }
        let own = options.model_inputs.clone().unwrap_or_default();
        let (texts, starts) = inputs_from_array(env, inputs, "inputs")?;
        let mode = options.mode(env, tokenizer)?;
        let engine_error = |e: engine::Error| from_engine(env, &e);
        let truncation = tokenizer.truncation_of(&mode);
        let padding = own.padding(tokenizer).map_err(engine_error)?;
        let runner = options.take_runner(env)?;
        let (cancel, abort_listener) = options.take_cancel(env)?;
        Ok(ModelInputsCall {
            tokenizer: tokenizer.clone(),
            inputs: Inputs::new(texts, starts),
            options: RowOptions {
                add_special_tokens: mode.adds_special_tokens(),
                split_special: mode.splits_special(),
                truncation,
                returns: own.returns,
            },
            padding,
            dtype: own.dtype,
            runner,
            cancel,
            abort_listener,
        })
    }

    /// Encodes and pads every input: the body of both methods.
    pub fn run(&self) -> TaskOutput<AnyModelInputs> {
        if self.cancel.is_cancelled() {
            return TaskOutput::Failed(Failure::Batch(BatchError::Cancelled));
        }
        let output = TaskOutput::of(|| match self.dtype {
            Dtype::Int64 => map_output(self.assemble(), AnyModelInputs::Int64),
            Dtype::Int32 => map_output(self.assemble(), AnyModelInputs::Int32),
            Dtype::Uint32 => map_output(self.assemble(), AnyModelInputs::Uint32),
        });
        if self.runner.release_memory {
            allocator::release_memory();
        }
        output
    }

    fn assemble<T: IdElement>(&self) -> TaskOutput<EngineModelInputs<T>> {
        let result = model_inputs_all(
            &self.runner.scheduler,
            &self.tokenizer,
            &self.inputs,
            &self.options,
            self.padding.as_ref(),
            &self.cancel,
        );
        match result {
            Ok(Ok(inputs)) => TaskOutput::Done(inputs),
            Ok(Err(refused)) => TaskOutput::Refused(refused),
            Err(failure) => TaskOutput::Failed(failure),
        }
    }

    /// The JS object of `output`, or the error to reject or throw with.
    pub fn settle(
        &self,
        env: &Env,
        output: TaskOutput<AnyModelInputs>,
    ) -> napi::Result<ModelInputs> {
        Ok(
            match output.into_result(env, self.abort_listener.as_ref())? {
                AnyModelInputs::Int64(inputs) => to_js(inputs, |cells| {
                    Either3::A(match cells {
                        IdArray::Written(cells) => BigInt64Array::new(cells),
                        IdArray::Zeros(zeros) => raw::bigint64_array(zeros),
                    })
                }),
                AnyModelInputs::Int32(inputs) => to_js(inputs, |cells| {
                    Either3::B(match cells {
                        IdArray::Written(cells) => Int32Array::new(cells),
                        IdArray::Zeros(zeros) => raw::int32_array(zeros),
                    })
                }),
                AnyModelInputs::Uint32(inputs) => to_js(inputs, |cells| {
                    Either3::C(match cells {
                        IdArray::Written(cells) => Uint32Array::new(cells),
                        IdArray::Zeros(zeros) => raw::uint32_array(zeros),
                    })
                }),
            },
        )
    }
}

/// `output`'s value passed through `f`.
fn map_output<T, U>(output: TaskOutput<T>, f: impl FnOnce(T) -> U) -> TaskOutput<U> {
    match output {
        TaskOutput::Done(value) => TaskOutput::Done(f(value)),
        TaskOutput::Failed(failure) => TaskOutput::Failed(failure),
        TaskOutput::Refused(error) => TaskOutput::Refused(error),
        TaskOutput::Panicked(message) => TaskOutput::Panicked(message),
    }
}

/// The JS object of `inputs`, its id arrays made by `array`.
fn to_js<T>(
    inputs: EngineModelInputs<T>,
    array: impl Fn(IdArray<T>) -> Either3<BigInt64Array, Int32Array, Uint32Array>,
) -> ModelInputs {
    ModelInputs {
        input_ids: array(IdArray::Written(inputs.input_ids)),
        attention_mask: array(IdArray::Written(inputs.attention_mask)),
        token_type_ids: array(inputs.token_type_ids),
        dims: vec![inputs.rows as u32, inputs.sequence as u32],
        offsets: inputs.offsets.map(Uint32Array::new),
        tokens: inputs.tokens,
        word_ids: inputs.word_ids.map(Int32Array::new),
        sequence_ids: inputs.sequence_ids.map(Int32Array::new),
        special_tokens_mask: inputs.special_tokens_mask.map(Uint8Array::new),
        overflow_to_sample_mapping: inputs.overflow_to_sample.map(Uint32Array::new),
    }
}

/// `encodeForModel`'s async work.
pub struct ModelInputsTask(pub ModelInputsCall);

impl Task for ModelInputsTask {
    type Output = TaskOutput<AnyModelInputs>;
    type JsValue = ModelInputs;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(self.0.run())
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<Self::JsValue> {
        self.0.settle(&env, output)
    }
}
