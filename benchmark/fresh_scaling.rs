//! Two threads against one on fresh slices, without JS: the scheduler and the engine alone, on
//! the slices `fresh.mjs` times from JS.
//!
//! `cargo run --release --example fresh_scaling [-- --rounds N] [--corpora prose,code,...]`
//! (this file is `benchmark/fresh_scaling.rs`; `node scripts/corpus.js corpora` writes the
//! corpora to `.cache/corpus/NAME.jsonl`).
//!
//! `fresh.mjs` reports `encodeBatch` at 2 threads against 1 on slices of ~100 documents (~650 KB;
//! chat: 4,000 items) that the process has never encoded. That ratio holds everything a call
//! does: the main thread copying the strings, the hand-over to a libuv thread, the scheduler, the
//! engine on cold word caches, the ids assembled and handed back. This program times the middle
//! part only, `batch::encode_all` on one shared o200k_base `Tokenizer` as the addon runs it, so
//! the difference between the two ratios is what the JS boundary costs the scaling.
//!
//! Each sample is one slice never encoded before in the process: before every timed call the
//! engine's word caches are dropped, so each call meets the text as a fresh process does, and
//! the slices are taken in turn, alternating which thread count goes first. Both schedulers are
//! warmed on the corpus's last slice, which is never timed. Prints the median MiB/s at each
//! thread count, their ratio, the median of the ratios of consecutive pairs, and the process's
//! CPU time over wall time per call (how many cores the call kept busy).

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

    let tokenizer = Tokenizer::from_encoding(ENCODING).expect("embedded");
    tokenizer
        .wait_until_ready()
        .expect("the release candidate builds");
    let mode = tokenizer
        .encode_mode(None, &AllowedSpecial::None)
        .expect("ordinary mode");
    let scheduler = |threads| {
        Scheduler::new(SchedulerConfig {
            threads,
            policy: Policy::Chunked,
            ..SchedulerConfig::default()
        })
        .expect("a valid configuration")
    };
    let (one, two) = (scheduler(1), scheduler(2));

    println!(
        "{}; {ENCODING}, `encode_all` on the chunked policy",
        machine()
    );
    println!();
    println!(
        "| corpus | slices | 1 thread MiB/s | 2 threads MiB/s | 2 ÷ 1 | pairs' median 2 ÷ 1 | cores busy at 1 / 2 |"
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
        for scheduler in [&one, &two] {
            encode_all(scheduler, &tokenizer, warm, &mode, &CancelToken::default())
                .unwrap_or_else(|_| panic!("the warm-up encodes"));
        }
        let (mut rates, mut busy) = ([Vec::new(), Vec::new()], [Vec::new(), Vec::new()]);
        let mut pairs = Vec::new();
        for round in 0..rounds {
            let first = &timed[(2 * round) % timed.len()];
            let second = &timed[(2 * round + 1) % timed.len()];
            let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
            let mut pair = [0.0; 2];
            for (slot, slice) in order.into_iter().zip([first, second]) {
                let (rate, cores) = time_call([&one, &two][slot], &tokenizer, slice, &mode);
                rates[slot].push(rate);
                busy[slot].push(cores);
                pair[slot] = rate;
            }
            pairs.push(pair[1] / pair[0]);
        }
        let (at_one, at_two) = (median(&rates[0]), median(&rates[1]));
        println!(
            "| {name} | {} of {} KiB | {at_one:.1} | {at_two:.1} | {:.2}x | {:.2}x | {:.2} / {:.2} |",
            timed.len(),
            corpus.bytes / slices.len() / 1024,
            at_two / at_one,
            median(&pairs),
            median(&busy[0]),
            median(&busy[1]),
        );
    }
}
