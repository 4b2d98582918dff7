//! Special-token text in the OpenAI family: which special tokens a call allows, and cutting a text
//! at them.
//!
//! tiktoken's `encode_ordinary` encodes special-token text such as `<|endoftext|>` as ordinary text;
//! `encode(text, allowed_special=...)` emits the special id for each allowed one it finds, scanning
//! for the leftmost occurrence. batchtok defaults to the former, so a batch never fails because of
//! what its texts contain, and never throws for a special that is not allowed: that text is
//! ordinary text (tiktoken's `disallowed_special=()`).

use super::{Error, ErrorKind};

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
/// Each token's next occurrence is remembered and searched again only once the cut has passed
/// it, so every token's search moves forward through the text once: linear in the text's length
/// times the number of allowed tokens, however many occurrences there are.
pub fn for_each_segment<'t, E>(
    text: &'t str,
    allowed: &[SpecialToken],
    mut each: impl FnMut(Segment<'t>) -> Result<(), E>,
) -> Result<(), E> {
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
    disallowed: &'s [SpecialToken],
) -> Option<(&'s SpecialToken, usize)> {
    disallowed
        .iter()
        .filter_map(|special| text.find(special.text).map(|at| (special, at)))
        .min_by_key(|&(special, at)| (at, std::cmp::Reverse(special.text.len())))
}

/// The error for a text that contains a disallowed special token, naming the first one and where
/// it starts, in UTF-16 code units (a JS string's index).
#[cold]
pub(super) fn refuse_disallowed(text: &str, disallowed: &[SpecialToken]) -> Result<(), Error> {
    let Some((token, at)) = find_disallowed_special(text, disallowed) else {
        return Ok(());
    };
    let index = text[..at].encode_utf16().count();
    Err(Error::new(
        ErrorKind::Disallowed,
        format!(
            "the text contains the disallowed special token {:?} at index {index}; pass it in \
             allowedSpecial to encode it as its id, or leave disallowedSpecial out to encode it as \
             ordinary text",
            token.text
        ),
    ))
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

    fn cut<'t>(text: &'t str, allowed: &[SpecialToken]) -> Vec<Segment<'t>> {
        let mut out = Vec::new();
        for_each_segment::<()>(text, allowed, |s| {
            out.push(s);
            Ok(())
        })
        .unwrap();
        out
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
}
