//! OpenAI model names and the encoding each one uses, as Python tiktoken's `model.py` maps them,
//! and beyond its table the models gpt-tokenizer has a module for.
//!
//! A name is looked up in the exact table first; failing that, the first prefix (in tiktoken's
//! order) it starts with decides, so dated versions, fine-tunes and Azure deployment names
//! (`gpt-4o-2024-08-06`, `ft:gpt-3.5-turbo:org:x`, `gpt-35-turbo-16k`) resolve as tiktoken resolves
//! them, and so does a name that merely looks like one (`gpt-3.5-turbo-FAKE`). `__test__/fixtures/
//! models.json`, written by tiktoken itself (`scripts/fixtures.py`), holds both tables and the
//! answers for a sample of names; the tests check this module against it.
//!
//! A name neither table resolves is looked up among gpt-tokenizer's models
//! ([`GPT_TOKENIZER_MODELS`], written by `scripts/gpt-tokenizer-models.js` from the installed
//! package), so that every `gpt-tokenizer/model/<name>` has its `batchtok/model/<name>`. tiktoken
//! answers first: where both know a name, tiktoken is the reference (the two agree on every name
//! they share, which `__test__/gpt-tokenizer-models.spec.ts` checks). gpt-tokenizer's table also
//! says which models it lays chats out for, and how ([`chat_format`]).

use std::collections::HashMap;
use std::sync::Arc;

pub use super::gpt_tokenizer_models::{ChatFormat, GPT_TOKENIZER_MODELS, GptTokenizerModel};
use super::spelling::nearest;
use super::{Error, ErrorKind, Tokenizer, openai};

/// gpt-tokenizer's entry for `model`, if it has a module for it.
pub fn gpt_tokenizer_model(model: &str) -> Option<&'static GptTokenizerModel> {
    GPT_TOKENIZER_MODELS
        .binary_search_by(|entry| entry.name.cmp(model))
        .ok()
        .map(|index| &GPT_TOKENIZER_MODELS[index])
}

/// The layout of `model`'s chats: gpt-tokenizer's for its models (`None` where it has none), and
/// for other names (dated, fine-tuned) the layout of their encoding: ChatML on cl100k_base and
/// o200k_base (with newlines for the gpt-3.5 names), Harmony on o200k_harmony.
pub fn chat_format(model: &str, encoding: &str) -> Option<ChatFormat> {
    if let Some(entry) = gpt_tokenizer_model(model) {
        return entry.chat;
    }
    match encoding {
        "cl100k_base" | "o200k_base" if model.starts_with("gpt-3.5") => {
            Some(ChatFormat::ChatMlNewlines)
        }
        "cl100k_base" | "o200k_base" => Some(ChatFormat::ChatMlImSep),
        "o200k_harmony" => Some(ChatFormat::Harmony),
        _ => None,
    }
}

/// Every exact model name batchtok knows and its encoding: tiktoken's table, and gpt-tokenizer's
/// models beyond it.
pub fn model_encodings() -> HashMap<&'static str, &'static str> {
    let mut names: HashMap<&'static str, &'static str> = GPT_TOKENIZER_MODELS
        .iter()
        .map(|entry| (entry.name, resolve(entry.name).unwrap_or(entry.encoding)))
        .collect();
    names.extend(MODEL_TO_ENCODING.iter().copied());
    names
}

/// tiktoken's `MODEL_TO_ENCODING`: exact model names.
pub static MODEL_TO_ENCODING: &[(&str, &str)] = &[
    // reasoning
    ("o1", "o200k_base"),
    ("o3", "o200k_base"),
    ("o4-mini", "o200k_base"),
    // chat
    ("gpt-5", "o200k_base"),
    ("gpt-4.1", "o200k_base"),
    ("gpt-4o", "o200k_base"),
    ("gpt-4", "cl100k_base"),
    ("gpt-3.5-turbo", "cl100k_base"),
    ("gpt-3.5", "cl100k_base"),
    ("gpt-35-turbo", "cl100k_base"),
    // base
    ("davinci-002", "cl100k_base"),
    ("babbage-002", "cl100k_base"),
    // embeddings
    ("text-embedding-ada-002", "cl100k_base"),
    ("text-embedding-3-small", "cl100k_base"),
    ("text-embedding-3-large", "cl100k_base"),
    // text (deprecated)
    ("text-davinci-003", "p50k_base"),
    ("text-davinci-002", "p50k_base"),
    ("text-davinci-001", "r50k_base"),
    ("text-curie-001", "r50k_base"),
    ("text-babbage-001", "r50k_base"),
    ("text-ada-001", "r50k_base"),
    ("davinci", "r50k_base"),
    ("curie", "r50k_base"),
    ("babbage", "r50k_base"),
    ("ada", "r50k_base"),
    // code (deprecated)
    ("code-davinci-002", "p50k_base"),
    ("code-davinci-001", "p50k_base"),
    ("code-cushman-002", "p50k_base"),
    ("code-cushman-001", "p50k_base"),
    ("davinci-codex", "p50k_base"),
    ("cushman-codex", "p50k_base"),
    // edit (deprecated)
    ("text-davinci-edit-001", "p50k_edit"),
    ("code-davinci-edit-001", "p50k_edit"),
    // old embeddings (deprecated)
    ("text-similarity-davinci-001", "r50k_base"),
    ("text-similarity-curie-001", "r50k_base"),
    ("text-similarity-babbage-001", "r50k_base"),
    ("text-similarity-ada-001", "r50k_base"),
    ("text-search-davinci-doc-001", "r50k_base"),
    ("text-search-curie-doc-001", "r50k_base"),
    ("text-search-babbage-doc-001", "r50k_base"),
    ("text-search-ada-doc-001", "r50k_base"),
    ("code-search-babbage-code-001", "r50k_base"),
    ("code-search-ada-code-001", "r50k_base"),
    // open source
    ("gpt2", "gpt2"),
    ("gpt-2", "gpt2"),
];

/// tiktoken's `MODEL_PREFIX_TO_ENCODING`, in its order: the first prefix a name starts with wins
/// (`ft:gpt-4o` must come before `ft:gpt-4`).
pub static MODEL_PREFIX_TO_ENCODING: &[(&str, &str)] = &[
    ("o1-", "o200k_base"),
    ("o3-", "o200k_base"),
    ("o4-mini-", "o200k_base"),
    // chat
    ("gpt-5", "o200k_base"),
    ("gpt-4.5-", "o200k_base"),
    ("gpt-4.1-", "o200k_base"),
    ("chatgpt-4o-", "o200k_base"),
    ("gpt-4o-", "o200k_base"),
    ("gpt-4-", "cl100k_base"),
    ("gpt-3.5-turbo-", "cl100k_base"),
    ("gpt-35-turbo-", "cl100k_base"),
    ("gpt-oss-", "o200k_harmony"),
    // fine-tuned
    ("ft:gpt-4o", "o200k_base"),
    ("ft:gpt-4", "cl100k_base"),
    ("ft:gpt-3.5-turbo", "cl100k_base"),
    ("ft:davinci-002", "cl100k_base"),
    ("ft:babbage-002", "cl100k_base"),
];

/// The name of the encoding `model` uses, as tiktoken's `encoding_name_for_model` answers, else
/// as gpt-tokenizer's module for it tokenizes.
///
/// Should the table name an encoding batchtok does not embed,
/// [`Tokenizer::from_encoding`](super::Tokenizer::from_encoding) says so. An unknown model is an [`ErrorKind::Load`] error that says how to name the encoding instead.
pub fn encoding_for_model(model: &str) -> Result<&'static str, Error> {
    resolve(model)
        .or_else(|| gpt_tokenizer_model(model).map(|entry| entry.encoding))
        .ok_or_else(|| unknown_model(model))
}

/// tiktoken's answer for `model`: its exact table, then its prefixes.
fn resolve(model: &str) -> Option<&'static str> {
    MODEL_TO_ENCODING
        .iter()
        .find(|&&(name, _)| name == model)
        .or_else(|| {
            MODEL_PREFIX_TO_ENCODING
                .iter()
                .find(|&&(prefix, _)| model.starts_with(prefix))
        })
        .map(|&(_, encoding)| encoding)
}

impl Tokenizer {
    /// The embedded encoding `model` uses (see [`encoding_for_model`]). A model whose encoding
    /// batchtok does not embed is an error naming both.
    pub fn from_model(model: &str) -> Result<Arc<Tokenizer>, Error> {
        let encoding = encoding_for_model(model)?;
        if openai::find(encoding).is_err() {
            return Err(Error::new(
                ErrorKind::Load,
                format!(
                    "model {model:?} uses the encoding '{encoding}', which batchtok does not \
                     embed; the embedded encodings are {}",
                    openai::ENCODINGS
                        .iter()
                        .map(|e| format!("'{}'", e.name))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        Tokenizer::from_encoding(encoding)
    }
}

#[cold]
fn unknown_model(model: &str) -> Error {
    let known = MODEL_TO_ENCODING
        .iter()
        .map(|&(name, _)| name)
        .chain(GPT_TOKENIZER_MODELS.iter().map(|entry| entry.name));
    let suggestion = match nearest(model, known, 3).as_slice() {
        [] => String::new(),
        near => format!(
            " did you mean {}?",
            near.iter()
                .map(|name| format!("'{name}'"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Error::new(
        ErrorKind::Load,
        format!(
            "unknown model {model:?}:{suggestion} batchtok knows the models of tiktoken's table (gpt-5, \
             gpt-4.1, gpt-4o, o1, o3, o4-mini, gpt-4, gpt-3.5-turbo, text-embedding-3-small, ...) \
             and their dated and fine-tuned names, and gpt-tokenizer's (gpt-audio, \
             gpt-realtime, gpt-oss-120b, ...); modelEncodings() lists them. For another model, name its encoding instead: \
             Tokenizer.fromEncoding('o200k_base') for current OpenAI models, 'cl100k_base' for \
             gpt-4 and gpt-3.5-turbo"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn fixture() -> Value {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("__test__/fixtures/models.json");
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    #[test]
    fn the_tables_are_tiktokens() {
        let fixture = fixture();
        let exact = fixture["exact"].as_object().unwrap();
        assert_eq!(exact.len(), MODEL_TO_ENCODING.len());
        for (model, encoding) in MODEL_TO_ENCODING {
            assert_eq!(exact[*model], *encoding, "{model}");
        }
        let prefixes: Vec<(String, String)> =
            serde_json::from_value(fixture["prefixes"].clone()).unwrap();
        let ours: Vec<(String, String)> = MODEL_PREFIX_TO_ENCODING
            .iter()
            .map(|&(p, e)| (p.to_owned(), e.to_owned()))
            .collect();
        assert_eq!(ours, prefixes, "the prefixes and their order");
    }

    #[test]
    fn every_name_resolves_as_tiktoken_resolves_it() {
        let fixture = fixture();
        let known = fixture["known"].as_object().unwrap();
        assert!(known.len() > MODEL_TO_ENCODING.len() + 3 * MODEL_PREFIX_TO_ENCODING.len());
        for (model, encoding) in known {
            assert_eq!(encoding_for_model(model).unwrap(), encoding, "{model}");
        }
        for model in fixture["unknown"].as_array().unwrap() {
            let model = model.as_str().unwrap();
            let error = encoding_for_model(model).unwrap_err();
            assert_eq!(error.kind(), ErrorKind::Load);
            assert!(error.message().contains(&format!("{model:?}")), "{error}");
            assert!(
                error
                    .message()
                    .contains("Tokenizer.fromEncoding('o200k_base')")
            );
        }
    }

    #[test]
    fn from_model_loads_the_models_encoding() {
        for (model, name) in [
            ("gpt-4o-2024-08-06", "o200k_base"),
            ("text-davinci-edit-001", "p50k_edit"),
            ("gpt-oss-120b", "o200k_harmony"),
        ] {
            let tokenizer = Tokenizer::from_model(model).unwrap();
            assert!(
                matches!(tokenizer.family(), super::super::Family::OpenAi(e) if e.name == name),
                "{model}"
            );
        }
        assert!(Tokenizer::from_model("gpt-9").is_err());
    }

    #[test]
    fn an_unknown_model_names_the_nearest_known_ones() {
        let error = encoding_for_model("gpt4o").unwrap_err();
        assert!(
            error
                .message()
                .starts_with("unknown model \"gpt4o\": did you mean 'gpt-4o'? batchtok knows"),
            "{error}"
        );
        let error = encoding_for_model("GPT-4").unwrap_err();
        assert!(
            error.message().contains("did you mean 'gpt-4', "),
            "{error}"
        );
        let error = encoding_for_model("gpt-audoi").unwrap_err();
        assert!(error.message().contains("'gpt-audio'"), "{error}");
        let error = encoding_for_model("claude-3-opus").unwrap_err();
        assert!(!error.message().contains("did you mean"), "{error}");
    }

    #[test]
    fn every_encoding_the_tables_name_is_embedded() {
        let gpt_tokenizer = GPT_TOKENIZER_MODELS.iter().map(|e| e.encoding);
        for encoding in MODEL_TO_ENCODING
            .iter()
            .chain(MODEL_PREFIX_TO_ENCODING)
            .map(|&(_, encoding)| encoding)
            .chain(gpt_tokenizer)
        {
            assert!(super::super::openai::find(encoding).is_ok(), "{encoding}");
        }
    }

    #[test]
    fn gpt_tokenizers_models_are_sorted_for_the_binary_search() {
        assert!(GPT_TOKENIZER_MODELS.len() > 200);
        for pair in GPT_TOKENIZER_MODELS.windows(2) {
            assert!(
                pair[0].name < pair[1].name,
                "{} {}",
                pair[0].name,
                pair[1].name
            );
        }
        for entry in GPT_TOKENIZER_MODELS {
            assert_eq!(gpt_tokenizer_model(entry.name).unwrap().name, entry.name);
        }
        assert!(gpt_tokenizer_model("gpt-audio-2").is_none());
    }

    #[test]
    fn tiktoken_answers_first_and_gpt_tokenizer_beyond_it() {
        assert_eq!(encoding_for_model("gpt-audio").unwrap(), "o200k_base");
        assert_eq!(
            encoding_for_model("text-search-ada-query-001").unwrap(),
            "r50k_base"
        );
        assert_eq!(encoding_for_model("gpt-oss-20b").unwrap(), "o200k_harmony");
        let table = model_encodings();
        for &(model, encoding) in MODEL_TO_ENCODING {
            assert_eq!(table[model], encoding, "{model}");
        }
        for entry in GPT_TOKENIZER_MODELS {
            assert_eq!(table[entry.name], encoding_for_model(entry.name).unwrap());
        }
    }

    #[test]
    fn each_chat_layout_is_on_the_encoding_that_has_its_tokens() {
        for entry in GPT_TOKENIZER_MODELS {
            match entry.chat {
                Some(ChatFormat::Harmony) => assert_eq!(entry.encoding, "o200k_harmony"),
                Some(_) => assert!(
                    ["cl100k_base", "o200k_base"].contains(&entry.encoding),
                    "{}",
                    entry.name
                ),
                None => {}
            }
        }
        // Names gpt-tokenizer has no module for take their encoding's layout.
        assert_eq!(
            chat_format("gpt-3.5-turbo-0301", "cl100k_base"),
            Some(ChatFormat::ChatMlNewlines)
        );
        assert_eq!(
            chat_format("ft:gpt-4o:org::x", "o200k_base"),
            Some(ChatFormat::ChatMlImSep)
        );
        assert_eq!(
            chat_format("gpt-oss-7b", "o200k_harmony"),
            Some(ChatFormat::Harmony)
        );
        assert_eq!(chat_format("ft:davinci-002:org::x", "p50k_base"), None);
        assert_eq!(chat_format("text-embedding-3-small", "cl100k_base"), None);
    }
}
