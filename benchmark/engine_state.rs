//! Does the engine's shared state cost anything across threads?
//!
//! rc.3's `PipelineTokenizer::encode_into` takes its scratch buffers (model caches, split buffers)
//! from a pool inside the tokenizer: 64 mutex-guarded shards, one per thread by a thread-local
//! index, two lock acquisitions per call (take, give back). The shards are adjacent in memory, so
//! two threads' locks can share a cache line. This benchmark runs the same items on P threads
//! two ways, interleaved round by round:
//! - shared: every thread calls one tokenizer, as batchtok's workers do;
//! - own: every thread calls a tokenizer of its own (its own scratch pool, no line shared with
//!   another thread), the per-worker engine state this would cost memory to give.
//!
//! `cargo run --release --example engine_state [-- --runs N]` prints medians and their ratio.

// Shared with the scheduler benchmarks, which use the rest of it.
#[allow(dead_code)]
#[path = "corpus.rs"]
mod corpus;

use std::hint::black_box;
use std::time::Instant;

use corpus::{DOCUMENT_BYTES, SHORT_ITEM_BYTES, big_txt, machine, median, split_at_lines};
use tokenizers::pipeline::{EncodeOptions, PipelineToken, PipelineTokenizer};

const DEFAULT_RUNS: usize = 11;

/// Encodes `items[t], items[t + threads], ...` on thread `t`, with `tokenizers[t]`; returns the
/// wall time in seconds.
fn run(tokenizers: &[PipelineTokenizer], items: &[String]) -> f64 {
    let threads = tokenizers.len();
    let options = EncodeOptions::default();
    let started = Instant::now();
    std::thread::scope(|scope| {
        for (t, tokenizer) in tokenizers.iter().enumerate() {
            let options = &options;
            scope.spawn(move || {
                let mut out: Vec<PipelineToken> = Vec::new();
                for item in items.iter().skip(t).step_by(threads) {
                    out.clear();
                    tokenizer
                        .encode_into(item, options, &mut out)
                        .expect("encodes");
                    black_box(&out);
                }
            });
        }
    });
    started.elapsed().as_secs_f64()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runs = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .map_or(DEFAULT_RUNS, |r| r.parse().expect("--runs N"));
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
    let build = || {
        batchtok::engine::openai::pipeline_tokenizer_for_benchmarks("o200k_base")
            .expect("o200k_base builds")
    };
    let shared_one = build();
    let shared = vec![shared_one; threads];
    let own: Vec<PipelineTokenizer> = (0..threads).map(|_| build()).collect();
    let text = big_txt();
    println!(
        "machine: {}; {threads} threads; median of {runs} interleaved rounds",
        machine()
    );
    println!("workload\titems\tshared_ms\town_ms\tshared/own");
    for (name, min_bytes) in [("documents", DOCUMENT_BYTES), ("short", SHORT_ITEM_BYTES)] {
        let items = split_at_lines(&text, min_bytes);
        run(&shared, &items);
        run(&own, &items);
        let (mut shared_s, mut own_s) = (Vec::new(), Vec::new());
        for round in 0..runs {
            if round % 2 == 0 {
                shared_s.push(run(&shared, &items));
                own_s.push(run(&own, &items));
            } else {
                own_s.push(run(&own, &items));
                shared_s.push(run(&shared, &items));
            }
        }
        let (s, o) = (median(&shared_s), median(&own_s));
        println!(
            "{name}\t{}\t{:.2}\t{:.2}\t{:.3}",
            items.len(),
            s * 1e3,
            o * 1e3,
            s / o
        );
    }
}
