//! The JS `Tokenizer`'s vocabulary: sizes, tokens and ids both ways, the whole vocabulary and the
//! added tokens, as Python `tokenizers` answers for a tokenizer.json and tiktoken for an OpenAI
//! encoding (`engine::vocabulary` has the answers; this file converts them).

use std::fmt::Write;
use std::sync::Arc;

use napi::Env;
use napi::bindgen_prelude::{Function, JsObjectValue, Object, Uint8Array, Unknown};
use napi_derive::napi;

use super::args::{new_token_list, special_option, string, whole_number};
use super::errors::from_engine;
use super::tokenizer::Tokenizer;

/// An added token of a Hugging Face tokenizer, or a special token of an OpenAI encoding.
#[napi(object)]
pub struct AddedToken {
    /// Its text.
    pub content: String,
    /// Its id.
    pub id: u32,
    /// Whether it is special (left out by `decode` with `skipSpecialTokens`).
    pub special: bool,
}

/// A JS object with a property per `(key, value)`, made by `JSON.parse` of one JSON text: V8
/// builds a large object that way several times faster than one Node-API call per property (a
/// vocabulary has 30k to 250k tokens), and a key such as `__proto__` becomes an own property, as
/// in a Python dict, where setting it would change the object's prototype instead.
fn object_from_entries<'env>(
    env: &'env Env,
    entries: Vec<(String, u32)>,
) -> napi::Result<Object<'env>> {
    let mut text = String::with_capacity(entries.iter().map(|(key, _)| key.len() + 16).sum());
    text.push('{');
    for (index, (key, value)) in entries.iter().enumerate() {
        if index > 0 {
            text.push(',');
        }
        let quoted = serde_json::to_string(key).expect("a string serializes");
        text.push_str(&quoted);
        // Writing to a `String` cannot fail.
        let _ = write!(text, ":{value}");
    }
    text.push('}');
    let json: Object = env.get_global()?.get_named_property_unchecked("JSON")?;
    let parse: Function<String, Object<'env>> = json.get_named_property_unchecked("parse")?;
    parse.call(text)
}

#[napi]
impl Tokenizer {
    /// How many tokens the vocabulary has, added tokens included: Python `tokenizers`'
    /// `get_vocab_size(with_added_tokens=True)`; for an OpenAI encoding its ordinary and special
    /// tokens. Less than `idLimit` where ids have gaps.
    #[napi(getter)]
    pub fn vocab_size(&self) -> u32 {
        u32::try_from(self.tokenizer.vocabulary_size()).unwrap_or(u32::MAX)
    }

    /// One more than the largest id: every id is below it (tiktoken's `n_vocab`; `decode` accepts
    /// ids below it that a token has).
    #[napi(getter)]
    pub fn id_limit(&self) -> u32 {
        self.tokenizer.id_limit()
    }

    /// The id of a token, or `null` where there is none (an OpenAI encoding looks `token` up by
    /// its UTF-8 bytes, then among its special tokens, as tiktoken's `encode_single_token`).
    #[napi(catch_unwind, ts_args_type = "token: string")]
    pub fn token_to_id(&self, env: Env, token: Unknown) -> napi::Result<Option<u32>> {
        let token = string(&env, &token, "token")?;
        self.tokenizer
            .token_to_id(&token)
            .map_err(|e| from_engine(&env, &e))
    }

    /// The token of an id, or `null` where no token has it, or (OpenAI encodings) where the
    /// token's bytes are not UTF-8 on their own: `tokenBytes` has those.
    #[napi(catch_unwind, ts_args_type = "id: number")]
    pub fn id_to_token(&self, env: Env, id: Unknown) -> napi::Result<Option<String>> {
        let id = whole_number(&env, &id, "id", 0, u32::MAX)?;
        self.tokenizer
            .id_to_token(id)
            .map_err(|e| from_engine(&env, &e))
    }

    /// The bytes of the token `id` (tiktoken's `decode_single_token_bytes`; for a Hugging Face
    /// tokenizer the UTF-8 of the token as its vocabulary spells it), or `null` where no token
    /// has that id.
    #[napi(catch_unwind, ts_args_type = "id: number")]
    pub fn token_bytes(&self, env: Env, id: Unknown) -> napi::Result<Option<Uint8Array>> {
        let id = whole_number(&env, &id, "id", 0, u32::MAX)?;
        let bytes = self
            .tokenizer
            .bytes_of_token(id)
            .map_err(|e| from_engine(&env, &e))?;
        Ok(bytes.map(Uint8Array::new))
    }

    /// Every token and its id, added tokens included unless `withAddedTokens` is false (Python's
    /// `get_vocab`). An OpenAI encoding lists the tokens whose bytes are UTF-8, and its special
    /// tokens as its added tokens.
    #[napi(
        catch_unwind,
        ts_args_type = "withAddedTokens?: boolean",
        ts_return_type = "Record<string, number>"
    )]
    pub fn get_vocab<'env>(
        &self,
        env: &'env Env,
        with_added_tokens: Option<bool>,
    ) -> napi::Result<Object<'env>> {
        let vocabulary = self
            .tokenizer
            .vocabulary(with_added_tokens.unwrap_or(true))
            .map_err(|e| from_engine(env, &e))?;
        object_from_entries(env, vocabulary)
    }

    /// A new tokenizer with `tokens` added, as Python `tokenizers`' `add_tokens` adds them, or
    /// with `options.special`, `add_special_tokens` (special tokens match in the raw text and
    /// are left out by `skipSpecialTokens`). A token is its text, or `{ content, singleWord?,
    /// lstrip?, rstrip?, normalized? }` as Python's `AddedToken` takes them (a whole word only;
    /// taking the white space on its left or right; matching the normalized text, by default for
    /// plain tokens and not for special ones). Each new token takes the next id after the vocabulary
    /// and the added tokens; a token the tokenizer already has is left as it is. This tokenizer is
    /// unchanged. Builds the tokenizer anew, as `fromJSON` does: a fraction of a second for a
    /// large vocabulary. An OpenAI encoding takes special tokens with `fromEncoding`'s
    /// `specialTokens` instead (a `TypeError` says so).
    #[napi(
        catch_unwind,
        ts_args_type = "tokens: ReadonlyArray<string | { content: string; singleWord?: boolean; lstrip?: boolean; rstrip?: boolean; normalized?: boolean }>, options?: { special?: boolean }"
    )]
    pub fn with_added_tokens(
        &self,
        env: Env,
        tokens: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<Tokenizer> {
        let tokens = new_token_list(&env, &tokens, "tokens")?;
        let special = special_option(&env, options)?;
        let tokenizer = self
            .tokenizer
            .with_added_tokens(&tokens, special)
            .map_err(|e| from_engine(&env, &e))?;
        Ok(Tokenizer::new(Arc::new(tokenizer)))
    }

    /// The added tokens, by id: `{ content, id, special }` (an OpenAI encoding's special tokens).
    #[napi(getter, catch_unwind)]
    pub fn added_tokens(&self, env: Env) -> napi::Result<Vec<AddedToken>> {
        let tokens = self
            .tokenizer
            .added_tokens()
            .map_err(|e| from_engine(&env, &e))?;
        Ok(tokens
            .into_iter()
            .map(|token| AddedToken {
                content: token.content,
                id: token.id,
                special: token.special,
            })
            .collect())
    }
}
