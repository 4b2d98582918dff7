//! Reading a tokenizer.json into the stable crate's `Tokenizer` with less copying than its own
//! reader, to the same result.
//!
//! The stable crate's reader (the one Python `tokenizers`' `from_file` runs) takes its model
//! through two generic stages before the model's own reader sees it: the whole model object is
//! buffered as serde's `Content` (to choose between a tagged and an untagged form), then turned
//! into a `serde_json::Value` (to strip the `type` key), and only then read as a BPE, WordPiece,
//! WordLevel or Unigram model. For a BPE file of a few hundred thousand tokens that is most of the
//! load: every vocabulary string and merge is allocated three times, and the vocabulary is sorted
//! into a `BTreeMap` on the way.
//!
//! Here a BPE model is read by the crate's own BPE reader straight from the file's text, and every
//! other part by the crate's own reader for that part, assembled as the crate's tokenizer reader
//! assembles them (`DirectBpe` follows it key for key). Where anything fails on this path (a model
//! that is not a BPE, a version other than `1.0`, an unknown key, any error), the crate's own
//! reader reads the file again, so its result and its errors are the crate's. A test holds the two readers' tokenizers equal,
//! serialized, on every committed tokenizer file and every real model file present.
//!
//! Why this is the same model: the crate's tagged path hands its BPE reader the model's keys
//! without `type`, and its untagged (legacy) path tries the BPE reader first; the BPE reader
//! accepts `type` only where it says `BPE`. So where the BPE reader accepts the model's text, the
//! crate's reader builds a BPE from the same keys and values, and where it refuses it, this path
//! gives way.
//!
//! One thing differs from the crate's tokenizer, on either path: a BPE model's word cache is off
//! ([`without_word_cache`] says why). The cache holds no part of the model, so the ids are the
//! same.

use std::fmt;

use serde::Deserialize;
use serde::de::{Error as _, MapAccess, Visitor};
use tokenizers_stable::models::bpe::BPE;
use tokenizers_stable::{
    AddedToken, DecoderWrapper, ModelWrapper, NormalizerWrapper, PostProcessorWrapper,
    PreTokenizerWrapper, Tokenizer, TokenizerBuilder,
};

/// Reads a tokenizer.json as the stable crate's `Tokenizer::from_str` does, to the same tokenizer
/// or the same error, except that a BPE model keeps no word cache ([`without_word_cache`]).
pub fn read(json: &str) -> Result<Tokenizer, String> {
    match read_bpe_directly(json) {
        Some(tokenizer) => Ok(tokenizer),
        None => {
            let mut tokenizer = json.parse::<Tokenizer>().map_err(|e| e.to_string())?;
            if let ModelWrapper::BPE(bpe) = tokenizer.get_model() {
                // This path's BPE models are rare (the direct path reads every BPE file it can),
                // so the copy that turning the cache off takes here costs little.
                let bpe = without_word_cache(bpe.clone());
                tokenizer.with_model(bpe);
            }
            Ok(tokenizer)
        }
    }
}

/// `bpe` with its word cache off. The crate keeps a BPE's cache in each thread that encodes with
/// it, in a thread-local map keyed by the model, and never removes a model's entries, neither when
/// the model is dropped nor when its cache is cleared: each tokenizer loaded, used on the worker
/// threads and dropped would leave up to 10,000 words in each of them for the life of the thread
/// (a process that loads and drops tokenizers would grow without bound), and under a file whose
/// pre-tokenizer leaves whole texts as words (Gemma's), whose cached words take kilobytes each, a
/// long-lived thread would hold tens of MiB. The stable engine encodes only what the release
/// candidate does not (texts until it is built, and those the route sends back), at a few MiB/s:
/// without the cache at 0.6 to 1.3 times its speed with it (`benchmark/results/fallback.md`).
fn without_word_cache(mut bpe: BPE) -> BPE {
    // A capacity of 0 stores nothing; each thread keeps only an empty map per model.
    bpe.resize_cache(0);
    bpe
}

/// An entry of `added_tokens`: the crate's own shape (its type for it is private to the crate).
#[derive(Deserialize)]
struct AddedTokenWithId {
    /// Read, as the crate's reader reads it, and then not used: the crate only compares it with
    /// the id the token gets, to log a warning.
    #[allow(dead_code)]
    id: u32,
    #[serde(flatten)]
    token: AddedToken,
}

/// The file read with the BPE model taken straight from its text; `None` where anything is not
/// as this path handles it (see the module's docs).
fn read_bpe_directly(json: &str) -> Option<Tokenizer> {
    let mut deserializer = serde_json::Deserializer::from_str(json);
    let tokenizer = serde::Deserializer::deserialize_map(&mut deserializer, DirectBpe).ok()?;
    deserializer.end().ok()?;
    Some(tokenizer)
}

/// The crate's tokenizer reader, key for key, except that `model` is read as a BPE.
struct DirectBpe;

impl<'de> Visitor<'de> for DirectBpe {
    type Value = Tokenizer;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a tokenizer.json object with a BPE model")
    }

    fn visit_map<V: MapAccess<'de>>(self, mut map: V) -> Result<Tokenizer, V::Error> {
        let mut builder = TokenizerBuilder::<
            ModelWrapper,
            NormalizerWrapper,
            PreTokenizerWrapper,
            PostProcessorWrapper,
            DecoderWrapper,
        >::new();
        let mut added: Vec<AddedTokenWithId> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "version" => {
                    if map.next_value::<String>()? != "1.0" {
                        return Err(V::Error::custom("a version other than 1.0"));
                    }
                }
                "truncation" => builder = builder.with_truncation(map.next_value()?),
                "padding" => builder = builder.with_padding(map.next_value()?),
                "added_tokens" => added = map.next_value()?,
                "normalizer" => builder = builder.with_normalizer(map.next_value()?),
                "pre_tokenizer" => builder = builder.with_pre_tokenizer(map.next_value()?),
                "model" => {
                    let bpe = without_word_cache(map.next_value::<BPE>()?);
                    builder = builder.with_model(ModelWrapper::BPE(bpe))
                }
                "decoder" => builder = builder.with_decoder(map.next_value()?),
                "post_processor" => builder = builder.with_post_processor(map.next_value()?),
                // The crate's reader fails on another key: it leaves the value unread and then
                // finds no comma.
                _ => return Err(V::Error::custom("a key the crate's reader does not read")),
            }
        }
        let mut tokenizer = builder.build().map_err(V::Error::custom)?;
        tokenizer
            .add_tokens(added.into_iter().map(|entry| entry.token))
            .map_err(V::Error::custom)?;
        Ok(Tokenizer::from(tokenizer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::test_fixtures::tokenizer_files;

    #[test]
    fn reads_every_file_to_the_crates_own_tokenizer() {
        let mut direct = 0;
        for path in tokenizer_files() {
            let json = std::fs::read_to_string(&path).unwrap();
            let theirs = json.parse::<Tokenizer>().unwrap();
            if read_bpe_directly(&json).is_some() {
                direct += 1;
            }
            let ours = read(&json).unwrap();
            assert_eq!(
                ours.to_string(false).unwrap(),
                theirs.to_string(false).unwrap(),
                "{}",
                path.display()
            );
        }
        assert!(direct >= 1, "the gpt2 fixture at least is a BPE file");
    }

    #[test]
    fn gives_way_to_the_crates_reader_on_what_it_does_not_handle() {
        let bpe = r#"{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]}"#;
        let with = |top: &str| format!(r#"{{{top}"model":{bpe}}}"#);
        // Handled: the plain file, null parts, a repeated key (the last one counts).
        for json in [
            with(""),
            with(r#""version":"1.0","normalizer":null,"added_tokens":[],"#),
            with(r#""decoder":null,"decoder":{"type":"Fuse"},"#),
        ] {
            let ours = read_bpe_directly(&json).expect(&json).to_string(false);
            let theirs = json.parse::<Tokenizer>().unwrap().to_string(false);
            assert_eq!(ours.unwrap(), theirs.unwrap());
        }
        // Not handled here, each with the crate's own answer.
        for json in [
            with(r#""version":"2.0","#),
            with(r#""added_tokens":null,"#),
            with(r#""other":1,"#),
            r#"{"model":{"type":"WordLevel","vocab":{"a":0},"unk_token":"a"}}"#.to_owned(),
            r#"{"model":{"type":"BPE","vocab":{"a":0},"merges":["a c"]}}"#.to_owned(),
        ] {
            assert!(read_bpe_directly(&json).is_none(), "{json}");
            let theirs = json
                .parse::<Tokenizer>()
                .map(|t| t.to_string(false).unwrap());
            let ours = read(&json).map(|t| t.to_string(false).unwrap());
            assert_eq!(ours, theirs.map_err(|e| e.to_string()), "{json}");
        }
    }
}
