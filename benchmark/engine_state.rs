//! Does the engine's shared state cost anything across threads, and does batchtok's per-worker
//! working memory remove that cost?
//!
//! rc.3's `PipelineTokenizer::encode_into` takes its scratch buffers (model caches, split buffers)
//! from a pool inside the tokenizer: 64 mutex-guarded shards, one per thread by a thread-local
//! index, two lock acquisitions per call (take, give back). The shards are adjacent in memory, so
//! two threads' locks can share a cache line. This benchmark runs the same items on P threads
//! three ways, interleaved round by round:
//! - shared: every thread calls one engine, which takes working memory from its own pool per text
//!   (`PipelineTokenizer::encode_into` as it is);
//! - own: every thread calls a tokenizer of its own (its own scratch pool, no line shared with
//!   another thread): the per-worker engine state a copy of the model per thread would give;
//! - leased: every thread calls the same engine as "shared", with working memory it leased once
//!   (`engine::Scratch`, as batchtok's workers do): no lock per text and no copy of the model.
//!
//! "shared" and "leased" run on one engine instance: two copies of a model can differ by several
//! percent in speed through where their tables landed in memory alone, so only the same instance
//! compares the two ways of holding working memory.
//!
//! `cargo run --release --example engine_state [-- --runs N]` prints medians and their ratios.

// Shared with the scheduler benchmarks, which use the rest of it.
#[allow(dead_code)]
#[path = "corpus.rs"]
mod corpus;

use std::hint::black_box;
use std::time::Instant;

use batchtok::engine::{Engine, Ids, Scratch, Tokenizer};
use corpus::{DOCUMENT_BYTES, SHORT_ITEM_BYTES, big_txt, machine, median, split_at_lines};
use tokenizers::pipeline::{EncodeOptions, PipelineToken, PipelineTokenizer};

const DEFAULT_RUNS: usize = 11;

/// Runs `encode(t)` on each of `threads` threads, thread `t` over `items[t], items[t + threads],
/// ...`; returns the wall time in seconds.
fn run<W: FnMut(&str)>(
    threads: usize,
    items: &[String],
    worker: impl Fn(usize) -> W + Sync,
) -> f64 {
    let started = Instant::now();
    std::thread::scope(|scope| {
        for t in 0..threads {
            let worker = &worker;
            scope.spawn(move || {
                let mut encode = worker(t);
                for item in items.iter().skip(t).step_by(threads) {
                    encode(item);
                }
            });
        }
    });
    started.elapsed().as_secs_f64()
}

/// A worker calling `engine` with working memory `scratch` gives: the engine's own pool
/// ([`Scratch::engine_pool`]) or a lease ([`Scratch::new`]).
fn batchtok_worker<'e>(engine: &'e dyn Engine, mut scratch: Scratch<'e>) -> impl FnMut(&str) + 'e {
    let mut ids = Ids::default();
    move |item| {
        ids.clear();
        engine
            .encode_into(item, false, false, &mut scratch, &mut ids)
            .expect("encodes");
        black_box(&ids);
    }
}

/// A worker calling `tokenizer`'s own `encode_into`.
fn engine_worker(tokenizer: &PipelineTokenizer) -> impl FnMut(&str) + '_ {
    let options = EncodeOptions::default();
    let mut out: Vec<PipelineToken> = Vec::new();
    move |item| {
        out.clear();
        tokenizer
            .encode_into(item, &options, &mut out)
            .expect("encodes");
        black_box(&out);
    }
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
    let own: Vec<PipelineTokenizer> = (0..threads).map(|_| build()).collect();
    let tokenizer = Tokenizer::from_encoding("o200k_base").expect("o200k_base loads");
    let engine = tokenizer.main_engine();
    let text = big_txt();
    println!(
        "machine: {}; {threads} threads; median of {runs} interleaved rounds",
        machine()
    );
    println!("workload\titems\tshared_ms\town_ms\tleased_ms\tshared/own\tleased/own");
    for (name, min_bytes) in [("documents", DOCUMENT_BYTES), ("short", SHORT_ITEM_BYTES)] {
        let items = split_at_lines(&text, min_bytes);
        let contenders: [&dyn Fn() -> f64; 3] = [
            &|| {
                run(threads, &items, |_| {
                    batchtok_worker(engine, Scratch::engine_pool())
                })
            },
            &|| run(threads, &items, |t| engine_worker(&own[t])),
            &|| run(threads, &items, |_| batchtok_worker(engine, Scratch::new())),
        ];
        let mut seconds = [(); 3].map(|()| Vec::with_capacity(runs));
        for contender in contenders {
            contender();
        }
        // Each round starts with the next contender, so slow drift favours none.
        for round in 0..runs {
            for k in 0..contenders.len() {
                let c = (round + k) % contenders.len();
                seconds[c].push(contenders[c]());
            }
        }
        let [shared_s, own_s, leased_s] = seconds.map(|s| median(&s));
        println!(
            "{name}\t{}\t{:.2}\t{:.2}\t{:.2}\t{:.3}\t{:.3}",
            items.len(),
            shared_s * 1e3,
            own_s * 1e3,
            leased_s * 1e3,
            shared_s / own_s,
            leased_s / own_s
        );
    }
}
