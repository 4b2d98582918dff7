//! The release-candidate engine: `tokenizers` 1.0.0-rc.3's `PipelineTokenizer`.

use tokenizers::pipeline::{EncodeOptions, PipelineTokenizer};

use super::{Engine, Error, ErrorKind, Ids};

/// `PipelineTokenizer`, read from a canonical (`"version": "2.0"`) tokenizer.json.
pub struct PipelineEngine {
    tokenizer: PipelineTokenizer,
}

impl PipelineEngine {
    /// Reads a tokenizer.json, upgrading a file written by an older version to the canonical form
    /// first. The error says why the release candidate refuses it (the caller then falls back).
    ///
    /// A release candidate can panic on a file it does not expect (an empty vocabulary does); that
    /// is a refusal too, not a crash.
    pub fn from_json(json: &str) -> Result<Self, String> {
        let read = || -> Result<Self, String> {
            let canonical = tokenizers::canonicalize_str(json).map_err(|e| e.to_string())?;
            let tokenizer = tokenizers::from_json(&canonical).map_err(|e| e.to_string())?;
            Ok(PipelineEngine { tokenizer })
        };
        std::panic::catch_unwind(read)
            .unwrap_or_else(|_| Err("it panicked while reading the file".to_owned()))
    }

    /// The added tokens as the engine numbered them: text to id.
    pub fn added_tokens(&self) -> Vec<(String, u32)> {
        let mut tokens: Vec<_> = self
            .tokenizer
            .get_added_vocabulary()
            .get_vocab()
            .into_iter()
            .collect();
        tokens.sort();
        tokens
    }

    /// Wraps a tokenizer built in code (the embedded encodings).
    pub fn from_tokenizer(tokenizer: PipelineTokenizer) -> Self {
        PipelineEngine { tokenizer }
    }
}

impl Engine for PipelineEngine {
    #[inline]
    fn encode_into(
        &self,
        text: &str,
        add_special_tokens: bool,
        split_special: bool,
        out: &mut Ids,
    ) -> Result<(), Error> {
        let options = EncodeOptions {
            add_special_tokens,
            encode_special_tokens: !split_special,
            ..EncodeOptions::default()
        };
        self.tokenizer
            .encode_into(text, &options, out.tokens_mut())
            .map_err(|e| Error::new(ErrorKind::Engine, format!("encoding failed: {e}")))
    }

    /// rc.3 takes a scratch buffer out of the tokenizer's pool and puts it back: two locks, both
    /// of the calling thread's own shard of the pool (`tk-encode`, `pipeline/scratch_pool.rs`).
    fn locks_per_call(&self) -> Option<u64> {
        Some(2)
    }

    fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String, Error> {
        self.tokenizer
            .decode(ids, skip_special_tokens)
            .map_err(|e| Error::new(ErrorKind::Engine, format!("decoding failed: {e}")))
    }
}
