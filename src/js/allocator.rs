//! The allocator's exports: which one this build uses, its figures, and releasing its caches.

use napi_derive::napi;

use crate::allocator;

/// Memory figures in bytes; a field is `null` where this build cannot know it.
#[napi(object)]
pub struct MemoryStats {
    /// Resident memory of the process now.
    pub resident: Option<f64>,
    /// Peak resident memory of the process.
    pub peak_resident: Option<f64>,
    /// Memory the allocator has committed now (mimalloc only).
    pub committed: Option<f64>,
    /// Peak of what the allocator has committed (mimalloc only).
    pub peak_committed: Option<f64>,
}

/// The global allocator of this build: `'mimalloc'` or `'system'`.
#[napi(ts_return_type = "'mimalloc' | 'system'")]
pub fn allocator() -> &'static str {
    allocator::name()
}

/// The allocator's memory figures (mimalloc), or the operating system's (system allocator).
#[napi]
pub fn memory_stats() -> MemoryStats {
    let stats = allocator::memory_stats();
    let bytes = |figure: Option<u64>| figure.map(|b| b as f64);
    MemoryStats {
        resident: bytes(stats.resident),
        peak_resident: bytes(stats.peak_resident),
        committed: bytes(stats.committed),
        peak_committed: bytes(stats.peak_committed),
    }
}

/// Returns the allocator's cached free memory to the operating system. Costs the next batches
/// some speed (they allocate afresh); `new Scheduler({ releaseMemory: true })` does it after
/// every batch, for deployments that care more about resident memory than throughput.
#[napi]
pub fn release_memory() {
    allocator::release_memory();
}
