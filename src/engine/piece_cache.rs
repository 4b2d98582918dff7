//! A thread's cache of the ids of short pieces, in front of a rank table.
//!
//! Encoding a piece means one lookup in the rank table when the piece is a token, and a few
//! lookups per byte when it must be merged. The table of a large encoding is megabytes, so each
//! lookup is likely a miss in the processor's caches; yet text repeats its pieces (the same words,
//! the same runs of spaces and punctuation) far more than it meets new ones. This cache keeps the
//! ids of the pieces a thread met last in a small direct-mapped array, about the size of a core's
//! second-level cache, so a repeated piece costs one hash and one compare.
//!
//! Invariants:
//!
//! * An entry holds a piece's bytes in full (a piece of at most [`MAX_PIECE_BYTES`] bytes, packed
//!   into two words with its length), never only a hash of them, so a hit is always the piece
//!   asked for and its ids are the ids the table gives it.
//! * An entry is written whole by the one thread that owns the cache; a newer piece whose hash
//!   picks the same entry replaces it, and [`PieceCache::clear`] empties them all. The cache
//!   never grows.

/// The longest piece the cache keeps: two words of key.
pub const MAX_PIECE_BYTES: usize = 16;

/// The most ids an entry holds; a piece that merges into more is not kept.
const MAX_IDS: usize = 3;

/// Entries in a cache: 16,384 of 32 bytes, 512 KiB, about a core's second-level cache. On the
/// prose corpus, 8,192 entries left 17% of its pieces to the table and 32,768 left 9%.
const ENTRIES_LOG2: u32 = 14;

/// One cached piece: its bytes and length, and its ids. `len == 0` marks an empty entry. 32
/// bytes, aligned, so an entry never straddles a cache line.
#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
struct Entry {
    words: [u64; 2],
    len: u8,
    count: u8,
    ids: [u32; MAX_IDS],
}

/// A piece as the cache compares it: its bytes packed into two little-endian words (zeros past
/// its end), its length, and its hash.
pub struct PieceKey {
    words: [u64; 2],
    len: u8,
    hash: u64,
}

impl PieceKey {
    /// The key of `piece`, or `None` for an empty piece or one longer than [`MAX_PIECE_BYTES`].
    #[inline]
    pub fn new(piece: &[u8]) -> Option<PieceKey> {
        if piece.is_empty() || piece.len() > MAX_PIECE_BYTES {
            return None;
        }
        let words = [head(piece), head(piece.get(8..).unwrap_or_default())];
        let len = piece.len() as u8;
        Some(PieceKey {
            words,
            len,
            hash: hash(words, len),
        })
    }
}

/// The hash of a piece from its key's words and length: each word folded in with a wide
/// multiply. Fixed, with no per-process seed: pieces come from the text being encoded, so a text
/// could be made of pieces that share an entry, but that only makes them miss, as a hit compares
/// the piece itself.
#[inline]
fn hash(words: [u64; 2], len: u8) -> u64 {
    const SEED: u64 = 0x243f_6a88_85a3_08d3;
    const MUL: u64 = 0x9e37_79b9_7f4a_7c15;
    fold(fold(words[0] ^ SEED ^ len as u64, MUL) ^ words[1], MUL)
}

/// The first eight bytes of `bytes` as a little-endian word, zeros past its end.
#[inline]
fn head(bytes: &[u8]) -> u64 {
    if let Some(first) = bytes.first_chunk::<8>() {
        u64::from_le_bytes(*first)
    } else {
        let mut buf = [0u8; 8];
        buf[..bytes.len()].copy_from_slice(bytes);
        u64::from_le_bytes(buf)
    }
}

/// The high and low halves of the 128-bit product, xored: every input bit reaches every output
/// bit.
#[inline]
fn fold(a: u64, b: u64) -> u64 {
    let wide = (a as u128) * (b as u128);
    (wide as u64) ^ ((wide >> 64) as u64)
}

/// A thread's cache of pieces' ids; see the module docs.
pub struct PieceCache {
    entries: Box<[Entry]>,
}

impl Default for PieceCache {
    fn default() -> Self {
        PieceCache {
            entries: vec![Entry::default(); 1 << ENTRIES_LOG2].into_boxed_slice(),
        }
    }
}

impl PieceCache {
    #[inline]
    fn slot(key: &PieceKey) -> usize {
        (key.hash >> (64 - ENTRIES_LOG2)) as usize
    }

    /// The ids cached for `key`'s piece, if they are.
    #[inline]
    pub fn get(&self, key: &PieceKey) -> Option<&[u32]> {
        let entry = &self.entries[Self::slot(key)];
        (entry.len == key.len && entry.words == key.words)
            .then(|| &entry.ids[..entry.count as usize])
    }

    /// Keeps `ids` as the ids of `key`'s piece, in place of what its entry held; pieces of more
    /// than a few ids are not kept.
    #[inline]
    pub fn insert(&mut self, key: &PieceKey, ids: &[u32]) {
        if ids.len() > MAX_IDS {
            return;
        }
        let mut entry = Entry {
            words: key.words,
            len: key.len,
            count: ids.len() as u8,
            ids: [0; MAX_IDS],
        };
        entry.ids[..ids.len()].copy_from_slice(ids);
        self.entries[Self::slot(key)] = entry;
    }

    /// Forgets every piece.
    pub fn clear(&mut self) {
        self.entries.fill(Entry::default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hit_is_the_piece_asked_for() {
        let mut cache = PieceCache::default();
        let pieces: [&[u8]; 6] = [
            b"a",
            b"a\0",
            b"hello",
            b" sixteen bytes!!",
            b" sixteen bytes!?",
            b"seventeen bytes!!",
        ];
        for (i, piece) in pieces.iter().enumerate() {
            if let Some(key) = PieceKey::new(piece) {
                cache.insert(&key, &[i as u32]);
            }
        }
        for (i, piece) in pieces.iter().enumerate() {
            match PieceKey::new(piece) {
                Some(key) => assert_eq!(cache.get(&key), Some(&[i as u32][..]), "{piece:?}"),
                None => assert!(piece.len() > MAX_PIECE_BYTES),
            }
        }
        assert!(PieceKey::new(b"").is_none());
    }

    #[test]
    fn pieces_of_many_ids_are_not_kept_and_clear_forgets() {
        let mut cache = PieceCache::default();
        let key = PieceKey::new(b"abcd").unwrap();
        cache.insert(&key, &[1, 2, 3, 4]);
        assert_eq!(cache.get(&key), None);
        cache.insert(&key, &[1, 2, 3]);
        assert_eq!(cache.get(&key), Some(&[1, 2, 3][..]));
        cache.clear();
        assert_eq!(cache.get(&key), None);
    }

    /// Many more pieces than entries: every hit still gives the piece's own ids.
    #[test]
    fn replaced_entries_never_answer_for_another_piece() {
        let mut cache = PieceCache::default();
        let piece = |n: u32| format!("p{n}").into_bytes();
        for n in 0..100_000u32 {
            cache.insert(&PieceKey::new(&piece(n)).unwrap(), &[n]);
        }
        let mut hits = 0;
        for n in 0..100_000u32 {
            if let Some(ids) = cache.get(&PieceKey::new(&piece(n)).unwrap()) {
                assert_eq!(ids, [n]);
                hits += 1;
            }
        }
        assert!(hits > 0 && hits <= 1 << ENTRIES_LOG2);
    }

    #[test]
    fn zero_bytes_and_length_both_count() {
        let hash_of = |piece: &[u8]| PieceKey::new(piece).unwrap().hash;
        assert_ne!(hash_of(b"a"), hash_of(b"a\0"));
        assert_ne!(hash_of(b"abcdefgh"), hash_of(b"abcdefgh\0"));
        assert_eq!(head(b"ab"), u64::from_le_bytes(*b"ab\0\0\0\0\0\0"));
        assert_eq!(head(b"abcdefghij"), u64::from_le_bytes(*b"abcdefgh"));
    }

    /// 200,000 short pieces spread about evenly over the entries (the high bits of their hashes).
    #[test]
    fn pieces_spread_over_the_entries() {
        let mut load = vec![0u32; 1 << ENTRIES_LOG2];
        for n in 0..200_000u32 {
            let key = PieceKey::new(format!(" w{n}").as_bytes()).unwrap();
            load[PieceCache::slot(&key)] += 1;
        }
        // About 12 per entry; an entry this full would be far past chance.
        assert!(load.iter().all(|&c| c <= 40), "{:?}", load.iter().max());
    }
}
