//! transformers' `clean_up_tokenization`: the spaces before punctuation and English contractions
//! that word-level tokenizers of old left in decoded text, taken out.
//!
//! Python transformers and transformers.js apply it in `decode` where the model's
//! `tokenizer_config.json` sets `clean_up_tokenization_spaces` (Llama 3's and 3.1's do;
//! transformers.js also where the key is missing). The `tokenizers` library, whose `decode`
//! batchtok's follows, never does. The replacements are transformers' own, in its order, each
//! over the whole text before the next, as Python's `str.replace` makes them.

use super::{Error, Tokenizer};

/// Each space-and-text transformers replaces, and what with, in the order it replaces them.
const REPLACEMENTS: [(&str, &str); 10] = [
    (" .", "."),
    (" ?", "?"),
    (" !", "!"),
    (" ,", ","),
    (" ' ", "'"),
    (" n't", "n't"),
    (" 'm", "'m"),
    (" 's", "'s"),
    (" 've", "'ve"),
    (" 're", "'re"),
];

impl Tokenizer {
    /// [`decode`](Self::decode), with transformers' `clean_up_tokenization` applied where
    /// `clean_up_spaces`.
    pub fn decode_cleaned(
        &self,
        ids: &[u32],
        skip_special_tokens: bool,
        clean_up_spaces: bool,
    ) -> Result<String, Error> {
        let text = self.decode(ids, skip_special_tokens)?;
        Ok(if clean_up_spaces {
            clean_up_tokenization_spaces(text)
        } else {
            text
        })
    }
}

/// `text` with transformers' `clean_up_tokenization` applied.
fn clean_up_tokenization_spaces(mut text: String) -> String {
    for (from, to) in REPLACEMENTS {
        if text.contains(from) {
            text = text.replace(from, to);
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_replacement_runs_over_the_whole_text_in_order() {
        let clean = |text: &str| clean_up_tokenization_spaces(text.to_owned());
        assert_eq!(
            clean("Hello , world . Yes ? No !"),
            "Hello, world. Yes? No!"
        );
        assert_eq!(
            clean("I do n't think it 's what we 're after"),
            "I don't think it's what we're after"
        );
        // " ' " goes first, so " ' s" loses its first space and keeps the second.
        assert_eq!(clean("a ' s"), "a's");
        // The replacements do not overlap and are not repeated: "  ." keeps one space.
        assert_eq!(clean("x  ."), "x .");
        assert_eq!(clean("unchanged text"), "unchanged text");
    }
}
