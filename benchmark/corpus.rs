//! The inputs, the machine description and the command-line reading shared by the Rust
//! benchmarks in this folder (`scheduler.rs`, `simulate.rs`, `anchors.rs`, `fresh_scaling.rs`),
//! included by each with `#[path]`: Cargo treats only the files named in `[[example]]` as
//! programs.
//!
//! The cuts are the ones `scripts/corpus.js` defines for the JS tests and benchmarks, so a
//! "document" or a "short item" means the same text on both sides. The chat-sized cut
//! (`chat_items`) exists only here.

use std::path::PathBuf;

/// `scripts/corpus.js` `DOCUMENT_BYTES`: the ~6.5 KB documents of the Hugging Face benchmark.
pub const DOCUMENT_BYTES: usize = 6500;
/// `scripts/corpus.js` `SHORT_ITEM_BYTES`: ~100-byte items, as chat messages or titles.
pub const SHORT_ITEM_BYTES: usize = 100;
/// Size of each heavy item of the skewed batch: large enough that one item alone is several
/// times the default maximum chunk, so a policy that starts it late leaves one thread working
/// alone at the end.
pub const HEAVY_ITEM_BYTES: usize = 1_000_000;
/// Heavy items in the skewed batch: more than 2 threads, fewer than the short items by four
/// orders of magnitude, which is the skew the scheduler issue describes. At 16 threads the four
/// are fewer than the threads, so the batch's end depends on starting them first.
pub const HEAVY_ITEMS: usize = 4;
/// Shortest chat-sized item: a one-line message.
pub const CHAT_MIN_BYTES: usize = 50;
/// Longest chat-sized item: a short paragraph. Between the two, lengths are uniform, drawn from a
/// fixed seed, so every run and every machine cuts the same items.
pub const CHAT_MAX_BYTES: usize = 300;
/// Seed of the chat-sized items' lengths.
const CHAT_SEED: u64 = 0x5eed_c4a7;
/// Environment variable naming the folder that holds big.txt and the corpora's JSONL files where
/// the build's own `.cache/corpus/` is not at hand: a binary built on one machine and run on
/// another (`scripts/many-cores.sh`).
pub const CORPUS_DIR_ENV: &str = "BATCHTOK_CORPUS_DIR";

/// One named batch of texts.
pub struct Workload {
    pub name: &'static str,
    pub items: Vec<String>,
}

impl Workload {
    /// Total UTF-8 bytes.
    pub fn bytes(&self) -> usize {
        self.items.iter().map(String::len).sum()
    }
}

/// The folder of the corpus files: `$BATCHTOK_CORPUS_DIR` if set, else the build's
/// `.cache/corpus/`.
fn corpus_dir() -> PathBuf {
    std::env::var_os(CORPUS_DIR_ENV).map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".cache/corpus"),
        PathBuf::from,
    )
}

/// The whole of big.txt, from the corpus folder, or an error telling how to fetch it.
pub fn big_txt() -> String {
    let path = corpus_dir().join("big.txt");
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}; run `node scripts/corpus.js` to fetch it",
            path.display()
        )
    })
}

/// `scripts/corpus.js` `splitAtLines`: whole lines (with their `\n`) accumulate into an item
/// until it holds at least `min_bytes`; the remainder is the last item.
pub fn split_at_lines(text: &str, min_bytes: usize) -> Vec<String> {
    let mut items = Vec::new();
    let mut current = String::new();
    for line in text.split_inclusive('\n') {
        current.push_str(line);
        if current.len() >= min_bytes {
            items.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        items.push(current);
    }
    items
}

/// big.txt cut at whitespace into chat-sized items of `CHAT_MIN_BYTES` to `CHAT_MAX_BYTES`: each
/// item takes whole words until it reaches a length drawn uniformly from that range, and ends
/// early rather than pass `CHAT_MAX_BYTES`. Only a single word longer than the range (none in
/// big.txt) or the remainder at the end falls outside it. The items, concatenated, are the text.
pub fn chat_items(text: &str) -> Vec<String> {
    // splitmix64: a fixed, portable sequence; the lengths need no better randomness.
    let mut state = CHAT_SEED;
    let mut next_target = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        CHAT_MIN_BYTES + (z % (CHAT_MAX_BYTES - CHAT_MIN_BYTES + 1) as u64) as usize
    };
    let mut items = Vec::new();
    let mut current = String::new();
    let mut target = next_target();
    for word in text.split_inclusive(char::is_whitespace) {
        if current.len() >= CHAT_MIN_BYTES && current.len() + word.len() > CHAT_MAX_BYTES {
            items.push(std::mem::take(&mut current));
            target = next_target();
        }
        current.push_str(word);
        if current.len() >= target {
            items.push(std::mem::take(&mut current));
            target = next_target();
        }
    }
    if !current.is_empty() {
        items.push(current);
    }
    items
}

/// The batches of the scheduler benchmark: big.txt as documents, as short items, the short items
/// with `HEAVY_ITEMS` texts of `HEAVY_ITEM_BYTES` spread among them, and as chat-sized items.
pub fn workloads(text: &str) -> Vec<Workload> {
    let documents = split_at_lines(text, DOCUMENT_BYTES);
    let short = split_at_lines(text, SHORT_ITEM_BYTES);
    let mut skewed = short.clone();
    // Heavy texts from evenly spaced offsets of big.txt, cut at line ends like every other item;
    // inserted back to front at 1/8, 3/8, 5/8 and 7/8 of the batch, so one sits near the end,
    // where a policy that runs items in index order meets it last.
    let heavy = split_at_lines(text, HEAVY_ITEM_BYTES);
    let step = heavy.len() / HEAVY_ITEMS;
    for k in (0..HEAVY_ITEMS).rev() {
        let at = short.len() * (2 * k + 1) / (2 * HEAVY_ITEMS);
        skewed.insert(at, heavy[k * step].clone());
    }
    vec![
        Workload {
            name: "documents",
            items: documents,
        },
        Workload {
            name: "short",
            items: short,
        },
        Workload {
            name: "skewed",
            items: skewed,
        },
        Workload {
            name: "chat",
            items: chat_items(text),
        },
    ]
}

/// Texts in batchtok's batch layout.
pub fn texts(items: &[String]) -> batchtok::batch::Texts {
    let bytes = items.iter().map(String::len).sum();
    let mut texts = batchtok::batch::Texts::with_capacity(items.len(), bytes);
    for item in items {
        texts.push(item);
    }
    texts
}

/// One of the four corpora of `scripts/corpus.js`: its texts, from `.cache/corpus/NAME.jsonl`,
/// one JSON string per line.
pub struct Corpus {
    pub name: &'static str,
    pub texts: Vec<String>,
    pub bytes: usize,
}

/// Reads the corpus `name` (`scripts/corpus.js corpora` writes them), stopping once
/// `limit_bytes` are read if given.
pub fn read_corpus(name: &'static str, limit_bytes: Option<usize>) -> Corpus {
    let path = corpus_dir().join(format!("{name}.jsonl"));
    let file = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}; run `node scripts/corpus.js corpora` to write the corpora",
            path.display()
        )
    });
    let mut texts = Vec::new();
    let mut bytes = 0;
    for line in file.lines().filter(|l| !l.is_empty()) {
        let text: String = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("{}: a line is not a JSON string: {e}", path.display()));
        bytes += text.len();
        texts.push(text);
        if limit_bytes.is_some_and(|limit| bytes >= limit) {
            break;
        }
    }
    Corpus { name, texts, bytes }
}

/// The value after `name` in the command line `args` (`--runs 5`), if it is there.
pub fn arg<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

/// `nproc` and the CPU model, as the results files print them.
pub fn machine() -> String {
    let nproc = std::thread::available_parallelism().map_or(1, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".to_owned());
    format!("nproc={nproc}, cpu={model}")
}

/// The middle value (the upper one for an even count).
pub fn median(samples: &[f64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}
