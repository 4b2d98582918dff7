//! batchtok's load of a tokenizer.json against the stable crate's own `Tokenizer::from_file` (the
//! code Python `tokenizers`' `from_file` runs), in one process, interleaved, and where the time of
//! the release candidate's reader goes.
//!
//! For each file: the median over `--runs` of (1) `tokenizers` 0.23 `Tokenizer::from_file`,
//! (2) batchtok's `Tokenizer::from_file` until it returns (ready to encode, on the stable engine),
//! (3) the same until `wait_until_ready` returns (the release candidate built and the route
//! settled), and (4) the release candidate's reader alone (`tokenizers::from_json` on the
//! canonical file). Each round runs the contenders in a new order.
//!
//! `cargo run --release --example load_stages -- [--runs N] FILE...`

#[allow(dead_code)]
#[path = "corpus.rs"]
mod corpus;
#[path = "cpu_time.rs"]
#[allow(dead_code)]
mod cpu_time;

use std::path::Path;
use std::time::Instant;

use batchtok::engine::Tokenizer;

/// The CPU time the calling thread has used, in ms.
fn thread_cpu_ms() -> f64 {
    cpu_time::thread_cpu_seconds() * 1e3
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut runs = 5;
    if let Some(at) = args.iter().position(|a| a == "--runs") {
        runs = args[at + 1].parse().expect("--runs takes a number");
        args.drain(at..at + 2);
    }
    println!(
        "| file | tokenizers 0.23 from_file | batchtok from_file | batchtok ready | release candidate's reader | batchtok from_file, CPU | tokenizers 0.23 from_file, CPU |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for path in &args {
        let mut times = [const { Vec::new() }; 6];
        for round in 0..runs {
            for k in 0..4 {
                let contender = (round + k) % 4;
                let started = Instant::now();
                let cpu = thread_cpu_ms();
                let ms = |started: Instant| started.elapsed().as_secs_f64() * 1e3;
                match contender {
                    0 => {
                        let tokenizer = tokenizers_stable::Tokenizer::from_file(path).unwrap();
                        times[0].push(ms(started));
                        times[5].push(thread_cpu_ms() - cpu);
                        drop(tokenizer);
                    }
                    1 | 2 => {
                        let tokenizer = Tokenizer::from_file(Path::new(path)).unwrap();
                        if contender == 2 {
                            tokenizer.wait_until_ready().unwrap();
                        }
                        times[contender].push(ms(started));
                        if contender == 1 {
                            times[4].push(thread_cpu_ms() - cpu);
                        }
                        // Not timed: the next contender starts once this build is over.
                        tokenizer.wait_until_ready().unwrap();
                    }
                    _ => {
                        let json = std::fs::read_to_string(path).unwrap();
                        let mut value: serde_json::Value = serde_json::from_str(&json).unwrap();
                        if value.get("version").and_then(|v| v.as_str()) != Some("2.0") {
                            tokenizers::canonicalize_value(&mut value).unwrap();
                        }
                        let canonical = serde_json::to_string(&value).unwrap();
                        drop(value);
                        let started = Instant::now();
                        // A file the release candidate refuses as written (batchtok hands it an
                        // equivalent one, `engine/adapter.rs`) has no time in this column.
                        if let Ok(tokenizer) = tokenizers::from_json(&canonical) {
                            times[3].push(ms(started));
                            drop(tokenizer);
                        }
                    }
                }
            }
        }
        let name = Path::new(path).file_stem().unwrap().to_string_lossy();
        let cells: Vec<String> = times
            .iter()
            .map(|t| {
                if t.is_empty() {
                    "refused".to_owned()
                } else {
                    format!("{:.0}", corpus::median(t))
                }
            })
            .collect();
        println!("| {name} | {} |", cells.join(" | "));
    }
}
