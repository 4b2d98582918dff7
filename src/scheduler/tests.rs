//! End-to-end tests of `Scheduler::run` under every policy: random batches against the
//! sequential reference, cancellation, failures, panics, concurrency and fairness.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;

use super::testing::{
    self, TestBatch, case_count, check_output, random_costs, tested_policies, wait_for,
};
use super::*;

/// Thread counts of the property tests, including an oversubscribed 64 on small machines.
fn thread_counts() -> Vec<usize> {
    if cfg!(miri) {
        vec![1, 2, 3]
    } else {
        vec![1, 2, 3, 8, 64]
    }
}

fn scheduler(policy: Policy, threads: usize) -> Scheduler {
    Scheduler::new(SchedulerConfig {
        policy,
        threads,
        ..SchedulerConfig::default()
    })
    .unwrap()
}

#[test]
fn scheduler_is_send_sync_clone() {
    fn assert_traits<T: Send + Sync + Clone + 'static>() {}
    assert_traits::<Scheduler>();
    assert_traits::<CancelToken>();
}

#[test]
fn new_rejects_invalid_config() {
    let err = Scheduler::new(SchedulerConfig {
        threads: 0,
        ..SchedulerConfig::default()
    })
    .err()
    .unwrap();
    assert!(err.to_string().contains("threads"), "{err}");
}

#[test]
fn random_batches_match_the_sequential_reference() {
    let mut rng = fastrand::Rng::with_seed(0x5eed_ba7c);
    let max_len = if cfg!(miri) { 40 } else { 5000 };
    for policy in tested_policies() {
        for threads in thread_counts() {
            let scheduler = scheduler(policy, threads);
            for case in 0..case_count(6, 2) {
                let n = if case == 0 { 0 } else { rng.usize(0..max_len) };
                let mut costs = random_costs(&mut rng, n);
                if cfg!(miri) {
                    // Keep batches small but still published and chunked under Miri.
                    costs.iter_mut().for_each(|c| *c = (*c).clamp(500, 5000));
                }
                // Both planner paths: running totals (as batches of texts have) and per item.
                let mut batch = TestBatch::new(costs);
                if case % 2 == 1 {
                    batch = batch.without_cumulative_costs();
                }
                let output = scheduler
                    .run(&batch, &CancelToken::new())
                    .unwrap_or_else(|e| panic!("{policy} x{threads}: {e}"));
                check_output(&batch, &output);
                assert_eq!(output.stats.policy, policy);
                assert!(output.stats.threads_used <= threads.max(1));
                assert_eq!(scheduler.last_stats().as_ref(), Some(&output.stats));
                if n == 0 {
                    assert!(output.chunks.is_empty() && output.sinks.is_empty());
                }
            }
        }
    }
}

#[test]
fn chunked_shares_work_and_counts_atomics() {
    let scheduler = Scheduler::new(SchedulerConfig {
        threads: 3,
        chunk_bytes: Some(1000),
        ..SchedulerConfig::default()
    })
    .unwrap();
    let batch = TestBatch::new(vec![500; case_count(3000, 60)]);
    let output = scheduler.run(&batch, &CancelToken::new()).unwrap();
    check_output(&batch, &output);
    let stats = &output.stats;
    assert!(!stats.inline);
    assert!(stats.chunks >= batch.costs.len() / 2);
    // One empty claim per participant that stays to the end; a helper that leaves after a chunk
    // for a batch published meanwhile (the tests share the global pool) makes none.
    assert!(
        (stats.chunks + 1..=stats.chunks + stats.participants).contains(&stats.claims),
        "{} claims of {} chunks by {} participants",
        stats.claims,
        stats.chunks,
        stats.participants
    );
    assert!(stats.shared_atomic_ops >= stats.claims as u64);
}

/// Every item blocks until the token is cancelled from another thread; `run` must return
/// `Cancelled`, nothing may run after it returns, and far fewer than all items may have run.
fn cancel_mid_batch(policy: Policy) {
    let n = case_count(3000, 60);
    let cancel = CancelToken::new();
    let batch = TestBatch::new(vec![300; n]).with_hook(|_| {
        wait_for("cancellation", || cancel.is_cancelled());
        Ok(())
    });
    let config = SchedulerConfig {
        policy,
        threads: 3,
        chunk_bytes: Some(2000),
        ..SchedulerConfig::default()
    };
    let scheduler = Scheduler::new(config).unwrap();
    let started_at_return = thread::scope(|s| {
        s.spawn(|| {
            wait_for("first item", || batch.started() > 0);
            cancel.cancel();
        });
        let result = scheduler.run(&batch, &cancel);
        assert_eq!(result.err(), Some(BatchError::Cancelled), "{policy}");
        assert_eq!(
            batch.in_flight(),
            0,
            "{policy}: an item still runs after run returned"
        );
        batch.started()
    });
    thread::sleep(std::time::Duration::from_millis(5));
    assert_eq!(
        batch.started(),
        started_at_return,
        "{policy}: an item started after run returned"
    );
    assert!(
        started_at_return < n / 2,
        "{policy}: {started_at_return} of {n} items ran despite cancellation"
    );
    assert_eq!(scheduler.last_stats().unwrap().policy, policy);
}

#[test]
fn cancel_stops_every_policy() {
    for policy in tested_policies() {
        cancel_mid_batch(policy);
    }
}

#[test]
fn cancelled_before_start() {
    for policy in tested_policies() {
        let cancel = CancelToken::new();
        cancel.cancel();
        let batch = TestBatch::new(vec![300; 100]);
        assert_eq!(
            scheduler(policy, 2).run(&batch, &cancel).err(),
            Some(BatchError::Cancelled)
        );
        assert_eq!(batch.started(), 0, "{policy}");
    }
}

#[test]
fn panic_fails_the_batch_and_the_next_batch_works() {
    for policy in tested_policies() {
        for threads in [2, 3] {
            let scheduler = Scheduler::new(SchedulerConfig {
                policy,
                threads,
                chunk_bytes: Some(1500),
                ..SchedulerConfig::default()
            })
            .unwrap();
            let n = case_count(2000, 40);
            let bad = n / 3;
            let batch = TestBatch::new(vec![300; n]).with_hook(|i| {
                if i == bad {
                    panic!("boom at {i}")
                } else {
                    Ok(())
                }
            });
            let err = scheduler.run(&batch, &CancelToken::new()).err().unwrap();
            assert_eq!(
                err,
                BatchError::Panicked {
                    index: bad,
                    message: format!("boom at {bad}")
                },
                "{policy}"
            );
            assert_eq!(batch.in_flight(), 0);
            // The workers survived: the same scheduler runs the next batches.
            for _ in 0..case_count(3, 1) {
                let next = TestBatch::new(vec![300; n]);
                check_output(&next, &scheduler.run(&next, &CancelToken::new()).unwrap());
            }
        }
    }
}

#[test]
fn item_errors_name_a_failing_index() {
    for policy in tested_policies() {
        let n = case_count(2000, 40);
        let failing = [n / 4, n / 2];
        let batch = TestBatch::new(vec![300; n]).with_hook(|i| {
            if failing.contains(&i) {
                Err(format!("bad {i}"))
            } else {
                Ok(())
            }
        });
        let err = scheduler(policy, 3)
            .run(&batch, &CancelToken::new())
            .err()
            .unwrap();
        let BatchError::ItemFailed { index, error } = err else {
            panic!("{policy}: {err}")
        };
        assert!(
            failing.contains(&index) && error.to_string() == format!("bad {index}"),
            "{policy}: {index} {error}"
        );
        if policy == Policy::Serial {
            assert_eq!(index, failing[0]);
        }
    }
}

#[test]
fn concurrent_batches_from_eight_threads() {
    let schedulers: Vec<Scheduler> = tested_policies()
        .into_iter()
        .map(|p| scheduler(p, 3))
        .collect();
    let shared_chunked = scheduler(Policy::Chunked, 2);
    thread::scope(|s| {
        for t in 0..8u64 {
            let (schedulers, shared_chunked) = (&schedulers, &shared_chunked);
            s.spawn(move || {
                let mut rng = fastrand::Rng::with_seed(t);
                for round in 0..case_count(12, 1) {
                    let scheduler = if round % 2 == 0 {
                        shared_chunked
                    } else {
                        &schedulers[rng.usize(0..schedulers.len())]
                    };
                    let n = rng.usize(0..if cfg!(miri) { 30 } else { 3000 });
                    let batch = TestBatch::new(random_costs(&mut rng, n));
                    check_output(&batch, &scheduler.run(&batch, &CancelToken::new()).unwrap());
                }
            });
        }
    });
}

/// A small batch submitted while a huge one occupies every pool worker must complete on its own
/// (the submitting thread works on its batch first), while the huge one is still running.
#[test]
fn small_batch_completes_while_a_huge_batch_runs() {
    let scheduler = scheduler(Policy::Chunked, 4);
    for small_cost in [100, 5000] {
        // 10 x 100 bytes runs inline; 10 x 5000 bytes is published to the busy pool.
        let small_done = AtomicBool::new(false);
        let big_done = AtomicBool::new(false);
        let big = TestBatch::new(vec![400; case_count(20_000, 50)]).with_hook(|_| {
            wait_for("the small batch", || small_done.load(Ordering::Acquire));
            Ok(())
        });
        thread::scope(|s| {
            s.spawn(|| {
                check_output(&big, &scheduler.run(&big, &CancelToken::new()).unwrap());
                big_done.store(true, Ordering::Release);
            });
            wait_for("the huge batch to start", || big.started() > 0);
            let small = TestBatch::new(vec![small_cost; 10]);
            let output = scheduler.run(&small, &CancelToken::new()).unwrap();
            check_output(&small, &output);
            assert_eq!(output.stats.inline, small_cost == 100);
            assert!(
                !big_done.load(Ordering::Acquire),
                "the huge batch cannot finish before the small one"
            );
            small_done.store(true, Ordering::Release);
        });
        assert!(big_done.load(Ordering::Acquire));
    }
}

#[test]
fn nested_runs_complete() {
    let scheduler = Scheduler::new(SchedulerConfig {
        threads: 3,
        chunk_bytes: Some(1000),
        ..SchedulerConfig::default()
    })
    .unwrap();
    let inner_runs = AtomicUsize::new(0);
    let outer = TestBatch::new(vec![600; case_count(40, 6)]).with_hook(|i| {
        if i % 5 == 0 {
            let inner = TestBatch::new(vec![700; 30]);
            check_output(
                &inner,
                &scheduler
                    .run(&inner, &CancelToken::new())
                    .map_err(|e| e.to_string())?,
            );
            inner_runs.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    });
    check_output(&outer, &scheduler.run(&outer, &CancelToken::new()).unwrap());
    assert_eq!(
        inner_runs.load(Ordering::Relaxed),
        outer.costs.len().div_ceil(5)
    );
}

#[test]
fn default_scheduler_runs() {
    let scheduler = Scheduler::new(SchedulerConfig::default()).unwrap();
    assert_eq!(scheduler.config().policy, Policy::Chunked);
    assert!(scheduler.last_stats().is_none());
    let batch = TestBatch::new(vec![1000; 100]);
    check_output(&batch, &scheduler.run(&batch, &CancelToken::new()).unwrap());
    assert!(scheduler.clone().last_stats().is_some());
}

/// Thread counts whose published batches are dealt to several claim cursors (3, 4 and 7): far
/// more threads than this machine has cores, which tests correctness, not speed.
fn several_cursor_thread_counts() -> Vec<usize> {
    if cfg!(miri) {
        vec![ONE_CURSOR_MAX_THREADS + 1]
    } else {
        vec![ONE_CURSOR_MAX_THREADS + 1, 100, 200]
    }
}

#[test]
fn several_cursors_match_the_sequential_reference() {
    let mut rng = fastrand::Rng::with_seed(0xc0_c0_c0);
    for threads in several_cursor_thread_counts() {
        assert!(claim_cursors(threads) > 1);
        for case in 0..case_count(6, 2) {
            // Small fixed chunks in half the cases, so every cursor deals many of them.
            let chunk_bytes = (case % 2 == 0).then_some(1000);
            let scheduler = Scheduler::new(SchedulerConfig {
                threads,
                chunk_bytes,
                ..SchedulerConfig::default()
            })
            .unwrap();
            let n = rng.usize(1..case_count(8000, 60));
            let mut batch = TestBatch::new(random_costs(&mut rng, n));
            if case % 3 == 2 {
                batch = batch.without_cumulative_costs();
            }
            let output = scheduler
                .run(&batch, &CancelToken::new())
                .unwrap_or_else(|e| panic!("x{threads}: {e}"));
            check_output(&batch, &output);
            let expected = if output.stats.inline {
                1
            } else {
                claim_cursors(threads)
            };
            assert_eq!(output.stats.cursors, expected, "x{threads}");
        }
    }
}

#[test]
fn several_cursors_stay_within_the_atomics_bound() {
    for threads in several_cursor_thread_counts() {
        let scheduler = Scheduler::new(SchedulerConfig {
            threads,
            chunk_bytes: Some(1000),
            ..SchedulerConfig::default()
        })
        .unwrap();
        // No item finishes before four have started, so four participants claim at once, with
        // homes on four cursors (the owner's 0, the first helpers' 1, 2 and 3).
        let started = AtomicUsize::new(0);
        let batch = TestBatch::new(vec![500; case_count(6000, 60)]).with_hook(|_| {
            started.fetch_add(1, Ordering::SeqCst);
            wait_for("four items at once", || started.load(Ordering::SeqCst) >= 4);
            Ok(())
        });
        let output = scheduler.run(&batch, &CancelToken::new()).unwrap();
        check_output(&batch, &output);
        let stats = &output.stats;
        assert!(!stats.inline);
        assert!(stats.threads_used >= 4);
        assert_eq!(stats.cursors, claim_cursors(threads));
        assert_eq!(stats.chunks, batch.costs.len() / 2, "two items per chunk");
        // Each participation ends with at least one empty claim and at most one per cursor.
        assert!(stats.claims >= stats.chunks + stats.participants);
        assert!(stats.claims <= stats.chunks + stats.cursors * stats.participants);
    }
}

/// Cancellation, an item's error and a panic each stop a batch dealt to several cursors: no
/// item runs after `run` returns, most items never start, the error names the item, the bounds
/// on claims and atomics hold for the failed batch, and the pool runs the next batch.
#[test]
fn several_cursors_stop_on_cancel_error_and_panic() {
    let threads = *several_cursor_thread_counts().last().unwrap();
    let n = case_count(6000, 120);
    let config = SchedulerConfig {
        threads,
        chunk_bytes: Some(1000),
        ..SchedulerConfig::default()
    };
    let scheduler = Scheduler::new(config).unwrap();
    let stopped = |batch: &TestBatch<'_>,
                   result: Result<BatchOutput<TestBatch<'_>>, BatchError>| {
        let err = result.err().expect("the batch must fail");
        assert_eq!(
            batch.in_flight(),
            0,
            "an item still runs after run returned"
        );
        let started = batch.started();
        thread::sleep(std::time::Duration::from_millis(5));
        assert_eq!(
            batch.started(),
            started,
            "an item started after run returned"
        );
        assert!(started < n / 2, "{started} of {n} items ran: {err}");
        let stats = scheduler.last_stats().unwrap();
        assert_eq!(stats.cursors, claim_cursors(threads));
        testing::check_atomics(&stats);
        err
    };

    // Cancelled from another thread while every participant waits inside an item.
    let cancel = CancelToken::new();
    let batch = TestBatch::new(vec![500; n]).with_hook(|_| {
        wait_for("cancellation", || cancel.is_cancelled());
        Ok(())
    });
    let err = thread::scope(|s| {
        s.spawn(|| {
            wait_for("first item", || batch.started() > 0);
            cancel.cancel();
        });
        stopped(&batch, scheduler.run(&batch, &cancel))
    });
    assert_eq!(err, BatchError::Cancelled);

    // An item's error, then a panic: each in the item that happens to start 50th, wherever the
    // cursors dealt it, so that most items are still unclaimed when it stops the batch. A failure
    // stops the batch only once it reaches the scheduler, and with hundreds of threads on a few
    // cores the failing one can be descheduled on the way (a panic unwinds for tens of µs) while
    // another runs every item left. So items that start after the failure wait until the failing
    // item has left its hook, and then a grace period in which only the failing thread has work.
    // The panic skips the panic hook, which with `RUST_BACKTRACE` set prints a backtrace first
    // (tens of ms); `panic_fails_the_batch_and_the_next_batch_works` goes through it.
    struct SetOnDrop<'a>(&'a AtomicBool);
    impl Drop for SetOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    for panics in [false, true] {
        let calls = AtomicUsize::new(0);
        let failed = AtomicUsize::new(usize::MAX);
        let failing = AtomicBool::new(false);
        let left = AtomicBool::new(false);
        let batch = TestBatch::new(vec![500; n]).with_hook(|i| {
            if calls.fetch_add(1, Ordering::SeqCst) != 50 {
                if failing.load(Ordering::SeqCst) {
                    wait_for("the failing item to leave its hook", || {
                        left.load(Ordering::SeqCst)
                    });
                    thread::sleep(std::time::Duration::from_millis(20));
                }
                return Ok(());
            }
            failed.store(i, Ordering::SeqCst);
            failing.store(true, Ordering::SeqCst);
            let _leaving = SetOnDrop(&left);
            if panics {
                std::panic::resume_unwind(Box::new(format!("boom at {i}")))
            }
            Err(format!("bad {i}"))
        });
        let err = stopped(&batch, scheduler.run(&batch, &CancelToken::new()));
        let index = failed.load(Ordering::SeqCst);
        let expected = if panics {
            BatchError::Panicked {
                index,
                message: format!("boom at {index}"),
            }
        } else {
            BatchError::ItemFailed {
                index,
                error: format!("bad {index}").into(),
            }
        };
        assert_eq!(err, expected);
    }

    // The workers survived.
    let next = TestBatch::new(vec![500; n]);
    check_output(&next, &scheduler.run(&next, &CancelToken::new()).unwrap());
}
