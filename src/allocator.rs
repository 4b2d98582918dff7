//! The global allocator, and what the addon can say and do about its memory.
//!
//! `build.rs` sets `cfg(batchtok_mimalloc)` on the targets where mimalloc is used, and says why
//! those. It is the addon's own choice: it does not change the allocator of Node or of other
//! addons. mimalloc keeps freed pages in per-thread caches, which is part of why it is fast and
//! why a process can hold more resident memory after a burst of work; `release_memory` returns
//! what it caches to the OS.

#[cfg(batchtok_mimalloc)]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The allocator this build uses: `"mimalloc"` or `"system"`.
pub fn name() -> &'static str {
    if cfg!(batchtok_mimalloc) {
        "mimalloc"
    } else {
        "system"
    }
}

/// Memory figures, in bytes; `None` where this build cannot know one.
#[derive(Debug, Clone, Copy, Default)]
pub struct MemoryStats {
    /// Resident memory of the process now.
    pub resident: Option<u64>,
    /// Peak resident memory of the process.
    pub peak_resident: Option<u64>,
    /// Memory mimalloc has committed now.
    pub committed: Option<u64>,
    /// Peak of what mimalloc has committed.
    pub peak_committed: Option<u64>,
}

/// The allocator's figures (mimalloc) or the operating system's (system allocator, on Linux).
pub fn memory_stats() -> MemoryStats {
    #[cfg(batchtok_mimalloc)]
    {
        let (mut elapsed, mut user, mut system) = (0usize, 0usize, 0usize);
        let (mut rss, mut peak_rss, mut commit, mut peak_commit, mut faults) =
            (0usize, 0usize, 0usize, 0usize, 0usize);
        // SAFETY: every pointer is to a live local `usize`, as `mi_process_info` writes.
        unsafe {
            libmimalloc_sys::mi_process_info(
                &mut elapsed,
                &mut user,
                &mut system,
                &mut rss,
                &mut peak_rss,
                &mut commit,
                &mut peak_commit,
                &mut faults,
            )
        };
        MemoryStats {
            resident: Some(rss as u64),
            peak_resident: Some(peak_rss as u64),
            committed: Some(commit as u64),
            peak_committed: Some(peak_commit as u64),
        }
    }
    #[cfg(not(batchtok_mimalloc))]
    {
        MemoryStats {
            resident: proc_status("VmRSS:"),
            peak_resident: proc_status("VmHWM:"),
            ..MemoryStats::default()
        }
    }
}

/// A `kB` figure of `/proc/self/status`, in bytes (Linux only).
#[cfg(not(batchtok_mimalloc))]
fn proc_status(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with(key))?;
    let kib: u64 = line[key.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// Returns cached free memory to the operating system: a forced collect for mimalloc (this
/// thread's caches and the abandoned ones), `malloc_trim` for glibc's allocator.
pub fn release_memory() {
    #[cfg(batchtok_mimalloc)]
    // SAFETY: `mi_collect` may be called from any thread at any time.
    unsafe {
        libmimalloc_sys::mi_collect(true)
    };
    #[cfg(all(not(batchtok_mimalloc), target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        // SAFETY: glibc's `malloc_trim` may be called from any thread; a pad of 0 keeps nothing
        // spare at the top of the heap.
        unsafe { malloc_trim(0) };
    }
}
