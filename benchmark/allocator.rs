//! The engines under whichever global allocator this build has, without Node: where no Node of the
//! target can run (a musl build on a glibc machine), this is how the two allocators compare there.
//!
//! `cargo run --release --example allocator [-- --runs N]` (this file is `benchmark/allocator.rs`);
//! `BATCHTOK_ALLOCATOR=mimalloc|system` picks the allocator (see `build.rs`), `--target` the libc.
//! `node benchmark/allocator.js` is the measurement that decides; this one stands in for it where
//! that cannot run.
//!
//! Each run encodes a batch the way the addon does: every item's ids into a vector of its own,
//! spread over the threads, all kept until the batch ends and then freed together. Prints the
//! median MiB/s and CPU milliseconds per MiB (the process's user and system time, all threads
//! together) per engine, workload and thread count.

// Shared with the scheduler benchmarks, which use the rest of it.
#[allow(dead_code)]
#[path = "corpus.rs"]
mod corpus;

use std::hint::black_box;
use std::time::{Duration, Instant};

use batchtok::engine::{AllowedSpecial, EncodeMode, Ids, Tokenizer};
use corpus::{DOCUMENT_BYTES, SHORT_ITEM_BYTES, big_txt, machine, median, split_at_lines};

const DEFAULT_RUNS: usize = 5;

/// The process's user plus system CPU time so far, from `/proc/self/stat` (Linux; zero elsewhere).
fn cpu_time() -> Duration {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return Duration::ZERO;
    };
    // The fields after the command name, which is in parentheses and may hold spaces.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line, in clock ticks (100 per second on
    // Linux's every mainstream configuration).
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

/// One batch: item `i` on thread `i % threads`, every result kept until all threads finish.
fn batch(tokenizer: &Tokenizer, mode: &EncodeMode, items: &[String], threads: usize) {
    let results: Vec<Vec<Ids>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    items
                        .iter()
                        .skip(t)
                        .step_by(threads)
                        .map(|item| tokenizer.encode(item, mode).expect("encodes"))
                        .collect::<Vec<Ids>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("worker"))
            .collect()
    });
    black_box(&results);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runs = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .map_or(DEFAULT_RUNS, |r| r.parse().expect("--runs N"));
    let text = big_txt();
    // The stable engine's tokenizer: GPT-2 with `add_prefix_space`, which the release candidate
    // refuses (as in `benchmark/allocator.js`).
    let gpt2 = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("__test__/fixtures/tokenizers/gpt2.json"),
    )
    .expect("the GPT-2 fixture");
    let mut json: serde_json::Value = serde_json::from_str(&gpt2).expect("GPT-2 fixture is JSON");
    json["pre_tokenizer"]["add_prefix_space"] = serde_json::Value::Bool(true);
    let stable = Tokenizer::from_json(&json.to_string(), "gpt2 add_prefix_space").expect("loads");
    stable
        .wait_until_ready()
        .expect("the release candidate's build settles");
    let o200k = Tokenizer::from_encoding("o200k_base").expect("o200k_base loads");
    println!(
        "machine: {}; allocator {}; median of {runs} runs",
        machine(),
        // build.rs sets this cfg for every target of the package, the examples included.
        if cfg!(batchtok_mimalloc) {
            "mimalloc"
        } else {
            "system"
        }
    );
    println!("engine\tworkload\tthreads\tMiB/s\tCPU ms/MiB");
    let engines: [(&str, &Tokenizer, usize); 2] = [
        ("1.0 pipeline (o200k_base)", &*o200k, 1),
        // The stable engine is about fifty times slower: a quarter of the corpus.
        ("stable fallback (GPT-2)", &stable, 4),
    ];
    for (engine, tokenizer, share) in engines {
        let mode = tokenizer
            .encode_mode(None, &AllowedSpecial::None)
            .expect("default options");
        for (workload, min_bytes) in [
            ("documents", DOCUMENT_BYTES),
            ("short items", SHORT_ITEM_BYTES),
        ] {
            let all = split_at_lines(&text, min_bytes);
            let items = &all[..all.len().div_ceil(share)];
            let mib = items.iter().map(String::len).sum::<usize>() as f64 / f64::from(1 << 20);
            for threads in [1, 2] {
                batch(tokenizer, &mode, items, threads);
                let (mut wall, mut cpu) = (Vec::new(), Vec::new());
                for _ in 0..runs {
                    let (started, cpu_before) = (Instant::now(), cpu_time());
                    batch(tokenizer, &mode, items, threads);
                    wall.push(started.elapsed().as_secs_f64());
                    cpu.push((cpu_time() - cpu_before).as_secs_f64());
                }
                println!(
                    "{engine}\t{workload}\t{threads}\t{:.1}\t{:.1}",
                    mib / median(&wall),
                    median(&cpu) * 1e3 / mib
                );
            }
        }
    }
}
