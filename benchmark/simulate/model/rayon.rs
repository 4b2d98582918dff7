//! `rayon` and `rayon-min-len` as modelled.
//!
//! rayon's adaptive splitting as in `rayon::iter::plumbing`: a job splits while
//! `len / 2 >= min` and its split budget, initially the thread count and halved per split,
//! lasts; a stolen job's budget is reset to at least the thread count. Each split pushes the
//! right half on the worker's deque (`RAYON_JOIN_NS`) and wakes one sleeper if no worker is idle
//! and awake; idle workers steal the oldest job of a random non-empty deque, paying one line
//! read per deque probed plus `RAYON_STEAL_LINES` transfers and an epoch pin, serialized per
//! victim. The caller injects the root job, sleeps, and is woken at the end. `rayon-min-len` is
//! the same with `min = ceil(n / (4 p)).clamp(1, 8)`.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::{EPOCH_PIN_NS, Items, LOCAL_ATOMIC_NS, Machine, RAYON_JOIN_NS, RAYON_STEAL_LINES};

/// Deterministic xorshift, so every run of the model is the same.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// A rayon job: a range of items and its splitter state.
#[derive(Clone, Copy)]
struct Job {
    lo: usize,
    hi: usize,
    splits: usize,
    migrated: bool,
}

/// Makespan of rayon's adaptive splitting with `min` as `with_min_len`, on `p` workers, from
/// the caller's injection to the caller's wake-up.
pub fn simulate_rayon(items: &Items, p: usize, min: usize, item_ns: f64, m: &Machine) -> f64 {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        Busy,
        Idle,
        Asleep,
    }
    let n = items.ns.len();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ p as u64);
    let mut deques: Vec<VecDeque<Job>> = vec![VecDeque::new(); p];
    let mut steal_free = vec![0.0f64; p];
    let mut state = vec![State::Asleep; p];
    // Events carry a per-worker generation so superseded ones are skipped.
    let mut generation = vec![0u64; p];
    let mut current: Vec<Option<Job>> = vec![None; p];
    let mut heap: BinaryHeap<Reverse<(u64, usize, u64)>> = BinaryHeap::new();
    let key = |t: f64| (t * 16.0) as u64;
    let mut times = vec![0.0f64; p];
    let mut done_items = 0usize;
    let mut end = 0.0f64;

    // The caller injects the root job and wakes one worker.
    let root = Job {
        lo: 0,
        hi: n,
        splits: p,
        migrated: false,
    };
    current[0] = Some(root);
    state[0] = State::Busy;
    times[0] = m.unpark_ns + m.wake_ns + m.line_ns;
    heap.push(Reverse((key(times[0]), 0, 0)));

    while let Some(Reverse((_, w, g))) = heap.pop() {
        if g != generation[w] {
            continue;
        }
        let mut t = times[w];
        if state[w] == State::Idle && current[w].is_none() && deques[w].is_empty() {
            // Idle: steal, or give up and sleep once the idle period has passed.
            let mut probes = 0.0;
            let start = rng.below(p);
            let victim = (0..p)
                .map(|k| (start + k) % p)
                .filter(|&v| v != w)
                .find(|&v| {
                    probes += 1.0;
                    !deques[v].is_empty()
                });
            match victim {
                Some(v) => {
                    let begin = (t + probes * m.line_ns).max(steal_free[v]);
                    let stolen_at = begin + RAYON_STEAL_LINES * m.line_ns + EPOCH_PIN_NS;
                    steal_free[v] = stolen_at;
                    let mut job = deques[v].pop_front().expect("non-empty");
                    job.migrated = true;
                    current[w] = Some(job);
                    state[w] = State::Busy;
                    times[w] = stolen_at;
                    heap.push(Reverse((key(stolen_at), w, generation[w])));
                }
                None => {
                    // Nothing to steal. Real rayon searches for some tens of µs (rounds of
                    // steal attempts and yields) before it sleeps; the model sleeps at once and
                    // is woken by the next push. At the start of a batch every worker is asleep
                    // anyway, and at its end nothing is pushed any more, so the difference
                    // hardly shows where it matters.
                    state[w] = State::Asleep;
                }
            }
            continue;
        }
        let job = match current[w].take() {
            Some(job) => job,
            None => match deques[w].pop_back() {
                Some(job) => {
                    t += LOCAL_ATOMIC_NS;
                    job
                }
                None => {
                    state[w] = State::Idle;
                    times[w] = t + m.line_ns;
                    generation[w] += 1;
                    heap.push(Reverse((key(times[w]), w, generation[w])));
                    continue;
                }
            },
        };
        // Split as rayon's LengthSplitter does, pushing right halves.
        let mut job = job;
        loop {
            let len = job.hi - job.lo;
            if len / 2 < min {
                break;
            }
            let splits = if job.migrated {
                p.max(job.splits / 2)
            } else if job.splits > 0 {
                job.splits / 2
            } else {
                break;
            };
            let mid = job.lo + len / 2;
            deques[w].push_back(Job {
                lo: mid,
                hi: job.hi,
                splits,
                migrated: false,
            });
            t += RAYON_JOIN_NS;
            job = Job {
                lo: job.lo,
                hi: mid,
                splits,
                migrated: false,
            };
            // An idle, awake worker sees the push while searching; otherwise wake a sleeper.
            if let Some(idle) = (0..p).find(|&v| state[v] == State::Idle) {
                state[idle] = State::Idle;
                times[idle] = t + m.line_ns;
                generation[idle] += 1;
                heap.push(Reverse((key(times[idle]), idle, generation[idle])));
            } else if let Some(sleeper) = (0..p).find(|&v| state[v] == State::Asleep) {
                t += m.unpark_ns;
                state[sleeper] = State::Idle;
                times[sleeper] = t + m.wake_ns;
                generation[sleeper] += 1;
                heap.push(Reverse((key(times[sleeper]), sleeper, generation[sleeper])));
            }
        }
        // The leaf: one fold over the range.
        t += (job.lo..job.hi).map(|i| items.ns[i] + item_ns).sum::<f64>();
        done_items += job.hi - job.lo;
        end = end.max(t);
        state[w] = State::Busy;
        times[w] = t;
        generation[w] += 1;
        heap.push(Reverse((key(t), w, generation[w])));
        if done_items == n {
            break;
        }
    }
    // Joins complete up the tree, then the caller's latch wakes it.
    end + m.unpark_ns + m.wake_ns
}
