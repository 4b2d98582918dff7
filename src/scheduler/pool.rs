//! The persistent worker pool of the chunked policy: the registry of published batches, the
//! worker loop (search, join, help, spin, park), growth on demand and termination. Protocols
//! P1 (publish), P3 (join/rotate), P4–P5 (park/wake) and P7 (terminate) are in `README.md`.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread::{self, JoinHandle};

use crossbeam_utils::CachePadded;

use super::config::default_threads;
use super::queue::{ErasedJob, Joinable, WAKE_OPS};
use super::sleep::{DrainLatch, IDLE_SPIN_ROUNDS, MAX_SPINNERS, Sleeper, WAKE_FANOUT, spin_until};

/// Shared atomics of publishing and unpublishing a batch: two lock/unlock pairs, the generation
/// bump and the latch close.
pub(super) const PUBLISH_OPS: u64 = 6;

/// A published batch, with its lifetime erased.
#[derive(Clone, Copy)]
struct JobRef(NonNull<dyn ErasedJob>);

// SAFETY: the pointee is `Sync` (a supertrait of `ErasedJob`), so using it from any thread is
// fine; when it may be used is governed by the publish protocol (see `Pool::publish`).
unsafe impl Send for JobRef {}

impl JobRef {
    /// # Safety
    /// The batch must still be published, or the caller must be counted inside its latch.
    unsafe fn get<'r>(self) -> &'r dyn ErasedJob {
        // SAFETY: per the contract the owner is blocked before `close_and_wait` returns, so the
        // job on its stack is alive and not mutably borrowed.
        unsafe { self.0.as_ref() }
    }
}

impl JobRef {
    /// Whether this is the batch at `job`: a published batch is alive, so no other published
    /// batch can have its address.
    fn is(self, job: &dyn ErasedJob) -> bool {
        std::ptr::addr_eq(self.0.as_ptr(), job)
    }
}

/// Everything guarded by the registry lock. With the lock word it fits one cache line (a test
/// checks it on Linux), so a join fetches one line of the registry, not two: its fields are
/// only what every publish and join touch; the lists' buffers, which a join only reads during
/// the wake ramp, and the sleepers themselves live elsewhere.
#[derive(Default)]
struct Registry {
    /// Published batches in publish order.
    jobs: Vec<JobRef>,
    /// Parked workers, each waiting for exactly one `wake`.
    sleepers: Vec<Arc<CachePadded<Sleeper>>>,
    /// Workers taken off `sleepers` to be woken that have not taken this lock since. Each of
    /// them will (it returns from `wait` and searches), so the wake rule counts them as helpers
    /// already on their way rather than waking others for the same chunks (P5). Incremented by
    /// whoever pops a sleeper, decremented by that worker's next search, both under this lock.
    waking: usize,
}

/// What one pass over the published batches finds (P3, P5).
struct Survey {
    /// The batch a free worker should join, and how many helpers it wants (before that join).
    best: Option<(JobRef, usize)>,
    /// Helpers wanted by all published batches together.
    wanted: usize,
}

impl Registry {
    /// One pass over the published batches, reading each one's latch once and its cursors at
    /// most once (`JobControl::joinable`). The batch to join (P3): among joinable batches, the
    /// one with the fewest helpers; ties go to the newest, so a batch submitted while an older
    /// one keeps everyone busy gets the next free worker. And the helpers all batches want (P5),
    /// for the wake rule: a join computes it in the same pass rather than a second one, because
    /// the second would read every cursor again, under the lock, while claims keep moving those
    /// lines to other cores.
    fn survey(&self) -> Survey {
        let mut best: Option<(usize, JobRef, usize)> = None;
        let mut wanted = 0usize;
        for &job in &self.jobs {
            // SAFETY: entries are removed (under this lock) before their latch closes.
            let control = unsafe { job.get() }.control();
            let Some(Joinable {
                helpers,
                wanted: job_wanted,
            }) = control.joinable()
            else {
                continue;
            };
            wanted = wanted.saturating_add(job_wanted);
            if best.is_none_or(|(fewest, _, _)| helpers <= fewest) {
                best = Some((helpers, job, job_wanted));
            }
        }
        Survey {
            best: best.map(|(_, job, job_wanted)| (job, job_wanted)),
            wanted,
        }
    }

    /// The wake rule (P5), run at every publish and every join: pops up to `WAKE_FANOUT`
    /// sleepers, as many as the published batches want helpers (`wanted`, from [`survey`]
    /// (Self::survey) in the same critical section) beyond those already on their way
    /// (`waking`, and the `spinners` that will search after this critical section). The caller
    /// delivers the wakes after unlocking. `wanted` is asked for only if some worker sleeps: a
    /// publish into a busy pool then makes no pass over the batches under the lock.
    fn sleepers_to_wake(
        &mut self,
        wanted: impl FnOnce(&Registry) -> usize,
        spinners: usize,
    ) -> Wakes {
        let mut wakes = Wakes::default();
        if self.sleepers.is_empty() {
            return wakes;
        }
        let missing = wanted(self).saturating_sub(self.waking.saturating_add(spinners));
        for slot in wakes.0.iter_mut().take(missing) {
            let Some(sleeper) = self.sleepers.pop() else {
                break;
            };
            self.waking += 1;
            *slot = Some(sleeper);
        }
        wakes
    }
}

/// Sleepers popped by the wake rule under the registry lock, woken after it is released (P5).
/// A popped sleeper is no longer listed, so nobody else will wake it: dropping this without
/// [`Wakes::deliver`] (only on unwinding) still wakes them, lest a worker sleep forever.
#[derive(Default)]
struct Wakes([Option<Arc<CachePadded<Sleeper>>>; WAKE_FANOUT]);

impl Wakes {
    /// Wakes every popped sleeper; returns how many there were.
    fn deliver(mut self) -> u64 {
        self.wake_all()
    }

    fn wake_all(&mut self) -> u64 {
        let mut woken = 0;
        for sleeper in self.0.iter_mut().filter_map(Option::take) {
            sleeper.wake();
            woken += 1;
        }
        woken
    }
}

impl Drop for Wakes {
    fn drop(&mut self) {
        self.wake_all();
    }
}

/// State shared by the pool handle and its workers.
struct Shared {
    /// Padded so that the lock word and the registry share one line and nothing else does.
    registry: CachePadded<Mutex<Registry>>,
    /// Bumped under the registry lock by every publish; idle spinners watch it for new work and
    /// helpers compare it after each chunk to rotate (P3).
    generation: CachePadded<AtomicU64>,
    /// Workers currently in their bounded spin.
    spinners: CachePadded<AtomicUsize>,
    /// Set once, under the registry lock, when the pool is dropped.
    terminate: AtomicBool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Registry> {
        // No code that can panic runs under this lock, but stay usable if it ever did.
        self.registry.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Claims a spinner slot if fewer than `MAX_SPINNERS` are taken.
    fn try_start_spinning(&self) -> bool {
        self.spinners
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < MAX_SPINNERS).then_some(n + 1)
            })
            .is_ok()
    }

    /// The worker loop: search, help, spin, park, until terminated.
    fn work(&self) {
        let me = Arc::new(Sleeper::current());
        // Whether we were popped off the sleeper list and still count in `waking`.
        let mut woken = false;
        loop {
            // P3 search and join.
            let seen_generation;
            {
                let mut registry = self.lock();
                if std::mem::take(&mut woken) {
                    debug_assert!(registry.waking > 0, "a woken worker must be counted");
                    registry.waking -= 1;
                }
                if self.terminate.load(Ordering::Relaxed) {
                    return;
                }
                let survey = registry.survey();
                if let Some((job, job_wanted)) = survey.best {
                    // SAFETY: published, so alive; `enter` below keeps it alive after unlock.
                    let control = unsafe { job.get() }.control();
                    let place = control.latch().enter();
                    let latch: *const _ = control.latch();
                    let joined_generation = self.generation.load(Ordering::Relaxed);
                    // This join is one of the helpers its batch wanted: with one more helper
                    // inside, both terms of `Joinable::wanted` drop by one (saturating at 0).
                    let wanted = survey.wanted - job_wanted.min(1);
                    // Tree wake-up: this join may wake up to `WAKE_FANOUT` more, each of which
                    // does the same when it joins.
                    let spinners = self.spinners.load(Ordering::Relaxed);
                    let wakes = registry.sleepers_to_wake(|_| wanted, spinners);
                    drop(registry);
                    let wakeups = wakes.deliver();
                    // SAFETY: we entered the latch, so the owner waits for our leave below.
                    unsafe { job.get() }.help(&self.generation, joined_generation, place, wakeups);
                    // SAFETY: entered above and not left yet; nothing touches the job after this.
                    unsafe { DrainLatch::leave(latch) };
                    continue;
                }
                seen_generation = self.generation.load(Ordering::Relaxed);
            }
            // P4: spin briefly, then park.
            let spinning = self.try_start_spinning();
            if spinning {
                let changed = spin_until(IDLE_SPIN_ROUNDS, || {
                    self.generation.load(Ordering::Relaxed) != seen_generation
                        || self.terminate.load(Ordering::Relaxed)
                });
                if changed {
                    // Released before searching: a publisher that still counted us is ordered
                    // before our search, which will see its batch (README, "no lost wake-up").
                    self.spinners.fetch_sub(1, Ordering::Relaxed);
                    continue;
                }
            }
            {
                let mut registry = self.lock();
                if spinning {
                    self.spinners.fetch_sub(1, Ordering::Relaxed);
                }
                if self.terminate.load(Ordering::Relaxed) {
                    return;
                }
                if registry.survey().best.is_some() {
                    continue;
                }
                registry.sleepers.push(me.clone());
            }
            me.wait();
            woken = true;
        }
    }
}

/// A set of persistent workers that help chunked batches. The process-wide one is
/// [`Pool::global`]; dropping any other pool terminates and joins its workers (P7).
pub(super) struct Pool {
    shared: Arc<Shared>,
    /// Join handles; the lock also serializes growth.
    handles: Mutex<Vec<JoinHandle<()>>>,
    /// Workers spawned so far (only grows).
    spawned: AtomicUsize,
}

impl Pool {
    /// A pool with `workers` threads.
    pub fn new(workers: usize) -> Pool {
        let pool = Pool {
            shared: Arc::new(Shared {
                registry: CachePadded::new(Mutex::new(Registry::default())),
                generation: CachePadded::new(AtomicU64::new(0)),
                spinners: CachePadded::new(AtomicUsize::new(0)),
                terminate: AtomicBool::new(false),
            }),
            handles: Mutex::new(Vec::new()),
            spawned: AtomicUsize::new(0),
        };
        pool.ensure_workers(workers);
        pool
    }

    /// The process-wide pool, created on first use with `available_parallelism() - 1` workers
    /// (at least one): with the submitting thread that makes one thread per core.
    pub fn global() -> &'static Pool {
        static GLOBAL: OnceLock<Pool> = OnceLock::new();
        GLOBAL.get_or_init(|| Pool::new(default_threads().saturating_sub(1).max(1)))
    }

    /// Workers spawned so far.
    pub fn workers(&self) -> usize {
        self.spawned.load(Ordering::Acquire)
    }

    /// Grows the pool to at least `workers` threads. If the OS refuses a thread the pool stays
    /// smaller: batches still complete, with fewer helpers.
    pub fn ensure_workers(&self, workers: usize) {
        if self.workers() >= workers {
            return;
        }
        let mut handles = self.handles.lock().unwrap_or_else(PoisonError::into_inner);
        while self.spawned.load(Ordering::Relaxed) < workers {
            let shared = self.shared.clone();
            let name = format!("batchtok-worker-{}", handles.len());
            match thread::Builder::new()
                .name(name)
                .spawn(move || shared.work())
            {
                Ok(handle) => handles.push(handle),
                Err(_) => break,
            }
            // Release pairs with the Acquire in `workers`' fast path (publishes the handle push).
            self.spawned.fetch_add(1, Ordering::Release);
        }
    }

    /// Publishes `job` so idle workers can join it (P1) and wakes up to `WAKE_FANOUT` sleepers
    /// if it wants help (P5).
    ///
    /// # Safety
    /// The returned [`Publication`] must be dropped (or [`Publication::retire`]d) before `job`
    /// is dropped or moved, and must not be leaked with `mem::forget`: its drop is what waits for
    /// the helpers that hold the lifetime-erased pointer. A local binding satisfies this.
    pub unsafe fn publish<'j>(&'j self, job: &'j (dyn ErasedJob + 'j)) -> Publication<'j> {
        let ptr: NonNull<dyn ErasedJob + 'j> = NonNull::from(job);
        // SAFETY: only the trait object's lifetime bound changes (same layout). The pointer is
        // dereferenced only while the job is published or by helpers counted in its latch, and
        // `Publication` (which the caller promises to drop before `job` dies) unpublishes and
        // waits for every such helper to leave.
        let ptr: NonNull<dyn ErasedJob + 'static> = unsafe { std::mem::transmute(ptr) };
        let mut registry = self.shared.lock();
        registry.jobs.push(JobRef(ptr));
        // Relaxed: readers act on a change only by taking the registry lock (P3, P4).
        self.shared.generation.fetch_add(1, Ordering::Relaxed);
        let spinners = self.shared.spinners.load(Ordering::Relaxed);
        let wakes = registry.sleepers_to_wake(|registry| registry.survey().wanted, spinners);
        drop(registry);
        let wakeups = wakes.deliver();
        Publication {
            pool: self,
            job,
            retired: false,
            wakeups,
        }
    }

    /// Workers currently parked (tests check that an idle pool sleeps).
    #[cfg(test)]
    fn sleeping(&self) -> usize {
        self.shared.lock().sleepers.len()
    }
}

impl Drop for Pool {
    /// P7: set `terminate` under the lock, wake every sleeper, join every worker. No batch can
    /// be published here: `publish` borrows the pool.
    fn drop(&mut self) {
        let sleepers = {
            let mut registry = self.shared.lock();
            self.shared.terminate.store(true, Ordering::Relaxed);
            let sleepers = std::mem::take(&mut registry.sleepers);
            // Popped, so counted like any other wake until each worker's last search.
            registry.waking += sleepers.len();
            sleepers
        };
        for sleeper in sleepers {
            sleeper.wake();
        }
        for handle in self
            .handles
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
        {
            // Workers never unwind (user code runs under catch_unwind), so join only fails if
            // the thread was killed, and there is nothing left to clean up then.
            let _ = handle.join();
        }
    }
}

/// A published batch. Retiring it (explicitly or on drop) unpublishes the batch and waits until
/// every helper has left (P6), which is what makes handing a borrowed batch to workers sound.
pub(super) struct Publication<'j> {
    pool: &'j Pool,
    job: &'j (dyn ErasedJob + 'j),
    retired: bool,
    /// Workers woken by the publish.
    pub wakeups: u64,
}

impl Publication<'_> {
    /// Unpublishes and waits for the helpers; returns the shared atomics spent on publication.
    pub fn retire(mut self) -> u64 {
        self.retire_inner();
        PUBLISH_OPS + self.wakeups * WAKE_OPS
    }

    fn retire_inner(&mut self) {
        if std::mem::replace(&mut self.retired, true) {
            return;
        }
        {
            let mut registry = self.pool.shared.lock();
            registry.jobs.retain(|job| !job.is(self.job));
        }
        self.job.control().latch().close_and_wait();
    }
}

impl Drop for Publication<'_> {
    fn drop(&mut self) {
        // Also on unwind: the job must outlive every helper that can still reach it.
        self.retire_inner();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::cancel::CancelToken;
    use crate::scheduler::chunked;
    use crate::scheduler::config::SchedulerConfig;
    use crate::scheduler::testing::{TestBatch, check_outcome, wait_for};

    fn config(threads: usize) -> SchedulerConfig {
        SchedulerConfig {
            threads,
            chunk_bytes: Some(1000),
            inline_below_bytes: 0,
            ..SchedulerConfig::default()
        }
    }

    #[test]
    fn private_pool_runs_batches_parks_and_terminates() {
        let pool = Pool::new(2);
        for n in [1, 10, 500] {
            let batch = TestBatch::new(vec![300; n]);
            let outcome = chunked::run(|| &pool, &config(3), &batch, &CancelToken::new());
            check_outcome(&batch, outcome);
        }
        assert_eq!(pool.workers(), 2);
        // An idle pool parks every worker (no CPU between batches).
        wait_for("all workers parked", || pool.sleeping() == 2);
        drop(pool); // P7: joins every worker; hangs if one missed the terminate wake.
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn the_registry_and_its_lock_fit_one_cache_line() {
        // Linux's std mutex is one futex word; elsewhere it may be larger, which only costs a
        // join one more line transfer.
        assert!(std::mem::size_of::<Mutex<Registry>>() <= 64);
    }

    #[test]
    fn pool_grows_on_demand() {
        let pool = Pool::new(1);
        let batch = TestBatch::new(vec![300; 200]);
        let outcome = chunked::run(|| &pool, &config(5), &batch, &CancelToken::new());
        check_outcome(&batch, outcome);
        assert_eq!(pool.workers(), 4);
    }

    /// Publishes `batch` to `pool` with `helpers` helpers allowed, works on it from this thread
    /// as `chunked::run` does, and returns the publish's wake-ups and every helper's.
    fn publish_and_run(pool: &Pool, batch: &TestBatch<'_>, helpers: usize) -> (u64, Vec<u64>) {
        let plan = crate::scheduler::plan::plan(
            batch.costs.len(),
            |i| batch.costs[i],
            &crate::scheduler::plan::PlanParams::from_config(&config(helpers + 1)),
        );
        let cancel = CancelToken::new();
        let cursors = crate::scheduler::queue::claim_cursors(helpers + 1);
        let job = crate::scheduler::queue::Job::new(batch, &cancel, &plan, cursors, helpers);
        // SAFETY: a local retired below, before `job` (declared earlier) goes out of scope.
        let publication = unsafe { pool.publish(&job) };
        let published = publication.wakeups;
        let owner = job.participate(0, None);
        publication.retire();
        let (results, failure, _) = job.finish();
        assert!(failure.is_none());
        let executed: u64 =
            results.iter().map(|r| r.output.executed).sum::<u64>() + owner.output.executed;
        assert_eq!(executed as usize, plan.chunks.len());
        (
            published,
            results.iter().map(|r| r.output.wakeups).collect(),
        )
    }

    #[test]
    fn helpers_wake_one_another_in_a_tree() {
        const WORKERS: usize = 8;
        let pool = Pool::new(WORKERS);
        wait_for("all workers parked", || pool.sleeping() == WORKERS);
        // Every item waits until every participant has started one, so each claims exactly one
        // chunk before all have joined: the plan keeps unclaimed chunks for every join, and
        // every wake-up below is decided by the rule alone, not by timing.
        let joined = Mutex::new(std::collections::HashSet::new());
        let batch = TestBatch::new(vec![300; if cfg!(miri) { 60 } else { 3000 }]).with_hook(|_| {
            joined.lock().unwrap().insert(thread::current().id());
            wait_for("every participant to start", || {
                joined.lock().unwrap().len() == WORKERS + 1
            });
            Ok(())
        });
        let (published, helpers) = publish_and_run(&pool, &batch, WORKERS);
        // The publish wakes a full fan-out, some helper's join does too, and every parked
        // worker is woken exactly once: a chain would have woken one per publish or join.
        assert_eq!(published, WAKE_FANOUT as u64);
        assert_eq!(helpers.iter().max().copied(), Some(WAKE_FANOUT as u64));
        assert_eq!(published + helpers.iter().sum::<u64>(), WORKERS as u64);
        assert_eq!(helpers.len(), WORKERS, "each woken worker joined once");
    }

    #[test]
    fn small_batches_wake_no_more_workers_than_chunks() {
        const WORKERS: usize = 8;
        let pool = Pool::new(WORKERS);
        for n in [2, 3, 4, 6] {
            wait_for("all workers parked", || pool.sleeping() == WORKERS);
            // Weight 1064 per item against 1000-byte chunks: one chunk per item.
            let batch = TestBatch::new(vec![1000; n]);
            let (published, helpers) = publish_and_run(&pool, &batch, WORKERS);
            let wakeups = published + helpers.iter().sum::<u64>();
            // Every wake is decided while the woken, the helpers and the owner are no more than
            // the chunks left, and a single batch's chunks only run out: at most n - 1 wakes.
            assert!(wakeups < n as u64, "{wakeups} wake-ups for {n} chunks");
        }
    }

    #[test]
    fn a_newer_batch_gets_a_rotating_helper() {
        // One worker, busy helping the old batch `big`. The small batch's owner blocks on its
        // first item until some other thread processes one of its items: only the worker
        // rotating away from `big` after its current chunk (P3) can release it.
        let pool = Pool::new(1);
        let small_started = AtomicBool::new(false);
        let helped = AtomicBool::new(false);
        let big = TestBatch::new(vec![300; if cfg!(miri) { 40 } else { 4000 }]).with_hook(|_| {
            wait_for("small batch started", || {
                small_started.load(Ordering::Acquire)
            });
            Ok(())
        });
        let owner = std::sync::OnceLock::new();
        let small = TestBatch::new(vec![2000; 4]).with_hook(|i| {
            if i == 0 {
                owner.set(thread::current().id()).unwrap();
                small_started.store(true, Ordering::Release);
                wait_for("a helper ran a small-batch item", || {
                    helped.load(Ordering::Acquire)
                });
            } else if owner.get() != Some(&thread::current().id()) {
                helped.store(true, Ordering::Release);
            }
            Ok(())
        });
        thread::scope(|s| {
            s.spawn(|| {
                check_outcome(
                    &big,
                    chunked::run(|| &pool, &config(2), &big, &CancelToken::new()),
                )
            });
            // Item 0 of `big` is running (and blocked) on the big owner or the worker.
            wait_for("big batch running", || big.started() > 0);
            check_outcome(
                &small,
                chunked::run(|| &pool, &config(2), &small, &CancelToken::new()),
            );
        });
        assert!(helped.load(Ordering::Relaxed));
    }
}
