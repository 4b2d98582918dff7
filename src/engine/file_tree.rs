//! A tokenizer.json parsed for the release candidate's build, its BPE merges kept as text.
//!
//! The build reads the file as a `serde_json::Value` tree: batchtok's checks of the file, the
//! release candidate's upgrade of an older file to the canonical form and the adapter's rewrites
//! all work on that tree, and the release candidate's reader then takes the tree written back as
//! text. Nothing but that reader looks at a BPE model's merges, yet they are most of a large file
//! (Gemma 3's has over half a million), and in a tree each is an array of two strings, three
//! allocations: Gemma 3's tree takes about 150 MiB, 35 without its merges. So [`FileTree::parse`]
//! leaves them as the text they are in the file (the tree borrows the file's text until the
//! canonical text is written), under an empty array in the tree; [`FileTree::upgrade`] spells them
//! as the upgrade would, and [`CanonicalFile::into_text`] writes them back in place.
//!
//! The invariant: the canonical text is, byte for byte, what `serde_json::to_string` writes for the
//! whole tree once `tokenizers::canonicalize_value` has upgraded it (the upgrade runs where the
//! file's `version` is not `"2.0"`). The merges written from the text keep it because they take
//! only the two spellings whose upgrade is plain: a pair of strings stays itself, and in a file the
//! upgrade runs on, a string `"a b"` with one space becomes the pair `["a", "b"]`, a string that
//! begins `#version` is dropped. Any other item (a string with no space or with two, a pair that is not
//! two strings, a number) puts the merges into the tree, where the upgrade answers for them as it
//! answers for any file. Each string is written by `serde_json`'s own writer, so its escapes are
//! the tree's. A test holds the two texts equal on every fixture and real file.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A tokenizer.json as the release candidate's build reads it.
pub(super) struct FileTree<'t> {
    /// The file; where `merges` holds the model's merges, `model.merges` here is an empty array.
    pub tree: Value,
    /// The model's merges as the file spells them (an array), where the parse kept them as text.
    merges: Option<&'t RawValue>,
}

impl<'t> FileTree<'t> {
    /// Parses a tokenizer.json, keeping the model's merges as text where they are an array. The
    /// errors are `serde_json`'s for the whole text: a text the lean parse refuses for its shape
    /// (a `model` that is not an object) is parsed again as a plain tree.
    pub fn parse(text: &'t str) -> serde_json::Result<FileTree<'t>> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let lean = deserializer
            .deserialize_map(Level::File)
            .and_then(|parsed| deserializer.end().map(|()| parsed));
        match lean {
            Ok((tree, merges)) => Ok(FileTree {
                tree: Value::Object(tree),
                merges,
            }),
            Err(_) => serde_json::from_str(text).map(FileTree::whole),
        }
    }

    /// A file already parsed whole.
    pub fn whole(tree: Value) -> FileTree<'static> {
        FileTree { tree, merges: None }
    }

    /// Upgrades the file to the canonical form (`"version": "2.0"`) where it is in an older one,
    /// as the release candidate's reader needs it; the merges kept as text are spelled canonically
    /// here too.
    pub fn upgrade(mut self) -> Result<CanonicalFile, String> {
        let upgrade = self.tree.get("version").and_then(Value::as_str) != Some("2.0");
        let merges = match self.merges {
            Some(raw) => match canonical_merges(raw.get(), upgrade) {
                Some(merges) => Some(merges),
                None => {
                    let parsed: Value =
                        serde_json::from_str(raw.get()).map_err(|e| e.to_string())?;
                    if let Some(model) = self.tree.get_mut("model").and_then(Value::as_object_mut) {
                        model.insert("merges".to_owned(), parsed);
                    }
                    None
                }
            },
            None => None,
        };
        if upgrade {
            tokenizers::canonicalize_value(&mut self.tree).map_err(|e| e.to_string())?;
        }
        Ok(CanonicalFile {
            tree: self.tree,
            merges,
        })
    }
}

/// A tokenizer.json in the canonical form, its merges still apart where the parse kept them so.
pub(super) struct CanonicalFile {
    /// The file; where `merges` holds the model's merges, `model.merges` here is an empty array.
    pub tree: Value,
    /// The model's merges, in canonical text.
    merges: Option<String>,
}

impl CanonicalFile {
    /// The text the release candidate's reader takes, the merges back in place: the whole tree's
    /// `serde_json::to_string` (module docs).
    pub fn into_text(self) -> Result<String, String> {
        match self.merges {
            Some(merges) => write_with_merges(&self.tree, &merges),
            None => serde_json::to_string(&self.tree).map_err(|e| e.to_string()),
        }
    }
}

/// An object of the file, read as a map of `Value`s but for one member: at the top level the
/// model, read as an object in turn; in the model an array of merges, kept as text.
#[derive(Clone, Copy)]
enum Level {
    File,
    Model,
}

impl<'t> DeserializeSeed<'t> for Level {
    type Value = (Map<String, Value>, Option<&'t RawValue>);

    fn deserialize<D: Deserializer<'t>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'t> Visitor<'t> for Level {
    type Value = (Map<String, Value>, Option<&'t RawValue>);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::File => "a tokenizer.json object",
            Level::Model => "a model object",
        })
    }

    fn visit_map<A: MapAccess<'t>>(self, mut members: A) -> Result<Self::Value, A::Error> {
        let mut object = Map::new();
        // A repeated key keeps its last value, as in a `Value` parse.
        let mut merges = None;
        while let Some(key) = members.next_key::<String>()? {
            let value = match (self, key.as_str()) {
                (Level::File, "model") => {
                    let (model, model_merges) = members.next_value_seed(Level::Model)?;
                    merges = model_merges;
                    Value::Object(model)
                }
                (Level::Model, "merges") => {
                    let raw: &'t RawValue = members.next_value()?;
                    let kept = raw.get().starts_with('[');
                    merges = kept.then_some(raw);
                    if kept {
                        Value::Array(Vec::new())
                    } else {
                        serde_json::from_str(raw.get()).map_err(de::Error::custom)?
                    }
                }
                _ => members.next_value()?,
            };
            object.insert(key, value);
        }
        Ok((object, merges))
    }
}

/// The merges' canonical text, `[["a","b"],...]`, from their text in the file (an array); `None`
/// where an item is not one of the spellings this handles (module docs). `split_lines`: the file
/// is upgraded, so a string `"a b"` is read as a merge.
fn canonical_merges(text: &str, split_lines: bool) -> Option<String> {
    let mut out = Vec::with_capacity(text.len() + text.len() / 4);
    let mut deserializer = serde_json::Deserializer::from_str(text);
    deserializer
        .deserialize_seq(MergesVisitor {
            out: &mut out,
            split_lines,
        })
        .ok()?;
    deserializer.end().ok()?;
    String::from_utf8(out).ok()
}

/// Writes each merge of the array as it is read.
struct MergesVisitor<'o> {
    out: &'o mut Vec<u8>,
    split_lines: bool,
}

impl<'t> Visitor<'t> for MergesVisitor<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of merges")
    }

    fn visit_seq<A: SeqAccess<'t>>(self, mut items: A) -> Result<(), A::Error> {
        self.out.push(b'[');
        let mut first = true;
        while let Some(item) = items.next_element::<MergeItem<'t>>()? {
            let (left, right) = match &item {
                MergeItem::Pair(left, right) => (&**left, &**right),
                MergeItem::Line(line) if self.split_lines => {
                    if line.starts_with("#version") {
                        continue;
                    }
                    let mut parts = line.split(' ');
                    match (parts.next(), parts.next(), parts.next()) {
                        (Some(left), Some(right), None) => (left, right),
                        _ => return Err(de::Error::custom("a merge of other than two parts")),
                    }
                }
                MergeItem::Line(_) => return Err(de::Error::custom("a merge spelled as a line")),
            };
            if !first {
                self.out.push(b',');
            }
            first = false;
            self.out.push(b'[');
            serde_json::to_writer(&mut *self.out, left).map_err(de::Error::custom)?;
            self.out.push(b',');
            serde_json::to_writer(&mut *self.out, right).map_err(de::Error::custom)?;
            self.out.push(b']');
        }
        self.out.push(b']');
        Ok(())
    }
}

/// One item of the merges: a pair of strings or a string, each borrowed from the text where it has
/// no escapes. Anything else is an error, which sends the merges into the tree.
enum MergeItem<'t> {
    Pair(Cow<'t, str>, Cow<'t, str>),
    Line(Cow<'t, str>),
}

impl<'t> de::Deserialize<'t> for MergeItem<'t> {
    fn deserialize<D: Deserializer<'t>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(MergeItemVisitor)
    }
}

struct MergeItemVisitor;

impl<'t> Visitor<'t> for MergeItemVisitor {
    type Value = MergeItem<'t>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a pair of strings or a string")
    }

    fn visit_borrowed_str<E: de::Error>(self, line: &'t str) -> Result<Self::Value, E> {
        Ok(MergeItem::Line(Cow::Borrowed(line)))
    }

    fn visit_str<E: de::Error>(self, line: &str) -> Result<Self::Value, E> {
        Ok(MergeItem::Line(Cow::Owned(line.to_owned())))
    }

    fn visit_seq<A: SeqAccess<'t>>(self, mut parts: A) -> Result<Self::Value, A::Error> {
        // Each part is read as an item too, and must be a string.
        let left = parts.next_element::<MergeItem<'t>>()?;
        let right = parts.next_element::<MergeItem<'t>>()?;
        match (left, right, parts.next_element::<de::IgnoredAny>()?) {
            (Some(MergeItem::Line(left)), Some(MergeItem::Line(right)), None) => {
                Ok(MergeItem::Pair(left, right))
            }
            _ => Err(de::Error::custom("a merge of other than two strings")),
        }
    }
}

/// Appends `value` as `serde_json`'s compact writer spells it.
fn write<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), String> {
    serde_json::to_writer(out, value).map_err(|e| e.to_string())
}

/// `serde_json::to_string(tree)` with `merges` (canonical text) as the model's merges.
fn write_with_merges(tree: &Value, merges: &str) -> Result<String, String> {
    let root = tree.as_object().ok_or("the file is not an object")?;
    let has_merges = root
        .get("model")
        .and_then(Value::as_object)
        .is_some_and(|model| model.contains_key("merges"));
    if !has_merges {
        return Err("the upgrade took the model's merges away".to_owned());
    }
    let mut out = Vec::with_capacity(merges.len() * 2);
    write_replacing(&mut out, root, &["model", "merges"], merges)?;
    String::from_utf8(out).map_err(|e| e.to_string())
}

/// Writes `object` as `serde_json`'s compact writer does, member by member in the map's order, but
/// for the member at `path` (a key for each level of objects), written as the JSON text `json`.
fn write_replacing(
    out: &mut Vec<u8>,
    object: &Map<String, Value>,
    path: &[&str],
    json: &str,
) -> Result<(), String> {
    out.push(b'{');
    for (i, (key, value)) in object.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write(out, key)?;
        out.push(b':');
        match (path, value) {
            ([last], _) if key == last => out.extend_from_slice(json.as_bytes()),
            ([next, rest @ ..], Value::Object(inner)) if key == next => {
                write_replacing(out, inner, rest, json)?;
            }
            _ => write(out, value)?,
        }
    }
    out.push(b'}');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::test_fixtures::tokenizer_files;

    /// The canonical text as the build wrote it from the whole tree.
    fn from_whole_tree(text: &str) -> Result<String, String> {
        let mut tree: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if tree.get("version").and_then(Value::as_str) != Some("2.0") {
            tokenizers::canonicalize_value(&mut tree).map_err(|e| e.to_string())?;
        }
        serde_json::to_string(&tree).map_err(|e| e.to_string())
    }

    /// The canonical text through [`FileTree`], and whether its merges stayed text throughout.
    fn lean(text: &str) -> (Result<String, String>, bool) {
        let parsed = match FileTree::parse(text) {
            Ok(parsed) => parsed,
            Err(e) => return (Err(e.to_string()), false),
        };
        match parsed.upgrade() {
            Ok(canonical) => {
                let kept = canonical.merges.is_some();
                (canonical.into_text(), kept)
            }
            Err(e) => (Err(e), false),
        }
    }

    #[test]
    fn every_file_gives_the_whole_trees_text_with_its_merges_kept_as_text() {
        let mut kept = 0;
        for path in tokenizer_files() {
            let text = std::fs::read_to_string(&path).unwrap();
            let (ours, merges_kept) = lean(&text);
            assert_eq!(ours, from_whole_tree(&text), "{}", path.display());
            let is_bpe =
                serde_json::from_str::<Value>(&text).unwrap()["model"]["merges"].is_array();
            assert_eq!(merges_kept, is_bpe, "{}", path.display());
            kept += usize::from(merges_kept);
        }
        assert!(kept >= 1, "the gpt2 fixture at least has merges");
    }

    #[test]
    fn odd_merges_and_odd_files_give_the_whole_trees_answer() {
        let model = |merges: &str| {
            format!(r#"{{"type":"BPE","vocab":{{"a":0,"b":1,"ab":2,"é":3}},"merges":{merges}}}"#)
        };
        let file = |top: &str, merges: &str| format!(r#"{{{top}"model":{}}}"#, model(merges));
        let cases: Vec<(String, bool)> = vec![
            // Kept as text: pairs, lines with one space, a `#version` line, escapes.
            (file("", r#"["a b"]"#), true),
            (file("", r##"["#version: 0.2","a b"]"##), true),
            (file("", r#"[["a","b"]]"#), true),
            (file("", r#"["\u00e9 a","a\u0020b"]"#), true),
            (
                file(r#""version":"2.0","#, r#"[["a","b"],["\u00e9","\/"]]"#),
                true,
            ),
            (file("", "[]"), true),
            // Into the tree, where the upgrade answers: other shapes, lines in a canonical file.
            (file("", r#"["a  b"]"#), false),
            (file("", r#"["ab"]"#), false),
            (file("", r#"[["a","b","c"]]"#), false),
            (file("", r#"[["a",1]]"#), false),
            (file("", "[7]"), false),
            (file(r#""version":"2.0","#, r#"["a b"]"#), false),
            (file("", "null"), false),
            (file("", r#""a b""#), false),
            // A repeated model or merges key: the last one counts, as in a tree.
            (
                format!(
                    r#"{{"model":{},"model":{}}}"#,
                    model(r#"["a b"]"#),
                    model("[]")
                ),
                true,
            ),
            (
                format!(
                    r#"{{"model":{},"model":{{"type":"WordLevel","vocab":{{}}}}}}"#,
                    model("[]")
                ),
                false,
            ),
            (
                r#"{"model":{"type":"BPE","vocab":{},"merges":["a b"],"merges":[["b","a"]]}}"#
                    .to_owned(),
                true,
            ),
            // No model object, or not JSON at all.
            (r#"{"model":5}"#.to_owned(), false),
            (r#"{"version":"1.0"}"#.to_owned(), false),
            (r#"{"model":{"merges":["a b"]}"#.to_owned(), false),
            ("[1]".to_owned(), false),
        ];
        for (text, keeps) in cases {
            let (ours, kept) = lean(&text);
            assert_eq!(ours, from_whole_tree(&text), "{text}");
            assert_eq!(kept, keeps, "{text}");
        }
    }
}
