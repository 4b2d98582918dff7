//! What batchtok reads from a tokenizer.json itself, from the one parse of the file: the ids of its
//! vocabulary, its longest token and its added tokens as the file declares them.
//!
//! This is what lets a tokenizer that the release candidate encodes load without the stable crate:
//! `decode` checks ids against these, and routing compares the release candidate's added tokens
//! with these. A file of a shape this does not expect has no outline; the stable crate then reads
//! it at load, as before, and its vocabulary stands in.

use serde_json::Value;

/// An added token as the file declares it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct DeclaredToken {
    /// The token's text.
    pub content: String,
    /// The id the file gives it.
    pub id: u32,
    /// Whether it matches only as a whole word.
    pub single_word: bool,
    /// Whether it is matched in the normalized text (the reference's default), not the raw text.
    pub normalized: bool,
}

/// A tokenizer.json's vocabulary in outline.
#[derive(Debug)]
pub struct Outline {
    /// Every id of the model's vocabulary and of the added tokens, in file order, repeats kept.
    pub ids: Vec<u32>,
    /// The longest token, model or added, in UTF-8 bytes.
    pub longest_token: usize,
    /// The largest id.
    pub largest_id: u32,
    /// The added tokens, sorted by content then id.
    pub added: Vec<DeclaredToken>,
    /// The number of tokens as Python `tokenizers`' `get_vocab_size(with_added_tokens=True)`
    /// counts them: the model's vocabulary (a Unigram list with its repeats, a map without), and
    /// every distinct non-empty added token that the model's vocabulary does not hold.
    pub vocabulary_size: usize,
}

impl Outline {
    /// The outline of a parsed tokenizer.json; `None` where the file has a shape this does not
    /// know (a vocabulary neither a map of ids nor a list of pieces, an id beyond `u32`).
    pub fn read(file: &Value) -> Option<Outline> {
        let mut outline = Outline {
            ids: Vec::new(),
            longest_token: 0,
            largest_id: 0,
            added: Vec::new(),
            vocabulary_size: 0,
        };
        let vocab = file.get("model")?.get("vocab")?;
        match vocab {
            // BPE, WordPiece, WordLevel: token to id.
            Value::Object(vocab) => {
                outline.ids.reserve(vocab.len());
                for (token, id) in vocab {
                    outline.note(token, u32::try_from(id.as_u64()?).ok()?);
                }
            }
            // Unigram: `[piece, score]` pairs, numbered by position.
            Value::Array(pieces) => {
                outline.ids.reserve(pieces.len());
                for (id, piece) in pieces.iter().enumerate() {
                    outline.note(piece.get(0)?.as_str()?, u32::try_from(id).ok()?);
                }
            }
            _ => return None,
        }
        if let Some(added) = file.get("added_tokens").filter(|added| !added.is_null()) {
            for token in added.as_array()? {
                let content = token.get("content")?.as_str()?;
                let id = u32::try_from(token.get("id")?.as_u64()?).ok()?;
                outline.note(content, id);
                outline.added.push(DeclaredToken {
                    content: content.to_owned(),
                    id,
                    single_word: token
                        .get("single_word")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                    normalized: token
                        .get("normalized")
                        .and_then(Value::as_bool)
                        .unwrap_or(true),
                });
            }
        }
        outline.added.sort();
        outline.added.dedup();
        outline.vocabulary_size = outline.count_vocabulary(vocab);
        Some(outline)
    }

    /// [`vocabulary_size`](Self::vocabulary_size) for the model vocabulary `vocab`, once the added
    /// tokens are read.
    fn count_vocabulary(&self, vocab: &Value) -> usize {
        let mut added: Vec<&str> = self
            .added
            .iter()
            .map(|token| token.content.as_str())
            .filter(|content| !content.is_empty())
            .collect();
        added.dedup();
        match vocab {
            Value::Object(map) => {
                map.len() + added.iter().filter(|c| !map.contains_key(**c)).count()
            }
            Value::Array(pieces) => {
                let known: std::collections::HashSet<&str> = if added.is_empty() {
                    Default::default()
                } else {
                    pieces
                        .iter()
                        .filter_map(|piece| piece.get(0)?.as_str())
                        .collect()
                };
                pieces.len() + added.iter().filter(|c| !known.contains(**c)).count()
            }
            _ => 0,
        }
    }

    fn note(&mut self, token: &str, id: u32) {
        self.ids.push(id);
        self.longest_token = self.longest_token.max(token.len());
        self.largest_id = self.largest_id.max(id);
    }

    /// True when an added token matches only as a whole word.
    pub fn has_single_word_added_token(&self) -> bool {
        self.added.iter().any(|token| token.single_word)
    }

    /// True when an added token is matched in the normalized text.
    pub fn has_normalized_added_token(&self) -> bool {
        self.added.iter().any(|token| token.normalized)
    }

    /// The added tokens as the file numbers them: text to id, sorted.
    pub fn added_tokens(&self) -> Vec<(String, u32)> {
        let mut tokens: Vec<_> = self
            .added
            .iter()
            .map(|token| (token.content.clone(), token.id))
            .collect();
        tokens.sort();
        tokens.dedup();
        tokens
    }
}
