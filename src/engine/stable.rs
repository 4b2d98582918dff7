//! The exact fallback: the stable `tokenizers` 0.23 crate, the code the Python reference runs.

use std::sync::OnceLock;

use tokenizers_stable::Tokenizer as StableTokenizer;

use super::{Engine, Error, ErrorKind, Ids};

/// The stable `Tokenizer`, read from any tokenizer.json the stable release reads.
pub struct StableEngine {
    /// Splits added special tokens out of the text, the stable default.
    splitting: StableTokenizer,
    /// The same tokenizer with `encode_special_tokens` on, made on first use: the flag lives on
    /// the tokenizer, not on the call.
    ordinary: OnceLock<StableTokenizer>,
}

impl StableEngine {
    /// Reads a tokenizer.json. Padding is turned off: it shapes whole batches into rectangles,
    /// which batchtok's ragged results do not do; truncation stays as the file sets it.
    pub fn from_json(json: &str) -> Result<Self, String> {
        let mut tokenizer =
            StableTokenizer::from_bytes(json.as_bytes()).map_err(|e| e.to_string())?;
        tokenizer.with_padding(None);
        Ok(StableEngine {
            splitting: tokenizer,
            ordinary: OnceLock::new(),
        })
    }

    /// Every id in the vocabulary, added tokens included.
    pub fn vocabulary_ids(&self) -> impl Iterator<Item = u32> {
        self.splitting.get_vocab(true).into_values()
    }

    /// The added tokens as the file numbers them: text to id.
    pub fn added_tokens(&self) -> Vec<(String, u32)> {
        let mut tokens: Vec<_> = self
            .splitting
            .get_added_tokens_decoder()
            .into_iter()
            .map(|(id, token)| (token.content, id))
            .collect();
        tokens.sort();
        tokens
    }

    fn tokenizer(&self, split_special: bool) -> &StableTokenizer {
        if split_special {
            &self.splitting
        } else {
            self.ordinary.get_or_init(|| {
                let mut ordinary = self.splitting.clone();
                ordinary.set_encode_special_tokens(true);
                ordinary
            })
        }
    }
}

impl Engine for StableEngine {
    fn encode_into(
        &self,
        text: &str,
        add_special_tokens: bool,
        split_special: bool,
        out: &mut Ids,
    ) -> Result<(), Error> {
        let encoding = self
            .tokenizer(split_special)
            .encode_fast(text, add_special_tokens)
            .map_err(|e| Error::new(ErrorKind::Engine, format!("encoding failed: {e}")))?;
        out.extend_from_slice(encoding.get_ids());
        Ok(())
    }

    fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String, Error> {
        self.splitting
            .decode(ids, skip_special_tokens)
            .map_err(|e| Error::new(ErrorKind::Engine, format!("decoding failed: {e}")))
    }
}
