//! A gate that keeps chunked batches to their owner until it opens.
//!
//! A batch whose items arrive in parts shares the machine with whoever produces the parts: in
//! batchtok, the JS main thread, reading strings while the first parts encode. Helpers working
//! beside the owner then put one more thread on the cores than there are cores; the producer
//! slows down, and a helper descheduled inside a part's last chunk holds up that part's drain.
//! Behind a shut gate a part runs on its owner alone, claiming from the same plan as always, and
//! is published to the pool at the first chunk boundary after the gate opens (P1), so its
//! remaining chunks are shared as usual. The gate also notes the producer's core, so that an
//! owner woken onto it can step off (`cores.rs`): owner and producer gain nothing from the
//! overlap if they take turns on one core.

use std::sync::atomic::{AtomicBool, Ordering};

use super::cores;

/// Shut until [`open`](Self::open)ed, and open for good afterwards.
#[derive(Debug)]
pub struct Gate {
    open: AtomicBool,
    /// The core the producer ran on when it made the gate, where known.
    producer_core: Option<usize>,
}

impl Default for Gate {
    fn default() -> Gate {
        Gate::new()
    }
}

impl Gate {
    /// A shut gate, made on the producer's thread.
    pub fn new() -> Gate {
        Gate {
            open: AtomicBool::new(false),
            producer_core: cores::current(),
        }
    }

    /// Moves the calling thread, an owner about to work beside the producer, off the producer's
    /// core if the kernel put it there (see `cores.rs`). Does nothing once the gate is open.
    pub fn step_off_producer_core(&self) {
        if let Some(core) = self.producer_core.filter(|_| !self.is_open()) {
            cores::step_off(core);
        }
    }

    /// Opens the gate: batches behind it are published at their next chunk boundary.
    pub fn open(&self) {
        // Relaxed: the flag orders nothing; an owner that reads it late runs one more chunk alone.
        self.open.store(true, Ordering::Relaxed);
    }

    /// Whether the gate has been opened.
    #[inline]
    pub fn is_open(&self) -> bool {
        self.open.load(Ordering::Relaxed)
    }
}
