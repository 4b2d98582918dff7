//! The inputs and the machine description shared by the Rust benchmarks in this folder
//! (`scheduler.rs`, `simulate.rs`), included by each with `#[path]`: Cargo treats only the files
//! named in `[[example]]` as programs.
//!
//! The cuts are the ones `scripts/corpus.js` defines for the JS tests and benchmarks, so a
//! "document" or a "short item" means the same text on both sides.

use std::path::PathBuf;

/// `scripts/corpus.js` `DOCUMENT_BYTES`: the ~6.5 KB documents of the Hugging Face benchmark.
pub const DOCUMENT_BYTES: usize = 6500;
/// `scripts/corpus.js` `SHORT_ITEM_BYTES`: ~100-byte items, as chat messages or titles.
pub const SHORT_ITEM_BYTES: usize = 100;
/// Size of each heavy item of the skewed batch: large enough that one item alone is several
/// times the default maximum chunk, so a policy that starts it late leaves one thread working
/// alone at the end.
pub const HEAVY_ITEM_BYTES: usize = 1_000_000;
/// Heavy items in the skewed batch: more than the 2 threads measured here, fewer than the
/// short items by four orders of magnitude, which is the skew the scheduler issue describes.
pub const HEAVY_ITEMS: usize = 4;

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

/// The whole of big.txt, or an error telling how to fetch it.
pub fn big_txt() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".cache/corpus/big.txt");
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

/// The three batches of the scheduler benchmark: big.txt as documents, as short items, and the
/// short items with `HEAVY_ITEMS` texts of `HEAVY_ITEM_BYTES` spread among them.
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
