//! Tokens added to a Hugging Face tokenizer, as Python `tokenizers`' `add_tokens` and
//! `add_special_tokens` add them.
//!
//! The reference decides everything about an added token: whether it is new (a token the
//! vocabulary or the added tokens already hold is not added again), its id (the next after both),
//! and where it matches (a plain token in the normalized text, a special one in the raw text, and
//! a special one is left out by `skipSpecialTokens`). So the tokens are added to the stable
//! engine's tokenizer, the reference's own code, and what it writes out as a tokenizer.json is
//! loaded as any file is: both engines read it, and the load checks that they agree on the added
//! vocabulary (`routing.rs`). The tokenizer it was made from is left as it was.

use tokenizers_stable::AddedToken;

use super::{Error, ErrorKind, Family, Tokenizer};

/// A token to add, with how it matches: Python `tokenizers`' `AddedToken`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewToken {
    /// Its text.
    pub content: String,
    /// It matches only a whole word.
    pub single_word: bool,
    /// It takes the white space on its left.
    pub lstrip: bool,
    /// It takes the white space on its right.
    pub rstrip: bool,
    /// It matches the normalized text (`None`: as `tokenizers` decides, plain tokens do and
    /// special ones do not).
    pub normalized: Option<bool>,
}

impl NewToken {
    /// The token as the reference adds it, `special` or not.
    fn to_added_token(&self, special: bool) -> AddedToken {
        let added = AddedToken::from(self.content.as_str(), special)
            .single_word(self.single_word)
            .lstrip(self.lstrip)
            .rstrip(self.rstrip);
        match self.normalized {
            Some(normalized) => added.normalized(normalized),
            None => added,
        }
    }
}

impl From<String> for NewToken {
    fn from(content: String) -> NewToken {
        NewToken {
            content,
            ..NewToken::default()
        }
    }
}

impl Tokenizer {
    /// A new tokenizer: this one with `tokens` added (special ones where `special`). The model
    /// folder's config files still apply; the file it was read from no longer describes it, so
    /// it has no [`source`](Self::source).
    pub fn with_added_tokens(
        &self,
        tokens: &[NewToken],
        special: bool,
    ) -> Result<Tokenizer, Error> {
        if let Family::OpenAi(encoding) = self.family() {
            return Err(Error::new(
                ErrorKind::InvalidOption,
                format!(
                    "withAddedTokens applies to Hugging Face tokenizers; {} takes special tokens \
                     of its own with Tokenizer.fromEncoding('{}', {{ specialTokens }})",
                    encoding.name, encoding.name
                ),
            ));
        }
        if let Some(empty) = tokens.iter().position(|token| token.content.is_empty()) {
            return Err(Error::new(
                ErrorKind::InvalidOption,
                format!("tokens[{empty}] is empty; an added token has at least one character"),
            ));
        }
        let stable = self.stable_engine().ok_or_else(|| {
            Error::new(
                ErrorKind::Load,
                "tokens cannot be added to this tokenizer: Hugging Face tokenizers 0.23, which \
                 decides their ids, cannot read its file. Add them to the file's added_tokens",
            )
        })?;
        let json = stable
            .file_with_added_tokens(
                tokens
                    .iter()
                    .map(|token| token.to_added_token(special))
                    .collect(),
                special,
            )
            .map_err(|why| {
                Error::new(ErrorKind::Load, format!("adding the tokens failed: {why}"))
            })?;
        let mut tokenizer = Tokenizer::from_json(&json, "the tokenizer with the added tokens")?;
        tokenizer.model_config = self.model_config().cloned();
        Ok(tokenizer)
    }
}
