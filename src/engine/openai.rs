//! The OpenAI encodings, embedded in the binary and served by the release-candidate engine.
//!
//! Each encoding ships as its rank table in a compact form (`encodings/*.ranks.deflate`, written by
//! `scripts/embed-encodings.js` from the `.tiktoken` files of the `tiktoken-rs` crate): for each
//! rank from 0 up, a length byte and the token's bytes, raw-deflated; a length of 0 marks a rank
//! with no ordinary token.
//!
//! At load, the table becomes a byte-level BPE tokenizer.json that the engine reads: the vocabulary
//! is the ranks; the merges are derived from them so that BPE by merge rank picks, at every step,
//! the same pair tiktoken picks (the adjacent pair whose concatenation has the lowest rank, the
//! leftmost on a tie); `ignore_merges` makes a piece that is itself a token come out as that token,
//! as tiktoken's first lookup does. Special tokens are added tokens, which the engine is told to
//! treat as text; `special.rs` cuts out the ones a call allows.

use std::collections::HashMap;

use serde_json::{Value, json};
use tokenizers::utils::byte_level::BYTES_CHAR_LOOKUP;

use super::pipeline::PipelineEngine;
use super::special::SpecialToken;
use super::{Error, ErrorKind};

/// The GPT-2 pre-tokenization regex, as tiktoken's r50k_base and p50k_base use it.
const GPT2_PATTERN: &str =
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";

/// cl100k_base's regex without its possessive quantifiers: Oniguruma and the engine's own matcher
/// read `?+`/`++` differently from tiktoken, and this spelling splits text the way tiktoken does.
const CL100K_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// o200k_base's regex: case-aware letter runs with an optional contraction suffix.
const O200K_PATTERN: &str = r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// One embedded OpenAI encoding.
#[derive(Debug)]
pub struct OpenAiEncoding {
    /// Its tiktoken name.
    pub name: &'static str,
    /// Other names it answers to.
    pub aliases: &'static [&'static str],
    pattern: &'static str,
    ranks: &'static [u8],
    /// Its special tokens, as tiktoken defines them.
    pub specials: &'static [SpecialToken],
}

const fn special(text: &'static str, id: u32) -> SpecialToken {
    SpecialToken { text, id }
}

/// Every embedded encoding, in the order errors list them.
pub static ENCODINGS: &[OpenAiEncoding] = &[
    OpenAiEncoding {
        name: "o200k_base",
        aliases: &[],
        pattern: O200K_PATTERN,
        ranks: include_bytes!("encodings/o200k_base.ranks.deflate"),
        specials: &[special("<|endoftext|>", 199999), special("<|endofprompt|>", 200018)],
    },
    OpenAiEncoding {
        name: "cl100k_base",
        aliases: &[],
        pattern: CL100K_PATTERN,
        ranks: include_bytes!("encodings/cl100k_base.ranks.deflate"),
        specials: &[
            special("<|endoftext|>", 100257),
            special("<|fim_prefix|>", 100258),
            special("<|fim_middle|>", 100259),
            special("<|fim_suffix|>", 100260),
            special("<|endofprompt|>", 100276),
        ],
    },
    OpenAiEncoding {
        name: "p50k_base",
        aliases: &[],
        pattern: GPT2_PATTERN,
        ranks: include_bytes!("encodings/p50k_base.ranks.deflate"),
        specials: &[special("<|endoftext|>", 50256)],
    },
    OpenAiEncoding {
        name: "r50k_base",
        aliases: &["gpt2"],
        pattern: GPT2_PATTERN,
        ranks: include_bytes!("encodings/r50k_base.ranks.deflate"),
        specials: &[special("<|endoftext|>", 50256)],
    },
];

/// Finds an encoding by name or alias; an unknown name is an error listing the valid ones.
pub fn find(name: &str) -> Result<&'static OpenAiEncoding, Error> {
    ENCODINGS
        .iter()
        .find(|e| e.name == name || e.aliases.contains(&name))
        .ok_or_else(|| {
            let valid: Vec<String> = ENCODINGS
                .iter()
                .flat_map(|e| std::iter::once(e.name).chain(e.aliases.iter().copied()))
                .map(|n| format!("'{n}'"))
                .collect();
            Error::new(
                ErrorKind::Load,
                format!("unknown encoding '{name}'; the embedded encodings are {}", valid.join(", ")),
            )
        })
}

/// An encoding read out of the binary: the engine, and which ids exist.
pub struct LoadedEncoding {
    /// The engine that encodes and decodes it.
    pub engine: PipelineEngine,
    /// `valid[id]` is true for every id of an ordinary or special token.
    pub valid_ids: Vec<bool>,
}

impl OpenAiEncoding {
    /// Decompresses the rank table and builds the engine.
    pub fn load(&self) -> Result<LoadedEncoding, Error> {
        let corrupt = |why: String| {
            Error::new(
                ErrorKind::Load,
                format!("the embedded {} table is corrupt ({why}); rebuild batchtok", self.name),
            )
        };
        let table = miniz_oxide::inflate::decompress_to_vec(self.ranks)
            .map_err(|e| corrupt(format!("{e:?}")))?;
        let tokens = parse_ranks(&table).map_err(corrupt)?;
        let json = tokenizer_json(&tokens, self.pattern, self.specials);
        let engine = PipelineEngine::from_canonical_json(&json).map_err(corrupt)?;

        let size = self.specials.iter().map(|s| s.id as usize + 1).max().unwrap_or(0).max(tokens.len());
        let mut valid_ids = vec![false; size];
        for (rank, token) in tokens.iter().enumerate() {
            valid_ids[rank] = token.is_some();
        }
        for s in self.specials {
            valid_ids[s.id as usize] = true;
        }
        Ok(LoadedEncoding { engine, valid_ids })
    }
}

/// Reads the compact table: `tokens[rank]` is the token's bytes, `None` for an unused rank.
fn parse_ranks(table: &[u8]) -> Result<Vec<Option<&[u8]>>, String> {
    let mut tokens = Vec::new();
    let mut at = 0;
    while at < table.len() {
        let len = table[at] as usize;
        at += 1;
        if len == 0 {
            tokens.push(None);
            continue;
        }
        let token = table
            .get(at..at + len)
            .ok_or_else(|| format!("rank {} runs past the end", tokens.len()))?;
        tokens.push(Some(token));
        at += len;
    }
    Ok(tokens)
}

/// The byte-level alphabet spelling of `bytes`, as a byte-level BPE vocabulary writes tokens.
fn byte_level(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| BYTES_CHAR_LOOKUP[b as usize]).collect()
}

/// Merges that make BPE by merge rank reproduce tiktoken's BPE by token rank.
///
/// tiktoken joins, at each step, the adjacent pair whose concatenation has the lowest rank. So every
/// way of cutting a token into two tokens is a merge, ranked by the token's rank; the cuts of one
/// token are adjacent in the list, ordered by where they cut.
fn derive_merges<'t>(tokens: &[Option<&'t [u8]>]) -> Vec<(&'t [u8], &'t [u8])> {
    let ranks: HashMap<&[u8], usize> = tokens
        .iter()
        .enumerate()
        .filter_map(|(rank, t)| t.map(|t| (t, rank)))
        .collect();
    let mut merges = Vec::new();
    for token in tokens.iter().flatten() {
        for cut in 1..token.len() {
            let (left, right) = token.split_at(cut);
            if ranks.contains_key(left) && ranks.contains_key(right) {
                merges.push((left, right));
            }
        }
    }
    merges
}

/// The canonical (2.0) tokenizer.json of an encoding.
fn tokenizer_json(tokens: &[Option<&[u8]>], pattern: &str, specials: &[SpecialToken]) -> String {
    let vocab: serde_json::Map<String, Value> = tokens
        .iter()
        .enumerate()
        .filter_map(|(rank, t)| t.map(|t| (byte_level(t), Value::from(rank))))
        .collect();
    let merges: Vec<Value> = derive_merges(tokens)
        .into_iter()
        .map(|(l, r)| json!([byte_level(l), byte_level(r)]))
        .collect();
    let added_tokens: Vec<Value> = specials
        .iter()
        .map(|s| {
            json!({
                "id": s.id, "content": s.text, "single_word": false, "lstrip": false,
                "rstrip": false, "normalized": false, "special": true,
            })
        })
        .collect();
    json!({
        "version": "2.0",
        "truncation": null,
        "padding": null,
        "added_tokens": added_tokens,
        "normalizer": null,
        "pre_tokenizer": {
            "type": "Split",
            "pattern": { "Regex": pattern },
            "behavior": "Isolated",
            "invert": false,
        },
        "post_processor": null,
        "decoder": { "type": "ByteLevel" },
        "model": {
            "type": "BPE",
            "unk_token": null,
            "continuing_subword_prefix": null,
            "end_of_word_suffix": null,
            "fuse_unk": false,
            "byte_fallback": false,
            "ignore_merges": true,
            "byte_level": true,
            "vocab": vocab,
            "merges": merges,
        },
    })
    .to_string()
}
