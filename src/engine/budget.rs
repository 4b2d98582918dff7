//! Token budgets: counting one text, counting it only as far as a limit, and cutting a text to
//! the longest prefix (or suffix) that fits a number of tokens.
//!
//! **Counting within a limit.** Every ordinary token of an OpenAI encoding spells a run of the
//! text's own bytes (decoding the ids gives the text back, byte for byte), and none spells more than
//! the encoding's longest token; an allowed special token spells its text. So a text of `n` bytes
//! has at least `ceil(n / longest)` tokens, whatever they are: a text longer than `limit *
//! longest` bytes is over any limit of `limit` tokens without being encoded, and a text within
//! that length is encoded whole, which costs at most `limit * longest` bytes of encoding. The
//! count returned is therefore the exact count, and a 10 MB text with a limit of 100 costs the
//! division alone. A Hugging Face tokenizer gives no such bound (a WordPiece `[UNK]` or a Unigram
//! unknown piece stands for a word of any length, a normalizer may drop text): it is encoded
//! whole, and the count is exact too.
//!
//! **Truncating.** A cut is a token boundary of the text's encoding, moved to the character
//! boundary at or before it (a byte-level token may end inside a character); "fits" means that
//! encoding the cut text again gives at most `max_tokens` ids. Re-encoding a cut text can give
//! more ids than the tokens it was cut after (BPE is not prefix-stable, and white space before the
//! cut may split differently), so each candidate cut is checked, and a cut that does not fit moves
//! back by as many tokens as it was over, until one fits (the empty text always does).

use super::special;
use super::{EncodeMode, Error, Family, Ids, Scratch, Tokenizer};

impl Tokenizer {
    /// The number of tokens of `text`.
    pub fn count(&self, text: &str, mode: &EncodeMode) -> Result<usize, Error> {
        let mut ids = Ids::with_capacity(self.expected_ids(text.len()) + 4);
        self.encode_into(text, mode, &mut Scratch::new(), &mut ids)?;
        Ok(ids.len())
    }

    /// The number of tokens of `text` if it is at most `limit`, `None` if it is more.
    ///
    /// For an OpenAI encoding, the work is bounded by `limit` and not by the text: a text too long
    /// to fit is refused before any encoding (see the module's documentation for why the count is
    /// exact). A Hugging Face tokenizer encodes the whole text.
    pub fn count_within(
        &self,
        text: &str,
        mode: &EncodeMode,
        limit: usize,
    ) -> Result<Option<usize>, Error> {
        // A disallowed special token fails the text whatever its length, as encoding it would.
        special::refuse_disallowed(text, mode.disallowed_special())?;
        if self.surely_over_limit(text.len(), mode, limit) {
            return Ok(None);
        }
        let count = self.count(text, mode)?;
        Ok((count <= limit).then_some(count))
    }

    /// Whether every text of at least `bytes` bytes of UTF-8 has more than `limit` tokens: known
    /// without the text where the tokenizer bounds the bytes one token spells (the OpenAI
    /// encodings), so a caller holding only a length (a JS string's, which UTF-8 never makes
    /// shorter) can refuse a text without reading it.
    pub fn surely_over_limit(&self, bytes: usize, mode: &EncodeMode, limit: usize) -> bool {
        self.fewest_tokens(bytes, mode)
            .is_some_and(|fewest| fewest > limit)
    }

    /// A lower bound on the number of tokens of a text of `bytes` bytes, where the tokenizer
    /// gives one: the length over the most bytes one token can spell.
    fn fewest_tokens(&self, bytes: usize, mode: &EncodeMode) -> Option<usize> {
        let table = self.token_bytes()?;
        let longest_special = mode.allowed_special().iter().map(|s| s.text.len()).max();
        let longest = table.longest().max(longest_special.unwrap_or(0)).max(1);
        Some(bytes.div_ceil(longest))
    }

    /// The longest prefix of `text` (the longest suffix with `from_end`) whose tokens number at
    /// most `max_tokens`, cut at a token boundary and never inside a character.
    ///
    /// "Fits" means that encoding the returned text gives at most `max_tokens` ids; the cut is the
    /// end (the start, with `from_end`) of one of the tokens of `text`'s own encoding (for an
    /// OpenAI encoding, of the part of it a fitting cut can reach), moved to the nearest character
    /// boundary inside the kept part, and the next longer such cut does not fit. A text that fits
    /// is returned whole. With template tokens (`[CLS]` … `[SEP]`), they count against `max_tokens` as they do in
    /// the ids.
    pub fn truncate<'t>(
        &self,
        text: &'t str,
        mode: &EncodeMode,
        max_tokens: usize,
        from_end: bool,
    ) -> Result<&'t str, Error> {
        if self.count_within(text, mode, max_tokens)?.is_some() {
            return Ok(text);
        }
        let (scope, offset) = self.truncation_scope(text, mode, max_tokens, from_end);
        let mut spans = self.token_spans(scope, mode)?;
        for span in &mut spans {
            *span = (span.0 + offset, span.1 + offset);
        }
        // `text` has more than `max_tokens` ids, so no more of its tokens than the limit, less
        // the template tokens, can fit.
        let template = self.count("", mode)?;
        let mut kept = max_tokens.saturating_sub(template).min(spans.len());
        let fits = |kept: usize| -> Result<bool, Error> {
            Ok(self.count(cut_after(text, &spans, kept, from_end), mode)? <= max_tokens)
        };
        while kept > 0 && !fits(kept)? {
            kept -= 1;
        }
        // A longer cut can re-encode to fewer ids than the tokens it keeps (two spaces that
        // become one token once the text after them is gone, say): go on while the next fits.
        while kept < spans.len() && fits(kept + 1)? {
            kept += 1;
        }
        Ok(cut_after(text, &spans, kept, from_end))
    }

    /// The part of `text` whose tokens truncation cuts at, and where it starts: the whole text, or
    /// for a prefix in an OpenAI encoding only as much of its start as `max_tokens + 1` of the
    /// longest tokens spell, cut at a character boundary. A cut that fits has at most
    /// `max_tokens` tokens, each spelling at most the longest token's bytes, so it lies within
    /// that part; encoding the rest of a long text would find nothing. A suffix is cut at the
    /// tokens of the whole text: the pre-tokenizer reads left to right, so the tokens of a part
    /// that starts inside the text can differ (a run of digits groups by threes from its start).
    fn truncation_scope<'t>(
        &self,
        text: &'t str,
        mode: &EncodeMode,
        max_tokens: usize,
        from_end: bool,
    ) -> (&'t str, usize) {
        let Some(table) = self.token_bytes().filter(|_| !from_end) else {
            return (text, 0);
        };
        let longest_special = mode.allowed_special().iter().map(|s| s.text.len()).max();
        let longest = table.longest().max(longest_special.unwrap_or(0));
        let reach = max_tokens.saturating_add(1).saturating_mul(longest);
        if reach >= text.len() {
            (text, 0)
        } else {
            (&text[..floor_char_boundary(text, reach)], 0)
        }
    }

    /// The byte range of `text` each token of its encoding stands for, in order, template tokens
    /// left out.
    fn token_spans(&self, text: &str, mode: &EncodeMode) -> Result<Vec<(usize, usize)>, Error> {
        match self.family() {
            Family::OpenAi(encoding) => {
                let table = self
                    .token_bytes()
                    .expect("an OpenAI encoding has a token table");
                let ids = self.encode(text, mode)?;
                let mut at = 0;
                Ok(ids
                    .as_slice()
                    .iter()
                    .map(|&id| {
                        let len = match encoding.special_text(id) {
                            Some(special) => special.len(),
                            None => table.get(id).len(),
                        };
                        at += len;
                        (at - len, at)
                    })
                    .collect())
            }
            Family::HuggingFace => {
                let stable = self
                    .stable_engine()
                    .expect("a Hugging Face tokenizer has the stable engine");
                stable
                    .token_offsets(text, mode.adds_special_tokens(), mode.splits_special())
                    .map_err(|why| {
                        Error::new(super::ErrorKind::Engine, format!("encoding failed: {why}"))
                    })
            }
        }
    }
}

/// `text` cut after its first `kept` tokens (before its last `kept`, with `from_end`), at the
/// character boundary inside the kept part; `spans` are the tokens' byte ranges.
fn cut_after<'t>(text: &'t str, spans: &[(usize, usize)], kept: usize, from_end: bool) -> &'t str {
    if from_end {
        let start = spans[spans.len() - kept..]
            .iter()
            .map(|&(start, _)| start)
            .min()
            .unwrap_or(text.len());
        &text[ceil_char_boundary(text, start)..]
    } else {
        let end = spans[..kept].iter().map(|&(_, end)| end).max().unwrap_or(0);
        &text[..floor_char_boundary(text, end)]
    }
}

/// The largest character boundary of `text` at or before `at`.
fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The smallest character boundary of `text` at or after `at`.
fn ceil_char_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::super::AllowedSpecial;
    use super::super::test_fixtures::{fixture_texts, fixture_tokenizer};
    use super::*;

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
        all
    }

    #[test]
    fn count_within_is_the_count_when_within_and_none_when_over() {
        let texts = fixture_texts();
        for (name, tokenizer) in tokenizers() {
            let mode = tokenizer.encode_mode(None, &AllowedSpecial::None).unwrap();
            for text in &texts {
                let count = tokenizer.encode(text, &mode).unwrap().len();
                assert_eq!(tokenizer.count(text, &mode).unwrap(), count);
                for limit in [0, 1, count.saturating_sub(1), count, count + 1, count * 2] {
                    let expected = (count <= limit).then_some(count);
                    assert_eq!(
                        tokenizer.count_within(text, &mode, limit).unwrap(),
                        expected,
                        "{name}, limit {limit}: {text:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_huge_text_over_a_small_limit_is_refused_without_encoding() {
        let tokenizer = Tokenizer::from_encoding("o200k_base").unwrap();
        let mode = tokenizer.encode_mode(None, &AllowedSpecial::All).unwrap();
        let huge = "All work and no play makes Jack a dull boy. ".repeat(250_000);
        // The bound alone decides: no encoding of 11 MB happens (that would take far longer than
        // this test's whole run; the bound is checked directly too).
        assert!(tokenizer.fewest_tokens(huge.len(), &mode).unwrap() > 100);
        assert_eq!(tokenizer.count_within(&huge, &mode, 100).unwrap(), None);
        // Truncating it to a prefix encodes only what 101 of the longest tokens spell.
        let (scope, _) = tokenizer.truncation_scope(&huge, &mode, 100, false);
        assert!(scope.len() <= 101 * tokenizer.token_bytes().unwrap().longest());
        let cut = tokenizer.truncate(&huge, &mode, 100, false).unwrap();
        assert_eq!(tokenizer.count(cut, &mode).unwrap(), 100);
        // The bound never refuses a text that fits: the longest token alone is one token.
        let table = tokenizer.token_bytes().unwrap();
        let longest = (0..tokenizer.id_limit())
            .find(|&id| table.get(id).len() == table.longest())
            .unwrap();
        let text = tokenizer.decode(&[longest], false).unwrap();
        assert_eq!(tokenizer.count_within(&text, &mode, 1).unwrap(), Some(1));
    }

    /// The cut `truncate` promises, found the slow way: every candidate from no token up to the
    /// limit, cut at the tokens of the whole text (not only the part `truncate` encodes), each
    /// re-encoded; the last that fits.
    fn longest_fitting_cut<'t>(
        tokenizer: &Tokenizer,
        text: &'t str,
        mode: &EncodeMode,
        max: usize,
        from_end: bool,
    ) -> &'t str {
        if tokenizer.count(text, mode).unwrap() <= max {
            return text;
        }
        let spans = tokenizer.token_spans(text, mode).unwrap();
        let template = tokenizer.count("", mode).unwrap();
        (0..=max.saturating_sub(template).min(spans.len()))
            .map(|kept| cut_after(text, &spans, kept, from_end))
            .filter(|cut| tokenizer.count(cut, mode).unwrap() <= max)
            .last()
            .unwrap_or("")
    }

    #[test]
    fn truncation_keeps_a_fitting_cut_at_a_token_and_character_boundary_that_no_next_cut_betters() {
        let texts = fixture_texts();
        for (name, tokenizer) in tokenizers() {
            for add_special_tokens in [None, Some(false)] {
                let Ok(mode) = tokenizer.encode_mode(add_special_tokens, &AllowedSpecial::None)
                else {
                    continue;
                };
                for text in texts.iter().step_by(7) {
                    let total = tokenizer.count(text, &mode).unwrap();
                    for max in [0, 1, 2, 5, total / 2, total.saturating_sub(1), total] {
                        for from_end in [false, true] {
                            let cut = tokenizer.truncate(text, &mode, max, from_end).unwrap();
                            let what = format!("{name}, {max} from_end {from_end}: {text:?}");
                            let fits = tokenizer.count(cut, &mode).unwrap();
                            assert!(fits <= max || cut.is_empty(), "{what}: {fits} ids");
                            if from_end {
                                assert!(text.ends_with(cut), "{what}");
                            } else {
                                assert!(text.starts_with(cut), "{what}");
                            }
                            // A cut at one of the text's token boundaries, at least as long
                            // as the longest that keeps at most `max` of its tokens, and the
                            // next longer cut does not fit.
                            let spans = tokenizer.token_spans(text, &mode).unwrap();
                            let at = (0..=spans.len())
                                .rev()
                                .find(|&k| cut_after(text, &spans, k, from_end) == cut);
                            let shortest =
                                longest_fitting_cut(&tokenizer, text, &mode, max, from_end);
                            assert!(
                                cut.len() >= shortest.len(),
                                "{what}: shorter than {shortest:?}"
                            );
                            if fits <= max && cut != text {
                                let k =
                                    at.unwrap_or_else(|| panic!("{what}: not a token boundary"));
                                let next = cut_after(text, &spans, k + 1, from_end);
                                assert!(
                                    tokenizer.count(next, &mode).unwrap() > max,
                                    "{what}: {next:?} fits too"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn truncation_never_cuts_a_character() {
        let tokenizer = Tokenizer::from_encoding("cl100k_base").unwrap();
        let mode = tokenizer.encode_mode(None, &AllowedSpecial::None).unwrap();
        // Each of these characters spans more than one cl100k_base token.
        let text = "🦀🦀🦀 ok 𝔘𝔫𝔦𝔠𝔬𝔡𝔢";
        for max in 0..tokenizer.count(text, &mode).unwrap() {
            for from_end in [false, true] {
                let cut = tokenizer.truncate(text, &mode, max, from_end).unwrap();
                assert!(tokenizer.count(cut, &mode).unwrap() <= max);
            }
        }
        // A crab is three tokens: two fit none of it, three fit one, and no cut holds a part.
        assert_eq!(tokenizer.truncate(text, &mode, 2, false).unwrap(), "");
        assert_eq!(tokenizer.truncate(text, &mode, 3, false).unwrap(), "🦀");
        assert_eq!(tokenizer.truncate(text, &mode, 5, false).unwrap(), "🦀");
    }
}
