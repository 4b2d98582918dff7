//! `snappyUncompress`: a Parquet page's Snappy block decoded on a libuv thread.

use napi::bindgen_prelude::{TypedArrayType, Uint8Array, Unknown};
use napi::{Env, Task};
use napi_derive::napi;

use super::args::{describe, whole_number};
use super::errors::{ErrorClass, js_error, type_error};
use super::raw;
use super::tasks::TaskOutput;
use super::tokenizer::promise;
use crate::snappy::{self, SnappyError};

/// Decodes the raw Snappy block `block` (a Parquet page's compressed bytes, no framing), which
/// must decode to exactly `length` bytes (the page header's uncompressed size), on a libuv
/// thread. The block is copied first, so the caller may reuse it at once. Rejects with an
/// `Error` on a damaged block or another length. The CLI's Parquet reader decodes its pages with
/// it, several at once, off the event loop.
#[napi(
    catch_unwind,
    ts_args_type = "block: Uint8Array, length: number",
    ts_return_type = "Promise<Uint8Array>"
)]
pub fn snappy_uncompress<'env>(
    env: &'env Env,
    block: Unknown<'env>,
    length: Unknown<'env>,
) -> napi::Result<Unknown<'env>> {
    promise(env, || {
        if raw::typed_array_type(env, &block)? != Some(TypedArrayType::Uint8) {
            return Err(type_error(
                env,
                &format!(
                    "block is {}; expected a Uint8Array or a Buffer",
                    describe(&block)
                ),
            ));
        }
        let expected = whole_number(env, &length, "length", 0, i32::MAX as u32)? as usize;
        let block = raw::with_uint8_bytes(env, &block, <[u8]>::to_vec)?
            .expect("checked to be a Uint8Array");
        Ok(SnappyTask { block, expected })
    })
}

/// `snappyUncompress`'s async work.
pub struct SnappyTask {
    block: Vec<u8>,
    expected: usize,
}

impl Task for SnappyTask {
    type Output = TaskOutput<Result<Vec<u8>, SnappyError>>;
    type JsValue = Uint8Array;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(TaskOutput::of(|| {
            TaskOutput::Done(snappy::uncompress(&self.block, self.expected))
        }))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<Self::JsValue> {
        match output.into_result(&env, None)? {
            Ok(bytes) => Ok(Uint8Array::new(bytes)),
            Err(error) => Err(js_error(&env, ErrorClass::Error, &error.to_string())),
        }
    }
}
