//! Special-token text in the OpenAI family: which special tokens a call allows, and cutting a text
//! at them.
//!
//! tiktoken's `encode_ordinary` encodes special-token text such as `<|endoftext|>` as ordinary text;
//! `encode(text, allowed_special=...)` emits the special id for each allowed one it finds, scanning
//! for the leftmost occurrence. batchtok defaults to the former, so a batch never fails because of
//! what its texts contain, and never throws for a special that is not allowed: that text is
//! ordinary text (tiktoken's `disallowed_special=()`).
//!
//! A few special tokens are looked for one by one (`str::find`, which is vectorised); many
//! (o200k_harmony's 1,091, a tekken file's 1,000, Llama 3's 256) through one Aho-Corasick
//! automaton, which reads the text once whatever their number. The automaton of every special
//! token of an encoding is built once per encoding (`OpenAiEncoding::special_set`).

use std::sync::Arc;

use aho_corasick::{AhoCorasick, MatchKind};

use super::{DisallowedToken, Error, ErrorKind};

/// Up to this many special tokens are looked for one by one; more through an automaton.
const SEARCHED_ONE_BY_ONE: usize = 8;

/// Which special tokens a call turns into their ids.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum AllowedSpecial {
    /// None: special-token text is ordinary text (tiktoken's `encode_ordinary`).
    #[default]
    None,
    /// Every special token of the encoding.
    All,
    /// Only these, by their text.
    Only(Vec<String>),
}

/// A special token: its text and its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecialToken {
    /// The text that stands for it, e.g. `<|endoftext|>`.
    pub text: &'static str,
    /// Its id.
    pub id: u32,
}

/// Resolves `allowed` against an encoding's special tokens, in the order the encoding lists them.
///
/// A name the encoding does not have is an error that lists the ones it has.
pub fn resolve(
    allowed: &AllowedSpecial,
    specials: &[SpecialToken],
) -> Result<Vec<SpecialToken>, Error> {
    match allowed {
        AllowedSpecial::None => Ok(Vec::new()),
        AllowedSpecial::All => Ok(specials.to_vec()),
        AllowedSpecial::Only(names) => named("allowedSpecial", names, specials),
    }
}

/// The special tokens of `specials` that `names` names, in the encoding's order; a name the
/// encoding does not have is an error naming the option it came from and listing the ones it has.
pub(super) fn named(
    option: &str,
    names: &[String],
    specials: &[SpecialToken],
) -> Result<Vec<SpecialToken>, Error> {
    if let Some(unknown) = names
        .iter()
        .find(|n| !specials.iter().any(|s| s.text == n.as_str()))
    {
        let known: Vec<&str> = specials.iter().map(|s| s.text).collect();
        return Err(Error::new(
            ErrorKind::InvalidOption,
            format!(
                "{option} names {unknown:?}, which is not a special token of this encoding; its \
                 special tokens are {}",
                known.join(", ")
            ),
        ));
    }
    Ok(specials
        .iter()
        .filter(|s| names.iter().any(|n| n == s.text))
        .cloned()
        .collect())
}

/// Special tokens to find in texts: the tokens, and the automaton that finds them where they are
/// many. Cloned cheaply (both are shared).
#[derive(Debug, Clone, Default)]
pub struct SpecialSet {
    tokens: Arc<[SpecialToken]>,
    /// Leftmost-longest matches of the tokens' texts, pattern `i` being `tokens[i]`.
    automaton: Option<Arc<AhoCorasick>>,
}

impl SpecialSet {
    /// The set of `tokens`, with an automaton where they are more than a few (and the automaton
    /// builds: one too large for the crate's limits leaves the search one by one).
    pub fn new(tokens: Vec<SpecialToken>) -> SpecialSet {
        let automaton = (tokens.len() > SEARCHED_ONE_BY_ONE)
            .then(|| automaton_of(&tokens))
            .flatten();
        SpecialSet {
            tokens: tokens.into(),
            automaton,
        }
    }

    /// The tokens, in the order they were given.
    pub fn tokens(&self) -> &[SpecialToken] {
        &self.tokens
    }

    /// Whether the set has no tokens.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// The first occurrence in `text` of a token of the set (the longest where two start at the
    /// same byte): the token and its byte offset.
    fn first(&self, text: &str) -> Option<(&SpecialToken, usize)> {
        match &self.automaton {
            Some(automaton) => automaton
                .find(text)
                .map(|found| (&self.tokens[found.pattern().as_usize()], found.start())),
            None => self
                .tokens
                .iter()
                .filter_map(|special| text.find(special.text).map(|at| (special, at)))
                .min_by_key(|&(special, at)| (at, std::cmp::Reverse(special.text.len()))),
        }
    }
}

/// The automaton that finds the texts of `tokens`, leftmost first and the longest where two start
/// at the same byte, pattern `i` being `tokens[i]`.
fn automaton_of(tokens: &[SpecialToken]) -> Option<Arc<AhoCorasick>> {
    AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostLongest)
        .build(tokens.iter().map(|token| token.text))
        .ok()
        .map(Arc::new)
}

/// A piece of a text cut at special tokens.
#[derive(Debug, PartialEq, Eq)]
pub enum Segment<'t> {
    /// Ordinary text, never empty.
    Text(&'t str),
    /// A special token's id.
    Special(u32),
}

/// Cuts `text` at every occurrence of the `allowed` special tokens, leftmost first (the longest
/// where two start at the same place), calling `each` with the pieces in order.
///
/// Many tokens are found by the set's automaton, which reads the text once. A few are searched
/// one by one: each token's next occurrence is remembered and searched again only once the cut
/// has passed it, so every token's search moves forward through the text once, linear in the
/// text's length times the number of tokens, however many occurrences there are.
pub fn for_each_segment<'t, E>(
    text: &'t str,
    allowed: &SpecialSet,
    mut each: impl FnMut(Segment<'t>) -> Result<(), E>,
) -> Result<(), E> {
    if let Some(automaton) = &allowed.automaton {
        let mut rest = 0;
        for found in automaton.find_iter(text) {
            if found.start() > rest {
                each(Segment::Text(&text[rest..found.start()]))?;
            }
            each(Segment::Special(
                allowed.tokens[found.pattern().as_usize()].id,
            ))?;
            rest = found.end();
        }
        if rest < text.len() {
            each(Segment::Text(&text[rest..]))?;
        }
        return Ok(());
    }
    let allowed = allowed.tokens();
    let mut next: Vec<Option<usize>> = allowed.iter().map(|s| text.find(s.text)).collect();
    let mut rest = 0;
    while rest < text.len() {
        for (at, special) in next.iter_mut().zip(allowed) {
            if let Some(found) = *at
                && found < rest
            {
                *at = text[rest..].find(special.text).map(|offset| rest + offset);
            }
        }
        let leftmost = next
            .iter()
            .zip(allowed)
            .filter_map(|(at, special)| at.map(|at| (at, special)))
            .min_by_key(|&(at, special)| (at, std::cmp::Reverse(special.text.len())));
        match leftmost {
            Some((at, special)) => {
                if at > rest {
                    each(Segment::Text(&text[rest..at]))?;
                }
                each(Segment::Special(special.id))?;
                rest = at + special.text.len();
            }
            None => {
                each(Segment::Text(&text[rest..]))?;
                break;
            }
        }
    }
    Ok(())
}

/// The first occurrence in `text` of any of `disallowed` (the longest where two start at the same
/// byte): the token and its byte offset.
pub fn find_disallowed_special<'s>(
    text: &str,
    disallowed: &'s SpecialSet,
) -> Option<(&'s SpecialToken, usize)> {
    disallowed.first(text)
}

/// The error for a text that contains a disallowed special token, naming the first one and where
/// it starts, in UTF-16 code units (a JS string's index).
#[cold]
pub(super) fn refuse_disallowed(text: &str, disallowed: &SpecialSet) -> Result<(), Error> {
    let Some((token, at)) = find_disallowed_special(text, disallowed) else {
        return Ok(());
    };
    let index = text[..at].encode_utf16().count();
    let message = format!(
        "the text contains the disallowed special token {:?} at index {index}; pass it in \
         allowedSpecial to encode it as its id, or leave it out of disallowedSpecial to encode it \
         as ordinary text",
        token.text
    );
    let token = DisallowedToken {
        text: token.text.to_string(),
        index,
    };
    Err(Error::disallowed(token, message))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECIALS: &[SpecialToken] = &[
        SpecialToken {
            text: "<|endoftext|>",
            id: 100,
        },
        SpecialToken {
            text: "<|fim_prefix|>",
            id: 101,
        },
    ];

    /// The segments of `text` cut at `allowed`, which both ways of searching give alike.
    fn cut<'t>(text: &'t str, allowed: &[SpecialToken]) -> Vec<Segment<'t>> {
        let one_by_one = SpecialSet {
            tokens: allowed.into(),
            automaton: None,
        };
        let automaton = SpecialSet {
            tokens: allowed.into(),
            automaton: automaton_of(allowed),
        };
        let [by_token, by_automaton] = [one_by_one, automaton].map(|set| {
            let mut out = Vec::new();
            for_each_segment::<()>(text, &set, |s| {
                out.push(s);
                Ok(())
            })
            .unwrap();
            (
                out,
                find_disallowed_special(text, &set).map(|(t, at)| (t.id, at)),
            )
        });
        assert_eq!(by_token, by_automaton, "{text:?}");
        by_token.0
    }

    #[test]
    fn the_longest_of_tokens_that_start_together_is_cut() {
        const NESTED: &[SpecialToken] = &[
            SpecialToken {
                text: "<|a|>",
                id: 1,
            },
            SpecialToken {
                text: "<|a|>b",
                id: 2,
            },
            SpecialToken {
                text: "|>b<",
                id: 3,
            },
        ];
        assert_eq!(
            cut("x<|a|>b<|a|>", NESTED),
            vec![Segment::Text("x"), Segment::Special(2), Segment::Special(1)]
        );
        assert_eq!(
            cut("|>b<|a|", NESTED),
            vec![Segment::Special(3), Segment::Text("|a|")]
        );
    }

    #[test]
    fn cuts_at_allowed_specials_only() {
        let only_eot = resolve(
            &AllowedSpecial::Only(vec!["<|endoftext|>".into()]),
            SPECIALS,
        )
        .unwrap();
        assert_eq!(
            cut("a<|fim_prefix|>b<|endoftext|><|endoftext|>c", &only_eot),
            vec![
                Segment::Text("a<|fim_prefix|>b"),
                Segment::Special(100),
                Segment::Special(100),
                Segment::Text("c"),
            ]
        );
    }

    #[test]
    fn overlapping_and_repeated_occurrences_are_cut_leftmost_first() {
        let all = resolve(&AllowedSpecial::All, SPECIALS).unwrap();
        let text = "<|endoftext|>".repeat(1000) + "x<|fim_prefix|>";
        let segments = cut(&text, &all);
        assert_eq!(segments.len(), 1002);
        assert!(segments[..1000].iter().all(|s| *s == Segment::Special(100)));
        assert_eq!(
            segments[1000..],
            [Segment::Text("x"), Segment::Special(101)]
        );
        // A candidate inside a token already cut is not taken.
        assert_eq!(
            cut("<|<|endoftext|>|>", &all),
            vec![
                Segment::Text("<|"),
                Segment::Special(100),
                Segment::Text("|>")
            ]
        );
    }

    #[test]
    fn no_allowed_specials_leaves_the_text_whole() {
        assert_eq!(
            cut("x<|endoftext|>", &[]),
            vec![Segment::Text("x<|endoftext|>")]
        );
        assert!(cut("", SPECIALS).is_empty());
    }

    #[test]
    fn unknown_names_are_refused_with_the_valid_ones() {
        let err = resolve(&AllowedSpecial::Only(vec!["<|nope|>".into()]), SPECIALS).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidOption);
        assert!(err.message().contains("<|endoftext|>, <|fim_prefix|>"));
    }

    #[test]
    fn a_disallowed_token_is_named_where_it_starts_in_utf16_units() {
        let all = SpecialSet::new(SPECIALS.to_vec());
        assert_eq!(refuse_disallowed("plain <|fim_prefix text", &all), Ok(()));
        // "é" is one UTF-16 unit and two bytes, "😀" two units and four bytes.
        let err = refuse_disallowed("é😀 <|fim_prefix|><|endoftext|>", &all).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Disallowed);
        assert_eq!(
            err.disallowed_token(),
            Some(&DisallowedToken {
                text: "<|fim_prefix|>".into(),
                index: 4,
            })
        );
        assert!(err.message().contains("\"<|fim_prefix|>\" at index 4"));
    }
}
