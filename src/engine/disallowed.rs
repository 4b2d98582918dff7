//! Disallowed special tokens, as tiktoken's `encode(text, disallowed_special=...)` refuses them.
//!
//! batchtok's default is tiktoken's `disallowed_special=()`: special-token text that is not
//! allowed is ordinary text, so a batch never fails because of what a text contains. A caller who
//! wants tiktoken's check names the disallowed tokens: `All` is every special token of the
//! encoding that is not allowed (tiktoken's `"all"`, its default), a list names them. As in
//! tiktoken, an explicitly disallowed token is refused even where it is also allowed: the check
//! runs before the encoding. The text's first occurrence is reported (the longest where two start
//! at the same byte), with its byte offset.

use super::special::{self, AllowedSpecial, SpecialSet, SpecialToken};
use super::{Error, ErrorKind, Family, Tokenizer};

impl Tokenizer {
    /// The special tokens that `disallowed` names, given the `allowed` ones, in the encoding's
    /// order: `AllowedSpecial::All` stands for every special token that is not allowed, `None`
    /// for none. A name the encoding does not have is an error listing the ones it has; a
    /// Hugging Face tokenizer accepts only `None`.
    pub fn disallowed_special(
        &self,
        allowed: &AllowedSpecial,
        disallowed: &AllowedSpecial,
    ) -> Result<SpecialSet, Error> {
        let encoding = match self.family() {
            Family::OpenAi(encoding) => encoding,
            Family::HuggingFace if *disallowed == AllowedSpecial::None => {
                return Ok(SpecialSet::default());
            }
            Family::HuggingFace => {
                return Err(Error::new(
                    ErrorKind::InvalidOption,
                    "disallowedSpecial applies to the OpenAI encodings; a Hugging Face tokenizer \
                     turns its added tokens into ids, or encodes their text as ordinary text \
                     when asked to",
                ));
            }
        };
        let specials = encoding.specials();
        let tokens = match (disallowed, allowed) {
            (AllowedSpecial::None, _) => return Ok(SpecialSet::default()),
            // Every special token: the encoding's set, whose automaton is built once.
            (AllowedSpecial::All, AllowedSpecial::None) => return Ok(encoding.special_set()),
            (AllowedSpecial::All, _) => {
                let is_allowed = |s: &SpecialToken| match allowed {
                    AllowedSpecial::None => false,
                    AllowedSpecial::All => true,
                    AllowedSpecial::Only(names) => names.iter().any(|n| n == s.text),
                };
                specials
                    .iter()
                    .filter(|s| !is_allowed(s))
                    .cloned()
                    .collect()
            }
            (AllowedSpecial::Only(names), _) => {
                special::named("disallowedSpecial", names, specials)?
            }
        };
        Ok(SpecialSet::new(tokens))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::special::find_disallowed_special;

    fn names(set: &SpecialSet) -> Vec<&'static str> {
        set.tokens().iter().map(|s| s.text).collect()
    }

    #[test]
    fn all_means_every_special_token_not_allowed() {
        let cl100k = Tokenizer::from_encoding("cl100k_base").unwrap();
        let all = AllowedSpecial::All;
        let every = names(
            &cl100k
                .disallowed_special(&AllowedSpecial::None, &all)
                .unwrap(),
        );
        assert_eq!(every.len(), 5);
        let allowed = AllowedSpecial::Only(vec!["<|endoftext|>".into()]);
        let rest = names(&cl100k.disallowed_special(&allowed, &all).unwrap());
        assert_eq!(rest, &every[1..]);
        assert!(cl100k.disallowed_special(&all, &all).unwrap().is_empty());
        // An explicit list is taken as it is, even where it names an allowed token.
        let listed = AllowedSpecial::Only(vec!["<|endoftext|>".into()]);
        let explicit = cl100k.disallowed_special(&all, &listed).unwrap();
        assert_eq!(names(&explicit), ["<|endoftext|>"]);
        assert!(
            cl100k
                .disallowed_special(&all, &AllowedSpecial::None)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn the_first_occurrence_is_found_with_its_byte_offset() {
        let o200k = Tokenizer::from_encoding("o200k_base").unwrap();
        let disallowed = o200k
            .disallowed_special(&AllowedSpecial::None, &AllowedSpecial::All)
            .unwrap();
        let text = "héllo <|endofprompt|> and <|endoftext|>";
        let (token, at) = find_disallowed_special(text, &disallowed).unwrap();
        assert_eq!((token.text, at), ("<|endofprompt|>", 7));
        assert!(find_disallowed_special("<|endoftext|", &disallowed).is_none());
        assert!(find_disallowed_special(text, &SpecialSet::default()).is_none());
    }

    #[test]
    fn unknown_names_and_hugging_face_tokenizers_are_refused() {
        let r50k = Tokenizer::from_encoding("r50k_base").unwrap();
        let unknown = AllowedSpecial::Only(vec!["<|im_start|>".into()]);
        let error = r50k
            .disallowed_special(&AllowedSpecial::None, &unknown)
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidOption);
        assert!(
            error
                .message()
                .contains("disallowedSpecial names \"<|im_start|>\"")
        );
        assert!(error.message().contains("<|endoftext|>"));
        let bert = super::super::test_fixtures::fixture_tokenizer("bert");
        let error = bert
            .disallowed_special(&AllowedSpecial::None, &AllowedSpecial::All)
            .unwrap_err();
        assert!(error.message().contains("OpenAI encodings"));
    }

    #[test]
    fn special_text_as_ordinary_text_is_python_tokenizers_encode_special_tokens() {
        use super::super::test_fixtures::{fixture_json, fixture_texts, fixture_tokenizer};
        let fixture = fixture_json("hf-special.json");
        let texts = fixture_texts();
        for (name, row) in fixture["tokenizers"].as_object().unwrap() {
            let tokenizer = fixture_tokenizer(name);
            let cases = row["cases"].as_array().unwrap();
            assert!(!cases.is_empty(), "{name}");
            for ordinary in [false, true] {
                let mode = tokenizer
                    .encode_mode(Some(false), &AllowedSpecial::None)
                    .unwrap()
                    .with_special_text_as_ordinary(ordinary);
                let expected = &row[if ordinary { "ordinary" } else { "split" }];
                for (i, case) in cases.iter().enumerate() {
                    let text = &texts[case.as_u64().unwrap() as usize];
                    let ids: Vec<u64> = tokenizer
                        .encode(text, &mode)
                        .unwrap()
                        .as_slice()
                        .iter()
                        .map(|&id| u64::from(id))
                        .collect();
                    let want: Vec<u64> = serde_json::from_value(expected[i].clone()).unwrap();
                    assert_eq!(ids, want, "{name}, ordinary {ordinary}: {text:?}");
                }
            }
        }
    }
}
