//! The JS `BatchEncoding` class: a whole batch's ids in one typed array.

use std::ptr;

use napi::bindgen_prelude::{ToNapiValue, Uint32Array, Uint32ArraySlice, Unknown};
use napi::{Env, sys};
use napi_derive::napi;

use super::errors::{ErrorClass, js_error};
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

    fn view(&mut self, env: &Env, index: usize) -> napi::Result<sys::napi_value> {
        let start = self.boundaries[index] as usize;
        let len = self.boundaries[index + 1] as usize - start;
        let raw_env = env.raw();
        // SAFETY: `self.ids` holds a reference to a live typed array of `raw_env`; converting a
        // `&mut Uint32Array` that holds a reference returns that array without consuming it.
        let ids =
            unsafe { <&mut Uint32Array as ToNapiValue>::to_napi_value(raw_env, &mut self.ids)? };
        let mut kind = 0;
        let mut buffer = ptr::null_mut();
        let mut byte_offset = 0usize;
        let mut view = ptr::null_mut();
        // SAFETY: `ids` is a typed array of `raw_env`; the out-pointers are valid. The view lies
        // inside the array: `boundaries` are within `0..=ids.length` by construction.
        let status = unsafe {
            let status = sys::napi_get_typedarray_info(
                raw_env,
                ids,
                &mut kind,
                ptr::null_mut(),
                ptr::null_mut(),
                &mut buffer,
                &mut byte_offset,
            );
            if status != sys::Status::napi_ok {
                status
            } else {
                sys::napi_create_typedarray(
                    raw_env,
                    sys::TypedarrayType::uint32_array,
                    len,
                    buffer,
                    byte_offset + start * std::mem::size_of::<u32>(),
                    &mut view,
                )
            }
        };
        if status != sys::Status::napi_ok {
            return Err(js_error(
                env,
                ErrorClass::Error,
                "cannot make a view of this BatchEncoding's ids (was its buffer transferred?)",
            ));
        }
        Ok(view)
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
        // SAFETY: `self.ids` holds a reference to a live typed array of `env`.
        let raw =
            unsafe { <&mut Uint32Array as ToNapiValue>::to_napi_value(env.raw(), &mut self.ids)? };
        // SAFETY: `raw` is a value of `env`.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), raw) })
    }

    /// `length + 1` boundaries into `ids`.
    #[napi(getter, ts_return_type = "Uint32Array")]
    pub fn offsets<'env>(&mut self, env: &'env Env) -> napi::Result<Unknown<'env>> {
        // SAFETY: `self.offsets` holds a reference to a live typed array of `env`.
        let raw = unsafe {
            <&mut Uint32Array as ToNapiValue>::to_napi_value(env.raw(), &mut self.offsets)?
        };
        // SAFETY: `raw` is a value of `env`.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), raw) })
    }

    /// The ids of text `index`: a view into `ids`, not a copy.
    #[napi(ts_return_type = "Uint32Array")]
    pub fn get<'env>(&mut self, env: &'env Env, index: f64) -> napi::Result<Unknown<'env>> {
        let index = self.check_index(env, index)?;
        let view = self.view(env, index)?;
        // SAFETY: `view` was just created in `env`.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), view) })
    }

    /// Iterates over the texts' ids, each a view as `get` returns.
    #[napi(
        well_known_symbol = "iterator",
        ts_return_type = "IterableIterator<Uint32Array>"
    )]
    pub fn iterator<'env>(&mut self, env: &'env Env) -> napi::Result<Unknown<'env>> {
        let raw_env = env.raw();
        let len = self.boundaries.len() - 1;
        let mut views = ptr::null_mut();
        // SAFETY: `raw_env` is live; the out-pointer is valid.
        let mut status = unsafe { sys::napi_create_array_with_length(raw_env, len, &mut views) };
        for index in 0..len {
            if status != sys::Status::napi_ok {
                break;
            }
            let view = self.view(env, index)?;
            // SAFETY: `views` is an array of `raw_env` and `view` a value of it.
            status = unsafe { sys::napi_set_element(raw_env, views, index as u32, view) };
        }
        let mut values = ptr::null_mut();
        let mut iterator = ptr::null_mut();
        if status == sys::Status::napi_ok {
            // SAFETY: `views` is an array of `raw_env`; its `values` method takes no argument and
            // returns an array iterator.
            status = unsafe {
                let status =
                    sys::napi_get_named_property(raw_env, views, c"values".as_ptr(), &mut values);
                if status != sys::Status::napi_ok {
                    status
                } else {
                    sys::napi_call_function(raw_env, views, values, 0, ptr::null(), &mut iterator)
                }
            };
        }
        if status != sys::Status::napi_ok {
            return Err(js_error(
                env,
                ErrorClass::Error,
                "cannot iterate over this BatchEncoding",
            ));
        }
        // SAFETY: `iterator` was just created in `raw_env`.
        Ok(unsafe { Unknown::from_raw_unchecked(raw_env, iterator) })
    }

    /// Every text's ids as a plain array of numbers (one JS array per text: convenient, slower).
    #[napi(js_name = "toArrays")]
    pub fn arrays(&mut self, env: &Env) -> napi::Result<Vec<Vec<u32>>> {
        let expected = *self.boundaries.last().expect("boundaries hold at least 0") as usize;
        let ids = current_ids(env, &mut self.ids, expected)?;
        Ok(self
            .boundaries
            .windows(2)
            .map(|w| ids[w[0] as usize..w[1] as usize].to_vec())
            .collect())
    }
}

/// The ids as they are now in JS memory, read through the typed array each time: JS may have
/// transferred (detached) its buffer since, which leaves it empty.
fn current_ids<'a>(
    env: &Env,
    ids: &'a mut Uint32Array,
    expected: usize,
) -> napi::Result<&'a [u32]> {
    let raw_env = env.raw();
    // SAFETY: `ids` holds a reference to a live typed array of `raw_env`.
    let array = unsafe { <&mut Uint32Array as ToNapiValue>::to_napi_value(raw_env, ids)? };
    let mut len = 0usize;
    let mut data = ptr::null_mut();
    // SAFETY: `array` is a typed array of `raw_env`; the out-pointers are valid.
    let status = unsafe {
        sys::napi_get_typedarray_info(
            raw_env,
            array,
            ptr::null_mut(),
            &mut len,
            &mut data,
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    if status != sys::Status::napi_ok || len != expected || (len > 0 && data.is_null()) {
        return Err(js_error(
            env,
            ErrorClass::Error,
            "this BatchEncoding's ids are gone (was its buffer transferred?)",
        ));
    }
    if len == 0 {
        return Ok(&[]);
    }
    // SAFETY: napi reports `len` u32 elements at `data`, owned by the typed array `ids`
    // keeps alive; the slice borrows `ids`, and no JS runs while it is in use.
    Ok(unsafe { std::slice::from_raw_parts(data.cast::<u32>(), len) })
}
