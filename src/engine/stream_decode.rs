//! Decoding ids as they arrive (a model's output, token by token), returning only text that the
//! ids still to come cannot change, so that the pieces joined are exactly `decode` of all the ids.
//!
//! A token's text can depend on its neighbours. A byte-level token may hold part of a character
//! (decoded alone, U+FFFD); a byte-fallback run (`<0xE3><0x81><0x82>`) is valid UTF-8 or not as a
//! whole; a WordPiece `##` piece joins the word before it, and the decoder's clean-up removes the
//! space before punctuation and contractions (`" ."`, `" ' "`, `" do not"`); a Metaspace decoder
//! strips the leading space of the first token only. So the decoder keeps a window of recent ids
//! and, at each write, decodes the window twice: whole, and without its last ids (enough to hold
//! [`LOOKAHEAD`] ids that have text, and the whole trailing byte-fallback run). The text both agree on, less any
//! U+FFFD at its end, is settled; what was not yet returned of it is returned. Every decoder
//! listed changes at most the text of the token before a new one (the clean-up's patterns reach
//! one token back), so text settled with [`LOOKAHEAD`] ids after it does not change again.
//!
//! The window is cut from the front once it is long, keeping [`CONTEXT`] ids before the text not
//! yet returned: the ids dropped and the ids kept must decode to the front and the end of the
//! window's text, without overlapping, and the front must be returned text, so context-dependent
//! starts (a `##` piece, a character cut between tokens) are never cut at; the Metaspace strip of
//! a first token's space only moves that space to the front. Each write costs
//! two or three decodes of at most [`WINDOW_CUT_AT`] ids plus the ids written.

use std::ops::Deref;

use super::{Error, Family, Tokenizer};

/// Ids held back from the settled text: the text of the last ids may still change with the next.
const LOOKAHEAD: usize = 2;

/// Ids kept before the text not yet returned when the window is cut: enough for every decoder's
/// look back (a character spans at most four byte-level tokens; clean-up and `##` one token).
const CONTEXT: usize = 8;

/// Window length at which the front is cut: twice the ids it keeps, so a cut happens once every
/// few dozen ids, not on every write.
const WINDOW_CUT_AT: usize = 4 * (CONTEXT + LOOKAHEAD);

/// Front cuts tried, one id further back each, when the first does not decode to the front of
/// the window's text.
const CUT_TRIES: usize = CONTEXT;

/// A streaming decoder over one tokenizer; see the module documentation. It holds the tokenizer
/// as `T`: a reference ([`Tokenizer::stream_decoder`]) or a shared owner such as
/// `Arc<Tokenizer>` ([`StreamDecoder::new`]), for a decoder that outlives the borrow.
pub struct StreamDecoder<T: Deref<Target = Tokenizer>> {
    tokenizer: T,
    skip_special_tokens: bool,
    /// The recent ids, oldest first.
    window: Vec<u32>,
    /// The bytes at the front of `decode(window)` already returned.
    returned: usize,
    /// The window length at which the next cut is tried: [`WINDOW_CUT_AT`], or further after a
    /// try that found no place to cut (the window then ends in text not yet settled), so that a
    /// stream that cannot be cut for a while does not pay for a try on every write.
    next_cut_at: usize,
}

impl Tokenizer {
    /// A streaming decoder; `skip_special_tokens` as in [`decode`](Self::decode).
    pub fn stream_decoder(&self, skip_special_tokens: bool) -> StreamDecoder<&Tokenizer> {
        StreamDecoder::new(self, skip_special_tokens)
    }

    /// True when `id` is a byte-fallback token (`<0x41>`), whose text is settled only with the
    /// rest of its run.
    fn is_byte_fallback(&self, id: u32) -> bool {
        if let Family::OpenAi(_) = self.family() {
            return false;
        }
        let token = match (self.stable_engine(), self.pipeline_engine()) {
            (Some(stable), _) => stable.id_to_token(id),
            (None, Some(pipeline)) => pipeline.tokenizer().get_model().id_to_token(id),
            (None, None) => None,
        };
        token.is_some_and(|t| {
            t.len() == 6
                && t.starts_with("<0x")
                && t.ends_with('>')
                && t.as_bytes()[3..5].iter().all(u8::is_ascii_hexdigit)
        })
    }
}

impl<T: Deref<Target = Tokenizer>> StreamDecoder<T> {
    /// A streaming decoder over `tokenizer`; `skip_special_tokens` as in [`Tokenizer::decode`].
    pub fn new(tokenizer: T, skip_special_tokens: bool) -> Self {
        StreamDecoder {
            tokenizer,
            skip_special_tokens,
            window: Vec::new(),
            returned: 0,
            next_cut_at: WINDOW_CUT_AT,
        }
    }

    /// Takes `ids` and returns the text they settle: possibly empty, and never a part of a
    /// character. An id outside the vocabulary is an error naming it, and the decoder is left as
    /// it was before the call.
    pub fn write(&mut self, ids: &[u32]) -> Result<String, Error> {
        self.tokenizer.check_ids(ids)?;
        self.window.extend_from_slice(ids);
        let whole = self.decode(&self.window)?;
        let held = self.held_back()?;
        let settled_part = self.decode(&self.window[..self.window.len() - held])?;
        let mut settled = common_prefix(&whole, &settled_part);
        while whole[..settled].ends_with('\u{FFFD}') {
            settled -= '\u{FFFD}'.len_utf8();
        }
        let text = if settled > self.returned {
            let text = whole[self.returned..settled].to_owned();
            self.returned = settled;
            text
        } else {
            String::new()
        };
        if self.window.len() >= self.next_cut_at {
            self.next_cut_at = if self.cut_front(&whole)? {
                WINDOW_CUT_AT
            } else {
                self.window.len() + CONTEXT
            };
        }
        Ok(text)
    }

    /// The rest of the text: what `write` held back. Ends the stream.
    pub fn end(self) -> Result<String, Error> {
        let whole = self.decode(&self.window)?;
        Ok(whole.get(self.returned..).unwrap_or_default().to_owned())
    }

    /// How many ids at the end of the window hold text that may still change: enough to hold
    /// [`LOOKAHEAD`] ids that decode to some text (a skipped special token decodes to none, and
    /// holding it back would hold back nothing), and the whole trailing byte-fallback run, which
    /// runs on across ids with no text (the decoder never sees a skipped special token, so the
    /// bytes on either side of one join into one run).
    fn held_back(&self) -> Result<usize, Error> {
        // An OpenAI encoding's decoder only joins its tokens' bytes: a token never changes the
        // text before it, except by completing a character, and the U+FFFD that an unfinished one
        // decodes to at the end is held back by `write` anyway.
        if let Family::OpenAi(_) = self.tokenizer.family() {
            return Ok(0);
        }
        let (mut held, mut with_text, mut in_run) = (0, 0, true);
        for &id in self.window.iter().rev() {
            let fallback = self.tokenizer.is_byte_fallback(id);
            let has_text = fallback || !self.decode(&[id])?.is_empty();
            in_run &= fallback || !has_text;
            if with_text >= LOOKAHEAD && !in_run {
                break;
            }
            held += 1;
            if has_text {
                with_text += 1;
            }
        }
        Ok(held)
    }

    fn decode(&self, ids: &[u32]) -> Result<String, Error> {
        self.tokenizer.decode(ids, self.skip_special_tokens)
    }

    /// Drops ids from the front of the window whose text is returned, keeping [`CONTEXT`] ids and
    /// every id after the returned text. `whole` is the window's text. False when no place to cut
    /// was found.
    fn cut_front(&mut self, whole: &str) -> Result<bool, Error> {
        let keep = CONTEXT + LOOKAHEAD;
        let first = self.window.len().saturating_sub(keep);
        for cut in (1..=first).rev().take(CUT_TRIES) {
            let front = self.decode(&self.window[..cut])?;
            let kept = self.decode(&self.window[cut..])?;
            // The two parts decode to the front and the end of the whole, without overlapping (a
            // character cut between them would decode to U+FFFD on both sides, and the end alone
            // might match by chance), and the front is returned text.
            let apart = whole.starts_with(front.as_str())
                && !front.ends_with('\u{FFFD}')
                && whole.ends_with(kept.as_str())
                && front.len() + kept.len() <= whole.len();
            let dropped = whole.len() - kept.len();
            if apart && dropped <= self.returned {
                self.window.drain(..cut);
                self.returned -= dropped;
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// The length of the longest common prefix of `a` and `b`, at a character boundary.
fn common_prefix(a: &str, b: &str) -> usize {
    a.char_indices()
        .zip(b.chars())
        .find(|&((_, x), y)| x != y)
        .map_or(a.len().min(b.len()), |((at, _), _)| at)
}

#[cfg(test)]
mod tests {
    use super::super::AllowedSpecial;
    use super::super::test_fixtures::{fixture_texts, fixture_tokenizer};
    use super::*;

    /// A small seeded generator (xorshift64*), so a failure names a seed that reproduces it.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n as u64) as usize
        }
    }

    /// A Llama-style BPE with byte fallback: ASCII letters, digits and a few pieces, every other
    /// byte as `<0xHH>`, the Metaspace-like normalizer and the Replace, ByteFallback, Fuse, Strip
    /// decoder.
    fn byte_fallback_tokenizer() -> Tokenizer {
        let mut vocab = serde_json::Map::new();
        for (id, token) in ["<unk>", "<s>", "</s>"].iter().enumerate() {
            vocab.insert((*token).to_owned(), serde_json::json!(id));
        }
        for byte in 0..=255u32 {
            vocab.insert(format!("<0x{byte:02X}>"), serde_json::json!(3 + byte));
        }
        let mut pieces: Vec<String> = ('a'..='z')
            .chain('A'..='Z')
            .chain('0'..='9')
            .map(String::from)
            .collect();
        pieces.extend(
            [
                "▁", ".", ",", "'", "!", "▁t", "th", "▁th", "he", "▁the", "in", "▁a",
            ]
            .map(String::from),
        );
        let mut merges = Vec::new();
        for piece in &pieces {
            let next = vocab.len();
            vocab
                .entry(piece.clone())
                .or_insert(serde_json::json!(next));
        }
        for (left, right) in [
            ("▁", "t"),
            ("t", "h"),
            ("▁t", "h"),
            ("h", "e"),
            ("▁th", "e"),
            ("i", "n"),
            ("▁", "a"),
        ] {
            merges.push(format!("{left} {right}"));
        }
        let json = serde_json::json!({
            "version": "1.0", "truncation": null, "padding": null,
            "added_tokens": [
                {"id": 0, "content": "<unk>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
                {"id": 1, "content": "<s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
                {"id": 2, "content": "</s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
            ],
            "normalizer": {"type": "Sequence", "normalizers": [
                {"type": "Prepend", "prepend": "▁"},
                {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
            ]},
            "pre_tokenizer": null,
            "post_processor": {"type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
                "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
            "decoder": {"type": "Sequence", "decoders": [
                {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
                {"type": "ByteFallback"},
                {"type": "Fuse"},
                {"type": "Strip", "content": " ", "start": 1, "stop": 0},
            ]},
            "model": {"type": "BPE", "dropout": null, "unk_token": "<unk>",
                "continuing_subword_prefix": null, "end_of_word_suffix": null,
                "fuse_unk": true, "byte_fallback": true, "ignore_merges": false,
                "vocab": vocab, "merges": merges},
        });
        let tokenizer =
            Tokenizer::from_json(&json.to_string(), "the byte-fallback test tokenizer").unwrap();
        tokenizer.wait_until_ready().unwrap();
        tokenizer
    }

    fn tokenizers() -> Vec<(String, std::sync::Arc<Tokenizer>)> {
        let mut all: Vec<_> = ["o200k_base", "cl100k_base", "r50k_base"]
            .into_iter()
            .map(|name| (name.to_owned(), Tokenizer::from_encoding(name).unwrap()))
            .collect();
        for name in ["gpt2", "bert", "unigram"] {
            all.push((
                name.to_owned(),
                std::sync::Arc::new(fixture_tokenizer(name)),
            ));
        }
        all.push((
            "byte-fallback".to_owned(),
            std::sync::Arc::new(byte_fallback_tokenizer()),
        ));
        all
    }

    /// The pieces `ids` decode to when written in parts cut at `cuts`, joined.
    fn streamed(tokenizer: &Tokenizer, ids: &[u32], cuts: &[usize], skip: bool) -> String {
        let mut decoder = tokenizer.stream_decoder(skip);
        let mut text = String::new();
        let mut from = 0;
        for &cut in cuts.iter().chain([ids.len()].iter()) {
            text += &decoder.write(&ids[from..cut]).unwrap();
            from = cut;
        }
        text + &decoder.end().unwrap()
    }

    /// Ids of the fixture texts, as each tokenizer encodes them (template and special tokens
    /// included where it has them), and seeded random ids of its vocabulary.
    fn sequences(tokenizer: &Tokenizer, seed: u64) -> Vec<Vec<u32>> {
        let mode = tokenizer
            .encode_mode(None, &AllowedSpecial::None)
            .or_else(|_| tokenizer.encode_mode(None, &AllowedSpecial::All))
            .unwrap();
        let mut all: Vec<Vec<u32>> = fixture_texts()
            .iter()
            .map(|text| tokenizer.encode(text, &mode).unwrap().into_vec())
            .collect();
        let mut rng = Rng(seed);
        let size = tokenizer.id_limit() as usize;
        for _ in 0..40 {
            let len = rng.below(2 * WINDOW_CUT_AT);
            let ids: Vec<u32> = (0..len)
                .map(|_| rng.below(size) as u32)
                .filter(|&id| tokenizer.check_ids(&[id]).is_ok())
                .collect();
            all.push(ids);
        }
        all
    }

    /// How far into each sequence every split point is tried: past two window cuts.
    const SPLIT_IDS: usize = 2 * WINDOW_CUT_AT + 16;

    #[test]
    fn every_split_point_joins_to_decode() {
        for (name, tokenizer) in tokenizers() {
            for (n, ids) in sequences(&tokenizer, 0x5EED_0001).iter().enumerate() {
                // Every split point of the first ids (all of them are cheap only that far).
                let ids = &ids[..ids.len().min(SPLIT_IDS)];
                for skip in [false, true] {
                    let expected = tokenizer.decode(ids, skip).unwrap();
                    for split in 0..=ids.len() {
                        assert_eq!(
                            streamed(&tokenizer, ids, &[split], skip),
                            expected,
                            "{name}, sequence {n}, split at {split}, skip {skip}: {ids:?}"
                        );
                    }
                }
            }
        }
    }

    /// How far into each sequence ids are written one at a time.
    const ONE_AT_A_TIME_IDS: usize = 40 * WINDOW_CUT_AT;

    #[test]
    fn one_id_at_a_time_and_random_parts_join_to_decode() {
        for (name, tokenizer) in tokenizers() {
            let mut rng = Rng(0x5EED_0002);
            for (n, ids) in sequences(&tokenizer, 0x5EED_0003).iter().enumerate() {
                // Long enough for dozens of window cuts.
                let ids = &ids[..ids.len().min(ONE_AT_A_TIME_IDS)];
                let expected = tokenizer.decode(ids, false).unwrap();
                let every: Vec<usize> = (1..ids.len()).collect();
                assert_eq!(
                    streamed(&tokenizer, ids, &every, false),
                    expected,
                    "{name}, sequence {n}, one id at a time"
                );
                let mut cuts: Vec<usize> = (0..rng.below(8))
                    .map(|_| rng.below(ids.len() + 1))
                    .collect();
                cuts.sort_unstable();
                assert_eq!(
                    streamed(&tokenizer, ids, &cuts, false),
                    expected,
                    "{name}, sequence {n}, cuts {cuts:?}"
                );
            }
        }
    }

    #[test]
    fn no_piece_ends_inside_a_character_or_holds_a_replacement_that_is_not_in_decode() {
        let tokenizer = Tokenizer::from_encoding("cl100k_base").unwrap();
        let mode = tokenizer.encode_mode(None, &AllowedSpecial::None).unwrap();
        let text = "🦀 crabs 🦀🦀 and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢";
        let ids = tokenizer.encode(text, &mode).unwrap().into_vec();
        let mut decoder = tokenizer.stream_decoder(false);
        let mut pieces = Vec::new();
        for &id in &ids {
            pieces.push(decoder.write(&[id]).unwrap());
        }
        pieces.push(decoder.end().unwrap());
        assert!(pieces.iter().all(|p| !p.contains('\u{FFFD}')), "{pieces:?}");
        assert_eq!(pieces.concat(), text);
        // Text is returned as soon as it is settled, not all at the end.
        assert!(
            pieces.iter().filter(|p| !p.is_empty()).count() > 3,
            "{pieces:?}"
        );
    }

    #[test]
    fn a_bad_id_is_an_error_that_leaves_the_decoder_as_it_was() {
        let tokenizer = Tokenizer::from_encoding("o200k_base").unwrap();
        // A decoder that owns its share of the tokenizer, as a JS object would.
        let mut decoder = StreamDecoder::new(std::sync::Arc::clone(&tokenizer), false);
        let mut text = decoder.write(&[24912, 2375]).unwrap();
        let error = decoder.write(&[13, 300_000]).unwrap_err();
        assert!(error.message().contains("id 300000 at index 1"), "{error}");
        text += &decoder.write(&[0]).unwrap();
        text += &decoder.end().unwrap();
        assert_eq!(text, "hello world!");
    }
}
