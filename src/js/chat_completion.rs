//! `countChatCompletionTokens`'s request, read from JS: gpt-tokenizer's `ChatCompletionRequest`
//! (messages, function definitions with JSON-schema parameters, `function_call`), checked field by
//! field into the engine's [`engine::ChatCompletionRequest`], with a `TypeError` naming the field
//! at fault (`request.functions[0].parameters.properties.city.enum[2]`).
//!
//! Accepted as gpt-tokenizer's types declare it, with what JSON requests carry besides: `null`
//! wherever a field is optional (gpt-tokenizer reads it as absent), keys it does not read (a
//! schema's `format`, `default`, `additionalProperties`…) ignored, a `type` it does not know (a
//! list of types, `'foo'`), no `type`, or a boolean schema, written `any` as gpt-tokenizer writes
//! it. Values of the wrong kind for a field it reads (a number for a name, a string for
//! `properties`) are refused.

use std::ffi::CStr;

use napi::bindgen_prelude::Unknown;
use napi::{Env, JsValue, ValueType};
use napi_derive::napi;

use super::args::{describe, string};
use super::errors::{read_failed, type_error};
use super::raw;
use crate::engine::{
    self, EnumValue, FunctionCallChoice, FunctionDefinition, MessageFunctionCall, ObjectProperties,
    RequestMessage, Schema, SchemaKind,
};

/// A chat completion request, as gpt-tokenizer's `countChatCompletionTokens` takes it (other
/// keys, such as `model` or `temperature`, are ignored).
#[napi(object, object_to_js = false, object_from_js = false)]
#[expect(
    dead_code,
    reason = "index.d.ts's type; `chat_completion_request` reads requests by hand"
)]
pub struct ChatCompletionRequest {
    /// The conversation.
    #[napi(ts_type = "readonly ChatCompletionMessage[]")]
    pub messages: Vec<ChatCompletionMessage>,
    /// The functions the model may call.
    #[napi(ts_type = "readonly ChatCompletionFunctionDefinition[] | null")]
    pub functions: Option<Vec<ChatCompletionFunctionDefinition>>,
    /// `'auto'` (the model decides), `'none'` (it answers in text) or `{ name }` (it must call
    /// this function).
    #[napi(
        js_name = "function_call",
        ts_type = "'auto' | 'none' | { name: string } | null"
    )]
    pub function_call: Option<bool>,
}

/// One message of a chat completion request.
#[napi(object, object_to_js = false, object_from_js = false)]
#[expect(
    dead_code,
    reason = "index.d.ts's type; `chat_completion_request` reads requests by hand"
)]
pub struct ChatCompletionMessage {
    /// `'system'`, `'user'`, `'assistant'`, `'function'`…
    #[napi(ts_type = "string | null")]
    pub role: Option<String>,
    /// The speaker's name; for a `'function'` message, the function's.
    #[napi(ts_type = "string | null")]
    pub name: Option<String>,
    /// What is said (`null` for an assistant message that only calls a function).
    #[napi(ts_type = "string | null")]
    pub content: Option<String>,
    /// The function an assistant message calls.
    #[napi(
        js_name = "function_call",
        ts_type = "{ name?: string | null, arguments?: string | null } | null"
    )]
    pub function_call: Option<bool>,
}

/// A function the model may call.
#[napi(object, object_to_js = false, object_from_js = false)]
#[expect(
    dead_code,
    reason = "index.d.ts's type; `chat_completion_request` reads requests by hand"
)]
pub struct ChatCompletionFunctionDefinition {
    /// The function's name.
    pub name: String,
    /// What it does.
    #[napi(ts_type = "string | null")]
    pub description: Option<String>,
    /// Its arguments: an object schema whose `properties` and `required` are read.
    #[napi(ts_type = "FunctionParameterSchema | null")]
    pub parameters: Option<bool>,
}

/// A JSON schema of a function's parameters, as far as the count reads it; other keywords
/// (`minimum`, `format`, `additionalProperties`…) are ignored.
#[napi(object, object_to_js = false, object_from_js = false)]
#[expect(
    dead_code,
    reason = "index.d.ts's type; `chat_completion_request` reads requests by hand"
)]
pub struct FunctionParameterSchema {
    /// `'string'`, `'number'`, `'integer'`, `'boolean'`, `'null'`, `'array'` or `'object'`; any
    /// other type, a list of types or none counts as `any`.
    #[napi(js_name = "type", ts_type = "string | readonly string[] | null")]
    pub kind: Option<String>,
    /// Written as a comment above the property (for the function's properties and theirs).
    #[napi(ts_type = "string | null")]
    pub description: Option<String>,
    /// The values a string or number may take.
    #[napi(
        js_name = "enum",
        ts_type = "ReadonlyArray<string | number | boolean | null> | null"
    )]
    pub choices: Option<bool>,
    /// An array's items.
    #[napi(ts_type = "FunctionParameterSchema | boolean | null")]
    pub items: Option<bool>,
    /// An object's properties.
    #[napi(ts_type = "Record<string, FunctionParameterSchema | boolean> | null")]
    pub properties: Option<bool>,
    /// The names of an object's required properties.
    #[napi(ts_type = "readonly string[] | null")]
    pub required: Option<bool>,
}

/// How deep schemas may nest (an array's items, an object's properties) below a function's
/// parameters. Reading and writing a schema recurse once per level on the JS thread's stack, so
/// the depth is bounded; OpenAI's structured outputs accept a few levels (5, later 10), so no
/// request the API takes comes near it, and a schema that contains itself stops here with a
/// `TypeError` rather than overflowing the stack.
const MAX_SCHEMA_DEPTH: usize = 100;

/// `request` read into the engine's request, or a `TypeError` naming the field at fault; `what`
/// names the argument (`request`).
pub fn chat_completion_request(
    env: &Env,
    request: &Unknown,
    what: &str,
) -> napi::Result<engine::ChatCompletionRequest> {
    expect_object(
        env,
        request,
        what,
        "{ messages, functions?, function_call? }",
    )?;
    let at = |key: &str| format!("{what}.{key}");
    let messages = match present(env, request, c"messages")? {
        Some(messages) => list(env, &messages, &at("messages"), "messages")?
            .iter()
            .enumerate()
            .map(|(index, message)| {
                request_message(env, message, &format!("{what}.messages[{index}]"))
            })
            .collect::<napi::Result<_>>()?,
        None => {
            return Err(type_error(
                env,
                &format!(
                    "{what}.messages is missing; expected an array of messages such as {{ role: 'user', content: 'Hi' }}"
                ),
            ));
        }
    };
    let functions = match present(env, request, c"functions")? {
        Some(functions) => list(env, &functions, &at("functions"), "function definitions")?
            .iter()
            .enumerate()
            .map(|(index, function)| {
                function_definition(env, function, &format!("{what}.functions[{index}]"))
            })
            .collect::<napi::Result<_>>()?,
        None => Vec::new(),
    };
    let function_call = present(env, request, c"function_call")?
        .map(|choice| function_call_choice(env, &choice, &at("function_call")))
        .transpose()?;
    Ok(engine::ChatCompletionRequest {
        messages,
        functions,
        function_call,
    })
}

fn request_message(env: &Env, message: &Unknown, at: &str) -> napi::Result<RequestMessage> {
    expect_object(env, message, at, "{ role, content }")?;
    let function_call = match present(env, message, c"function_call")? {
        Some(call) => {
            let at = format!("{at}.function_call");
            expect_object(env, &call, &at, "{ name, arguments }")?;
            Some(MessageFunctionCall {
                name: optional_string(env, &call, c"name", &at)?,
                arguments: optional_string(env, &call, c"arguments", &at)?,
            })
        }
        None => None,
    };
    Ok(RequestMessage {
        role: optional_string(env, message, c"role", at)?,
        name: optional_string(env, message, c"name", at)?,
        content: optional_string(env, message, c"content", at)?,
        function_call,
    })
}

fn function_definition(
    env: &Env,
    function: &Unknown,
    at: &str,
) -> napi::Result<FunctionDefinition> {
    expect_object(env, function, at, "{ name, description?, parameters? }")?;
    let name = optional_string(env, function, c"name", at)?.ok_or_else(|| {
        type_error(
            env,
            &format!("{at}.name is missing; a function needs a name (a string)"),
        )
    })?;
    let parameters = match present(env, function, c"parameters")? {
        Some(parameters) => {
            let at = format!("{at}.parameters");
            expect_object(
                env,
                &parameters,
                &at,
                "an object schema such as { type: 'object', properties: {…} }",
            )?;
            object_properties(env, &parameters, &at, 0)?
        }
        None => ObjectProperties::default(),
    };
    Ok(FunctionDefinition {
        name,
        description: optional_string(env, function, c"description", at)?,
        parameters,
    })
}

fn function_call_choice(env: &Env, choice: &Unknown, at: &str) -> napi::Result<FunctionCallChoice> {
    let expected = "expected 'auto', 'none' or { name }";
    match choice.get_type()? {
        ValueType::String => match string(env, choice, at)?.as_str() {
            "auto" => Ok(FunctionCallChoice::Auto),
            "none" => Ok(FunctionCallChoice::None),
            other => Err(type_error(env, &format!("{at} is {other:?}; {expected}"))),
        },
        ValueType::Object if !choice.is_array()? => {
            let name = optional_string(env, choice, c"name", at)?
                .ok_or_else(|| type_error(env, &format!("{at}.name is missing; {expected}")))?;
            Ok(FunctionCallChoice::Named(name))
        }
        _ => Err(type_error(
            env,
            &format!("{at} is {}; {expected}", describe(choice)),
        )),
    }
}

/// The `properties` and `required` of an object schema.
fn object_properties(
    env: &Env,
    object: &Unknown,
    at: &str,
    depth: usize,
) -> napi::Result<ObjectProperties> {
    let mut properties = Vec::new();
    if let Some(map) = present(env, object, c"properties")? {
        let at = format!("{at}.properties");
        expect_object(env, &map, &at, "an object of property schemas")?;
        for (key, value) in raw::own_entries(env, &map)? {
            let schema = schema(env, &value, &format!("{at}.{key}"), depth + 1)?;
            properties.push((key, schema));
        }
    }
    let mut required = Vec::new();
    if let Some(names) = present(env, object, c"required")? {
        let at = format!("{at}.required");
        for (index, name) in list(env, &names, &at, "property names")?.iter().enumerate() {
            required.push(string(env, name, &format!("{at}[{index}]"))?);
        }
    }
    Ok(ObjectProperties {
        properties,
        required,
    })
}

/// A property's schema: an object, or a boolean schema (`true`: anything), both of which
/// gpt-tokenizer renders.
fn schema(env: &Env, value: &Unknown, at: &str, depth: usize) -> napi::Result<Schema> {
    if depth > MAX_SCHEMA_DEPTH {
        return Err(type_error(
            env,
            &format!(
                "{at} is nested {depth} schemas deep; batchtok reads at most {MAX_SCHEMA_DEPTH} \
                 (does a schema contain itself?)"
            ),
        ));
    }
    if value.get_type()? == ValueType::Boolean {
        return Ok(Schema::default());
    }
    expect_object(env, value, at, "a schema such as { type: 'string' }")?;
    let description = optional_string(env, value, c"description", at)?;
    let kind = match present(env, value, c"type")? {
        None => SchemaKind::Any,
        Some(kind) => match kind.get_type()? {
            ValueType::String => schema_kind(env, value, &string(env, &kind, at)?, at, depth)?,
            // A list of types (`['string', 'null']`): gpt-tokenizer writes `any`.
            ValueType::Object if kind.is_array()? => SchemaKind::Any,
            _ => {
                return Err(type_error(
                    env,
                    &format!(
                        "{at}.type is {}; expected a string such as 'string' or 'object'",
                        describe(&kind)
                    ),
                ));
            }
        },
    };
    Ok(Schema { description, kind })
}

/// What a schema of type `kind` shows: its `enum`, `items` or `properties`.
fn schema_kind(
    env: &Env,
    schema_value: &Unknown,
    kind: &str,
    at: &str,
    depth: usize,
) -> napi::Result<SchemaKind> {
    Ok(match kind {
        "string" => SchemaKind::String(choices(env, schema_value, at)?),
        "number" | "integer" => SchemaKind::Number(choices(env, schema_value, at)?),
        "boolean" => SchemaKind::Boolean,
        "null" => SchemaKind::Null,
        "array" => {
            let items = match present(env, schema_value, c"items")? {
                // A list of item schemas (a tuple's): gpt-tokenizer writes `any[]`.
                Some(items) if items.is_array()? => Some(Box::new(Schema::default())),
                Some(items) => Some(Box::new(schema(
                    env,
                    &items,
                    &format!("{at}.items"),
                    depth + 1,
                )?)),
                None => None,
            };
            SchemaKind::Array(items)
        }
        "object" => SchemaKind::Object(object_properties(env, schema_value, at, depth)?),
        _ => SchemaKind::Any,
    })
}

/// A schema's `enum`, each value a string, number, boolean or `null`.
fn choices(env: &Env, schema_value: &Unknown, at: &str) -> napi::Result<Option<Vec<EnumValue>>> {
    let Some(values) = present(env, schema_value, c"enum")? else {
        return Ok(None);
    };
    let at = format!("{at}.enum");
    let mut choices = Vec::new();
    for (index, value) in list(env, &values, &at, "values")?.iter().enumerate() {
        choices.push(match value.get_type()? {
            ValueType::String => EnumValue::String(raw::string_utf16(env, value)?),
            ValueType::Number => EnumValue::Number(raw::number(env, value)?),
            ValueType::Boolean => EnumValue::Boolean(raw::boolean(env, value)?),
            ValueType::Null => EnumValue::Null,
            _ => {
                return Err(type_error(
                    env,
                    &format!(
                        "{at}[{index}] is {}; expected a string, number, boolean or null",
                        describe(value)
                    ),
                ));
            }
        });
    }
    Ok(Some(choices))
}

/// `object[key]`, `None` when it is `undefined` or `null` (gpt-tokenizer reads both as absent).
/// A getter or proxy that throws has its own exception reach the caller.
fn present<'env>(
    env: &Env,
    object: &Unknown<'env>,
    key: &CStr,
) -> napi::Result<Option<Unknown<'env>>> {
    let value = raw::named_property(env, object, key)
        .map_err(|status| read_failed(env, status, &format!("{key:?} of the request")))?;
    Ok(match value.get_type()? {
        ValueType::Undefined | ValueType::Null => None,
        _ => Some(value),
    })
}

/// An optional string field `key` of `object` (at `at`).
fn optional_string(
    env: &Env,
    object: &Unknown,
    key: &CStr,
    at: &str,
) -> napi::Result<Option<String>> {
    present(env, object, key)?
        .map(|value| string(env, &value, &format!("{at}.{}", key.to_string_lossy())))
        .transpose()
}

/// The elements of an array, or a `TypeError` saying `at` should be an array of `noun`.
fn list<'env>(
    env: &Env,
    value: &Unknown<'env>,
    at: &str,
    noun: &str,
) -> napi::Result<Vec<Unknown<'env>>> {
    if !value.is_array()? {
        return Err(type_error(
            env,
            &format!("{at} is {}; expected an array of {noun}", describe(value)),
        ));
    }
    raw::elements(env, value)
}

/// A `TypeError` unless `value` is an object and not an array.
fn expect_object(env: &Env, value: &Unknown, at: &str, expected: &str) -> napi::Result<()> {
    if value.get_type()? == ValueType::Object && !value.is_array()? {
        Ok(())
    } else {
        Err(type_error(
            env,
            &format!("{at} is {}; expected {expected}", describe(value)),
        ))
    }
}
