//! Throughput and parallel efficiency of every scheduler policy on the real engine (o200k_base),
//! against the release candidate's own parallel batch encode.
//!
//! `cargo run --release --example scheduler [-- --runs N] [-- --only POLICY --threads P
//! --workload NAME --limit-bytes B]` (this file is `benchmark/scheduler.rs`; big.txt must be in
//! `.cache/corpus/`, see `scripts/corpus.js`).
//!
//! Workloads (`corpus.rs`): big.txt as ~6.5 KB documents, as ~100 B short items, and the short
//! items with four 1 MB texts among them. Contenders, each at 1 and 2 threads:
//!
//! * every [`Policy`] through `batch::encode_all` (serial once: it is the `T1` of efficiency);
//! * `static`: the batch cut by bytes into one contiguous half per thread, each thread encoding its
//!   half with no scheduler and no shared state. Not a policy: it is the hardware's ceiling (what
//!   two cores give on perfectly balanced, independent work), which separates what the scheduler
//!   costs from what the machine costs (shared L3, memory bandwidth, a noisy neighbour);
//! * `rc3`: `PipelineTokenizer::encode(Vec<String>, ..).wait()` of `tokenizers` 1.0.0-rc.3 with
//!   its `parallelism` feature, the same model built by `engine::openai`. Its pool size is
//!   `set_num_threads(p)`; with `p = 1` it encodes serially; with `p = 2` two pool threads work and
//!   the calling thread joins them, as it does by default on a 2-core machine.
//!
//! Every contender's ids are checked identical to the serial policy's before anything is timed.
//! Each round times every contender once, in an order rotated by one position per round, so slow
//! drift of a noisy machine spreads over all contenders; the median over rounds is reported.
//!
//! The medians are also written to `benchmark/results/scheduler-measured.tsv`, which
//! `simulate.rs` reads to validate its model. `--only` runs one contender repeatedly and writes
//! nothing: it is the profiling mode of `benchmark/results/epoch-profile.md`.

#[path = "corpus.rs"]
mod corpus;

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Instant;

use batchtok::batch::{Encoded, Texts, encode_all};
use batchtok::engine::{AllowedSpecial, EncodeMode, Ids, Scratch, Tokenizer};
use batchtok::scheduler::{BatchStats, CancelToken, Policy, Scheduler, SchedulerConfig};
use tokenizers::pipeline::{EncodeOptions, PipelineTokenizer};
use tokenizers::utils::parallelism::set_num_threads;

use corpus::{Workload, machine, median};

/// Rounds per workload unless `--runs` says otherwise: enough for a stable median on a noisy
/// 2-core machine while the whole benchmark stays within a few minutes.
const DEFAULT_RUNS: usize = 7;

/// Thread counts measured: the machine has two cores.
const THREADS: [usize; 2] = [1, 2];

/// What is being timed.
#[derive(Clone, Copy, PartialEq)]
enum Contender {
    Policy(Policy),
    Static,
    Rc3,
}

impl Contender {
    fn name(self) -> String {
        match self {
            Contender::Policy(p) => p.to_string(),
            Contender::Static => "static (ceiling)".to_owned(),
            Contender::Rc3 => "rc.3 encode".to_owned(),
        }
    }
}

/// Everything needed to run one workload.
struct Setup<'a> {
    tokenizer: &'a Tokenizer,
    mode: &'a EncodeMode,
    rc3: &'a PipelineTokenizer,
    workload: &'a Workload,
    texts: &'a Texts,
}

/// What one timed run produced.
struct Sample {
    seconds: f64,
    stats: Option<BatchStats>,
}

fn scheduler(policy: Policy, threads: usize) -> Scheduler {
    Scheduler::new(SchedulerConfig {
        policy,
        threads,
        ..SchedulerConfig::default()
    })
    .expect("a valid configuration")
}

fn rc3_options() -> EncodeOptions {
    // The engine's own options for an OpenAI encoding (`engine::pipeline`): no template tokens,
    // and special-token text is ordinary text (the model has no added tokens anyway).
    EncodeOptions {
        add_special_tokens: false,
        encode_special_tokens: true,
        ..EncodeOptions::default()
    }
}

/// Sets the release candidate's pool size and, when it has a pool, builds and wakes it with a
/// small untimed batch, so a timed run never pays for the pool's creation.
fn prepare_rc3(rc3: &PipelineTokenizer, threads: usize) {
    set_num_threads(threads);
    if threads > 1 {
        // Two inputs of 8 KiB pass the release candidate's parallel threshold.
        let warm = vec!["warm up the pool ".repeat(512); 2];
        black_box(rc3.encode(warm, &rc3_options()).wait().expect("warm-up"));
    }
}

/// The ids of every item, in order, as one flat list plus offsets.
fn rc3_encode(rc3: &PipelineTokenizer, inputs: Vec<String>) -> Encoded {
    let encodings = rc3
        .encode(inputs, &rc3_options())
        .wait()
        .expect("rc.3 encode");
    let mut out = Encoded {
        ids: Vec::new(),
        offsets: vec![0],
    };
    for e in &encodings {
        out.ids.extend(e.ids().iter().map(|t| t.id()));
        out.offsets.push(out.ids.len() as u32);
    }
    out
}

/// Encodes contiguous, byte-balanced ranges on `threads` scoped threads with no scheduler.
fn static_split(setup: &Setup, threads: usize) -> Vec<Ids> {
    let texts = setup.texts;
    let total = texts.total_bytes();
    let mut bounds = vec![0];
    let mut acc = 0;
    for i in 0..texts.len() {
        acc += texts.byte_len(i);
        if bounds.len() < threads && acc * threads >= total * bounds.len() {
            bounds.push(i + 1);
        }
    }
    bounds.push(texts.len());
    std::thread::scope(|scope| {
        let handles: Vec<_> = bounds
            .windows(2)
            .map(|w| {
                let range = w[0]..w[1];
                scope.spawn(move || {
                    let mut ids = Ids::default();
                    let mut scratch = Scratch::new();
                    for i in range {
                        setup
                            .tokenizer
                            .encode_into(texts.get(i), setup.mode, &mut scratch, &mut ids)
                            .expect("encode");
                    }
                    ids
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// Runs `contender` once, untimed parts (input copies, pool preparation) excluded.
fn run_once(setup: &Setup, contender: Contender, threads: usize) -> (Sample, Option<Encoded>) {
    let cancel = CancelToken::new();
    match contender {
        Contender::Policy(policy) => {
            let s = scheduler(policy, threads);
            let start = Instant::now();
            let out = encode_all(&s, setup.tokenizer, setup.texts, setup.mode, &cancel)
                .unwrap_or_else(|_| panic!("{policy} failed"));
            let seconds = start.elapsed().as_secs_f64();
            let sample = Sample {
                seconds,
                stats: s.last_stats(),
            };
            (sample, Some(out))
        }
        Contender::Static => {
            let start = Instant::now();
            let out = black_box(static_split(setup, threads));
            let seconds = start.elapsed().as_secs_f64();
            drop(out);
            (
                Sample {
                    seconds,
                    stats: None,
                },
                None,
            )
        }
        Contender::Rc3 => {
            prepare_rc3(setup.rc3, threads);
            let inputs = setup.workload.items.clone();
            let start = Instant::now();
            let out = rc3_encode(setup.rc3, inputs);
            let seconds = start.elapsed().as_secs_f64();
            (
                Sample {
                    seconds,
                    stats: None,
                },
                Some(out),
            )
        }
    }
}

/// The contenders of one workload, in their base order.
fn contenders() -> Vec<(Contender, usize)> {
    let mut list = vec![(Contender::Policy(Policy::Serial), 1)];
    for threads in THREADS {
        for policy in [Policy::Rayon, Policy::RayonMinLen, Policy::Chunked] {
            list.push((Contender::Policy(policy), threads));
        }
        list.push((Contender::Rc3, threads));
    }
    list.push((Contender::Static, 2));
    list
}

/// Panics unless every contender's ids equal the serial policy's.
fn check_outputs(setup: &Setup) {
    let (_, reference) = run_once(setup, Contender::Policy(Policy::Serial), 1);
    let reference = reference.expect("serial output");
    for (contender, threads) in contenders() {
        if let (_, Some(out)) = run_once(setup, contender, threads) {
            assert!(
                out.ids == reference.ids && out.offsets == reference.offsets,
                "{} at {threads} threads differs from serial on {}",
                contender.name(),
                setup.workload.name
            );
        }
    }
    // The static split's buffers, concatenated, are the serial ids too.
    let joined: Vec<u32> = static_split(setup, 2)
        .iter()
        .flat_map(|ids| ids.as_slice().iter().copied())
        .collect();
    assert!(joined == reference.ids, "static split differs from serial");
}

struct Row {
    contender: Contender,
    threads: usize,
    samples: Vec<Sample>,
}

impl Row {
    fn median_seconds(&self) -> f64 {
        median(&self.samples.iter().map(|s| s.seconds).collect::<Vec<_>>())
    }

    fn min_seconds(&self) -> f64 {
        self.samples
            .iter()
            .map(|s| s.seconds)
            .fold(f64::INFINITY, f64::min)
    }

    /// Stats of the run whose time is the median.
    fn median_stats(&self) -> Option<&BatchStats> {
        let m = self.median_seconds();
        self.samples
            .iter()
            .find(|s| s.seconds == m)
            .and_then(|s| s.stats.as_ref())
    }
}

fn measure(setup: &Setup, runs: usize) -> Vec<Row> {
    let mut rows: Vec<Row> = contenders()
        .into_iter()
        .map(|(contender, threads)| Row {
            contender,
            threads,
            samples: Vec::new(),
        })
        .collect();
    // One untimed round warms caches, pools and the allocator for every contender.
    for row in &rows {
        black_box(run_once(setup, row.contender, row.threads));
    }
    for round in 0..runs {
        let n = rows.len();
        for k in 0..n {
            let row = &mut rows[(k + round) % n];
            let (sample, out) = run_once(setup, row.contender, row.threads);
            drop(out);
            row.samples.push(sample);
        }
    }
    rows
}

fn report(workload: &Workload, rows: &[Row], runs: usize, tsv: &mut String) {
    let bytes = workload.bytes();
    let t1 = rows
        .iter()
        .find(|r| r.contender == Contender::Policy(Policy::Serial))
        .expect("serial is measured")
        .median_seconds();
    println!(
        "\n### {} — {} items, {:.2} MiB, median of {runs} runs\n",
        workload.name,
        workload.items.len(),
        bytes as f64 / (1 << 20) as f64
    );
    println!(
        "| contender | threads | median ms | min ms | MiB/s | efficiency | imbalance | chunks | claims | shared atomics |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for row in rows {
        let t = row.median_seconds();
        let efficiency = t1 / (row.threads as f64 * t);
        let stats = row.median_stats();
        let stat = |f: &dyn Fn(&BatchStats) -> String| stats.map_or("–".to_owned(), f);
        println!(
            "| {} | {} | {:.1} | {:.1} | {:.1} | {:.3} | {} | {} | {} | {} |",
            row.contender.name(),
            row.threads,
            t * 1e3,
            row.min_seconds() * 1e3,
            bytes as f64 / (1 << 20) as f64 / t,
            efficiency,
            stat(&|s| format!("{:.3}", s.imbalance)),
            stat(&|s| s.chunks.to_string()),
            stat(&|s| s.claims.to_string()),
            stat(&|s| s.shared_atomic_ops.to_string()),
        );
        let _ = writeln!(
            tsv,
            "{}\t{}\t{}\t{:.6}\t{:.6}\t{:.4}",
            workload.name,
            row.contender.name(),
            row.threads,
            t,
            row.min_seconds(),
            efficiency
        );
    }
    let at2 = |c: Contender| {
        rows.iter()
            .find(|r| r.contender == c && r.threads == 2)
            .map(Row::median_seconds)
    };
    if let (Some(chunked), Some(rc3)) =
        (at2(Contender::Policy(Policy::Chunked)), at2(Contender::Rc3))
    {
        println!(
            "\nchunked vs rc.3 encode at 2 threads: {:.2}x (rc.3 time / chunked time)",
            rc3 / chunked
        );
    }
}

/// `--name value` from the command line.
fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() {
    let runs = arg("--runs").map_or(DEFAULT_RUNS, |r| r.parse().expect("--runs N"));
    let tokenizer = Tokenizer::from_encoding("o200k_base").expect("o200k_base loads");
    // Every text timed here goes to the release-candidate engine, not to the rank engine that
    // serves an encoding's first texts while it is built.
    batchtok::engine::openai::find("o200k_base")
        .and_then(|encoding| encoding.model.wait_for_full_engine())
        .expect("o200k_base's engine builds");
    let mode = tokenizer
        .encode_mode(None, &AllowedSpecial::None)
        .expect("default mode");
    let rc3 = batchtok::engine::openai::pipeline_tokenizer_for_benchmarks("o200k_base")
        .expect("o200k_base builds");
    let text = corpus::big_txt();
    let workloads = corpus::workloads(&text);

    if let Some(only) = arg("--only") {
        // Profiling mode: one contender, one workload, `runs` times.
        let policy: Policy = only.parse().expect("--only POLICY");
        let threads = arg("--threads").map_or(2, |t| t.parse().expect("--threads P"));
        let name = arg("--workload").unwrap_or_else(|| "documents".to_owned());
        let mut workload = workloads
            .into_iter()
            .find(|w| w.name == name)
            .expect("--workload documents|short|skewed");
        if let Some(limit) = arg("--limit-bytes") {
            let limit: usize = limit.parse().expect("--limit-bytes B");
            let mut acc = 0;
            workload.items.retain(|item| {
                acc += item.len();
                acc <= limit
            });
        }
        let texts = corpus::texts(&workload.items);
        let s = scheduler(policy, threads);
        for _ in 0..runs {
            black_box(encode_all(&s, &tokenizer, &texts, &mode, &CancelToken::new()).ok());
        }
        println!(
            "{policy} x{threads} on {} ({} items): {:?}",
            workload.name,
            workload.items.len(),
            s.last_stats()
        );
        return;
    }

    println!("machine: {}", machine());
    let mut tsv = String::from("workload\tcontender\tthreads\tmedian_s\tmin_s\tefficiency\n");
    for workload in &workloads {
        let texts = corpus::texts(&workload.items);
        let setup = Setup {
            tokenizer: &tokenizer,
            mode: &mode,
            rc3: &rc3,
            workload,
            texts: &texts,
        };
        check_outputs(&setup);
        let rows = measure(&setup, runs);
        report(workload, &rows, runs, &mut tsv);
    }
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benchmark/results/scheduler-measured.tsv"
    );
    std::fs::create_dir_all(std::path::Path::new(path).parent().unwrap()).unwrap();
    std::fs::write(path, tsv).expect("write the measured medians");
    println!("\nmedians written to {path}");
}
