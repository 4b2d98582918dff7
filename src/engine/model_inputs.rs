//! Model inputs: what a model's session takes (padded ids, the attention mask, token type ids and,
//! on request, offsets, token strings, word ids, the special-tokens mask and overflowing windows),
//! and the truncation a caller chooses per call.
//!
//! Each input (a text, or a pair of texts) becomes one row, or with overflowing windows several;
//! [`Rows`] collects them ragged, one buffer per worker, and [`assemble`] pads them into one
//! rectangle. The fields Python `tokenizers`' `Encoding` has and the release candidate does not
//! compute (offsets, token strings, word ids, the overflow) come from the stable engine, the
//! reference's own code; everything else runs on the release candidate wherever the route allows.
//!
//! The semantics are Python `tokenizers`' (`enable_truncation`, `enable_padding`, `encode_batch`):
//! truncation removes tokens before the template's are added, and counts the template's against
//! the maximum length; padding pads every row to the longest (or a fixed length), rounded up to a
//! multiple where asked.

use std::mem::MaybeUninit;
use std::ops::{Deref, Range};

use super::rows::{
    FilePadding, Returns, RowOptions, Rows, Side, Truncation, TruncationChoice, TruncationRequest,
};
#[cfg(test)]
use super::rows::{TruncationStrategy, Utf16Cursor};
use super::{EncodeMode, Error, ErrorKind, Family, Scratch, Tokenizer};
use crate::allocator::{Zeroable, ZeroedArray};

/// How rows are padded, resolved against the tokenizer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Padding {
    /// Every row to the longest row, or to a fixed length.
    pub to: PadTo,
    /// The padded length is rounded up to a multiple of this.
    pub multiple_of: Option<usize>,
    /// Which end the pad tokens go.
    pub side: Side,
    /// The pad token's id.
    pub pad_id: u32,
    /// The type id of pad tokens.
    pub pad_type_id: u32,
    /// The pad token's text (`tokens` of a padded row).
    pub pad_token: String,
}

/// The length rows are padded to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PadTo {
    /// The longest row of the batch.
    Longest,
    /// This many tokens.
    Fixed(usize),
}

/// The element type of the id, mask and type-id arrays.
pub trait IdElement: Zeroable + Send {
    /// `value` in this type (every id fits: ids are below 2^31 in practice, and `i32` arrays
    /// are what the caller asked for).
    fn of(value: u32) -> Self;
}

impl IdElement for i64 {
    #[inline]
    fn of(value: u32) -> Self {
        i64::from(value)
    }
}

impl IdElement for i32 {
    #[inline]
    fn of(value: u32) -> Self {
        value as i32
    }
}

impl IdElement for u32 {
    #[inline]
    fn of(value: u32) -> Self {
        value
    }
}

/// A batch's model inputs: `rows × sequence` arrays, row-major.
#[derive(Debug)]
pub struct ModelInputs<T> {
    /// How many rows (inputs, plus their overflowing windows when asked for).
    pub rows: usize,
    /// The length of every row.
    pub sequence: usize,
    /// Token ids, pad ids included.
    pub input_ids: Vec<T>,
    /// 1 for tokens, 0 for padding.
    pub attention_mask: Vec<T>,
    /// Token type ids.
    pub token_type_ids: IdArray<T>,
    /// `[start, end]` per token, in UTF-16 code units; padding is `[0, 0]`.
    pub offsets: Option<Vec<u32>>,
    /// Token strings per row, padding as the pad token.
    pub tokens: Option<Vec<Vec<String>>>,
    /// Word index per token, -1 where none.
    pub word_ids: Option<Vec<i32>>,
    /// Sequence index per token (0 or 1), -1 for template and pad tokens.
    pub sequence_ids: Option<Vec<i32>>,
    /// 1 for template and pad tokens.
    pub special_tokens_mask: Option<Vec<u8>>,
    /// The input each row comes from (with overflowing windows).
    pub overflow_to_sample: Option<Vec<u32>>,
}

/// One of the rectangle's arrays: written cell by cell, or all zeros and never written.
pub enum IdArray<T> {
    /// Every cell written.
    Written(Vec<T>),
    /// Every cell zero: the type ids of a batch whose template gives every token type id 0 (single
    /// texts, for most files). A large one is fresh pages nobody writes (see [`ZeroedArray`]),
    /// which cost neither a write nor a page fault, where writing the zeros into reused memory
    /// costs a third of the padding's memory traffic.
    Zeros(ZeroedArray<T>),
}

impl<T> Deref for IdArray<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        match self {
            IdArray::Written(cells) => cells,
            IdArray::Zeros(cells) => cells,
        }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for IdArray<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: PartialEq> PartialEq for IdArray<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: PartialEq, const N: usize> PartialEq<[T; N]> for IdArray<T> {
    fn eq(&self, other: &[T; N]) -> bool {
        **self == other[..]
    }
}

/// A worker's rows in input order: its [`Rows`], the range of its rows and the range of its
/// inputs.
pub type Piece<'r> = (&'r Rows, Range<usize>, Range<usize>);

/// The shape of the padded rectangle and what fills its padding.
#[derive(Debug, Clone, Copy)]
pub struct Layout<'p> {
    /// How many rows.
    pub rows: usize,
    /// The length of every row.
    pub sequence: usize,
    pad_id: u32,
    pad_type_id: u32,
    /// Every type id of the rectangle is 0: the rows' and the padding's.
    type_ids_zero: bool,
    left: bool,
    pad_token: &'p str,
}

/// The layout `pieces` are padded into under `padding`, or why they cannot be (rows of
/// different lengths without padding, a row longer than the fixed length).
pub fn layout<'p>(pieces: &[Piece<'_>], padding: Option<&'p Padding>) -> Result<Layout<'p>, Error> {
    let rows: usize = pieces.iter().map(|(_, rows, _)| rows.len()).sum();
    let lengths = || {
        pieces
            .iter()
            .flat_map(|(sink, rows, _)| rows.clone().map(|row| sink.range(row).len()))
    };
    let longest = lengths().max().unwrap_or(0);
    let sequence = match padding {
        None => {
            if let Some((row, length)) = lengths().enumerate().find(|&(_, l)| l != longest) {
                return Err(Error::new(
                    ErrorKind::OutOfRange,
                    format!(
                        "rows differ in length (row {row}: {length} tokens, the longest: \
                         {longest}), and unpadded rows must be equal: pass padding: 'longest' \
                         (or 'maxLength')"
                    ),
                ));
            }
            longest
        }
        Some(padding) => {
            let target = match padding.to {
                PadTo::Longest => longest,
                PadTo::Fixed(length) => {
                    if let Some((row, over)) = lengths().enumerate().find(|&(_, l)| l > length) {
                        return Err(Error::new(
                            ErrorKind::OutOfRange,
                            format!(
                                "row {row} has {over} tokens, more than the {length} it is padded \
                                 to; pass truncation: true to cut rows to maxLength"
                            ),
                        ));
                    }
                    length
                }
            };
            match padding.multiple_of {
                Some(multiple) if multiple > 0 => target.div_ceil(multiple) * multiple,
                _ => target,
            }
        }
    };
    let (pad_id, pad_type_id, left) = padding.map_or((0, 0, false), |p| {
        (p.pad_id, p.pad_type_id, p.side == Side::Left)
    });
    // One pass over the rows' type ids (a few bytes per token, next to the rectangle's eight per
    // cell) decides whether the type-id array is written at all.
    let type_ids_zero = pad_type_id == 0
        && pieces.iter().all(|(sink, rows, _)| {
            let tokens = match (rows.start, rows.end) {
                (_, 0) => 0..0,
                (0, end) => 0..sink.ends[end - 1],
                (start, end) => sink.ends[start - 1]..sink.ends[end - 1],
            };
            // An OR over all of them, not a search for the first: it vectorizes.
            sink.type_ids[tokens]
                .iter()
                .fold(0, |any, &type_id| any | type_id)
                == 0
        });
    Ok(Layout {
        rows,
        sequence,
        pad_id,
        pad_type_id,
        type_ids_zero,
        left,
        pad_token: padding.map_or("", |p| p.pad_token.as_str()),
    })
}

/// The rectangle's arrays, allocated and not yet written: their spare capacity is what
/// [`windows`](Self::windows) hands out. The type ids of a layout whose type ids are all 0 are a
/// [`ZeroedArray`] instead, which nothing writes.
#[derive(Debug)]
pub struct Unfilled<T> {
    layout_rows: usize,
    sequence: usize,
    input_ids: Vec<T>,
    attention_mask: Vec<T>,
    token_type_ids: IdArray<T>,
    offsets: Option<Vec<u32>>,
    tokens: Option<Vec<Vec<String>>>,
    word_ids: Option<Vec<i32>>,
    sequence_ids: Option<Vec<i32>>,
    special_tokens_mask: Option<Vec<u8>>,
}

/// Consecutive rows of the rectangle, to be written by [`pad_rows`]: each field is the part of
/// its array those rows cover.
#[derive(Debug)]
pub struct RowsWindow<'a, T> {
    input_ids: &'a mut [MaybeUninit<T>],
    attention_mask: &'a mut [MaybeUninit<T>],
    /// `None` where the type ids are all zeros, written already.
    token_type_ids: Option<&'a mut [MaybeUninit<T>]>,
    offsets: Option<&'a mut [MaybeUninit<u32>]>,
    tokens: Option<&'a mut [Vec<String>]>,
    word_ids: Option<&'a mut [MaybeUninit<i32>]>,
    sequence_ids: Option<&'a mut [MaybeUninit<i32>]>,
    special_tokens_mask: Option<&'a mut [MaybeUninit<u8>]>,
}

/// The first `len` elements of `*slice`, leaving the rest there.
fn split_front<'a, E>(slice: &mut &'a mut [E], len: usize) -> &'a mut [E] {
    let (front, rest) = std::mem::take(slice).split_at_mut(len);
    *slice = rest;
    front
}

impl<T: IdElement> Unfilled<T> {
    /// Room for `layout`'s rectangle and the optional parts `returns` asks for.
    pub fn new(layout: &Layout<'_>, returns: Returns) -> Unfilled<T> {
        let cells = layout.rows * layout.sequence;
        Unfilled {
            layout_rows: layout.rows,
            sequence: layout.sequence,
            input_ids: Vec::with_capacity(cells),
            attention_mask: Vec::with_capacity(cells),
            token_type_ids: if layout.type_ids_zero {
                IdArray::Zeros(ZeroedArray::new(cells))
            } else {
                IdArray::Written(Vec::with_capacity(cells))
            },
            offsets: returns.offsets.then(|| Vec::with_capacity(cells * 2)),
            tokens: returns
                .tokens
                .then(|| (0..layout.rows).map(|_| Vec::new()).collect()),
            word_ids: returns.word_ids.then(|| Vec::with_capacity(cells)),
            sequence_ids: returns.sequence_ids.then(|| Vec::with_capacity(cells)),
            special_tokens_mask: returns
                .special_tokens_mask
                .then(|| Vec::with_capacity(cells)),
        }
    }

    /// One window per entry of `row_counts`, covering that many rows each, in order; the counts
    /// add up to the layout's rows.
    pub fn windows(
        &mut self,
        row_counts: impl IntoIterator<Item = usize>,
    ) -> Vec<RowsWindow<'_, T>> {
        let sequence = self.sequence;
        let cells = self.layout_rows * sequence;
        let mut ids = &mut self.input_ids.spare_capacity_mut()[..cells];
        let mut mask = &mut self.attention_mask.spare_capacity_mut()[..cells];
        let mut types = match &mut self.token_type_ids {
            IdArray::Written(cells_written) => {
                Some(&mut cells_written.spare_capacity_mut()[..cells])
            }
            IdArray::Zeros(_) => None,
        };
        let mut offsets = self
            .offsets
            .as_mut()
            .map(|v| &mut v.spare_capacity_mut()[..cells * 2]);
        let mut tokens = self.tokens.as_deref_mut();
        let mut word_ids = self
            .word_ids
            .as_mut()
            .map(|v| &mut v.spare_capacity_mut()[..cells]);
        let mut sequence_ids = self
            .sequence_ids
            .as_mut()
            .map(|v| &mut v.spare_capacity_mut()[..cells]);
        let mut special = self
            .special_tokens_mask
            .as_mut()
            .map(|v| &mut v.spare_capacity_mut()[..cells]);
        row_counts
            .into_iter()
            .map(|rows| {
                let n = rows * sequence;
                RowsWindow {
                    input_ids: split_front(&mut ids, n),
                    attention_mask: split_front(&mut mask, n),
                    token_type_ids: types.as_mut().map(|s| split_front(s, n)),
                    offsets: offsets.as_mut().map(|s| split_front(s, n * 2)),
                    tokens: tokens.as_mut().map(|s| split_front(s, rows)),
                    word_ids: word_ids.as_mut().map(|s| split_front(s, n)),
                    sequence_ids: sequence_ids.as_mut().map(|s| split_front(s, n)),
                    special_tokens_mask: special.as_mut().map(|s| split_front(s, n)),
                }
            })
            .collect()
    }

    /// The rectangle, once its windows are written.
    ///
    /// # Safety
    ///
    /// [`pad_rows`] has written every window of a set of [`windows`](Self::windows) whose row
    /// counts add up to the layout's rows: between them they cover every element of every array.
    pub unsafe fn finish(mut self) -> ModelInputs<T> {
        let cells = self.layout_rows * self.sequence;
        // SAFETY: every element below `cells` (`2 * cells` for offsets) was written (the caller's
        // promise), and the capacities are at least that (`new`).
        unsafe {
            self.input_ids.set_len(cells);
            self.attention_mask.set_len(cells);
            if let IdArray::Written(v) = &mut self.token_type_ids {
                v.set_len(cells);
            }
            if let Some(v) = self.offsets.as_mut() {
                v.set_len(cells * 2);
            }
            if let Some(v) = self.word_ids.as_mut() {
                v.set_len(cells);
            }
            if let Some(v) = self.sequence_ids.as_mut() {
                v.set_len(cells);
            }
            if let Some(v) = self.special_tokens_mask.as_mut() {
                v.set_len(cells);
            }
        }
        ModelInputs {
            rows: self.layout_rows,
            sequence: self.sequence,
            input_ids: self.input_ids,
            attention_mask: self.attention_mask,
            token_type_ids: self.token_type_ids,
            offsets: self.offsets,
            tokens: self.tokens,
            word_ids: self.word_ids,
            sequence_ids: self.sequence_ids,
            special_tokens_mask: self.special_tokens_mask,
            overflow_to_sample: None,
        }
    }
}

/// Writes `source` into `out`, each element converted by `f`.
#[inline]
fn write_mapped<S: Copy, E>(out: &mut [MaybeUninit<E>], source: &[S], f: impl Fn(S) -> E) {
    for (cell, &value) in out.iter_mut().zip(source) {
        cell.write(f(value));
    }
}

/// Writes `value` into every element of `out`.
#[inline]
fn write_all<E: Copy>(out: &mut [MaybeUninit<E>], value: E) {
    for cell in out {
        cell.write(value);
    }
}

/// Pads rows `range` of `rows` into `window` (which covers exactly that many rows of
/// `layout`): every element of the window is written.
pub fn pad_rows<T: IdElement>(
    rows: &Rows,
    range: Range<usize>,
    layout: &Layout<'_>,
    window: RowsWindow<'_, T>,
) {
    let sequence = layout.sequence;
    let RowsWindow {
        input_ids,
        attention_mask,
        mut token_type_ids,
        mut offsets,
        mut tokens,
        mut word_ids,
        mut sequence_ids,
        mut special_tokens_mask,
    } = window;
    let (pad_id, one, zero, pad_type) = (
        T::of(layout.pad_id),
        T::of(1),
        T::of(0),
        T::of(layout.pad_type_id),
    );
    for (k, row) in range.enumerate() {
        let span = rows.range(row);
        let len = span.len();
        let cells = k * sequence..(k + 1) * sequence;
        // The row's tokens go to `text`, its padding to `pad`, within the row's cells.
        let (text, pad) = if layout.left {
            (sequence - len..sequence, 0..sequence - len)
        } else {
            (0..len, len..sequence)
        };
        let ids = &mut input_ids[cells.clone()];
        write_mapped(&mut ids[text.clone()], &rows.ids[span.clone()], T::of);
        write_all(&mut ids[pad.clone()], pad_id);
        let mask = &mut attention_mask[cells.clone()];
        write_all(&mut mask[text.clone()], one);
        write_all(&mut mask[pad.clone()], zero);
        if let Some(types) = token_type_ids.as_deref_mut() {
            let types = &mut types[cells.clone()];
            write_mapped(
                &mut types[text.clone()],
                &rows.type_ids[span.clone()],
                T::of,
            );
            write_all(&mut types[pad.clone()], pad_type);
        }
        if let Some(offsets) = offsets.as_deref_mut() {
            let row_offsets = &mut offsets[cells.start * 2..cells.end * 2];
            let flat = rows.offsets[span.clone()].as_flattened();
            write_mapped(&mut row_offsets[text.start * 2..text.end * 2], flat, |v| v);
            write_all(&mut row_offsets[pad.start * 2..pad.end * 2], 0);
        }
        for (out, source) in [
            (word_ids.as_deref_mut(), &rows.word_ids),
            (sequence_ids.as_deref_mut(), &rows.sequence_ids),
        ] {
            if let Some(out) = out {
                let row = &mut out[cells.clone()];
                write_mapped(&mut row[text.clone()], &source[span.clone()], |v| v);
                write_all(&mut row[pad.clone()], -1);
            }
        }
        if let Some(mask) = special_tokens_mask.as_deref_mut() {
            let row_mask = &mut mask[cells.clone()];
            write_mapped(
                &mut row_mask[text.clone()],
                &rows.special[span.clone()],
                |v| v,
            );
            write_all(&mut row_mask[pad.clone()], 1);
        }
        if let Some(tokens) = tokens.as_deref_mut() {
            let strings = rows.tokens[span].iter().cloned();
            let pads = std::iter::repeat_n(layout.pad_token.to_owned(), pad.len());
            tokens[k] = if layout.left {
                pads.chain(strings).collect()
            } else {
                strings.chain(pads).collect()
            };
        }
    }
}

/// The input each row of `pieces` comes from.
pub fn overflow_mapping(pieces: &[Piece<'_>]) -> Vec<u32> {
    let mut mapping = Vec::new();
    let mut input = 0u32;
    for (sink, _, inputs) in pieces {
        for &count in &sink.rows_per_input[inputs.clone()] {
            mapping.extend(std::iter::repeat_n(input, count as usize));
            input += 1;
        }
    }
    mapping
}

/// Pads ragged rows (`pieces`, in input order) into one rectangle, on the calling thread.
pub fn assemble<T: IdElement>(
    pieces: &[Piece<'_>],
    padding: Option<&Padding>,
    returns: Returns,
) -> Result<ModelInputs<T>, Error> {
    let layout = layout(pieces, padding)?;
    let mut unfilled = Unfilled::new(&layout, returns);
    let windows = unfilled.windows(pieces.iter().map(|(_, rows, _)| rows.len()));
    for ((rows, range, _), window) in pieces.iter().zip(windows) {
        pad_rows(rows, range.clone(), &layout, window);
    }
    // SAFETY: the windows' row counts are the pieces' and add up to the layout's rows (`layout`
    // counts them the same way), and `pad_rows` wrote each.
    let mut inputs = unsafe { unfilled.finish() };
    inputs.overflow_to_sample = returns.overflowing.then(|| overflow_mapping(pieces));
    Ok(inputs)
}

impl Tokenizer {
    /// The truncation section of the file, if it has one. The file's sections are read from the
    /// stable engine where there is one (it is built at load, the release candidate maybe not
    /// yet), else from the release candidate.
    pub fn file_truncation(&self) -> Option<Truncation> {
        match (self.family(), self.stable_engine()) {
            (Family::OpenAi(_), _) => None,
            (_, Some(stable)) => stable.file_truncation(),
            (_, None) => self.built_pipeline_engine()?.file_truncation(),
        }
    }

    /// The truncation `mode` applies to each text: the file's, none, or the call's own.
    pub fn truncation_of(&self, mode: &EncodeMode) -> Option<Truncation> {
        match mode.truncation() {
            TruncationChoice::File => self.file_truncation(),
            TruncationChoice::Off => None,
            TruncationChoice::With(truncation) => Some(*truncation),
        }
    }

    /// The padding section of the file, if it has one (read as `file_truncation` reads its).
    pub fn file_padding(&self) -> Option<FilePadding> {
        match (self.family(), self.stable_engine()) {
            (Family::OpenAi(_), _) => None,
            (_, Some(stable)) => stable.file_padding(),
            (_, None) => self.built_pipeline_engine()?.file_padding(),
        }
    }

    /// The `model_max_length` of the model's `tokenizer_config.json`, where the tokenizer was
    /// loaded with one.
    pub fn model_max_length(&self) -> Option<usize> {
        self.model_config()
            .and_then(|config| config.model_max_length)
    }

    /// The pad token of the model's configuration (`tokenizer_config.json`,
    /// `special_tokens_map.json`), where the tokenizer was loaded with one.
    fn config_pad_token(&self) -> Option<String> {
        self.model_config()
            .and_then(|config| config.special_tokens.pad.clone())
    }

    /// How many tokens the post-processor's template adds around one sequence, or a pair.
    pub fn template_tokens(&self, pair: bool) -> usize {
        match (self.family(), self.stable_engine()) {
            (Family::OpenAi(_), _) => 0,
            (_, Some(stable)) => stable.template_tokens(pair),
            (_, None) => self
                .built_pipeline_engine()
                .map_or(0, |pipeline| pipeline.template_tokens(pair)),
        }
    }

    /// The truncation `request` asks for on this tokenizer. `counts`: the call counts tokens
    /// (a count is the text's true size, so by default nothing is cut). `max_length`: the call's
    /// own maximum length (`encodeForModel`'s `maxLength`), tried before the file's.
    pub fn resolve_truncation(
        &self,
        request: &TruncationRequest,
        counts: bool,
        max_length: Option<usize>,
    ) -> Result<TruncationChoice, Error> {
        if let Family::OpenAi(encoding) = self.family() {
            if *request == TruncationRequest::Default {
                return Ok(TruncationChoice::Off);
            }
            return Err(Error::new(
                ErrorKind::InvalidOption,
                format!(
                    "truncation applies to Hugging Face tokenizers; {} has no truncation \
                     settings. Use truncate(text, maxTokens) to cut a text to a number of tokens",
                    encoding.name
                ),
            ));
        }
        let (max, strategy, stride, direction) = match request {
            TruncationRequest::Default if counts => return Ok(TruncationChoice::Off),
            TruncationRequest::Default => return Ok(TruncationChoice::File),
            TruncationRequest::Off => return Ok(TruncationChoice::Off),
            TruncationRequest::On {
                max_length: max,
                strategy,
                stride,
                direction,
            } => (max, strategy, stride, direction),
        };
        let file = self.file_truncation();
        let max_length = max
            .or(max_length)
            .or(file.map(|f| f.max_length))
            .or_else(|| self.model_max_length())
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::NotConfigured,
                    "truncation needs a maximum length, and this tokenizer has none: its file \
                     sets no truncation and no model_max_length is known. Pass truncation: \
                     { maxLength: 512 } (or the model's length)",
                )
            })?;
        let truncation = Truncation {
            max_length,
            strategy: strategy.or(file.map(|f| f.strategy)).unwrap_or_default(),
            stride: stride.or(file.map(|f| f.stride)).unwrap_or(0),
            direction: direction.or(file.map(|f| f.direction)).unwrap_or_default(),
        };
        self.check_truncation(&truncation)?;
        Ok(TruncationChoice::With(truncation))
    }

    /// Refuses truncation parameters no encoding can meet.
    fn check_truncation(&self, truncation: &Truncation) -> Result<(), Error> {
        let template = self.template_tokens(false);
        if truncation.max_length < template {
            return Err(Error::new(
                ErrorKind::OutOfRange,
                format!(
                    "truncation maxLength is {}, less than the {template} tokens the template adds \
                     to every text; pass at least {template}",
                    truncation.max_length
                ),
            ));
        }
        let room = truncation.max_length - template;
        if truncation.stride > 0 && truncation.stride >= room {
            return Err(Error::new(
                ErrorKind::OutOfRange,
                format!(
                    "truncation stride is {}, not less than the {room} tokens of text a row holds \
                     (maxLength {} less the template's {template}); pass a smaller stride or a \
                     larger maxLength",
                    truncation.stride, truncation.max_length
                ),
            ));
        }
        Ok(())
    }

    /// The padding a call asks for: `to` (`None`: no padding), the rest from the call where set,
    /// else from the file's padding section. The pad token is the call's (`pad_token`), else the
    /// file's, else the model's.
    pub fn resolve_padding(
        &self,
        to: Option<PadTo>,
        multiple_of: Option<usize>,
        side: Option<Side>,
        pad_token: Option<&str>,
    ) -> Result<Option<Padding>, Error> {
        let Some(to) = to else { return Ok(None) };
        let file = self.file_padding();
        let (pad_id, pad_type_id, pad_token) = match (pad_token, &file) {
            (Some(token), _) => {
                let id = self.token_to_id(token)?.ok_or_else(|| {
                    Error::new(
                        ErrorKind::OutOfRange,
                        format!(
                            "options.padToken {token:?} is not a token of this tokenizer; pass one \
                             it has, such as its end-of-text token"
                        ),
                    )
                })?;
                let type_id = file.as_ref().map_or(0, |file| file.pad_type_id);
                (id, type_id, token.to_owned())
            }
            (None, Some(file)) => (file.pad_id, file.pad_type_id, file.pad_token.clone()),
            (None, None) => {
                let id = match self.config_pad_token() {
                    Some(token) => self.token_to_id(&token)?.map(|id| (id, token)),
                    None => None,
                };
                let Some((id, token)) = id else {
                    return Err(Error::new(
                        ErrorKind::NotConfigured,
                        "padding needs a pad token, and this tokenizer has none (its file has no \
                         padding section and its model configuration names no pad_token). Pass \
                         padToken (its end-of-text token, say), or padding: false",
                    ));
                };
                (id, 0, token)
            }
        };
        Ok(Some(Padding {
            to,
            multiple_of: multiple_of.or(file.as_ref().and_then(|f| f.multiple_of)),
            side: side.or(file.as_ref().map(|f| f.side)).unwrap_or_default(),
            pad_id,
            pad_type_id,
            pad_token,
        }))
    }

    /// Appends the rows of one input (`first`, with `second` for a pair) to `rows`.
    ///
    /// The release candidate encodes it where it encodes the texts and no optional part is asked
    /// for; otherwise the stable engine does, as the reference.
    pub fn encode_rows<'t>(
        &'t self,
        first: &str,
        second: Option<&str>,
        options: &RowOptions,
        scratch: &mut Scratch<'t>,
        rows: &mut Rows,
    ) -> Result<(), Error> {
        if let Family::OpenAi(encoding) = self.family() {
            return Err(Error::new(
                ErrorKind::InvalidOption,
                format!(
                    "model inputs apply to Hugging Face tokenizers; {} has no template, padding or \
                     type ids. Use encodeBatch",
                    encoding.name
                ),
            ));
        }
        // A long text alone, truncated to its first ids with no overflowing windows asked for:
        // its start holds every row's token (`Tokenizer::start_kept_by_truncation`).
        let first = match second {
            None if !options.returns.overflowing => self
                .start_kept_by_truncation(
                    first,
                    options.truncation.as_ref(),
                    options.split_special,
                    scratch,
                )?
                .unwrap_or(first),
            _ => first,
        };
        let pipeline_may_answer = !options.returns.needs_stable();
        // As `encode_into` does: a long input waits for the release candidate's build rather than
        // go to the stable engine only because the build is not done.
        if pipeline_may_answer {
            self.wait_before_long_text(first.len() + second.map_or(0, str::len));
        }
        let on_pipeline = pipeline_may_answer
            && !self.wants_stable(first)
            && !second.is_some_and(|text| self.wants_stable(text));
        if on_pipeline && let Some(pipeline) = self.pipeline_engine() {
            pipeline.encode_row(first, second, options, scratch, rows)?;
            rows.end_row();
            rows.rows_per_input.push(1);
            return Ok(());
        }
        let stable = self.stable_engine().ok_or_else(|| {
            Error::new(
                ErrorKind::Engine,
                "the stable engine, which computes offsets, tokens and word ids, could not read \
                 this tokenizer's file; ask for ids and masks alone",
            )
        })?;
        let encoding = stable.encode_parts(
            first,
            second,
            options.add_special_tokens,
            options.split_special,
            options.truncation.as_ref(),
            options.returns.offsets || options.returns.tokens || options.returns.word_ids,
        )?;
        let count = rows.push_stable(&encoding, [first, second.unwrap_or("")], options.returns);
        rows.rows_per_input.push(count);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::AllowedSpecial;

    /// A WordPiece file with a BERT template and the given truncation and padding sections.
    fn bert(truncation: &str, padding: &str) -> Tokenizer {
        let tokenizer = Tokenizer::from_json(&bert_json(truncation, padding), "test").unwrap();
        tokenizer.wait_until_ready().unwrap();
        tokenizer
    }

    /// The file of [`bert`].
    fn bert_json(truncation: &str, padding: &str) -> String {
        format!(
            r###"{{"version":"1.0","truncation":{truncation},"padding":{padding},
            "added_tokens":[
              {{"id":0,"content":"[PAD]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}},
              {{"id":1,"content":"[UNK]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}},
              {{"id":2,"content":"[CLS]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}},
              {{"id":3,"content":"[SEP]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}}],
            "normalizer":{{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":true}},
            "pre_tokenizer":{{"type":"BertPreTokenizer"}},
            "post_processor":{{"type":"BertProcessing","sep":["[SEP]",3],"cls":["[CLS]",2]}},
            "decoder":null,
            "model":{{"type":"WordPiece","unk_token":"[UNK]","continuing_subword_prefix":"##","max_input_chars_per_word":100,
              "vocab":{{"[PAD]":0,"[UNK]":1,"[CLS]":2,"[SEP]":3,"word":4,"a":5,"b":6,"##s":7,"😀":8}}}}}}"###
        )
    }

    const TRUNCATE_4: &str =
        r#"{"direction":"Right","max_length":4,"strategy":"LongestFirst","stride":0}"#;
    const PAD: &str = r#"{"strategy":"BatchLongest","direction":"Right","pad_to_multiple_of":null,
        "pad_id":0,"pad_type_id":0,"pad_token":"[PAD]"}"#;

    fn rows_of(
        tokenizer: &Tokenizer,
        inputs: &[(&str, Option<&str>)],
        options: &RowOptions,
    ) -> Rows {
        let mut rows = Rows::default();
        let mut scratch = Scratch::new();
        for &(first, second) in inputs {
            tokenizer
                .encode_rows(first, second, options, &mut scratch, &mut rows)
                .unwrap();
        }
        rows
    }

    #[test]
    fn counting_ignores_the_files_truncation_and_encoding_keeps_it() {
        let tokenizer = bert(TRUNCATE_4, "null");
        let text = "word ".repeat(10);
        let mode = tokenizer.encode_mode(None, &AllowedSpecial::None).unwrap();
        assert_eq!(tokenizer.encode(&text, &mode).unwrap().len(), 4);
        let off = tokenizer
            .resolve_truncation(&TruncationRequest::Default, true, None)
            .unwrap();
        assert_eq!(off, TruncationChoice::Off);
        let counting = mode.clone().with_truncation(off);
        assert_eq!(tokenizer.count(&text, &counting).unwrap(), 12);
        let six = tokenizer
            .resolve_truncation(
                &TruncationRequest::On {
                    max_length: Some(6),
                    strategy: None,
                    stride: None,
                    direction: Some(Side::Left),
                },
                false,
                None,
            )
            .unwrap();
        let ids = tokenizer.encode(&text, &mode.with_truncation(six)).unwrap();
        assert_eq!(ids.as_slice(), [2, 4, 4, 4, 4, 3]);
    }

    #[test]
    fn truncation_true_without_a_length_is_an_error_that_says_what_to_pass() {
        let tokenizer = bert("null", "null");
        let on = TruncationRequest::On {
            max_length: None,
            strategy: None,
            stride: None,
            direction: None,
        };
        let error = tokenizer.resolve_truncation(&on, false, None).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::NotConfigured);
        assert!(error.message().contains("maxLength"), "{}", error.message());
        let short = TruncationRequest::On {
            max_length: Some(1),
            strategy: None,
            stride: None,
            direction: None,
        };
        let error = tokenizer
            .resolve_truncation(&short, false, None)
            .unwrap_err();
        assert!(
            error.message().contains("less than the 2 tokens"),
            "{}",
            error.message()
        );
    }

    /// Ids and masks of an input over `LONG_TEXT_WAIT_BYTES` wait for the release candidate's
    /// build rather than go to the stable engine whole.
    #[test]
    fn a_long_input_for_ids_alone_waits_for_the_release_candidate() {
        use super::super::engine_wait::LONG_TEXT_WAIT_BYTES;
        use super::super::stable::LONGEST_TEXT;
        let text = "word a b ".repeat(LONG_TEXT_WAIT_BYTES / 9 + 2);
        let options = RowOptions {
            add_special_tokens: true,
            split_special: true,
            ..RowOptions::default()
        };
        for _ in 0..3 {
            let tokenizer = Tokenizer::from_json(&bert_json("null", "null"), "test").unwrap();
            LONGEST_TEXT.with(|longest| longest.set(0));
            let rows = rows_of(&tokenizer, &[(&text, None)], &options);
            assert!(tokenizer.is_ready());
            assert_eq!(LONGEST_TEXT.with(|longest| longest.get()), 0);
            let stable = tokenizer
                .stable_engine()
                .unwrap()
                .encode_parts(&text, None, true, true, None, false)
                .unwrap();
            assert!(rows.ids == stable.get_ids());
        }
    }

    #[test]
    fn pairs_get_the_pair_template_type_ids_and_padding_on_both_engines() {
        let tokenizer = bert("null", PAD);
        let inputs = [("word a", Some("b words")), ("a", None)];
        let fast = RowOptions {
            add_special_tokens: true,
            split_special: true,
            ..RowOptions::default()
        };
        let reference = RowOptions {
            returns: Returns {
                special_tokens_mask: true,
                ..Returns::default()
            },
            ..fast.clone()
        };
        let padding = tokenizer
            .resolve_padding(Some(PadTo::Longest), Some(4), Some(Side::Left), None)
            .unwrap()
            .unwrap();
        for options in [&fast, &reference] {
            let rows = rows_of(&tokenizer, &inputs, options);
            let inputs: ModelInputs<i64> =
                assemble(&[(&rows, 0..2, 0..2)], Some(&padding), options.returns).unwrap();
            assert_eq!((inputs.rows, inputs.sequence), (2, 8));
            assert_eq!(
                inputs.input_ids,
                [2, 4, 5, 3, 6, 4, 7, 3, 0, 0, 0, 0, 0, 2, 5, 3]
            );
            assert_eq!(
                inputs.token_type_ids,
                [0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]
            );
            assert_eq!(
                inputs.attention_mask,
                [1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1]
            );
        }
    }

    #[test]
    fn type_ids_are_zeros_unwritten_only_where_every_cell_is_zero() {
        // A template that gives the single text type id 1, and padding whose type id is 2.
        let typed = |padding: &str| {
            let json = bert_json("null", padding).replace(
                    r#""post_processor":{"type":"BertProcessing","sep":["[SEP]",3],"cls":["[CLS]",2]}"#,
                    r#""post_processor":{"type":"TemplateProcessing",
                      "single":[{"SpecialToken":{"id":"[CLS]","type_id":1}},{"Sequence":{"id":"A","type_id":1}},{"SpecialToken":{"id":"[SEP]","type_id":1}}],
                      "pair":[{"SpecialToken":{"id":"[CLS]","type_id":0}},{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"[SEP]","type_id":0}},{"Sequence":{"id":"B","type_id":1}},{"SpecialToken":{"id":"[SEP]","type_id":1}}],
                      "special_tokens":{"[CLS]":{"id":"[CLS]","ids":[2],"tokens":["[CLS]"]},"[SEP]":{"id":"[SEP]","ids":[3],"tokens":["[SEP]"]}}}"#,
                );
            assert!(json.contains("TemplateProcessing"));
            let tokenizer = Tokenizer::from_json(&json, "typed").unwrap();
            tokenizer.wait_until_ready().unwrap();
            tokenizer
        };
        let options = RowOptions {
            add_special_tokens: true,
            split_special: true,
            ..RowOptions::default()
        };
        let pad_type_2 = r#"{"strategy":"BatchLongest","direction":"Right","pad_to_multiple_of":null,
            "pad_id":1,"pad_type_id":2,"pad_token":"[UNK]"}"#;
        /// A file, its inputs, the ids and type ids they pad to, and whether the type ids are
        /// left all zeros.
        type Case<'a> = (
            Tokenizer,
            &'a [(&'a str, Option<&'a str>)],
            &'a [u32],
            &'a [u32],
            bool,
        );
        let cases: [Case; 4] = [
            // Single texts of BERT's template: every type id is 0, nothing is written.
            (
                bert("null", PAD),
                &[("a", None), ("word a b", None)],
                &[2, 5, 3, 0, 0, 2, 4, 5, 6, 3],
                &[0; 10],
                true,
            ),
            // A pair's second sequence has type 1.
            (
                bert("null", PAD),
                &[("a", Some("b")), ("a", None)],
                &[2, 5, 3, 6, 3, 2, 5, 3, 0, 0],
                &[0, 0, 0, 1, 1, 0, 0, 0, 0, 0],
                false,
            ),
            // A template whose single text has type 1, padded with type 0.
            (
                typed(PAD),
                &[("a", None), ("a b", None)],
                &[2, 5, 3, 0, 2, 5, 6, 3],
                &[1, 1, 1, 0, 1, 1, 1, 1],
                false,
            ),
            // Pad id 1 and pad type id 2 on a template of type 0.
            (
                bert("null", pad_type_2),
                &[("a", None), ("a b", None)],
                &[2, 5, 3, 1, 2, 5, 6, 3],
                &[0, 0, 0, 2, 0, 0, 0, 0],
                false,
            ),
        ];
        for (tokenizer, inputs, ids, types, zeros) in cases {
            let padding = tokenizer
                .resolve_padding(Some(PadTo::Longest), None, None, None)
                .unwrap()
                .unwrap();
            let rows = rows_of(&tokenizer, inputs, &options);
            let got: ModelInputs<i32> = assemble(
                &[(&rows, 0..inputs.len(), 0..inputs.len())],
                Some(&padding),
                options.returns,
            )
            .unwrap();
            let ids: Vec<i32> = ids.iter().map(|&id| id as i32).collect();
            let types: Vec<i32> = types.iter().map(|&id| id as i32).collect();
            assert_eq!(got.input_ids, ids, "{inputs:?}");
            assert_eq!(&*got.token_type_ids, &types[..], "{inputs:?}");
            assert_eq!(
                matches!(got.token_type_ids, IdArray::Zeros(_)),
                zeros,
                "{inputs:?}"
            );
        }
    }

    #[test]
    fn offsets_are_utf16_units_of_each_sequence_and_overflow_rows_map_to_their_input() {
        let tokenizer = bert("null", PAD);
        let options = RowOptions {
            add_special_tokens: true,
            split_special: true,
            truncation: Some(Truncation {
                max_length: 5,
                strategy: TruncationStrategy::LongestFirst,
                stride: 1,
                direction: Side::Right,
            }),
            returns: Returns {
                offsets: true,
                tokens: true,
                word_ids: true,
                sequence_ids: true,
                special_tokens_mask: true,
                overflowing: true,
            },
        };
        let text = "😀 word a b";
        let rows = rows_of(&tokenizer, &[(text, None), ("a", Some("😀"))], &options);
        let padding = tokenizer
            .resolve_padding(Some(PadTo::Longest), None, None, None)
            .unwrap()
            .unwrap();
        let inputs: ModelInputs<u32> = assemble(
            &[(&rows, 0..rows.ends.len(), 0..2)],
            Some(&padding),
            options.returns,
        )
        .unwrap();
        assert_eq!(inputs.overflow_to_sample.as_deref(), Some(&[0, 0, 1][..]));
        assert_eq!(inputs.sequence, 5);
        let offsets = inputs.offsets.unwrap();
        let units: Vec<u16> = text.encode_utf16().collect();
        let tokens = inputs.tokens.unwrap();
        // Row 0 is [CLS] 😀 word a [SEP]; its token 1 is the emoji, two UTF-16 units.
        assert_eq!(tokens[0], ["[CLS]", "😀", "word", "a", "[SEP]"]);
        assert_eq!(&offsets[2..4], [0, 2]);
        let word = &units[offsets[4] as usize..offsets[5] as usize];
        assert_eq!(String::from_utf16(word).unwrap(), "word");
        assert_eq!(inputs.word_ids.unwrap()[..5], [-1, 0, 1, 2, -1]);
        let sequences = inputs.sequence_ids.unwrap();
        assert_eq!(sequences[..5], [-1, 0, 0, 0, -1]);
        assert_eq!(sequences[10..], [-1, 0, -1, 1, -1]);
        // The pair's second sequence indexes its own text.
        assert_eq!(tokens[2], ["[CLS]", "a", "[SEP]", "😀", "[SEP]"]);
        assert_eq!(&offsets[2 * 5 * 2 + 6..2 * 5 * 2 + 8], [0, 2]);
    }

    #[test]
    fn rows_of_different_lengths_without_padding_are_refused() {
        let tokenizer = bert("null", "null");
        let rows = rows_of(
            &tokenizer,
            &[("a", None), ("a b", None)],
            &RowOptions::default(),
        );
        let error = assemble::<i64>(&[(&rows, 0..2, 0..2)], None, Returns::default()).unwrap_err();
        assert!(
            error.message().contains("padding: 'longest'"),
            "{}",
            error.message()
        );
        let error = tokenizer
            .resolve_padding(Some(PadTo::Longest), None, None, None)
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::NotConfigured);
    }

    #[test]
    fn the_utf16_cursor_counts_astral_characters_twice_and_restarts_backwards() {
        let text = "a😀é";
        let mut cursor = Utf16Cursor::default();
        assert_eq!(cursor.units_at(text, 1), 1);
        assert_eq!(cursor.units_at(text, 2), 3);
        assert_eq!(cursor.units_at(text, 3), 4);
        assert_eq!(cursor.units_at(text, 0), 0);
        assert_eq!(cursor.units_at(text, 1), 1);
        assert_eq!(cursor.units_at(text, 9), 4);
    }
}
