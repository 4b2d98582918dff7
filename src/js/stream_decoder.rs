//! The JS `StreamDecoder` class: ids in as a model produces them, whole characters out.

use std::sync::Arc;

use napi::Env;
use napi::bindgen_prelude::Unknown;
use napi_derive::napi;

use super::args::u32_list;
use super::errors::{ErrorClass, from_engine, js_error};
use crate::engine::{self, Tokenizer};

/// Decodes ids as they arrive: `write(ids)` returns the text they settle (possibly `''`, never
/// part of a character), `end()` the rest; the pieces joined equal `tokenizer.decode` of all the
/// ids. Made by `tokenizer.decoder()`.
#[napi]
pub struct StreamDecoder {
    /// `None` once `end` has been called.
    decoder: Option<engine::StreamDecoder<Arc<Tokenizer>>>,
}

impl StreamDecoder {
    /// A decoder over `tokenizer`.
    pub fn new(tokenizer: Arc<Tokenizer>, skip_special_tokens: bool) -> Self {
        StreamDecoder {
            decoder: Some(engine::StreamDecoder::new(tokenizer, skip_special_tokens)),
        }
    }

    fn ended(env: &Env, method: &str) -> napi::Error {
        js_error(
            env,
            ErrorClass::Error,
            &format!(
                "{method}() after end(): this decoder has ended; make another with tokenizer.decoder()"
            ),
        )
    }
}

#[napi]
impl StreamDecoder {
    /// Takes the next ids and returns the text they settle. An id outside the vocabulary throws a
    /// `RangeError` and leaves the decoder as it was.
    #[napi(catch_unwind, ts_args_type = "ids: Uint32Array | readonly number[]")]
    pub fn write(&mut self, env: Env, ids: Unknown) -> napi::Result<String> {
        let ids = u32_list(&env, &ids, "ids", "ids")?;
        let decoder = self
            .decoder
            .as_mut()
            .ok_or_else(|| Self::ended(&env, "write"))?;
        decoder.write(&ids).map_err(|e| from_engine(&env, &e))
    }

    /// The text still held back, and the end of the stream.
    #[napi(catch_unwind)]
    pub fn end(&mut self, env: Env) -> napi::Result<String> {
        let decoder = self
            .decoder
            .take()
            .ok_or_else(|| Self::ended(&env, "end"))?;
        decoder.end().map_err(|e| from_engine(&env, &e))
    }
}
