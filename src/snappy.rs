//! Decoding one raw Snappy block: the compressed form of a Parquet page.
//!
//! A Parquet page compressed with Snappy holds one raw block (no framing), and its page header
//! says how long the page is uncompressed. The block's own preamble says the same; a block whose
//! preamble disagrees with the header, or that does not decode to exactly that length, is
//! refused rather than handed on short or padded, so a damaged page is an error, never wrong text.

use std::fmt;

/// Why a block was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnappyError {
    /// The block's preamble gives another length than the one expected.
    Length {
        /// The length the block says it decodes to.
        block: usize,
        /// The length the caller expected (a page header's uncompressed size).
        expected: usize,
    },
    /// The block does not decode: it is cut short or its contents are damaged.
    Corrupt(String),
    /// The memory for the decoded bytes could not be had.
    OutOfMemory {
        /// The length asked for.
        length: usize,
    },
}

impl fmt::Display for SnappyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SnappyError::Length { block, expected } => write!(
                f,
                "the Snappy block decodes to {block} bytes, but its page header says {expected}; the file is damaged"
            ),
            SnappyError::Corrupt(reason) => {
                write!(f, "the Snappy block is damaged ({reason})")
            }
            SnappyError::OutOfMemory { length } => write!(
                f,
                "the Snappy block decodes to {length} bytes, more than could be allocated; free memory or check the file"
            ),
        }
    }
}

impl std::error::Error for SnappyError {}

/// The bytes the raw Snappy block `block` holds, which must be `expected` long.
pub fn uncompress(block: &[u8], expected: usize) -> Result<Vec<u8>, SnappyError> {
    let corrupt = |error: snap::Error| SnappyError::Corrupt(error.to_string());
    let length = snap::raw::decompress_len(block).map_err(corrupt)?;
    if length != expected {
        return Err(SnappyError::Length {
            block: length,
            expected,
        });
    }
    // A length from a damaged file can be anything up to the caller's bound: refused as an error,
    // not an abort, where the memory cannot be had.
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(length)
        .map_err(|_| SnappyError::OutOfMemory { length })?;
    bytes.resize(length, 0);
    let written = snap::raw::Decoder::new()
        .decompress(block, &mut bytes)
        .map_err(corrupt)?;
    // The decoder fills exactly the preamble's length or fails; checked all the same, since a
    // short page would shift every value after it.
    if written != length {
        return Err(SnappyError::Corrupt(format!(
            "{written} of {length} bytes decoded"
        )));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_of(bytes: &[u8]) -> Vec<u8> {
        snap::raw::Encoder::new().compress_vec(bytes).unwrap()
    }

    #[test]
    fn gives_back_what_was_compressed() {
        let text: Vec<u8> = "a page of text, repeated so that Snappy finds copies. "
            .repeat(500)
            .into_bytes();
        assert_eq!(uncompress(&block_of(&text), text.len()).unwrap(), text);
        assert_eq!(uncompress(&block_of(b""), 0).unwrap(), b"");
    }

    #[test]
    fn refuses_a_length_other_than_the_header_says() {
        let block = block_of(b"twelve bytes");
        assert_eq!(
            uncompress(&block, 13),
            Err(SnappyError::Length {
                block: 12,
                expected: 13
            })
        );
    }

    #[test]
    fn refuses_a_block_cut_short_or_damaged() {
        let text = "no copies here: abcdefghijklmnopqrstuvwxyz0123456789".repeat(40);
        let block = block_of(text.as_bytes());
        let cut = &block[..block.len() / 2];
        assert!(matches!(
            uncompress(cut, text.len()),
            Err(SnappyError::Corrupt(_))
        ));
        // A copy that reaches back before the block's start.
        let mut damaged = block_of(b"abcdabcdabcdabcdabcdabcd");
        let last = damaged.len() - 1;
        damaged[last] = 0xff;
        damaged[last - 1] = 0xff;
        assert!(uncompress(&damaged, 24).is_err());
        assert!(matches!(uncompress(&[], 0), Err(SnappyError::Corrupt(_))));
    }
}
