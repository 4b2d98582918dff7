//! Rows of model inputs and the parameters that shape them: the truncation a call chooses, the
//! file's padding section, the optional parts asked for, and [`Rows`], where the engines append
//! each input's tokens. Plain data the engines share; `model_inputs.rs` pads rows into a batch.

use tokenizers::pipeline::PipelineToken;

/// The stable crate's encoding: ids with offsets, tokens, word ids, masks and overflow.
pub type StableEncoding = tokenizers_stable::Encoding;

/// The end a truncation cuts or a padding fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Side {
    /// The start of the sequence.
    Left,
    /// The end of the sequence.
    #[default]
    Right,
}

/// Which sequence of a pair loses tokens (Python `tokenizers`' `TruncationStrategy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TruncationStrategy {
    /// Tokens come off the longer sequence, one at a time.
    #[default]
    LongestFirst,
    /// Only the first sequence loses tokens.
    OnlyFirst,
    /// Only the second sequence loses tokens; a single sequence that needs cutting is an error.
    OnlySecond,
}

/// Truncation parameters, as a tokenizer.json's `truncation` section holds them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Truncation {
    /// The most tokens a row has, the template's included.
    pub max_length: usize,
    /// Which sequence of a pair is cut.
    pub strategy: TruncationStrategy,
    /// How many tokens each overflowing window repeats from the one before it.
    pub stride: usize,
    /// Which end is cut.
    pub direction: Side,
}

/// A call's truncation as the caller asked for it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum TruncationRequest {
    /// Nothing said: the encode methods apply the file's truncation, the count methods none.
    #[default]
    Default,
    /// No truncation (`truncation: false`).
    Off,
    /// Truncation (`truncation: true` or an object); each parameter left unset comes from the
    /// file's truncation, the maximum length from the call's fallback, the file or the model's
    /// `model_max_length`.
    On {
        /// `maxLength`.
        max_length: Option<usize>,
        /// `strategy`.
        strategy: Option<TruncationStrategy>,
        /// `stride`.
        stride: Option<usize>,
        /// `direction`.
        direction: Option<Side>,
    },
}

/// A call's truncation, resolved against the tokenizer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum TruncationChoice {
    /// The file's own truncation (none where it has none): the engines' fast path as loaded.
    #[default]
    File,
    /// No truncation.
    Off,
    /// These parameters.
    With(Truncation),
}

/// The padding section of a tokenizer.json, as far as the file sets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePadding {
    /// `strategy`: `None` for `BatchLongest`, the length for `Fixed`.
    pub fixed: Option<usize>,
    /// `direction`.
    pub side: Side,
    /// `pad_to_multiple_of`.
    pub multiple_of: Option<usize>,
    /// `pad_id`.
    pub pad_id: u32,
    /// `pad_type_id`.
    pub pad_type_id: u32,
    /// `pad_token`.
    pub pad_token: String,
}

/// The optional parts of model inputs a call asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Returns {
    /// Each token's span of its text, in UTF-16 code units.
    pub offsets: bool,
    /// Each token's string.
    pub tokens: bool,
    /// Each token's word index (-1 where none).
    pub word_ids: bool,
    /// Each token's sequence: 0 or 1, -1 for template tokens.
    pub sequence_ids: bool,
    /// 1 for the template's and pad tokens, 0 for the text's.
    pub special_tokens_mask: bool,
    /// The windows truncation cuts off, as rows of their own.
    pub overflowing: bool,
}

impl Returns {
    /// Whether any part only the stable engine computes is asked for.
    pub(super) fn needs_stable(&self) -> bool {
        self.offsets
            || self.tokens
            || self.word_ids
            || self.sequence_ids
            || self.special_tokens_mask
            || self.overflowing
    }
}

/// How each input of a call is encoded into rows.
#[derive(Debug, Clone, Default)]
pub struct RowOptions {
    /// Add the post-processor's template tokens.
    pub add_special_tokens: bool,
    /// Added special tokens' text becomes their ids (not `encodeSpecialTokens`).
    pub split_special: bool,
    /// Truncation, resolved (`None`: none).
    pub truncation: Option<Truncation>,
    /// The optional parts.
    pub returns: Returns,
}

/// Ragged rows, appended input after input: the tokens of row `r` are
/// `ends[r - 1]..ends[r]` of every per-token vector. The optional vectors stay empty unless asked
/// for.
#[derive(Debug, Default)]
pub struct Rows {
    /// Each row's end in the per-token vectors.
    pub ends: Vec<usize>,
    /// How many rows each input gave (one, or more with overflowing windows).
    pub rows_per_input: Vec<u32>,
    /// Token ids.
    pub ids: Vec<u32>,
    /// Token type ids.
    pub type_ids: Vec<u32>,
    /// Start and end of each token in its text, in UTF-16 code units.
    pub offsets: Vec<[u32; 2]>,
    /// Token strings.
    pub tokens: Vec<String>,
    /// Word indices, -1 where none.
    pub word_ids: Vec<i32>,
    /// Sequence indices, -1 for template tokens.
    pub sequence_ids: Vec<i32>,
    /// 1 for template tokens.
    pub special: Vec<u8>,
    /// The release candidate's working buffers for the first and second sequence of an input,
    /// kept from input to input.
    pub(super) first: Vec<PipelineToken>,
    pub(super) second: Vec<PipelineToken>,
}

impl Rows {
    /// How many tokens the rows hold.
    pub fn token_count(&self) -> usize {
        self.ids.len()
    }

    /// Ends the row being written.
    pub(super) fn end_row(&mut self) {
        self.ends.push(self.ids.len());
    }

    /// Drops everything after `rows` rows and `inputs` inputs: the undo of a failed input.
    pub fn truncate_to(&mut self, rows: usize, inputs: usize) {
        let tokens = if rows == 0 { 0 } else { self.ends[rows - 1] };
        self.ends.truncate(rows);
        self.rows_per_input.truncate(inputs);
        self.ids.truncate(tokens);
        self.type_ids.truncate(tokens);
        self.offsets.truncate(tokens.min(self.offsets.len()));
        self.tokens.truncate(tokens.min(self.tokens.len()));
        self.word_ids.truncate(tokens.min(self.word_ids.len()));
        self.sequence_ids
            .truncate(tokens.min(self.sequence_ids.len()));
        self.special.truncate(tokens.min(self.special.len()));
    }

    /// The tokens of row `row`.
    pub(super) fn range(&self, row: usize) -> std::ops::Range<usize> {
        let start = if row == 0 { 0 } else { self.ends[row - 1] };
        start..self.ends[row]
    }

    /// Appends a stable engine's encoding as one row, and its overflowing windows as the rows
    /// after it, in the reference's order.
    pub(super) fn push_stable(
        &mut self,
        encoding: &StableEncoding,
        texts: [&str; 2],
        returns: Returns,
    ) -> u32 {
        let mut rows = 0;
        let mut pending = vec![encoding];
        while let Some(encoding) = pending.pop() {
            self.push_stable_row(encoding, texts, returns);
            rows += 1;
            if returns.overflowing {
                pending.extend(encoding.get_overflowing().iter().rev());
            }
        }
        rows
    }

    fn push_stable_row(&mut self, encoding: &StableEncoding, texts: [&str; 2], returns: Returns) {
        self.ids.extend_from_slice(encoding.get_ids());
        self.type_ids.extend_from_slice(encoding.get_type_ids());
        if returns.offsets {
            let mut units = [Utf16Cursor::default(), Utf16Cursor::default()];
            let sequences = encoding.get_sequence_ids();
            for (&(start, end), sequence) in encoding.get_offsets().iter().zip(sequences) {
                // A template token belongs to no sequence, and its offsets are (0, 0).
                let sequence = sequence.unwrap_or(0).min(1);
                let (text, cursor) = (texts[sequence], &mut units[sequence]);
                self.offsets
                    .push([cursor.units_at(text, start), cursor.units_at(text, end)]);
            }
        }
        if returns.tokens {
            self.tokens.extend(encoding.get_tokens().iter().cloned());
        }
        if returns.word_ids {
            self.word_ids.extend(
                encoding
                    .get_word_ids()
                    .iter()
                    .map(|word| word.map_or(-1, |w| w as i32)),
            );
        }
        if returns.sequence_ids {
            self.sequence_ids.extend(
                encoding
                    .get_sequence_ids()
                    .iter()
                    .map(|sequence| sequence.map_or(-1, |s| s as i32)),
            );
        }
        if returns.special_tokens_mask {
            self.special.extend(
                encoding
                    .get_special_tokens_mask()
                    .iter()
                    .map(|&special| special as u8),
            );
        }
        self.end_row();
    }
}

/// Converts character offsets of one text (counted in Unicode scalar values, as the reference
/// reports them) to UTF-16 code units, walking forward from the last offset asked for (offsets
/// come mostly in order) and starting over when asked for an earlier one.
#[derive(Debug, Default)]
pub(super) struct Utf16Cursor {
    chars: usize,
    byte: usize,
    units: u32,
}

impl Utf16Cursor {
    /// The UTF-16 length of the first `chars` characters of `text` (all of it where it has
    /// fewer).
    pub(super) fn units_at(&mut self, text: &str, chars: usize) -> u32 {
        if chars < self.chars {
            *self = Utf16Cursor::default();
        }
        for c in text[self.byte..].chars() {
            if self.chars == chars {
                break;
            }
            self.chars += 1;
            self.byte += c.len_utf8();
            self.units += c.len_utf16() as u32;
        }
        self.units
    }
}
