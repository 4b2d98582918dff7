//! Decoding to the exact bytes, as tiktoken's `decode_bytes`: a byte-level token need not be valid
//! UTF-8 on its own (a character can span tokens), and `decode` replaces what is not valid with
//! U+FFFD; `decode_bytes` keeps the bytes as they are.
//!
//! The OpenAI encodings read their tokens' bytes from their rank tables ([`TokenBytes`], also what
//! counting within a budget and truncating measure tokens by). A Hugging Face byte-level
//! BPE reads its tokens' bytes from the engine; any other Hugging Face tokenizer has no bytes
//! apart from its text, and gives the UTF-8 of `decode`.

use tokenizers::pipeline::PipelineModel;
use tokenizers::utils::byte_level::char_to_byte;

use super::openai::OpenAiEncoding;
use super::pipeline::PipelineEngine;
use super::ranks::RankTable;
use super::{Error, Family, Tokenizer};

/// The ordinary tokens' bytes of one OpenAI encoding: a view of its rank table.
#[derive(Clone, Copy)]
pub(super) struct TokenBytes {
    table: &'static RankTable,
}

impl TokenBytes {
    /// The bytes of ordinary token `id`; empty for an id that is not one.
    #[inline]
    pub(super) fn get(&self, id: u32) -> &'static [u8] {
        self.table.token(id).unwrap_or(&[])
    }

    /// The most bytes any ordinary token spells.
    pub(super) fn longest(&self) -> usize {
        self.table.longest_token()
    }

    /// The tokens of `encoding`.
    pub(super) fn of(encoding: &'static OpenAiEncoding) -> Result<Self, Error> {
        Ok(TokenBytes {
            table: encoding.model.table()?,
        })
    }
}

impl Tokenizer {
    /// The exact bytes of `ids`, as tiktoken's `decode_bytes`: `decode` without the U+FFFD
    /// replacement of bytes that are not valid UTF-8. For a Hugging Face tokenizer that is not a
    /// byte-level BPE, the UTF-8 of `decode`.
    pub fn decode_bytes(&self, ids: &[u32], skip_special_tokens: bool) -> Result<Vec<u8>, Error> {
        self.check_ids(ids)?;
        let pipeline = match self.family() {
            Family::OpenAi(_) => None,
            Family::HuggingFace => self.built_pipeline_engine(),
        };
        match (self.family(), pipeline) {
            (Family::OpenAi(encoding), _) => {
                let table = TokenBytes::of(encoding)?;
                let mut out = Vec::with_capacity(ids.len() * 4);
                for &id in ids {
                    match encoding.special_text(id) {
                        Some(special) if !skip_special_tokens => {
                            out.extend_from_slice(special.as_bytes())
                        }
                        Some(_) => {}
                        None => out.extend_from_slice(table.get(id)),
                    }
                }
                Ok(out)
            }
            (Family::HuggingFace, Some(engine)) if is_byte_level(engine) => {
                Ok(byte_level_bytes(engine, ids, skip_special_tokens))
            }
            _ => self
                .decode(ids, skip_special_tokens)
                .map(String::into_bytes),
        }
    }

    /// The bytes of the ordinary tokens of an OpenAI encoding (`None` for a Hugging Face
    /// tokenizer): its rank table, read on first use.
    pub(super) fn token_bytes(&self) -> Option<TokenBytes> {
        match self.family() {
            Family::OpenAi(encoding) => TokenBytes::of(encoding).ok(),
            Family::HuggingFace => None,
        }
    }
}

/// True when the engine's model is a byte-level BPE, whose tokens are bytes.
fn is_byte_level(engine: &PipelineEngine) -> bool {
    matches!(engine.tokenizer().get_model(), PipelineModel::BPE(bpe) if bpe.is_byte_level())
}

/// The bytes of a byte-level BPE's ids, as the engine's `decode` joins them before it turns them
/// into a string: an added token is its text, any other token its bytes.
fn byte_level_bytes(engine: &PipelineEngine, ids: &[u32], skip_special_tokens: bool) -> Vec<u8> {
    let tokenizer = engine.tokenizer();
    let added = tokenizer.get_added_vocabulary();
    let mut out = Vec::with_capacity(ids.len() * 4);
    for &id in ids {
        if let Some(token) = added.simple_id_to_token(id) {
            if !skip_special_tokens || !added.is_special_token(&token) {
                out.extend_from_slice(token.as_bytes());
            }
        } else if let Some(token) = tokenizer.get_model().id_to_token(id) {
            out.extend(token.chars().map(|c| char_to_byte(c).unwrap_or(b'?')));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::AllowedSpecial;
    use super::super::test_fixtures::{fixture_texts, fixture_tokenizer};
    use super::*;

    #[test]
    fn the_bytes_of_every_fixture_text_come_back_exactly() {
        for name in ["o200k_base", "cl100k_base", "p50k_base", "r50k_base"] {
            let tokenizer = Tokenizer::from_encoding(name).unwrap();
            let mode = tokenizer.encode_mode(None, &AllowedSpecial::All).unwrap();
            for text in fixture_texts() {
                let ids = tokenizer.encode(&text, &mode).unwrap();
                let bytes = tokenizer.decode_bytes(ids.as_slice(), false).unwrap();
                assert_eq!(bytes, text.as_bytes(), "{name}: {text:?}");
            }
        }
        let gpt2 = fixture_tokenizer("gpt2");
        let mode = gpt2
            .encode_mode(Some(false), &AllowedSpecial::None)
            .unwrap();
        for text in fixture_texts() {
            let ids = gpt2.encode(&text, &mode).unwrap();
            assert_eq!(
                gpt2.decode_bytes(ids.as_slice(), false).unwrap(),
                text.as_bytes()
            );
        }
    }

    #[test]
    fn a_character_cut_between_tokens_keeps_its_bytes() {
        // '😀' is F0 9F 98 80: in o200k_base and GPT-2 it spans more than one token, so one
        // token alone is not valid UTF-8; `decode` replaces it, `decode_bytes` keeps it.
        let gpt2 = fixture_tokenizer("gpt2");
        let openai = Tokenizer::from_encoding("r50k_base").unwrap();
        for tokenizer in [&gpt2, &*openai] {
            let mode = tokenizer.encode_mode(None, &AllowedSpecial::None).unwrap();
            let ids = tokenizer.encode("😀", &mode).unwrap();
            assert!(ids.len() > 1);
            let mut joined = Vec::new();
            for &id in ids.as_slice() {
                let bytes = tokenizer.decode_bytes(&[id], false).unwrap();
                assert!(std::str::from_utf8(&bytes).is_err());
                assert_eq!(
                    String::from_utf8_lossy(&bytes),
                    tokenizer.decode(&[id], false).unwrap()
                );
                joined.extend(bytes);
            }
            assert_eq!(joined, "😀".as_bytes());
        }
    }

    #[test]
    fn special_tokens_are_their_text_or_skipped() {
        let tokenizer = Tokenizer::from_encoding("cl100k_base").unwrap();
        let ids = [100257, 15339, 100276];
        assert_eq!(
            tokenizer.decode_bytes(&ids, false).unwrap(),
            b"<|endoftext|>hello<|endofprompt|>"
        );
        assert_eq!(tokenizer.decode_bytes(&ids, true).unwrap(), b"hello");
        let error = tokenizer.decode_bytes(&[15339, 100261], false).unwrap_err();
        assert!(error.message().contains("id 100261 at index 1"), "{error}");
    }

    #[test]
    fn other_hugging_face_tokenizers_give_the_utf8_of_decode() {
        for name in ["bert", "unigram"] {
            let tokenizer = fixture_tokenizer(name);
            let mode = tokenizer.encode_mode(None, &AllowedSpecial::None).unwrap();
            for text in fixture_texts().into_iter().take(50) {
                let ids = tokenizer.encode(&text, &mode).unwrap();
                for skip in [false, true] {
                    assert_eq!(
                        tokenizer.decode_bytes(ids.as_slice(), skip).unwrap(),
                        tokenizer.decode(ids.as_slice(), skip).unwrap().into_bytes()
                    );
                }
            }
        }
    }

    #[test]
    fn the_longest_tokens_are_measured() {
        for name in ["o200k_base", "cl100k_base", "p50k_base", "r50k_base"] {
            let tokenizer = Tokenizer::from_encoding(name).unwrap();
            let table = tokenizer.token_bytes().unwrap();
            assert!(
                (16..=1024).contains(&table.longest()),
                "{name}: {}",
                table.longest()
            );
            // The last ordinary rank is read (the table did not stop early).
            let last = (tokenizer.id_limit() - 1..=tokenizer.id_limit() - 1)
                .chain((0..tokenizer.id_limit()).rev())
                .find(|&id| !table.get(id).is_empty())
                .unwrap();
            assert!(last > 50_000, "{name}: {last}");
        }
    }
}
