//! OpenAI model names and the encoding each one uses, as Python tiktoken's `model.py` maps them.
//!
//! A name is looked up in the exact table first; failing that, the first prefix (in tiktoken's
//! order) it starts with decides, so dated versions, fine-tunes and Azure deployment names
//! (`gpt-4o-2024-08-06`, `ft:gpt-3.5-turbo:org:x`, `gpt-35-turbo-16k`) resolve as tiktoken resolves
//! them, and so does a name that merely looks like one (`gpt-3.5-turbo-FAKE`). `__test__/fixtures/
//! models.json`, written by tiktoken itself (`scripts/fixtures.py`), holds both tables and the
//! answers for a sample of names; the tests check this module against it.

use std::sync::Arc;

use super::{Error, ErrorKind, Tokenizer, openai};

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

/// The name of the encoding `model` uses, as tiktoken's `encoding_name_for_model` answers.
///
/// Should the table name an encoding batchtok does not embed,
/// [`Tokenizer::from_encoding`](super::Tokenizer::from_encoding) says so. An unknown model is an [`ErrorKind::Load`] error that says how to name the encoding instead.
pub fn encoding_for_model(model: &str) -> Result<&'static str, Error> {
    MODEL_TO_ENCODING
        .iter()
        .find(|&&(name, _)| name == model)
        .or_else(|| {
            MODEL_PREFIX_TO_ENCODING
                .iter()
                .find(|&&(prefix, _)| model.starts_with(prefix))
        })
        .map(|&(_, encoding)| encoding)
        .ok_or_else(|| unknown_model(model))
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
    Error::new(
        ErrorKind::Load,
        format!(
            "unknown model {model:?}: batchtok knows the models of tiktoken's table (gpt-5, \
             gpt-4.1, gpt-4o, o1, o3, o4-mini, gpt-4, gpt-3.5-turbo, text-embedding-3-small, ...) \
             and their dated and fine-tuned names. For another model, name its encoding instead: \
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
    fn every_encoding_the_tables_name_is_embedded() {
        for &(_, encoding) in MODEL_TO_ENCODING.iter().chain(MODEL_PREFIX_TO_ENCODING) {
            assert!(super::super::openai::find(encoding).is_ok(), "{encoding}");
        }
    }
}
