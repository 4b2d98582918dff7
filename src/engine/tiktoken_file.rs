//! Rank files in tiktoken's format (`.tiktoken`), read into the compact table `ranks.rs` indexes.
//!
//! A rank file is what Python tiktoken's `load_tiktoken_bpe` reads: one token per line, its bytes
//! in standard base64, white space, and its rank in decimal; empty lines are skipped. OpenAI's
//! encodings, Llama 3's `tokenizer.model`, Qwen's `qwen.tiktoken` and Kimi K2's
//! `tiktoken.model` are all written this way. js-tiktoken's ranks (its `ranks/*.json` and the
//! `encoders/*.json` of the tiktoken package, the `bpe_ranks` field) pack them: a line `! R` and
//! then tokens in base64, separated by spaces, whose ranks run from R up; both kinds of line are
//! read, in any mix. The compact table lists each rank from 0 up as a length byte and the
//! token's bytes, a length of 0 standing for a rank no line gives.
//!
//! One token may be empty: Whisper's `multilingual.tiktoken` gives `=` (no bytes, as Python's
//! `base64.b64decode` reads it) the rank 50256. tiktoken keeps such a token in its vocabulary
//! (`decode` reads it as nothing, `encode_single_token(b"")` finds it) and its BPE never forms it.
//! The compact table has no length for it, so it is a gap there and [`RankFile::empty_token`]
//! names its rank.
//!
//! What this reader refuses, each with the line it is on: a line that is neither kind, bytes
//! that are not standard base64 with its padding, a second empty token, a token longer than the
//! 255 bytes a compact entry holds, a rank that is not a whole number below [`MAX_RANKS`], and a
//! rank given twice. Two ranks with the same bytes are refused by `RankTable::new`, and so is a
//! table missing a single byte: tiktoken's BPE starts from single bytes, so every byte needs a
//! rank.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::pair_cache::MAX_RANKS;

/// What a rank file holds: its compact table and the rank of its empty token, if it has one.
#[derive(Debug, PartialEq, Eq)]
pub struct RankFile {
    /// The compact table: for each rank from 0 up, a length byte and the token's bytes.
    pub table: Vec<u8>,
    /// The rank of the token with no bytes (a gap in `table`).
    pub empty_token: Option<u32>,
}

/// The rank file `contents`, read; the error names the line at fault.
pub fn read_rank_file(contents: &[u8]) -> Result<RankFile, String> {
    let mut tokens: Vec<Option<(Vec<u8>, usize)>> = Vec::new();
    let mut empty_token: Option<(u32, usize)> = None;
    let mut read = 0;
    for (index, line) in contents.split(|&b| b == b'\n').enumerate() {
        let number = index + 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        let at_fault = |why: String| {
            let advice = if number == 1 {
                "; is it a rank file? Give a .tiktoken file's contents (fs.readFileSync(path)), not \
                 its path"
            } else {
                ""
            };
            format!("line {number} of the rank file {why}{advice}")
        };
        for (token, rank) in read_line(line).map_err(at_fault)? {
            let rank = rank as usize;
            if rank >= tokens.len() {
                tokens.resize(rank + 1, None);
            }
            let given = match (&tokens[rank], empty_token) {
                (Some((_, first)), _) => Some(*first),
                (None, Some((empty, first))) if empty as usize == rank => Some(first),
                _ => None,
            };
            if let Some(first) = given {
                return Err(format!(
                    "line {number} of the rank file gives rank {rank}, which line {first} gives \
                     already; each rank is one token"
                ));
            }
            read += 1;
            if !token.is_empty() {
                tokens[rank] = Some((token, number));
            } else if let Some((other, first)) = empty_token {
                return Err(format!(
                    "line {number} of the rank file gives the empty token rank {rank}, which line \
                     {first} gives rank {other}; each token has one rank"
                ));
            } else {
                empty_token = Some((rank as u32, number));
            }
        }
    }
    if read == 0 {
        return Err(
            "the rank file has no tokens; give the contents of a .tiktoken file, a line \
             '<base64 bytes> <rank>' per token"
                .to_owned(),
        );
    }
    let bytes: usize = tokens
        .iter()
        .map(|token| 1 + token.as_ref().map_or(0, |(bytes, _)| bytes.len()))
        .sum();
    let mut table = Vec::with_capacity(bytes);
    for token in &tokens {
        match token {
            Some((bytes, _)) => {
                table.push(bytes.len() as u8);
                table.extend_from_slice(bytes);
            }
            None => table.push(0),
        }
    }
    Ok(RankFile {
        table,
        empty_token: empty_token.map(|(rank, _)| rank),
    })
}

/// One line's tokens and their ranks: one for a line of tiktoken's, a run for a packed line of
/// js-tiktoken's; or what is wrong with it, worded to follow "line N of the rank file".
fn read_line(line: &[u8]) -> Result<Vec<(Vec<u8>, u32)>, String> {
    let shown = || String::from_utf8_lossy(&line[..line.len().min(60)]).into_owned();
    let fields: Vec<&[u8]> = line
        .split(|b| b.is_ascii_whitespace())
        .filter(|field| !field.is_empty())
        .collect();
    match fields.as_slice() {
        [b"!", first, tokens @ ..] => {
            let first = read_rank(first)?;
            if first as usize + tokens.len() > MAX_RANKS {
                return Err(format!(
                    "packs ranks past {MAX_RANKS}, the most a rank table may have"
                ));
            }
            (first..)
                .zip(tokens)
                .map(|(rank, token)| Ok((read_token(token, &shown)?, rank)))
                .collect()
        }
        [token, rank] => Ok(vec![(read_token(token, &shown)?, read_rank(rank)?)]),
        _ => Err(format!("is {:?}, not '<base64 bytes> <rank>'", shown())),
    }
}

/// A token's bytes from their base64; padding alone is the empty token.
fn read_token(token: &[u8], shown: &dyn Fn() -> String) -> Result<Vec<u8>, String> {
    if token.iter().all(|&b| b == b'=') {
        return Ok(Vec::new());
    }
    let token = STANDARD
        .decode(token)
        .map_err(|e| format!("has a token that is not base64 ({e}): {:?}", shown()))?;
    if token.len() > usize::from(u8::MAX) {
        return Err(format!(
            "has a token of {} bytes; batchtok reads tokens of up to 255 bytes",
            token.len()
        ));
    }
    Ok(token)
}

/// A rank from its decimal digits.
fn read_rank(rank: &[u8]) -> Result<u32, String> {
    std::str::from_utf8(rank)
        .ok()
        .filter(|rank| rank.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|rank| rank.parse::<u32>().ok())
        .filter(|&rank| (rank as usize) < MAX_RANKS)
        .ok_or_else(|| {
            format!(
                "has the rank {:?}; a rank is a whole number below {MAX_RANKS}",
                String::from_utf8_lossy(rank)
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(token: &[u8], rank: u32) -> String {
        format!("{} {rank}\n", STANDARD.encode(token))
    }

    #[test]
    fn ranks_are_laid_out_in_order_with_gaps() {
        let contents = [
            line(b"b", 1),
            "\r\n".to_owned(),
            line(b"a", 0),
            line(b"xyz", 4),
        ]
        .concat();
        let table = read_rank_file(contents.as_bytes()).unwrap().table;
        assert_eq!(table, b"\x01a\x01b\x00\x00\x03xyz");
    }

    #[test]
    fn packed_lines_run_from_their_first_rank() {
        let contents = format!("! 0 YQ== Yg==\n{}! 5 eA== eXo=\n", line(b"c", 2));
        let table = read_rank_file(contents.as_bytes()).unwrap().table;
        assert_eq!(table, b"\x01a\x01b\x01c\x00\x00\x01x\x02yz");
        let error = read_rank_file(b"! 0 YQ== Yg==\n! 1 Yw==\n").unwrap_err();
        assert!(error.contains("line 2 of the rank file gives rank 1, which line 1 gives"));
        assert!(
            read_rank_file(b"! x YQ==\n")
                .unwrap_err()
                .contains("has the rank \"x\"")
        );
        let past = read_rank_file(b"! 2097150 YQ== Yg==\n").unwrap_err();
        assert!(past.contains("packs ranks past 2097151"), "{past}");
    }

    #[test]
    fn crlf_lines_and_a_missing_last_newline_are_read() {
        let contents = format!(
            "{}\r\n{}",
            line(b"a", 0).trim_end(),
            line(b"b", 1).trim_end()
        );
        assert_eq!(
            read_rank_file(contents.as_bytes()).unwrap().table,
            b"\x01a\x01b"
        );
    }

    #[test]
    fn each_fault_names_its_line() {
        let error = |contents: &str| read_rank_file(contents.as_bytes()).unwrap_err();
        let a = line(b"a", 0);
        assert!(error("/models/x.tiktoken").contains("line 1 of the rank file is"));
        assert!(error("/models/x.tiktoken").contains("not its path"));
        assert!(error(&format!("{a}YQ= 1\n")).starts_with("line 2 of the rank file has a token"));
        assert!(error(&format!("{a}YQ== -1\n")).contains("has the rank \"-1\""));
        assert!(error(&format!("{a}Yg== 99999999\n")).contains("below 2097151"));
        assert!(error(&format!("{a}Yg== 0\n")).contains("rank 0, which line 1 gives already"));
        assert!(error(&format!("{a}Yg== 1 2\n")).contains("not '<base64 bytes> <rank>'"));
        assert!(error(&format!("{a} 1\n")).contains("not '<base64 bytes> <rank>'"));
        assert!(error("\n\n").contains("has no tokens"));
        let long = line(&[b'x'; 256], 1);
        assert!(error(&format!("{a}{long}")).contains("256 bytes"));
    }

    #[test]
    fn padding_alone_is_the_empty_token_a_gap_in_the_table() {
        // Whisper's multilingual.tiktoken ends with "= 50256".
        let contents = format!("{}{}= 2\n{}", line(b"a", 0), line(b"b", 1), line(b"c", 3));
        let file = read_rank_file(contents.as_bytes()).unwrap();
        assert_eq!(file.table, b"\x01a\x01b\x00\x01c");
        assert_eq!(file.empty_token, Some(2));
        let error = |contents: &str| read_rank_file(contents.as_bytes()).unwrap_err();
        let twice = error(&format!("{contents}== 4\n"));
        assert!(
            twice.contains(
                "line 5 of the rank file gives the empty token rank 4, which line 3 gives rank 2"
            ),
            "{twice}"
        );
        assert!(
            error(&format!("{contents}YQ== 2\n"))
                .contains("gives rank 2, which line 3 gives already")
        );
        assert!(
            error(&format!("= 0\n{contents}")).contains("gives rank 0, which line 1 gives already")
        );
    }

    /// The rank file of an embedded encoding's table, ranks in reverse order as a file may list
    /// them.
    fn rank_file_of(name: &str) -> String {
        let ranks = crate::engine::openai::ranks_for_benchmarks(name).unwrap();
        ranks
            .iter()
            .rev()
            .map(|(token, rank)| line(token, *rank))
            .collect()
    }

    /// An embedded table read as a rank file, with its pattern as tiktoken or a Hugging Face file
    /// spells it, or spelled so that no engine recognises it, gives the embedded encoding's ids:
    /// on the engine over the table, on the exact path, and on the release candidate built from
    /// the derived merges.
    #[test]
    fn an_embedded_table_read_as_a_rank_file_encodes_as_the_embedded_encoding() {
        use crate::engine::{Engine, Ids, Scratch, Tokenizer};
        let cl100k = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";
        let llama3 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
        let gpt2 =
            r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";
        let unrecognised = format!("{cl100k}|\\s");
        let texts = crate::engine::test_fixtures::fixture_texts();
        for (encoding, pattern) in [
            ("cl100k_base", cl100k),
            ("cl100k_base", llama3),
            ("cl100k_base", unrecognised.as_str()),
            ("r50k_base", gpt2),
        ] {
            let embedded = Tokenizer::from_encoding(encoding).unwrap();
            let read =
                Tokenizer::from_rank_file(rank_file_of(encoding).as_bytes(), pattern, "read", &[])
                    .unwrap();
            read.wait_until_ready().unwrap();
            let crate::engine::Family::OpenAi(read_encoding) = read.family() else {
                unreachable!()
            };
            let model = read_encoding.model;
            let [first, full] = model.engines_for_tests().unwrap();
            let exact: &dyn Engine = model.exact_engine().unwrap();
            let mode = embedded.encode_mode(None, &Default::default()).unwrap();
            for text in &texts {
                let expected = embedded.encode(text, &mode).unwrap();
                for engine in [first, full, exact] {
                    let mut ids = Ids::with_capacity(0);
                    engine
                        .encode_into(text, false, false, &mut Scratch::new(), &mut ids)
                        .unwrap();
                    assert!(
                        ids.as_slice() == expected.as_slice(),
                        "{encoding} read with {pattern}: {text:?}"
                    );
                }
            }
        }
    }
}
