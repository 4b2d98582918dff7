//! The prompt tokens of a chat completion request that defines functions (OpenAI's function
//! calling), counted as gpt-tokenizer's `countChatCompletionTokens` counts them.
//!
//! OpenAI shows the model its functions as TypeScript-like declarations inside a
//! `namespace functions { … }` block, which the API adds to the system prompt. The count is the
//! sum of:
//!
//! - **each message**: the tokens of its role, content and name, one more for a name, the tokens
//!   of its `function_call`'s name and arguments and three more for having one, three per
//!   message, two fewer for a `function` message;
//! - **the reply's priming**: three;
//! - **the functions** (when there is at least one): the tokens of their declarations
//!   ([`render_functions`]) and nine more, four fewer when a system message is present; the first
//!   system message's content is counted with a newline appended unless it already ends with
//!   one, as it then runs into the declarations;
//! - **a pinned `function_call`**: one for `'none'`, the tokens of the name and four more for
//!   `{ name }`, nothing for `'auto'`.
//!
//! Texts are counted with special-token text as ordinary text. A field that is empty counts as
//! absent (no name overhead for an empty name, no comment for an empty description), as it does
//! in gpt-tokenizer. gpt-tokenizer offers this count on the models whose OpenAI model page lists
//! function calling ([`offers_function_calling`]); the accounting itself depends only on the
//! encoding.

use super::models::gpt_tokenizer_model;
use super::{AllowedSpecial, Error, ErrorKind, Family, Tokenizer};

/// A chat completion request, as far as its prompt's token count goes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatCompletionRequest {
    /// The conversation.
    pub messages: Vec<RequestMessage>,
    /// The functions the model may call; none means no declarations.
    pub functions: Vec<FunctionDefinition>,
    /// The request's `function_call`: `None` where it is absent.
    pub function_call: Option<FunctionCallChoice>,
}

/// One message of a request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestMessage {
    /// `system`, `user`, `assistant`, `function`...
    pub role: Option<String>,
    /// The speaker's name (for a `function` message, the function's).
    pub name: Option<String>,
    /// What is said; an assistant message that calls a function may have none.
    pub content: Option<String>,
    /// The call an assistant message makes.
    pub function_call: Option<MessageFunctionCall>,
}

/// The function call an assistant message makes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessageFunctionCall {
    /// The function called.
    pub name: Option<String>,
    /// Its arguments, a JSON text.
    pub arguments: Option<String>,
}

/// The request's choice of function call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FunctionCallChoice {
    /// `'auto'`: the model decides; costs nothing.
    Auto,
    /// `'none'`: the model answers in text.
    None,
    /// `{ name }`: the model must call this function.
    Named(String),
}

/// A function the model may call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FunctionDefinition {
    /// Its name, written as the declared type's name.
    pub name: String,
    /// A comment written above its declaration.
    pub description: Option<String>,
    /// The properties of its `parameters` object; none declares a function of no arguments.
    pub parameters: ObjectProperties,
}

/// The properties of an object schema, in the order the JS object lists them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ObjectProperties {
    /// Each property's name and schema.
    pub properties: Vec<(String, Schema)>,
    /// The names of the properties that are required; the others are written optional (`name?`).
    pub required: Vec<String>,
}

/// A JSON schema, as far as the declarations show it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Schema {
    /// A comment written above the property (only for properties of the top two levels).
    pub description: Option<String>,
    /// What the schema's `type` makes of it.
    pub kind: SchemaKind,
}

/// A schema's `type`, and the keywords of that type that show in the declarations.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum SchemaKind {
    /// `'string'`, with its `enum` if it has one.
    String(Option<Vec<EnumValue>>),
    /// `'number'` or `'integer'`, with its `enum` if it has one.
    Number(Option<Vec<EnumValue>>),
    /// `'boolean'`.
    Boolean,
    /// `'null'`.
    Null,
    /// `'array'`, with its `items` if it has them.
    Array(Option<Box<Schema>>),
    /// `'object'`.
    Object(ObjectProperties),
    /// Any other `type`, none, a list of types, or a boolean schema: written `any`.
    #[default]
    Any,
}

/// One value of an `enum`.
#[derive(Debug, Clone, PartialEq)]
pub enum EnumValue {
    /// A string, as the UTF-16 code units JS holds: `JSON.stringify` (a string enum's writer)
    /// escapes a lone surrogate, while `String()` (a number enum's) keeps it and the count then
    /// reads it as U+FFFD, as `TextEncoder` does.
    String(Vec<u16>),
    /// A number, written as JS writes it.
    Number(f64),
    /// `true` or `false`.
    Boolean(bool),
    /// `null`.
    Null,
}

/// The encodings of the function-calling models.
const FUNCTION_CALLING_ENCODINGS: &[&str] = &["cl100k_base", "o200k_base", "o200k_harmony"];

/// Whether gpt-tokenizer's module for `model`, or for the base of a fine-tune
/// (`ft:gpt-4o-2024-08-06:org::id`), offers `countChatCompletionTokens`
/// ([`GptTokenizerModel::function_calling`](super::models::GptTokenizerModel)).
pub fn offers_function_calling(model: &str) -> bool {
    let base = match model.strip_prefix("ft:") {
        Some(tuned) => tuned.split(':').next().unwrap_or(tuned),
        None => model,
    };
    gpt_tokenizer_model(base).is_some_and(|entry| entry.function_calling)
}

/// Tokens for each message.
const PER_MESSAGE: usize = 3;
/// Tokens for a message's name, beyond the name's own.
const PER_NAME: usize = 1;
/// Tokens a `function` message costs less than another.
const FUNCTION_ROLE_DISCOUNT: usize = 2;
/// Tokens for a message's function call, beyond its name's and arguments'.
const PER_MESSAGE_FUNCTION_CALL: usize = 3;
/// "Every reply is primed with `<|start|>assistant<|message|>`".
const REPLY_PRIMING: usize = 3;
/// Tokens around the function declarations, beyond their text's own.
const FUNCTIONS_OVERHEAD: usize = 9;
/// Tokens the declarations cost less when a system message is present: they join it.
const FUNCTIONS_WITH_SYSTEM_DISCOUNT: usize = 4;
/// Tokens for `function_call: 'none'`.
const CALL_NONE: usize = 1;
/// Tokens for `function_call: { name }`, beyond the name's own.
const CALL_NAMED: usize = 4;

impl Tokenizer {
    /// The prompt tokens of `request` (see the module documentation). `model` is the model the
    /// tokenizer was made for, if any: it must be one that gpt-tokenizer offers the count for.
    /// The tokenizer must be the encoding of such a model: cl100k_base, o200k_base or
    /// o200k_harmony.
    pub fn count_chat_completion(
        &self,
        request: &ChatCompletionRequest,
        model: Option<&str>,
    ) -> Result<usize, Error> {
        self.check_function_calling(model)?;
        let mode = self.encode_mode(None, &AllowedSpecial::None)?;
        let count = |text: &str| -> Result<usize, Error> {
            if text.is_empty() {
                Ok(0)
            } else {
                self.count(text, &mode)
            }
        };
        let has_functions = !request.functions.is_empty();
        let mut system_seen = false;
        let mut total = REPLY_PRIMING;
        for message in &request.messages {
            let is_system = message.role.as_deref() == Some("system");
            let content = message.content.as_deref().unwrap_or("");
            // The first system message runs into the declarations: a newline separates them.
            let padded = has_functions
                && is_system
                && !system_seen
                && !content.is_empty()
                && !content.ends_with('\n');
            system_seen |= is_system;
            total += PER_MESSAGE;
            total += count(message.role.as_deref().unwrap_or(""))?;
            total += if padded {
                count(&format!("{content}\n"))?
            } else {
                count(content)?
            };
            if let Some(name) = message.name.as_deref().filter(|n| !n.is_empty()) {
                total += count(name)? + PER_NAME;
            }
            if let Some(call) = &message.function_call {
                total += count(call.name.as_deref().unwrap_or(""))?;
                total += count(call.arguments.as_deref().unwrap_or(""))?;
                total += PER_MESSAGE_FUNCTION_CALL;
            }
            if message.role.as_deref() == Some("function") {
                total -= FUNCTION_ROLE_DISCOUNT;
            }
        }
        if has_functions {
            total += count(&render_functions(&request.functions))? + FUNCTIONS_OVERHEAD;
            if system_seen {
                total -= FUNCTIONS_WITH_SYSTEM_DISCOUNT;
            }
        }
        total += match &request.function_call {
            None | Some(FunctionCallChoice::Auto) => 0,
            Some(FunctionCallChoice::None) => CALL_NONE,
            Some(FunctionCallChoice::Named(name)) if name.is_empty() => 0,
            Some(FunctionCallChoice::Named(name)) => count(name)? + CALL_NAMED,
        };
        Ok(total)
    }

    /// Refuses a tokenizer, or the `model` it was made for, that gpt-tokenizer offers no
    /// function-call count for.
    pub fn check_function_calling(&self, model: Option<&str>) -> Result<(), Error> {
        let encoding = match self.family() {
            Family::OpenAi(encoding) => encoding.name,
            Family::HuggingFace => {
                return Err(Error::new(
                    ErrorKind::InvalidOption,
                    "countChatCompletionTokens counts OpenAI chat completion requests, and this is \
                     a Hugging Face tokenizer; load the model's encoding with \
                     Tokenizer.fromModel('gpt-4o')",
                ));
            }
        };
        if let Some(model) = model
            && !offers_function_calling(model)
        {
            return Err(Error::new(
                ErrorKind::InvalidOption,
                format!(
                    "countChatCompletionTokens is offered for the models whose OpenAI model page \
                     lists function calling, as gpt-tokenizer offers it, and {model:?} is not one \
                     of them; for this encoding's accounting anyway, use \
                     Tokenizer.fromEncoding('{encoding}')"
                ),
            ));
        }
        if !FUNCTION_CALLING_ENCODINGS.contains(&encoding) {
            return Err(Error::new(
                ErrorKind::InvalidOption,
                format!(
                    "countChatCompletionTokens counts requests for the function-calling models, \
                     whose encodings are {}, and this tokenizer is {encoding}; load one with \
                     Tokenizer.fromModel('gpt-4o')",
                    FUNCTION_CALLING_ENCODINGS.join(", ")
                ),
            ));
        }
        Ok(())
    }
}

/// The functions as the model sees them: a TypeScript-like `namespace functions` block, each
/// function a type of one argument object (`type get_weather = (_: { city: string, }) => any;`),
/// descriptions as `//` comments, optional properties marked `?`.
pub fn render_functions(functions: &[FunctionDefinition]) -> String {
    let mut lines: Vec<String> = vec!["namespace functions {".into(), String::new()];
    for function in functions {
        if let Some(description) = non_empty(&function.description) {
            lines.push(format!("// {description}"));
        }
        let name = &function.name;
        if function.parameters.properties.is_empty() {
            lines.push(format!("type {name} = () => any;"));
        } else {
            lines.push(format!("type {name} = (_: {{"));
            let properties = render_properties(&function.parameters, 0);
            if !properties.is_empty() {
                lines.push(properties);
            }
            lines.push("}) => any;".into());
        }
        lines.push(String::new());
    }
    lines.push("} // namespace functions".into());
    lines.join("\n")
}

/// Descriptions show for properties at these indents and less: the function's own and their
/// children's.
const DESCRIBED_BELOW_INDENT: usize = 2;

/// An object's properties, one line each (after its description's, where shown), at `indent`.
fn render_properties(object: &ObjectProperties, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut lines = Vec::with_capacity(object.properties.len());
    for (name, schema) in &object.properties {
        if indent < DESCRIBED_BELOW_INDENT
            && let Some(description) = non_empty(&schema.description)
        {
            lines.push(format!("{pad}// {description}"));
        }
        let optional = if object.required.contains(name) {
            ""
        } else {
            "?"
        };
        lines.push(format!(
            "{pad}{name}{optional}: {},",
            render_type(schema, indent)
        ));
    }
    lines.join("\n")
}

/// A schema as a TypeScript type, for a property at `indent`.
fn render_type(schema: &Schema, indent: usize) -> String {
    match &schema.kind {
        SchemaKind::String(None) => "string".into(),
        SchemaKind::String(Some(values)) => join_enum(values, json_value),
        SchemaKind::Number(None) => "number".into(),
        SchemaKind::Number(Some(values)) => join_enum(values, plain_value),
        SchemaKind::Boolean => "boolean".into(),
        SchemaKind::Null => "null".into(),
        SchemaKind::Array(Some(items)) => format!("{}[]", render_type(items, indent)),
        SchemaKind::Array(None) => "any[]".into(),
        SchemaKind::Object(object) => format!(
            "{{\n{}\n{}}}",
            render_properties(object, indent + 2),
            " ".repeat(indent)
        ),
        SchemaKind::Any => "any".into(),
    }
}

fn join_enum(values: &[EnumValue], write: fn(&EnumValue) -> String) -> String {
    values.iter().map(write).collect::<Vec<_>>().join(" | ")
}

/// A value as `JSON.stringify` writes it.
fn json_value(value: &EnumValue) -> String {
    match value {
        EnumValue::String(text) => json_string(text),
        EnumValue::Number(number) if !number.is_finite() => "null".into(),
        other => plain_value(other),
    }
}

/// A value as JS's `String(value)` writes it.
fn plain_value(value: &EnumValue) -> String {
    match value {
        EnumValue::String(units) => String::from_utf16_lossy(units),
        EnumValue::Number(number) => js_number(*number),
        EnumValue::Boolean(flag) => flag.to_string(),
        EnumValue::Null => "null".into(),
    }
}

fn non_empty(text: &Option<String>) -> Option<&str> {
    text.as_deref().filter(|t| !t.is_empty())
}

/// A JS string (`units`) as `JSON.stringify` quotes it: `"` and `\` escaped, the C0 controls
/// as `\n`-style escapes or `\u00xx`, a lone surrogate as `\udxxx`, everything else as is.
pub fn json_string(units: &[u16]) -> String {
    let mut out = String::with_capacity(units.len() + 2);
    out.push('"');
    for unit in char::decode_utf16(units.iter().copied()) {
        match unit {
            Ok('"') => out.push_str("\\\""),
            Ok('\\') => out.push_str("\\\\"),
            Ok('\u{8}') => out.push_str("\\b"),
            Ok('\u{c}') => out.push_str("\\f"),
            Ok('\n') => out.push_str("\\n"),
            Ok('\r') => out.push_str("\\r"),
            Ok('\t') => out.push_str("\\t"),
            Ok(c) if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            Ok(c) => out.push(c),
            Err(lone) => out.push_str(&format!("\\u{:04x}", lone.unpaired_surrogate())),
        }
    }
    out.push('"');
    out
}

/// `number` as JS's `Number.prototype.toString` writes it (ECMAScript's Number::toString):
/// the shortest digits that read back as the number, in plain notation for exponents from -7
/// to 20 and in `1.5e+21` notation beyond.
pub fn js_number(number: f64) -> String {
    if number.is_nan() {
        return "NaN".into();
    }
    if number == 0.0 {
        return "0".into();
    }
    if number.is_infinite() {
        return if number > 0.0 {
            "Infinity"
        } else {
            "-Infinity"
        }
        .into();
    }
    let sign = if number < 0.0 { "-" } else { "" };
    // Rust's `{:e}` writes the shortest round-trip digits, as ECMAScript requires.
    let scientific = format!("{:e}", number.abs());
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("`{:e}` writes an exponent");
    let exponent: i32 = exponent.parse().expect("`{:e}` writes a whole exponent");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i32;
    // The decimal point goes after `n` digits.
    let n = exponent + 1;
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let e = n - 1;
        let exponent_sign = if e >= 0 { "+" } else { "-" };
        let fraction = if k > 1 {
            format!(".{}", &digits[1..])
        } else {
            String::new()
        };
        format!("{}{fraction}e{exponent_sign}{}", &digits[..1], e.abs())
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn property(name: &str, description: Option<&str>, kind: SchemaKind) -> (String, Schema) {
        (
            name.into(),
            Schema {
                description: description.map(Into::into),
                kind,
            },
        )
    }

    #[test]
    fn numbers_are_written_as_js_writes_them() {
        for (number, js) in [
            (1.0, "1"),
            (-2.5, "-2.5"),
            (0.1, "0.1"),
            (1e21, "1e+21"),
            (1.5e21, "1.5e+21"),
            (1e20, "100000000000000000000"),
            (123456789.125, "123456789.125"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (-1.25e-7, "-1.25e-7"),
            (-0.0, "0"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
        ] {
            assert_eq!(js_number(number), js, "{number:e}");
        }
    }

    #[test]
    fn strings_are_quoted_as_json_stringify_quotes_them() {
        let units: Vec<u16> = "a\"b\\c\n\t\u{1}\u{7f}é\u{2028}😀".encode_utf16().collect();
        assert_eq!(
            json_string(&units),
            "\"a\\\"b\\\\c\\n\\t\\u0001\u{7f}é\u{2028}😀\""
        );
        assert_eq!(json_string(&[0x61, 0xd800, 0x62]), "\"a\\ud800b\"");
    }

    #[test]
    fn functions_render_as_a_typescript_namespace() {
        let nested = ObjectProperties {
            properties: vec![property(
                "deep",
                Some("hidden at this depth"),
                SchemaKind::Boolean,
            )],
            required: vec!["deep".into()],
        };
        let functions = [
            FunctionDefinition {
                name: "get_weather".into(),
                description: Some("Weather now".into()),
                parameters: ObjectProperties {
                    properties: vec![
                        property("city", Some("The city"), SchemaKind::String(None)),
                        property(
                            "unit",
                            None,
                            SchemaKind::String(Some(vec![
                                EnumValue::String("c".encode_utf16().collect()),
                                EnumValue::String("f".encode_utf16().collect()),
                            ])),
                        ),
                        property(
                            "days",
                            None,
                            SchemaKind::Number(Some(vec![
                                EnumValue::Number(1.0),
                                EnumValue::String("2".encode_utf16().collect()),
                            ])),
                        ),
                        property("tags", None, SchemaKind::Array(None)),
                        property("more", None, SchemaKind::Object(nested)),
                    ],
                    required: vec!["city".into()],
                },
            },
            FunctionDefinition {
                name: "ping".into(),
                description: Some(String::new()),
                parameters: ObjectProperties::default(),
            },
        ];
        let expected = "namespace functions {\n\n// Weather now\ntype get_weather = (_: {\n\
                        // The city\ncity: string,\nunit?: \"c\" | \"f\",\ndays?: 1 | 2,\n\
                        tags?: any[],\nmore?: {\n  deep: boolean,\n},\n}) => any;\n\n\
                        type ping = () => any;\n\n} // namespace functions";
        assert_eq!(render_functions(&functions), expected);
    }

    #[test]
    fn fine_tunes_count_as_their_base_model() {
        assert!(offers_function_calling("gpt-4o"));
        assert!(offers_function_calling("ft:gpt-4o-2024-08-06:org::abc"));
        assert!(!offers_function_calling("gpt-4"));
        assert!(!offers_function_calling("ft:gpt-3.5-turbo:org::abc"));
    }

    #[test]
    fn the_accounting_adds_up() {
        let tokenizer = Tokenizer::from_encoding("o200k_base").unwrap();
        let mode = tokenizer.encode_mode(None, &AllowedSpecial::None).unwrap();
        let count = |text: &str| tokenizer.count(text, &mode).unwrap();
        let message = |role: &str, content: &str| RequestMessage {
            role: Some(role.into()),
            content: Some(content.into()),
            ..RequestMessage::default()
        };
        let functions = vec![FunctionDefinition {
            name: "ping".into(),
            ..FunctionDefinition::default()
        }];
        let declarations = count(&render_functions(&functions));
        let request = ChatCompletionRequest {
            messages: vec![message("system", "Be brief."), message("user", "Hi")],
            functions,
            function_call: Some(FunctionCallChoice::Named("ping".into())),
        };
        let expected = (3 + count("system") + count("Be brief.\n"))
            + (3 + count("user") + count("Hi"))
            + REPLY_PRIMING
            + (declarations + FUNCTIONS_OVERHEAD - FUNCTIONS_WITH_SYSTEM_DISCOUNT)
            + (count("ping") + CALL_NAMED);
        assert_eq!(
            tokenizer
                .count_chat_completion(&request, Some("gpt-4o"))
                .unwrap(),
            expected
        );
    }

    #[test]
    fn other_encodings_and_models_are_refused() {
        let request = ChatCompletionRequest::default();
        let r50k = Tokenizer::from_encoding("r50k_base").unwrap();
        let error = r50k.count_chat_completion(&request, None).unwrap_err();
        assert!(error.message().contains("r50k_base"), "{error}");
        let cl100k = Tokenizer::from_encoding("cl100k_base").unwrap();
        assert_eq!(
            cl100k.count_chat_completion(&request, None).unwrap(),
            REPLY_PRIMING
        );
        let error = cl100k
            .count_chat_completion(&request, Some("gpt-4"))
            .unwrap_err();
        assert!(
            error.message().contains("fromEncoding('cl100k_base')"),
            "{error}"
        );
    }
}
