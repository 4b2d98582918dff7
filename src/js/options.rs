//! The options objects of the JS API.
//!
//! The `#[napi(object)]` structs give `index.d.ts` its documented types; every method reads its
//! options by hand into one [`Options`], with the readers of `args.rs` and the list of keys it
//! takes, so that each error names the option at fault and says what it accepts, and a key the
//! method does not take is refused rather than ignored.

use napi::bindgen_prelude::{JsValue, Unknown};
use napi::{Env, ValueType};
use napi_derive::napi;

use super::args::{
    bool_option, choice, choice_option, describe, options_object, property, string, whole_number,
};
use super::errors::{from_engine, range_error, type_error};
use super::model_input_options::{MODEL_INPUT_KEYS, ModelInputOptions, side};
use super::raw;
use super::scheduler::{Runner, Scheduler as JsScheduler, default_runner};
use super::signal::{AbortListener, Signal};
use crate::engine::{AllowedSpecial, EncodeMode, Tokenizer, TruncationRequest, TruncationStrategy};
use crate::scheduler::CancelToken;

/// Options of `encode`, `count` and `isWithinTokenLimit`.
#[napi(object, object_to_js = false, object_from_js = false)]
#[expect(
    dead_code,
    reason = "index.d.ts's type; `Options::read` reads the options by hand"
)]
pub struct EncodeOptions {
    /// Hugging Face tokenizers: add the post-processor's template tokens (`[CLS]` … `[SEP]`,
    /// `<s>` … `</s>`) around each text, as `tokenizers` does by default.
    /// @default true
    pub add_special_tokens: Option<bool>,
    /// Hugging Face tokenizers: encode the text of added special tokens (`[SEP]`,
    /// `<|im_end|>`) as ordinary text rather than as their ids, as Python `tokenizers` does with
    /// `encode_special_tokens = True`.
    /// @default false
    pub encode_special_tokens: Option<bool>,
    /// OpenAI encodings: the special tokens whose text becomes their id, `'all'` or a list. Any
    /// other special-token text is encoded as ordinary text (tiktoken's `encode_ordinary`), so
    /// no text makes a call fail.
    /// @default none
    #[napi(ts_type = "'all' | readonly string[]")]
    pub allowed_special: Option<AllowedSpecial>,
    /// OpenAI encodings: special tokens whose text makes a text fail, as tiktoken's
    /// `disallowed_special` does: `'all'` (every special token not in `allowedSpecial`) or a
    /// list. The error names the token, the text and the index where the token starts.
    /// @default none
    #[napi(ts_type = "'all' | readonly string[]")]
    pub disallowed_special: Option<AllowedSpecial>,
    /// Hugging Face tokenizers: `false` (no truncation), `true` (the file's truncation, else the
    /// model's `model_max_length`) or `{ maxLength, strategy, stride, direction }` (what is unset
    /// comes from the file's truncation). `encode` applies the file's truncation by default, as
    /// Python `tokenizers` does; `count` and `isWithinTokenLimit` apply none by default, so a
    /// count is the text's true size. An OpenAI encoding has no truncation: use `truncate`.
    /// @default the file's truncation for encode, none for count and isWithinTokenLimit
    #[napi(ts_type = "boolean | TruncationOptions")]
    pub truncation: Option<bool>,
    /// The text is the part of a longer text from a place `lastSafeCut` found (asked with
    /// `afterCut: true`): it is encoded so that its ids follow those of the text before that
    /// place. Under a tokenizer.json that writes each space as `▁` and puts one before each text
    /// (Llama 2's shape), that leaves out the space the text begins at; under every other
    /// tokenizer, the text is encoded as it is.
    /// @default false
    pub after_cut: Option<bool>,
}

/// Options of `encodeBatch`, `countBatch`, the UTF-8 batch methods and their `Sync` forms.
#[napi(object, object_to_js = false, object_from_js = false)]
#[expect(
    dead_code,
    reason = "index.d.ts's type; `Options::read` reads the options by hand"
)]
pub struct BatchOptions {
    /// As in `EncodeOptions`.
    /// @default true
    pub add_special_tokens: Option<bool>,
    /// As in `EncodeOptions`.
    /// @default false
    pub encode_special_tokens: Option<bool>,
    /// As in `EncodeOptions`.
    /// @default none
    #[napi(ts_type = "'all' | readonly string[]")]
    pub allowed_special: Option<AllowedSpecial>,
    /// As in `EncodeOptions`; a text that holds one fails the batch, naming the text.
    /// @default none
    #[napi(ts_type = "'all' | readonly string[]")]
    pub disallowed_special: Option<AllowedSpecial>,
    /// As in `EncodeOptions`: the encode methods apply the file's truncation by default, the
    /// count methods none.
    /// @default the file's truncation for the encode methods, none for the count methods
    #[napi(ts_type = "boolean | TruncationOptions")]
    pub truncation: Option<bool>,
    /// As in `EncodeOptions`, for the batch's first text (`encodeLines`: its first document):
    /// the batch goes on a text that the batch before ended inside, at a place `lastSafeCut`
    /// found.
    /// @default false
    pub after_cut: Option<bool>,
    /// Aborts the batch: the promise rejects with an `AbortError` (its `cause` the signal's
    /// `reason`) within about one chunk's time. (Async methods only.)
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<bool>,
    /// The scheduler that runs this batch.
    /// @default the process-wide default scheduler (`Scheduler.getDefault()`)
    #[napi(ts_type = "Scheduler")]
    pub scheduler: Option<bool>,
}

/// The truncation of a Hugging Face tokenizer, as Python `tokenizers`' `enable_truncation` takes
/// it; what is unset comes from the file's truncation section.
#[napi(object, object_to_js = false, object_from_js = false)]
#[expect(
    dead_code,
    reason = "index.d.ts's type; `Options::read` reads the options by hand"
)]
pub struct TruncationOptions {
    /// The most tokens a text (or pair) keeps, the template's tokens included.
    /// @default the file's, else encodeForModel's maxLength, else the model's model_max_length
    pub max_length: Option<u32>,
    /// Which text of a pair loses tokens: `'longestFirst'` (the longer, a token at a time),
    /// `'onlyFirst'` or `'onlySecond'` (a single text that needs cutting is then an error).
    /// @default 'longestFirst'
    #[napi(ts_type = "'longestFirst' | 'onlyFirst' | 'onlySecond'")]
    pub strategy: Option<String>,
    /// Tokens each overflowing window repeats from the one before it (`encodeForModel` with
    /// `returnOverflowing`).
    /// @default 0
    pub stride: Option<u32>,
    /// Which end is cut.
    /// @default 'right'
    #[napi(ts_type = "'right' | 'left'")]
    pub direction: Option<String>,
}

/// Options of `truncate`: those of `encode`, and which end is kept.
#[napi(object, object_to_js = false, object_from_js = false)]
#[expect(
    dead_code,
    reason = "index.d.ts's type; `Options::read` reads the options by hand"
)]
pub struct TruncateOptions {
    /// `'end'` keeps the start of the text (cuts at its end); `'start'` keeps its end.
    /// @default 'end'
    #[napi(ts_type = "'end' | 'start'")]
    pub from: Option<String>,
    /// As in `EncodeOptions`.
    /// @default true
    pub add_special_tokens: Option<bool>,
    /// As in `EncodeOptions`.
    /// @default false
    pub encode_special_tokens: Option<bool>,
    /// As in `EncodeOptions`.
    /// @default none
    #[napi(ts_type = "'all' | readonly string[]")]
    pub allowed_special: Option<AllowedSpecial>,
}

/// Options of `decode`, `decodeBytes`, `decoder`, `decodeBatch` and `decodeBatchSync`.
#[napi(object, object_to_js = false, object_from_js = false)]
#[expect(
    dead_code,
    reason = "index.d.ts's type; `Options::read` reads the options by hand"
)]
pub struct DecodeOptions {
    /// Leave special tokens out of the text.
    /// @default false
    pub skip_special_tokens: Option<bool>,
    /// `decode` and `decodeBatch`: take out the spaces before punctuation and contractions
    /// (`" ."`, `" ,"`, `" n't"`, `" 's"`, …) as transformers' and transformers.js's `decode` do
    /// where the model's tokenizer_config sets `clean_up_tokenization_spaces` (Llama 3's does).
    /// @default false, as the `tokenizers` library
    pub clean_up_tokenization_spaces: Option<bool>,
    /// Aborts `decodeBatch`: the promise rejects with an `AbortError`. (Async method only.)
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<bool>,
}

/// One message of a conversation, as `encodeChat` and `countChat` take it (other keys, such as an
/// API client's, are ignored).
#[napi(object, object_to_js = false, object_from_js = false)]
#[expect(
    dead_code,
    reason = "index.d.ts's type; `args::chat_messages` reads messages by hand"
)]
pub struct ChatMessage {
    /// Who speaks: `'system'`, `'user'`, `'assistant'`, `'developer'`, `'tool'`…
    pub role: Option<String>,
    /// The speaker's name.
    pub name: Option<String>,
    /// What is said.
    pub content: String,
    /// Harmony (gpt-oss): the channel, such as `'analysis'`, `'commentary'` or `'final'`.
    pub channel: Option<String>,
    /// Harmony: who the message is for, such as `'functions.get_weather'`.
    pub recipient: Option<String>,
    /// Harmony: where the recipient is written.
    /// @default 'channel' (after the role when the message has no channel)
    #[napi(ts_type = "'role' | 'channel'")]
    pub recipient_placement: Option<String>,
    /// Harmony: the constraint on the content, such as `'json'`.
    pub constraint: Option<String>,
    /// Harmony: the token that ends the message.
    /// @default '<|end|>'
    #[napi(ts_type = "'<|end|>' | '<|return|>' | '<|call|>'")]
    pub terminator: Option<String>,
}

/// Options of `encodeChat` and `countChat`.
#[napi(object, object_to_js = false, object_from_js = false)]
#[expect(
    dead_code,
    reason = "index.d.ts's type; `Options::read` reads the options by hand"
)]
pub struct ChatOptions {
    /// The model whose chat layout and accounting apply (`'gpt-4o'`).
    /// @default the model the tokenizer was made for (`Tokenizer.fromModel`)
    pub model: Option<String>,
}

/// The keys of the options that choose how texts are encoded.
const MODE_KEYS: [&str; 4] = [
    "addSpecialTokens",
    "encodeSpecialTokens",
    "allowedSpecial",
    "disallowedSpecial",
];

/// Which options a method takes.
#[derive(Clone, Copy)]
pub enum Takes {
    /// `encode`, `count`, `isWithinTokenLimit`.
    Encode,
    /// The batch methods.
    Batch,
    /// `truncate`.
    Truncate,
    /// `decodeBytes` and `decoder`.
    Decode,
    /// `decode`, `decodeBatch` and `decodeBatchSync`, whose text can be cleaned up.
    DecodeText,
    /// `encodeChat`, `countChat`.
    Chat,
    /// `encodeForModel`, `encodeForModelSync`.
    ModelInputs,
}

impl Takes {
    fn keys(self) -> Vec<&'static str> {
        let mut keys = match self {
            Takes::Encode | Takes::Batch => [&MODE_KEYS[..], &["truncation", "afterCut"]].concat(),
            Takes::Truncate => [&["from"][..], &MODE_KEYS[..3]].concat(),
            Takes::Decode => vec!["skipSpecialTokens", "signal"],
            Takes::DecodeText => vec!["skipSpecialTokens", "cleanUpTokenizationSpaces", "signal"],
            Takes::Chat => vec!["model"],
            Takes::ModelInputs => {
                [&MODE_KEYS[..2], &["truncation"], &MODEL_INPUT_KEYS[..]].concat()
            }
        };
        if let Takes::Batch | Takes::ModelInputs = self {
            keys.extend(["signal", "scheduler"]);
        }
        keys
    }
}

/// A method's options as read: `None` where unset (or the method does not take the option).
#[derive(Default)]
pub struct Options<'env> {
    pub add_special_tokens: Option<bool>,
    pub encode_special_tokens: Option<bool>,
    pub allowed_special: Option<AllowedSpecial>,
    pub disallowed_special: Option<AllowedSpecial>,
    pub signal: Option<Signal<'env>>,
    pub scheduler: Option<Runner>,
    /// `truncate`: keep the end of the text (`from: 'start'`).
    pub from_start: bool,
    pub skip_special_tokens: Option<bool>,
    pub clean_up_tokenization_spaces: Option<bool>,
    pub model: Option<String>,
    /// `truncation`, where the method takes it.
    pub truncation: Option<TruncationRequest>,
    /// The method counts tokens: no truncation unless asked for.
    pub counts: bool,
    /// `encodeForModel`'s own options.
    pub model_inputs: Option<ModelInputOptions>,
    /// The (first) text goes on a longer one from a cut (`afterCut`).
    pub after_cut: bool,
}

impl<'env> Options<'env> {
    /// The scheduler a call runs on: the options' own, else the default one.
    pub fn take_runner(&mut self, env: &Env) -> napi::Result<Runner> {
        match self.scheduler.take() {
            Some(runner) => Ok(runner),
            None => default_runner(env),
        }
    }

    /// A call's cancel token, and the listener that sets it once the options' signal aborts: the
    /// call keeps the listener for as long as it runs.
    ///
    /// The signal reaches the task only through the token, which batchtok's own listener sets
    /// (`signal.rs`), not as napi-rs's task signal: napi-rs rejects a task aborted while still
    /// queued itself, with an error of its own (`code: 'Cancelled'`); through the token every
    /// abort rejects with batchtok's `AbortError`, before the first chunk when the task had not
    /// started.
    pub fn take_cancel(&mut self, env: &Env) -> napi::Result<(CancelToken, Option<AbortListener>)> {
        let cancel = CancelToken::default();
        let listener = match self.signal.take() {
            Some(signal) => Some(signal.listen(env, &cancel)?),
            None => None,
        };
        Ok((cancel, listener))
    }

    /// Reads the options argument of `method`, which takes the options `takes` names.
    pub fn read(
        env: &'env Env,
        value: Option<Unknown<'env>>,
        method: &str,
        takes: Takes,
    ) -> napi::Result<Options<'env>> {
        let keys = takes.keys();
        let counts =
            method.starts_with("count") || method == "isWithinTokenLimit" || method == "truncate";
        let Some(object) = options_object(env, value, method, &keys)? else {
            return Ok(Options {
                counts,
                model_inputs: matches!(takes, Takes::ModelInputs).then(ModelInputOptions::default),
                ..Options::default()
            });
        };
        let has = |key: &str| keys.contains(&key);
        let mut options = Options {
            counts,
            ..Options::default()
        };
        if has("truncation") {
            options.truncation = truncation_option(env, &object)?;
        }
        if let Takes::ModelInputs = takes {
            options.model_inputs = Some(ModelInputOptions::read(env, &object)?);
        }
        if has("addSpecialTokens") {
            options.add_special_tokens = bool_option(env, &object, c"addSpecialTokens")?;
            options.encode_special_tokens = bool_option(env, &object, c"encodeSpecialTokens")?;
            options.allowed_special = special_list_option(env, &object, c"allowedSpecial")?;
        }
        if has("afterCut") {
            options.after_cut = bool_option(env, &object, c"afterCut")?.unwrap_or(false);
        }
        if has("disallowedSpecial") {
            options.disallowed_special = special_list_option(env, &object, c"disallowedSpecial")?;
        }
        if has("signal") {
            options.signal = signal_option(env, &object)?;
        }
        if has("scheduler") {
            options.scheduler = scheduler_option(env, &object)?;
        }
        if has("from") {
            options.from_start =
                choice_option(env, &object, c"from", &["end", "start"])? == Some("start");
        }
        if has("skipSpecialTokens") {
            options.skip_special_tokens = bool_option(env, &object, c"skipSpecialTokens")?;
        }
        if has("cleanUpTokenizationSpaces") {
            options.clean_up_tokenization_spaces =
                bool_option(env, &object, c"cleanUpTokenizationSpaces")?;
        }
        if has("model") {
            options.model = property(env, &object, c"model")?
                .map(|value| string(env, &value, "options.model"))
                .transpose()?;
        }
        Ok(options)
    }

    /// How `tokenizer` encodes under these options; an option that does not apply to it is a
    /// `TypeError` saying which does.
    pub fn mode(&mut self, env: &Env, tokenizer: &Tokenizer) -> napi::Result<EncodeMode> {
        let allowed = self.allowed_special.take().unwrap_or_default();
        let disallowed = self.disallowed_special.take().unwrap_or_default();
        let engine_error = |e| from_engine(env, &e);
        let mode = tokenizer
            .encode_mode(self.add_special_tokens, &allowed)
            .map_err(engine_error)?;
        let max_length = self
            .model_inputs
            .as_ref()
            .and_then(|options| options.max_length);
        let truncation = tokenizer
            .resolve_truncation(
                &self.truncation.take().unwrap_or_default(),
                self.counts,
                max_length,
            )
            .map_err(engine_error)?;
        let disallowed = tokenizer
            .disallowed_special(&allowed, &disallowed)
            .map_err(engine_error)?;
        let ordinary = self.encode_special_tokens.unwrap_or(false);
        if ordinary && !matches!(tokenizer.family(), crate::engine::Family::HuggingFace) {
            return Err(type_error(
                env,
                "encodeSpecialTokens applies to Hugging Face tokenizers; an OpenAI encoding \
                 encodes special-token text as ordinary text unless allowedSpecial names it",
            ));
        }
        Ok(mode
            .with_special_text_as_ordinary(ordinary)
            .with_disallowed_special(disallowed)
            .with_truncation(truncation))
    }

    /// A `TypeError` if these options hold a signal, for the method `method` that blocks until it
    /// returns.
    pub fn refuse_signal(&self, env: &Env, method: &str) -> napi::Result<()> {
        if self.signal.is_some() {
            return Err(type_error(
                env,
                &format!("options.signal needs the async method; {method} blocks until it returns"),
            ));
        }
        Ok(())
    }
}

/// `allowedSpecial` or `disallowedSpecial`: `'all'` or a list of special-token strings.
fn special_list_option(
    env: &Env,
    object: &Unknown,
    key: &std::ffi::CStr,
) -> napi::Result<Option<AllowedSpecial>> {
    let Some(value) = property(env, object, key)? else {
        return Ok(None);
    };
    let name = super::args::option_name(key);
    let expected = "expected 'all' or an array of special-token strings such as ['<|endoftext|>']";
    match value.get_type()? {
        ValueType::String => {
            let text = raw::string(env, &value)?;
            if text == "all" {
                Ok(Some(AllowedSpecial::All))
            } else {
                Err(range_error(env, &format!("{name} is {text:?}; {expected}")))
            }
        }
        ValueType::Object if value.is_array()? => {
            let items = raw::elements(env, &value)?;
            let mut names = Vec::with_capacity(items.len());
            for (index, item) in items.iter().enumerate() {
                if item.get_type()? != ValueType::String {
                    return Err(type_error(
                        env,
                        &format!("{name}[{index}] is {}; {expected}", describe(item)),
                    ));
                }
                names.push(raw::string(env, item)?);
            }
            Ok(Some(AllowedSpecial::Only(names)))
        }
        _ => Err(type_error(
            env,
            &format!("{name} is {}; {expected}", describe(&value)),
        )),
    }
}

/// The keys of a `truncation` object.
const TRUNCATION_KEYS: [&str; 4] = ["maxLength", "strategy", "stride", "direction"];

/// `truncation`: `false`, `true`, or `{ maxLength, strategy, stride, direction }`.
fn truncation_option(env: &Env, object: &Unknown) -> napi::Result<Option<TruncationRequest>> {
    let Some(value) = property(env, object, c"truncation")? else {
        return Ok(None);
    };
    let expected = "expected true, false or { maxLength, strategy, stride, direction }";
    match value.get_type()? {
        ValueType::Boolean => Ok(Some(if raw::boolean(env, &value)? {
            TruncationRequest::On {
                max_length: None,
                strategy: None,
                stride: None,
                direction: None,
            }
        } else {
            TruncationRequest::Off
        })),
        ValueType::Object if !value.is_array()? => {
            let object = options_object(env, Some(value), "truncation", &TRUNCATION_KEYS)?
                .expect("an object");
            let field = |key: &std::ffi::CStr| property(env, &object, key);
            let max_length = field(c"maxLength")?
                .map(|v| whole_number(env, &v, "options.truncation.maxLength", 1, u32::MAX))
                .transpose()?;
            let stride = field(c"stride")?
                .map(|v| whole_number(env, &v, "options.truncation.stride", 0, u32::MAX))
                .transpose()?;
            let strategy = field(c"strategy")?
                .map(|v| {
                    choice(
                        env,
                        &v,
                        "options.truncation.strategy",
                        &["longestFirst", "onlyFirst", "onlySecond"],
                    )
                })
                .transpose()?
                .map(|strategy| match strategy {
                    "onlyFirst" => TruncationStrategy::OnlyFirst,
                    "onlySecond" => TruncationStrategy::OnlySecond,
                    _ => TruncationStrategy::LongestFirst,
                });
            let direction = field(c"direction")?
                .map(|v| choice(env, &v, "options.truncation.direction", &["right", "left"]))
                .transpose()?
                .map(side);
            Ok(Some(TruncationRequest::On {
                max_length: max_length.map(|n| n as usize),
                strategy,
                stride: stride.map(|n| n as usize),
                direction,
            }))
        }
        _ => Err(type_error(
            env,
            &format!("options.truncation is {}; {expected}", describe(&value)),
        )),
    }
}

pub(super) fn signal_option<'env>(
    env: &'env Env,
    object: &Unknown<'env>,
) -> napi::Result<Option<Signal<'env>>> {
    let Some(value) = property(env, object, c"signal")? else {
        return Ok(None);
    };
    let is_signal = value.get_type()? == ValueType::Object
        && raw::global(env, c"AbortSignal")
            .and_then(|constructor| raw::instance_of(env, &value, &constructor))
            .unwrap_or(false);
    if !is_signal {
        return Err(type_error(
            env,
            &format!(
                "options.signal is {}; expected an AbortSignal (new AbortController().signal)",
                describe(&value)
            ),
        ));
    }
    Ok(Some(Signal::new(value)))
}

pub(super) fn scheduler_option(env: &Env, object: &Unknown) -> napi::Result<Option<Runner>> {
    let Some(value) = property(env, object, c"scheduler")? else {
        return Ok(None);
    };
    let scheduler = (value.get_type()? == ValueType::Object)
        .then(|| raw::class_instance::<JsScheduler>(env, &value))
        .flatten();
    match scheduler {
        Some(scheduler) => Ok(Some(scheduler.runner().clone())),
        None => Err(type_error(
            env,
            &format!(
                "options.scheduler is {}; expected a Scheduler (new Scheduler({{ threads, policy }}))",
                describe(&value)
            ),
        )),
    }
}
