//! The module functions that name encodings and models.

use napi::Env;
use napi::bindgen_prelude::Unknown;
use napi_derive::napi;
use std::collections::HashMap;

use super::args::string;
use super::errors::from_engine;
use crate::engine::{self, openai};

/// The name of the encoding an OpenAI model uses, as Python tiktoken's `encoding_name_for_model`
/// answers: exact names first, then prefixes (`'gpt-4o-2024-08-06'` → `'o200k_base'`); beyond
/// tiktoken's tables, as gpt-tokenizer's module for the model (`'gpt-audio'`). An unknown model
/// throws an `Error` that says how to name an encoding instead.
#[napi(catch_unwind, ts_args_type = "model: string")]
pub fn encoding_for_model(env: Env, model: Unknown) -> napi::Result<String> {
    let model = string(&env, &model, "model")?;
    engine::encoding_for_model(&model)
        .map(str::to_owned)
        .map_err(|e| from_engine(&env, &e))
}

/// The names `Tokenizer.fromEncoding` takes: every embedded encoding and its aliases.
#[napi]
pub fn encodings() -> Vec<&'static str> {
    openai::ENCODINGS
        .iter()
        .flat_map(|encoding| std::iter::once(encoding.name).chain(encoding.aliases.iter().copied()))
        .collect()
}

/// Every exact model name and its encoding: tiktoken's table, and the models gpt-tokenizer has a
/// module for beyond it (prefixed names, dated versions and fine-tunes resolve through
/// `encodingForModel`). Each has its `batchtok/model/<name>`.
#[napi]
pub fn model_encodings() -> HashMap<&'static str, &'static str> {
    engine::model_encodings()
}
