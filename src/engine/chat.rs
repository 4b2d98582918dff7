//! Chat conversations as the OpenAI chat models see them: the ids of a conversation, and its
//! count by OpenAI's documented accounting.
//!
//! **Ids.** The layout is the model's in gpt-tokenizer ([`chat_format`]), id for id (checked
//! against `__test__/fixtures/chat.json`, written by `scripts/chat-fixtures.js`, and against
//! gpt-tokenizer itself in `__test__/gpt-tokenizer-models.spec.ts`). Names, headers and contents
//! are ordinary text: special-token text in them is encoded as text (gpt-tokenizer throws on it
//! instead).
//!
//! - ChatML: each message is `<|im_start|>`, the message's name (its role when it has none), a
//!   role separator, the content, `<|im_end|>` and a message separator; the reply is primed with
//!   `<|im_start|>assistant` and the role separator. The gpt-3.5 models separate with a newline,
//!   the later ones with `<|im_sep|>` and nothing between messages. The three ChatML ids are
//!   gpt-tokenizer's: in cl100k_base they are OpenAI's own; in o200k_base they are ids tiktoken's
//!   table does not have (gpt-tokenizer's own numbering), so `decode` refuses them.
//! - Harmony (gpt-oss, o200k_harmony, whose special tokens are OpenAI's): each message is
//!   `<|start|>`, its name (else its role, else `user`), ` to=<recipient>` when the recipient is
//!   placed in the role (or there is no channel), `<|channel|>` and the channel (and there the
//!   recipient, by default), `<|constrain|>` and the constraint, `<|message|>`, the content, and
//!   its terminator (`<|end|>` unless it says `<|return|>` or `<|call|>`). An empty channel,
//!   recipient or constraint is left out. The reply is primed with `<|start|>assistant`.
//!
//! **Counts.** For ChatML, [`Tokenizer::count_chat`] is OpenAI cookbook's
//! `num_tokens_from_messages` ("How to count tokens with tiktoken"): three tokens per message, the
//! tokens of each of its role, name and content, one more for a name, and three for the reply's
//! priming (for `gpt-3.5-turbo-0301`, four per message and one fewer for a name). That is the
//! count the API bills, which is not the length of [`Tokenizer::encode_chat`]'s ids. The cookbook
//! has no accounting for Harmony, so there the count is the length of the ids, as gpt-tokenizer's
//! `countTokens` gives it for a conversation.

use super::models::{ChatFormat, chat_format, encoding_for_model};
use super::{
    AllowedSpecial, EncodeMode, Error, ErrorKind, Family, Ids, Scratch, Tokenizer, openai,
};

/// One message of a conversation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChatMessage<'m> {
    /// Who speaks: `system`, `user`, `assistant`, `developer`, `tool`... (if absent, `system` in
    /// ChatML, `user` in Harmony).
    pub role: Option<&'m str>,
    /// The speaker's name, written in place of the role when present.
    pub name: Option<&'m str>,
    /// What is said.
    pub content: &'m str,
    /// Harmony: the channel (`analysis`, `commentary`, `final`); ChatML ignores it.
    pub channel: Option<&'m str>,
    /// Harmony: who the message is for (`functions.get_weather`); ChatML ignores it.
    pub recipient: Option<&'m str>,
    /// Harmony: where the recipient is written.
    pub recipient_placement: RecipientPlacement,
    /// Harmony: the constraint on the content (`json`); ChatML ignores it.
    pub constraint: Option<&'m str>,
    /// Harmony: the token that ends the message.
    pub terminator: HarmonyTerminator,
}

/// Where a Harmony header writes the recipient.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RecipientPlacement {
    /// After the channel; after the role when the message has no channel.
    #[default]
    Channel,
    /// After the role.
    Role,
}

/// The token that ends a Harmony message.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HarmonyTerminator {
    /// `<|end|>`: the message is complete.
    #[default]
    End,
    /// `<|return|>`: the assistant's final answer.
    Return,
    /// `<|call|>`: a tool call.
    Call,
}

impl HarmonyTerminator {
    /// The terminator whose token text is `text`, if any.
    pub fn from_text(text: &str) -> Option<Self> {
        match text {
            "<|end|>" => Some(Self::End),
            "<|return|>" => Some(Self::Return),
            "<|call|>" => Some(Self::Call),
            _ => None,
        }
    }
}

/// The Harmony special tokens' ids, read from the encoding's own table.
struct HarmonyIds {
    start: u32,
    message: u32,
    channel: u32,
    constrain: u32,
    end: u32,
    return_: u32,
    call: u32,
}

impl HarmonyIds {
    fn terminator(&self, terminator: HarmonyTerminator) -> u32 {
        match terminator {
            HarmonyTerminator::End => self.end,
            HarmonyTerminator::Return => self.return_,
            HarmonyTerminator::Call => self.call,
        }
    }
}

/// The ChatML ids of an encoding: `<|im_start|>`, `<|im_end|>`, `<|im_sep|>`.
struct ChatIds {
    start: u32,
    end: u32,
    separator: u32,
}

/// How a model lays a conversation out, with the ids it takes.
enum ChatLayout {
    ChatMl {
        ids: ChatIds,
        /// gpt-3.5: a newline after the role and after each message, in place of `<|im_sep|>`.
        newline_separated: bool,
    },
    Harmony(HarmonyIds),
}

/// The ChatML ids gpt-tokenizer gives each encoding.
fn chat_ids(encoding: &str) -> Option<ChatIds> {
    match encoding {
        "cl100k_base" => Some(ChatIds {
            start: 100264,
            end: 100265,
            separator: 100266,
        }),
        "o200k_base" => Some(ChatIds {
            start: 200003,
            end: 200004,
            separator: 200005,
        }),
        _ => None,
    }
}

impl Tokenizer {
    /// The ids of a conversation for `model`, as gpt-tokenizer's `encodeChat` gives them. The
    /// tokenizer must be the model's encoding ([`Tokenizer::from_model`] loads it).
    pub fn encode_chat(&self, messages: &[ChatMessage<'_>], model: &str) -> Result<Ids, Error> {
        let layout = self.chat_layout(model)?;
        let mode = self.encode_mode(None, &AllowedSpecial::None)?;
        let mut scratch = Scratch::new();
        let mut out = Ids::with_capacity(
            messages
                .iter()
                .map(|m| m.content.len() / 3 + 8)
                .sum::<usize>()
                + 4,
        );
        let mut text = |text: &str, out: &mut Ids| self.encode_into(text, &mode, &mut scratch, out);
        match layout {
            ChatLayout::ChatMl {
                ids,
                newline_separated,
            } => {
                let role_separator = |out: &mut Ids| {
                    out.push(if newline_separated {
                        NEWLINE
                    } else {
                        ids.separator
                    });
                };
                for message in messages {
                    out.push(ids.start);
                    text(message.name.or(message.role).unwrap_or("system"), &mut out)?;
                    role_separator(&mut out);
                    text(message.content, &mut out)?;
                    out.push(ids.end);
                    if newline_separated {
                        out.push(NEWLINE);
                    }
                }
                out.push(ids.start);
                text("assistant", &mut out)?;
                role_separator(&mut out);
            }
            ChatLayout::Harmony(ids) => {
                for message in messages {
                    out.push(ids.start);
                    text(message.name.or(message.role).unwrap_or("user"), &mut out)?;
                    let channel = present(message.channel);
                    let recipient = present(message.recipient).map(|r| format!(" to={r}"));
                    let recipient_in_role = message.recipient_placement == RecipientPlacement::Role
                        || channel.is_none();
                    if let Some(recipient) = recipient.as_deref().filter(|_| recipient_in_role) {
                        text(recipient, &mut out)?;
                    }
                    if let Some(channel) = channel {
                        out.push(ids.channel);
                        text(channel, &mut out)?;
                        if let Some(recipient) = recipient.as_deref().filter(|_| !recipient_in_role)
                        {
                            text(recipient, &mut out)?;
                        }
                    }
                    if let Some(constraint) = present(message.constraint) {
                        out.push(ids.constrain);
                        text(constraint, &mut out)?;
                    }
                    out.push(ids.message);
                    text(message.content, &mut out)?;
                    out.push(ids.terminator(message.terminator));
                }
                out.push(ids.start);
                text("assistant", &mut out)?;
            }
        }
        Ok(out)
    }

    /// The tokens a conversation costs `model` by OpenAI's documented accounting (see the module
    /// documentation); not the length of [`encode_chat`](Self::encode_chat)'s ids.
    pub fn count_chat(&self, messages: &[ChatMessage<'_>], model: &str) -> Result<usize, Error> {
        if let ChatLayout::Harmony(_) = self.chat_layout(model)? {
            return Ok(self.encode_chat(messages, model)?.len());
        }
        let (per_message, per_name) = if model == "gpt-3.5-turbo-0301" {
            (4, -1)
        } else {
            (3, 1)
        };
        let mode = self.encode_mode(None, &AllowedSpecial::None)?;
        let mut total: isize = REPLY_PRIMING;
        for message in messages {
            total += per_message + self.count_isize(message.content, &mode)?;
            if let Some(role) = message.role {
                total += self.count_isize(role, &mode)?;
            }
            if let Some(name) = message.name {
                total += per_name + self.count_isize(name, &mode)?;
            }
        }
        Ok(total.max(0) as usize)
    }

    fn count_isize(&self, text: &str, mode: &EncodeMode) -> Result<isize, Error> {
        Ok(self.count(text, mode)? as isize)
    }

    /// The layout `model` writes conversations in, checking that this tokenizer is its encoding.
    fn chat_layout(&self, model: &str) -> Result<ChatLayout, Error> {
        let encoding = encoding_for_model(model)?;
        // The table may name an encoding by an alias ('gpt2' for r50k_base).
        let canonical = openai::find(encoding).map_or(encoding, |found| found.name);
        let ours = match self.family() {
            Family::OpenAi(ours) => ours.name,
            Family::HuggingFace => "a Hugging Face tokenizer",
        };
        if canonical != ours {
            return Err(Error::new(
                ErrorKind::InvalidOption,
                format!(
                    "model {model:?} uses the encoding '{encoding}', and this tokenizer is {ours}; \
                     load the model's own with Tokenizer.fromModel({model:?})"
                ),
            ));
        }
        let not_for_chat = || {
            Error::new(
                ErrorKind::InvalidOption,
                format!(
                    "model {model:?} is not a chat model batchtok (like gpt-tokenizer) lays \
                     conversations out for; chats are for the models on \
                     cl100k_base (gpt-4, gpt-3.5-turbo), o200k_base (gpt-4o, gpt-4.1, gpt-5, o1, \
                     o3, o4-mini) and o200k_harmony (gpt-oss-120b, gpt-oss-20b)"
                ),
            )
        };
        match chat_format(model, encoding).ok_or_else(not_for_chat)? {
            ChatFormat::Harmony => Ok(ChatLayout::Harmony(self.harmony_ids(model)?)),
            format => Ok(ChatLayout::ChatMl {
                ids: chat_ids(encoding).ok_or_else(not_for_chat)?,
                newline_separated: format == ChatFormat::ChatMlNewlines,
            }),
        }
    }

    /// The Harmony tokens' ids in this tokenizer's encoding.
    fn harmony_ids(&self, model: &str) -> Result<HarmonyIds, Error> {
        let (name, specials) = match self.family() {
            Family::OpenAi(encoding) => (encoding.name, encoding.specials()),
            Family::HuggingFace => ("a Hugging Face tokenizer", &[][..]),
        };
        let id = |text: &str| {
            specials
                .iter()
                .find(|special| special.text == text)
                .map(|special| special.id)
                .ok_or_else(|| {
                    Error::new(
                        ErrorKind::InvalidOption,
                        format!(
                            "model {model:?} writes chats in OpenAI's Harmony layout, and the \
                             encoding '{name}' has no {text} token; load o200k_harmony with \
                             Tokenizer.fromModel('gpt-oss-120b')"
                        ),
                    )
                })
        };
        Ok(HarmonyIds {
            start: id("<|start|>")?,
            message: id("<|message|>")?,
            channel: id("<|channel|>")?,
            constrain: id("<|constrain|>")?,
            end: id("<|end|>")?,
            return_: id("<|return|>")?,
            call: id("<|call|>")?,
        })
    }
}

/// A Harmony header field that is written: present and not empty (gpt-tokenizer tests it for
/// truthiness).
fn present(field: Option<&str>) -> Option<&str> {
    field.filter(|value| !value.is_empty())
}

/// `"\n"`, one token in both chat encodings (cl100k_base 198, o200k_base 198).
const NEWLINE: u32 = 198;

/// "Every reply is primed with `<|start|>assistant<|message|>`": three tokens.
const REPLY_PRIMING: isize = 3;

#[cfg(test)]
mod tests {
    use super::super::test_fixtures::fixture_json;
    use super::*;

    fn messages(conversation: &serde_json::Value) -> Vec<ChatMessage<'_>> {
        conversation
            .as_array()
            .unwrap()
            .iter()
            .map(|m| ChatMessage {
                role: m["role"].as_str(),
                name: m["name"].as_str(),
                content: m["content"].as_str().unwrap(),
                channel: m["channel"].as_str(),
                recipient: m["recipient"].as_str(),
                recipient_placement: match m["recipientPlacement"].as_str() {
                    Some("role") => RecipientPlacement::Role,
                    _ => RecipientPlacement::Channel,
                },
                constraint: m["constraint"].as_str(),
                terminator: m["terminator"]
                    .as_str()
                    .map_or(HarmonyTerminator::End, |t| {
                        HarmonyTerminator::from_text(t).unwrap()
                    }),
            })
            .collect()
    }

    #[test]
    fn the_ids_are_gpt_tokenizers() {
        let fixture = fixture_json("chat.json");
        let conversations = fixture["conversations"].as_object().unwrap();
        let models = fixture["models"].as_object().unwrap();
        assert!(models.len() > 20);
        for (model, chats) in models {
            let tokenizer = Tokenizer::from_model(model).unwrap();
            for (name, conversation) in conversations {
                let ids = tokenizer
                    .encode_chat(&messages(conversation), model)
                    .unwrap();
                let expected: Vec<u32> = serde_json::from_value(chats[name].clone()).unwrap();
                assert_eq!(ids.as_slice(), expected, "{model}, {name}");
            }
        }
    }

    #[test]
    fn the_newline_is_one_token_in_both_chat_encodings() {
        for encoding in ["cl100k_base", "o200k_base"] {
            let tokenizer = Tokenizer::from_encoding(encoding).unwrap();
            let mode = tokenizer.encode_mode(None, &AllowedSpecial::None).unwrap();
            assert_eq!(tokenizer.encode("\n", &mode).unwrap().as_slice(), [NEWLINE]);
        }
    }

    #[test]
    fn counts_follow_the_cookbook() {
        // The cookbook's example conversation and its published counts: 129 tokens for
        // gpt-3.5-turbo-0613 and gpt-4-0613 (cl100k_base), 124 for gpt-4o (o200k_base).
        let example = [
            ("system", None, "You are a helpful, pattern-following assistant that translates corporate jargon into plain English."),
            ("system", Some("example_user"), "New synergies will help drive top-line growth."),
            ("system", Some("example_assistant"), "Things working well together will increase revenue."),
            ("system", Some("example_user"), "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage."),
            ("system", Some("example_assistant"), "Let's talk later when we're less busy about how to do better."),
            ("user", None, "This late pivot means we don't have time to boil the ocean for the client deliverable."),
        ]
        .map(|(role, name, content)| ChatMessage {
            role: Some(role),
            name,
            content,
            ..ChatMessage::default()
        });
        for (model, count) in [
            ("gpt-3.5-turbo-0613", 129),
            ("gpt-4-0613", 129),
            ("gpt-4o", 124),
        ] {
            let tokenizer = Tokenizer::from_model(model).unwrap();
            assert_eq!(
                tokenizer.count_chat(&example, model).unwrap(),
                count,
                "{model}"
            );
        }
        let tokenizer = Tokenizer::from_model("gpt-4o").unwrap();
        assert_eq!(tokenizer.count_chat(&[], "gpt-4o").unwrap(), 3);
    }

    #[test]
    fn a_model_of_another_encoding_or_without_chat_is_refused() {
        let cl100k = Tokenizer::from_encoding("cl100k_base").unwrap();
        let error = cl100k.encode_chat(&[], "gpt-4o").unwrap_err();
        assert!(
            error.message().contains("Tokenizer.fromModel(\"gpt-4o\")"),
            "{error}"
        );
        let r50k = Tokenizer::from_encoding("r50k_base").unwrap();
        let error = r50k.count_chat(&[], "davinci").unwrap_err();
        assert!(error.message().contains("not a chat model"), "{error}");
        assert!(r50k.encode_chat(&[], "no-such-model").is_err());
    }
}
