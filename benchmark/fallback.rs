//! The stable fallback against the main engine, per tokenizer.json, at 1 and 2 threads.
//!
//! For each file (the fixtures, a GPT-2 with `add_prefix_space`, the Unigram fixture written as
//! transformers' SentencePiece converters write such files, and the real model files
//! `node scripts/real-tokenizers.js` fetches), the same documents of big.txt are encoded by:
//! - main: the engine that encodes the tokenizer's ordinary text (`Tokenizer::main_engine`: the
//!   release candidate, or the stable engine where the route sends every text there);
//! - stable: the stable engine alone (`Tokenizer::fallback_engine`), as batchtok's workers call it;
//! - stable-own: a `tokenizers` 0.23 `Tokenizer` of each thread's own (the second a clone of the
//!   first, whose cost in allocated memory the last column gives), called directly: what the
//!   stable engine gives with nothing shared between threads. Read by the crate's own reader, it
//!   keeps the crate's word cache, which the stable engine leaves off (`stable_reader.rs`).
//!
//! Each contender runs on 1 and on 2 threads (thread `t` takes items `t, t + 2, ...`), and every
//! contender's ids are checked equal to the stable engine's before timing. Rounds are interleaved,
//! each starting with the next contender; the table holds medians in MiB/s, the stable engine's
//! speed as a share of the main engine's per thread, and each contender's efficiency at 2 threads
//! (its 2-thread rate over twice its 1-thread rate) by wall time and by CPU time. The CPU-time
//! figure (the CPU seconds one thread spends on all the items over the CPU seconds two threads
//! spend together) is what threads cost each other; the wall-time one also holds whatever else
//! the machine runs, which on a shared machine can be most of it.
//!
//! `cargo run --release --example fallback [-- --runs N --bytes B --only NAME,NAME]`

#[allow(dead_code)]
#[path = "corpus.rs"]
mod corpus;
#[path = "cpu_time.rs"]
#[allow(dead_code)]
mod cpu_time;

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use batchtok::engine::{AllowedSpecial, Engine, Ids, Scratch, Tokenizer};
use corpus::{DOCUMENT_BYTES, big_txt, machine, median, split_at_lines};
use cpu_time::thread_cpu_seconds;
use tokenizers_stable::Tokenizer as StableTokenizer;

const DEFAULT_RUNS: usize = 5;
/// The first this many bytes of big.txt (at a document boundary): about a second of the stable
/// engine's work per round on one thread.
const DEFAULT_BYTES: usize = 2_000_000;

/// The wall time and the CPU time (summed over the threads) of one run, in seconds.
#[derive(Clone, Copy)]
struct Times {
    wall: f64,
    cpu: f64,
}

/// Runs `worker(t)`'s closure over thread `t`'s share of `items` on `threads` threads.
fn run<W: FnMut(&str)>(
    threads: usize,
    items: &[String],
    worker: impl Fn(usize) -> W + Sync,
) -> Times {
    let started = Instant::now();
    let cpu = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let worker = &worker;
                scope.spawn(move || {
                    let mut encode = worker(t);
                    for item in items.iter().skip(t).step_by(threads) {
                        encode(item);
                    }
                    thread_cpu_seconds()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("no panic"))
            .sum()
    });
    Times {
        wall: started.elapsed().as_secs_f64(),
        cpu,
    }
}

/// The system allocator, counting the bytes it holds, so that the cost of a clone is what the
/// clone allocates (resident memory would hide it: the allocator reuses pages that the parse of the
/// file freed). Unused where the build makes mimalloc the global allocator (see below).
#[cfg_attr(batchtok_mimalloc, allow(dead_code))]
struct CountingAllocator;

static ALLOCATED: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed on to `System` unchanged; the counter only observes sizes.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATED.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which `System` shares.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        ALLOCATED.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` was allocated by `System` with `layout`, as the caller guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATED.fetch_add(new_size, Ordering::Relaxed);
        ALLOCATED.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: as for `dealloc`, and `new_size` is valid for `layout`'s alignment.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

// Where the addon's build makes mimalloc the global allocator (build.rs: x86_64 Linux among others),
// that one stays, and the clone column reads 0.
#[cfg(not(batchtok_mimalloc))]
#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// A worker calling `engine` with a scratch of its own for its whole share, as batchtok's do.
fn engine_worker<'e>(engine: &'e dyn Engine) -> impl FnMut(&str) + 'e {
    let mut scratch = Scratch::new();
    let mut ids = Ids::default();
    move |item| {
        ids.clear();
        engine
            .encode_into(item, true, true, &mut scratch, &mut ids)
            .expect("encodes");
        black_box(&ids);
    }
}

/// A worker calling a `tokenizers` 0.23 tokenizer directly.
fn stable_worker(tokenizer: &StableTokenizer) -> impl FnMut(&str) + '_ {
    move |item| {
        black_box(tokenizer.encode_fast(item, true).expect("encodes"));
    }
}

fn engine_ids(engine: &dyn Engine, items: &[String]) -> Vec<Vec<u32>> {
    items
        .iter()
        .map(|item| {
            let mut ids = Ids::default();
            engine
                .encode_into(item, true, true, &mut Scratch::new(), &mut ids)
                .expect("encodes");
            ids.as_slice().to_vec()
        })
        .collect()
}

/// The files measured: name and tokenizer.json text.
fn files(only: Option<&[String]>) -> Vec<(String, String)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let fixtures = root.join("__test__/fixtures/tokenizers");
    let mut files: Vec<(String, String)> = ["gpt2", "bert", "unigram"]
        .iter()
        .map(|name| {
            let json = std::fs::read_to_string(fixtures.join(format!("{name}.json")))
                .expect("the fixtures are committed");
            ((*name).to_owned(), json)
        })
        .collect();
    // RoBERTa's shape: GPT-2's file with a space added before each text.
    let mut gpt2: serde_json::Value = serde_json::from_str(&files[0].1).expect("valid JSON");
    gpt2["pre_tokenizer"]["add_prefix_space"] = serde_json::Value::Bool(true);
    files.push(("gpt2_prefix_space".to_owned(), gpt2.to_string()));
    // A SentencePiece model as transformers' XLM-RoBERTa converter writes it (the committed
    // fixture: a `Precompiled` character map, `Strip`, runs of spaces collapsed by a regex
    // `Replace`), with its `Metaspace` inside a `Sequence`, as the DeBERTa-v2 converter writes it.
    let sentencepiece = std::fs::read_to_string(fixtures.join("sentencepiece.json"))
        .expect("the fixtures are committed");
    let mut sentencepiece: serde_json::Value =
        serde_json::from_str(&sentencepiece).expect("valid JSON");
    let metaspace = sentencepiece["pre_tokenizer"].take();
    sentencepiece["pre_tokenizer"] =
        serde_json::json!({ "type": "Sequence", "pretokenizers": [metaspace] });
    files.push(("sentencepiece".to_owned(), sentencepiece.to_string()));
    for name in [
        "llama3",
        "qwen3",
        "deepseek_v3",
        "gemma3",
        "llama2",
        "gptoss",
        "gpt4o",
        "gpt35turbo",
        "gemini",
        "claude",
    ] {
        match std::fs::read_to_string(root.join(format!(".cache/real-tokenizers/{name}.json"))) {
            Ok(json) => files.push((name.to_owned(), json)),
            Err(_) => eprintln!("{name}: skipped; `node scripts/real-tokenizers.js` fetches it"),
        }
    }
    files.retain(|(name, _)| only.is_none_or(|only| only.contains(name)));
    files
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let runs = flag("--runs").map_or(DEFAULT_RUNS, |r| r.parse().expect("--runs N"));
    let bytes = flag("--bytes").map_or(DEFAULT_BYTES, |b| b.parse().expect("--bytes B"));
    let only: Option<Vec<String>> =
        flag("--only").map(|list| list.split(',').map(str::to_owned).collect());

    let text = big_txt();
    let mut items = split_at_lines(&text, DOCUMENT_BYTES);
    let mut total = 0;
    items.retain(|item| {
        total += item.len();
        total <= bytes
    });
    let mib = items.iter().map(String::len).sum::<usize>() as f64 / (1 << 20) as f64;
    println!(
        "machine: {}; {} documents of big.txt ({mib:.2} MiB); median of {runs} interleaved rounds; MiB/s",
        machine(),
        items.len()
    );
    println!(
        "file\troute\tmain@1\tmain@2\tstable@1\tstable@2\tstable-own@1\tstable-own@2\tstable/main@1\teff main\teff stable\teff stable-own\tcpu-eff main\tcpu-eff stable\tcpu-eff stable-own\tclone MiB"
    );
    for (name, json) in files(only.as_deref()) {
        let tokenizer = Tokenizer::from_json(&json, &name).expect("loads");
        tokenizer
            .wait_until_ready()
            .expect("the release candidate's build settles");
        let route = tokenizer.routing();
        let route = route.split(':').next().unwrap_or("").to_owned();
        let mode = tokenizer
            .encode_mode(None, &AllowedSpecial::None)
            .expect("defaults");
        let main = tokenizer.main_engine();
        let stable = tokenizer
            .fallback_engine()
            .expect("a Hugging Face tokenizer");
        let first = StableTokenizer::from_bytes(json.as_bytes()).expect("loads");
        let before = ALLOCATED.load(Ordering::Relaxed);
        let second = first.clone();
        let clone_mib =
            ALLOCATED.load(Ordering::Relaxed).saturating_sub(before) as f64 / (1 << 20) as f64;
        let own = [first, second];
        // Every contender gives the reference's ids on these texts.
        let reference = engine_ids(stable, &items);
        assert_eq!(engine_ids(main, &items), reference, "{name}: main engine");
        for (item, ids) in items.iter().zip(&reference) {
            assert_eq!(
                own[0].encode_fast(item.as_str(), true).unwrap().get_ids(),
                ids.as_slice()
            );
            assert_eq!(
                tokenizer.encode(item, &mode).unwrap().as_slice(),
                ids.as_slice()
            );
        }
        let contenders: Vec<Box<dyn Fn() -> Times + '_>> = vec![
            Box::new(|| run(1, &items, |_| engine_worker(main))),
            Box::new(|| run(2, &items, |_| engine_worker(main))),
            Box::new(|| run(1, &items, |_| engine_worker(stable))),
            Box::new(|| run(2, &items, |_| engine_worker(stable))),
            Box::new(|| run(1, &items, |t| stable_worker(&own[t]))),
            Box::new(|| run(2, &items, |t| stable_worker(&own[t]))),
        ];
        let mut times = vec![Vec::with_capacity(runs); contenders.len()];
        for contender in &contenders {
            contender();
        }
        for round in 0..runs {
            for k in 0..contenders.len() {
                let c = (round + k) % contenders.len();
                times[c].push(contenders[c]());
            }
        }
        let rate: Vec<f64> = times
            .iter()
            .map(|t| mib / median(&t.iter().map(|t| t.wall).collect::<Vec<_>>()))
            .collect();
        let cpu: Vec<f64> = times
            .iter()
            .map(|t| median(&t.iter().map(|t| t.cpu).collect::<Vec<_>>()))
            .collect();
        println!(
            "{name}\t{route}\t{:.1}\t{:.1}\t{:.1}\t{:.1}\t{:.1}\t{:.1}\t{:.3}\t{:.2}\t{:.2}\t{:.2}\t{:.2}\t{:.2}\t{:.2}\t{clone_mib:.1}",
            rate[0],
            rate[1],
            rate[2],
            rate[3],
            rate[4],
            rate[5],
            rate[2] / rate[0],
            rate[1] / (2.0 * rate[0]),
            rate[3] / (2.0 * rate[2]),
            rate[5] / (2.0 * rate[4]),
            cpu[0] / cpu[1],
            cpu[2] / cpu[3],
            cpu[4] / cpu[5],
        );
    }
}
