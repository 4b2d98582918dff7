//! A discrete-event model of the scheduler policies, fed with the real chunk planner and with
//! per-item encode times of o200k_base measured on this machine; validated against the measured
//! efficiencies at every thread count measured, then asked what happens at 16, 64 and 192 cores.
//!
//! `cargo run --release --example simulate` (this folder is `benchmark/simulate/`). Run
//! `--example scheduler` first: its medians (`benchmark/results/scheduler-measured.tsv`, or the
//! file named by `--measured PATH`) are the measured side of the validation, at every thread
//! count they hold. Writes `benchmark/results/scheduler-scaling.svg`; `--validate-only` stops
//! after the validation (what `scripts/many-cores.sh` runs on a machine of many cores).
//!
//! The modules, in the order the program uses them:
//!
//! * [`measure`]: what is measured here, on this machine: every item's encode time (the fastest
//!   of several serial passes, because the machine is shared and noise only ever adds time), the
//!   time the real planners take for each predicted batch at its own thread count (the owner's
//!   serial work before the publish), each policy's dispatch cost per item (trivial items at 1
//!   thread, over a plain loop), the cost of assembling the output (`encode_all` time minus the
//!   scheduler's own wall time), the thread wake-up latency (park/unpark ping-pong) and the cost
//!   of the `unpark` call;
//! * [`model`]: what is assumed (no many-core machine is available), and the policies as
//!   modelled: `chunked` in `model::chunked`, `rayon` and `rayon-min-len` in `model::rayon`;
//! * [`cases`]: the predicted batches (the measured items scaled to a given work per worker and
//!   core count) and the what-ifs the tables compare;
//! * [`report`]: the tables, printed as Markdown;
//! * [`chart`]: the efficiency-versus-cores chart.

#[path = "../corpus.rs"]
#[allow(dead_code)]
mod corpus;

mod cases;
mod chart;
mod measure;
mod model;
mod report;

use batchtok::engine::Tokenizer;
use batchtok::scheduler::Policy;

use measure::{MeasuredWorkload, dispatch_ns, measure_wake};
use model::{LINE_SAME_SOCKET_NS, Machine, UNPARK_NS, WAKE_LATENCY_NS};

fn main() {
    println!("machine: {}", corpus::machine());
    let tokenizer = Tokenizer::from_encoding("o200k_base").expect("o200k_base loads");
    // Every text timed here goes to the release-candidate engine, not to the rank engine that
    // serves an encoding's first texts while it is built.
    batchtok::engine::openai::find("o200k_base")
        .and_then(|encoding| encoding.model.wait_for_full_engine())
        .expect("o200k_base's engine builds");
    let text = corpus::big_txt();
    let workloads = corpus::workloads(&text);

    let (wake_measured, unpark_measured) = measure_wake();
    // The server case: assumed line transfers and wake-up, this machine's dispatch costs.
    let base = Machine {
        line_ns: LINE_SAME_SOCKET_NS,
        wake_ns: WAKE_LATENCY_NS,
        unpark_ns: UNPARK_NS,
        chunked_item_ns: dispatch_ns(Policy::Chunked),
        rayon_item_ns: dispatch_ns(Policy::Rayon),
        rayon_min_len_item_ns: dispatch_ns(Policy::RayonMinLen),
    };
    report::machine_inputs(&base, wake_measured, unpark_measured);
    let measured: Vec<MeasuredWorkload> = workloads
        .iter()
        .map(|workload| {
            let measured = MeasuredWorkload::measure(&tokenizer, workload);
            report::workload(workload, &measured);
            measured
        })
        .collect();

    // The VM case: the same with this machine's measured wake-up.
    let vm = Machine {
        wake_ns: wake_measured,
        unpark_ns: unpark_measured,
        ..base
    };
    let args: Vec<String> = std::env::args().collect();
    let measured_path = args
        .iter()
        .position(|a| a == "--measured")
        .and_then(|i| args.get(i + 1).cloned())
        .unwrap_or_else(|| measure::MEASURED_TSV.to_owned());
    report::validation(&measured, &vm, &measured_path);
    if args.iter().any(|a| a == "--validate-only") {
        return;
    }

    let cases = cases::predicted(&measured);
    report::plan_times(&cases);
    for m in [base, vm] {
        let label = if m.wake_ns == base.wake_ns && m.unpark_ns == base.unpark_ns {
            "assumed server"
        } else {
            "this VM's measured"
        };
        report::predictions(&cases, m, label);
        report::wake_ramp(&cases, m, label);
        report::min_chunks(&cases, m, label);
        report::cursors(&cases, m, label);
    }

    chart::write(&measured, &base);
}
