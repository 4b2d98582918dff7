//! The OpenAI encodings, embedded in the binary and served by the release-candidate engine.
//!
//! Each encoding ships as its rank table in a compact form (`encodings/*.ranks.deflate`, written by
//! `scripts/embed-encodings.js` from the `.tiktoken` files of the `tiktoken-rs` crate): for each
//! rank from 0 up, a length byte and the token's bytes, raw-deflated; a length of 0 marks a rank
//! with no ordinary token.
//!
//! At load, the table becomes a byte-level BPE model: the vocabulary is the ranks; the merges are derived from them so that BPE by merge rank picks, at every step,
//! the same pair tiktoken picks (the adjacent pair whose concatenation has the lowest rank, the
//! leftmost on a tie); `ignore_merges` makes a piece that is itself a token come out as that token,
//! as tiktoken's first lookup does. Special tokens stay outside the engine: `special.rs` cuts out
//! the ones a call allows, and `decode` spells them.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use ahash::AHashMap;

use serde_json::json;
use tokenizers::models::bpe::{BpeConfig, Merges, PipelineBPE, Vocab};
use tokenizers::pipeline::{PipelineModel, PipelinePostProcessor, PipelineTokenizer};
use tokenizers::utils::byte_level::BYTES_CHAR_LOOKUP;
use tokenizers::vocab::bucket_added_vocabulary::AddedVocabulary;

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

/// tiktoken's own regexes (as `tiktoken-rs` 0.12 spells them), for the texts the patterns above
/// cannot serve. The release candidate recognises the patterns above and runs them on its own
/// matcher, whose Unicode 17 tables disagree with tiktoken's Unicode 16 ones on a few thousand
/// code points (`unicode_drift.rs`). Wrapped in a group, these are not recognised and run on
/// `fancy-regex`, tiktoken's own regex engine, so they split every text as tiktoken does.
const GPT2_EXACT: &str =
    r"(?:'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s)";
const CL100K_EXACT: &str = r"(?:'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s)";
const O200K_EXACT: &str = concat!(
    "(?:",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    ")"
);

/// One embedded OpenAI encoding.
#[derive(Debug)]
pub struct OpenAiEncoding {
    /// Its tiktoken name.
    pub name: &'static str,
    /// Other names it answers to.
    pub aliases: &'static [&'static str],
    pattern: &'static str,
    /// tiktoken's regex, run by tiktoken's regex engine: the slower exact path.
    exact_pattern: &'static str,
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
        exact_pattern: O200K_EXACT,
        ranks: include_bytes!("encodings/o200k_base.ranks.deflate"),
        specials: &[
            special("<|endoftext|>", 199999),
            special("<|endofprompt|>", 200018),
        ],
    },
    OpenAiEncoding {
        name: "cl100k_base",
        aliases: &[],
        pattern: CL100K_PATTERN,
        exact_pattern: CL100K_EXACT,
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
        exact_pattern: GPT2_EXACT,
        ranks: include_bytes!("encodings/p50k_base.ranks.deflate"),
        specials: &[special("<|endoftext|>", 50256)],
    },
    OpenAiEncoding {
        name: "r50k_base",
        aliases: &["gpt2"],
        pattern: GPT2_PATTERN,
        exact_pattern: GPT2_EXACT,
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
                format!(
                    "unknown encoding '{name}'; the embedded encodings are {}",
                    valid.join(", ")
                ),
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
    /// The engine of the exact path: the same model behind tiktoken's own regex. Built on first
    /// use, once per process, since few texts need it and it costs a second copy of the model.
    pub fn exact_engine(&'static self) -> Result<&'static PipelineEngine, Error> {
        static EXACT: [OnceLock<Result<PipelineEngine, Error>>; 4] = [const { OnceLock::new() }; 4];
        let slot = ENCODINGS
            .iter()
            .position(|e| std::ptr::eq(e, self))
            .expect("an encoding is an entry of ENCODINGS");
        EXACT[slot]
            .get_or_init(|| {
                let table = miniz_oxide::inflate::decompress_to_vec(self.ranks)
                    .map_err(|e| self.corrupt(format!("{e:?}")))?;
                let tokens = parse_ranks(&table).map_err(|e| self.corrupt(e))?;
                build_tokenizer(&tokens, self.exact_pattern)
                    .map(PipelineEngine::from_tokenizer)
                    .map_err(|e| self.corrupt(e))
            })
            .as_ref()
            .map_err(Error::clone)
    }

    fn corrupt(&self, why: String) -> Error {
        Error::new(
            ErrorKind::Load,
            format!(
                "the embedded {} table is corrupt ({why}); rebuild batchtok",
                self.name
            ),
        )
    }

    /// Decompresses the rank table and builds the engine.
    pub fn load(&self) -> Result<LoadedEncoding, Error> {
        let corrupt = |why: String| self.corrupt(why);
        let table = miniz_oxide::inflate::decompress_to_vec(self.ranks)
            .map_err(|e| corrupt(format!("{e:?}")))?;
        let tokens = parse_ranks(&table).map_err(corrupt)?;
        let engine = PipelineEngine::from_tokenizer(
            build_tokenizer(&tokens, self.pattern).map_err(corrupt)?,
        );

        let size = self
            .specials
            .iter()
            .map(|s| s.id as usize + 1)
            .max()
            .unwrap_or(0)
            .max(tokens.len());
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
    bytes
        .iter()
        .map(|&b| BYTES_CHAR_LOOKUP[b as usize])
        .collect()
}

/// Merges that make BPE by merge rank reproduce tiktoken's BPE by token rank.
///
/// tiktoken joins, at each step, the adjacent pair whose concatenation has the lowest rank (the
/// leftmost on a tie). Wherever a token forms inside a longer piece, the parts inside its span
/// evolve exactly as they do when the token's bytes are encoded alone: a merge across the span's
/// edge would have kept the token from forming. So a token forms by one merge only, the last merge
/// of encoding its own bytes, and only if that encoding ends as the token itself. Those merges,
/// ranked by the token's rank, are the whole merge list (about one per token; every cut of every
/// token would be twice as many, and the engine's load time grows with them).
fn derive_merges<'t>(tokens: &[Option<&'t [u8]>]) -> Vec<(&'t [u8], &'t [u8])> {
    let ranks: AHashMap<&[u8], u32> = tokens
        .iter()
        .enumerate()
        .filter_map(|(rank, t)| t.map(|t| (t, rank as u32)))
        .collect();
    let mut merges = Vec::with_capacity(tokens.len());
    let mut cuts = Vec::new();
    for token in tokens.iter().flatten() {
        if token.len() < 2 {
            continue;
        }
        if let Some(last) = last_merge(token, &ranks, &mut cuts) {
            merges.push(last);
        }
    }
    merges
}

/// Encodes `bytes` with tiktoken's BPE; if it ends as one token, returns the pair the last merge
/// joined. `cuts` is scratch space.
fn last_merge<'t>(
    bytes: &'t [u8],
    ranks: &AHashMap<&[u8], u32>,
    cuts: &mut Vec<usize>,
) -> Option<(&'t [u8], &'t [u8])> {
    cuts.clear();
    cuts.extend(0..=bytes.len());
    let mut last = None;
    while cuts.len() > 2 {
        let best = (0..cuts.len() - 2)
            .filter_map(|i| {
                ranks
                    .get(&bytes[cuts[i]..cuts[i + 2]])
                    .map(|&rank| (rank, i))
            })
            .min()?;
        let i = best.1;
        last = Some((
            &bytes[cuts[i]..cuts[i + 1]],
            &bytes[cuts[i + 1]..cuts[i + 2]],
        ));
        cuts.remove(i + 1);
    }
    last
}

/// The release candidate's `PipelineTokenizer` for an embedded encoding, built exactly as the
/// engine's. Not part of the API: `benchmark/scheduler.rs` uses it to time the release candidate's
/// own parallel batch encode on the same model as batchtok's scheduler.
#[doc(hidden)]
pub fn pipeline_tokenizer_for_benchmarks(name: &str) -> Result<PipelineTokenizer, String> {
    let encoding = find(name).map_err(|e| e.to_string())?;
    let table =
        miniz_oxide::inflate::decompress_to_vec(encoding.ranks).map_err(|e| format!("{e:?}"))?;
    build_tokenizer(&parse_ranks(&table)?, encoding.pattern)
}

/// The release candidate's tokenizer of an encoding, built from its tokens.
///
/// The model is built directly from the vocabulary and merges: writing and re-reading them as a
/// tokenizer.json took over a second for o200k_base. The rest of the pipeline (the pre-tokenizer
/// on the encoding's regex, the byte-level decoder) is read from a small tokenizer.json whose model
/// is empty. Special tokens are not added tokens: the engine would renumber them densely from the
/// vocabulary's end (o200k_base's `<|endofprompt|>` is 200018, not 200000), so `special.rs` handles
/// them around the engine.
fn build_tokenizer(tokens: &[Option<&[u8]>], pattern: &str) -> Result<PipelineTokenizer, String> {
    let skeleton = json!({
        "version": "2.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [],
        "normalizer": null,
        "pre_tokenizer": {
            "type": "Split",
            "pattern": { "Regex": pattern },
            "behavior": "Isolated",
            "invert": false,
        },
        "post_processor": null,
        "decoder": { "type": "ByteLevel" },
        // The release candidate cannot build a model with an empty vocabulary.
        "model": { "type": "BPE", "byte_level": false, "vocab": { "a": 0 }, "merges": [] },
    });
    let skeleton = tokenizers::from_json(&skeleton.to_string()).map_err(|e| e.to_string())?;

    let mut vocab = Vocab::with_capacity(tokens.len());
    for (rank, token) in tokens.iter().enumerate() {
        if let Some(token) = token {
            vocab.insert(byte_level(token), rank as u32);
        }
    }
    let merges: Merges = derive_merges(tokens)
        .into_iter()
        .map(|(l, r)| (byte_level(l), byte_level(r)))
        .collect();
    let model = PipelineBPE::from_config(BpeConfig {
        vocab,
        merges,
        byte_level: true,
        ignore_merges: true,
        ..BpeConfig::default()
    })
    .map_err(|e| e.to_string())?;
    Ok(PipelineTokenizer::from_parts(
        AddedVocabulary::new(),
        Vec::new(),
        skeleton.get_pre_tokenizer().clone(),
        PipelineModel::BPE(model),
        PipelinePostProcessor::default(),
        skeleton.get_decoder().cloned(),
        BTreeMap::new(),
        None,
        None,
    ))
}
