//! Blocking and waking: bounded spinning, the idle workers' park/wake handshake, and the drain
//! latch through which a batch's owner waits for its helpers to leave. The protocols are
//! numbered in `README.md` (P4 park, P5 wake, P6 drain).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::{self, Thread};

use crossbeam_utils::CachePadded;

/// Spin iterations an idle worker spends watching for a new batch before parking. At 10–150
/// cycles per `spin_loop` hint this is roughly 20–200 µs: long enough that back-to-back batches
/// (the addon's common case) find a worker awake without a futex wake, short enough that an idle
/// process stops using CPU almost at once.
pub(super) const IDLE_SPIN_ROUNDS: u32 = 1 << 12;

/// Spin iterations a batch's owner spends waiting for its last helpers before parking. Helpers
/// at that point are finishing one tail chunk, which the guided plan keeps small, so a short
/// spin usually avoids the park/unpark round trip.
pub(super) const DRAIN_SPIN_ROUNDS: u32 = 1 << 10;

/// At most this many idle workers spin at once. One awake worker is enough to pick up the next
/// batch without a syscall and wake the others; more would only burn the cores that
/// oversubscribed pools (`threads` > cores) need for real work.
pub(super) const MAX_SPINNERS: usize = 1;

/// Most sleepers one publish or one join wakes (P5). Each woken worker that joins wakes up to
/// this many more, so helpers arrive as a tree: about log_f(p) wake-up latencies after the
/// publish rather than p - 1 of them, a chain that on many cores is longer than a short batch.
/// A fan-out of 2 makes the tree deeper than it needs to be; beyond about 4, more buys nothing,
/// because every join holds the registry lock in turn and that queue, not the tree's depth, sets
/// when the last helper joins, while every `unpark` delays the waker's own first chunk by a
/// futex call. The model's comparison of fan-outs is in
/// `benchmark/results/scheduler.md#what-ifs`. At 2 threads the pool has one worker and the
/// fan-out cannot matter.
pub const WAKE_FANOUT: usize = 4;

/// Spins up to `rounds` times until `done()` is true; returns whether it became true.
pub(super) fn spin_until(rounds: u32, mut done: impl FnMut() -> bool) -> bool {
    for _ in 0..rounds {
        if done() {
            return true;
        }
        std::hint::spin_loop();
    }
    done()
}

/// An idle worker's wake-up channel. Only the waker that removed the worker from the
/// registry's sleeper list calls [`Sleeper::wake`], so each wake is consumed exactly once.
pub(super) struct Sleeper {
    thread: Thread,
    woken: AtomicBool,
}

impl Sleeper {
    /// A sleeper for the calling thread.
    pub fn current() -> CachePadded<Sleeper> {
        CachePadded::new(Sleeper {
            thread: thread::current(),
            woken: AtomicBool::new(false),
        })
    }

    /// Blocks until [`Sleeper::wake`] has been called (P4). The flag makes spurious unparks
    /// harmless; the park token makes a wake that lands before `park` harmless.
    pub fn wait(&self) {
        // Acquire pairs with the Release in `wake`, so whatever the waker did before waking us
        // (publishing a batch, setting `terminate`) is visible; we re-read it under the lock anyway.
        while !self.woken.swap(false, Ordering::Acquire) {
            thread::park();
        }
    }

    /// Wakes the worker (P5): set the flag, then unpark.
    pub fn wake(&self) {
        self.woken.store(true, Ordering::Release);
        self.thread.unpark();
    }
}

/// Bit of [`DrainLatch`]'s state held while the batch is published.
const OPEN: usize = 1;

/// Counts the helpers inside a batch, plus [`OPEN`] while the batch is published, so that the
/// owner can wait until the count reaches zero (P6) and the last helper to leave knows it must
/// wake the owner, both decided by the value a single atomic read-modify-write returns. Not
/// padded: a batch keeps it on the line of its claim cursor 0 (`queue::JobControl`), which a join
/// reads anyway.
pub(super) struct DrainLatch {
    state: AtomicUsize,
    owner: Thread,
}

impl DrainLatch {
    /// A latch owned by the calling thread, open (published), no helpers inside.
    pub fn new() -> Self {
        DrainLatch {
            state: AtomicUsize::new(OPEN),
            owner: thread::current(),
        }
    }

    /// Helpers currently inside. Exact while the registry lock is held, since joins happen under
    /// it; a concurrent leave can only make it smaller.
    pub fn helpers(&self) -> usize {
        self.state.load(Ordering::Relaxed).saturating_sub(OPEN)
    }

    /// Records a helper joining; returns the helpers inside, itself included (its *place*,
    /// which picks its home claim cursor). Must be called under the registry lock while the
    /// batch is published, so the owner cannot be past [`DrainLatch::close_and_wait`]'s
    /// decrement.
    pub fn enter(&self) -> usize {
        // Relaxed: the registry lock orders this join before the owner's unpublish.
        self.state.fetch_add(1, Ordering::Relaxed) + 1 - OPEN
    }

    /// Records the helper behind `latch` leaving; its last access to the batch. If it was the
    /// last one and the owner already closed the latch, wakes the owner.
    ///
    /// # Safety
    /// `latch` must point to a live latch this thread [`enter`](Self::enter)ed and has not left
    /// yet. The pointee may be freed by its owner as soon as the decrement lands, which is why
    /// this takes a raw pointer rather than `&self`.
    pub unsafe fn leave(latch: *const DrainLatch) {
        // SAFETY: per the contract we are still counted inside, so the owner is blocked in
        // `close_and_wait` (or has not reached it) and the latch is alive until our decrement.
        let (owner, state) = unsafe { ((*latch).owner.clone(), &(*latch).state) };
        // Release: every access this helper made to the batch happens-before the owner's
        // Acquire load that sees the count reach zero, and so before the batch is freed.
        if state.fetch_sub(1, Ordering::Release) == OPEN {
            // Only the clone is used from here on: the latch may already be gone.
            owner.unpark();
        }
    }

    /// Closes the latch (the caller has already unpublished the batch, so no helper can enter)
    /// and blocks until every helper has left. Returns whether it had to wait.
    pub fn close_and_wait(&self) -> bool {
        // AcqRel: Acquire to see helpers that already left; Release is harmless.
        if self.state.fetch_sub(OPEN, Ordering::AcqRel) == OPEN {
            return false;
        }
        let drained = || self.state.load(Ordering::Acquire) == 0;
        if !spin_until(DRAIN_SPIN_ROUNDS, drained) {
            // The helper whose decrement reaches zero unparks us; a token left from an earlier
            // unpark only costs one extra loop iteration.
            while !drained() {
                thread::park();
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn spin_until_reports_success() {
        let mut n = 0;
        assert!(spin_until(10, || {
            n += 1;
            n == 3
        }));
        assert!(!spin_until(5, || false));
    }

    #[test]
    fn sleeper_wake_before_or_after_wait() {
        let sleeper = Arc::new(Sleeper::current());
        sleeper.wake();
        sleeper.wait(); // flag already set: returns at once
        let (tx, rx) = std::sync::mpsc::channel();
        let handle = thread::spawn(move || {
            let me = Arc::new(Sleeper::current());
            tx.send(me.clone()).unwrap();
            me.wait();
        });
        rx.recv().unwrap().wake();
        handle.join().unwrap();
    }

    #[test]
    fn latch_waits_for_helpers() {
        let latch = Arc::new(DrainLatch::new());
        assert!(!DrainLatch::new().close_and_wait());
        let helpers = 3;
        for _ in 0..helpers {
            latch.enter();
        }
        assert_eq!(latch.helpers(), helpers);
        let left = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..helpers)
            .map(|_| {
                let (latch, left) = (latch.clone(), left.clone());
                thread::spawn(move || {
                    left.fetch_add(1, Ordering::Relaxed);
                    // SAFETY: entered above on this thread's behalf; the Arc keeps it alive.
                    unsafe { DrainLatch::leave(&*latch) };
                })
            })
            .collect();
        latch.close_and_wait();
        assert_eq!(left.load(Ordering::Relaxed), helpers);
        assert_eq!(latch.helpers(), 0);
        for t in threads {
            t.join().unwrap();
        }
    }
}
