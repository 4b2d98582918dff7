//! The global allocator, and what the addon can say and do about its memory.
//!
//! `build.rs` sets `cfg(batchtok_mimalloc)` on the targets where mimalloc is used, and says why
//! those. It is the addon's own choice: it does not change the allocator of Node or of other
//! addons. mimalloc keeps freed pages in per-thread caches, which is part of why it is fast and
//! why a process can hold more resident memory after a burst of work; `release_memory` returns
//! what it caches to the OS. [`ZeroedArray`] bypasses it for large output arrays that are
//! mostly zeros.

use std::alloc::Layout;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

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

/// The process's resident memory as the operating system counts it (Linux), else as mimalloc
/// estimates it, and what mimalloc has committed. (mimalloc's own "current RSS" on Linux is its
/// committed memory, which can exceed the process's peak resident memory.)
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
            resident: proc_status("VmRSS:").or(Some(rss as u64)),
            peak_resident: proc_status("VmHWM:").or(Some(peak_rss as u64)),
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

/// Element types a [`ZeroedArray`] holds: plain integers.
///
/// # Safety
///
/// All-zero bytes are a valid value of the type, and it has no drop glue.
pub unsafe trait Zeroable: Copy {}

// SAFETY: every bit pattern, zero included, is a valid integer, and integers are `Copy`.
unsafe impl Zeroable for i64 {}
// SAFETY: as for `i64`.
unsafe impl Zeroable for i32 {}
// SAFETY: as for `i64`.
unsafe impl Zeroable for u32 {}

/// Arrays of at least this many bytes are mapped straight from the operating system: fresh
/// anonymous pages read as zero and cost nothing until written, where a large block the allocator
/// hands out again has to be cleared first (mimalloc keeps freed blocks a while, so a block of the
/// size a caller asks for call after call is mostly a reused one). Below it, the two system calls
/// of a mapping cost more than clearing.
#[cfg(unix)]
const MAP_FROM_BYTES: usize = 1 << 20;

/// A fixed-length array of `len` zeros, for output that is mostly zeros and written sparsely: a
/// large one is a private anonymous mapping, so the pages nobody writes are never faulted in or
/// cleared, and one that is never written costs no memory.
pub struct ZeroedArray<T> {
    /// `len` initialized elements, owned: mapped when `mapped`, else from the global allocator
    /// with `Layout::array::<T>(len)` (dangling when that is zero-sized).
    ptr: NonNull<T>,
    len: usize,
    mapped: bool,
}

// SAFETY: a `ZeroedArray` owns its elements as a `Vec` does; sending or sharing it sends or
// shares `T`s.
unsafe impl<T: Send> Send for ZeroedArray<T> {}
// SAFETY: as for `Send`: `&ZeroedArray` only gives `&[T]`.
unsafe impl<T: Sync> Sync for ZeroedArray<T> {}

impl<T: Zeroable> ZeroedArray<T> {
    /// `len` zeros. Aborts on allocation failure, as `Vec` does.
    pub fn new(len: usize) -> ZeroedArray<T> {
        let layout = Layout::array::<T>(len).expect("a zeroed array larger than the address space");
        if layout.size() == 0 {
            return ZeroedArray {
                ptr: NonNull::dangling(),
                len,
                mapped: false,
            };
        }
        #[cfg(unix)]
        if layout.size() >= MAP_FROM_BYTES
            && let Some(ptr) = map_zeroed(layout.size())
        {
            return ZeroedArray {
                ptr: ptr.cast(),
                len,
                mapped: true,
            };
        }
        // SAFETY: the layout's size is not zero (checked above).
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        let Some(ptr) = NonNull::new(ptr.cast::<T>()) else {
            std::alloc::handle_alloc_error(layout)
        };
        ZeroedArray {
            ptr,
            len,
            mapped: false,
        }
    }
}

impl<T> ZeroedArray<T> {
    /// The first element, for handing the memory to an owner that frees it by dropping `self`.
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.ptr.as_ptr()
    }
}

/// `bytes` of fresh zero pages, readable and writable, or `None` where the system refuses.
#[cfg(unix)]
fn map_zeroed(bytes: usize) -> Option<NonNull<u8>> {
    // SAFETY: an anonymous private mapping at an address of the kernel's choice touches no
    // existing memory; the result is checked against `MAP_FAILED`.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        return None;
    }
    NonNull::new(ptr.cast())
}

impl<T> Drop for ZeroedArray<T> {
    fn drop(&mut self) {
        let layout = Layout::array::<T>(self.len).expect("checked in new");
        if layout.size() == 0 {
            return;
        }
        #[cfg(unix)]
        if self.mapped {
            // SAFETY: the mapping of `layout.size()` bytes at `ptr` is this array's alone (`new`),
            // and nothing borrows it once the array is dropped.
            unsafe { libc::munmap(self.ptr.as_ptr().cast(), layout.size()) };
            return;
        }
        // SAFETY: `ptr` came from `alloc_zeroed` with this layout (`new`: not mapped). The
        // elements need no drop (`Zeroable`, which `new` requires).
        unsafe { std::alloc::dealloc(self.ptr.as_ptr().cast(), layout) };
    }
}

impl<T> Deref for ZeroedArray<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` holds `len` initialized elements (zeros, or what was written through
        // `deref_mut`), owned by `self` and borrowed here for as long as `self` is.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> DerefMut for ZeroedArray<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for ZeroedArray<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: PartialEq, const N: usize> PartialEq<[T; N]> for ZeroedArray<T> {
    fn eq(&self, other: &[T; N]) -> bool {
        **self == other[..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_arrays_of_every_size_read_zero_and_keep_what_is_written() {
        // Empty, heap-sized, and large enough to be mapped on Unix.
        for len in [0, 1, 1000, (4 << 20) / 8 + 3] {
            let mut cells = ZeroedArray::<i64>::new(len);
            assert_eq!(cells.len(), len);
            assert!(cells.iter().all(|&cell| cell == 0), "{len}");
            for (i, cell) in cells.iter_mut().enumerate().step_by(511) {
                *cell = i as i64 - 7;
            }
            for (i, &cell) in cells.iter().enumerate() {
                let want = if i % 511 == 0 { i as i64 - 7 } else { 0 };
                assert_eq!(cell, want, "{len} at {i}");
            }
        }
        let small = ZeroedArray::<u32>::new(3);
        assert_eq!(small, [0, 0, 0]);
        assert_eq!(format!("{small:?}"), "[0, 0, 0]");
    }
}
