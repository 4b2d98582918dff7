//! What a model folder says about its tokenizer beyond tokenizer.json: the longest input the model
//! takes, its named special tokens and its chat templates.
//!
//! The files and their precedence are those of Python `transformers` (`from_pretrained` in
//! `tokenization_utils_base.py`, version 5):
//!
//! - `tokenizer_config.json` is the base: `model_max_length`, the named tokens (`bos_token`, ...,
//!   each a string or an added-token object `{"content": ...}`), `additional_special_tokens` (or
//!   its newer name `extra_special_tokens`) and `chat_template` (a string, or a list of
//!   `{"name", "template"}`).
//! - `special_tokens_map.json` is a legacy file: transformers reads it only where
//!   `tokenizer_config.json` has no `added_tokens_decoder`, and then its entries override the
//!   config's.
//! - `chat_template.jinja` (the template named `default`) and `additional_chat_templates/*.jinja`
//!   (named by file), where present, replace every template of `tokenizer_config.json`.
//! - `chat_template.json` (`{"chat_template": ...}`) is the file processors (`AutoProcessor`) keep
//!   their template in; transformers' tokenizers do not read it. It is read here only where no
//!   other file has a template, so that a processor's folder still has one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{Error, ErrorKind};

/// The config file transformers saves beside tokenizer.json.
pub const TOKENIZER_CONFIG_FILE: &str = "tokenizer_config.json";
/// The legacy file of special tokens.
pub const SPECIAL_TOKENS_MAP_FILE: &str = "special_tokens_map.json";
/// The default chat template, as a Jinja file.
pub const CHAT_TEMPLATE_FILE: &str = "chat_template.jinja";
/// The folder of further named templates, one `<name>.jinja` each.
pub const CHAT_TEMPLATE_DIR: &str = "additional_chat_templates";
/// A processor's chat template file.
pub const PROCESSOR_CHAT_TEMPLATE_FILE: &str = "chat_template.json";

/// The name a single unnamed template gets, as transformers names it.
pub const DEFAULT_TEMPLATE: &str = "default";

/// transformers writes "no limit" as `model_max_length` of `int(1e30)` (its `VERY_LARGE_INTEGER`),
/// sometimes `1e30` as a float or other huge values. No model takes anywhere near this many tokens,
/// and values from here up cannot be held exactly by a JS number or a `usize` on every platform,
/// so they read as no limit.
const NO_LIMIT_FROM: f64 = 1e18;

/// A tokenizer's named special tokens, as strings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpecialTokens {
    /// The beginning-of-sequence token.
    pub bos: Option<String>,
    /// The end-of-sequence token.
    pub eos: Option<String>,
    /// The token for what the vocabulary cannot spell.
    pub unk: Option<String>,
    /// The separator between sequences.
    pub sep: Option<String>,
    /// The padding token.
    pub pad: Option<String>,
    /// The classifier token.
    pub cls: Option<String>,
    /// The mask token.
    pub mask: Option<String>,
    /// Further special tokens, in the order the file lists them, without repeats.
    pub additional: Vec<String>,
    /// Special tokens a model names for itself (`extra_special_tokens` as an object, such as a
    /// vision model's `{"image_token": "<image>"}`), keyed by the config's name. transformers
    /// makes each an attribute of the tokenizer and a variable of its chat template.
    pub extra: BTreeMap<String, String>,
}

/// The named fields of [`SpecialTokens`] with their keys in the config files.
const NAMED_TOKENS: [&str; 7] = [
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
];

impl SpecialTokens {
    /// The field for a key of [`NAMED_TOKENS`].
    fn named_mut(&mut self, key: &str) -> &mut Option<String> {
        match key {
            "bos_token" => &mut self.bos,
            "eos_token" => &mut self.eos,
            "unk_token" => &mut self.unk,
            "sep_token" => &mut self.sep,
            "pad_token" => &mut self.pad,
            "cls_token" => &mut self.cls,
            "mask_token" => &mut self.mask,
            _ => unreachable!("a key of NAMED_TOKENS"),
        }
    }

    /// These tokens, with each field that is unset here taken from `fallback` (and `additional`
    /// taken whole from `fallback` where this has none).
    pub fn or(mut self, fallback: &SpecialTokens) -> SpecialTokens {
        for key in NAMED_TOKENS {
            let mut theirs = fallback.clone();
            let field = self.named_mut(key);
            if field.is_none() {
                *field = theirs.named_mut(key).take();
            }
        }
        if self.additional.is_empty() {
            self.additional = fallback.additional.clone();
        }
        for (name, token) in &fallback.extra {
            self.extra
                .entry(name.clone())
                .or_insert_with(|| token.clone());
        }
        self
    }

    /// What a tokenizer.json says of its own special tokens: the padding token
    /// (`padding.pad_token`), the model's unknown token (`unk_token`, or a Unigram model's
    /// `unk_id`), and the classifier and separator tokens of a `BertProcessing` or
    /// `RobertaProcessing` post-processor (also inside a `Sequence`). Anything of another shape is
    /// left unset: this is a reading of hints, never an error.
    pub fn from_tokenizer_json(file: &Value) -> SpecialTokens {
        let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
        let mut tokens = SpecialTokens {
            pad: text(file.pointer("/padding/pad_token")),
            ..SpecialTokens::default()
        };
        let model = file.get("model");
        tokens.unk = text(model.and_then(|m| m.get("unk_token")));
        if tokens.unk.is_none()
            && let Some(id) = model.and_then(|m| m.get("unk_id")).and_then(Value::as_u64)
            && let Some(pieces) = model.and_then(|m| m.get("vocab")).and_then(Value::as_array)
        {
            tokens.unk = usize::try_from(id)
                .ok()
                .and_then(|id| pieces.get(id))
                .and_then(|piece| text(piece.get(0)));
        }
        let mut processors = vec![file.get("post_processor")];
        if let Some(Value::Array(inner)) = file.pointer("/post_processor/processors") {
            processors.extend(inner.iter().map(Some));
        }
        for processor in processors.into_iter().flatten() {
            if matches!(
                processor.get("type").and_then(Value::as_str),
                Some("BertProcessing" | "RobertaProcessing")
            ) {
                tokens.cls = text(processor.pointer("/cls/0"));
                tokens.sep = text(processor.pointer("/sep/0"));
            }
        }
        tokens
    }
}

/// What a model folder's config files say (see the module's docs for the files and precedence).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelConfig {
    /// The longest input the model takes, in tokens; `None` where the files give none or give
    /// transformers' "no limit" (see [`NO_LIMIT_FROM`]).
    pub model_max_length: Option<usize>,
    /// The named special tokens the files give.
    pub special_tokens: SpecialTokens,
    /// The chat templates, `(name, source)`, in the files' order; a single unnamed template is
    /// named [`DEFAULT_TEMPLATE`].
    pub chat_templates: Vec<(String, String)>,
    /// The folder read.
    pub folder: PathBuf,
}

impl ModelConfig {
    /// Reads the config files of `folder`; a folder with none of them gives an empty config.
    ///
    /// A file that exists but cannot be read, is not valid JSON or holds a value of the wrong
    /// type is an error naming the file and the value.
    pub fn read(folder: &Path) -> Result<ModelConfig, Error> {
        let mut config = ModelConfig {
            model_max_length: None,
            special_tokens: SpecialTokens::default(),
            chat_templates: Vec::new(),
            folder: folder.to_owned(),
        };
        let tokenizer_config = read_json_object(folder, TOKENIZER_CONFIG_FILE)?;
        let mut reads_special_tokens_map = true;
        if let Some((path, object)) = &tokenizer_config {
            config.model_max_length = max_length(
                object.get("model_max_length"),
                Place {
                    path,
                    key: "model_max_length",
                },
            )?;
            apply_special_tokens(&mut config.special_tokens, object, path)?;
            if let Some(templates) = object.get("chat_template") {
                config.chat_templates = templates_of(
                    templates,
                    Place {
                        path,
                        key: "chat_template",
                    },
                )?;
            }
            reads_special_tokens_map = !object.contains_key("added_tokens_decoder");
        }
        if reads_special_tokens_map
            && let Some((path, object)) = read_json_object(folder, SPECIAL_TOKENS_MAP_FILE)?
        {
            apply_special_tokens(&mut config.special_tokens, &object, &path)?;
        }
        let jinja = jinja_templates(folder)?;
        if !jinja.is_empty() {
            config.chat_templates = jinja;
        } else if config.chat_templates.is_empty()
            && let Some((path, object)) = read_json_object(folder, PROCESSOR_CHAT_TEMPLATE_FILE)?
            && let Some(templates) = object.get("chat_template")
        {
            config.chat_templates = templates_of(
                templates,
                Place {
                    path: &path,
                    key: "chat_template",
                },
            )?;
        }
        Ok(config)
    }

    /// The template named `name`, if the config has one.
    pub fn chat_template(&self, name: &str) -> Option<&str> {
        self.chat_templates
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, source)| source.as_str())
    }
}

/// A key of a config file, to name in errors.
#[derive(Clone, Copy)]
struct Place<'a> {
    path: &'a Path,
    key: &'a str,
}

impl Place<'_> {
    /// The error for a value of the wrong shape at this place.
    fn wrong(&self, value: &Value, expected: &str) -> Error {
        Error::new(
            ErrorKind::Load,
            format!(
                "{}: \"{}\" is {}; expected {expected}. Fix the file or remove the key",
                self.path.display(),
                self.key,
                describe(value)
            ),
        )
    }
}

/// A JSON value in words, for errors.
fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => format!("the number {n}"),
        Value::String(_) => "a string".to_owned(),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

/// A config file's path and its JSON object.
type ConfigFile = (PathBuf, Map<String, Value>);

/// The JSON object in `folder/name`, with its path; `None` where there is no such file.
fn read_json_object(folder: &Path, name: &str) -> Result<Option<ConfigFile>, Error> {
    let path = folder.join(name);
    let Some(text) = read_if_present(&path)? else {
        return Ok(None);
    };
    match serde_json::from_str(&text) {
        Ok(Value::Object(object)) => Ok(Some((path, object))),
        Ok(other) => Err(Error::new(
            ErrorKind::Load,
            format!(
                "{} holds {}; expected a JSON object. Fix or remove the file",
                path.display(),
                describe(&other)
            ),
        )),
        Err(e) => Err(Error::new(
            ErrorKind::Load,
            format!(
                "{} is not valid JSON: {e}. Fix or remove the file",
                path.display()
            ),
        )),
    }
}

/// The text of the file at `path`; `None` where it does not exist.
fn read_if_present(path: &Path) -> Result<Option<String>, Error> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::new(
            ErrorKind::Load,
            format!("cannot read {}: {e}", path.display()),
        )),
    }
}

/// `model_max_length`: a whole number of tokens, or "no limit".
fn max_length(value: Option<&Value>, at: Place) -> Result<Option<usize>, Error> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let number = value
        .as_f64()
        .filter(|n| *n >= 0.0 && n.fract() == 0.0)
        .ok_or_else(|| at.wrong(value, "a whole number of tokens"))?;
    if number >= NO_LIMIT_FROM {
        return Ok(None);
    }
    Ok(Some(match value.as_u64() {
        Some(exact) => usize::try_from(exact).map_err(|_| at.wrong(value, "a smaller number"))?,
        None => number as usize,
    }))
}

/// A token as the config files write it: a string, or an added-token object whose `content` is
/// one; `None` for `null`.
fn token_text(value: &Value, at: Place) -> Result<Option<String>, Error> {
    match value {
        Value::Null => Ok(None),
        Value::String(text) => Ok(Some(text.clone())),
        Value::Object(object) => match object.get("content") {
            Some(Value::String(text)) => Ok(Some(text.clone())),
            _ => Err(at.wrong(value, "a string or an object with a string \"content\"")),
        },
        _ => Err(at.wrong(value, "a string or an object with a string \"content\"")),
    }
}

/// Sets the special tokens that `object` (a config file at `path`) names; a key it does not have
/// leaves the token as it was, and a key set to `null` unsets it.
fn apply_special_tokens(
    tokens: &mut SpecialTokens,
    object: &Map<String, Value>,
    path: &Path,
) -> Result<(), Error> {
    for key in NAMED_TOKENS {
        if let Some(value) = object.get(key) {
            *tokens.named_mut(key) = token_text(value, Place { path, key })?;
        }
    }
    // transformers 5 renamed the list `extra_special_tokens`; an object under that name maps
    // model-specific names to tokens, which are not part of the list.
    if let Some(Value::Object(named)) = object.get("extra_special_tokens") {
        let key = "extra_special_tokens";
        for (name, value) in named {
            if let Some(text) = token_text(value, Place { path, key })? {
                tokens.extra.insert(name.clone(), text);
            }
        }
    }
    for key in ["additional_special_tokens", "extra_special_tokens"] {
        match object.get(key) {
            None | Some(Value::Null | Value::Object(_)) => {}
            Some(Value::Array(list)) => {
                let mut additional = Vec::with_capacity(list.len());
                for value in list {
                    if let Some(text) = token_text(value, Place { path, key })?
                        && !additional.contains(&text)
                    {
                        additional.push(text);
                    }
                }
                tokens.additional = additional;
                break;
            }
            Some(other) => return Err(Place { path, key }.wrong(other, "a list of tokens")),
        }
    }
    Ok(())
}

/// `chat_template` as a config file writes it: one template, or a list of named ones.
fn templates_of(value: &Value, at: Place) -> Result<Vec<(String, String)>, Error> {
    const EXPECTED: &str = "a template string, or a list of {\"name\", \"template\"} objects";
    match value {
        Value::Null => Ok(Vec::new()),
        Value::String(source) => Ok(vec![(DEFAULT_TEMPLATE.to_owned(), source.clone())]),
        Value::Array(list) => list
            .iter()
            .map(|entry| match (entry.get("name"), entry.get("template")) {
                (Some(Value::String(name)), Some(Value::String(source))) => {
                    Ok((name.clone(), source.clone()))
                }
                _ => Err(at.wrong(entry, EXPECTED)),
            })
            .collect(),
        _ => Err(at.wrong(value, EXPECTED)),
    }
}

/// The templates of `chat_template.jinja` (named [`DEFAULT_TEMPLATE`]) and of
/// `additional_chat_templates/*.jinja` (named by file, sorted), where present.
fn jinja_templates(folder: &Path) -> Result<Vec<(String, String)>, Error> {
    let mut templates = Vec::new();
    if let Some(source) = read_if_present(&folder.join(CHAT_TEMPLATE_FILE))? {
        templates.push((DEFAULT_TEMPLATE.to_owned(), source));
    }
    let dir = folder.join(CHAT_TEMPLATE_DIR);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(templates);
    };
    let mut named = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if let (Some(name), Some("jinja")) = (
            path.file_stem().and_then(|s| s.to_str()),
            path.extension().and_then(|s| s.to_str()),
        ) && let Some(source) = read_if_present(&path)?
        {
            named.push((name.to_owned(), source));
        }
    }
    named.sort();
    templates.extend(named);
    Ok(templates)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A temporary folder holding `files` (name, text), removed when dropped.
    struct Folder(PathBuf);

    impl Folder {
        fn with(files: &[(&str, &str)]) -> Folder {
            use std::sync::atomic::{AtomicUsize, Ordering};
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let path = std::env::temp_dir().join(format!(
                "batchtok-model-config-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(&path).unwrap();
            for (name, text) in files {
                let file = path.join(name);
                std::fs::create_dir_all(file.parent().unwrap()).unwrap();
                std::fs::write(file, text).unwrap();
            }
            Folder(path)
        }
    }

    impl Drop for Folder {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn an_empty_folder_gives_an_empty_config() {
        let folder = Folder::with(&[]);
        let config = ModelConfig::read(&folder.0).unwrap();
        assert_eq!(config.model_max_length, None);
        assert_eq!(config.special_tokens, SpecialTokens::default());
        assert!(config.chat_templates.is_empty());
        assert_eq!(config.folder, folder.0);
    }

    #[test]
    fn tokens_are_strings_or_added_token_objects() {
        let folder = Folder::with(&[(
            TOKENIZER_CONFIG_FILE,
            r#"{"model_max_length": 131072, "bos_token": {"__type": "AddedToken", "content": "<s>"},
                "eos_token": "</s>", "unk_token": null,
                "additional_special_tokens": ["<a>", {"content": "<b>"}, "<a>"],
                "chat_template": "{{ bos_token }}"}"#,
        )]);
        let config = ModelConfig::read(&folder.0).unwrap();
        assert_eq!(config.model_max_length, Some(131072));
        assert_eq!(config.special_tokens.bos.as_deref(), Some("<s>"));
        assert_eq!(config.special_tokens.eos.as_deref(), Some("</s>"));
        assert_eq!(config.special_tokens.unk, None);
        assert_eq!(config.special_tokens.additional, ["<a>", "<b>"]);
        assert_eq!(
            config.chat_template(DEFAULT_TEMPLATE),
            Some("{{ bos_token }}")
        );
    }

    #[test]
    fn an_extra_special_tokens_object_names_model_tokens() {
        let folder = Folder::with(&[(
            TOKENIZER_CONFIG_FILE,
            r#"{"boi_token": "<start_of_image>",
                "extra_special_tokens": {"boi_token": "<start_of_image>",
                                         "image_token": {"content": "<image_soft_token>"},
                                         "video_token": null}}"#,
        )]);
        let tokens = ModelConfig::read(&folder.0).unwrap().special_tokens;
        let extra: Vec<(&str, &str)> = tokens
            .extra
            .iter()
            .map(|(name, token)| (name.as_str(), token.as_str()))
            .collect();
        assert_eq!(
            extra,
            [
                ("boi_token", "<start_of_image>"),
                ("image_token", "<image_soft_token>")
            ]
        );
        assert!(tokens.additional.is_empty());
    }

    #[test]
    fn transformers_no_limit_reads_as_none() {
        for limit in ["1000000000000000019884624838656", "1e30", "1e18"] {
            let folder = Folder::with(&[(
                TOKENIZER_CONFIG_FILE,
                &format!(r#"{{"model_max_length": {limit}}}"#),
            )]);
            assert_eq!(
                ModelConfig::read(&folder.0).unwrap().model_max_length,
                None,
                "{limit}"
            );
        }
        let folder = Folder::with(&[(TOKENIZER_CONFIG_FILE, r#"{"model_max_length": 512.0}"#)]);
        assert_eq!(
            ModelConfig::read(&folder.0).unwrap().model_max_length,
            Some(512)
        );
    }

    #[test]
    fn named_templates_keep_their_names_and_jinja_files_win() {
        let config = r#"{"chat_template": [{"name": "default", "template": "A"},
                                           {"name": "tool_use", "template": "B"}]}"#;
        let folder = Folder::with(&[(TOKENIZER_CONFIG_FILE, config)]);
        assert_eq!(
            ModelConfig::read(&folder.0).unwrap().chat_templates,
            [
                ("default".to_owned(), "A".to_owned()),
                ("tool_use".to_owned(), "B".to_owned())
            ]
        );
        let folder = Folder::with(&[
            (TOKENIZER_CONFIG_FILE, config),
            (CHAT_TEMPLATE_FILE, "J"),
            ("additional_chat_templates/rag.jinja", "R"),
            (PROCESSOR_CHAT_TEMPLATE_FILE, r#"{"chat_template": "P"}"#),
        ]);
        assert_eq!(
            ModelConfig::read(&folder.0).unwrap().chat_templates,
            [
                ("default".to_owned(), "J".to_owned()),
                ("rag".to_owned(), "R".to_owned())
            ]
        );
    }

    #[test]
    fn a_processor_template_is_read_only_where_no_other_file_has_one() {
        let folder = Folder::with(&[(PROCESSOR_CHAT_TEMPLATE_FILE, r#"{"chat_template": "P"}"#)]);
        assert_eq!(
            ModelConfig::read(&folder.0)
                .unwrap()
                .chat_template(DEFAULT_TEMPLATE),
            Some("P")
        );
        let folder = Folder::with(&[
            (TOKENIZER_CONFIG_FILE, r#"{"chat_template": "C"}"#),
            (PROCESSOR_CHAT_TEMPLATE_FILE, r#"{"chat_template": "P"}"#),
        ]);
        assert_eq!(
            ModelConfig::read(&folder.0)
                .unwrap()
                .chat_template(DEFAULT_TEMPLATE),
            Some("C")
        );
    }

    #[test]
    fn the_special_tokens_map_overrides_a_config_without_added_tokens_decoder() {
        let map = r#"{"eos_token": {"content": "<eos>", "special": true}, "pad_token": "<pad>",
                      "additional_special_tokens": ["<x>"]}"#;
        let folder = Folder::with(&[
            (
                TOKENIZER_CONFIG_FILE,
                r#"{"eos_token": "</s>", "bos_token": "<s>"}"#,
            ),
            (SPECIAL_TOKENS_MAP_FILE, map),
        ]);
        let tokens = ModelConfig::read(&folder.0).unwrap().special_tokens;
        assert_eq!(
            (
                tokens.bos.as_deref(),
                tokens.eos.as_deref(),
                tokens.pad.as_deref()
            ),
            (Some("<s>"), Some("<eos>"), Some("<pad>"))
        );
        assert_eq!(tokens.additional, ["<x>"]);
        let folder = Folder::with(&[
            (
                TOKENIZER_CONFIG_FILE,
                r#"{"eos_token": "</s>", "added_tokens_decoder": {}}"#,
            ),
            (SPECIAL_TOKENS_MAP_FILE, map),
        ]);
        let tokens = ModelConfig::read(&folder.0).unwrap().special_tokens;
        assert_eq!((tokens.eos.as_deref(), tokens.pad), (Some("</s>"), None));
    }

    #[test]
    fn errors_name_the_file_and_the_key() {
        let cases: [(&str, &str, &str); 6] = [
            (
                TOKENIZER_CONFIG_FILE,
                "{",
                "tokenizer_config.json is not valid JSON",
            ),
            (
                TOKENIZER_CONFIG_FILE,
                "[1]",
                "tokenizer_config.json holds an array; expected a JSON object",
            ),
            (
                TOKENIZER_CONFIG_FILE,
                r#"{"model_max_length": "512"}"#,
                "\"model_max_length\" is a string; expected a whole number",
            ),
            (
                TOKENIZER_CONFIG_FILE,
                r#"{"eos_token": 2}"#,
                "\"eos_token\" is the number 2; expected a string or an object",
            ),
            (
                TOKENIZER_CONFIG_FILE,
                r#"{"chat_template": [{"name": "x"}]}"#,
                "\"chat_template\" is an object; expected a template string",
            ),
            (
                SPECIAL_TOKENS_MAP_FILE,
                r#"{"additional_special_tokens": "<x>"}"#,
                "special_tokens_map.json: \"additional_special_tokens\" is a string; expected a list",
            ),
        ];
        for (name, text, expected) in cases {
            let folder = Folder::with(&[(name, text)]);
            let error = ModelConfig::read(&folder.0).unwrap_err();
            assert_eq!(error.kind(), ErrorKind::Load);
            assert!(
                error.message().contains(expected),
                "{text}: {}",
                error.message()
            );
            assert!(
                error.message().contains(&folder.0.display().to_string()),
                "{}",
                error.message()
            );
        }
    }

    #[test]
    fn a_tokenizer_json_names_its_pad_unk_cls_and_sep_tokens() {
        let file: Value = serde_json::from_str(
            r#"{"padding": {"pad_token": "[PAD]"},
                "model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": {}},
                "post_processor": {"type": "Sequence", "processors": [
                    {"type": "BertProcessing", "sep": ["[SEP]", 102], "cls": ["[CLS]", 101]}]}}"#,
        )
        .unwrap();
        let tokens = SpecialTokens::from_tokenizer_json(&file);
        assert_eq!(tokens.pad.as_deref(), Some("[PAD]"));
        assert_eq!(tokens.unk.as_deref(), Some("[UNK]"));
        assert_eq!(tokens.cls.as_deref(), Some("[CLS]"));
        assert_eq!(tokens.sep.as_deref(), Some("[SEP]"));
        let unigram: Value = serde_json::from_str(
            r#"{"model": {"type": "Unigram", "unk_id": 1, "vocab": [["<s>", 0.0], ["<unk>", 0.0]]}}"#,
        )
        .unwrap();
        assert_eq!(
            SpecialTokens::from_tokenizer_json(&unigram).unk.as_deref(),
            Some("<unk>")
        );
        assert_eq!(
            SpecialTokens::from_tokenizer_json(&Value::Null),
            SpecialTokens::default()
        );
    }

    #[test]
    fn config_tokens_fall_back_to_the_files_field_by_field() {
        let config = SpecialTokens {
            eos: Some("</s>".into()),
            ..SpecialTokens::default()
        };
        let file = SpecialTokens {
            eos: Some("<eos>".into()),
            pad: Some("<pad>".into()),
            additional: vec!["<x>".into()],
            ..SpecialTokens::default()
        };
        let merged = config.or(&file);
        assert_eq!(merged.eos.as_deref(), Some("</s>"));
        assert_eq!(merged.pad.as_deref(), Some("<pad>"));
        assert_eq!(merged.additional, ["<x>"]);
    }
}
