//! Where a tokenizer.json's load time goes, stage by stage, for each file named.
//!
//! `cargo run --release --example load_stages -- FILE...`

use std::time::Instant;

fn main() {
    for path in std::env::args().skip(1) {
        let t = Instant::now();
        let json = std::fs::read_to_string(&path).unwrap();
        let read = t.elapsed();
        let t = Instant::now();
        let stable = tokenizers_stable::Tokenizer::from_bytes(json.as_bytes()).unwrap();
        let stable_ms = t.elapsed();
        drop(stable);
        let t = Instant::now();
        let mut value: serde_json::Value = serde_json::from_str(&json).unwrap();
        let parse = t.elapsed();
        let t = Instant::now();
        if value.get("version").and_then(|v| v.as_str()) != Some("2.0") {
            tokenizers::canonicalize_value(&mut value).unwrap();
        }
        let canon = t.elapsed();
        let t = Instant::now();
        let canonical = serde_json::to_string(&value).unwrap();
        let ser = t.elapsed();
        let t = Instant::now();
        let rc = tokenizers::from_json(&canonical).unwrap();
        let rc_ms = t.elapsed();
        let t = Instant::now();
        drop(rc);
        let dropped = t.elapsed();
        let t = Instant::now();
        let v2: serde_json::Value = serde_json::from_str(&json).unwrap();
        let stable_v: Result<tokenizers_stable::Tokenizer, _> = serde_json::from_value(v2);
        let stable_from_value = t.elapsed();
        drop(stable_v);
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
        println!(
            "{path}: read {:.0} | stable from_bytes {:.0} | parse Value {:.0} canonicalize {:.0} to_string {:.0} rc from_json {:.0} (drop {:.0}) | parse+stable from_value {:.0}",
            ms(read), ms(stable_ms), ms(parse), ms(canon), ms(ser), ms(rc_ms), ms(dropped), ms(stable_from_value)
        );
    }
}
