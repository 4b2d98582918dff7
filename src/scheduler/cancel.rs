//! Cooperative cancellation shared between the caller and the workers of a batch.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A cloneable flag asking a running batch to stop. Every policy checks it before handing out
/// each chunk (serial and rayon policies: before each item), so a cancelled batch stops within
/// one chunk per worker and `run` returns [`super::BatchError::Cancelled`].
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Requests cancellation of every batch run with this token (or a clone). Idempotent.
    pub fn cancel(&self) {
        // Relaxed: the flag publishes no data; workers only need to see it eventually, and
        // `run`'s wait for its helpers orders everything that matters.
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether [`Self::cancel`] was called on this token or a clone.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_flag() {
        let token = CancelToken::new();
        let clone = token.clone();
        assert!(!clone.is_cancelled());
        token.cancel();
        token.cancel();
        assert!(clone.is_cancelled());
        assert!(!CancelToken::default().is_cancelled());
    }
}
