//! A thread's cache of which adjacent pairs of tokens join, in front of a rank table.
//!
//! tiktoken's BPE merges a piece that is not a token from its bytes: it asks the table for the
//! rank of every adjacent pair's concatenation, and again for the pairs around each join. Most
//! answers are "no such token", and each costs a hash of the bytes and a read from an index of
//! megabytes, likely a miss in the processor's caches. Yet the pairs repeat far more than the
//! pieces do: the same few thousand byte and syllable pairs make up most words of a script. This
//! cache keeps, for the pairs a thread asked about last, the rank of their concatenation (or that
//! there is none), keyed by the two parts' ranks, so a repeated pair costs a hash of one word and
//! one compare.
//!
//! Invariants:
//!
//! * A part's rank names its bytes (a rank table holds each token once), so the pair of ranks
//!   names the concatenation exactly, and an entry keyed by both ranks in full answers for that
//!   concatenation only: a hit is the table's answer.
//! * Every rank, joined ones included, is below [`MAX_RANKS`] (`RankTable::new` refuses larger
//!   tables), so three of them pack into one word without loss, and the value with every bit
//!   set is left free to mark "no token" and an empty entry.
//! * An entry is written whole by the one thread that owns the cache; a newer pair whose hash
//!   picks the same entry replaces it, and [`PairCache::clear`] empties them all. The cache
//!   never grows.

/// Entries in a cache: 32,768 of 8 bytes, 256 KiB. On the multilingual corpus, where merges are
/// most of the work, 32,768 entries left about 11% of the pairs to the table; twice as many left
/// 10%, four times 9%.
const ENTRIES_LOG2: u32 = 15;

/// Bits of a rank in an entry.
const RANK_BITS: u32 = 21;

/// A rank's bits all set: no rank has it, as tables have fewer ranks (see [`MAX_RANKS`]).
const RANK_FIELD: u64 = (1 << RANK_BITS) - 1;

/// The most ranks a table whose pairs are cached may have: 2,097,151, ten times the largest
/// OpenAI encoding's.
pub const MAX_RANKS: usize = RANK_FIELD as usize;

/// An entry with all bits set: its pair has two ranks that do not exist.
const EMPTY_ENTRY: u64 = u64::MAX;

/// A thread's cache of pairs' joined ranks; see the module docs.
pub struct PairCache {
    /// Each entry the pair's two ranks and the joined rank ([`RANK_FIELD`] for none), packed.
    entries: Box<[u64]>,
}

impl Default for PairCache {
    fn default() -> Self {
        PairCache {
            entries: vec![EMPTY_ENTRY; 1 << ENTRIES_LOG2].into_boxed_slice(),
        }
    }
}

impl PairCache {
    /// The two ranks side by side, in the low 42 bits.
    #[inline]
    fn key(left: u32, right: u32) -> u64 {
        (u64::from(left) << RANK_BITS) | u64::from(right)
    }

    /// Two rounds of multiply and xor-shift, as in the finalizer of MurmurHash3: a pair's ranks
    /// sit in two narrow fields of the key, and one multiply alone leaves pairs of small ranks
    /// crowded into a few entries. Fixed, with no per-process seed: pairs that share an entry
    /// only miss, as a hit compares both ranks.
    #[inline]
    fn slot(key: u64) -> usize {
        let mut h = key ^ (key >> 33);
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        (h >> (64 - ENTRIES_LOG2)) as usize
    }

    /// The cached rank of the concatenation of the tokens `left` and `right` (`u32::MAX` where it
    /// is none), if the pair is cached.
    #[inline]
    pub fn get(&self, left: u32, right: u32) -> Option<u32> {
        let key = Self::key(left, right);
        let entry = self.entries[Self::slot(key)];
        let joined = match entry & RANK_FIELD {
            RANK_FIELD => u32::MAX,
            joined => joined as u32,
        };
        (entry >> RANK_BITS == key).then_some(joined)
    }

    /// Keeps `joined` as the rank of the concatenation of `left` and `right`, in place of what
    /// its entry held.
    #[inline]
    pub fn insert(&mut self, left: u32, right: u32, joined: u32) {
        let key = Self::key(left, right);
        self.entries[Self::slot(key)] = (key << RANK_BITS) | (u64::from(joined) & RANK_FIELD);
    }

    /// Forgets every pair.
    pub fn clear(&mut self) {
        self.entries.fill(EMPTY_ENTRY);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pair and its mirror are apart, an answer of "no token" is kept as one, and the largest
    /// rank survives the packing in every field.
    #[test]
    fn a_hit_is_the_pair_asked_for() {
        let mut cache = PairCache::default();
        let largest = MAX_RANKS as u32 - 1;
        cache.insert(1, 2, 300);
        cache.insert(2, 1, u32::MAX);
        cache.insert(largest, largest, largest);
        assert_eq!(cache.get(1, 2), Some(300));
        assert_eq!(cache.get(2, 1), Some(u32::MAX));
        assert_eq!(cache.get(largest, largest), Some(largest));
        assert_eq!(cache.get(1, 3), None);
        assert_eq!(cache.get(largest, 0), None);
        cache.clear();
        assert_eq!(cache.get(1, 2), None);
    }

    /// 200,000 pairs through 32,768 entries, half of them of small ranks and half of any rank:
    /// whatever was replaced, every hit gives the rank stored for that very pair.
    #[test]
    fn replaced_entries_never_answer_for_another_pair() {
        let mut cache = PairCache::default();
        let joined = |left: u32, right: u32| (left.wrapping_mul(31) ^ right) % MAX_RANKS as u32;
        let mut rng = fastrand::Rng::with_seed(7);
        let pairs: Vec<(u32, u32)> = (0..200_000)
            .map(|i| {
                let below = if i % 2 == 0 { 5000 } else { MAX_RANKS as u32 };
                (rng.u32(0..below), rng.u32(0..below))
            })
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
                used[PairCache::slot(PairCache::key(left, right))] = true;
            }
        }
        let used = used.iter().filter(|&&u| u).count();
        assert!(used > (1 << ENTRIES_LOG2) / 2, "{used} entries of 32,768");
    }
}
