//! A thread's cache of which adjacent pairs of tokens join, in front of a rank table.
//!
//! tiktoken's BPE merges a piece that is not a token from its bytes: it asks the table for the
//! rank of every adjacent pair's concatenation, and again for the pairs around each join. Most
//! answers are "no such token", and each costs a hash of the bytes and two or three reads from a
//! table of megabytes. Yet the pairs repeat far more than the pieces do: the same few thousand
//! byte and syllable pairs make up most words of a script. This cache keeps, for the pairs a
//! thread asked about last, the rank of their concatenation (or that there is none), keyed by the
//! two parts' ranks, so a repeated pair costs one multiply and one compare.
//!
//! Invariants:
//!
//! * A part's rank names its bytes (a rank table holds each token once), so the pair of ranks
//!   names the concatenation exactly, and an entry keyed by both ranks in full answers for that
//!   concatenation only: a hit is the table's answer.
//! * An entry is written whole by the one thread that owns the cache; a newer pair whose hash
//!   picks the same entry replaces it, and [`PairCache::clear`] empties them all. The cache
//!   never grows.

/// Entries in a cache: 32,768 of 16 bytes, 512 KiB, as the piece cache beside it.
const ENTRIES_LOG2: u32 = 15;

/// A rank no token has; a `left` of this marks an empty entry, as no part has it.
const EMPTY: u32 = u32::MAX;

/// One pair's answer: the two parts' ranks, and the rank of their concatenation (`u32::MAX` when
/// it is not a token). 16 bytes, aligned, so an entry never straddles a cache line.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Entry {
    left: u32,
    right: u32,
    joined: u32,
}

const EMPTY_ENTRY: Entry = Entry {
    left: EMPTY,
    right: EMPTY,
    joined: EMPTY,
};

/// A thread's cache of pairs' joined ranks; see the module docs.
pub struct PairCache {
    entries: Box<[Entry]>,
}

impl Default for PairCache {
    fn default() -> Self {
        PairCache {
            entries: vec![EMPTY_ENTRY; 1 << ENTRIES_LOG2].into_boxed_slice(),
        }
    }
}

impl PairCache {
    /// Fibonacci hashing of the two ranks as one word: the multiply carries every bit of both to
    /// the top bits, which pick the entry. Fixed, with no per-process seed: pairs that share an
    /// entry only miss, as a hit compares both ranks.
    #[inline]
    fn slot(left: u32, right: u32) -> usize {
        const MUL: u64 = 0x9e37_79b9_7f4a_7c15;
        let pair = (u64::from(left) << 32) | u64::from(right);
        (pair.wrapping_mul(MUL) >> (64 - ENTRIES_LOG2)) as usize
    }

    /// The cached rank of the concatenation of the tokens `left` and `right` (`u32::MAX` where it
    /// is none), if the pair is cached.
    #[inline]
    pub fn get(&self, left: u32, right: u32) -> Option<u32> {
        let entry = &self.entries[Self::slot(left, right)];
        (entry.left == left && entry.right == right).then_some(entry.joined)
    }

    /// Keeps `joined` as the rank of the concatenation of `left` and `right`, in place of what
    /// its entry held.
    #[inline]
    pub fn insert(&mut self, left: u32, right: u32, joined: u32) {
        debug_assert_ne!(left, EMPTY, "a part always has a rank");
        self.entries[Self::slot(left, right)] = Entry {
            left,
            right,
            joined,
        };
    }

    /// Forgets every pair.
    pub fn clear(&mut self) {
        self.entries.fill(EMPTY_ENTRY);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pair and its mirror are apart, and an answer of "no token" is kept as one.
    #[test]
    fn a_hit_is_the_pair_asked_for() {
        let mut cache = PairCache::default();
        cache.insert(1, 2, 300);
        cache.insert(2, 1, EMPTY);
        assert_eq!(cache.get(1, 2), Some(300));
        assert_eq!(cache.get(2, 1), Some(EMPTY));
        assert_eq!(cache.get(1, 3), None);
        cache.clear();
        assert_eq!(cache.get(1, 2), None);
    }

    /// 200,000 pairs through 32,768 entries: whatever was replaced, every hit gives the rank
    /// stored for that very pair.
    #[test]
    fn replaced_entries_never_answer_for_another_pair() {
        let mut cache = PairCache::default();
        let joined = |left: u32, right: u32| left.wrapping_mul(31) ^ right;
        let mut rng = fastrand::Rng::with_seed(7);
        let pairs: Vec<(u32, u32)> = (0..200_000)
            .map(|_| (rng.u32(0..5000), rng.u32(0..5000)))
            .collect();
        for &(left, right) in &pairs {
            cache.insert(left, right, joined(left, right));
        }
        let mut hits = 0;
        for &(left, right) in &pairs {
            if let Some(rank) = cache.get(left, right) {
                assert_eq!(rank, joined(left, right));
                hits += 1;
            }
        }
        assert!(hits > 10_000, "{hits} hits");
    }

    /// Pairs of small ranks, the byte pairs every merge starts from, spread over the entries.
    #[test]
    fn the_hash_spreads_byte_pairs() {
        let mut used = vec![false; 1 << ENTRIES_LOG2];
        for left in 0..256 {
            for right in 0..128 {
                used[PairCache::slot(left, right)] = true;
            }
        }
        let used = used.iter().filter(|&&u| u).count();
        assert!(used > (1 << ENTRIES_LOG2) / 2, "{used} entries of 32,768");
    }
}
