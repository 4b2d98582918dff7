//! Equivalent forms of files the release candidate refuses as written.
//!
//! Some tokenizer.json files use a shape the release candidate does not read, where the
//! reference's behaviour is one it runs under another spelling. [`for_release_candidate`] rewrites
//! the parsed file handed to the release candidate (never the file the stable engine, the
//! outline or `decode` read) so that it encodes every text as the reference does, and says what it
//! rewrote. Each rewrite states below why the two forms give the same ids for every text; the
//! differential tests (`differential.rs`) check them over the corpora and seeded random texts.
//!
//! - **Byte fallback with byte tokens missing.** A SentencePiece-style BPE declares
//!   `byte_fallback`, and its vocabulary lacks some `<0xXX>` tokens (Gemini's lacks `<0x09>`,
//!   since it holds the tab itself). The release candidate needs all 256 at load. The reference
//!   falls back to bytes only for a character that is not in the vocabulary, and uses the byte
//!   tokens only where every byte of that character has one (else the unknown token). A byte
//!   below 0x80 is the whole UTF-8 form of one character, so where that character is itself a
//!   token, the reference never looks up its byte token: adding the missing `<0xXX>` under fresh
//!   ids past the file's largest changes no text's ids. It applies only where every missing byte
//!   is such a byte, and where nothing else can reach the added tokens: no
//!   `continuing_subword_prefix` or `end_of_word_suffix` (they change what is looked up for a
//!   character), and no `ignore_merges` (which looks a whole word up in the vocabulary).
//! - **`ByteLevel` with `add_prefix_space`.** GPT-2 style files (RoBERTa's) set it on the
//!   `ByteLevel` pre-tokenizer, which the release candidate refuses. The reference adds a space
//!   before each piece of normalized text between added tokens that does not start with one, then
//!   splits and maps bytes. The release candidate's `MetaspaceNormalizer` (the form its own upgrade
//!   pass gives a `Metaspace` pre-tokenizer) with the space itself as replacement and
//!   `prepend: "always"` does exactly that first step when it is the last normalizer: it replaces
//!   spaces with spaces, and prepends a space to each piece that does not start with one. It
//!   applies where the `ByteLevel` is the whole pre-tokenizer (inside a `Sequence`, the space goes
//!   before each piece an earlier member cut) and no added token is matched in the normalized text
//!   (one would be cut out after the normalizer has prepended the space).
//! - **A `Sequence` of one pre-tokenizer.** transformers' DeBERTa-v2 converter writes its
//!   `Metaspace` as the only member of a `Sequence`, which the release candidate's reader refuses
//!   (it reads a `Metaspace` on its own, or after a `WhitespaceSplit`). A `Sequence` runs its
//!   members in turn, each on the pieces the one before cut; with one member, that member runs on
//!   the whole text, as it does on its own. Applied first, so the rewrite above can then apply to
//!   a lone `ByteLevel` it unwraps.
//! - **cl100k_base's regex with another digit rule.** The release candidate recognises
//!   cl100k_base's regex with any of `\p{N}{1,3}`, `\p{N}{1,2}`, `\p{N}` (Qwen's) and `\p{N}+` as
//!   its digit rule, and runs the first two and the last on one matcher that cuts digit runs in
//!   threes (the differential fuzz: `"1224"`, one piece by `\p{N}+`, came out as `"122"` and
//!   `"4"`). Such a regex with `\p{N}{1,2}` or `\p{N}+` is put in a non-capturing group, as
//!   Kimi's is behind a normalizer (below): a refusal, which sends the file to the stable engine.
//! - **Kimi K2's regex.** The release candidate runs this `Split` regex on a matcher of its own,
//!   which cuts the Han numerals (`〇`, the Hangzhou numerals) and the CJK radicals otherwise than
//!   the regex does (the differential fuzz, on the GPT-2 fixture split by it: `"𐒠〇71"`), and
//!   every other text as the regex does (the sweep). Where the regex sees the text as given (the
//!   file has no normalizer, which could make such characters), the file is read as written and
//!   [`Adapted::kimi_drift`] says so: the route sends the texts holding one of those characters to
//!   the stable engine (`routing.rs`, `unicode_drift::KIMI_DRIFT`). Behind a normalizer
//!   the regex is put in a non-capturing group, which the release candidate does not run natively:
//!   not an equivalent form but a refusal, so the route sends the file to the stable engine, which
//!   runs it on Oniguruma as the reference does.

use serde_json::{Map, Value, json};

use super::openai::{CL100K_PATTERN, KIMI_PATTERN};

/// What [`for_release_candidate`] did to a file.
#[derive(Debug, Default)]
pub struct Adapted {
    /// What was rewritten, in words (empty: nothing).
    pub how: Vec<String>,
    /// The file splits the text as given by Kimi K2's regex, which the release candidate runs on
    /// its own matcher: the texts holding a character of `unicode_drift::KIMI_DRIFT` must go to
    /// the stable engine.
    pub kimi_drift: bool,
}

/// Rewrites `file`, a tokenizer.json the release candidate is about to read, into an equivalent
/// form it reads, where one is known, and says what it did. `largest_id` is the largest id the
/// file declares, model and added tokens together.
pub fn for_release_candidate(file: &mut Value, largest_id: u32) -> Adapted {
    let mut adapted = Adapted::default();
    if let Some(why) = unwrap_lone_pre_tokenizer(file) {
        adapted.how.push(why);
    }
    if let Some(why) = add_missing_byte_tokens(file, largest_id) {
        adapted.how.push(why);
    }
    if let Some(why) = spell_out_prefix_space(file) {
        adapted.how.push(why);
    }
    if let Some(why) = group_digit_rules_run_in_threes(file) {
        adapted.how.push(why);
    }
    match kimi_regex(file) {
        KimiRegex::Absent => {}
        KimiRegex::OnRawText => adapted.kimi_drift = true,
        KimiRegex::Grouped(why) => adapted.how.push(why),
    }
    adapted
}

/// Whether and how a file splits by Kimi K2's regex (see the module doc).
enum KimiRegex {
    /// No `Split` of the pre-tokenizer has it.
    Absent,
    /// A `Split` has it, and the file has no normalizer: read as written.
    OnRawText,
    /// A `Split` has it behind a normalizer: grouped, for this reason.
    Grouped(String),
}

/// The regexes of the pre-tokenizer's `Split`s, or of its `Sequence`'s.
fn split_regexes(file: &mut Value) -> Vec<&mut Value> {
    let Some(pre_tokenizer) = file.get_mut("pre_tokenizer") else {
        return Vec::new();
    };
    let members: Vec<&mut Value> = match pre_tokenizer.get("type").and_then(Value::as_str) {
        Some("Sequence") => match pre_tokenizer
            .get_mut("pretokenizers")
            .and_then(Value::as_array_mut)
        {
            Some(members) => members.iter_mut().collect(),
            None => return Vec::new(),
        },
        _ => vec![pre_tokenizer],
    };
    members
        .into_iter()
        .filter(|member| member.get("type").and_then(Value::as_str) == Some("Split"))
        .filter_map(|member| member.pointer_mut("/pattern/Regex"))
        .collect()
}

/// The Kimi step (see the module doc), where a `Split` of the pre-tokenizer, or of its
/// `Sequence`, has that regex.
fn kimi_regex(file: &mut Value) -> KimiRegex {
    let normalized = file.get("normalizer").is_some_and(|n| !n.is_null());
    let mut found = false;
    for regex in split_regexes(file) {
        if regex.as_str() == Some(KIMI_PATTERN) {
            found = true;
            if normalized {
                *regex = Value::String(format!("(?:{KIMI_PATTERN})"));
            }
        }
    }
    match (found, normalized) {
        (false, _) => KimiRegex::Absent,
        (true, false) => KimiRegex::OnRawText,
        (true, true) => KimiRegex::Grouped(
            "Kimi K2's Split regex, behind a normalizer, is grouped, so that the release \
             candidate's matcher for it, which cuts Han numerals and radicals otherwise, does not \
             run it"
                .to_owned(),
        ),
    }
}

/// cl100k_base's digit rule.
const CL100K_DIGITS: &str = r"\p{N}{1,3}";

/// The digit rules of cl100k_base's family the release candidate recognises but runs as
/// [`CL100K_DIGITS`].
const DIGITS_RUN_IN_THREES: [&str; 2] = [r"\p{N}{1,2}", r"\p{N}+"];

/// The digit rule of `pattern`, where it is cl100k_base's regex with some digit rule: the family
/// the release candidate recognises.
fn cl100k_digit_rule(pattern: &str) -> Option<&str> {
    let (before, after) = CL100K_PATTERN.split_once(CL100K_DIGITS)?;
    pattern.strip_prefix(before)?.strip_suffix(after)
}

/// The digit-rule step (see the module doc): groups each `Split` regex of cl100k_base's family
/// whose digit rule the release candidate runs as another.
fn group_digit_rules_run_in_threes(file: &mut Value) -> Option<String> {
    let mut grouped = Vec::new();
    for regex in split_regexes(file) {
        let Some(pattern) = regex.as_str() else {
            continue;
        };
        if let Some(digits) =
            cl100k_digit_rule(pattern).filter(|digits| DIGITS_RUN_IN_THREES.contains(digits))
        {
            grouped.push(format!("`{digits}`"));
            *regex = Value::String(format!("(?:{pattern})"));
        }
    }
    (!grouped.is_empty()).then(|| {
        format!(
            "a Split regex of cl100k_base's family with the digit rule {} is grouped, so that \
             the release candidate, which recognises it but cuts digit runs in threes, does not \
             run it",
            grouped.join(" and ")
        )
    })
}

/// The lone-member rewrite (see the module doc), where it applies.
fn unwrap_lone_pre_tokenizer(file: &mut Value) -> Option<String> {
    let pre_tokenizer = file.get_mut("pre_tokenizer")?;
    if pre_tokenizer.get("type").and_then(Value::as_str) != Some("Sequence") {
        return None;
    }
    let [member] = pre_tokenizer.get("pretokenizers")?.as_array()?.as_slice() else {
        return None;
    };
    let kind = member.get("type")?.as_str()?.to_owned();
    *pre_tokenizer = member.clone();
    Some(format!(
        "its pre-tokenizer, a Sequence of one {kind}, is read as that {kind}"
    ))
}

/// The byte-fallback rewrite (see the module doc), where it applies.
fn add_missing_byte_tokens(file: &mut Value, largest_id: u32) -> Option<String> {
    let model = file.get_mut("model")?.as_object_mut()?;
    let is_bpe = match model.get("type") {
        Some(kind) => kind.as_str() == Some("BPE"),
        None => model.contains_key("merges"),
    };
    let set = |model: &Map<String, Value>, key: &str| {
        model
            .get(key)
            .is_some_and(|value| !value.is_null() && value != &Value::Bool(false))
    };
    if !is_bpe
        || model.get("byte_fallback") != Some(&Value::Bool(true))
        || set(model, "continuing_subword_prefix")
        || set(model, "end_of_word_suffix")
        || set(model, "ignore_merges")
    {
        return None;
    }
    let vocab = model.get_mut("vocab")?.as_object_mut()?;
    let missing: Vec<u8> = (0..=u8::MAX)
        .filter(|byte| !vocab.contains_key(&byte_token(*byte)))
        .collect();
    if missing.is_empty() {
        return None;
    }
    let reachable =
        |byte: &u8| !byte.is_ascii() || !vocab.contains_key(&char::from(*byte).to_string());
    if missing.iter().any(reachable) {
        return None;
    }
    // Every check is made before the file changes, so that it is rewritten whole or not at all.
    let first_id = largest_id.checked_add(1)?;
    first_id.checked_add(missing.len() as u32)?;
    for (&byte, id) in missing.iter().zip(first_id..) {
        vocab.insert(byte_token(byte), json!(id));
    }
    let names: Vec<String> = missing.iter().map(|&byte| byte_token(byte)).collect();
    Some(format!(
        "the byte-fallback tokens {} it lacks are added under unused ids; the reference never \
         reaches them, since the vocabulary holds each of those characters",
        names.join(", ")
    ))
}

/// SentencePiece's name of a byte's token: `<0x09>`.
fn byte_token(byte: u8) -> String {
    format!("<0x{byte:02X}>")
}

/// The `add_prefix_space` rewrite (see the module doc), for a `ByteLevel` pre-tokenizer that is
/// the file's whole pre-tokenizer, in a file whose added tokens are all matched in the text as
/// written. (Inside a `Sequence`, the space goes before each piece the earlier members cut, which
/// no normalizer can do.)
fn spell_out_prefix_space(file: &mut Value) -> Option<String> {
    let file = file.as_object_mut()?;
    let pre_tokenizer = file.get("pre_tokenizer")?;
    if pre_tokenizer.get("type").and_then(Value::as_str) != Some("ByteLevel")
        || pre_tokenizer.get("add_prefix_space") != Some(&Value::Bool(true))
    {
        return None;
    }
    // An added token matched in the normalized text is cut out after the normalizer has run and
    // before the pre-tokenizer does, so a space the normalizer prepended would sit before it.
    let normalized_added_token = file
        .get("added_tokens")
        .and_then(Value::as_array)
        .is_some_and(|added| {
            added
                .iter()
                .any(|token| token.get("normalized") != Some(&Value::Bool(false)))
        });
    if normalized_added_token {
        return None;
    }
    // Every check is made before the file changes, so that it is rewritten whole or not at all.
    file.get_mut("pre_tokenizer")?
        .as_object_mut()?
        .insert("add_prefix_space".to_owned(), Value::Bool(false));
    let prefixer = json!({
        "type": "MetaspaceNormalizer",
        "replacement": " ",
        "prepend": "always",
        "drop_whitespace": false,
    });
    let normalizer = file.entry("normalizer").or_insert(Value::Null);
    *normalizer = match normalizer.take() {
        Value::Null => prefixer,
        Value::Object(mut sequence)
            if sequence.get("type").and_then(Value::as_str) == Some("Sequence")
                && sequence.get("normalizers").is_some_and(Value::is_array) =>
        {
            if let Some(Value::Array(members)) = sequence.get_mut("normalizers") {
                members.push(prefixer);
            }
            Value::Object(sequence)
        }
        declared => json!({"type": "Sequence", "normalizers": [declared, prefixer]}),
    };
    Some(
        "its ByteLevel pre-tokenizer's add_prefix_space is spelled as a last normalizer that \
         prepends a space"
            .to_owned(),
    )
}
