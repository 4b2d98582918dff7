//! Whether a tokenizer tells a symbol from an unassigned code point.
//!
//! The release candidate reads a symbol Unicode 17.0 adds as a symbol; the references (Unicode
//! 16.0) read it as an unassigned code point. The two readings cut and normalize a text alike
//! unless something in the tokenizer looks at a class that holds one and not the other:
//!
//! - a pattern (a `Split` pre-tokenizer's, a `Replace` normalizer's, a rank file's) is read
//!   alike when every Unicode class it names is a general category of letters, marks, numbers,
//!   punctuation or separators (none holds a symbol or an unassigned code point), or `\w`, `\s`,
//!   `\d` and their negations. Anything else counts as telling them apart: `\p{S}`, `\p{Cn}`,
//!   scripts (a new symbol belongs to one, an unassigned code point to none), POSIX classes,
//!   grapheme clusters (`\X`), a name this module does not know;
//! - a component is read alike when it looks only at such classes, at fixed code points, or at
//!   decomposition and case, which the new symbols lack (the generator keeps only those with no
//!   decomposition and combining class 0; `unicode_drift`'s tests check that none has a case
//!   mapping or a letter, number or space class): the byte-level, Metaspace, whitespace,
//!   punctuation, digit and BERT pre-tokenizers, and the Unicode, case, strip, BERT, NMT,
//!   SentencePiece-table and prepend normalizers. `UnicodeScripts` and any component this module
//!   does not know tell them apart.
//!
//! `unicode_probe_new_symbols_read_alike` in `differential.rs` holds the release candidate equal
//! to the stable crate on every new symbol, unrouted, in tokenizers of each such kind.

use serde_json::Value;

/// Unicode classes that hold neither a symbol nor an unassigned code point, as the pattern
/// readers take their names once lowercased and stripped of spaces, `_` and `-`: the general
/// categories of letters, marks, numbers, punctuation and separators, and `White_Space`.
const READ_ALIKE_CLASSES: &[&str] = &[
    "l",
    "letter",
    "lc",
    "l&",
    "casedletter",
    "lu",
    "uppercaseletter",
    "ll",
    "lowercaseletter",
    "lt",
    "titlecaseletter",
    "lm",
    "modifierletter",
    "lo",
    "otherletter",
    "m",
    "mark",
    "combiningmark",
    "mn",
    "nonspacingmark",
    "mc",
    "spacingmark",
    "me",
    "enclosingmark",
    "n",
    "number",
    "nd",
    "decimalnumber",
    "nl",
    "letternumber",
    "no",
    "othernumber",
    "p",
    "punctuation",
    "pc",
    "connectorpunctuation",
    "pd",
    "dashpunctuation",
    "ps",
    "openpunctuation",
    "pe",
    "closepunctuation",
    "pi",
    "initialpunctuation",
    "pf",
    "finalpunctuation",
    "po",
    "otherpunctuation",
    "z",
    "separator",
    "zs",
    "spaceseparator",
    "zl",
    "lineseparator",
    "zp",
    "paragraphseparator",
    "whitespace",
];

/// Components of a tokenizer.json (by `type`) that read a new symbol as an unassigned code point
/// (see the module's docs); `Split`, `Replace` and `Sequence` are decided by what they hold.
const READ_ALIKE_COMPONENTS: &[&str] = &[
    // Pre-tokenizers.
    "ByteLevel",
    "Metaspace",
    "Whitespace",
    "WhitespaceSplit",
    "BertPreTokenizer",
    "Punctuation",
    "Digits",
    "CharDelimiterSplit",
    // Normalizers.
    "NFC",
    "NFD",
    "NFKC",
    "NFKD",
    "Lowercase",
    "Strip",
    "StripAccents",
    "Prepend",
    "BertNormalizer",
    "Nmt",
    "Precompiled",
];

/// Whether `pattern` (Oniguruma's or `fancy-regex`'s syntax) tells a symbol from an unassigned
/// code point: it names a Unicode class other than those of [`READ_ALIKE_CLASSES`], a POSIX
/// class, or a grapheme construct.
pub fn pattern_tells_apart(pattern: &str) -> bool {
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('p' | 'P') => {
                    let name: String = if chars.peek() == Some(&'{') {
                        chars.next();
                        chars.by_ref().take_while(|&c| c != '}').collect()
                    } else {
                        chars.next().into_iter().collect()
                    };
                    if !class_read_alike(&name) {
                        return true;
                    }
                }
                // Grapheme clusters and their boundaries (Oniguruma).
                Some('X' | 'y' | 'Y') => return true,
                // Any other escape stands for one character or a class read alike.
                _ => {}
            },
            '[' if chars.peek() == Some(&':') => return true,
            _ => {}
        }
    }
    false
}

/// Whether the class named `name` (as written between `\p{` and `}`) is one of
/// [`READ_ALIKE_CLASSES`], negated (`^`) or given as `gc=`.
fn class_read_alike(name: &str) -> bool {
    let name: String = name
        .trim_start_matches('^')
        .chars()
        .filter(|c| !matches!(c, ' ' | '_' | '-'))
        .flat_map(char::to_lowercase)
        .collect();
    let name = ["gc=", "gc:", "generalcategory=", "generalcategory:"]
        .iter()
        .find_map(|prefix| name.strip_prefix(prefix))
        .unwrap_or(&name);
    READ_ALIKE_CLASSES.contains(&name)
}

/// Whether the tokenizer.json `file` tells a symbol from an unassigned code point in its
/// normalizer or its pre-tokenizer (the model looks only at the strings of its vocabulary).
pub fn file_tells_apart(file: &Value) -> bool {
    component_tells_apart(&file["normalizer"]) || component_tells_apart(&file["pre_tokenizer"])
}

/// Whether one normalizer or pre-tokenizer (or a `Sequence` of them) tells a symbol from an
/// unassigned code point; a shape this module does not know does.
fn component_tells_apart(component: &Value) -> bool {
    let Value::Object(fields) = component else {
        return !component.is_null();
    };
    match fields.get("type").and_then(Value::as_str) {
        Some("Sequence") => ["normalizers", "pretokenizers"]
            .iter()
            .filter_map(|key| fields.get(*key))
            .any(|list| {
                list.as_array()
                    .is_none_or(|items| items.iter().any(component_tells_apart))
            }),
        Some("Split" | "Replace") => match fields.get("pattern") {
            Some(Value::Object(pattern)) => match (pattern.get("String"), pattern.get("Regex")) {
                (Some(Value::String(_)), None) => false,
                (None, Some(Value::String(regex))) => pattern_tells_apart(regex),
                _ => true,
            },
            _ => true,
        },
        Some(kind) => !READ_ALIKE_COMPONENTS.contains(&kind),
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// GPT-2's and Llama 3's patterns (the OpenAI encodings' are checked in `openai.rs`), the
    /// `Whitespace` pre-tokenizer's, DeepSeek V3's literal CJK ranges, and the spellings of the
    /// classes read alike.
    #[test]
    fn the_common_patterns_read_symbols_alike() {
        for pattern in [
            r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
            r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
            r"\w+|[^\w\s]+",
            r"[一-龥぀-ゟ゠-ヿ]+",
            r"\pL+|\PL+|\p{^N}|\p{gc=Lu}|\p{Decimal_Number}|\p{white space}",
            // A backslash, then a literal `p{S}`.
            r"\\p{S}",
        ] {
            assert!(!pattern_tells_apart(pattern), "{pattern}");
        }
    }

    #[test]
    fn symbol_script_and_posix_classes_tell_symbols_apart() {
        for pattern in [
            r"[\p{P}\p{S}]+",
            r"\p{So}",
            r"\P{Cn}",
            r"\p{Assigned}",
            r"\p{Han}+",
            r"\p{Common}",
            r"\p{Emoji}",
            r"[[:punct:]]",
            r"\X",
            r"\p{Unknown}",
            r"\p{Alphabetic}",
        ] {
            assert!(pattern_tells_apart(pattern), "{pattern}");
        }
    }

    #[test]
    fn files_are_read_component_by_component() {
        let split = |regex: &str| json!({ "type": "Split", "pattern": { "Regex": regex } });
        let alike = json!({
            "normalizer": { "type": "Sequence", "normalizers": [
                { "type": "NFKC" },
                { "type": "Replace", "pattern": { "String": " " }, "content": "▁" },
            ] },
            "pre_tokenizer": { "type": "Sequence", "pretokenizers": [
                split(r"\p{N}{1,3}"),
                { "type": "ByteLevel", "add_prefix_space": false },
            ] },
        });
        assert!(!file_tells_apart(&alike));
        assert!(!file_tells_apart(
            &json!({ "normalizer": null, "pre_tokenizer": null })
        ));
        for pre_tokenizer in [
            split(r"[\p{P}\p{S}]+"),
            json!({ "type": "UnicodeScripts" }),
            json!({ "type": "SomethingNew" }),
            json!({ "type": "Sequence", "pretokenizers": [{ "type": "UnicodeScripts" }] }),
            json!({ "type": "Split", "pattern": 3 }),
            json!({ "pretokenizers": [] }),
        ] {
            let file = json!({ "normalizer": null, "pre_tokenizer": pre_tokenizer });
            assert!(file_tells_apart(&file), "{file}");
        }
        let replace = json!({ "normalizer": { "type": "Replace", "pattern": { "Regex": r"\p{S}" }, "content": "" } });
        assert!(file_tells_apart(&replace));
    }
}
