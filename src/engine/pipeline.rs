//! The release-candidate engine: `tokenizers` 1.0.0-rc.3's `PipelineTokenizer`.
//!
//! A worker's texts go through the pipeline's public stages with working memory the worker holds
//! for the whole batch (`scratch.rs` says why); one text on its own goes through
//! `PipelineTokenizer::encode_into` itself.

use tokenizers::pipeline::{
    EncodeOptions, Model, PipelineToken, PipelineTokenizer, PreTokenizer, PreTokenizerScratch,
    Segment, SpecialSegmentIterator, normalize_all,
};
use tokenizers::truncate_pair;

use super::scratch::{IdleScratches, PipelineScratch, Scratch};
use super::{Engine, Error, ErrorKind, Ids};

/// `PipelineTokenizer`, read from a canonical (`"version": "2.0"`) tokenizer.json.
pub struct PipelineEngine {
    tokenizer: PipelineTokenizer,
    /// Working memory no worker holds at the moment.
    idle: IdleScratches,
    /// No added tokens and no normalizers (the OpenAI encodings): a text goes straight to the
    /// pre-tokenizer, with no search for added tokens that cannot be there.
    plain: bool,
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
            Ok(PipelineEngine::from_tokenizer(tokenizer))
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

    /// The release candidate's tokenizer itself, for what the engine trait does not cover (token
    /// strings, the decoder).
    pub(super) fn tokenizer(&self) -> &PipelineTokenizer {
        &self.tokenizer
    }

    /// Wraps a tokenizer built in code (the embedded encodings).
    pub fn from_tokenizer(tokenizer: PipelineTokenizer) -> Self {
        PipelineEngine {
            plain: tokenizer.get_added_vocabulary().is_empty()
                && tokenizer.get_normalizers().is_empty(),
            tokenizer,
            idle: IdleScratches::default(),
        }
    }

    /// Working memory for one worker: an idle one, or a new one.
    pub(super) fn lease_scratch(&self) -> PipelineScratch {
        self.idle.take().unwrap_or_else(|| PipelineScratch {
            model: self.tokenizer.get_model().init_scratch(),
            split: PreTokenizerScratch::default(),
            spans: Vec::new(),
        })
    }

    /// Takes back working memory [`lease_scratch`](Self::lease_scratch) gave out.
    pub(super) fn give_back_scratch(&self, scratch: PipelineScratch) {
        self.idle.give_back(scratch);
    }

    /// The stages `PipelineTokenizer::encode_into` runs for one text, with the caller's working
    /// memory: added tokens are cut out of the raw text, the rest normalized, added tokens cut
    /// out of that, the rest pre-tokenized and run through the model (a plain tokenizer's text
    /// goes straight to the pre-tokenizer); the sequence is truncated as the file says, and the
    /// single-sequence template's tokens go around it.
    fn encode_with(
        &self,
        text: &str,
        add_special_tokens: bool,
        split_special: bool,
        scratch: &mut PipelineScratch,
        out: &mut Vec<PipelineToken>,
    ) -> tokenizers::Result<()> {
        let template = &self.tokenizer.get_post_processor().single;
        if add_special_tokens {
            out.extend(template.prefix.iter().map(|&(id, _)| id));
        }
        let sequence_start = out.len();
        if self.plain {
            self.tokenize(text, scratch, out)?;
        } else {
            self.encode_segments(text, split_special, scratch, out)?;
        }
        if let Some(truncation) = self.tokenizer.get_truncation() {
            let specials = if add_special_tokens {
                template.n_special()
            } else {
                0
            };
            // Only a sequence that is cut leaves `out` for the engine's own truncation.
            if out.len() - sequence_start + specials > truncation.max_length {
                let sequence = out.split_off(sequence_start);
                let (kept, _) = truncate_pair(sequence, None, Some(truncation), specials)?;
                out.extend_from_slice(&kept);
            }
        }
        if add_special_tokens {
            out.extend(template.suffix.iter().map(|&(id, _)| id));
        }
        Ok(())
    }

    /// Cuts added tokens out of the raw text, normalizes the rest, cuts added tokens out of
    /// that, and tokenizes what is left.
    fn encode_segments(
        &self,
        text: &str,
        split_special: bool,
        scratch: &mut PipelineScratch,
        out: &mut Vec<PipelineToken>,
    ) -> tokenizers::Result<()> {
        let added = self.tokenizer.get_added_vocabulary();
        let encode_special_tokens = !split_special;
        for raw in SpecialSegmentIterator::new(text, added, false, encode_special_tokens) {
            let (raw, input_offset) = match raw {
                Segment::SpecialToken(id) => {
                    out.push(PipelineToken::from(id));
                    continue;
                }
                Segment::Text { text, input_offset } => (text, input_offset),
            };
            let normalized = normalize_all(self.tokenizer.get_normalizers(), raw, input_offset)?;
            for piece in
                SpecialSegmentIterator::new(&normalized, added, true, encode_special_tokens)
            {
                match piece {
                    Segment::SpecialToken(id) => out.push(PipelineToken::from(id)),
                    Segment::Text { text, .. } => self.tokenize(text, scratch, out)?,
                }
            }
        }
        Ok(())
    }

    /// Pre-tokenizes normalized text that holds no added token, and runs the model on the pieces.
    #[inline]
    fn tokenize(
        &self,
        text: &str,
        scratch: &mut PipelineScratch,
        out: &mut Vec<PipelineToken>,
    ) -> tokenizers::Result<()> {
        // Pre-tokens are `u32` ranges of the text.
        if u32::try_from(text.len()).is_err() {
            return Err(format!(
                "the text is {} bytes after normalization; the engine splits texts of up to {} bytes",
                text.len(),
                u32::MAX
            )
            .into());
        }
        scratch.spans.clear();
        self.tokenizer.get_pre_tokenizer().pre_tokenize(
            text,
            &mut scratch.split,
            &mut scratch.spans,
        )?;
        self.tokenizer
            .get_model()
            .tokenize_spans(text, &scratch.spans, &mut scratch.model, out)
    }
}

impl Engine for PipelineEngine {
    #[inline]
    fn encode_into<'e>(
        &'e self,
        text: &str,
        add_special_tokens: bool,
        split_special: bool,
        scratch: &mut Scratch<'e>,
        out: &mut Ids,
    ) -> Result<(), Error> {
        let encoded = match scratch.leased_for(self) {
            Some(held) => self.encode_with(
                text,
                add_special_tokens,
                split_special,
                held,
                out.tokens_mut(),
            ),
            None => {
                // rc.3 takes working memory out of the tokenizer's pool and puts it back: two
                // locks, on the calling thread's shard of the pool (`tk-encode`,
                // `pipeline/scratch_pool.rs`).
                scratch.count_locks(2);
                let options = EncodeOptions {
                    add_special_tokens,
                    encode_special_tokens: !split_special,
                    ..EncodeOptions::default()
                };
                self.tokenizer.encode_into(text, &options, out.tokens_mut())
            }
        };
        encoded.map_err(|e| Error::new(ErrorKind::Engine, format!("encoding failed: {e}")))
    }

    fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String, Error> {
        self.tokenizer
            .decode(ids, skip_special_tokens)
            .map_err(|e| Error::new(ErrorKind::Engine, format!("decoding failed: {e}")))
    }
}
