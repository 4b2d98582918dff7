//! The JS `BatchEncoding` class: a whole batch's ids in one typed array.

use napi::Env;
use napi::bindgen_prelude::{JsValue, Object, Uint32Array, Uint32ArraySlice, Unknown};
use napi_derive::napi;

use super::errors::{ErrorClass, js_error};
use super::raw;
use crate::batch::Encoded;

/// The ids of a batch: `ids` holds every text's ids back to back, and the ids of text `i` are
/// `ids.subarray(offsets[i], offsets[i + 1])`, which `get(i)` returns without copying.
///
/// Both arrays are handed over from Rust without a copy, and no per-text JS object exists until
/// `get`, iteration or `toArrays` asks for one.
#[napi]
pub struct BatchEncoding {
    /// A Rust copy of the boundaries, so that `get` stays right whatever JS does to `offsets`.
    boundaries: Vec<u32>,
    /// The JS `Uint32Array` of ids (held by reference; its memory is the Rust vector's).
    ids: Uint32Array,
    /// The JS `Uint32Array` of boundaries.
    offsets: Uint32Array,
}

impl BatchEncoding {
    /// Hands `encoded` to JS: the ids vector becomes the `ids` array's memory, uncopied.
    pub fn new(env: &Env, encoded: Encoded) -> napi::Result<BatchEncoding> {
        let boundaries = encoded.offsets;
        let ids = Uint32ArraySlice::from_data(env, encoded.ids)?.into_typed_array(env)?;
        let offsets =
            Uint32ArraySlice::from_data(env, boundaries.clone())?.into_typed_array(env)?;
        Ok(BatchEncoding {
            boundaries,
            ids,
            offsets,
        })
    }

    fn view<'env>(&mut self, env: &'env Env, index: usize) -> napi::Result<Unknown<'env>> {
        let start = self.boundaries[index] as usize;
        let len = self.boundaries[index + 1] as usize - start;
        let ids = raw::held_array(env, &mut self.ids)?;
        raw::uint32_view(env, &ids, start, len).ok_or_else(|| {
            js_error(
                env,
                ErrorClass::Error,
                "cannot make a view of this BatchEncoding's ids (was its buffer transferred?)",
            )
        })
    }

    fn check_index(&self, env: &Env, index: f64) -> napi::Result<usize> {
        let len = self.boundaries.len() - 1;
        if index.fract() != 0.0 || index < 0.0 || index >= len as f64 {
            return Err(js_error(
                env,
                ErrorClass::Range,
                &format!("index {index} is out of range for a BatchEncoding of length {len}"),
            ));
        }
        Ok(index as usize)
    }
}

#[napi]
impl BatchEncoding {
    /// How many texts the batch held.
    #[napi(getter)]
    pub fn length(&self) -> u32 {
        (self.boundaries.len() - 1) as u32
    }

    /// Every text's ids, back to back.
    #[napi(getter, ts_return_type = "Uint32Array")]
    pub fn ids<'env>(&mut self, env: &'env Env) -> napi::Result<Unknown<'env>> {
        raw::held_array(env, &mut self.ids)
    }

    /// `length + 1` boundaries into `ids`.
    #[napi(getter, ts_return_type = "Uint32Array")]
    pub fn offsets<'env>(&mut self, env: &'env Env) -> napi::Result<Unknown<'env>> {
        raw::held_array(env, &mut self.offsets)
    }

    /// The ids of text `index`: a view into `ids`, not a copy.
    #[napi(ts_return_type = "Uint32Array")]
    pub fn get<'env>(&mut self, env: &'env Env, index: f64) -> napi::Result<Unknown<'env>> {
        let index = self.check_index(env, index)?;
        self.view(env, index)
    }

    /// Iterates over the texts' ids, each a view as `get` returns.
    #[napi(
        well_known_symbol = "iterator",
        ts_return_type = "IterableIterator<Uint32Array>"
    )]
    pub fn iterator<'env>(&mut self, env: &'env Env) -> napi::Result<Unknown<'env>> {
        let views = (0..self.boundaries.len() - 1)
            .map(|index| self.view(env, index))
            .collect::<napi::Result<Vec<_>>>()?;
        let views = raw::array_of(env, &views)?;
        raw::call_method(env, &views, c"values", &[])
    }

    /// Every text's ids as plain arrays of numbers, as `JSON.stringify` writes a batch.
    #[napi(js_name = "toJSON")]
    pub fn json(&mut self, env: &Env) -> napi::Result<Vec<Vec<u32>>> {
        self.arrays(env)
    }

    /// Every text's ids as a plain array of numbers (one JS array per text: convenient, slower).
    #[napi(js_name = "toArrays")]
    pub fn arrays(&mut self, env: &Env) -> napi::Result<Vec<Vec<u32>>> {
        let expected = *self.boundaries.last().expect("boundaries hold at least 0") as usize;
        let ids = raw::held_array(env, &mut self.ids)?;
        let boundaries = &self.boundaries;
        raw::with_uint32_elements(env, &ids, |ids| {
            // JS may have transferred (detached) the buffer since, which leaves it empty.
            (ids.len() == expected).then(|| {
                boundaries
                    .windows(2)
                    .map(|w| ids[w[0] as usize..w[1] as usize].to_vec())
                    .collect()
            })
        })
        .flatten()
        .ok_or_else(|| {
            js_error(
                env,
                ErrorClass::Error,
                "this BatchEncoding's ids are gone (was its buffer transferred?)",
            )
        })
    }
}

/// How many texts and ids `console.log` shows of a batch.
const INSPECT_TEXTS: usize = 8;
/// How many ids `console.log` shows of each text.
const INSPECT_IDS: usize = 16;

/// `util.inspect` of a `BatchEncoding`: its length and the first ids of its first texts, as
/// `BatchEncoding(3) [ [ 13225, 11, 2375, 0 ], [ 4421, 2110 ], ... ]`.
fn inspect<'env>(env: &'env Env, this: &Unknown<'env>) -> napi::Result<Unknown<'env>> {
    let Some(mut batch) = raw::class_instance::<BatchEncoding>(env, this) else {
        return raw::create_string(env, "BatchEncoding {}");
    };
    let len = batch.boundaries.len() - 1;
    let ids = raw::held_array(env, &mut batch.ids)?;
    let boundaries = &batch.boundaries;
    let mut texts = raw::with_uint32_elements(env, &ids, |ids| {
        boundaries
            .windows(2)
            .take(INSPECT_TEXTS)
            .map(|w| {
                let (start, end) = (w[0] as usize, w[1] as usize);
                let shown = ids.get(start..end.min(start + INSPECT_IDS)).unwrap_or(&[]);
                let mut text: Vec<String> = shown.iter().map(u32::to_string).collect();
                if end - start > INSPECT_IDS {
                    text.push(format!("... {} more", end - start - INSPECT_IDS));
                }
                format!("[ {} ]", text.join(", "))
            })
            .collect::<Vec<String>>()
    })
    .unwrap_or_default();
    if len > INSPECT_TEXTS {
        texts.push(format!("... {} more texts", len - INSPECT_TEXTS));
    }
    raw::create_string(
        env,
        &format!("BatchEncoding({len}) [ {} ]", texts.join(", ")),
    )
}

/// Gives `BatchEncoding`, one of the module's `exports`, its `util.inspect` form.
pub fn register_inspect(env: Env, exports: Object) -> napi::Result<()> {
    let exports = exports.to_unknown();
    let class = raw::named_property(&env, &exports, c"BatchEncoding")
        .map_err(|_| js_error(&env, ErrorClass::Error, "BatchEncoding is not exported"))?;
    let prototype = raw::named_property(&env, &class, c"prototype")
        .map_err(|_| js_error(&env, ErrorClass::Error, "BatchEncoding has no prototype"))?;
    raw::set_symbol_method(
        &env,
        &prototype,
        "nodejs.util.inspect.custom",
        "inspect",
        inspect,
    )
}
