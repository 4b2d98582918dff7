//! A benchmark hook: where one `encodeBatch` call's time goes, measured inside the addon.
//!
//! Compiled only with the `testing` cargo feature (`npm run build:testing`), exported as
//! `__profileBoundary` and left out of `index.d.ts`; `benchmark/boundary.mjs` sets its
//! figures beside the end-to-end time of the public methods on the same texts.

use std::time::Instant;

use napi::Env;
use napi::bindgen_prelude::{JsObjectValue, Object, Unknown};
use napi_derive::napi;

use super::batch_encoding::BatchEncoding;
use super::errors::from_engine;
use super::options::{Options, Takes};
use super::scheduler::default_runner;
use super::tasks::TaskOutput;
use super::texts::texts_from_array;
use super::tokenizer::Tokenizer;
use crate::batch;
use crate::engine::{AllowedSpecial, Family, Ids, Scratch};
use crate::scheduler::CancelToken;

fn millis(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}

/// Benchmark hook: runs the parts of `encodeBatchSync(texts, options)` one after another and
/// times each, plus the engine alone over the same texts. Returns, in milliseconds:
/// - `convertMs` (main thread): the JS strings copied into one UTF-8 buffer;
/// - `engineLoopMs`: the engine's own `encode_into` over the texts on one thread (its per-call
///   working memory, as `PipelineTokenizer::encode_into` has it), collecting every id: the
///   engine alone, the reference a batch is held against;
/// - `scheduledMs`: the batch on the scheduler, ids assembled in input order (no JS);
/// - `resultMs` (main thread): the result handed to JS as a `BatchEncoding`;
///
/// and `bytes` (the texts' UTF-8) and `ids` (ids produced).
#[napi(js_name = "__profileBoundary", skip_typescript)]
pub fn profile_boundary<'env>(
    env: &'env Env,
    tokenizer: &Tokenizer,
    texts: Unknown,
    options: Option<Unknown>,
) -> napi::Result<Object<'env>> {
    let options = Options::read(env, options, "__profileBoundary", Takes::Batch)?;
    let env = *env;
    let tokenizer = &tokenizer.tokenizer;
    let runner = match options.scheduler {
        Some(runner) => runner,
        None => default_runner(&env)?,
    };
    let started = Instant::now();
    let texts = texts_from_array(&env, &texts, "texts")?;
    let convert_ms = millis(started);

    // As `encodeBatch` calls it by default: Hugging Face template tokens on.
    let add_special_tokens = matches!(tokenizer.family(), Family::HuggingFace);
    let engine = tokenizer.main_engine();
    let started = Instant::now();
    let mut ids = Ids::with_capacity(0);
    let mut counts = Vec::with_capacity(texts.len());
    for index in 0..texts.len() {
        let before = ids.len();
        engine
            .encode_into(
                texts.get(index),
                add_special_tokens,
                true,
                &mut Scratch::engine_pool(),
                &mut ids,
            )
            .map_err(|e| from_engine(&env, &e))?;
        counts.push((ids.len() - before) as u32);
    }
    let engine_loop_ms = millis(started);
    drop((ids, counts));

    let mode = tokenizer
        .encode_mode(None, &AllowedSpecial::None)
        .map_err(|e| from_engine(&env, &e))?;
    let started = Instant::now();
    let encoded = TaskOutput::from(batch::encode_all(
        &runner.scheduler,
        tokenizer,
        &texts,
        &mode,
        &CancelToken::default(),
    ))
    .into_result(&env, None)?;
    let scheduled_ms = millis(started);
    let produced = encoded.ids.len();

    let started = Instant::now();
    let result = BatchEncoding::new(&env, encoded)?;
    let result_ms = millis(started);
    drop(result);

    let mut profile = Object::new(&env)?;
    for (name, value) in [
        ("convertMs", convert_ms),
        ("engineLoopMs", engine_loop_ms),
        ("scheduledMs", scheduled_ms),
        ("resultMs", result_ms),
        ("bytes", texts.total_bytes() as f64),
        ("ids", produced as f64),
    ] {
        profile.set_named_property(name, value)?;
    }
    Ok(profile)
}
