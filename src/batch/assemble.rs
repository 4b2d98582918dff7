//! Putting a batch's ids together in input order, the copying spread over the scheduler's threads.
//!
//! Workers leave each chunk's ids in their own buffer; the result is one buffer in input order.
//! Copying every id into it on one thread would be a serial pass over the whole output (and the
//! page faults of a fresh buffer that size) after a parallel one, so the copies run as a batch of
//! their own: item `k` copies chunk `k` to where the chunks before it end.
//!
//! The invariant the unsafe code keeps: the destination ranges are disjoint and lie within the
//! buffer's capacity (they are consecutive, from prefix sums of the chunk lengths, and end at the
//! total the buffer was allocated for), and the scheduler runs each item exactly once; so no two
//! threads write the same element, and every element is written before the length is set.

use std::mem::MaybeUninit;

use crate::scheduler::{Batch, BatchError, CancelToken, ItemError, Scheduler};

/// One chunk's ids and where they go.
struct Piece<'a> {
    ids: &'a [u32],
    at: usize,
}

/// The buffer the pieces are copied into.
struct Destination(*mut MaybeUninit<u32>);

// SAFETY: threads write through the pointer only to the disjoint ranges of distinct pieces (the
// module's invariant), so sharing it between them races on no element.
unsafe impl Sync for Destination {}

struct CopyPieces<'a> {
    pieces: Vec<Piece<'a>>,
    destination: Destination,
}

impl Batch for CopyPieces<'_> {
    type Sink = ();
    type Mark = ();

    fn len(&self) -> usize {
        self.pieces.len()
    }

    fn cost(&self, index: usize) -> usize {
        size_of_val(self.pieces[index].ids)
    }

    fn new_sink(&self) {}

    fn mark(&self, _sink: &()) {}

    fn process(&self, index: usize, _sink: &mut ()) -> Result<(), ItemError> {
        let Piece { ids, at } = self.pieces[index];
        // SAFETY: `at..at + ids.len()` lies within the destination's capacity and no other piece
        // covers it (the module's invariant); the source is another allocation.
        unsafe {
            std::ptr::copy_nonoverlapping(
                ids.as_ptr(),
                self.destination.0.add(at).cast::<u32>(),
                ids.len(),
            );
        }
        Ok(())
    }
}

/// Concatenates `pieces` (each a slice of ids) in order into one vector, copying them on
/// `scheduler`'s threads.
pub fn concatenate<'a>(
    scheduler: &Scheduler,
    pieces: impl IntoIterator<Item = &'a [u32]>,
) -> Result<Vec<u32>, BatchError> {
    let mut total = 0;
    let pieces: Vec<Piece<'a>> = pieces
        .into_iter()
        .map(|ids| {
            let piece = Piece { ids, at: total };
            total += ids.len();
            piece
        })
        .collect();
    let mut out: Vec<u32> = Vec::with_capacity(total);
    let copies = CopyPieces {
        pieces,
        destination: Destination(out.spare_capacity_mut().as_mut_ptr()),
    };
    // Nothing cancels a copy: it is short next to the encoding before it, and a result that is
    // ready is better handed over than thrown away.
    scheduler.run_untracked(&copies, &CancelToken::new())?;
    // SAFETY: the run succeeded, so every piece was copied (exactly once, to its own range), and
    // the ranges tile `0..total`: the first `total` elements are initialised.
    unsafe { out.set_len(total) };
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::{Policy, SchedulerConfig};

    #[test]
    fn pieces_come_out_in_order_under_every_policy() {
        let pieces: Vec<Vec<u32>> = (0..300u32)
            .map(|k| (0..(k * 37) % 2000).map(|i| k * 10_000 + i).collect())
            .collect();
        let expected: Vec<u32> = pieces.iter().flatten().copied().collect();
        for policy in [Policy::Chunked, Policy::Serial, Policy::Rayon] {
            for threads in [1, 2, 4] {
                let scheduler = Scheduler::new(SchedulerConfig {
                    threads,
                    policy,
                    ..SchedulerConfig::default()
                })
                .unwrap();
                let got = concatenate(&scheduler, pieces.iter().map(Vec::as_slice)).unwrap();
                assert_eq!(got, expected, "{policy} x{threads}");
            }
        }
        let scheduler = Scheduler::new(SchedulerConfig::default()).unwrap();
        assert!(concatenate(&scheduler, []).unwrap().is_empty());
    }
}
