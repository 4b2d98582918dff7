//! Which core a thread runs on, and stepping off a core another thread needs.
//!
//! A batch read in parts runs on its owner while the producer (the JS main thread) reads the
//! rest ([`Gate`](super::Gate)). The two overlap only on different cores, but the kernel may wake
//! the owner on the core of the thread that woke it, the producer's, and leave it queued there
//! while another core idles: Linux's wake-up path searches for an idle core only as far as the
//! recent load of the cache domain allows, which after a batch that kept every core busy can be
//! no search at all. On the 2-core VM of `benchmark/results/boundary.md` this happened in more
//! than half of the single calls traced, for the whole reading. The owner therefore steps off the producer's core
//! when it finds itself there: it narrows its own CPU mask to the other cores it may run on,
//! which makes the kernel move it, and then restores the mask, which moves nothing.
//!
//! Linux only; elsewhere the core is unknown and nothing moves.

/// The core the calling thread is running on, if the platform tells.
pub fn current() -> Option<usize> {
    imp::current()
}

/// Moves the calling thread off `core` if it is running there and may run elsewhere; its CPU
/// mask is the same afterwards.
pub fn step_off(core: usize) {
    imp::step_off(core)
}

#[cfg(target_os = "linux")]
mod imp {
    use std::mem;

    pub fn current() -> Option<usize> {
        // SAFETY: `sched_getcpu` takes no arguments and touches no memory of ours.
        let core = unsafe { libc::sched_getcpu() };
        usize::try_from(core).ok()
    }

    pub fn step_off(core: usize) {
        if current() != Some(core) || core >= libc::CPU_SETSIZE as usize {
            return;
        }
        // SAFETY: `cpu_set_t` is a plain bit array, valid when zeroed.
        let mut allowed: libc::cpu_set_t = unsafe { mem::zeroed() };
        let size = mem::size_of::<libc::cpu_set_t>();
        // SAFETY: `allowed` is a live `cpu_set_t` of `size` bytes; pid 0 is the calling thread.
        if unsafe { libc::sched_getaffinity(0, size, &mut allowed) } != 0 {
            return;
        }
        let mut elsewhere = allowed;
        // SAFETY: `core < CPU_SETSIZE` (checked above), the bound `CPU_CLR` and `CPU_COUNT` need.
        let others = unsafe {
            libc::CPU_CLR(core, &mut elsewhere);
            libc::CPU_COUNT(&elsewhere)
        };
        if others == 0 {
            return;
        }
        // SAFETY: both masks are live `cpu_set_t`s of `size` bytes; pid 0 is the calling thread.
        // The first call returns once the thread runs on a core of `elsewhere`; the second
        // gives back the mask it had, whichever way the first went.
        unsafe {
            libc::sched_setaffinity(0, size, &elsewhere);
            libc::sched_setaffinity(0, size, &allowed);
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub fn current() -> Option<usize> {
        None
    }

    pub fn step_off(_core: usize) {}
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_thread_steps_off_its_core_and_keeps_its_mask() {
        let mask = || {
            let size = std::mem::size_of::<libc::cpu_set_t>();
            // SAFETY: as in `step_off`: a zeroed `cpu_set_t` is valid, and `set` is live and of
            // `size` bytes while the kernel fills it.
            let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
            assert_eq!(unsafe { libc::sched_getaffinity(0, size, &mut set) }, 0);
            (0..libc::CPU_SETSIZE as usize)
                // SAFETY: `cpu < CPU_SETSIZE`, and `set` is initialized.
                .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
                .collect::<Vec<_>>()
        };
        std::thread::spawn(move || {
            let before = mask();
            let here = current().expect("Linux tells the core");
            step_off(here);
            if before.len() > 1 {
                assert_ne!(current(), Some(here), "moved off core {here}");
            }
            assert_eq!(mask(), before, "the mask is restored");
        })
        .join()
        .unwrap();
    }
}
