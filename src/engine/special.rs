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
        AllowedSpecial::Only(names) => {
            for name in names {
                if !specials.iter().any(|s| s.text == name) {
                    let known: Vec<&str> = specials.iter().map(|s| s.text).collect();
                    return Err(Error::new(
                        ErrorKind::InvalidOption,
                        format!(
                            "allowedSpecial names {name:?}, which is not a special token of this \
                             encoding; its special tokens are {}",
                            known.join(", ")
                        ),
                    ));
                }
            }
            Ok(specials
                .iter()
                .filter(|s| names.iter().any(|n| n == s.text))
                .cloned()
                .collect())
        }
    }
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
pub fn for_each_segment<'t, E>(
    text: &'t str,
    allowed: &[SpecialToken],
    mut each: impl FnMut(Segment<'t>) -> Result<(), E>,
) -> Result<(), E> {
    let mut rest = 0;
    while rest < text.len() {
        let next = allowed
            .iter()
            .filter_map(|s| text[rest..].find(s.text).map(|at| (rest + at, s)))
            .min_by_key(|&(at, s)| (at, std::cmp::Reverse(s.text.len())));
        match next {
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
