//! When a batch waits for the tokenizer's fastest engine.
//!
//! A tokenizer encodes as soon as it is loaded, on its first engine, while its fastest engine is
//! built on a thread of lower priority (`loading.rs`; an encoding's in `openai.rs`). A batch that
//! keeps every core encoding leaves that thread almost no core, so the build is put off and the
//! batch runs on the first engine to its end. Below a size of text the first engine, on every
//! core, ends a batch sooner than the build would; from about it on, waiting is faster:
//!
//! - an encoding's first engine (tiktoken's BPE over the rank table) runs at half or more of the
//!   full engine's speed, which is built in about half a second: from 32 MiB;
//! - a tokenizer.json's first engine is the stable `tokenizers` crate, a tenth to a twentieth of
//!   the release candidate's speed, whose build takes longer the larger the vocabulary (a tenth of
//!   a second for Llama 2's 32,000 tokens, over a second for Gemma 3's 262,145): from 16 bytes per
//!   token of the vocabulary (0.5 MiB for Llama 2's, 2 MiB for Llama 3's, 4 MiB for Gemma 3's).
//!
//! Measured on 2 cores with `node benchmark/engine-wait.mjs` (`benchmark/results/engine-wait.md`):
//! on a tokenizer.json, from twice these sizes a run that waits was faster on every file
//! measured, 1.7 to 4.4 times at 16-64 MiB; about them, the two ways were within 0.15 s. Under an
//! encoding they stay within about 0.15 s of each other from 16 MiB on.
//!
//! The batch calls wait where one call's text reaches [`Tokenizer::engine_wait_bytes`]; a job of
//! many smaller calls (`batchtok/stream`, the CLI) decides on its total, in JS, from the same size.
//! One long text is also a matter of memory, the stable engine's being some 200 times a text: a
//! tokenizer.json hands it texts in parts of 64 KiB where it may cut them, and a text over 1 MiB
//! it may not cut waits for the build whatever the call (`tokenizer.rs`, `long_texts.rs`).

use super::tokenizer::{Family, Tokenizer};

/// The size past which one text that is encoded whole waits for the release candidate's build
/// rather than go to the stable engine: 200 MiB of its working memory and 0.4 s on Llama 3's file
/// at this size, against a build of a few tenths of a second to a second.
pub(super) const LONG_TEXT_WAIT_BYTES: usize = 1 << 20;

/// The text from which a batch under an encoding waits (see the module's docs).
const ENCODING_WAIT_BYTES: usize = 32 << 20;

/// The text per token of a tokenizer.json's vocabulary from which a batch waits (see the module's
/// docs).
const WAIT_BYTES_PER_TOKEN: usize = 16;

impl Tokenizer {
    /// The bytes of UTF-8 text from which a batch is encoded sooner by waiting for the fastest
    /// engine, while it is built, than on the first engine (see the module's docs).
    pub fn engine_wait_bytes(&self) -> usize {
        match self.family() {
            Family::OpenAi(_) => ENCODING_WAIT_BYTES,
            Family::HuggingFace => WAIT_BYTES_PER_TOKEN.saturating_mul(self.vocabulary_size()),
        }
    }

    /// Waits until the fastest engine is built where a batch of `bytes` of text is encoded sooner
    /// that way ([`engine_wait_bytes`](Self::engine_wait_bytes)); returns at once where it is
    /// built or the batch is smaller.
    pub fn wait_before_batch(&self, bytes: usize) {
        if bytes >= self.engine_wait_bytes() {
            // A build that failed leaves the first engine, which encodes every text: the batch
            // goes on, as it would have without the wait.
            let _ = self.wait_until_ready();
        }
    }

    /// Waits until the fastest engine is built where one text of `bytes`, encoded whole, would
    /// otherwise go to the stable engine only because the build is not done: past
    /// [`LONG_TEXT_WAIT_BYTES`]. Returns at once where it is built.
    pub(super) fn wait_before_long_text(&self, bytes: usize) {
        if bytes > LONG_TEXT_WAIT_BYTES && !self.is_ready() {
            let _ = self.wait_until_ready();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// The fixture GPT-2 tokenizer.json, loaded: its release candidate still being built.
    fn gpt2() -> Tokenizer {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("__test__/fixtures/tokenizers/gpt2.json");
        Tokenizer::from_file(&path).unwrap()
    }

    #[test]
    fn an_encoding_waits_from_32_mib_and_a_tokenizer_json_from_16_bytes_a_token() {
        let o200k = Tokenizer::from_encoding("o200k_base").unwrap();
        assert_eq!(o200k.engine_wait_bytes(), 32 << 20);
        let gpt2 = gpt2();
        assert!(gpt2.vocabulary_size() > 50_000);
        assert_eq!(gpt2.engine_wait_bytes(), 16 * gpt2.vocabulary_size());
    }

    #[test]
    fn a_batch_that_reaches_the_size_returns_with_the_fastest_engine_built() {
        let gpt2 = gpt2();
        gpt2.wait_before_batch(gpt2.engine_wait_bytes());
        assert!(gpt2.is_ready());
    }
}
