//! Finding a file's added tokens in the text as written, with one automaton.
//!
//! The release candidate looks for added tokens with a literal matcher that checks each candidate
//! position against its vocabulary store; on files whose added tokens include a line feed or a
//! tab (Gemma 3, Gemini: `\n`, `\n\n`, ... are added tokens), a candidate comes every line, and
//! the search cost about a quarter of the encode. An Aho-Corasick automaton over the same tokens
//! finds the same matches in one pass.
//!
//! The matches are the reference's (`tokenizers` 0.23's `AddedVocabulary`): leftmost-longest and
//! never overlapping, over the tokens matched in the text as written; a special token that the
//! call encodes as text is passed over, and the search goes on after it. [`AddedTokenSearch::of`]
//! takes a file only where that is all there is to it: every added token is matched as written
//! (`normalized: false`), none has `single_word`, `lstrip` or `rstrip`, and no two share a text.

use aho_corasick::{AhoCorasick, MatchKind};
use serde_json::Value;

/// A file's added tokens, ready to be found in raw text.
pub struct AddedTokenSearch {
    automaton: AhoCorasick,
    /// Per pattern of the automaton: the token's id, and whether it is special.
    tokens: Vec<(u32, bool)>,
}

/// A piece of a text: ordinary text, or an added token found in it.
#[derive(Debug, PartialEq)]
pub enum AddedSegment<'t> {
    Text(&'t str),
    Token(u32),
}

impl AddedTokenSearch {
    /// The search for `added_tokens` (a tokenizer.json's `added_tokens` array), where each token is
    /// matched as plain text as written (see the module's docs), each found as the id `id_of` its
    /// text: the engine's. A file's own `id` is what its writer meant, which a reader does not
    /// take (the reference numbers the tokens after the model's vocabulary, or as the model's
    /// token of the same text).
    pub fn of(
        added_tokens: &Value,
        id_of: impl Fn(&str) -> Option<u32>,
    ) -> Option<AddedTokenSearch> {
        let mut patterns = Vec::new();
        let mut tokens = Vec::new();
        for token in added_tokens.as_array()? {
            let flag = |key: &str| token.get(key).and_then(Value::as_bool);
            if flag("normalized") != Some(false)
                || ["single_word", "lstrip", "rstrip"]
                    .into_iter()
                    .any(|key| flag(key) != Some(false))
            {
                return None;
            }
            let content = token.get("content").and_then(Value::as_str)?;
            let id = id_of(content)?;
            if content.is_empty() || patterns.contains(&content) {
                return None;
            }
            patterns.push(content);
            tokens.push((id, flag("special")?));
        }
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&patterns)
            .ok()?;
        Some(AddedTokenSearch { automaton, tokens })
    }

    /// The segments of `text` in order: the added tokens found in it, special ones only where
    /// `split_special` (otherwise they stay in the text around them), and the non-empty text
    /// between them.
    pub fn segments<'t>(
        &'t self,
        text: &'t str,
        split_special: bool,
    ) -> impl Iterator<Item = AddedSegment<'t>> + 't {
        let mut tokens = self
            .automaton
            .find_iter(text)
            .map(|found| (found, self.tokens[found.pattern().as_usize()]))
            .filter(move |&(_, (_, special))| split_special || !special);
        let mut copied = 0;
        let mut pending = None;
        std::iter::from_fn(move || {
            if let Some(id) = pending.take() {
                return Some(AddedSegment::Token(id));
            }
            match tokens.next() {
                Some((found, (id, _))) => {
                    let before = &text[copied..found.start()];
                    copied = found.end();
                    if before.is_empty() {
                        Some(AddedSegment::Token(id))
                    } else {
                        pending = Some(id);
                        Some(AddedSegment::Text(before))
                    }
                }
                None if copied < text.len() => {
                    let rest = &text[copied..];
                    copied = text.len();
                    Some(AddedSegment::Text(rest))
                }
                None => None,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn token(id: u32, content: &str, special: bool) -> Value {
        json!({"id": id, "content": content, "special": special, "normalized": false,
               "single_word": false, "lstrip": false, "rstrip": false})
    }

    /// The search for `tokens`, each numbered as the file declares it.
    fn search_of(tokens: Value) -> Option<AddedTokenSearch> {
        let declared = |content: &str| {
            let token = tokens
                .as_array()?
                .iter()
                .find(|token| token["content"] == content)?;
            u32::try_from(token["id"].as_u64()?).ok()
        };
        AddedTokenSearch::of(&tokens, declared)
    }

    #[test]
    fn finds_the_leftmost_longest_tokens_and_passes_over_specials_it_is_told_to() {
        let search = search_of(json!([
            token(10, "\n", false),
            token(11, "\n\n", false),
            token(12, "<s>", true),
            token(13, "<s>x", false),
        ]))
        .unwrap();
        let segments = |text, split_special| -> Vec<AddedSegment> {
            search.segments(text, split_special).collect()
        };
        use AddedSegment::{Text, Token};
        assert_eq!(
            segments("a\n\n\nb<s>x<s>", true),
            [
                Text("a"),
                Token(11),
                Token(10),
                Text("b"),
                Token(13),
                Token(12)
            ]
        );
        assert_eq!(segments("<s>a<s>", false), [Text("<s>a<s>")]);
        assert_eq!(segments("<s>x\n", false), [Token(13), Token(10)]);
        assert_eq!(segments("", true), []);
    }

    /// A token is found as the engine numbers it, whatever id the file gives it.
    #[test]
    fn finds_each_token_as_the_id_the_engine_gives_it() {
        let tokens = json!([token(1, "<s>", true), token(500, "<x>", false)]);
        let engine_ids = |content: &str| Some(if content == "<s>" { 1 } else { 299 });
        let search = AddedTokenSearch::of(&tokens, engine_ids).unwrap();
        let segments: Vec<AddedSegment> = search.segments("a<x>", true).collect();
        assert_eq!(
            segments,
            [AddedSegment::Text("a"), AddedSegment::Token(299)]
        );
        assert!(AddedTokenSearch::of(&tokens, |_| None).is_none());
    }

    #[test]
    fn takes_only_tokens_matched_as_plain_text() {
        assert!(search_of(json!([])).is_some());
        assert!(search_of(json!([token(1, "<s>", true)])).is_some());
        for (key, value) in [
            ("normalized", json!(true)),
            ("single_word", json!(true)),
            ("lstrip", json!(true)),
            ("rstrip", json!(true)),
            ("content", json!("")),
        ] {
            let mut odd = token(2, "<x>", false);
            odd[key] = value;
            assert!(
                search_of(json!([token(1, "<s>", true), odd])).is_none(),
                "{key}"
            );
        }
        assert!(search_of(json!([token(1, "<s>", true), token(2, "<s>", false)])).is_none());
    }
}
