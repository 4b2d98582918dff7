//! `encodeForModel`'s own options (padding, lengths, dtype, the return flags), read from its
//! options object; `options.rs` reads the ones it shares with the other methods.

use napi::bindgen_prelude::Unknown;
use napi::{Env, ValueType};

use super::args::{bool_option, choice, describe, property, string, whole_number};
use super::errors::type_error;
use crate::engine::{self, PadTo, Padding, Returns, Side, Tokenizer};

/// `'left'` or `'right'` as a side.
pub fn side(name: &str) -> Side {
    if name == "left" {
        Side::Left
    } else {
        Side::Right
    }
}

/// The option keys `encodeForModel` takes beside `addSpecialTokens`, `encodeSpecialTokens`,
/// `truncation`, `signal` and `scheduler`.
pub const MODEL_INPUT_KEYS: [&str; 12] = [
    "padding",
    "maxLength",
    "padToMultipleOf",
    "padSide",
    "padToken",
    "dtype",
    "returnOffsets",
    "returnTokens",
    "returnWordIds",
    "returnSequenceIds",
    "returnSpecialTokensMask",
    "returnOverflowing",
];

/// `padding` as asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PaddingOption {
    /// Unset: the file's padding section, else none.
    #[default]
    Unset,
    /// `false`.
    Off,
    /// `'longest'`.
    Longest,
    /// `'maxLength'`.
    MaxLength,
}

/// The type of the id arrays.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Dtype {
    /// `BigInt64Array`.
    #[default]
    Int64,
    /// `Int32Array`.
    Int32,
    /// `Uint32Array`.
    Uint32,
}

/// `encodeForModel`'s own options, as read.
#[derive(Debug, Clone, Default)]
pub struct ModelInputOptions {
    pub padding: PaddingOption,
    pub max_length: Option<usize>,
    pub pad_to_multiple_of: Option<usize>,
    pub pad_side: Option<Side>,
    pub pad_token: Option<String>,
    pub dtype: Dtype,
    pub returns: Returns,
}

impl ModelInputOptions {
    /// Reads them from the options object (whose keys `Options::read` has checked).
    pub fn read(env: &Env, object: &Unknown) -> napi::Result<ModelInputOptions> {
        let padding = match property(env, object, c"padding")? {
            None => PaddingOption::Unset,
            Some(value) if value.get_type()? == ValueType::Boolean => {
                if super::raw::boolean(env, &value)? {
                    return Err(type_error(
                        env,
                        "options.padding is true; expected false, 'longest' or 'maxLength'",
                    ));
                }
                PaddingOption::Off
            }
            Some(value) if value.get_type()? == ValueType::String => {
                match choice(env, &value, "options.padding", &["longest", "maxLength"])? {
                    "longest" => PaddingOption::Longest,
                    _ => PaddingOption::MaxLength,
                }
            }
            Some(value) => {
                return Err(type_error(
                    env,
                    &format!(
                        "options.padding is {}; expected false, 'longest' or 'maxLength'",
                        describe(&value)
                    ),
                ));
            }
        };
        let number = |key: &std::ffi::CStr, name: &str| -> napi::Result<Option<usize>> {
            property(env, object, key)?
                .map(|value| whole_number(env, &value, name, 1, u32::MAX).map(|n| n as usize))
                .transpose()
        };
        let dtype = property(env, object, c"dtype")?
            .map(|value| choice(env, &value, "options.dtype", &["int64", "int32", "uint32"]))
            .transpose()?;
        let flag = |key: &std::ffi::CStr| -> napi::Result<bool> {
            Ok(bool_option(env, object, key)?.unwrap_or(false))
        };
        Ok(ModelInputOptions {
            padding,
            max_length: number(c"maxLength", "options.maxLength")?,
            pad_to_multiple_of: number(c"padToMultipleOf", "options.padToMultipleOf")?,
            pad_side: property(env, object, c"padSide")?
                .map(|value| choice(env, &value, "options.padSide", &["right", "left"]))
                .transpose()?
                .map(side),
            pad_token: property(env, object, c"padToken")?
                .map(|value| string(env, &value, "options.padToken"))
                .transpose()?,
            dtype: match dtype {
                Some("int32") => Dtype::Int32,
                Some("uint32") => Dtype::Uint32,
                _ => Dtype::Int64,
            },
            returns: Returns {
                offsets: flag(c"returnOffsets")?,
                tokens: flag(c"returnTokens")?,
                word_ids: flag(c"returnWordIds")?,
                sequence_ids: flag(c"returnSequenceIds")?,
                special_tokens_mask: flag(c"returnSpecialTokensMask")?,
                overflowing: flag(c"returnOverflowing")?,
            },
        })
    }

    /// The padding these options ask for on `tokenizer`.
    pub fn padding(&self, tokenizer: &Tokenizer) -> Result<Option<Padding>, engine::Error> {
        let file = tokenizer.file_padding();
        let to = match self.padding {
            PaddingOption::Off => None,
            PaddingOption::Longest => Some(PadTo::Longest),
            PaddingOption::MaxLength => {
                let length = self
                    .max_length
                    .or(file.as_ref().and_then(|f| f.fixed))
                    .or(tokenizer.file_truncation().map(|t| t.max_length))
                    .or_else(|| tokenizer.model_max_length())
                    .ok_or_else(|| {
                        engine::Error::new(
                            engine::ErrorKind::NotConfigured,
                            "padding: 'maxLength' needs a length, and this tokenizer has none (no \
                             padding or truncation length in its file, no model_max_length): \
                             pass maxLength",
                        )
                    })?;
                Some(PadTo::Fixed(length))
            }
            PaddingOption::Unset => file.as_ref().map(|file| match file.fixed {
                Some(length) => PadTo::Fixed(length),
                None => PadTo::Longest,
            }),
        };
        tokenizer.resolve_padding(
            to,
            self.pad_to_multiple_of,
            self.pad_side,
            self.pad_token.as_deref(),
        )
    }
}
