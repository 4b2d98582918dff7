//! tiktoken's own BPE, run directly on an OpenAI rank table: the engine an embedded encoding
//! encodes with from the moment its table is read.
//!
//! The release-candidate model (`pipeline.rs`) is the fast engine, but building it from a rank
//! table takes hundreds of milliseconds for the larger encodings (`openai.rs` builds it on a
//! thread of its own). This engine needs only the table and an index over it, ready in a few
//! milliseconds, so the first texts of a process encode at once. It also serves, for good, the
//! texts the release candidate's Unicode tables read differently (`unicode_drift.rs`), behind
//! tiktoken's own regex.
//!
//! The BPE is tiktoken's: a piece that is itself a token is that token; otherwise, starting from
//! single bytes, join the adjacent pair whose concatenation has the lowest rank, the leftmost on
//! a tie, until no adjacent pair is a token. Short pieces are merged by rescanning the pairs after
//! each join, as tiktoken does; long ones through a heap, so that a long piece costs
//! `n log n`, not `n^2`.
//!
//! Text repeats its pieces far more than it meets new ones, and a large encoding's table does not
//! stay in the processor's caches, so each thread keeps two caches per table: the ids of the
//! short pieces it met last (`piece_cache.rs`), so a repeated piece costs a hash and a compare
//! instead of a lookup in the table or a merge; and whether the pairs of parts it merged last
//! join (`pair_cache.rs`), so the merge of a new piece asks the table only about pairs the thread
//! has not met.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokenizers::pipeline::{PipelinePreTokenizer, PreTokenizer, PreTokenizerScratch, Span};

use super::pair_cache::{MAX_RANKS, PairCache};
use super::piece_cache::{PieceCache, PieceKey};
use super::scratch::{let_go_of_oversized, oversized_piece};
use super::{Engine, Error, ErrorKind, Ids, Scratch};

/// A rank no token has: the pair it stands for does not join.
const NO_RANK: u32 = u32::MAX;

/// Pieces up to this many bytes are merged by rescanning their pairs after each join (at most a
/// few thousand comparisons, with no heap to keep); longer ones go through the heap, whose cost
/// grows as `n log n`. Pre-tokenized text is almost all short pieces; long ones are runs of one
/// script or symbol with no break. Not tuned: this engine serves a process's first texts and the
/// rare texts of the exact path, and either way gives the same ids.
const SCAN_MERGE_MAX_BYTES: usize = 64;

/// An empty slot of [`RankTable::slots`].
const EMPTY_SLOT: u32 = u32::MAX;

/// Fixed seeds, so a table built twice is laid out the same (the lookups do not depend on them).
const SLOT_HASH: ahash::RandomState = ahash::RandomState::with_seeds(
    0x243f_6a88_85a3_08d3,
    0x1319_8a2e_0370_7344,
    0xa409_3822_299f_31d0,
    0x082e_fa98_ec4e_6c89,
);

/// An OpenAI rank table in its compact form (for each rank from 0 up, a length byte and the
/// token's bytes; a length of 0 marks a rank with no ordinary token), with an index from a
/// token's bytes to its rank.
pub struct RankTable {
    /// The compact table itself.
    table: Vec<u8>,
    /// `at[rank]`: where rank's length byte is in `table`.
    at: Vec<u32>,
    /// Open addressing with linear probing: a rank in the bits of `rank_mask`, with bits of its
    /// token's hash in the others (the tag), or [`EMPTY_SLOT`]. A power of two long, at most two
    /// thirds full, so a miss ends after a few probes; the tag lets a probe pass over another
    /// token's slot without reading that token, which lies elsewhere in megabytes of table.
    slots: Box<[u32]>,
    /// The bits of a slot that hold its rank: as many as the number of ranks needs, so a rank
    /// never fills them and no slot is [`EMPTY_SLOT`].
    rank_mask: u32,
    /// `rank of the single byte b`, for every byte.
    byte_ranks: [u32; 256],
    /// The most bytes one token spells.
    longest: usize,
    /// The rank of the token with no bytes, where a rank file gives one (`tiktoken_file.rs`): a
    /// gap in `table` that is still a token, which the BPE never forms.
    empty_token: Option<u32>,
    /// Every rank with a token, in the byte order of the tokens, built on first use
    /// ([`RankTable::tokens_starting_with`]).
    sorted: OnceLock<Box<[u32]>>,
}

impl RankTable {
    /// Reads a compact table; the error says what is wrong with it.
    pub fn new(table: Vec<u8>) -> Result<RankTable, String> {
        if u32::try_from(table.len()).is_err() {
            return Err(format!(
                "{} bytes is too long for a rank table",
                table.len()
            ));
        }
        let mut at = Vec::new();
        let mut offset = 0;
        while offset < table.len() {
            at.push(offset as u32);
            offset += 1 + table[offset] as usize;
        }
        if offset != table.len() {
            return Err(format!("rank {} runs past the end", at.len() - 1));
        }
        if at.len() > MAX_RANKS {
            return Err(format!(
                "{} ranks is more than the {MAX_RANKS} a rank table may have",
                at.len()
            ));
        }
        let tokens = at.iter().filter(|&&at| table[at as usize] != 0).count();
        let mask = (tokens * 3 / 2).next_power_of_two().max(2) - 1;
        let mut slots = vec![EMPTY_SLOT; mask + 1].into_boxed_slice();
        let rank_mask = u32::MAX
            .checked_shr((at.len() as u32).leading_zeros())
            .unwrap_or(0);
        let mut byte_ranks = [NO_RANK; 256];
        let mut longest = 0;
        let token = |rank: u32| token_at(&table, at[rank as usize]);
        for rank in 0..at.len() as u32 {
            let Some(bytes) = token(rank) else {
                continue;
            };
            let (start, tag) = slot_and_tag(bytes, mask, rank_mask);
            match probe(&slots, rank_mask, (start, tag), bytes, token) {
                Ok(other) => return Err(format!("ranks {other} and {rank} are the same token")),
                Err(empty) => slots[empty] = tag | rank,
            }
            if let [byte] = bytes {
                byte_ranks[*byte as usize] = rank;
            }
            longest = longest.max(bytes.len());
        }
        if let Some(byte) = byte_ranks.iter().position(|&rank| rank == NO_RANK) {
            return Err(format!("byte {byte:#04x} has no rank"));
        }
        Ok(RankTable {
            table,
            at,
            slots,
            rank_mask,
            byte_ranks,
            longest,
            empty_token: None,
            sorted: OnceLock::new(),
        })
    }

    /// The table with the empty token at `rank` (a rank the compact table leaves without a
    /// token), or without one.
    pub fn with_empty_token(mut self, rank: Option<u32>) -> Result<RankTable, String> {
        let Some(rank) = rank else {
            return Ok(self);
        };
        match self.at.get(rank as usize) {
            Some(&at) if token_at(&self.table, at).is_none() => {
                self.empty_token = Some(rank);
                Ok(self)
            }
            Some(_) => Err(format!("rank {rank} is a token already")),
            None => Err(format!("rank {rank} is past the table's last rank")),
        }
    }

    /// The rank of the token with no bytes, if the table has one.
    pub fn empty_token(&self) -> Option<u32> {
        self.empty_token
    }

    /// The table in its compact form.
    pub fn compact(&self) -> &[u8] {
        &self.table
    }

    /// The most bytes one token spells.
    pub fn longest_token(&self) -> usize {
        self.longest
    }

    /// One more than the largest rank.
    pub fn len(&self) -> usize {
        self.at.len()
    }

    /// The bytes of the token of `rank` (none for the empty token); `None` for a rank with no
    /// token, or past the end.
    #[inline]
    pub fn token(&self, rank: u32) -> Option<&[u8]> {
        match token_at(&self.table, *self.at.get(rank as usize)?) {
            None if self.empty_token == Some(rank) => Some(&[]),
            token => token,
        }
    }

    /// The rank of the token `bytes`, if it is one.
    #[inline]
    pub fn rank(&self, bytes: &[u8]) -> Option<u32> {
        if bytes.is_empty() {
            return self.empty_token;
        }
        let start = slot_and_tag(bytes, self.slots.len() - 1, self.rank_mask);
        probe(&self.slots, self.rank_mask, start, bytes, |rank| {
            token_at(&self.table, self.at[rank as usize])
        })
        .ok()
    }

    /// The tokens whose bytes begin with `prefix`, with their ranks, in byte order. The first call
    /// sorts the table (tens of milliseconds for the largest); each call after it is a binary
    /// search.
    pub fn tokens_starting_with<'t>(
        &'t self,
        prefix: &'t [u8],
    ) -> impl Iterator<Item = (u32, &'t [u8])> + 't {
        let sorted = self.sorted.get_or_init(|| {
            let mut ranks: Vec<u32> = (0..self.len() as u32)
                .filter(|&rank| self.token(rank).is_some())
                .collect();
            ranks.sort_unstable_by(|&a, &b| self.token(a).cmp(&self.token(b)));
            ranks.into_boxed_slice()
        });
        let first = sorted.partition_point(|&rank| self.token(rank).is_some_and(|t| t < prefix));
        sorted[first..]
            .iter()
            .map(|&rank| (rank, self.token(rank).unwrap_or_default()))
            .take_while(move |(_, token)| token.starts_with(prefix))
    }

    /// The rank of `joined`, the tokens `left` and `right` side by side, or [`NO_RANK`]; through
    /// `pairs`, which holds this table's pairs only.
    #[inline]
    fn joined_rank(&self, pairs: &mut PairCache, left: u32, right: u32, joined: &[u8]) -> u32 {
        if let Some(rank) = pairs.get(left, right) {
            return rank;
        }
        let rank = self.rank(joined).unwrap_or(NO_RANK);
        pairs.insert(left, right, rank);
        rank
    }

    /// Appends the ranks of one piece, tiktoken's BPE, through `cache`, which holds this table's
    /// pieces and pairs only.
    #[inline]
    fn encode_piece(
        &self,
        piece: &[u8],
        cache: &mut TableCache,
        work: &mut MergeWork,
        out: &mut Ids,
    ) {
        match piece {
            [] => {}
            [byte] => out.push(self.byte_ranks[*byte as usize]),
            _ => {
                let key = PieceKey::new(piece);
                if let Some(ids) = key.as_ref().and_then(|key| cache.pieces.get(key)) {
                    out.extend_from_slice(ids);
                    return;
                }
                let before = out.len();
                if let Some(rank) = self.rank(piece) {
                    out.push(rank);
                } else if piece.len() <= SCAN_MERGE_MAX_BYTES {
                    self.merge_by_scan(piece, &mut cache.pairs, work, out);
                } else {
                    self.merge_by_heap(piece, &mut cache.pairs, work, out);
                }
                if let Some(key) = key {
                    cache.pieces.insert(&key, &out.as_slice()[before..]);
                }
            }
        }
    }

    /// The join loop as tiktoken writes it: after each join, scan every pair for the lowest rank.
    fn merge_by_scan(
        &self,
        piece: &[u8],
        pairs: &mut PairCache,
        work: &mut MergeWork,
        out: &mut Ids,
    ) {
        // `cuts[k]..cuts[k + 1]` is part k; `part_ranks[k]` its rank; `pair_ranks[k]` the rank of
        // parts k and k + 1 joined.
        let MergeWork {
            cuts,
            part_ranks,
            pair_ranks,
            ..
        } = work;
        cuts.clear();
        cuts.extend(0..=piece.len() as u32);
        part_ranks.clear();
        part_ranks.extend(piece.iter().map(|&b| self.byte_ranks[b as usize]));
        pair_ranks.clear();
        pair_ranks.extend(
            (0..piece.len() - 1).map(|k| {
                self.joined_rank(pairs, part_ranks[k], part_ranks[k + 1], &piece[k..k + 2])
            }),
        );
        let span =
            |cuts: &[u32], from: usize, to: usize| &piece[cuts[from] as usize..cuts[to] as usize];
        loop {
            let mut best = (NO_RANK, 0);
            for (k, &rank) in pair_ranks.iter().enumerate() {
                if rank < best.0 {
                    best = (rank, k);
                }
            }
            let (rank, k) = best;
            if rank == NO_RANK {
                break;
            }
            cuts.remove(k + 1);
            part_ranks.remove(k + 1);
            part_ranks[k] = rank;
            pair_ranks.remove(k);
            if k < pair_ranks.len() {
                pair_ranks[k] =
                    self.joined_rank(pairs, rank, part_ranks[k + 1], span(cuts, k, k + 2));
            }
            if k > 0 {
                pair_ranks[k - 1] =
                    self.joined_rank(pairs, part_ranks[k - 1], rank, span(cuts, k - 1, k + 1));
            }
        }
        out.extend_from_slice(part_ranks);
    }

    /// The same joins in the same order, found through a heap of `(rank, start)`: the lowest
    /// rank, and on a tie the lowest start, the leftmost pair. A heap entry is stale once its
    /// pair has changed; pairs only grow, and a longer pair is another token with another rank,
    /// so comparing the entry's rank with the pair's current rank tells which entries are stale.
    fn merge_by_heap(
        &self,
        piece: &[u8],
        pairs: &mut PairCache,
        work: &mut MergeWork,
        out: &mut Ids,
    ) {
        let n = piece.len();
        let MergeWork {
            next,
            prev,
            part_ranks,
            pair_ranks,
            heap,
            ..
        } = work;
        // Parts are named by the byte they start at; `next[s]`/`prev[s]` link the live parts
        // (`n` ends the list, `u32::MAX` before the first); `part_ranks[s]` is part s's rank and
        // `pair_ranks[s]` the rank of part s joined with the part after it.
        next.clear();
        next.extend(1..=n as u32);
        prev.clear();
        prev.extend((0..n as u32).map(|s| s.wrapping_sub(1)));
        part_ranks.clear();
        part_ranks.extend(piece.iter().map(|&b| self.byte_ranks[b as usize]));
        pair_ranks.clear();
        pair_ranks.extend(
            (0..n - 1).map(|s| {
                self.joined_rank(pairs, part_ranks[s], part_ranks[s + 1], &piece[s..s + 2])
            }),
        );
        pair_ranks.push(NO_RANK);
        heap.clear();
        heap.extend(
            pair_ranks
                .iter()
                .enumerate()
                .filter(|&(_, &rank)| rank != NO_RANK)
                .map(|(start, &rank)| Reverse((rank, start as u32))),
        );
        while let Some(Reverse((rank, start))) = heap.pop() {
            let s = start as usize;
            if pair_ranks[s] != rank {
                continue;
            }
            // Join part s with the part after it.
            let joined = next[s] as usize;
            let after = next[joined];
            next[s] = after;
            // Part `joined` is gone, and with it its pair: its heap entries are stale.
            pair_ranks[joined] = NO_RANK;
            if (after as usize) < n {
                prev[after as usize] = start;
            }
            part_ranks[s] = rank;
            pair_ranks[s] = if (after as usize) < n {
                let joined = &piece[s..next[after as usize] as usize];
                self.joined_rank(pairs, rank, part_ranks[after as usize], joined)
            } else {
                NO_RANK
            };
            if pair_ranks[s] != NO_RANK {
                heap.push(Reverse((pair_ranks[s], start)));
            }
            let before = prev[s];
            if before != u32::MAX {
                let b = before as usize;
                pair_ranks[b] =
                    self.joined_rank(pairs, part_ranks[b], rank, &piece[b..after as usize]);
                if pair_ranks[b] != NO_RANK {
                    heap.push(Reverse((pair_ranks[b], before)));
                }
            }
        }
        let mut s = 0;
        while s < n {
            out.push(part_ranks[s]);
            s = next[s] as usize;
        }
    }

    /// The bytes of `ids`, every one of which must be a rank with a token.
    pub(super) fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>, Error> {
        let mut bytes = Vec::with_capacity(ids.len() * 4);
        for &id in ids {
            let token = self.token(id).ok_or_else(|| {
                Error::new(
                    ErrorKind::Engine,
                    format!("decoding failed: {id} is not the id of an ordinary token"),
                )
            })?;
            bytes.extend_from_slice(token);
        }
        Ok(bytes)
    }
}

/// Where `bytes`' probe starts in slots of `mask + 1`, and its tag: the hash's low bits pick the
/// slot, its high bits, outside `rank_mask`, are the tag.
#[inline]
fn slot_and_tag(bytes: &[u8], mask: usize, rank_mask: u32) -> (usize, u32) {
    let hash = SLOT_HASH.hash_one(bytes);
    (hash as usize & mask, (hash >> 32) as u32 & !rank_mask)
}

/// Probes `slots` for `bytes` from `start`, its first slot and its tag: `Ok(rank)` where a slot
/// holds it, else `Err(slot)`, the empty slot that ends the probe. `token` reads a rank's bytes;
/// only slots whose tag matches are read through it.
#[inline]
fn probe<'t>(
    slots: &[u32],
    rank_mask: u32,
    (mut slot, tag): (usize, u32),
    bytes: &[u8],
    token: impl Fn(u32) -> Option<&'t [u8]>,
) -> Result<u32, usize> {
    let mask = slots.len() - 1;
    loop {
        match slots[slot] {
            EMPTY_SLOT => return Err(slot),
            found if found & !rank_mask == tag && token(found & rank_mask) == Some(bytes) => {
                return Ok(found & rank_mask);
            }
            _ => slot = (slot + 1) & mask,
        }
    }
}

/// The token whose length byte is at `at` in a compact table; `None` for a rank with no token.
#[inline]
fn token_at(table: &[u8], at: u32) -> Option<&[u8]> {
    let at = at as usize;
    match table[at] as usize {
        0 => None,
        len => Some(&table[at + 1..at + 1 + len]),
    }
}

/// Working memory of the join loops, reused from piece to piece.
#[derive(Default)]
pub struct MergeWork {
    cuts: Vec<u32>,
    next: Vec<u32>,
    prev: Vec<u32>,
    part_ranks: Vec<u32>,
    pair_ranks: Vec<u32>,
    heap: BinaryHeap<Reverse<(u32, u32)>>,
}

/// A thread's working memory for [`RankEngine`]: the pre-tokenizer's and the join loops', and the
/// caches of each rank table the thread has encoded with.
#[derive(Default)]
struct RankScratch {
    split: PreTokenizerScratch,
    spans: Vec<Span>,
    merge: MergeWork,
    caches: Vec<TableCache>,
}

/// A thread's caches of one table's pieces and pairs. A piece's ids and a pair's joined rank
/// depend on the table alone, so the engines of one table (behind either regex) share them, and
/// no other table's engine reads them.
struct TableCache {
    table: &'static RankTable,
    /// The [`CACHE_GENERATION`] the caches were filled in.
    generation: usize,
    pieces: PieceCache,
    pairs: PairCache,
}

/// The caches of `table` among `caches`, made on first use and emptied if [`forget_caches`] was
/// called since they were filled. There are as many as tables a thread has encoded with, a
/// handful at most: the tables are the embedded encodings'.
fn table_cache_for<'c>(
    caches: &'c mut Vec<TableCache>,
    table: &'static RankTable,
) -> &'c mut TableCache {
    let generation = CACHE_GENERATION.load(Ordering::Relaxed);
    let at = match caches.iter().position(|c| std::ptr::eq(c.table, table)) {
        Some(at) => at,
        None => {
            caches.push(TableCache {
                table,
                generation,
                pieces: PieceCache::default(),
                pairs: PairCache::default(),
            });
            caches.len() - 1
        }
    };
    let found = &mut caches[at];
    if found.generation != generation {
        found.pieces.clear();
        found.pairs.clear();
        found.generation = generation;
    }
    found
}

/// Bumped to make every thread's caches start empty on its next text: benchmarks of text an
/// engine has not seen need it.
static CACHE_GENERATION: AtomicUsize = AtomicUsize::new(0);

/// Makes every thread's piece and pair caches forget what they hold before its next text.
pub(crate) fn forget_caches() {
    CACHE_GENERATION.fetch_add(1, Ordering::Relaxed);
}

thread_local! {
    /// Kept per thread rather than in the caller's [`Scratch`]: this engine serves a process's
    /// first texts and the rare texts of `unicode_drift.rs`, its buffers are small, and its caches
    /// (768 KiB per table) serve every text the thread encodes.
    static RANK_SCRATCH: RefCell<RankScratch> = RefCell::default();
}

/// tiktoken's BPE on a rank table, behind a pre-tokenizer.
pub struct RankEngine {
    ranks: &'static RankTable,
    pre_tokenizer: PipelinePreTokenizer,
}

impl RankEngine {
    /// The engine for `ranks`, splitting text with `pre_tokenizer`.
    pub fn new(ranks: &'static RankTable, pre_tokenizer: PipelinePreTokenizer) -> Self {
        RankEngine {
            ranks,
            pre_tokenizer,
        }
    }

    /// Appends the ids of `text` and returns how many of them its last piece gave (none for a text
    /// of no pieces).
    fn encode_with(
        &self,
        text: &str,
        work: &mut RankScratch,
        out: &mut Ids,
    ) -> Result<usize, Error> {
        if u32::try_from(text.len()).is_err() {
            return Err(Error::new(
                ErrorKind::Engine,
                format!(
                    "encoding failed: the text is {} bytes; texts of up to {} bytes can be encoded",
                    text.len(),
                    u32::MAX
                ),
            ));
        }
        let RankScratch {
            split,
            spans,
            merge,
            caches,
        } = work;
        spans.clear();
        self.pre_tokenizer
            .pre_tokenize(text, split, spans)
            .map_err(|e| Error::new(ErrorKind::Engine, format!("encoding failed: {e}")))?;
        let cache = table_cache_for(caches, self.ranks);
        let bytes = text.as_bytes();
        let mut last_piece_ids = 0;
        for span in spans.iter() {
            let piece = &bytes[span.start as usize..span.end as usize];
            let before = out.len();
            self.ranks.encode_piece(piece, cache, merge, out);
            last_piece_ids = out.len() - before;
        }
        // The thread keeps this memory for its next texts: not what one huge text grew (see
        // `scratch.rs`). The caches have a fixed size and stay.
        let longest = oversized_piece(text.len(), spans);
        let_go_of_oversized(
            text.len(),
            longest,
            || {
                *split = PreTokenizerScratch::default();
                *spans = Vec::new();
            },
            || *merge = MergeWork::default(),
        );
        Ok(last_piece_ids)
    }

    /// The table the engine encodes with.
    pub fn table(&self) -> &'static RankTable {
        self.ranks
    }

    /// Appends the ids of `text`, as [`Engine::encode_into`] does, and returns how many of them
    /// its last piece gave (none for a text of no pieces): where tiktoken's
    /// `encode_with_unstable` starts (`unstable.rs`).
    pub fn encode_noting_last_piece(&self, text: &str, out: &mut Ids) -> Result<usize, Error> {
        with_rank_scratch(|work| self.encode_with(text, work, out))
    }

    /// Appends the ids tiktoken's BPE joins `bytes` into, without first looking the whole of them
    /// up as a token: tiktoken's `byte_pair_encode`, which `encode_with_unstable` runs on bytes
    /// that need not be whole characters.
    pub fn merge_bytes(&self, bytes: &[u8], out: &mut Ids) {
        with_rank_scratch(|work| {
            let cache = table_cache_for(&mut work.caches, self.ranks);
            if bytes.len() <= SCAN_MERGE_MAX_BYTES {
                self.ranks
                    .merge_by_scan(bytes, &mut cache.pairs, &mut work.merge, out);
            } else {
                self.ranks
                    .merge_by_heap(bytes, &mut cache.pairs, &mut work.merge, out);
            }
        })
    }
}

/// Runs `f` with this thread's [`RankScratch`]; a re-entrant call, the only one that could find it
/// borrowed, gets memory of its own.
fn with_rank_scratch<R>(f: impl FnOnce(&mut RankScratch) -> R) -> R {
    RANK_SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut work) => f(&mut work),
        Err(_) => f(&mut RankScratch::default()),
    })
}

impl Engine for RankEngine {
    fn encode_into<'e>(
        &'e self,
        text: &str,
        _add_special_tokens: bool,
        _split_special: bool,
        _scratch: &mut Scratch<'e>,
        out: &mut Ids,
    ) -> Result<(), Error> {
        with_rank_scratch(|work| self.encode_with(text, work, out)).map(|_| ())
    }

    /// The tokens' bytes joined, as UTF-8 with U+FFFD for what is not: what the release
    /// candidate's byte-level decode gives, and tiktoken's `decode` with `errors="replace"`.
    fn decode(&self, ids: &[u32], _skip_special_tokens: bool) -> Result<String, Error> {
        let bytes = self.ranks.decode_bytes(ids)?;
        Ok(match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(invalid) => String::from_utf8_lossy(invalid.as_bytes()).into_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A compact table of `tokens`, rank = position (`b""` for a rank with no token).
    fn table(tokens: &[&[u8]]) -> Vec<u8> {
        let mut table = Vec::new();
        for token in tokens {
            table.push(token.len() as u8);
            table.extend_from_slice(token);
        }
        table
    }

    /// Every byte, then `extra`.
    fn byte_table(extra: &[&[u8]]) -> RankTable {
        let bytes: Vec<[u8; 1]> = (0..=255u8).map(|b| [b]).collect();
        let mut tokens: Vec<&[u8]> = bytes.iter().map(|b| &b[..]).collect();
        tokens.extend_from_slice(extra);
        RankTable::new(table(&tokens)).unwrap()
    }

    fn encode(ranks: &RankTable, piece: &[u8], heap: bool) -> Vec<u32> {
        let mut out = Ids::default();
        let mut work = MergeWork::default();
        let mut pairs = PairCache::default();
        if heap {
            ranks.merge_by_heap(piece, &mut pairs, &mut work, &mut out);
        } else {
            ranks.merge_by_scan(piece, &mut pairs, &mut work, &mut out);
        }
        out.as_slice().to_vec()
    }

    #[test]
    fn joins_the_lowest_rank_first_and_the_leftmost_on_a_tie() {
        // "ab" (256) before "bc" (257): "abc" is "ab" + "c"; "aaa" joins its left pair first.
        let ranks = byte_table(&[b"ab", b"bc", b"aa"]);
        for heap in [false, true] {
            assert_eq!(encode(&ranks, b"abc", heap), [256, b'c' as u32]);
            assert_eq!(encode(&ranks, b"bcab", heap), [257, 256]);
            assert_eq!(encode(&ranks, b"aaa", heap), [258, b'a' as u32]);
        }
    }

    #[test]
    fn the_tokens_starting_with_a_prefix_come_in_byte_order() {
        let ranks = byte_table(&[b"abc", b"ab", b"abd", b"xab"]);
        let found = |prefix: &[u8]| -> Vec<u32> {
            ranks
                .tokens_starting_with(prefix)
                .map(|(rank, _)| rank)
                .collect()
        };
        assert_eq!(found(b"ab"), [257, 256, 258]);
        assert_eq!(found(b"a"), [b'a' as u32, 257, 256, 258]);
        assert_eq!(found(b"abcd"), [] as [u32; 0]);
    }

    #[test]
    fn the_empty_token_is_a_token_the_merges_never_form() {
        let ranks = byte_table(&[b"", b"xy"])
            .with_empty_token(Some(256))
            .unwrap();
        assert_eq!(ranks.token(256), Some(&b""[..]));
        assert_eq!(ranks.rank(b""), Some(256));
        assert_eq!(
            ranks.decode_bytes(&[b'x' as u32, 256, 257]).unwrap(),
            b"xxy"
        );
        for heap in [false, true] {
            assert_eq!(encode(&ranks, b"xyx", heap), [257, b'x' as u32]);
        }
        let refused = |rank| {
            byte_table(&[b"", b"xy"])
                .with_empty_token(Some(rank))
                .err()
                .unwrap()
        };
        assert!(refused(257).contains("rank 257 is a token already"));
        assert!(refused(258).contains("past the table's last rank"));
        assert_eq!(byte_table(&[]).rank(b""), None);
    }

    #[test]
    fn a_table_with_a_gap_is_read_and_a_broken_one_refused() {
        let ranks = byte_table(&[b"", b"xy"]);
        assert_eq!(ranks.len(), 258);
        assert_eq!(ranks.token(256), None);
        assert_eq!(ranks.rank(b"xy"), Some(257));
        assert_eq!(ranks.rank(b"yx"), None);
        assert!(
            RankTable::new(table(&[b"a"]))
                .err()
                .unwrap()
                .contains("has no rank")
        );
        assert!(
            RankTable::new(vec![3, b'a'])
                .err()
                .unwrap()
                .contains("past the end")
        );
        let twice = table(&[&[0], b"ab", b"ab"]);
        assert!(
            RankTable::new(twice)
                .err()
                .unwrap()
                .contains("ranks 1 and 2 are the same token")
        );
        assert!(
            RankTable::new(vec![0; MAX_RANKS + 1])
                .err()
                .unwrap()
                .contains("ranks is more than")
        );
    }

    /// Every token is found, and nothing else, whether the number of ranks is a power of two (the
    /// rank bits of a slot one wider than the largest rank needs) or one less.
    #[test]
    fn every_token_is_found_whatever_the_number_of_ranks() {
        for extra in [256, 255] {
            let tokens: Vec<[u8; 2]> = (0..extra).map(|i| [b'x', i as u8]).collect();
            let tokens: Vec<&[u8]> = tokens.iter().map(|t| &t[..]).collect();
            let ranks = byte_table(&tokens);
            assert_eq!(ranks.len(), 256 + extra);
            for (i, token) in tokens.iter().enumerate() {
                assert_eq!(ranks.rank(token), Some(256 + i as u32));
            }
            for byte in 0..=255u8 {
                assert_eq!(ranks.rank(&[byte]), Some(byte as u32));
                assert_eq!(ranks.rank(&[b'y', byte]), None);
            }
        }
    }

    /// Two tables on one thread keep apart caches: a pair that joins in one table stays two bytes
    /// in the other, whether the piece or only the pair was met before, and a forgotten cache
    /// answers nothing.
    #[test]
    fn each_table_has_its_own_cache() {
        let joined: &'static RankTable = Box::leak(Box::new(byte_table(&[b"ab"])));
        let apart: &'static RankTable = Box::leak(Box::new(byte_table(&[b"ba"])));
        let mut caches = Vec::new();
        let mut work = MergeWork::default();
        let mut encode = |piece: &[u8], table: &'static RankTable, caches: &mut Vec<TableCache>| {
            let mut out = Ids::default();
            let cache = table_cache_for(caches, table);
            table.encode_piece(piece, cache, &mut work, &mut out);
            out.as_slice().to_vec()
        };
        let byte = |b: u8| b as u32;
        for piece in [b"abc", b"abd", b"abc"] {
            let last = byte(piece[2]);
            assert_eq!(encode(piece, joined, &mut caches), [256, last]);
            assert_eq!(
                encode(piece, apart, &mut caches),
                [byte(b'a'), byte(b'b'), last]
            );
        }
        assert_eq!(caches.len(), 2);
        let key = PieceKey::new(b"abc").unwrap();
        let cache = table_cache_for(&mut caches, joined);
        assert!(cache.pieces.get(&key).is_some());
        cache.pairs.insert(byte(b'x'), byte(b'y'), NO_RANK);
        forget_caches();
        let cache = table_cache_for(&mut caches, joined);
        assert!(cache.pieces.get(&key).is_none());
        assert_eq!(cache.pairs.get(byte(b'x'), byte(b'y')), None);
    }

    #[test]
    fn a_huge_text_or_piece_leaves_no_buffers_of_its_size_on_the_thread() {
        use super::super::scratch::{KEEP_TEXT_BYTES, oversized_texts};
        let tokenizer = crate::engine::Tokenizer::from_encoding("r50k_base").unwrap();
        let crate::engine::Family::OpenAi(encoding) = tokenizer.family() else {
            unreachable!()
        };
        let [first, full] = encoding.model.engines_for_tests().unwrap();
        for text in &oversized_texts() {
            let encode = |engine: &dyn Engine| {
                let mut ids = Ids::default();
                engine
                    .encode_into(text, false, false, &mut Scratch::new(), &mut ids)
                    .unwrap();
                ids.as_slice().to_vec()
            };
            let first_ids = encode(first);
            RANK_SCRATCH.with(|cell| {
                let work = cell.borrow();
                if text.len() > KEEP_TEXT_BYTES {
                    assert_eq!(work.spans.capacity(), 0);
                } else {
                    assert_eq!(work.merge.cuts.capacity(), 0);
                    assert_eq!(work.merge.heap.capacity(), 0);
                }
            });
            assert_eq!(first_ids, encode(full), "{} bytes", text.len());
        }
    }

    /// The heap and the rescan agree on random pieces over a small alphabet, where many pairs
    /// join and ties are common.
    #[test]
    fn heap_merge_equals_scan_merge() {
        let mut rng = fastrand::Rng::with_seed(0x5eed);
        let mut extra: Vec<Vec<u8>> = Vec::new();
        for _ in 0..300 {
            let len = rng.usize(2..7);
            let token: Vec<u8> = (0..len).map(|_| b"abcd"[rng.usize(0..4)]).collect();
            if !extra.contains(&token) {
                extra.push(token);
            }
        }
        let extra: Vec<&[u8]> = extra.iter().map(Vec::as_slice).collect();
        let ranks = byte_table(&extra);
        for _ in 0..2000 {
            let len = rng.usize(2..200);
            let piece: Vec<u8> = (0..len).map(|_| b"abcd"[rng.usize(0..4)]).collect();
            assert_eq!(
                encode(&ranks, &piece, true),
                encode(&ranks, &piece, false),
                "{}",
                String::from_utf8_lossy(&piece)
            );
        }
    }
}
