//! Every direct Node-API call batchtok makes, each behind a safe function.
//!
//! napi-rs's typed conversions cover most of the surface; the rest (reading a string into a
//! buffer we own, views into a typed array, listeners on an `AbortSignal`, errors of a chosen
//! class) needs raw `napi_*` calls. They all live here, so that the rest of `src/js/` has no
//! `unsafe` and one argument below covers every call.
//!
//! # The argument, once
//!
//! A Node-API call is sound when (a) its `napi_env` is the live environment of the current
//! thread, (b) every `napi_value` it is given belongs to that environment and is still in a live
//! handle scope, and (c) its out-pointers are valid for writes and its buffers for their stated
//! lengths. The functions below take an [`Env`] by reference and values as [`Unknown<'env>`]:
//! napi-rs hands a method its `Env` and arguments for the duration of the JS call, on the JS
//! thread, inside the call's handle scope, so (a) and (b) hold for any value reachable from them
//! while the call runs. Values these functions create are returned as `Unknown` of the same
//! lifetime, inside the same scope. (c) is local to each call and is stated there.
//!
//! Node-API checks value types itself and answers a wrong one with a status (`napi_string_expected`
//! and so on), never undefined behaviour, so none of these functions needs its caller to have
//! checked a type first; the callers check anyway, to name the argument in their errors.
//!
//! References ([`Persistent`]) outlive a call: they are used and deleted only on the thread of
//! the environment that made them, which `Persistent` checks.

use std::ffi::{CStr, c_void};
use std::mem::MaybeUninit;
use std::ptr;
use std::thread::{self, ThreadId};

use napi::bindgen_prelude::{
    BigInt64Array, ClassInstance, FromNapiValue, Int32Array, MaybeTypeTag, This, ToNapiValue,
    TypedArray, TypedArrayType, Uint32Array, Unknown, Utf16String,
};
use napi::{Env, JsValue, Status, sys};

use crate::allocator::ZeroedArray;

/// The status of a Node-API call as a `Result`.
fn status(code: sys::napi_status) -> Result<(), sys::napi_status> {
    if code == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(code)
    }
}

/// `value`, just returned by a Node-API call on `env`, as an `Unknown` of the current scope.
fn same_scope<'env>(env: &Env, value: sys::napi_value) -> Unknown<'env> {
    // SAFETY: `value` was just returned by a Node-API call on `env` inside the current scope
    // (module docs, (a) and (b)).
    unsafe { Unknown::from_raw_unchecked(env.raw(), value) }
}

/// The JS string `value` as Rust UTF-8 (lone surrogates become U+FFFD).
pub fn string(env: &Env, value: &Unknown) -> napi::Result<String> {
    // SAFETY: module docs; napi-rs checks the type and fails on a non-string.
    unsafe { String::from_napi_value(env.raw(), value.raw()) }
}

/// The JS boolean `value`.
pub fn boolean(env: &Env, value: &Unknown) -> napi::Result<bool> {
    // SAFETY: module docs; napi-rs checks the type.
    unsafe { bool::from_napi_value(env.raw(), value.raw()) }
}

/// The JS number `value`.
pub fn number(env: &Env, value: &Unknown) -> napi::Result<f64> {
    // SAFETY: module docs; napi-rs checks the type.
    unsafe { f64::from_napi_value(env.raw(), value.raw()) }
}

/// The elements of the JS array `value`, read once each.
pub fn elements<'env>(env: &Env, value: &Unknown<'env>) -> napi::Result<Vec<Unknown<'env>>> {
    // SAFETY: module docs; napi-rs checks that `value` is an array.
    unsafe { Vec::<Unknown<'env>>::from_napi_value(env.raw(), value.raw()) }
}

/// The `length` of the JS array `array`.
pub fn array_length(env: &Env, array: &Unknown) -> Result<u32, sys::napi_status> {
    let mut len = 0u32;
    // SAFETY: module docs; `len` is valid for writes.
    status(unsafe { sys::napi_get_array_length(env.raw(), array.raw(), &mut len) })?;
    Ok(len)
}

/// Element `index` of the JS array `array` (`undefined` past its end; getters run).
pub fn element<'env>(
    env: &Env,
    array: &Unknown<'env>,
    index: u32,
) -> Result<Unknown<'env>, sys::napi_status> {
    let mut value = ptr::null_mut();
    // SAFETY: module docs; `value` is valid for writes.
    status(unsafe { sys::napi_get_element(env.raw(), array.raw(), index, &mut value) })?;
    Ok(same_scope(env, value))
}

/// Writes the JS string `value` as UTF-8 into `room`, whole characters only, and returns the
/// status and the bytes written. V8 keeps one byte of `room` for a NUL it writes after them.
pub fn write_utf8(
    env: &Env,
    value: &Unknown,
    room: &mut [MaybeUninit<u8>],
) -> (sys::napi_status, usize) {
    let mut written = 0usize;
    // SAFETY: module docs; `room` is `room.len()` writable bytes and Node-API writes at most that
    // many; `written` is valid for writes.
    let code = unsafe {
        sys::napi_get_value_string_utf8(
            env.raw(),
            value.raw(),
            room.as_mut_ptr().cast(),
            room.len(),
            &mut written,
        )
    };
    (code, written)
}

/// The length in UTF-8 bytes of the JS string `value`.
pub fn utf8_length(env: &Env, value: &Unknown) -> Result<usize, sys::napi_status> {
    let mut len = 0usize;
    // SAFETY: module docs; a null buffer asks for the length only; `len` is valid for writes.
    status(unsafe {
        sys::napi_get_value_string_utf8(env.raw(), value.raw(), ptr::null_mut(), 0, &mut len)
    })?;
    Ok(len)
}

/// The length in UTF-16 code units of the JS string `value` (its `length`), which V8 knows
/// without reading the string.
pub fn utf16_length(env: &Env, value: &Unknown) -> Result<usize, sys::napi_status> {
    let mut len = 0usize;
    // SAFETY: module docs; a null buffer asks for the length only; `len` is valid for writes.
    status(unsafe {
        sys::napi_get_value_string_utf16(env.raw(), value.raw(), ptr::null_mut(), 0, &mut len)
    })?;
    Ok(len)
}

/// Whether a JS exception is pending (JS code a call ran, a getter say, threw).
pub fn exception_pending(env: &Env) -> bool {
    let mut pending = false;
    // SAFETY: module docs; `pending` is valid for writes.
    let code = unsafe { sys::napi_is_exception_pending(env.raw(), &mut pending) };
    code == sys::Status::napi_ok && pending
}

/// `object[key]` (getters run).
pub fn named_property<'env>(
    env: &Env,
    object: &Unknown<'env>,
    key: &CStr,
) -> Result<Unknown<'env>, sys::napi_status> {
    let mut value = ptr::null_mut();
    // SAFETY: module docs; `key` is NUL-terminated; `value` is valid for writes.
    status(unsafe {
        sys::napi_get_named_property(env.raw(), object.raw(), key.as_ptr(), &mut value)
    })?;
    Ok(same_scope(env, value))
}

/// The own enumerable string-keyed properties of `object` as `Object.entries` lists them: each
/// key (as Rust UTF-8) and its value, read by the key's own JS string, so that a key a `CStr` or
/// UTF-8 cannot hold (a NUL, a lone surrogate) still finds its value.
pub fn own_entries<'env>(
    env: &Env,
    object: &Unknown<'env>,
) -> napi::Result<Vec<(String, Unknown<'env>)>> {
    let mut keys = ptr::null_mut();
    // SAFETY: module docs; `keys` is valid for writes.
    status(unsafe {
        sys::napi_get_all_property_names(
            env.raw(),
            object.raw(),
            sys::KeyCollectionMode::own_only,
            sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
            sys::KeyConversion::numbers_to_strings,
            &mut keys,
        )
    })
    .map_err(|code| failed(code, "list an object's keys"))?;
    let keys = same_scope(env, keys);
    elements(env, &keys)?
        .iter()
        .map(|key| {
            let mut value = ptr::null_mut();
            // SAFETY: module docs; `key` came from `object`'s own key list on `env`; `value` is
            // valid for writes.
            status(unsafe {
                sys::napi_get_property(env.raw(), object.raw(), key.raw(), &mut value)
            })
            .map_err(|code| failed(code, "read a property"))?;
            Ok((string(env, key)?, same_scope(env, value)))
        })
        .collect()
}

/// The JS string `value` as its UTF-16 code units, lone surrogates kept.
pub fn string_utf16(env: &Env, value: &Unknown) -> napi::Result<Vec<u16>> {
    // SAFETY: module docs; napi-rs checks the type and fails on a non-string.
    unsafe { Utf16String::from_napi_value(env.raw(), value.raw()) }.map(|units| units.to_vec())
}

/// The own enumerable string keys of `object`, as `Object.keys` lists them.
pub fn own_keys<'env>(env: &Env, object: &Unknown<'env>) -> napi::Result<Vec<String>> {
    let mut keys = ptr::null_mut();
    // SAFETY: module docs; `keys` is valid for writes.
    status(unsafe { sys::napi_get_property_names(env.raw(), object.raw(), &mut keys) })
        .map_err(|code| failed(code, "list the options' keys"))?;
    let keys = same_scope(env, keys);
    elements(env, &keys)?
        .iter()
        .map(|key| string(env, key))
        .collect()
}

/// `globalThis[key]`.
pub fn global<'env>(env: &'env Env, key: &CStr) -> Result<Unknown<'env>, sys::napi_status> {
    let mut global = ptr::null_mut();
    // SAFETY: module docs; `global` is valid for writes.
    status(unsafe { sys::napi_get_global(env.raw(), &mut global) })?;
    named_property(env, &same_scope(env, global), key)
}

/// Whether `this` of a constructor call is an object other than the global one: what `new`
/// gives a constructor, and what a call without `new` does not.
pub fn is_fresh_object(env: &Env, this: &This) -> napi::Result<bool> {
    let this = this.to_unknown();
    if this.get_type()? != napi::ValueType::Object {
        return Ok(false);
    }
    let mut global = ptr::null_mut();
    let mut same = false;
    // SAFETY: module docs; the out-pointers are valid for writes; `global` is compared only once
    // napi has set it.
    let code = unsafe {
        match sys::napi_get_global(env.raw(), &mut global) {
            sys::Status::napi_ok => {
                sys::napi_strict_equals(env.raw(), global, this.raw(), &mut same)
            }
            code => code,
        }
    };
    status(code).map_err(|code| failed(code, "read the global object"))?;
    Ok(!same)
}

/// `value instanceof constructor`.
pub fn instance_of(
    env: &Env,
    value: &Unknown,
    constructor: &Unknown,
) -> Result<bool, sys::napi_status> {
    let mut is = false;
    // SAFETY: module docs; `is` is valid for writes; a constructor that is not a function is a
    // status, not undefined behaviour.
    status(unsafe { sys::napi_instanceof(env.raw(), value.raw(), constructor.raw(), &mut is) })?;
    Ok(is)
}

/// The instance of the `#[napi]` class `T` that `value` wraps, or `None` if it wraps none, or
/// one of another class. napi-rs checks the object's type tag before the cast, so an object of
/// another class with `T`'s prototype is refused.
pub fn class_instance<'env, T: 'env + MaybeTypeTag>(
    env: &Env,
    value: &Unknown<'env>,
) -> Option<ClassInstance<'env, T>> {
    // SAFETY: module docs; napi-rs unwraps the object and checks its type tag and class identity
    // before it treats the wrapped pointer as a `T`.
    unsafe { ClassInstance::<T>::from_napi_value(env.raw(), value.raw()) }.ok()
}

/// The kind of the typed array `value`, or `None` if it is not a typed array.
pub fn typed_array_type(env: &Env, value: &Unknown) -> napi::Result<Option<TypedArrayType>> {
    if !value.is_typedarray()? {
        return Ok(None);
    }
    // SAFETY: module docs; checked to be a typed array.
    let array = unsafe { TypedArray::from_napi_value(env.raw(), value.raw()) }?;
    Ok(Some(array.typed_array_type))
}

/// Calls `read` with the bytes of the `Uint8Array` (or `Buffer`) `value`, or returns `None` if it
/// is not one.
pub fn with_uint8_bytes<R>(
    env: &Env,
    value: &Unknown,
    read: impl FnOnce(&[u8]) -> R,
) -> napi::Result<Option<R>> {
    if typed_array_type(env, value)? != Some(TypedArrayType::Uint8) {
        return Ok(None);
    }
    // SAFETY: module docs; checked to be a Uint8Array.
    let array = unsafe { TypedArray::from_napi_value(env.raw(), value.raw()) }?;
    // The slice borrows the JS array's memory; no JS runs while `read` does, so nothing can
    // detach or resize it meanwhile.
    Ok(Some(read(&array.arraybuffer)))
}

/// A copy of the elements of the `Uint32Array` `value`.
pub fn uint32_elements(env: &Env, value: &Unknown) -> napi::Result<Vec<u32>> {
    // SAFETY: module docs; napi-rs checks the array's kind.
    Ok(unsafe { Uint32Array::from_napi_value(env.raw(), value.raw()) }?.to_vec())
}

/// The JS value of `array`, a typed array napi-rs holds by reference.
pub fn held_array<'env>(env: &'env Env, array: &mut Uint32Array) -> napi::Result<Unknown<'env>> {
    // SAFETY: module docs; converting a `&mut Uint32Array` that holds a reference returns the
    // array it refers to without consuming it.
    let raw = unsafe { <&mut Uint32Array as ToNapiValue>::to_napi_value(env.raw(), array) }?;
    Ok(same_scope(env, raw))
}

/// A `Uint32Array` over `len` elements of `array`'s buffer from element `start` on: a view,
/// sharing memory. `None` if the buffer is gone (transferred) or too short.
pub fn uint32_view<'env>(
    env: &Env,
    array: &Unknown<'env>,
    start: usize,
    len: usize,
) -> Option<Unknown<'env>> {
    let mut length = 0usize;
    let mut buffer = ptr::null_mut();
    let mut byte_offset = 0usize;
    let mut view = ptr::null_mut();
    // SAFETY: module docs; the out-pointers are valid for writes (nulls ask for nothing).
    // Node-API checks that the view lies inside the buffer and fails otherwise.
    let code = unsafe {
        let code = sys::napi_get_typedarray_info(
            env.raw(),
            array.raw(),
            ptr::null_mut(),
            &mut length,
            ptr::null_mut(),
            &mut buffer,
            &mut byte_offset,
        );
        if code != sys::Status::napi_ok || start + len > length {
            return None;
        }
        sys::napi_create_typedarray(
            env.raw(),
            sys::TypedarrayType::uint32_array,
            len,
            buffer,
            byte_offset + start * size_of::<u32>(),
            &mut view,
        )
    };
    status(code).ok()?;
    Some(same_scope(env, view))
}

/// Calls `read` with the elements of the `Uint32Array` `array` as they are now, or returns
/// `None` if its buffer is gone (transferred).
pub fn with_uint32_elements<R>(
    env: &Env,
    array: &Unknown,
    read: impl FnOnce(&[u32]) -> R,
) -> Option<R> {
    let mut length = 0usize;
    let mut data = ptr::null_mut();
    // SAFETY: module docs; the out-pointers are valid for writes.
    let code = unsafe {
        sys::napi_get_typedarray_info(
            env.raw(),
            array.raw(),
            ptr::null_mut(),
            &mut length,
            &mut data,
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    status(code).ok()?;
    if length == 0 {
        return Some(read(&[]));
    }
    if data.is_null() {
        return None;
    }
    // SAFETY: Node-API reports `length` elements at `data`, which `array` keeps alive; the
    // caller passed a Uint32Array, whose data is aligned for u32; no JS runs while `read` does.
    Some(read(unsafe {
        std::slice::from_raw_parts(data.cast::<u32>(), length)
    }))
}

/// A JS array of `values`.
pub fn array_of<'env>(env: &Env, values: &[Unknown<'env>]) -> napi::Result<Unknown<'env>> {
    let mut array = ptr::null_mut();
    // SAFETY: module docs; `array` is valid for writes.
    status(unsafe { sys::napi_create_array_with_length(env.raw(), values.len(), &mut array) })
        .map_err(|code| failed(code, "create an array"))?;
    for (index, value) in values.iter().enumerate() {
        // SAFETY: module docs; `array` was just created and `value` belongs to the same scope.
        status(unsafe { sys::napi_set_element(env.raw(), array, index as u32, value.raw()) })
            .map_err(|code| failed(code, "fill an array"))?;
    }
    Ok(same_scope(env, array))
}

/// `object[method](...args)`. If the method throws, its exception stays pending and the error
/// returned says so (`PendingException`), so napi-rs hands it on to JS unchanged.
pub fn call_method<'env>(
    env: &Env,
    object: &Unknown<'env>,
    method: &CStr,
    args: &[Unknown],
) -> napi::Result<Unknown<'env>> {
    let function =
        named_property(env, object, method).map_err(|code| failed(code, "read a method"))?;
    let raw_args: Vec<sys::napi_value> = args.iter().map(|arg| arg.raw()).collect();
    let mut result = ptr::null_mut();
    // SAFETY: module docs; `raw_args` holds `raw_args.len()` values of the scope; `result` is
    // valid for writes. A `function` that is not callable is a status.
    let code = unsafe {
        sys::napi_call_function(
            env.raw(),
            object.raw(),
            function.raw(),
            raw_args.len(),
            raw_args.as_ptr(),
            &mut result,
        )
    };
    status(code).map_err(|code| failed(code, "call a method"))?;
    Ok(same_scope(env, result))
}

/// The JS string `text`.
pub fn create_string<'env>(env: &Env, text: &str) -> napi::Result<Unknown<'env>> {
    let mut value = ptr::null_mut();
    // SAFETY: module docs; `text` is `text.len()` readable bytes; `value` is valid for writes.
    status(unsafe {
        sys::napi_create_string_utf8(
            env.raw(),
            text.as_ptr().cast(),
            text.len() as isize,
            &mut value,
        )
    })
    .map_err(|code| failed(code, "create a string"))?;
    Ok(same_scope(env, value))
}

/// The JS number `number`.
pub fn create_number<'env>(env: &Env, number: f64) -> napi::Result<Unknown<'env>> {
    let mut value = ptr::null_mut();
    // SAFETY: module docs; `value` is valid for writes.
    status(unsafe { sys::napi_create_double(env.raw(), number, &mut value) })
        .map_err(|code| failed(code, "create a number"))?;
    Ok(same_scope(env, value))
}

/// The JS error classes batchtok throws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorConstructor {
    /// `TypeError`.
    Type,
    /// `RangeError`.
    Range,
    /// `Error`.
    Plain,
}

/// A new error object of `class` with `message`.
pub fn create_error<'env>(
    env: &Env,
    class: ErrorConstructor,
    message: &str,
) -> napi::Result<Unknown<'env>> {
    let text = create_string(env, message)?;
    let mut error = ptr::null_mut();
    let (raw_env, code, text) = (env.raw(), ptr::null_mut(), text.raw());
    // SAFETY: module docs; `text` is a string of the scope; a null code means none; `error` is
    // valid for writes.
    let created = unsafe {
        match class {
            ErrorConstructor::Type => sys::napi_create_type_error(raw_env, code, text, &mut error),
            ErrorConstructor::Range => {
                sys::napi_create_range_error(raw_env, code, text, &mut error)
            }
            ErrorConstructor::Plain => sys::napi_create_error(raw_env, code, text, &mut error),
        }
    };
    status(created).map_err(|code| failed(code, "create an error"))?;
    Ok(same_scope(env, error))
}

/// `object[key] = value`.
pub fn set_named_property(
    env: &Env,
    object: &Unknown,
    key: &CStr,
    value: &Unknown,
) -> napi::Result<()> {
    // SAFETY: module docs; `key` is NUL-terminated.
    status(unsafe {
        sys::napi_set_named_property(env.raw(), object.raw(), key.as_ptr(), value.raw())
    })
    .map_err(|code| failed(code, "set a property"))
}

/// A JS function named `name` that calls `callback(&data)` whenever JS calls it, whatever its
/// arguments; `data` lives as long as the function and is dropped when V8 collects it (or when
/// the environment is torn down).
pub fn function_with_data<'env, T: 'static>(
    env: &Env,
    name: &str,
    data: T,
    callback: fn(&T),
) -> napi::Result<Unknown<'env>> {
    let boxed: *mut (T, fn(&T)) = Box::into_raw(Box::new((data, callback)));
    let mut function = ptr::null_mut();
    // SAFETY: module docs; `name` is `name.len()` readable bytes; `boxed` is a valid pointer to a
    // `(T, fn(&T))`, which is what `call_with_data::<T>` reads it as; `function` is valid for
    // writes.
    let created = unsafe {
        sys::napi_create_function(
            env.raw(),
            name.as_ptr().cast(),
            name.len() as isize,
            Some(call_with_data::<T>),
            boxed.cast(),
            &mut function,
        )
    };
    // SAFETY: `function` is the function just created in `env`, if `created` is ok; the
    // finalizer frees `boxed` once the function has been collected, when nothing can call it.
    let owned = created == sys::Status::napi_ok
        && unsafe {
            sys::napi_add_finalizer(
                env.raw(),
                function,
                boxed.cast(),
                Some(drop_data::<T>),
                ptr::null_mut(),
                ptr::null_mut(),
            )
        } == sys::Status::napi_ok;
    if !owned {
        // SAFETY: `boxed` came from `Box::into_raw` above and no finalizer owns it. A function
        // made without its finalizer was never handed to JS, so nothing can call it.
        drop(unsafe { Box::from_raw(boxed) });
        return Err(napi::Error::new(
            Status::GenericFailure,
            format!("cannot create the function {name}"),
        ));
    }
    Ok(same_scope(env, function))
}

/// The native side of every [`function_with_data`] function of data type `T`.
unsafe extern "C" fn call_with_data<T>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let mut data = ptr::null_mut();
    // SAFETY: Node-API calls this with its own live `env` and `info`; only the data is asked for.
    let code = unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
            &mut data,
        )
    };
    if code == sys::Status::napi_ok && !data.is_null() {
        // SAFETY: only `function_with_data::<T>` makes functions with this callback, and their
        // data is a boxed `(T, fn(&T))` that only their finalizer frees, which cannot run while
        // the function is being called.
        let (value, callback) = unsafe { &*data.cast::<(T, fn(&T))>() };
        callback(value);
    }
    // A null result is `undefined` to JS.
    ptr::null_mut()
}

/// The finalizer of a [`function_with_data`] function: drops its data.
unsafe extern "C" fn drop_data<T>(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` is the box leaked by `function_with_data::<T>`, whose finalizer this is;
    // Node-API runs a finalizer once.
    drop(unsafe { Box::from_raw(data.cast::<(T, fn(&T))>()) });
}

/// What a [`method_function`] runs: `this` in, the return value out.
pub type Method = for<'env> fn(&'env Env, &Unknown<'env>) -> napi::Result<Unknown<'env>>;

/// Sets `object[Symbol.for(symbol)]` to a method named `name` that runs `method` with its `this`
/// (Node's `util.inspect.custom` is `Symbol.for('nodejs.util.inspect.custom')`).
pub fn set_symbol_method(
    env: &Env,
    object: &Unknown,
    symbol: &str,
    name: &str,
    method: Method,
) -> napi::Result<()> {
    let symbol_class = global(env, c"Symbol").map_err(|code| failed(code, "read Symbol"))?;
    let key = call_method(env, &symbol_class, c"for", &[create_string(env, symbol)?])?;
    let mut function = ptr::null_mut();
    // SAFETY: module docs; `name` is `name.len()` readable bytes; the data is the `Method` itself
    // (a plain function pointer, which lives forever), which `call_method_with_this` reads back
    // as one; `function` is valid for writes.
    status(unsafe {
        sys::napi_create_function(
            env.raw(),
            name.as_ptr().cast(),
            name.len() as isize,
            Some(call_method_with_this),
            method as *mut c_void,
            &mut function,
        )
    })
    .map_err(|code| failed(code, "create a method"))?;
    // SAFETY: module docs; `key` and `function` belong to the current scope.
    status(unsafe { sys::napi_set_property(env.raw(), object.raw(), key.raw(), function) })
        .map_err(|code| failed(code, "set a method"))
}

/// The native side of every [`set_symbol_method`] method.
unsafe extern "C" fn call_method_with_this(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let mut this = ptr::null_mut();
    let mut data = ptr::null_mut();
    // SAFETY: Node-API calls this with its own live `env` and `info`; only `this` and the data are
    // asked for.
    let code = unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            ptr::null_mut(),
            ptr::null_mut(),
            &mut this,
            &mut data,
        )
    };
    if code != sys::Status::napi_ok || data.is_null() {
        return ptr::null_mut();
    }
    // SAFETY: only `set_symbol_method` makes functions with this callback, and their data is a
    // `Method` function pointer.
    let method: Method = unsafe { std::mem::transmute::<*mut c_void, Method>(data) };
    let env = Env::from_raw(env);
    let this = same_scope(&env, this);
    match method(&env, &this) {
        Ok(value) => value.raw(),
        Err(error) => {
            // SAFETY: on the JS thread inside this call; the error is thrown into it once.
            unsafe { napi::JsError::from(error).throw_into(env.raw()) };
            ptr::null_mut()
        }
    }
}

/// A strong reference to a JS value that outlives the call that made it. It is read and deleted
/// only on its environment's JS thread: dropped on another thread, it leaks rather than call
/// Node-API from a thread that does not own the environment.
pub struct Persistent {
    env: sys::napi_env,
    thread: ThreadId,
    reference: sys::napi_ref,
}

// SAFETY: the reference is used only on `thread` (`get` takes that thread's live `Env`; `Drop`
// checks). A `Persistent` crosses threads only inside an async task, whose `compute` never
// touches it.
unsafe impl Send for Persistent {}

impl Persistent {
    /// A reference to `value` that keeps it alive until dropped.
    pub fn new(env: &Env, value: &Unknown) -> napi::Result<Persistent> {
        let mut reference = ptr::null_mut();
        // SAFETY: module docs; `reference` is valid for writes.
        status(unsafe { sys::napi_create_reference(env.raw(), value.raw(), 1, &mut reference) })
            .map_err(|code| failed(code, "hold a value"))?;
        Ok(Persistent {
            env: env.raw(),
            thread: thread::current().id(),
            reference,
        })
    }

    /// The value, read during a JS call on its environment's thread; `None` on another thread
    /// or environment, or if it cannot be read.
    pub fn value<'env>(&self, env: &'env Env) -> Option<Unknown<'env>> {
        if env.raw() != self.env || thread::current().id() != self.thread {
            return None;
        }
        let mut value = ptr::null_mut();
        // SAFETY: module docs (a JS call on this environment's thread); the reference was made in
        // this environment and is not deleted before its `Drop`; `value` is valid for writes.
        let code = unsafe { sys::napi_get_reference_value(self.env, self.reference, &mut value) };
        (code == sys::Status::napi_ok && !value.is_null()).then(|| same_scope(env, value))
    }

    /// Runs `use_values` with the values of `references` in a handle scope of their own, on
    /// their environment's JS thread, from outside any JS call (a `Drop`). Returns `None` if this
    /// is not that thread, or a value cannot be read.
    pub fn with_values<R>(
        references: &[&Persistent],
        use_values: impl FnOnce(&Env, &[Unknown]) -> R,
    ) -> Option<R> {
        let first = references.first()?;
        if references
            .iter()
            .any(|r| r.env != first.env || r.thread != thread::current().id())
        {
            return None;
        }
        let env = Env::from_raw(first.env);
        let mut scope = ptr::null_mut();
        // SAFETY: this is the environment's JS thread (checked above). napi-rs drops async tasks,
        // which own these references, in the call that made them or in the environment's
        // completion callback, which still runs during a worker's teardown; so the environment
        // is alive. `scope` is valid for writes.
        if unsafe { sys::napi_open_handle_scope(first.env, &mut scope) } != sys::Status::napi_ok {
            return None;
        }
        // Inside the scope just opened, on the references' thread: what `value` reads in a call.
        let values: Option<Vec<Unknown>> = references.iter().map(|r| r.value(&env)).collect();
        let result = values.map(|values| use_values(&env, &values));
        // SAFETY: `scope` was opened above on this thread and is closed once.
        unsafe { sys::napi_close_handle_scope(first.env, scope) };
        result
    }
}

impl Drop for Persistent {
    fn drop(&mut self) {
        if thread::current().id() == self.thread {
            // SAFETY: on the environment's JS thread, which is alive (see `with_values`); the
            // reference was made in it and is deleted once, here.
            unsafe { sys::napi_delete_reference(self.env, self.reference) };
        }
    }
}

/// A promise rejected with `error`: the JS exception it stands for if one is pending (JS code a
/// call ran, a getter say, threw), else the error object it holds or describes.
pub fn rejected_promise<'env>(env: &'env Env, error: napi::Error) -> napi::Result<Unknown<'env>> {
    let reason = if error.status == Status::PendingException && exception_pending(env) {
        let mut exception = ptr::null_mut();
        // SAFETY: module docs; an exception is pending, and taking it clears it; `exception` is
        // valid for writes.
        status(unsafe { sys::napi_get_and_clear_last_exception(env.raw(), &mut exception) })
            .map_err(|code| failed(code, "take the pending exception"))?;
        same_scope(env, exception)
    } else {
        napi::JsError::from(error).into_unknown(*env)
    };
    let mut deferred = ptr::null_mut();
    let mut promise = ptr::null_mut();
    // SAFETY: module docs; the out-pointers are valid for writes; the deferred is resolved once,
    // right below, which also frees it.
    unsafe {
        status(sys::napi_create_promise(
            env.raw(),
            &mut deferred,
            &mut promise,
        ))
        .map_err(|code| failed(code, "create a promise"))?;
        status(sys::napi_reject_deferred(env.raw(), deferred, reason.raw()))
            .map_err(|code| failed(code, "reject a promise"))?;
    }
    Ok(same_scope(env, promise))
}

/// A Node-API status as an error saying what could not be done.
fn failed(code: sys::napi_status, what: &str) -> napi::Error {
    napi::Error::new(
        Status::from(code),
        format!("cannot {what} (napi status {code})"),
    )
}

/// A typed array of JS over `cells`' memory, without a copy. V8 owns it from the conversion on:
/// the memory is freed when V8 collects the array (or with the value, if it is dropped before
/// it reaches JS).
macro_rules! external_typed_array {
    ($(#[$doc:meta])* $name:ident, $array:ty, $element:ty) => {
        $(#[$doc])*
        pub fn $name(mut cells: ZeroedArray<$element>) -> $array {
            let (data, len) = (cells.as_mut_ptr(), cells.len());
            // SAFETY: `data` is `len` initialized elements that `cells` owns; the memory does not
            // move when `cells` does (it is a mapping or a heap block), and the closure, which
            // napi-rs calls once, when the array is collected or dropped, keeps `cells` alive
            // until then. Nothing else reads or writes it: `cells` is moved into the closure.
            unsafe { <$array>::with_external_data(data, len, move |_, _| drop(cells)) }
        }
    };
}

external_typed_array!(
    /// `cells` as a `BigInt64Array` (see `external_typed_array`).
    bigint64_array,
    BigInt64Array,
    i64
);
external_typed_array!(
    /// `cells` as an `Int32Array` (see `external_typed_array`).
    int32_array,
    Int32Array,
    i32
);
external_typed_array!(
    /// `cells` as a `Uint32Array` (see `external_typed_array`).
    uint32_array,
    Uint32Array,
    u32
);
