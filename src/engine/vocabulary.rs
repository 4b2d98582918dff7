//! A tokenizer's vocabulary: tokens to ids and back, its added tokens, its size, its named special
//! tokens.
//!
//! A Hugging Face tokenizer answers as Python `tokenizers` does (`token_to_id`, `id_to_token`,
//! `get_vocab`, `get_added_tokens_decoder`, `get_vocab_size(with_added_tokens=True)`), from the
//! stable engine, which runs the reference's own code; it is built on the first vocabulary call
//! where the load did not need it. Only the size is known without it, counted at load.
//!
//! An OpenAI encoding answers as tiktoken does: a token is its bytes (`encode_single_token`,
//! `decode_single_token_bytes`), and its special tokens are its added tokens. A token string is
//! its bytes read as UTF-8, so the about one in a thousand tokens whose bytes are part of a
//! character have no string: [`Tokenizer::id_to_token`] answers `None` for them,
//! [`Tokenizer::bytes_of_token`] gives their bytes, and [`Tokenizer::vocabulary`] leaves them out.

use super::model_config::SpecialTokens;
use super::stable::StableEngine;
use super::tokenizer::{Family, Tokenizer};
use super::{Error, ErrorKind};

/// The text of the token that ends a document in the OpenAI encodings.
const END_OF_TEXT: &str = "<|endoftext|>";

/// An added token of a Hugging Face tokenizer, or a special token of an OpenAI encoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedToken {
    /// Its text.
    pub content: String,
    /// Its id.
    pub id: u32,
    /// Whether it is special (skipped by `decode` with `skip_special_tokens`).
    pub special: bool,
}

/// Whether `text` names a special token that stands for nothing: o200k_harmony's
/// `<|reserved_N|>`, a tekken file's `<SPECIAL_N>`.
fn is_filler(text: &str) -> bool {
    text.starts_with("<|reserved_") || text.starts_with("<SPECIAL_")
}

impl Tokenizer {
    /// The id of `token`, or `None` where the vocabulary has no such token. For a Hugging Face
    /// tokenizer the added tokens are looked up first, as Python's `token_to_id`; for an OpenAI
    /// encoding the ordinary tokens (by the UTF-8 bytes of `token`) and then the special ones, as
    /// tiktoken's `encode_single_token`.
    pub fn token_to_id(&self, token: &str) -> Result<Option<u32>, Error> {
        match self.family() {
            Family::OpenAi(encoding) => {
                let table = encoding.model.table()?;
                Ok(table.rank(token.as_bytes()).or_else(|| {
                    encoding
                        .specials()
                        .iter()
                        .find(|special| special.text == token)
                        .map(|special| special.id)
                }))
            }
            Family::HuggingFace => Ok(self.vocabulary_engine()?.token_to_id(token)),
        }
    }

    /// The token of `id`, or `None` where no token has that id, or (OpenAI encodings) where the
    /// token's bytes are not UTF-8 on their own ([`bytes_of_token`](Self::bytes_of_token) has them).
    pub fn id_to_token(&self, id: u32) -> Result<Option<String>, Error> {
        match self.family() {
            Family::OpenAi(_) => Ok(self
                .bytes_of_token(id)?
                .and_then(|bytes| String::from_utf8(bytes).ok())),
            Family::HuggingFace => Ok(self.vocabulary_engine()?.id_to_token(id)),
        }
    }

    /// The bytes of the token `id`, or `None` where no token has that id: for an OpenAI encoding
    /// the bytes it stands for (tiktoken's `decode_single_token_bytes`; a special token's text);
    /// for a Hugging Face tokenizer the UTF-8 of the token as the vocabulary spells it (a
    /// byte-level BPE token is spelled in its byte-to-character alphabet, `Ġ` for a space).
    pub fn bytes_of_token(&self, id: u32) -> Result<Option<Vec<u8>>, Error> {
        match self.family() {
            Family::OpenAi(encoding) => {
                let table = encoding.model.table()?;
                if let Some(bytes) = table.token(id) {
                    return Ok(Some(bytes.to_vec()));
                }
                Ok(encoding
                    .special_text(id)
                    .map(|special| special.as_bytes().to_vec()))
            }
            Family::HuggingFace => Ok(self.id_to_token(id)?.map(String::into_bytes)),
        }
    }

    /// Every token with its id, in no particular order; the added tokens too where
    /// `with_added_tokens` (Python's `get_vocab`). For an OpenAI encoding, the ordinary tokens
    /// whose bytes are UTF-8, and its special tokens where `with_added_tokens`.
    pub fn vocabulary(&self, with_added_tokens: bool) -> Result<Vec<(String, u32)>, Error> {
        match self.family() {
            Family::OpenAi(encoding) => {
                let table = encoding.model.table()?;
                let mut tokens = Vec::with_capacity(table.len() + encoding.specials().len());
                for rank in 0..table.len() as u32 {
                    if let Some(text) = table.token(rank).and_then(|b| std::str::from_utf8(b).ok())
                    {
                        tokens.push((text.to_owned(), rank));
                    }
                }
                if with_added_tokens {
                    tokens.extend(
                        encoding
                            .specials()
                            .iter()
                            .map(|special| (special.text.to_owned(), special.id)),
                    );
                }
                Ok(tokens)
            }
            Family::HuggingFace => Ok(self.vocabulary_engine()?.vocabulary_of(with_added_tokens)),
        }
    }

    /// The added tokens, by id (Python's `get_added_tokens_decoder`); an OpenAI encoding's special
    /// tokens, each `special`.
    pub fn added_tokens(&self) -> Result<Vec<AddedToken>, Error> {
        match self.family() {
            Family::OpenAi(encoding) => {
                let mut tokens: Vec<AddedToken> = encoding
                    .specials()
                    .iter()
                    .map(|special| AddedToken {
                        content: special.text.to_owned(),
                        id: special.id,
                        special: true,
                    })
                    .collect();
                tokens.sort_by_key(|token| token.id);
                Ok(tokens)
            }
            Family::HuggingFace => Ok(self
                .vocabulary_engine()?
                .added_tokens_with_kind()
                .into_iter()
                .map(|(content, id, special)| AddedToken {
                    content,
                    id,
                    special,
                })
                .collect()),
        }
    }

    /// How many tokens the vocabulary has, added tokens included: Python `tokenizers`'
    /// `get_vocab_size(with_added_tokens=True)`; for an OpenAI encoding, its ordinary and special
    /// tokens. Where ids have gaps it is less than [`id_limit`](Self::id_limit).
    pub fn vocabulary_size(&self) -> usize {
        self.stored_vocabulary_size()
    }

    /// The named special tokens: a model folder's config files' (`model_config.rs`), each unset
    /// one taken from what the tokenizer.json says (its padding token, its model's unknown token,
    /// its post-processor's classifier and separator tokens). An OpenAI encoding's `eos` is
    /// `<|endoftext|>` where it has it, and its other named special tokens (not the numbered
    /// `<|reserved_…|>` ones) are `additional`.
    pub fn special_tokens(&self) -> SpecialTokens {
        match self.family() {
            Family::OpenAi(encoding) => {
                // tiktoken's end of text; a tekken file's SentencePiece-style names
                // (`mistral_common`'s bos, eos, unk and pad).
                let has = |text: &str| encoding.specials().iter().any(|s| s.text == text);
                let named = |text: &str| has(text).then(|| text.to_owned());
                let eos = named(END_OF_TEXT).or_else(|| named("</s>"));
                let (bos, unk, pad) = (named("<s>"), named("<unk>"), named("<pad>"));
                let named_already = [&bos, &eos, &unk, &pad];
                SpecialTokens {
                    additional: encoding
                        .specials()
                        .iter()
                        .filter(|s| {
                            !named_already.iter().any(|n| n.as_deref() == Some(s.text))
                                && !is_filler(s.text)
                        })
                        .map(|s| s.text.to_owned())
                        .collect(),
                    bos,
                    eos,
                    unk,
                    pad,
                    ..SpecialTokens::default()
                }
            }
            Family::HuggingFace => match self.model_config() {
                Some(config) => config.special_tokens.clone().or(self.file_special_tokens()),
                None => self.file_special_tokens().clone(),
            },
        }
    }

    /// The stable engine, which answers vocabulary questions as the reference does.
    fn vocabulary_engine(&self) -> Result<&StableEngine, Error> {
        self.stable_engine().ok_or_else(|| {
            Error::new(
                ErrorKind::Engine,
                "this tokenizer's vocabulary cannot be listed: Hugging Face tokenizers 0.23 does \
                 not read its file (batchtok encodes it with the release candidate alone)",
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_fixtures;
    use super::*;

    #[test]
    fn the_vocabulary_size_counted_at_load_is_the_stable_crates() {
        for name in ["gpt2", "bert", "unigram"] {
            let tokenizer = test_fixtures::fixture_tokenizer(name);
            let stable = tokenizer.vocabulary_engine().unwrap();
            assert_eq!(
                tokenizer.vocabulary_size(),
                stable.vocabulary_size(),
                "{name}"
            );
        }
    }

    #[test]
    fn tokens_and_ids_round_trip() {
        for name in ["gpt2", "bert", "unigram"] {
            let tokenizer = test_fixtures::fixture_tokenizer(name);
            let vocabulary = tokenizer.vocabulary(true).unwrap();
            assert_eq!(vocabulary.len(), tokenizer.vocabulary_size(), "{name}");
            for (token, id) in vocabulary.iter().step_by(97) {
                assert_eq!(
                    tokenizer.token_to_id(token).unwrap(),
                    Some(*id),
                    "{name} {token}"
                );
                assert_eq!(
                    tokenizer.id_to_token(*id).unwrap().as_deref(),
                    Some(token.as_str())
                );
            }
            assert_eq!(tokenizer.id_to_token(tokenizer.id_limit()).unwrap(), None);
            assert_eq!(tokenizer.token_to_id("no such token \u{1}").unwrap(), None);
        }
    }

    #[test]
    fn an_openai_encodings_tokens_are_bytes_and_its_specials_are_added_tokens() {
        let tokenizer = Tokenizer::from_encoding("cl100k_base").unwrap();
        assert_eq!(tokenizer.token_to_id("hello").unwrap(), Some(15339));
        assert_eq!(
            tokenizer.token_to_id("<|endoftext|>").unwrap(),
            Some(100257)
        );
        assert_eq!(
            tokenizer.id_to_token(100257).unwrap().as_deref(),
            Some("<|endoftext|>")
        );
        // A token whose bytes are part of a character has bytes but no string.
        let partial = (0..tokenizer.id_limit())
            .find(|&id| {
                matches!(tokenizer.bytes_of_token(id).unwrap(), Some(b) if std::str::from_utf8(&b).is_err())
            })
            .unwrap();
        assert_eq!(tokenizer.id_to_token(partial).unwrap(), None);
        let added = tokenizer.added_tokens().unwrap();
        assert!(added.iter().all(|t| t.special) && added.windows(2).all(|w| w[0].id < w[1].id));
        let ordinary = tokenizer.vocabulary(false).unwrap().len();
        assert_eq!(
            tokenizer.vocabulary(true).unwrap().len(),
            ordinary + added.len()
        );
        assert_eq!(
            tokenizer.special_tokens().eos.as_deref(),
            Some("<|endoftext|>")
        );
    }
}
