//! Code points on which the release candidate's Unicode tables disagree with the references'.
//!
//! `tokenizers` 1.0.0-rc.3 classifies characters with tables of Unicode 17.0 (its `bitcannon`
//! pre-tokenizers and its normalizers). The references are older: tiktoken's regex engine
//! (`fancy-regex` on `regex-syntax` 0.8) and Oniguruma 6.9.10, which the stable `tokenizers` 0.23
//! crate and Python `tokenizers` run, know Unicode 16.0, and the stable crate's normalizers older
//! versions still. A text containing a character below is encoded by the exact path (see
//! `routing.rs`); every other text keeps the fast one. Two tables make the set:
//!
//! - [`NEW_IN_17`]: every code point Unicode 17.0 assigns and 16.0 does not, generated from the
//!   Unicode data by `scripts/gen-unicode-new.sh`. The release candidate gives each its Unicode 17
//!   class (a letter, a symbol, a digit); the references see an unassigned code point, which no
//!   pattern class but the negated ones matches. Routing them all settles every pattern, whatever
//!   classes it names, without a sweep per pattern; `unicode_probe` in `differential.rs` checks
//!   each in the contexts where a class decides a cut, and that the release candidate agrees with
//!   the reference on every other code point Unicode 16.0 leaves unassigned.
//! - [`DRIFT`]: what the exhaustive sweep in `tests/engine/differential_fuzz.rs` (`sweep_*`, every
//!   scalar value in ten contexts) found for the four OpenAI encodings and the three fixture
//!   tokenizers, merged: mostly characters new in Unicode 16.0 or 17.0, plus punctuation the stable
//!   crate's older tables do not know; U+017F, kept apart below; and every combining mark whose
//!   canonical combining class differs between the stable crate's normalization tables
//!   (`unicode-normalization-alignments`, Unicode 9.0) and the release candidate's
//!   (`unicode-normalization` 0.1.25, Unicode 17.0), read from the two crates' `tables.rs`: such a
//!   mark is reordered against its neighbours by one normalizer and not the other (the differential
//!   fuzz found `"I\u{1ace}\u{328}"` on the Unigram fixture's NFKC; the sweep, one character at a
//!   time, cannot); and every character the two crates decompose differently (characters assigned
//!   since Unicode 9.0 with a canonical or compatibility decomposition, `"\u{1e044}"` under NFKC)
//!   or whose decomposition they compose differently (the characters since 9.0 in it, Garay's
//!   letters among them), which `every_character_normalized_differently_is_routed` computes from
//!   the two crates' tables and holds routed.
//!
//! Most tokenizers never look at a symbol's class: their patterns name letters, marks, digits,
//! punctuation and spaces, and a symbol is to them what an unassigned code point is, something
//! of none of those. For them the symbols Unicode 17.0 adds ([`NEW_SYMBOLS_IN_17`], its new emoji
//! among them) need no routing; a tokenizer whose patterns or components do tell a symbol from an
//! unassigned code point (a `\p{S}` class, a script class, the `UnicodeScripts` pre-tokenizer)
//! routes them with the rest. [`symbols`] decides which a tokenizer is, and [`Routed`] carries
//! the answer.
//!
//! A third table, [`KIMI_DRIFT`], is for one pattern only: the Han numerals and radicals, which
//! the release candidate's matcher for Kimi K2's regex cuts otherwise; only tokenizers that split
//! by that regex route its texts ([`contains_kimi_drift`]).
//!
//! A tokenizer.json built from other components (another normalizer) may disagree on characters
//! assigned before Unicode 17 that the sweep never tried with it; the sweep is how to find them,
//! and FUZZING.md says how to run it.

mod new_in_17;
pub mod symbols;

use new_in_17::{NEW_IN_17, NEW_SYMBOLS_IN_17};

/// Which characters send a tokenizer's texts to the reference beyond those that always do (the
/// characters of [`DRIFT`], and those of [`NEW_IN_17`] that are not symbols).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Routed {
    /// The symbols of [`NEW_SYMBOLS_IN_17`] too: the tokenizer tells a symbol from an unassigned
    /// code point ([`symbols`]).
    pub new_symbols: bool,
    /// The characters of [`KIMI_DRIFT`] too: the tokenizer splits by Kimi K2's regex on the
    /// release candidate's matcher.
    pub kimi_regex: bool,
}

/// Inclusive ranges of code points, sorted and disjoint.
const DRIFT: &[(u32, u32)] = &[
    (0x061D, 0x061D),
    (0x07FD, 0x07FD),
    (0x088F, 0x088F),
    (0x0897, 0x089F),
    (0x08CA, 0x08D3),
    (0x09FD, 0x09FE),
    (0x0A76, 0x0A76),
    (0x0C3C, 0x0C3C),
    (0x0C5C, 0x0C5C),
    (0x0C77, 0x0C77),
    (0x0C84, 0x0C84),
    (0x0CDC, 0x0CDC),
    (0x0D3B, 0x0D3C),
    (0x0EBA, 0x0EBA),
    (0x166D, 0x166D),
    (0x1715, 0x1715),
    (0x1ABF, 0x1ADD),
    (0x1AE0, 0x1AEB),
    (0x1B4E, 0x1B4F),
    (0x1B7D, 0x1B7F),
    (0x1DF6, 0x1DFA),
    (0x2E43, 0x2E4F),
    (0x2E52, 0x2E5D),
    (0x32FF, 0x32FF),
    (0xA7CE, 0xA7CF),
    (0xA7D2, 0xA7D2),
    (0xA7D4, 0xA7D4),
    (0xA7F1, 0xA7F4),
    (0xA82C, 0xA82C),
    (0xAB69, 0xAB69),
    (0x105C9, 0x105C9),
    (0x105D2, 0x105D2),
    (0x105DA, 0x105DA),
    (0x105E4, 0x105E4),
    (0x10781, 0x10785),
    (0x10787, 0x107B0),
    (0x107B2, 0x107BA),
    (0x10940, 0x10959),
    (0x10D24, 0x10D27),
    (0x10D69, 0x10D6E),
    (0x10EAB, 0x10EAD),
    (0x10EC5, 0x10EC7),
    (0x10ED0, 0x10ED0),
    (0x10EFA, 0x10EFB),
    (0x10EFD, 0x10EFF),
    (0x10F46, 0x10F50),
    (0x10F55, 0x10F59),
    (0x10F82, 0x10F89),
    (0x11070, 0x11070),
    (0x111C9, 0x111C9),
    (0x1133B, 0x1133B),
    (0x11382, 0x11385),
    (0x1138B, 0x1138B),
    (0x1138E, 0x1138E),
    (0x11390, 0x11391),
    (0x113B8, 0x113B8),
    (0x113BB, 0x113BB),
    (0x113C2, 0x113C2),
    (0x113C5, 0x113C5),
    (0x113C7, 0x113C9),
    (0x113CE, 0x113D0),
    (0x113D4, 0x113D5),
    (0x113D7, 0x113D8),
    (0x1144B, 0x1144F),
    (0x1145A, 0x1145B),
    (0x1145D, 0x1145E),
    (0x11660, 0x1166C),
    (0x116B9, 0x116B9),
    (0x11839, 0x1183B),
    (0x11930, 0x11930),
    (0x11935, 0x11935),
    (0x11938, 0x11938),
    (0x1193D, 0x1193E),
    (0x11943, 0x11946),
    (0x119E0, 0x119E0),
    (0x119E2, 0x119E2),
    (0x11A34, 0x11A34),
    (0x11A3F, 0x11A47),
    (0x11A99, 0x11A9C),
    (0x11A9E, 0x11AA2),
    (0x11B00, 0x11B09),
    (0x11B60, 0x11B67),
    (0x11BE1, 0x11BE1),
    (0x11C41, 0x11C45),
    (0x11C70, 0x11C71),
    (0x11D42, 0x11D42),
    (0x11D44, 0x11D45),
    (0x11D97, 0x11D97),
    (0x11DB0, 0x11DDB),
    (0x11DE0, 0x11DE9),
    (0x11EF7, 0x11EF8),
    (0x11F41, 0x11F4F),
    (0x11FFF, 0x11FFF),
    (0x12FF1, 0x12FF2),
    (0x1611E, 0x16129),
    (0x1612F, 0x1612F),
    (0x16D63, 0x16D63),
    (0x16D67, 0x16D6A),
    (0x16D6D, 0x16D6F),
    (0x16E97, 0x16E9A),
    (0x16EA0, 0x16EB8),
    (0x16EBB, 0x16ED3),
    (0x16FE2, 0x16FE2),
    (0x16FF0, 0x16FF6),
    (0x187F8, 0x187FF),
    (0x18D09, 0x18D1E),
    (0x18D80, 0x18DF2),
    (0x1CCD6, 0x1CCF9),
    (0x1E030, 0x1E06D),
    (0x1E08F, 0x1E08F),
    (0x1E130, 0x1E136),
    (0x1E2AE, 0x1E2AE),
    (0x1E2EC, 0x1E2EF),
    (0x1E4EC, 0x1E4EF),
    (0x1E5EE, 0x1E5EF),
    (0x1E5FF, 0x1E5FF),
    (0x1E6C0, 0x1E6DE),
    (0x1E6E0, 0x1E6F5),
    (0x1E6FE, 0x1E6FF),
    (0x1E95E, 0x1E95F),
    (0x1F16C, 0x1F16C),
    (0x1FBF0, 0x1FBF9),
    (0x2B73A, 0x2B73F),
    (0x2CEA2, 0x2CEAD),
    (0x323B0, 0x33479),
];

/// [`DRIFT`] and [`NEW_IN_17`] in one table, and how many of its entries are used: what
/// [`contains_drift`] searches for a tokenizer that tells symbols apart, so that a character
/// costs one binary search.
const MERGED: ([(u32, u32); DRIFT.len() + NEW_IN_17.len()], usize) = merge(DRIFT, NEW_IN_17);

/// The ranges of [`MERGED`], sorted, disjoint and not adjacent.
const ROUTED: &[(u32, u32)] = MERGED.0.split_at(MERGED.1).0;

/// [`NEW_IN_17`] without [`NEW_SYMBOLS_IN_17`], and how many of its entries are used.
const NEW_BUT_SYMBOLS: (
    [(u32, u32); NEW_IN_17.len() + NEW_SYMBOLS_IN_17.len()],
    usize,
) = difference(NEW_IN_17, NEW_SYMBOLS_IN_17);

/// [`DRIFT`] and the rest of [`NEW_IN_17`] without its symbols in one table: what
/// [`contains_drift`] searches for a tokenizer that reads a symbol as an unassigned code point.
const MERGED_BUT_SYMBOLS: (
    [(u32, u32); DRIFT.len() + NEW_IN_17.len() + NEW_SYMBOLS_IN_17.len()],
    usize,
) = merge(DRIFT, NEW_BUT_SYMBOLS.0.split_at(NEW_BUT_SYMBOLS.1).0);

/// The ranges of [`MERGED_BUT_SYMBOLS`], sorted, disjoint and not adjacent.
const ROUTED_BUT_SYMBOLS: &[(u32, u32)] = MERGED_BUT_SYMBOLS.0.split_at(MERGED_BUT_SYMBOLS.1).0;

/// The smallest code point in [`ROUTED`], which holds [`ROUTED_BUT_SYMBOLS`]: text below it
/// needs no lookup.
const FIRST: u32 = ROUTED[0].0;

/// The union of two lists of sorted, disjoint, inclusive ranges, with touching ranges joined; the
/// array holds the result's ranges first, and the count says how many.
const fn merge<const N: usize>(a: &[(u32, u32)], b: &[(u32, u32)]) -> ([(u32, u32); N], usize) {
    let mut out = [(0_u32, 0_u32); N];
    let (mut i, mut j, mut len) = (0, 0, 0);
    while i < a.len() || j < b.len() {
        let next = if j == b.len() || (i < a.len() && a[i].0 <= b[j].0) {
            i += 1;
            a[i - 1]
        } else {
            j += 1;
            b[j - 1]
        };
        if len > 0 && next.0 <= out[len - 1].1.saturating_add(1) {
            if next.1 > out[len - 1].1 {
                out[len - 1].1 = next.1;
            }
        } else {
            out[len] = next;
            len += 1;
        }
    }
    (out, len)
}

/// The ranges of `a` without the code points of `b` (both sorted and disjoint), and how many of
/// the array's entries hold them.
const fn difference<const N: usize>(
    a: &[(u32, u32)],
    b: &[(u32, u32)],
) -> ([(u32, u32); N], usize) {
    let mut out = [(0_u32, 0_u32); N];
    let (mut i, mut first_b, mut len) = (0, 0, 0);
    while i < a.len() {
        let (mut start, end) = a[i];
        while first_b < b.len() && b[first_b].1 < start {
            first_b += 1;
        }
        // What is left of `a[i]` from `start` on, cut by each range of `b` that meets it.
        let mut j = first_b;
        let mut left = true;
        while left && j < b.len() && b[j].0 <= end {
            if b[j].0 > start {
                out[len] = (start, b[j].0 - 1);
                len += 1;
            }
            if b[j].1 >= end {
                left = false;
            } else {
                start = b[j].1 + 1;
                j += 1;
            }
        }
        if left {
            out[len] = (start, end);
            len += 1;
        }
        i += 1;
    }
    (out, len)
}

/// U+017F LATIN SMALL LETTER LONG S, which case-folds to `s`: tiktoken's case-insensitive
/// contraction suffix `(?i:'s|...)` matches `'ſ`, the release candidate's matcher does not (found
/// by the differential fuzz on o200k_base, `"e'ſ'TD"`). Kept out of [`DRIFT`] so that the Greek,
/// Cyrillic and Hebrew below [`FIRST`] still need no lookup.
const LONG_S: char = '\u{17f}';

/// True when `text` holds a character the engines' Unicode versions disagree on, or one that
/// Unicode 17.0 assigns and the references' Unicode 16.0 does not; of the latter, the symbols of
/// [`NEW_SYMBOLS_IN_17`] only where `new_symbols` says the tokenizer tells them apart.
#[inline]
pub fn contains_drift(text: &str, new_symbols: bool) -> bool {
    // One vectorized pass settles the common all-ASCII case.
    if text.is_ascii() {
        return false;
    }
    let table = if new_symbols {
        ROUTED
    } else {
        ROUTED_BUT_SYMBOLS
    };
    text.chars().any(|c| {
        let code = c as u32;
        c == LONG_S || (code >= FIRST && in_table(table, code))
    })
}

/// True when `text` goes to the reference: it holds a character of [`contains_drift`], or one of
/// [`KIMI_DRIFT`] where `routed` says the tokenizer splits by Kimi K2's regex on the release
/// candidate's matcher.
#[inline]
pub fn contains_routed(text: &str, routed: Routed) -> bool {
    contains_drift(text, routed.new_symbols) || (routed.kimi_regex && contains_kimi_drift(text))
}

/// The Han-script characters that are not letters: the CJK Radicals Supplement and the Kangxi
/// radicals (symbols), the ideographic number zero `〇`, the Hangzhou numerals `〡`-`〩` and the
/// counting-rod tens `〸`-`〺` (letter numbers). The release candidate's matcher for Kimi K2's
/// regex cuts a text holding one otherwise than the regex's `[\p{Han}]+` and `\p{N}{1,3}` do
/// (FUZZING.md, finding 12): a sweep of every scalar value in eighteen contexts, Han and
/// multi-byte digits among them, found these and nothing else. A tokenizer whose text that regex
/// splits sends such a text to the exact path or the stable engine (`routing.rs`).
const KIMI_DRIFT: &[(u32, u32)] = &[
    (0x2E80, 0x2E99),
    (0x2E9B, 0x2EF3),
    (0x2F00, 0x2FD5),
    (0x3007, 0x3007),
    (0x3021, 0x3029),
    (0x3038, 0x303A),
];

/// True when `text` holds a character of [`KIMI_DRIFT`].
#[inline]
fn contains_kimi_drift(text: &str) -> bool {
    // Every such character is three bytes in UTF-8, the first 0xE2 or 0xE3.
    memchr::memchr2(0xE2, 0xE3, text.as_bytes()).is_some()
        && text.chars().any(|c| in_ranges(KIMI_DRIFT, c as u32))
}

/// Whether `code` is in `table`, one of the routing tables.
#[cold]
fn in_table(table: &[(u32, u32)], code: u32) -> bool {
    in_ranges(table, code)
}

/// Whether `code` is in `ranges`, sorted and disjoint.
fn in_ranges(ranges: &[(u32, u32)], code: u32) -> bool {
    ranges
        .binary_search_by(|&(start, end)| {
            if end < code {
                std::cmp::Ordering::Less
            } else if start > code {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// Every code point of [`NEW_IN_17`], for the probes in `differential.rs`.
#[cfg(test)]
pub fn new_in_17_code_points() -> Vec<char> {
    characters(NEW_IN_17)
}

/// Every code point of [`NEW_SYMBOLS_IN_17`], for the probes in `differential.rs`.
#[cfg(test)]
pub fn new_symbols_in_17() -> Vec<char> {
    characters(NEW_SYMBOLS_IN_17)
}

/// The characters of `ranges`.
#[cfg(test)]
fn characters(ranges: &[(u32, u32)]) -> Vec<char> {
    ranges
        .iter()
        .flat_map(|&(start, end)| start..=end)
        .filter_map(char::from_u32)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_are_sorted_and_disjoint() {
        for table in [
            DRIFT,
            NEW_IN_17,
            NEW_SYMBOLS_IN_17,
            ROUTED,
            ROUTED_BUT_SYMBOLS,
            KIMI_DRIFT,
        ] {
            for pair in table.windows(2) {
                assert!(pair[0].0 <= pair[0].1 && pair[0].1 < pair[1].0, "{pair:?}");
            }
        }
        for pair in ROUTED.windows(2).chain(ROUTED_BUT_SYMBOLS.windows(2)) {
            assert!(
                pair[0].1 + 1 < pair[1].0,
                "touching ranges are joined: {pair:?}"
            );
        }
    }

    #[test]
    fn the_merged_table_holds_both_tables_and_nothing_else() {
        let count = |table: &[(u32, u32)]| -> u32 { table.iter().map(|&(a, b)| b - a + 1).sum() };
        let overlap: u32 = DRIFT
            .iter()
            .flat_map(|&(a, b)| a..=b)
            .filter(|&c| NEW_IN_17.iter().any(|&(x, y)| (x..=y).contains(&c)))
            .count() as u32;
        assert_eq!(count(ROUTED), count(DRIFT) + count(NEW_IN_17) - overlap);
        for &(start, end) in DRIFT.iter().chain(NEW_IN_17) {
            assert!(in_table(ROUTED, start) && in_table(ROUTED, end));
        }
        // The example of a symbol new in Unicode 17 after a space, on DeepSeek V3's pattern.
        assert!(contains_drift(" \u{1f8d1}", true));
    }

    /// The table of a tokenizer that reads symbols as unassigned code points is the full one but
    /// the new symbols outside [`DRIFT`], code point for code point.
    #[test]
    fn the_table_without_symbols_leaves_out_the_new_symbols_and_nothing_else() {
        let points =
            |table: &[(u32, u32)]| -> Vec<u32> { table.iter().flat_map(|&(a, b)| a..=b).collect() };
        let symbols = points(NEW_SYMBOLS_IN_17);
        assert!(symbols.len() > 100, "{}", symbols.len());
        assert!(symbols.iter().all(|&c| in_ranges(NEW_IN_17, c)));
        let expected: Vec<u32> = points(ROUTED)
            .into_iter()
            .filter(|&c| in_ranges(DRIFT, c) || !in_ranges(NEW_SYMBOLS_IN_17, c))
            .collect();
        assert_eq!(points(ROUTED_BUT_SYMBOLS), expected);
    }

    /// What `symbols.rs` counts on for the components it reads alike: to Unicode 17.0 (Rust's
    /// `char` tables here) no new symbol has a case mapping or is a letter, a number or a space,
    /// so lowercasing, `\w`, `\d` and `\s` treat it as they treat an unassigned code point.
    #[test]
    fn the_new_symbols_have_no_case_and_no_letter_number_or_space_class() {
        assert!(
            char::UNICODE_VERSION >= (17, 0, 0),
            "{:?}",
            char::UNICODE_VERSION
        );
        for c in new_symbols_in_17() {
            assert!(
                c.to_lowercase().eq([c]) && c.to_uppercase().eq([c]),
                "{c:?}"
            );
            assert!(!c.is_alphanumeric() && !c.is_whitespace(), "{c:?}");
        }
    }

    #[test]
    fn difference_cuts_ranges_at_either_end_and_inside() {
        let (out, len) = difference::<6>(
            &[(1, 10), (20, 30), (40, 40)],
            &[(0, 2), (5, 5), (10, 21), (40, 40)],
        );
        assert_eq!(&out[..len], &[(3, 4), (6, 9), (22, 30)]);
    }

    /// The code points the two engines' normalizers read differently: a different canonical or
    /// compatibility decomposition, or combining class, in the stable crate's tables (Unicode 9.0)
    /// and the release candidate's (Unicode 17.0); and the characters after Unicode 9.0 of every
    /// decomposition that the two compose differently (a text of them, without the composite, is
    /// composed by one and not the other).
    fn normalized_differently() -> Vec<u32> {
        use unicode_normalization as new;
        use unicode_normalization_alignments as old;
        let known_to_9 = regex::Regex::new(r"\p{Age=9.0}").unwrap();
        let decompositions = |c: char| {
            let (mut old_canonical, mut new_canonical) = (String::new(), String::new());
            let (mut old_compatible, mut new_compatible) = (String::new(), String::new());
            old::char::decompose_canonical(c, |d| old_canonical.push(d));
            new::char::decompose_canonical(c, |d| new_canonical.push(d));
            old::char::decompose_compatible(c, |d| old_compatible.push(d));
            new::char::decompose_compatible(c, |d| new_compatible.push(d));
            (old_canonical, new_canonical, old_compatible, new_compatible)
        };
        let mut found = std::collections::BTreeSet::new();
        for c in (0..=0x10FFFF_u32).filter_map(char::from_u32) {
            let (old_canonical, new_canonical, old_compatible, new_compatible) = decompositions(c);
            if old_canonical != new_canonical
                || old_compatible != new_compatible
                || old::char::canonical_combining_class(c)
                    != new::char::canonical_combining_class(c)
            {
                found.insert(c as u32);
            }
            if new_canonical.chars().count() > 1 {
                use new::UnicodeNormalization as _;
                let composed_new: String = new_canonical.nfc().collect();
                let composed_old: String = old::UnicodeNormalization::nfc(new_canonical.as_str())
                    .map(|(c, _)| c)
                    .collect();
                if composed_new != composed_old {
                    let after_9 = new_canonical
                        .chars()
                        .filter(|d| !known_to_9.is_match(&d.to_string()));
                    found.extend(after_9.map(|d| d as u32));
                }
            }
        }
        found.into_iter().collect()
    }

    /// Every code point the two normalizers read differently is routed, so a tokenizer with any
    /// Unicode normalizer (NFC, NFD, NFKC, NFKD, BERT's accent stripping) encodes it as the
    /// reference does.
    #[test]
    fn every_character_normalized_differently_is_routed() {
        let unrouted: Vec<u32> = normalized_differently()
            .into_iter()
            .filter(|&code| !contains_drift(&char::from_u32(code).unwrap().to_string(), false))
            .collect();
        let mut ranges: Vec<(u32, u32)> = Vec::new();
        for code in unrouted {
            match ranges.last_mut() {
                Some((_, end)) if *end + 1 == code => *end = code,
                _ => ranges.push((code, code)),
            }
        }
        let listed: Vec<String> = ranges
            .iter()
            .map(|(a, b)| format!("(0x{a:04X}, 0x{b:04X})"))
            .collect();
        assert!(ranges.is_empty(), "not routed: {}", listed.join(", "));
    }

    #[test]
    fn finds_kimi_drift_characters_and_only_those() {
        // The texts the differential fuzz and the sweep found (FUZZING.md, finding 12).
        assert!(contains_kimi_drift("\u{104a0}\u{3007}71"));
        assert!(contains_kimi_drift("x \u{2e80}"));
        assert!(contains_kimi_drift("\u{2fd5}"));
        assert!(contains_kimi_drift("二〇二四年"));
        // Han letters, `々` and the characters next to the ranges stay on the fast path.
        assert!(!contains_kimi_drift("naïve 日本語の人々 → 中文 👍🏽 2024"));
        for code in [
            0x2E7F, 0x2E9A, 0x2EF4, 0x2FD6, 0x3006, 0x3008, 0x3020, 0x302A, 0x303B,
        ] {
            let text = char::from_u32(code).unwrap().to_string();
            assert!(!contains_kimi_drift(&text), "U+{code:04X}");
        }
    }

    #[test]
    fn finds_drift_characters_anywhere_and_only_those() {
        for new_symbols in [true, false] {
            assert!(!contains_drift("plain ASCII <|endoftext|>", new_symbols));
            assert!(!contains_drift("naïve Ångström 日本語 👍🏽", new_symbols));
            // The first disagreements the differential fuzz found, one per engine pair.
            assert!(contains_drift("\u{a7d4}<M", new_symbols));
            assert!(contains_drift("x \u{1ccda}", new_symbols));
            assert!(contains_drift("\u{1179}\u{1b4e}", new_symbols));
            assert!(contains_drift("e'\u{17f}'TD", new_symbols));
            assert!(contains_drift("V\u{1df9}\u{303}", new_symbols));
            assert!(contains_drift("I\u{1ace}\u{328}", new_symbols));
            // A letter Unicode 17 adds (CJK Extension J).
            assert!(contains_drift("\u{323b0}", new_symbols));
        }
        // Emoji Unicode 17 adds: routed only for a tokenizer that tells symbols apart.
        assert!(contains_drift("hi \u{1fac8}", true));
        assert!(!contains_drift("hi \u{1fac8} \u{1faef}", false));
        for table in [ROUTED, ROUTED_BUT_SYMBOLS] {
            for &(start, end) in table {
                assert!(in_table(table, start) && in_table(table, end));
                assert!(!in_table(table, start - 1) && !in_table(table, end + 1));
            }
        }
    }
}
