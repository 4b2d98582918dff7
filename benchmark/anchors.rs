//! Engine anchors per core: the fastest published engines for the OpenAI encodings against the
//! engine batchtok ships, one core each, on the four corpora, on text each engine has not seen.
//!
//! `cargo run --release --features anchors --example anchors [-- --runs N] [--encodings o200k_base,cl100k_base]
//! [--corpora prose,code,multilingual,chat] [--check N] [--limit-bytes B] [--out PATH]`
//! (this file is `benchmark/anchors.rs`; `node scripts/corpus.js corpora` writes the corpora to
//! `.cache/corpus/NAME.jsonl`, one JSON string per line, one text per line).
//!
//! Contenders, each the way its own users call it on one text at a time:
//!
//! * `rc3`: `tokenizers` 1.0.0-rc.3's `PipelineTokenizer::encode_into`, the model built from the
//!   embedded rank table exactly as batchtok builds it (`engine::openai`), and the engine's own
//!   per-call working-memory pool;
//! * `batchtok`: batchtok's `Tokenizer` as the addon runs it on a worker thread: the text's
//!   Unicode-drift check, the release candidate on the batch's leased working memory
//!   (`engine::scratch`), tiktoken's BPE behind tiktoken's regex for the texts the drift check
//!   sends there;
//! * `batchtok-first`: the engine batchtok's `Tokenizer` encodes with while the release candidate
//!   builds (and for the texts the drift check sends to tiktoken's regex): tiktoken's BPE on the
//!   embedded rank table, with the piece and pair caches each thread keeps in front of it;
//! * `tiktoken-rs`: `CoreBPE::encode_ordinary` (0.12.1, tiktoken's own Rust core);
//! * `bpe-openai`: `Tokenizer::encode` (0.3.2, GitHub's `bpe` crate);
//! * `fastokens`: `Tokenizer::encode_ordinary` (0.3.5), built with `from_tiktoken_ranks` from the
//!   same rank table, with its own worker pool turned off (`FASTOKENS_BPE_THREADS=1`: it would
//!   otherwise spread one long text over every core, and this measures one core) and its opt-in
//!   input and segment caches left off, as they are by default.
//!
//! **Fresh text.** Every contender that keeps a word cache (`rc3`, `batchtok`, `batchtok-first`,
//! `fastokens`) meets each round cold: a new instance (for `batchtok`, whose engine is built once
//! per process, its word caches dropped) on a new thread (`batchtok-first` and fastokens keep
//! their caches per thread). Within a round, each contender passes once over every corpus, in an
//! order rotated by one position per round, so each corpus is text that instance has not seen,
//! after the corpora before it in that round's order (the warm-up is other text, as in a
//! server's traffic).
//! `tiktoken-rs` and `bpe-openai` keep no cache. Contenders run in an order rotated by one per
//! round too, so a noisy machine's drift spreads over all of them; the median over rounds is
//! reported.
//!
//! **Ids.** Before anything is timed, every contender's ids are compared with batchtok's
//! `Tokenizer` (which `tests/` and `engine::differential` hold equal to tiktoken) on `--check`
//! texts of every corpus, spread evenly over it. A contender that differs on a corpus is still
//! timed, and its cell says on how many texts it differed.
//!
//! Writes `--out` (default `benchmark/results/anchors.md`): the machine, the command, MiB/s per
//! contender per corpus, each contender's ratio to `rc3`, and each one's load time.

#[path = "corpus.rs"]
#[allow(dead_code)]
mod corpus;

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use batchtok::engine::openai;
use batchtok::engine::{AllowedSpecial, EncodeMode, Engine, Ids, Scratch, Tokenizer};
use tokenizers::pipeline::{EncodeOptions, PipelineToken, PipelineTokenizer};

use corpus::{Corpus, arg, machine, median, read_corpus};

/// Rounds unless `--runs` says otherwise.
const DEFAULT_RUNS: usize = 5;
/// Texts per corpus whose ids are checked unless `--check` says otherwise.
const DEFAULT_CHECK: usize = 800;
const DEFAULT_ENCODINGS: [&str; 2] = ["o200k_base", "cl100k_base"];
const DEFAULT_CORPORA: [&str; 4] = ["prose", "code", "multilingual", "chat"];
const MIB: f64 = 1024.0 * 1024.0;
/// What each instance encodes before the clock starts: a few words, too few to warm a cache.
const FIRST_TEXT: &str = "Hello, world!";

/// The contenders, in the order the tables list them.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Contender {
    Rc3,
    Batchtok,
    BatchtokFirst,
    TiktokenRs,
    BpeOpenai,
    Fastokens,
}

const CONTENDERS: [Contender; 6] = [
    Contender::Rc3,
    Contender::Batchtok,
    Contender::BatchtokFirst,
    Contender::TiktokenRs,
    Contender::BpeOpenai,
    Contender::Fastokens,
];

impl Contender {
    fn name(self) -> &'static str {
        match self {
            Contender::Rc3 => "rc3",
            Contender::Batchtok => "batchtok",
            Contender::BatchtokFirst => "batchtok-first",
            Contender::TiktokenRs => "tiktoken-rs",
            Contender::BpeOpenai => "bpe-openai",
            Contender::Fastokens => "fastokens",
        }
    }

    fn call(self) -> &'static str {
        match self {
            Contender::Rc3 => {
                "tokenizers 1.0.0-rc.3 `PipelineTokenizer::encode_into`, built as batchtok builds it"
            }
            Contender::Batchtok => {
                "batchtok `Tokenizer::encode_into` on a leased scratch, as a worker thread runs it"
            }
            Contender::BatchtokFirst => {
                "batchtok's first engine (tiktoken's BPE on the rank table, piece and pair caches per thread), which encodes while the release candidate builds"
            }
            Contender::TiktokenRs => "tiktoken-rs 0.12.1 `CoreBPE::encode_ordinary`",
            Contender::BpeOpenai => "bpe-openai 0.3.2 `Tokenizer::encode`",
            Contender::Fastokens => {
                "fastokens 0.3.5 `Tokenizer::encode_ordinary`, `from_tiktoken_ranks`, `FASTOKENS_BPE_THREADS=1`"
            }
        }
    }

    /// A fresh instance for `encoding`, on the calling thread.
    fn build(self, encoding: &'static str) -> Box<dyn Encoder> {
        match self {
            Contender::Rc3 => Box::new(Rc3 {
                tokenizer: openai::pipeline_tokenizer_for_benchmarks(encoding)
                    .expect("the release candidate builds"),
                options: EncodeOptions {
                    add_special_tokens: false,
                    encode_special_tokens: true,
                    ..EncodeOptions::default()
                },
                out: Vec::new(),
            }),
            Contender::Batchtok => {
                let tokenizer: &'static Tokenizer =
                    Box::leak(Box::new(Tokenizer::from_encoding(encoding).expect("loads")));
                tokenizer
                    .wait_until_ready()
                    .expect("the full engine builds");
                openai::find(encoding)
                    .expect("embedded")
                    .model
                    .forget_word_caches_for_benchmarks();
                Box::new(Batchtok {
                    tokenizer,
                    mode: tokenizer
                        .encode_mode(None, &AllowedSpecial::None)
                        .expect("ordinary mode"),
                    scratch: Scratch::new(),
                    ids: Ids::default(),
                })
            }
            Contender::BatchtokFirst => Box::new(BatchtokFirst {
                engine: openai::find(encoding)
                    .expect("embedded")
                    .model
                    .first_engine_for_benchmarks()
                    .expect("the rank table reads"),
                scratch: Scratch::new(),
                ids: Ids::default(),
            }),
            Contender::TiktokenRs => Box::new(TiktokenRs(
                match encoding {
                    "o200k_base" => tiktoken_rs::o200k_base(),
                    "cl100k_base" => tiktoken_rs::cl100k_base(),
                    other => panic!("tiktoken-rs: no {other}"),
                }
                .expect("tiktoken-rs loads"),
            )),
            Contender::BpeOpenai => Box::new(BpeOpenai(match encoding {
                "o200k_base" => bpe_openai::o200k_base(),
                "cl100k_base" => bpe_openai::cl100k_base(),
                other => panic!("bpe-openai: no {other}"),
            })),
            Contender::Fastokens => {
                let ranks = openai::ranks_for_benchmarks(encoding).expect("embedded");
                let config =
                    fastokens::tiktoken::TiktokenConfig::from_preset(encoding).expect("a preset");
                Box::new(Fastokens(
                    fastokens::Tokenizer::from_tiktoken_ranks(&ranks, config)
                        .expect("fastokens loads"),
                ))
            }
        }
    }
}

/// One contender's instance.
trait Encoder {
    /// Encodes `text`; returns how many ids it gave.
    fn count(&mut self, text: &str) -> usize;
    /// The ids of `text`.
    fn ids(&mut self, text: &str) -> Vec<u32>;
}

struct Rc3 {
    tokenizer: PipelineTokenizer,
    options: EncodeOptions,
    out: Vec<PipelineToken>,
}

impl Encoder for Rc3 {
    fn count(&mut self, text: &str) -> usize {
        self.out.clear();
        self.tokenizer
            .encode_into(text, &self.options, &mut self.out)
            .expect("encodes");
        black_box(&self.out).len()
    }
    fn ids(&mut self, text: &str) -> Vec<u32> {
        self.count(text);
        PipelineToken::cast_slice(&self.out).to_vec()
    }
}

struct Batchtok {
    tokenizer: &'static Tokenizer,
    mode: EncodeMode,
    scratch: Scratch<'static>,
    ids: Ids,
}

impl Encoder for Batchtok {
    fn count(&mut self, text: &str) -> usize {
        self.ids.clear();
        self.tokenizer
            .encode_into(text, &self.mode, &mut self.scratch, &mut self.ids)
            .expect("encodes");
        black_box(&self.ids).len()
    }
    fn ids(&mut self, text: &str) -> Vec<u32> {
        self.count(text);
        self.ids.as_slice().to_vec()
    }
}

struct BatchtokFirst {
    engine: &'static dyn Engine,
    scratch: Scratch<'static>,
    ids: Ids,
}

impl Encoder for BatchtokFirst {
    fn count(&mut self, text: &str) -> usize {
        self.ids.clear();
        self.engine
            .encode_into(text, false, false, &mut self.scratch, &mut self.ids)
            .expect("encodes");
        black_box(&self.ids).len()
    }
    fn ids(&mut self, text: &str) -> Vec<u32> {
        self.count(text);
        self.ids.as_slice().to_vec()
    }
}

struct TiktokenRs(tiktoken_rs::CoreBPE);

impl Encoder for TiktokenRs {
    fn count(&mut self, text: &str) -> usize {
        black_box(self.0.encode_ordinary(text)).len()
    }
    fn ids(&mut self, text: &str) -> Vec<u32> {
        self.0.encode_ordinary(text)
    }
}

struct BpeOpenai(&'static bpe_openai::Tokenizer);

impl Encoder for BpeOpenai {
    fn count(&mut self, text: &str) -> usize {
        black_box(self.0.encode(text)).len()
    }
    fn ids(&mut self, text: &str) -> Vec<u32> {
        self.0.encode(text)
    }
}

struct Fastokens(fastokens::Tokenizer);

impl Encoder for Fastokens {
    fn count(&mut self, text: &str) -> usize {
        black_box(self.0.encode_ordinary(text).expect("encodes")).len()
    }
    fn ids(&mut self, text: &str) -> Vec<u32> {
        self.0.encode_ordinary(text).expect("encodes")
    }
}

/// What one contender did in one round on one encoding: seconds per corpus, and its build time.
struct RoundResult {
    seconds: Vec<f64>,
    load_seconds: f64,
}

/// One round of one contender: a fresh instance on a fresh thread, one pass over every corpus in
/// `order`.
fn run_round(
    contender: Contender,
    encoding: &'static str,
    corpora: &'static [Corpus],
    order: Vec<usize>,
) -> RoundResult {
    std::thread::scope(|s| {
        s.spawn(move || {
            let start = Instant::now();
            let mut encoder = contender.build(encoding);
            // One short text, so that what an engine builds on its first call (fastokens seeds
            // its pretoken cache from the vocabulary) counts as load, not as the first corpus.
            black_box(encoder.count(FIRST_TEXT));
            let load_seconds = start.elapsed().as_secs_f64();
            let mut seconds = vec![0.0; corpora.len()];
            for c in order {
                let start = Instant::now();
                let mut ids = 0;
                for text in &corpora[c].texts {
                    ids += encoder.count(text);
                }
                seconds[c] = start.elapsed().as_secs_f64();
                black_box(ids);
            }
            RoundResult {
                seconds,
                load_seconds,
            }
        })
        .join()
        .expect("the round's thread finishes")
    })
}

/// How many of `corpus`'s sampled texts `contender` encodes otherwise than batchtok; the first
/// difference, described.
fn check(
    contender: Contender,
    reference: &mut dyn Encoder,
    encoder: &mut dyn Encoder,
    corpus: &Corpus,
    samples: usize,
) -> (usize, usize, Option<String>) {
    let step = (corpus.texts.len() / samples.max(1)).max(1);
    let mut checked = 0;
    let mut differ = 0;
    let mut first = None;
    for text in corpus.texts.iter().step_by(step).take(samples) {
        checked += 1;
        let want = reference.ids(text);
        let got = encoder.ids(text);
        if want != got {
            differ += 1;
            first.get_or_insert_with(|| {
                let at = want.iter().zip(&got).take_while(|(a, b)| a == b).count();
                format!(
                    "{} on {}: first difference at id {at} of {} (batchtok {:?}, {} {:?})",
                    contender.name(),
                    corpus.name,
                    want.len(),
                    &want[at..want.len().min(at + 4)],
                    contender.name(),
                    &got[at..got.len().min(at + 4)],
                )
            });
        }
    }
    (checked, differ, first)
}

fn main() {
    // SAFETY: no other thread exists yet: nothing reads the environment concurrently.
    unsafe {
        std::env::set_var("FASTOKENS_BPE_THREADS", "1");
        std::env::remove_var("FASTOKENS_INPUT_CACHE");
        std::env::remove_var("FASTOKENS_SEGMENT_CACHE");
    }
    let args: Vec<String> = std::env::args().collect();
    let runs: usize = arg(&args, "--runs").map_or(DEFAULT_RUNS, |r| r.parse().expect("--runs N"));
    let samples: usize =
        arg(&args, "--check").map_or(DEFAULT_CHECK, |r| r.parse().expect("--check N"));
    let limit_bytes: Option<usize> =
        arg(&args, "--limit-bytes").map(|b| b.parse().expect("--limit-bytes B"));
    let out = arg(&args, "--out").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benchmark/results/anchors.md"),
        PathBuf::from,
    );
    let leak_list = |list: Option<&str>, default: &[&'static str]| -> Vec<&'static str> {
        list.map_or_else(
            || default.to_vec(),
            |l| {
                l.split(',')
                    .map(|s| &*Box::leak(s.to_owned().into_boxed_str()))
                    .collect()
            },
        )
    };
    let encodings = leak_list(arg(&args, "--encodings"), &DEFAULT_ENCODINGS);
    let corpus_names = leak_list(arg(&args, "--corpora"), &DEFAULT_CORPORA);
    let corpora: &'static [Corpus] = Box::leak(
        corpus_names
            .iter()
            .map(|&name| read_corpus(name, limit_bytes))
            .collect::<Vec<_>>()
            .into_boxed_slice(),
    );
    println!("{}", machine());
    for c in corpora {
        println!(
            "{}: {} texts, {:.2} MiB",
            c.name,
            c.texts.len(),
            c.bytes as f64 / MIB
        );
    }

    let mut report = String::new();
    let command = args[1..].join(" ");
    writeln!(report, "# Engine anchors per core\n").unwrap();
    writeln!(
        report,
        "Written by `benchmark/anchors.rs` (its header says what is measured and how): one core, \
         one pass over each corpus per round on text each engine instance has not seen, \
         contenders and corpora in rotated order, median of {runs} rounds. Ids checked against \
         batchtok's `Tokenizer` (exact to tiktoken) on up to {samples} texts of every corpus \
         before timing.\n"
    )
    .unwrap();
    writeln!(report, "- Machine: {}", machine()).unwrap();
    writeln!(
        report,
        "- Command: `cargo run --release --features anchors --example anchors{}{}`",
        if command.is_empty() { "" } else { " -- " },
        command
    )
    .unwrap();
    for c in corpora {
        writeln!(
            report,
            "- `{}`: {} texts, {:.2} MiB (`.cache/corpus/{}.jsonl`)",
            c.name,
            c.texts.len(),
            c.bytes as f64 / MIB,
            c.name
        )
        .unwrap();
    }
    writeln!(report).unwrap();
    writeln!(report, "| contender | call |\n| --- | --- |").unwrap();
    for c in CONTENDERS {
        writeln!(report, "| `{}` | {} |", c.name(), c.call()).unwrap();
    }

    for &encoding in &encodings {
        // Ids first: every contender against batchtok's Tokenizer.
        let mut reference = Contender::Batchtok.build(encoding);
        let mut differences: Vec<Vec<(usize, usize)>> = Vec::new();
        let mut firsts = Vec::new();
        for contender in CONTENDERS {
            let mut encoder = contender.build(encoding);
            let mut row = Vec::new();
            for corpus in corpora {
                let (checked, differ, first) = check(
                    contender,
                    reference.as_mut(),
                    encoder.as_mut(),
                    corpus,
                    samples,
                );
                row.push((checked, differ));
                firsts.extend(first);
            }
            differences.push(row);
        }
        for f in &firsts {
            println!("{encoding}: {f}");
        }

        // Rounds: seconds[contender][corpus][round].
        let mut seconds = vec![vec![Vec::new(); corpora.len()]; CONTENDERS.len()];
        let mut loads = vec![Vec::new(); CONTENDERS.len()];
        for round in 0..runs {
            let corpus_order: Vec<usize> = (0..corpora.len())
                .map(|i| (i + round) % corpora.len())
                .collect();
            for k in 0..CONTENDERS.len() {
                let ci = (k + round) % CONTENDERS.len();
                let result = run_round(CONTENDERS[ci], encoding, corpora, corpus_order.clone());
                for (c, s) in result.seconds.iter().enumerate() {
                    seconds[ci][c].push(*s);
                }
                loads[ci].push(result.load_seconds);
            }
            let line: Vec<String> = CONTENDERS
                .iter()
                .enumerate()
                .map(|(ci, c)| {
                    let total: f64 = (0..corpora.len()).map(|k| seconds[ci][k][round]).sum();
                    format!("{} {:.2}s", c.name(), total)
                })
                .collect();
            println!("{encoding} round {}: {}", round + 1, line.join(", "));
        }

        let rate = |ci: usize, c: usize| corpora[c].bytes as f64 / MIB / median(&seconds[ci][c]);
        writeln!(report, "\n## {encoding}\n").unwrap();
        write!(report, "MiB/s (ratio to `rc3`)\n\n| contender |").unwrap();
        for c in corpora {
            write!(report, " {} |", c.name).unwrap();
        }
        write!(report, " load |\n| --- |").unwrap();
        for _ in corpora {
            write!(report, " ---: |").unwrap();
        }
        writeln!(report, " ---: |").unwrap();
        for (ci, contender) in CONTENDERS.iter().enumerate() {
            write!(report, "| `{}` |", contender.name()).unwrap();
            for (c, &(checked, differ)) in differences[ci].iter().enumerate() {
                let flag = if differ > 0 {
                    format!(" ✗ {differ}/{checked} texts differ")
                } else {
                    String::new()
                };
                write!(
                    report,
                    " {:.1} ({:.2}x){flag} |",
                    rate(ci, c),
                    rate(ci, c) / rate(0, c)
                )
                .unwrap();
            }
            writeln!(report, " {:.0} ms |", median(&loads[ci]) * 1000.0).unwrap();
        }
        if !firsts.is_empty() {
            writeln!(report).unwrap();
            for f in &firsts {
                writeln!(report, "- {f}").unwrap();
            }
        }
    }
    writeln!(
        report,
        "\n`load`: the median time to build a fresh instance on the round's thread and encode \
         `{FIRST_TEXT:?}` (for `batchtok`, the process-wide engine is built once; its load is what a \
         round pays for dropping its word caches; for `bpe-openai`, a static built once)."
    )
    .unwrap();
    std::fs::write(&out, &report).unwrap_or_else(|e| panic!("cannot write {}: {e}", out.display()));
    println!("{report}\nwrote {}", out.display());
}
