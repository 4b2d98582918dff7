//! More threads against one on fresh slices, without JS: the scheduler and the engine alone, on
//! the slices `fresh.mjs` times from JS.
//!
//! `cargo run --release --example fresh_scaling [-- --rounds N] [--threads 1,2,4,8,16]
//! [--corpora prose,code,...]` (this file is `benchmark/fresh_scaling.rs`; `node scripts/corpus.js
//! corpora` writes the corpora to `.cache/corpus/NAME.jsonl`, or `$BATCHTOK_CORPUS_DIR` names
//! another folder that holds them).
//!
//! `fresh.mjs` reports `encodeBatch` at 2 threads against 1 on slices of ~100 documents (~650 KB;
//! chat: 4,000 items) that the process has never encoded, and `fresh-threads.mjs` at more thread
//! counts. That ratio holds everything a call does: the main thread copying the strings, the
//! hand-over to a libuv thread, the scheduler, the engine on cold word caches, the ids assembled
//! and handed back. This program times the middle part only, `batch::encode_all` on one shared
//! o200k_base `Tokenizer` as the addon runs it, so the difference between the two ratios is what
//! the JS boundary costs the scaling.
//!
//! Each sample is one slice never encoded before in the process: before every timed call the
//! engine's word caches are dropped, so each call meets the text as a fresh process does. A round
//! times every thread count once, each on its own slice, in an order rotated by one per round.
//! Every scheduler is warmed on the corpus's last slice, which is never timed. Prints, per thread
//! count, the median MiB/s, its ratio to the first thread count's, the median of the rounds' own
//! ratios, and the process's CPU time over wall time per call (how many cores the call kept
//! busy).

#[path = "corpus.rs"]
#[allow(dead_code)]
mod corpus;
#[path = "cpu_time.rs"]
#[allow(dead_code)]
mod cpu_time;

use std::time::Instant;

use batchtok::batch::{Texts, encode_all};
use batchtok::engine::{AllowedSpecial, Tokenizer, openai};
use batchtok::scheduler::{CancelToken, Policy, Scheduler, SchedulerConfig};

use corpus::{arg, machine, median, read_corpus, texts};
use cpu_time::process_cpu_seconds;

/// The encoding `fresh.mjs`'s headline uses.
const ENCODING: &str = "o200k_base";
/// Items per slice, as `fresh.mjs` cuts them: documents, or chat-sized items of about the same
/// total size.
const DOCUMENTS_PER_SLICE: usize = 100;
const CHAT_ITEMS_PER_SLICE: usize = 4000;
/// Samples per thread count unless `--rounds` says otherwise.
const DEFAULT_ROUNDS: usize = 24;

/// One timed call: MiB/s and CPU seconds per wall second.
fn time_call(
    scheduler: &Scheduler,
    tokenizer: &Tokenizer,
    slice: &Texts,
    mode: &batchtok::engine::EncodeMode,
) -> (f64, f64) {
    openai::find(ENCODING)
        .expect("embedded")
        .model
        .forget_word_caches_for_benchmarks();
    let cpu = process_cpu_seconds();
    let start = Instant::now();
    let encoded = encode_all(scheduler, tokenizer, slice, mode, &CancelToken::default())
        .unwrap_or_else(|_| panic!("the slice encodes"));
    let wall = start.elapsed().as_secs_f64();
    let busy = (process_cpu_seconds() - cpu) / wall;
    std::hint::black_box(encoded);
    (slice.total_bytes() as f64 / (1 << 20) as f64 / wall, busy)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rounds: usize =
        arg(&args, "--rounds").map_or(DEFAULT_ROUNDS, |r| r.parse().expect("--rounds N"));
    let corpora = arg(&args, "--corpora").unwrap_or("prose,code,multilingual,chat");
    let counts: Vec<usize> = arg(&args, "--threads")
        .unwrap_or("1,2")
        .split(',')
        .map(|t| match t.parse() {
            Ok(n) if n > 0 => n,
            _ => panic!("--threads takes thread counts above 0, such as 1,2,4"),
        })
        .collect();
    let base = counts[0];

    let tokenizer = Tokenizer::from_encoding(ENCODING).expect("embedded");
    tokenizer
        .wait_until_ready()
        .expect("the release candidate builds");
    let mode = tokenizer
        .encode_mode(None, &AllowedSpecial::None)
        .expect("ordinary mode");
    let schedulers: Vec<Scheduler> = counts
        .iter()
        .map(|&threads| {
            Scheduler::new(SchedulerConfig {
                threads,
                policy: Policy::Chunked,
                ..SchedulerConfig::default()
            })
            .expect("a valid configuration")
        })
        .collect();

    println!(
        "{}; {ENCODING}, `encode_all` on the chunked policy, {rounds} rounds",
        machine()
    );
    println!();
    println!(
        "| corpus | slices | threads | MiB/s | ÷ {base} thread(s) | rounds' median ÷ {base} | cores busy |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for name in corpora.split(',') {
        let name: &'static str = Box::leak(name.to_owned().into_boxed_str());
        let corpus = read_corpus(name, None);
        let per = if name == "chat" {
            CHAT_ITEMS_PER_SLICE
        } else {
            DOCUMENTS_PER_SLICE
        };
        let slices: Vec<Texts> = corpus.texts.chunks(per).map(texts).collect();
        let (warm, timed) = slices.split_last().expect("a corpus has texts");
        assert!(timed.len() >= 2, "{name}: too few slices");
        for scheduler in &schedulers {
            encode_all(scheduler, &tokenizer, warm, &mode, &CancelToken::default())
                .unwrap_or_else(|_| panic!("the warm-up encodes"));
        }
        let mut rates = vec![Vec::new(); counts.len()];
        let mut busy = vec![Vec::new(); counts.len()];
        let mut ratios = vec![Vec::new(); counts.len()];
        let mut next_slice = 0;
        for round in 0..rounds {
            let mut rate_of = vec![0.0; counts.len()];
            for step in 0..counts.len() {
                let slot = (round + step) % counts.len();
                let slice = &timed[next_slice % timed.len()];
                next_slice += 1;
                let (rate, cores) = time_call(&schedulers[slot], &tokenizer, slice, &mode);
                rates[slot].push(rate);
                busy[slot].push(cores);
                rate_of[slot] = rate;
            }
            for (slot, rate) in rate_of.iter().enumerate() {
                ratios[slot].push(rate / rate_of[0]);
            }
        }
        let at_base = median(&rates[0]);
        for (slot, threads) in counts.iter().enumerate() {
            let rate = median(&rates[slot]);
            println!(
                "| {name} | {} of {} KiB | {threads} | {rate:.1} | {:.2}x | {:.2}x | {:.2} |",
                timed.len(),
                corpus.bytes / slices.len() / 1024,
                rate / at_base,
                median(&ratios[slot]),
                median(&busy[slot]),
            );
        }
    }
}
