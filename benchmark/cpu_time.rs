//! The CPU time of the calling thread or the whole process, shared by the Rust benchmarks that
//! report it (`fallback.rs`, `load_stages.rs`, `fresh_scaling.rs`), included by each with `#[path]`.

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

unsafe extern "C" {
    fn clock_gettime(clock: i32, time: *mut Timespec) -> i32;
}

/// Linux's clock of the CPU time the calling thread has used.
const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
/// Linux's clock of the CPU time every thread of the process has used.
const CLOCK_PROCESS_CPUTIME_ID: i32 = 2;

/// The CPU time the calling thread has used, in seconds (Linux). CPU time separates what threads
/// cost each other (more CPU for the same work) from a machine that others keep busy (the same
/// CPU, more wall time), which matters on a shared machine.
pub fn thread_cpu_seconds() -> f64 {
    cpu_seconds(CLOCK_THREAD_CPUTIME_ID)
}

/// The CPU time every thread of the process has used, in seconds (Linux): over a parallel call's
/// wall time, how many cores it kept busy.
pub fn process_cpu_seconds() -> f64 {
    cpu_seconds(CLOCK_PROCESS_CPUTIME_ID)
}

fn cpu_seconds(clock: i32) -> f64 {
    let mut time = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `time` is a valid, writable `struct timespec` (two 64-bit fields on the 64-bit Linux
    // targets these benchmarks run on), and the clock id is one Linux defines.
    let status = unsafe { clock_gettime(clock, &mut time) };
    assert_eq!(status, 0, "clock_gettime({clock}) fails");
    time.tv_sec as f64 + time.tv_nsec as f64 * 1e-9
}
