//! Readers of JS arguments and options: each checks a value's type and range and, when it is
//! wrong, throws the error class a JS user expects with a message that names the argument
//! (`texts[3]`, `options.threads`) and says what is accepted.

use std::ffi::CStr;
use std::path::PathBuf;

use napi::bindgen_prelude::{JsValue, TypedArrayType, Unknown};
use napi::{Env, ValueType};

use super::errors::{ErrorClass, from_engine, js_error, range_error, type_error};
use super::raw;
use crate::engine::{
    self, ChatMessage, HarmonyTerminator, NewToken, RecipientPlacement, edit_distance, is_typo,
};

/// How a JS value is described in an error: its `typeof`, with `null` and arrays told apart.
pub fn describe(value: &Unknown) -> &'static str {
    match value.get_type() {
        Ok(ValueType::Null) => "null",
        Ok(ValueType::Undefined) => "undefined",
        Ok(ValueType::Boolean) => "a boolean",
        Ok(ValueType::Number) => "a number",
        Ok(ValueType::BigInt) => "a bigint",
        Ok(ValueType::String) => "a string",
        Ok(ValueType::Symbol) => "a symbol",
        Ok(ValueType::Function) => "a function",
        Ok(ValueType::Object) if value.is_array().unwrap_or(false) => "an array",
        Ok(ValueType::Object) => "an object",
        _ => "a value of unknown type",
    }
}

/// `number` as JS prints it where Rust's spelling differs (`Infinity`, not `inf`).
pub fn as_js_prints(number: f64) -> String {
    match number {
        f64::INFINITY => "Infinity".to_owned(),
        f64::NEG_INFINITY => "-Infinity".to_owned(),
        _ => number.to_string(),
    }
}

/// A string argument, or a `TypeError` naming it as `what`.
pub fn string(env: &Env, value: &Unknown, what: &str) -> napi::Result<String> {
    if value.get_type()? != ValueType::String {
        return Err(type_error(
            env,
            &format!("{what} is {}; expected a string", describe(value)),
        ));
    }
    raw::string(env, value)
}

/// A `TypeError` naming `what` unless `value` is an array; the message says it expected an array
/// of `items`.
pub fn expect_array(env: &Env, value: &Unknown, what: &str, items: &str) -> napi::Result<()> {
    if value.is_array()? {
        return Ok(());
    }
    Err(type_error(
        env,
        &format!(
            "{what} is {}; expected an array of {items}",
            describe(value)
        ),
    ))
}

/// The keys of a token given to `withAddedTokens` as an object.
const NEW_TOKEN_KEYS: &[&str] = &["content", "singleWord", "lstrip", "rstrip", "normalized"];

/// `withAddedTokens`' tokens: an array of strings, or of `{ content, singleWord?, lstrip?,
/// rstrip?, normalized? }` (Python's `AddedToken`), in any mix; a `TypeError` names the element
/// that is neither.
pub fn new_token_list(env: &Env, value: &Unknown, what: &str) -> napi::Result<Vec<NewToken>> {
    expect_array(env, value, what, "strings or { content, … } objects")?;
    raw::elements(env, value)?
        .iter()
        .enumerate()
        .map(|(index, element)| {
            let name = format!("{what}[{index}]");
            if element.get_type()? != ValueType::Object || element.is_array()? {
                return string(env, element, &name).map(NewToken::from);
            }
            for key in raw::own_keys(env, element)? {
                if !NEW_TOKEN_KEYS.contains(&key.as_str()) {
                    return Err(type_error(
                        env,
                        &format!(
                            "{name} has the key {key:?}; a token is a string or an object of {}",
                            NEW_TOKEN_KEYS.join(", ")
                        ),
                    ));
                }
            }
            let content = property(env, element, c"content")?.ok_or_else(|| {
                type_error(env, &format!("{name} has no content, the token's text"))
            })?;
            let flag = |key: &CStr| -> napi::Result<Option<bool>> {
                property(env, element, key)?
                    .map(|value| boolean(env, &value, &format!("{name}.{}", key.to_string_lossy())))
                    .transpose()
            };
            Ok(NewToken {
                content: string(env, &content, &format!("{name}.content"))?,
                single_word: flag(c"singleWord")?.unwrap_or(false),
                lstrip: flag(c"lstrip")?.unwrap_or(false),
                rstrip: flag(c"rstrip")?.unwrap_or(false),
                normalized: flag(c"normalized")?,
            })
        })
        .collect()
}

/// A boolean argument, or a `TypeError` naming it as `what`.
pub fn boolean(env: &Env, value: &Unknown, what: &str) -> napi::Result<bool> {
    if value.get_type()? != ValueType::Boolean {
        return Err(type_error(
            env,
            &format!("{what} is {}; expected true or false", describe(value)),
        ));
    }
    raw::boolean(env, value)
}

/// A whole number from `min` to `max`: a `TypeError` if `value` is not a number, a `RangeError`
/// if it is not whole or out of range.
pub fn whole_number(
    env: &Env,
    value: &Unknown,
    what: &str,
    min: u32,
    max: u32,
) -> napi::Result<u32> {
    if value.get_type()? != ValueType::Number {
        return Err(type_error(
            env,
            &format!("{what} is {}; expected a whole number", describe(value)),
        ));
    }
    let number = raw::number(env, value)?;
    if number.fract() != 0.0 || !(f64::from(min)..=f64::from(max)).contains(&number) {
        return Err(range_error(
            env,
            &format!(
                "{what} is {}; expected a whole number from {min} to {max}",
                as_js_prints(number)
            ),
        ));
    }
    Ok(number as u32)
}

/// A `Uint32Array`, or an array of whole numbers from 0 to 2^32 - 1; `noun` names what the
/// numbers are in errors (`ids`).
pub fn u32_list(env: &Env, value: &Unknown, what: &str, noun: &str) -> napi::Result<Vec<u32>> {
    match raw::typed_array_type(env, value)? {
        Some(TypedArrayType::Uint32) => return raw::uint32_elements(env, value),
        Some(_) => {}
        None if value.is_array()? => {
            let items = raw::elements(env, value)?;
            let mut numbers = Vec::with_capacity(items.len());
            for (index, item) in items.iter().enumerate() {
                if item.get_type()? != ValueType::Number {
                    return Err(type_error(
                        env,
                        &format!(
                            "{what}[{index}] is {}; {noun} are whole numbers",
                            describe(item)
                        ),
                    ));
                }
                let number = raw::number(env, item)?;
                if number.fract() != 0.0 || !(0.0..=f64::from(u32::MAX)).contains(&number) {
                    return Err(range_error(
                        env,
                        &format!(
                            "{what}[{index}] is {}; {noun} are whole numbers from 0 to 4294967295",
                            as_js_prints(number)
                        ),
                    ));
                }
                numbers.push(number as u32);
            }
            return Ok(numbers);
        }
        None => {}
    }
    Err(type_error(
        env,
        &format!(
            "{what} is {}; expected a Uint32Array or an array of numbers",
            describe(value)
        ),
    ))
}

/// A list of id lists, each read as [`u32_list`] reads one.
pub fn id_lists(env: &Env, value: &Unknown, what: &str) -> napi::Result<Vec<Vec<u32>>> {
    expect_array(env, value, what, "id lists")?;
    raw::elements(env, value)?
        .iter()
        .enumerate()
        .map(|(index, item)| u32_list(env, item, &format!("{what}[{index}]"), "ids"))
        .collect()
}

/// Chat messages read from JS: each `{ role?, name?, content }` with Harmony's optional
/// `channel`, `recipient`, `recipientPlacement`, `constraint` and `terminator`; other keys ignored
/// (a message object of an API client carries more).
pub struct ChatMessages(Vec<OwnedChatMessage>);

/// One message as read, owning its strings.
struct OwnedChatMessage {
    role: Option<String>,
    name: Option<String>,
    content: String,
    channel: Option<String>,
    recipient: Option<String>,
    recipient_placement: RecipientPlacement,
    constraint: Option<String>,
    terminator: HarmonyTerminator,
}

impl ChatMessages {
    /// The messages as the engine takes them, borrowing these.
    pub fn as_engine(&self) -> Vec<ChatMessage<'_>> {
        self.0
            .iter()
            .map(|m| ChatMessage {
                role: m.role.as_deref(),
                name: m.name.as_deref(),
                content: &m.content,
                channel: m.channel.as_deref(),
                recipient: m.recipient.as_deref(),
                recipient_placement: m.recipient_placement,
                constraint: m.constraint.as_deref(),
                terminator: m.terminator,
            })
            .collect()
    }
}

/// An array of chat messages, or a `TypeError` naming the message and field at fault.
pub fn chat_messages(env: &Env, value: &Unknown, what: &str) -> napi::Result<ChatMessages> {
    expect_array(
        env,
        value,
        what,
        "messages such as { role: 'user', content: 'Hi' }",
    )?;
    let mut messages = Vec::new();
    for (index, message) in raw::elements(env, value)?.iter().enumerate() {
        let at = format!("{what}[{index}]");
        if message.get_type()? != ValueType::Object || message.is_array()? {
            return Err(type_error(
                env,
                &format!(
                    "{at} is {}; expected {{ role, content }}",
                    describe(message)
                ),
            ));
        }
        let field = |key: &CStr| -> napi::Result<Option<String>> {
            property(env, message, key)?
                .map(|v| string(env, &v, &format!("{at}.{}", key.to_string_lossy())))
                .transpose()
        };
        let content = field(c"content")?.ok_or_else(|| {
            type_error(
                env,
                &format!("{at}.content is undefined; expected a string"),
            )
        })?;
        // A wrong type is a TypeError, a string that is not one of the choices a RangeError.
        let placement = property(env, message, c"recipientPlacement")?
            .map(|v| {
                choice(
                    env,
                    &v,
                    &format!("{at}.recipientPlacement"),
                    &["channel", "role"],
                )
            })
            .transpose()?;
        let recipient_placement = match placement {
            Some("role") => RecipientPlacement::Role,
            _ => RecipientPlacement::Channel,
        };
        let terminator = property(env, message, c"terminator")?
            .map(|v| {
                choice(
                    env,
                    &v,
                    &format!("{at}.terminator"),
                    &["<|end|>", "<|return|>", "<|call|>"],
                )
            })
            .transpose()?
            .and_then(HarmonyTerminator::from_text)
            .unwrap_or_default();
        messages.push(OwnedChatMessage {
            role: field(c"role")?,
            name: field(c"name")?,
            content,
            channel: field(c"channel")?,
            recipient: field(c"recipient")?,
            recipient_placement,
            constraint: field(c"constraint")?,
            terminator,
        });
    }
    Ok(ChatMessages(messages))
}

/// An object's property, `None` when it is `undefined`.
pub fn property<'env>(
    env: &Env,
    object: &Unknown<'env>,
    key: &CStr,
) -> napi::Result<Option<Unknown<'env>>> {
    let value = raw::named_property(env, object, key).map_err(|_| {
        js_error(
            env,
            ErrorClass::Error,
            &format!("cannot read option {key:?}"),
        )
    })?;
    Ok(match value.get_type()? {
        ValueType::Undefined => None,
        _ => Some(value),
    })
}

/// The options object of a call, checked: `undefined` and `null` mean no options; anything else
/// but a plain object is a `TypeError`, and so is a key that is not in `keys` (naming it, and the
/// nearest valid key). `call` names the method in errors (`encodeBatch`).
pub fn options_object<'env>(
    env: &Env,
    value: Option<Unknown<'env>>,
    call: &str,
    keys: &[&str],
) -> napi::Result<Option<Unknown<'env>>> {
    let Some(value) = value else { return Ok(None) };
    match value.get_type()? {
        ValueType::Undefined | ValueType::Null => return Ok(None),
        ValueType::Object if !value.is_array()? => {}
        value_type => {
            // tiktoken and js-tiktoken take the special tokens as arguments of their own.
            let positional_special = keys.contains(&"allowedSpecial")
                && (value_type == ValueType::String || value.is_array()?);
            let hint = if positional_special {
                format!(
                    " such as {{ allowedSpecial: 'all' }} (the allowedSpecial and \
                     disallowedSpecial arguments of tiktoken's and js-tiktoken's encode are \
                     options here: {call}(text, {{ allowedSpecial, disallowedSpecial }}); \
                     batchtok/js-tiktoken and batchtok/tiktoken take them as those do)"
                )
            } else {
                String::new()
            };
            return Err(type_error(
                env,
                &format!("options is {}; expected an object{hint}", describe(&value)),
            ));
        }
    }
    for key in raw::own_keys(env, &value)? {
        if !keys.contains(&key.as_str()) {
            return Err(type_error(env, &unknown_key(&key, call, keys)));
        }
    }
    Ok(Some(value))
}

/// The message for an option `key` that `call` does not take.
fn unknown_key(key: &str, call: &str, keys: &[&str]) -> String {
    let nearest = keys
        .iter()
        .map(|valid| {
            (
                edit_distance(&key.to_lowercase(), &valid.to_lowercase()),
                *valid,
            )
        })
        .min();
    let listed = keys.join(", ");
    match nearest {
        // Close enough to be a typo: at most a third of the key's letters differ.
        Some((distance, valid)) if is_typo(distance, valid) => format!(
            "options.{key} is not an option of {call}; did you mean '{valid}'? (options: {listed})"
        ),
        _ if keys.is_empty() => format!("options.{key} is not an option of {call}; it takes none"),
        _ => format!("options.{key} is not an option of {call} (options: {listed})"),
    }
}

/// A boolean option, `None` when unset.
pub fn bool_option(env: &Env, object: &Unknown, key: &CStr) -> napi::Result<Option<bool>> {
    property(env, object, key)?
        .map(|value| boolean(env, &value, &option_name(key)))
        .transpose()
}

/// A whole-number option from `min` to `max`, `None` when unset.
pub fn whole_number_option(
    env: &Env,
    object: &Unknown,
    key: &CStr,
    min: u32,
    max: u32,
) -> napi::Result<Option<u32>> {
    property(env, object, key)?
        .map(|value| whole_number(env, &value, &option_name(key), min, max))
        .transpose()
}

/// A string option that must be one of `choices`, `None` when unset: a `TypeError` for a value
/// that is not a string, a `RangeError` listing the choices for one that is not among them.
pub fn choice_option<'c>(
    env: &Env,
    object: &Unknown,
    key: &CStr,
    choices: &[&'c str],
) -> napi::Result<Option<&'c str>> {
    property(env, object, key)?
        .map(|value| choice(env, &value, &option_name(key), choices))
        .transpose()
}

/// The keys of `Tokenizer.fromEncoding`'s and `fromModel`'s options.
const EMBEDDED_KEYS: &[&str] = &["specialTokens"];

/// The special tokens of `options.specialTokens` (an object of text to id, as tiktoken's
/// `special_tokens` dict and js-tiktoken's `extendSpecialTokens`), for `call`; none when
/// unset. A value that is not a whole number from 0 to 2^32 - 1 is an error naming its key.
pub fn special_tokens_option(
    env: &Env,
    options: Option<Unknown>,
    call: &str,
) -> napi::Result<Vec<(String, u32)>> {
    match options_object(env, options, call, EMBEDDED_KEYS)? {
        Some(options) => special_tokens_of(env, &options),
        None => Ok(Vec::new()),
    }
}

/// `options.specialTokens` of an options object; none when unset.
fn special_tokens_of(env: &Env, options: &Unknown) -> napi::Result<Vec<(String, u32)>> {
    let Some(tokens) = property(env, options, c"specialTokens")? else {
        return Ok(Vec::new());
    };
    if tokens.get_type()? != ValueType::Object || tokens.is_array()? {
        return Err(type_error(
            env,
            &format!(
                "options.specialTokens is {}; expected an object of each token's text and id, \
                 e.g. {{ '<|im_start|>': 100264 }}",
                describe(&tokens)
            ),
        ));
    }
    raw::own_entries(env, &tokens)?
        .into_iter()
        .map(|(text, id)| {
            let what = format!("options.specialTokens[{text:?}]");
            Ok((text, whole_number(env, &id, &what, 0, u32::MAX)?))
        })
        .collect()
}

/// The keys of `withAddedTokens`' options.
const ADDED_TOKENS_KEYS: &[&str] = &["special"];

/// `withAddedTokens`' `options.special`: add the tokens as special ones (default false).
pub fn special_option(env: &Env, options: Option<Unknown>) -> napi::Result<bool> {
    Ok(
        match options_object(env, options, "withAddedTokens", ADDED_TOKENS_KEYS)? {
            Some(options) => bool_option(env, &options, c"special")?.unwrap_or(false),
            None => false,
        },
    )
}

/// What `Tokenizer.fromTiktoken`'s options say: the regex that splits text (tiktoken's
/// `pat_str`), the special tokens and the encoding's name.
pub struct RankFileOptions {
    pub pattern: String,
    pub special_tokens: Vec<(String, u32)>,
    pub name: String,
}

/// The keys of `Tokenizer.fromTiktoken`'s options.
const RANK_FILE_KEYS: &[&str] = &["pattern", "specialTokens", "name"];

/// The name of an encoding read from a rank file when its options give none.
const RANK_FILE_NAME: &str = "custom";

/// `Tokenizer.fromTiktoken`'s options; `pattern` is required, since no rank file says which
/// regex it was made with.
pub fn rank_file_options(env: &Env, options: Option<Unknown>) -> napi::Result<RankFileOptions> {
    let missing = || {
        type_error(
            env,
            "fromTiktoken needs options.pattern, the regex that splits text for the ranks \
             (tiktoken's pat_str); for Llama 3's tokenizer.model it is cl100k_base's",
        )
    };
    let options =
        options_object(env, options, "fromTiktoken", RANK_FILE_KEYS)?.ok_or_else(missing)?;
    let pattern = property(env, &options, c"pattern")?.ok_or_else(missing)?;
    let name = match property(env, &options, c"name")? {
        Some(name) => string(env, &name, "options.name")?,
        None => RANK_FILE_NAME.to_owned(),
    };
    Ok(RankFileOptions {
        pattern: string(env, &pattern, "options.pattern")?,
        special_tokens: special_tokens_of(env, &options)?,
        name,
    })
}

/// What `read` makes of `value`, a file's contents given as a string or as bytes; `name` is the
/// argument's name and `whose` the file's, as errors say them.
pub fn file_contents<T>(
    env: &Env,
    value: &Unknown,
    name: &str,
    whose: &str,
    read: impl Fn(&[u8]) -> Result<T, engine::Error>,
) -> napi::Result<T> {
    match raw::with_uint8_bytes(env, value, &read)? {
        Some(read) => read,
        None if value.get_type()? == ValueType::String => read(raw::string(env, value)?.as_bytes()),
        None => return Err(contents_type_error(env, value, name, whose)),
    }
    .map_err(|e| from_engine(env, &e))
}

/// A file's contents given as a string (as UTF-8) or as bytes, copied out of `value` so that they
/// can be read off the main thread; named as [`file_contents`] names them.
pub fn owned_file_contents(
    env: &Env,
    value: &Unknown,
    name: &str,
    whose: &str,
) -> napi::Result<Vec<u8>> {
    if let Some(bytes) = raw::with_uint8_bytes(env, value, <[u8]>::to_vec)? {
        return Ok(bytes);
    }
    if value.get_type()? == ValueType::String {
        return Ok(raw::string(env, value)?.into_bytes());
    }
    Err(contents_type_error(env, value, name, whose))
}

/// The `TypeError` for a file's contents given as neither a string nor a `Uint8Array`.
fn contents_type_error(env: &Env, value: &Unknown, name: &str, whose: &str) -> napi::Error {
    type_error(
        env,
        &format!(
            "{name} is {}; expected {whose} contents, a string or a Uint8Array \
             (fs.readFileSync(path))",
            describe(value)
        ),
    )
}

/// The keys of `Tokenizer.fromTekken`'s options.
const TEKKEN_KEYS: &[&str] = &["name"];

/// `Tokenizer.fromTekken`'s options: the encoding's name.
pub fn tekken_name(env: &Env, options: Option<Unknown>) -> napi::Result<String> {
    match options_object(env, options, "fromTekken", TEKKEN_KEYS)? {
        Some(options) => match property(env, &options, c"name")? {
            Some(name) => string(env, &name, "options.name"),
            None => Ok(engine::TEKKEN_NAME.to_owned()),
        },
        None => Ok(engine::TEKKEN_NAME.to_owned()),
    }
}

/// A string that must be one of `choices`, named `name` in errors: a `TypeError` for a value that
/// is not a string, a `RangeError` listing the choices for one that is not among them.
pub fn choice<'c>(
    env: &Env,
    value: &Unknown,
    name: &str,
    choices: &[&'c str],
) -> napi::Result<&'c str> {
    let listed = choices
        .iter()
        .map(|choice| format!("'{choice}'"))
        .collect::<Vec<_>>()
        .join(", ");
    if value.get_type()? != ValueType::String {
        return Err(type_error(
            env,
            &format!("{name} is {}; expected one of {listed}", describe(value)),
        ));
    }
    let text = raw::string(env, value)?;
    choices
        .iter()
        .find(|choice| **choice == text)
        .copied()
        .ok_or_else(|| {
            range_error(
                env,
                &format!("{name} is {text:?}; expected one of {listed}"),
            )
        })
}

/// `options.<key>`, as errors name an option.
pub fn option_name(key: &CStr) -> String {
    format!("options.{}", key.to_string_lossy())
}

/// A tokenizer.json's path: a string path, a `file:` URL string, or a `URL` object (read by its
/// `href`). `what` names the argument in errors.
pub fn path_argument(env: &Env, value: &Unknown, what: &str) -> napi::Result<PathBuf> {
    let url = match value.get_type()? {
        ValueType::String => {
            let text = string(env, value, what)?;
            if !text
                .get(..5)
                .is_some_and(|s| s.eq_ignore_ascii_case("file:"))
            {
                return Ok(PathBuf::from(text));
            }
            text
        }
        ValueType::Object => match property(env, value, c"href")? {
            Some(href) if href.get_type()? == ValueType::String => string(env, &href, what)?,
            _ => {
                return Err(type_error(
                    env,
                    &format!("{what} is an object without an href; expected a string or a URL"),
                ));
            }
        },
        _ => {
            return Err(type_error(
                env,
                &format!("{what} is {}; expected a string or a URL", describe(value)),
            ));
        }
    };
    engine::file_url_to_path(&url).map_err(|e| js_error(env, ErrorClass::Type, e.message()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_key_names_the_nearest_valid_one_when_it_is_a_typo() {
        let keys = ["threads", "policy", "releaseMemory"];
        assert_eq!(
            unknown_key("thread", "new Scheduler()", &keys),
            "options.thread is not an option of new Scheduler(); did you mean 'threads'? \
             (options: threads, policy, releaseMemory)"
        );
        assert_eq!(
            unknown_key("colour", "new Scheduler()", &keys),
            "options.colour is not an option of new Scheduler() (options: threads, policy, \
             releaseMemory)"
        );
        assert_eq!(
            unknown_key("x", "f", &[]),
            "options.x is not an option of f; it takes none"
        );
    }
}
