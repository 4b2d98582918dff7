//! The tables, printed as Markdown to stdout: what was measured here, the validation at 1 and 2
//! threads, the plan time of each predicted case, the predicted efficiencies and the what-ifs.

use batchtok::scheduler::Policy;
use batchtok::scheduler::plan::plan_cumulative;

use crate::cases::{CURSOR_CHOICES, Case, FANOUTS, JOIN_LINES, MIN_CHUNKS, WORK_PER_WORKER_NS};
use crate::corpus::Workload;
use crate::measure::{MeasuredWorkload, plan_ns, read_measured};
use crate::model::chunked::{RAMP, Ramp, simulate_chunked};
use crate::model::{Items, Machine, default_plan_params, makespan};

/// The policies compared in the tables and on the chart.
pub const POLICIES: [Policy; 3] = [Policy::Chunked, Policy::Rayon, Policy::RayonMinLen];

/// The machine's measured inputs: wake-up, `unpark`, and each policy's dispatch cost per item.
pub fn machine_inputs(base: &Machine, wake_measured: f64, unpark_measured: f64) {
    println!(
        "\nmeasured here: wake-up latency {:.1} µs (one way, park/unpark ping-pong), unpark call {:.2} µs; \
         dispatch per item at 1 thread: chunked {:.1} ns, rayon {:.1} ns, rayon-min-len {:.1} ns",
        wake_measured / 1e3,
        unpark_measured / 1e3,
        base.chunked_item_ns,
        base.rayon_item_ns,
        base.rayon_min_len_item_ns
    );
}

/// One line per workload: its size, serial work, assembly and plan time at 2 threads.
pub fn workload(workload: &Workload, measured: &MeasuredWorkload) {
    let items = &measured.items;
    let (plan_now, plan_before) = measured.plan_at_two;
    println!(
        "{}: {} items ({:.2} MiB), serial work {:.1} ms ({:.1} µs/item, max {:.1} ms, {:.2} ns/B), assembly {:.2} ms, plan at 2 threads {:.1} µs (per-item planner: {:.1} µs)",
        workload.name,
        items.ns.len(),
        workload.bytes() as f64 / (1 << 20) as f64,
        items.work_ns() / 1e6,
        items.work_ns() / items.ns.len() as f64 / 1e3,
        items.ns.iter().copied().fold(0.0, f64::max) / 1e6,
        items.work_ns() / workload.bytes() as f64,
        measured.assembly_ns / 1e6,
        plan_now / 1e3,
        plan_before / 1e3,
    );
}

/// Validation at every thread count `measured_path` holds (1 and 2 when it holds none), for each
/// method it holds, with this VM's measured wake-up (`vm`).
///
/// The model as it is predicts efficiency on perfect hardware: every item costs at `p` threads
/// what it cost alone. On a real machine the same bytes cost more at `p` threads (cores slowing
/// each other; on cold caches, each thread learning the batch's words apart), which the model
/// cannot know, so the second comparison gives it that work, measured in the same run without
/// any scheduler: the summed encode time of `sharded-shared` (the batch cut into `p`
/// byte-balanced shards on one shared engine). Every item's cost is scaled so that the batch
/// costs that much, and the model predicts the policy's own wall time (plan, wake-ups, claims,
/// tail) against the measured one, and the whole call with the output's assembly.
pub fn validation(measured_workloads: &[MeasuredWorkload], vm: &Machine, measured_path: &str) {
    let measured = read_measured(measured_path);
    let mut threads: Vec<usize> = measured.keys().map(|(_, _, _, p)| *p).collect();
    threads.sort_unstable();
    threads.dedup();
    if threads.is_empty() {
        threads = vec![1, 2];
    }
    let mut methods: Vec<&str> = measured.keys().map(|(m, ..)| m.as_str()).collect();
    methods.sort_unstable();
    methods.dedup();
    println!("\n### Validation (model with this VM's measured wake-up vs measured medians)\n");
    println!(
        "Efficiency: the model on perfect hardware. Wall times: the model given the work measured \
         at each thread count (sharded-shared's threads' summed encode time).\n"
    );
    println!(
        "| method | workload | policy | threads | efficiency predicted | measured | work ms | scheduler ms predicted | measured | measured / predicted | call ms predicted | measured | measured / predicted |"
    );
    println!(
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    let fmt =
        |v: Option<f64>, digits: usize| v.map_or("–".to_owned(), |v| format!("{v:.digits$}"));
    for method in methods {
        let get = |workload: &str, contender: &str, p: usize| {
            measured
                .get(&(
                    method.to_owned(),
                    workload.to_owned(),
                    contender.to_owned(),
                    p,
                ))
                .copied()
        };
        for workload in measured_workloads {
            let (name, items, assembly) = (workload.name, &workload.items, workload.assembly_ns);
            let t1 = items.work_ns() + assembly;
            for policy in POLICIES {
                for &p in &threads {
                    let Some(got) = get(name, &policy.to_string(), p) else {
                        continue;
                    };
                    let scheduler_ns =
                        |items: &Items| makespan(policy, items, p, vm, plan_ns(items, p).0);
                    let predicted_efficiency = t1 / (p as f64 * (scheduler_ns(items) + assembly));
                    let work_ns = get(name, "sharded-shared", p)
                        .and_then(|r| r.busy_s)
                        .map(|s| s * 1e9);
                    let predicted_scheduler_ns = work_ns
                        .map(|work| scheduler_ns(&items.with_work_factor(work / items.work_ns())));
                    let predicted_call_ns = predicted_scheduler_ns.map(|ns| ns + assembly);
                    let ms = |ns: Option<f64>| ns.map(|ns| ns / 1e6);
                    let ratio = |got: Option<f64>, predicted: Option<f64>| {
                        got.zip(predicted).map(|(g, p)| g / p)
                    };
                    let got_scheduler_ns = got.scheduler_s.map(|s| s * 1e9);
                    let got_call_ns = Some(got.seconds * 1e9);
                    println!(
                        "| {method} | {name} | {policy} | {p} | {predicted_efficiency:.3} | {:.3} | {} | {} | {} | {} | {} | {} | {} |",
                        got.efficiency,
                        fmt(ms(work_ns), 2),
                        fmt(ms(predicted_scheduler_ns), 2),
                        fmt(ms(got_scheduler_ns), 2),
                        fmt(ratio(got_scheduler_ns, predicted_scheduler_ns), 3),
                        fmt(ms(predicted_call_ns), 2),
                        fmt(ms(got_call_ns), 2),
                        fmt(ratio(got_call_ns, predicted_call_ns), 3),
                    );
                }
            }
        }
    }
}

/// The plan time of every predicted case: the owner's serial work before the publish.
pub fn plan_times(cases: &[Case]) {
    println!("\n### Plan time on this machine (the owner's serial work before the publish)\n");
    println!(
        "| workload | work per worker | cores | items | per-item planner (before) | planner from running totals (now) | chunks |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for c in cases {
        let params = default_plan_params(c.p);
        println!(
            "| {} | {:.0} ms | {} | {} | {:.1} µs | {:.1} µs | {} |",
            c.name,
            c.work / 1e6,
            c.p,
            c.batch.ns.len(),
            c.per_item_plan_ns / 1e3,
            c.plan_ns / 1e3,
            plan_cumulative(&c.batch.ends, &params).chunks.len(),
        );
    }
}

/// Predicted efficiency of every policy on every case on `m`, and where the chunked policy's
/// time goes.
pub fn predictions(cases: &[Case], m: Machine, label: &str) {
    println!(
        "\n### Predicted scheduling efficiency, {label} wake-up ({:.1} µs latency, {:.1} µs unpark)\n",
        m.wake_ns / 1e3,
        m.unpark_ns / 1e3
    );
    println!(
        "| workload | work per worker | cores | items | chunked | rayon | rayon-min-len | chunked, per-item plan (before) | where chunked's p · Tp goes (%): plan, ramp, claims, dispatch, tail, drain; last join; the chunk that ends last |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
    for c in cases {
        let t1 = c.batch.work_ns();
        let eff = |tp: f64| t1 / (c.p as f64 * tp);
        let cells: Vec<String> = POLICIES
            .iter()
            .map(|&policy| format!("{:.3}", eff(makespan(policy, &c.batch, c.p, &m, c.plan_ns))))
            .collect();
        let mp = m.with_cores(c.p);
        let run = simulate_chunked(&c.batch, c.p, &mp, RAMP, c.plan_ns);
        let before = simulate_chunked(&c.batch, c.p, &mp, RAMP, c.per_item_plan_ns);
        let l = run.losses;
        let pct = |x: f64| 100.0 * x / l.total();
        let (last, last_ns) = &run.last_chunk;
        let last_bytes =
            c.batch.ends[last.end - 1] - last.start.checked_sub(1).map_or(0, |i| c.batch.ends[i]);
        let mean_ns_per_byte = t1 / *c.batch.ends.last().unwrap() as f64;
        println!(
            "| {} | {:.0} ms | {} | {} | {} | {:.3} | {:.1}, {:.1}, {:.1}, {:.1}, {:.1}, {:.1}; {:.0} µs; items {:?}, {:.0} µs, {:.1}x the batch's ns/B |",
            c.name,
            c.work / 1e6,
            c.p,
            c.batch.ns.len(),
            cells.join(" | "),
            eff(before.makespan),
            pct(l.plan),
            pct(l.ramp),
            pct(l.claims),
            pct(l.dispatch),
            pct(l.tail),
            pct(l.drain),
            run.last_join / 1e3,
            last,
            last_ns / 1e3,
            last_ns / last_bytes.max(1) as f64 / mean_ns_per_byte,
        );
    }
}

/// The cases the what-if tables use: 1 ms of work per worker, 64 cores and more.
fn many_core_cases<'c>(cases: &'c [Case<'c>]) -> impl Iterator<Item = &'c Case<'c>> {
    cases
        .iter()
        .filter(|c| c.work == WORK_PER_WORKER_NS[0] && c.p >= 64)
}

/// The wake ramp: chunked efficiency by fan-out and the registry's critical section, with and
/// without a pre-wake.
pub fn wake_ramp(cases: &[Case], m: Machine, label: &str) {
    println!(
        "\n#### Wake ramp, {label} wake-up: chunked efficiency (last join, µs) by fan-out, 1 ms per worker\n"
    );
    let header: Vec<String> = FANOUTS.iter().map(|f| format!("fan-out {f}")).collect();
    println!(
        "| workload | cores | registry lines | pre-wake | {} |",
        header.join(" | ")
    );
    println!(
        "| --- | ---: | ---: | --- |{}",
        " ---: |".repeat(FANOUTS.len())
    );
    for c in many_core_cases(cases) {
        for lines in JOIN_LINES {
            for prewake in [false, true] {
                let cells: Vec<String> = FANOUTS
                    .iter()
                    .map(|&fanout| {
                        let ramp = Ramp {
                            fanout,
                            registry_lines: lines,
                            prewake,
                            ..RAMP
                        };
                        let (efficiency, run) = c.what_if(m, ramp);
                        format!("{efficiency:.3} ({:.0})", run.last_join / 1e3)
                    })
                    .collect();
                println!(
                    "| {} | {} | {lines} | {} | {} |",
                    c.name,
                    c.p,
                    if prewake { "yes" } else { "no" },
                    cells.join(" | ")
                );
            }
        }
    }
}

/// The claims: chunked efficiency by the chunk target's lower clamp.
pub fn min_chunks(cases: &[Case], m: Machine, label: &str) {
    println!(
        "\n#### Claims, {label} wake-up: chunked efficiency by the chunk target's lower clamp, 1 ms per worker\n"
    );
    println!(
        "| workload | cores |{}",
        MIN_CHUNKS
            .iter()
            .map(|b| format!(" min {} KiB |", b / 1024))
            .collect::<String>()
    );
    println!("| --- | ---: |{}", " ---: |".repeat(MIN_CHUNKS.len()));
    for c in many_core_cases(cases) {
        let cells: Vec<String> = MIN_CHUNKS
            .iter()
            .map(|&min| {
                let ramp = Ramp {
                    min_chunk: Some(min),
                    ..RAMP
                };
                let (efficiency, run) = c.what_if(m, ramp);
                let l = run.losses;
                format!(
                    "{efficiency:.3} ({:.1}, {:.1})",
                    100.0 * l.claims / l.total(),
                    100.0 * l.tail / l.total()
                )
            })
            .collect();
        println!("| {} | {} | {} |", c.name, c.p, cells.join(" | "));
    }
}

/// The claims: chunked efficiency by the number of claim cursors and how a join reads them.
pub fn cursors(cases: &[Case], m: Machine, label: &str) {
    println!(
        "\n#### Claims, {label} wake-up: chunked efficiency (claims, ramp, tail % of p · Tp; last join µs) by claim cursors, 1 ms per worker\n"
    );
    println!(
        "| workload | cores |{}",
        CURSOR_CHOICES
            .iter()
            .map(|(name, ..)| format!(" {name} |"))
            .collect::<String>()
    );
    println!("| --- | ---: |{}", " ---: |".repeat(CURSOR_CHOICES.len()));
    for c in cases.iter().filter(|c| c.work == WORK_PER_WORKER_NS[0]) {
        let cells: Vec<String> = CURSOR_CHOICES
            .iter()
            .map(|&(_, cursors, reads, peek)| {
                let ramp = Ramp {
                    cursors,
                    reads,
                    peek,
                    ..RAMP
                };
                let (efficiency, run) = c.what_if(m, ramp);
                let l = run.losses;
                format!(
                    "{efficiency:.3} ({:.1}, {:.1}, {:.1}; {:.0})",
                    100.0 * l.claims / l.total(),
                    100.0 * l.ramp / l.total(),
                    100.0 * l.tail / l.total(),
                    run.last_join / 1e3
                )
            })
            .collect();
        println!("| {} | {} | {} |", c.name, c.p, cells.join(" | "));
    }
}
