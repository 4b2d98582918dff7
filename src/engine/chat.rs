//! Chat conversations as the OpenAI chat models see them: the ids of a conversation, and its
//! count by OpenAI's documented accounting.
//!
//! **Ids.** The layout is ChatML, as gpt-tokenizer's `encodeChat` writes it, id for id (checked
//! against `__test__/fixtures/chat.json`, written by `scripts/chat-fixtures.js`): each message is
//! `<|im_start|>`, the message's name (its role when it has none), a role separator, the content,
//! `<|im_end|>` and a message separator; the reply is primed with `<|im_start|>assistant` and the
//! role separator. The gpt-3.5 models separate with a newline, the later ones with `<|im_sep|>`
//! and nothing between messages. The three ChatML ids are gpt-tokenizer's: in cl100k_base they are
//! OpenAI's own; in o200k_base they are ids tiktoken's table does not have (gpt-tokenizer's own
//! numbering), so `decode` refuses them. Names and contents are ordinary text: special-token text
//! in a message is encoded as text (gpt-tokenizer throws on it instead).
//!
//! **Counts.** [`Tokenizer::count_chat`] is OpenAI cookbook's `num_tokens_from_messages`
//! ("How to count tokens with tiktoken"): three tokens per message, the tokens of each of its
//! role, name and content, one more for a name, and three for the reply's priming (for
//! `gpt-3.5-turbo-0301`, four per message and one fewer for a name). That is the count the API
//! bills, which is not the length of [`Tokenizer::encode_chat`]'s ids.

use super::models::encoding_for_model;
use super::{AllowedSpecial, EncodeMode, Error, ErrorKind, Family, Ids, Scratch, Tokenizer};

/// One message of a conversation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChatMessage<'m> {
    /// Who speaks: `system`, `user`, `assistant`, `developer`, `tool`... (`system` if absent).
    pub role: Option<&'m str>,
    /// The speaker's name, written in place of the role when present.
    pub name: Option<&'m str>,
    /// What is said.
    pub content: &'m str,
}

/// The ChatML ids of an encoding: `<|im_start|>`, `<|im_end|>`, `<|im_sep|>`.
struct ChatIds {
    start: u32,
    end: u32,
    separator: u32,
}

/// How a model lays a conversation out.
struct ChatLayout {
    ids: ChatIds,
    /// gpt-3.5: a newline after the role and after each message, in place of `<|im_sep|>`.
    newline_separated: bool,
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
        let role_separator = |out: &mut Ids| {
            if layout.newline_separated {
                out.push(NEWLINE);
            } else {
                out.push(layout.ids.separator);
            }
        };
        for message in messages {
            out.push(layout.ids.start);
            text(message.name.or(message.role).unwrap_or("system"), &mut out)?;
            role_separator(&mut out);
            text(message.content, &mut out)?;
            out.push(layout.ids.end);
            if layout.newline_separated {
                out.push(NEWLINE);
            }
        }
        out.push(layout.ids.start);
        text("assistant", &mut out)?;
        role_separator(&mut out);
        Ok(out)
    }

    /// The tokens a conversation costs `model` by OpenAI's documented accounting (see the module
    /// documentation); not the length of [`encode_chat`](Self::encode_chat)'s ids.
    pub fn count_chat(&self, messages: &[ChatMessage<'_>], model: &str) -> Result<usize, Error> {
        self.chat_layout(model)?;
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
        let ours = match self.family() {
            Family::OpenAi(ours) => ours.name,
            Family::HuggingFace => "a Hugging Face tokenizer",
        };
        if encoding != ours {
            return Err(Error::new(
                ErrorKind::InvalidOption,
                format!(
                    "model {model:?} uses the encoding '{encoding}', and this tokenizer is {ours}; \
                     load the model's own with Tokenizer.fromModel({model:?})"
                ),
            ));
        }
        let ids = chat_ids(encoding).ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidOption,
                format!(
                    "model {model:?} is not a chat model batchtok lays conversations out for; \
                     chats are for the models on cl100k_base (gpt-4, gpt-3.5-turbo) and \
                     o200k_base (gpt-4o, gpt-4.1, gpt-5, o1, o3, o4-mini)"
                ),
            )
        })?;
        Ok(ChatLayout {
            ids,
            newline_separated: model.starts_with("gpt-3.5"),
        })
    }
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
