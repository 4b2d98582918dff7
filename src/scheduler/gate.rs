//! A gate that keeps chunked batches to their owner until it opens.
//!
//! A batch whose items arrive in parts shares the machine with whoever produces the parts: in
//! batchtok, the JS main thread, reading strings while the first parts encode. Helpers working
//! beside the owner then put one more thread on the cores than there are cores; the producer
//! slows down, and a helper descheduled inside a part's last chunk holds up that part's drain.
//! Behind a shut gate a part runs on its owner alone, claiming from the same plan as always, and
//! is published to the pool at the first chunk boundary after the gate opens (P1), so its
//! remaining chunks are shared as usual.

use std::sync::atomic::{AtomicBool, Ordering};

/// Shut until [`open`](Self::open)ed, and open for good afterwards.
#[derive(Debug, Default)]
pub struct Gate {
    open: AtomicBool,
}

impl Gate {
    /// A shut gate.
    pub fn new() -> Gate {
        Gate::default()
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
