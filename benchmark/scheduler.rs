//! Throughput and parallel efficiency of every scheduler policy on the real engine (o200k_base),
//! against the release candidate's own parallel batch encode and hand-sharded independent
//! engines, at any list of thread counts.
//!
//! `cargo run --release --features rc-parallel --example scheduler [-- --runs N]
//! [--threads 1,2,4,8,12,16] [--workloads documents,chat,skewed] [--methods cold,repeated]
//! [--tsv PATH]`, or the profiling mode `-- --only POLICY --threads P --workload NAME
//! [--limit-bytes B]` (the feature adds the release candidate's parallel batch; this file is
//! `benchmark/scheduler.rs`; big.txt must be in `.cache/corpus/`, see `scripts/corpus.js`, or in
//! the folder `$BATCHTOK_CORPUS_DIR` names). `scripts/many-cores.sh` runs it on a 16-core machine.
//!
//! Workloads (`corpus.rs`): big.txt as ~6.5 KB documents, as ~100 B short items, the short items
//! with four 1 MB texts among them (skewed), and as chat-sized items of 50-300 B. Contenders, at
//! every thread count `p` of `--threads` (default 1 and 2):
//!
//! * every [`Policy`] through `batch::encode_all` (serial once, at 1 thread: it is the `T1` of
//!   efficiency, `T1 / (p · Tp)`);
//! * `rc3`: `PipelineTokenizer::encode(Vec<String>, ..).wait()` of `tokenizers` 1.0.0-rc.3 with
//!   its `parallelism` feature, the same model built by `engine::openai`. Its pool size is
//!   `set_num_threads(p)`; with `p = 1` it encodes serially, else a rayon pool of `p` threads
//!   does the work while the calling thread waits;
//! * `sharded`: what a user gets by hand without any scheduler: the batch cut by bytes into `p`
//!   contiguous shards, each encoded on its own thread by its own engine instance (its own copy
//!   of the model, its own working memory: nothing shared but the input). The threads are
//!   started and spinning before the clock starts, and the time runs to the last shard's end, so
//!   no thread start or wake-up is in it: it is the hardware's ceiling for this batch (shared L3,
//!   memory bandwidth, frequency, a noisy neighbour), which separates what the scheduler costs
//!   from what the machine costs. Byte balance is not time balance: a shard of costlier text
//!   ends last. In `sharded` the calling thread only waits, as rc.3's caller does; in
//!   `sharded+caller` it encodes the first shard, as chunked's owner takes chunks. Each shard
//!   meets the same engine, and so the same warm word cache, in every round at a given `p`, an
//!   affinity chunked's workers do not have;
//! * `sharded-shared`: the same shards, the caller taking the first, all on one shared engine
//!   instance with its working memory leased per thread as chunked's workers lease it: no
//!   scheduler, and the engine as chunked meets it. Its threads' summed encode time against the
//!   serial policy's is the work the machine and the engine add at `p` threads, which
//!   `simulate.rs` takes as its per-thread-count work factor.
//!
//! Two methods (`--methods`, both by default), each a table of its own:
//!
//! * `cold`: before every timed run, every word cache the contender will use is emptied (the
//!   served engine's and the hand-sharded engines' working memory is dropped; the release
//!   candidate keeps its caches in a pool inside the tokenizer, so each of its runs takes a new
//!   instance, built untimed). Each run meets its text as a process meets text it has never
//!   encoded: the `fresh` method of the JS benchmarks, and the headline.
//! * `repeated`: the same batch encoded again and again on warm caches. Which text each cache has
//!   seen then decides much of the time: a cache that meets the same slice of the batch in every
//!   round (the hand-sharded engines; the release candidate's per-thread pool) holds more of its
//!   words than one that meets a different slice each round (chunked's leased working memory),
//!   so this method measures cache affinity as much as scheduling.
//!
//! Every contender's ids are checked identical to the serial policy's before anything is timed.
//! Each round times every contender once, in an order rotated by one position per round, so slow
//! drift of a noisy machine spreads over all contenders; the median over rounds is reported.
//!
//! The medians are also written to `--tsv` (default `benchmark/results/scheduler-measured.tsv`),
//! which `simulate.rs` reads to validate its model. `--only` runs one contender repeatedly and
//! writes nothing: it is the profiling mode of `benchmark/results/epoch-profile.md`.

#[path = "corpus.rs"]
#[allow(dead_code)]
mod corpus;

use std::fmt::Write as _;
use std::hint::black_box;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use batchtok::batch::{Encoded, Texts, encode_all};
use batchtok::engine::openai::{self, IndependentEngine};
use batchtok::engine::{AllowedSpecial, EncodeMode, Engine, Ids, Scratch, Tokenizer};
use batchtok::scheduler::{BatchStats, CancelToken, Policy, Scheduler, SchedulerConfig};
use tokenizers::pipeline::{EncodeOptions, PipelineTokenizer};
use tokenizers::utils::parallelism::set_num_threads;

use corpus::{Workload, machine, median};

/// Rounds per workload unless `--runs` says otherwise: enough for a stable median on a noisy
/// 2-core machine while the whole benchmark stays within a few minutes.
const DEFAULT_RUNS: usize = 7;

/// Thread counts measured unless `--threads` says otherwise: the development machine's two cores.
const DEFAULT_THREADS: [usize; 2] = [1, 2];

/// The encoding every contender runs.
const ENCODING: &str = "o200k_base";

/// How each timed run meets its text (the module docs say why both).
#[derive(Clone, Copy, PartialEq, Debug)]
enum Method {
    /// Every word cache the run uses starts empty.
    Cold,
    /// The same batch again, on the caches the earlier rounds filled.
    Repeated,
}

impl Method {
    fn name(self) -> &'static str {
        match self {
            Method::Cold => "cold",
            Method::Repeated => "repeated",
        }
    }
}

/// What is being timed.
#[derive(Clone, Copy, PartialEq)]
enum Contender {
    Policy(Policy),
    /// Each shard on its own engine instance. `caller_works`: the calling thread encodes the
    /// first shard, as chunked's owner takes chunks; else it only waits, as rc.3's caller does.
    Sharded {
        caller_works: bool,
    },
    /// Each shard on one shared engine instance, the caller taking the first.
    ShardedShared,
    Rc3,
}

impl Contender {
    fn name(self) -> String {
        match self {
            Contender::Policy(p) => p.to_string(),
            Contender::Sharded {
                caller_works: false,
            } => "sharded".to_owned(),
            Contender::Sharded { caller_works: true } => "sharded+caller".to_owned(),
            Contender::ShardedShared => "sharded-shared".to_owned(),
            Contender::Rc3 => "rc.3 encode".to_owned(),
        }
    }
}

/// Release-candidate tokenizers no text has met yet, for the cold method: each cold run of
/// `rc.3 encode` takes one, since nothing outside the tokenizer can empty the pool its word
/// caches live in. Built a machine's worth at a time, in parallel, and never inside a timed run.
#[derive(Default)]
struct FreshRc3(Mutex<Vec<PipelineTokenizer>>);

impl FreshRc3 {
    fn take(&self) -> PipelineTokenizer {
        let mut stock = self.0.lock().expect("no build panicked");
        if stock.is_empty() {
            let builds = std::thread::available_parallelism().map_or(1, usize::from);
            *stock = std::thread::scope(|scope| {
                let handles: Vec<_> = (0..builds)
                    .map(|_| scope.spawn(|| openai::pipeline_tokenizer_for_benchmarks(ENCODING)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("a build").expect("o200k_base builds"))
                    .collect()
            });
        }
        stock.pop().expect("just built")
    }
}

/// Everything needed to run one workload.
struct Setup<'a> {
    tokenizer: &'a Tokenizer,
    mode: &'a EncodeMode,
    /// The release candidate's tokenizer of the repeated method, and the one that warms its pool.
    rc3: &'a PipelineTokenizer,
    fresh_rc3: &'a FreshRc3,
    /// The engine of each shard, for `sharded`: at least as many as the largest thread count.
    engines: &'a [IndependentEngine],
    /// The one engine every shard of `sharded-shared` uses.
    shared_engine: &'a IndependentEngine,
    workload: &'a Workload,
    texts: &'a Texts,
    method: Method,
}

/// What one timed run produced.
struct Sample {
    seconds: f64,
    stats: Option<BatchStats>,
    /// The threads' summed encode time, where the contender tells it: the scheduler's busy time
    /// per worker, or each shard's time on its thread.
    busy_seconds: Option<f64>,
    /// A policy's own wall time, from the plan to the last worker's end: `seconds` less the
    /// output's assembly.
    scheduler_seconds: Option<f64>,
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
/// small untimed batch, so a timed run never pays for the pool's creation. (`set_num_threads`
/// retires the pool it had, so each call builds a new one.)
fn prepare_rc3(rc3: &PipelineTokenizer, threads: usize) {
    set_num_threads(threads);
    if threads > 1 {
        // One input of 8 KiB per thread passes the release candidate's parallel threshold and
        // gives every pool thread something to do.
        let warm = vec!["warm up the pool ".repeat(512); threads];
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

/// `shards + 1` item indices that cut `texts` into contiguous ranges of about equal bytes.
fn shard_bounds(texts: &Texts, shards: usize) -> Vec<usize> {
    let total = texts.total_bytes();
    let mut bounds = vec![0];
    let mut acc = 0;
    for i in 0..texts.len() {
        acc += texts.byte_len(i);
        if bounds.len() < shards && acc * shards >= total * bounds.len() {
            bounds.push(i + 1);
        }
    }
    while bounds.len() <= shards {
        bounds.push(texts.len());
    }
    bounds
}

/// One shard's output: its ids, and each of its items' end within them.
struct Shard {
    ids: Ids,
    ends: Vec<u32>,
}

/// Encodes `engines.len()` byte-balanced contiguous shards of `texts`, shard `k` on its own thread
/// with `engines[k]`; the calling thread takes the first when `caller_works`. Returns the time
/// from the start signal to the last shard's end, the shards' summed encode time, and the shards.
fn sharded(texts: &Texts, engines: &[&dyn Engine], caller_works: bool) -> (f64, f64, Vec<Shard>) {
    let threads = engines.len();
    let bounds = shard_bounds(texts, threads);
    let ready = AtomicUsize::new(0);
    let go = AtomicBool::new(false);
    let encode_shard = |k: usize| {
        let started = Instant::now();
        let engine = engines[k];
        let mut shard = Shard {
            ids: Ids::default(),
            ends: Vec::with_capacity(bounds[k + 1] - bounds[k]),
        };
        let mut scratch = Scratch::new();
        for i in bounds[k]..bounds[k + 1] {
            engine
                .encode_into(texts.get(i), false, false, &mut scratch, &mut shard.ids)
                .expect("encode");
            shard.ends.push(shard.ids.len() as u32);
        }
        let end = Instant::now();
        (end, (end - started).as_secs_f64(), shard)
    };
    std::thread::scope(|scope| {
        let first_spawned = usize::from(caller_works);
        let handles: Vec<_> = (first_spawned..threads)
            .map(|k| {
                let (ready, go, encode_shard) = (&ready, &go, &encode_shard);
                scope.spawn(move || {
                    ready.fetch_add(1, Ordering::Release);
                    // Spin, not park: a wake-up would put the very cost the ceiling leaves out
                    // back into its time. The yield keeps an oversubscribed machine moving.
                    let mut spins = 0u32;
                    while !go.load(Ordering::Acquire) {
                        std::hint::spin_loop();
                        spins = spins.wrapping_add(1);
                        if spins.is_multiple_of(1024) {
                            std::thread::yield_now();
                        }
                    }
                    encode_shard(k)
                })
            })
            .collect();
        while ready.load(Ordering::Acquire) < threads - first_spawned {
            std::thread::yield_now();
        }
        let start = Instant::now();
        go.store(true, Ordering::Release);
        let (mut end, mut busy, mut shards) = if caller_works {
            let (end, busy, first) = encode_shard(0);
            (end, busy, vec![first])
        } else {
            (start, 0.0, Vec::new())
        };
        for handle in handles {
            let (finished, shard_busy, shard) = handle.join().expect("a shard's thread panicked");
            end = end.max(finished);
            busy += shard_busy;
            shards.push(shard);
        }
        ((end - start).as_secs_f64(), busy, shards)
    })
}

/// The shards' outputs as one batch output.
fn join_shards(shards: &[Shard]) -> Encoded {
    let mut out = Encoded {
        ids: Vec::new(),
        offsets: vec![0],
    };
    for shard in shards {
        let base = out.ids.len() as u32;
        out.ids.extend_from_slice(shard.ids.as_slice());
        out.offsets.extend(shard.ends.iter().map(|end| base + end));
    }
    out
}

/// Runs `contender` once, untimed parts (input copies, pool preparation, emptying caches,
/// joining shards) excluded; the output only when `want_output`.
fn run_once(
    setup: &Setup,
    contender: Contender,
    threads: usize,
    want_output: bool,
) -> (Sample, Option<Encoded>) {
    let cancel = CancelToken::new();
    let cold = setup.method == Method::Cold;
    match contender {
        Contender::Policy(policy) => {
            let s = scheduler(policy, threads);
            if cold {
                openai::find(ENCODING)
                    .expect("embedded")
                    .model
                    .forget_word_caches_for_benchmarks();
            }
            let start = Instant::now();
            let out = encode_all(&s, setup.tokenizer, setup.texts, setup.mode, &cancel)
                .unwrap_or_else(|_| panic!("{policy} failed"));
            let seconds = start.elapsed().as_secs_f64();
            let stats = s.last_stats();
            let busy_seconds = stats
                .as_ref()
                .map(|s| s.per_worker_busy_ns.iter().sum::<u64>() as f64 * 1e-9);
            let scheduler_seconds = stats.as_ref().map(|s| s.wall_ns as f64 * 1e-9);
            let sample = Sample {
                seconds,
                stats,
                busy_seconds,
                scheduler_seconds,
            };
            (sample, Some(out))
        }
        Contender::Sharded { .. } | Contender::ShardedShared => {
            let engines: Vec<&IndependentEngine> = match contender {
                Contender::ShardedShared => vec![setup.shared_engine; threads],
                _ => setup.engines[..threads].iter().collect(),
            };
            if cold {
                for engine in &engines {
                    engine.forget_word_caches();
                }
            }
            let engines: Vec<&dyn Engine> = engines.iter().map(|e| e.engine()).collect();
            let caller_works = !matches!(
                contender,
                Contender::Sharded {
                    caller_works: false
                }
            );
            let (seconds, busy, shards) = sharded(setup.texts, &engines, caller_works);
            let out = want_output.then(|| join_shards(&shards));
            let sample = Sample {
                seconds,
                stats: None,
                busy_seconds: Some(busy),
                scheduler_seconds: None,
            };
            (sample, out)
        }
        Contender::Rc3 => {
            prepare_rc3(setup.rc3, threads);
            let fresh;
            let rc3 = if cold {
                fresh = setup.fresh_rc3.take();
                &fresh
            } else {
                setup.rc3
            };
            let inputs = setup.workload.items.clone();
            let start = Instant::now();
            let out = rc3_encode(rc3, inputs);
            let seconds = start.elapsed().as_secs_f64();
            let sample = Sample {
                seconds,
                stats: None,
                busy_seconds: None,
                scheduler_seconds: None,
            };
            (sample, Some(out))
        }
    }
}

/// The contenders of one workload, in their base order.
fn contenders(thread_counts: &[usize]) -> Vec<(Contender, usize)> {
    let mut list = vec![(Contender::Policy(Policy::Serial), 1)];
    for &threads in thread_counts {
        for policy in [Policy::Rayon, Policy::RayonMinLen, Policy::Chunked] {
            list.push((Contender::Policy(policy), threads));
        }
        list.push((Contender::Rc3, threads));
        for caller_works in [false, true] {
            list.push((Contender::Sharded { caller_works }, threads));
        }
        list.push((Contender::ShardedShared, threads));
    }
    list
}

/// Panics unless every contender's ids and offsets equal the serial policy's.
fn check_outputs(setup: &Setup, thread_counts: &[usize]) {
    let (_, reference) = run_once(setup, Contender::Policy(Policy::Serial), 1, true);
    let reference = reference.expect("serial output");
    for (contender, threads) in contenders(thread_counts) {
        let (_, out) = run_once(setup, contender, threads, true);
        let out = out.expect("an output when asked for");
        assert!(
            out.ids == reference.ids && out.offsets == reference.offsets,
            "{} at {threads} threads differs from serial on {}",
            contender.name(),
            setup.workload.name
        );
    }
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

    /// The median of a figure every run gives, or `None` where the contender does not give it.
    fn median_of(&self, figure: impl Fn(&Sample) -> Option<f64>) -> Option<f64> {
        let values: Option<Vec<f64>> = self.samples.iter().map(figure).collect();
        values.map(|v| median(&v))
    }
}

fn measure(setup: &Setup, thread_counts: &[usize], runs: usize) -> Vec<Row> {
    let mut rows: Vec<Row> = contenders(thread_counts)
        .into_iter()
        .map(|(contender, threads)| Row {
            contender,
            threads,
            samples: Vec::new(),
        })
        .collect();
    // One untimed round warms caches, pools and the allocator for every contender.
    for row in &rows {
        black_box(run_once(setup, row.contender, row.threads, false));
    }
    for round in 0..runs {
        let n = rows.len();
        for k in 0..n {
            let row = &mut rows[(k + round) % n];
            let (sample, out) = run_once(setup, row.contender, row.threads, false);
            drop(out);
            row.samples.push(sample);
        }
    }
    rows
}

fn report(
    method: Method,
    workload: &Workload,
    rows: &[Row],
    thread_counts: &[usize],
    runs: usize,
    tsv: &mut String,
) {
    let bytes = workload.bytes();
    let mib = bytes as f64 / (1 << 20) as f64;
    let t1 = rows
        .iter()
        .find(|r| r.contender == Contender::Policy(Policy::Serial))
        .expect("serial is measured")
        .median_seconds();
    println!(
        "\n### {}, {} method — {} items, {mib:.2} MiB, median of {runs} runs\n",
        workload.name,
        method.name(),
        workload.items.len(),
    );
    println!(
        "| contender | threads | median ms | min ms | MiB/s | efficiency | busy ms | imbalance | chunks | claims | shared atomics |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for row in rows {
        let t = row.median_seconds();
        let efficiency = t1 / (row.threads as f64 * t);
        let stats = row.median_stats();
        let stat = |f: &dyn Fn(&BatchStats) -> String| stats.map_or("–".to_owned(), f);
        let busy = row.median_of(|s| s.busy_seconds);
        println!(
            "| {} | {} | {:.2} | {:.2} | {:.1} | {:.3} | {} | {} | {} | {} | {} |",
            row.contender.name(),
            row.threads,
            t * 1e3,
            row.min_seconds() * 1e3,
            mib / t,
            efficiency,
            busy.map_or("–".to_owned(), |b| format!("{:.2}", b * 1e3)),
            stat(&|s| format!("{:.3}", s.imbalance)),
            stat(&|s| s.chunks.to_string()),
            stat(&|s| s.claims.to_string()),
            stat(&|s| s.shared_atomic_ops.to_string()),
        );
        let seconds_or_dash = |s: Option<f64>| s.map_or("-".to_owned(), |s| format!("{s:.6}"));
        let _ = writeln!(
            tsv,
            "{}\t{}\t{}\t{}\t{:.6}\t{:.6}\t{:.4}\t{}\t{}",
            method.name(),
            workload.name,
            row.contender.name(),
            row.threads,
            t,
            row.min_seconds(),
            efficiency,
            seconds_or_dash(busy),
            seconds_or_dash(row.median_of(|s| s.scheduler_seconds)),
        );
    }

    // The same medians by thread count: efficiency T1 / (p · Tp) of each contender, and chunked's
    // speed over the release candidate's parallel batch (rc.3's time / chunked's time).
    let time = |c: Contender, p: usize| {
        rows.iter()
            .find(|r| r.contender == c && r.threads == p)
            .map(Row::median_seconds)
    };
    let columns = [
        Contender::Policy(Policy::Chunked),
        Contender::Policy(Policy::Rayon),
        Contender::Policy(Policy::RayonMinLen),
        Contender::Rc3,
        Contender::Sharded {
            caller_works: false,
        },
        Contender::Sharded { caller_works: true },
        Contender::ShardedShared,
    ];
    println!(
        "\n{}, {} method: efficiency T1 / (p · Tp), T1 = serial {:.2} ms ({:.1} MiB/s)\n",
        workload.name,
        method.name(),
        t1 * 1e3,
        mib / t1
    );
    let names: Vec<String> = columns.iter().map(|c| c.name()).collect();
    println!(
        "| threads | {} | chunked MiB/s | chunked vs rc.3 encode |",
        names.join(" | ")
    );
    println!("| ---: |{} ---: | ---: |", " ---: |".repeat(columns.len()));
    for &p in thread_counts {
        let cells: Vec<String> = columns
            .iter()
            .map(|&c| {
                time(c, p).map_or("–".to_owned(), |t| format!("{:.3}", t1 / (p as f64 * t)))
            })
            .collect();
        let chunked = time(Contender::Policy(Policy::Chunked), p).expect("chunked is measured");
        let rc3 = time(Contender::Rc3, p).expect("rc.3 is measured");
        println!(
            "| {p} | {} | {:.1} | {:.2}x |",
            cells.join(" | "),
            mib / chunked,
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

/// A comma-separated list of thread counts, each at least 1.
fn thread_list(list: &str) -> Vec<usize> {
    list.split(',')
        .map(|t| match t.trim().parse::<usize>() {
            Ok(p) if p >= 1 => p,
            _ => panic!(
                "--threads takes thread counts of 1 or more, comma-separated (1,2,4), not {list:?}"
            ),
        })
        .collect()
}

fn main() {
    let runs = arg("--runs").map_or(DEFAULT_RUNS, |r| r.parse().expect("--runs N"));
    let thread_counts = arg("--threads").map_or(DEFAULT_THREADS.to_vec(), |t| thread_list(&t));
    let methods = arg("--methods").map_or(vec![Method::Cold, Method::Repeated], |m| {
        m.split(',')
            .map(|name| match name.trim() {
                "cold" => Method::Cold,
                "repeated" => Method::Repeated,
                other => {
                    panic!("--methods takes cold and repeated, comma-separated, not {other:?}")
                }
            })
            .collect()
    });
    let tokenizer = Tokenizer::from_encoding(ENCODING).expect("o200k_base loads");
    // Every text timed here goes to the release-candidate engine, not to the rank engine that
    // serves an encoding's first texts while it is built.
    batchtok::engine::openai::find(ENCODING)
        .and_then(|encoding| encoding.model.wait_for_full_engine())
        .expect("the encoding's engine builds");
    let mode = tokenizer
        .encode_mode(None, &AllowedSpecial::None)
        .expect("default mode");
    let text = corpus::big_txt();
    let mut workloads = corpus::workloads(&text);
    let independent =
        || openai::independent_engine_for_benchmarks(ENCODING).expect("o200k_base builds");

    if let Some(only) = arg("--only") {
        // Profiling mode: one contender, one workload, `runs` times, on warm caches. `sharded`
        // and `sharded-shared` (every shard on one engine instance) run the hand-sharded
        // contender with the caller taking the first shard.
        let [threads] = thread_counts[..] else {
            panic!("--only takes one thread count: --threads P");
        };
        let name = arg("--workload").unwrap_or_else(|| "documents".to_owned());
        let mut workload = workloads
            .into_iter()
            .find(|w| w.name == name)
            .expect("--workload documents|short|skewed|chat");
        if let Some(limit) = arg("--limit-bytes") {
            let limit: usize = limit.parse().expect("--limit-bytes B");
            let mut acc = 0;
            workload.items.retain(|item| {
                acc += item.len();
                acc <= limit
            });
        }
        let texts = corpus::texts(&workload.items);
        if only == "sharded" || only == "sharded-shared" {
            let instances = if only == "sharded" { threads } else { 1 };
            let loaded: Vec<IndependentEngine> = (0..instances).map(|_| independent()).collect();
            let engines: Vec<&dyn Engine> = (0..threads)
                .map(|k| loaded[k % instances].engine())
                .collect();
            let ms: Vec<f64> = (0..runs)
                .map(|_| sharded(&texts, &engines, true).0 * 1e3)
                .collect();
            println!(
                "{only} x{threads} on {} ({} items, {instances} engine instances): median {:.2} ms, min {:.2} ms",
                workload.name,
                workload.items.len(),
                median(&ms),
                ms.iter().copied().fold(f64::INFINITY, f64::min),
            );
            return;
        }
        let policy: Policy = only
            .parse()
            .expect("--only takes a policy, sharded or sharded-shared");
        let s = scheduler(policy, threads);
        // `--spawned`: the calling thread is a fresh thread rather than the process's main one.
        let spawned = std::env::args().any(|a| a == "--spawned");
        let time_runs = || {
            (0..runs)
                .map(|_| {
                    let start = Instant::now();
                    black_box(encode_all(&s, &tokenizer, &texts, &mode, &CancelToken::new()).ok());
                    start.elapsed().as_secs_f64() * 1e3
                })
                .collect::<Vec<f64>>()
        };
        let ms = if spawned {
            std::thread::scope(|scope| scope.spawn(time_runs).join().expect("runs"))
        } else {
            time_runs()
        };
        let stats = s.last_stats().expect("a batch ran");
        // How much of the last run's p · wall the workers spent encoding.
        let busy: u64 = stats.per_worker_busy_ns.iter().sum();
        println!(
            "{policy} x{threads} on {} ({} items, {} thread): median {:.2} ms, min {:.2} ms; last run: busy {:.3} of p · wall, {} participants, {} wake-ups; {:?}",
            workload.name,
            workload.items.len(),
            if spawned { "a spawned" } else { "the main" },
            median(&ms),
            ms.iter().copied().fold(f64::INFINITY, f64::min),
            busy as f64 / (threads as f64 * stats.wall_ns as f64),
            stats.participants,
            stats.wakeups,
            stats.per_worker_busy_ns,
        );
        return;
    }

    if let Some(names) = arg("--workloads") {
        let wanted: Vec<&str> = names.split(',').map(str::trim).collect();
        for name in &wanted {
            assert!(
                workloads.iter().any(|w| w.name == *name),
                "--workloads takes names from documents,short,skewed,chat, not {name:?}"
            );
        }
        workloads.retain(|w| wanted.contains(&w.name));
    }
    let rc3 = openai::pipeline_tokenizer_for_benchmarks(ENCODING).expect("o200k_base builds");
    let fresh_rc3 = FreshRc3::default();
    let max_threads = thread_counts.iter().copied().max().unwrap_or(1);
    let engines: Vec<IndependentEngine> = (0..max_threads).map(|_| independent()).collect();
    let shared_engine = independent();

    println!("machine: {}", machine());
    let names: Vec<&str> = methods.iter().map(|m| m.name()).collect();
    println!(
        "threads: {thread_counts:?}, rounds: {runs}, methods: {}",
        names.join(", ")
    );
    let mut tsv = String::from(
        "method\tworkload\tcontender\tthreads\tmedian_s\tmin_s\tefficiency\tbusy_s\tscheduler_s\n",
    );
    for workload in &workloads {
        let texts = corpus::texts(&workload.items);
        for &method in &methods {
            let setup = Setup {
                tokenizer: &tokenizer,
                mode: &mode,
                rc3: &rc3,
                fresh_rc3: &fresh_rc3,
                engines: &engines,
                shared_engine: &shared_engine,
                workload,
                texts: &texts,
                method,
            };
            check_outputs(&setup, &thread_counts);
            let rows = measure(&setup, &thread_counts, runs);
            report(method, workload, &rows, &thread_counts, runs, &mut tsv);
        }
    }
    let path = arg("--tsv").unwrap_or_else(|| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/benchmark/results/scheduler-measured.tsv"
        )
        .to_owned()
    });
    if let Some(parent) = std::path::Path::new(&path).parent() {
        std::fs::create_dir_all(parent).expect("create the medians' folder");
    }
    std::fs::write(&path, tsv).expect("write the measured medians");
    println!("\nmedians written to {path}");
}
