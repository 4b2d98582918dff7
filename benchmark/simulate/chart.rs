//! The chart: predicted efficiency against cores under the server assumptions, 1 ms of work per
//! worker, for documents and short items; written to `benchmark/results/scheduler-scaling.svg`.

use std::fmt::Write as _;

use batchtok::scheduler::{Policy, WAKE_FANOUT};

use crate::cases::{WORK_PER_WORKER_NS, scaled};
use crate::measure::{MeasuredWorkload, plan_ns};
use crate::model::{Items, Machine, UNPARK_NS, WAKE_LATENCY_NS, makespan};

/// Core counts on the chart.
pub const CHART_CORES: [usize; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 192];

/// One line of the chart: label, colour, dash pattern, (cores, efficiency) points.
type Series = (String, &'static str, &'static str, Vec<(usize, f64)>);

/// The chart as an SVG document, one polyline per series.
fn svg(series: &[Series]) -> String {
    let (w, h, left, right, top, bottom) = (830.0, 440.0, 60.0, 280.0, 40.0, 50.0);
    let x = |p: usize| left + (p as f64).log2() / 192f64.log2() * (w - left - right);
    let y = |e: f64| top + (1.0 - e) * (h - top - bottom);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{mid}" y="16" text-anchor="middle" font-size="14">batchtok scheduler: predicted efficiency vs cores (model)</text><text x="{mid}" y="{}" text-anchor="middle" font-size="11">1 ms of serial work per worker; {} µs wake-up, {} µs unpark; fan-out {WAKE_FANOUT}; solid: documents, dashed: short items</text>"#,
        top - 2.0,
        WAKE_LATENCY_NS / 1000.0,
        UNPARK_NS / 1000.0,
        mid = (w - right + left) / 2.0,
    );
    for e in [0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 1.0] {
        let _ = writeln!(
            s,
            r##"<line x1="{left}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{e:.1}</text>"##,
            w - right,
            left - 6.0,
            y(e) + 4.0,
            y = y(e)
        );
    }
    for p in CHART_CORES {
        let _ = writeln!(
            s,
            r##"<line x1="{x:.1}" x2="{x:.1}" y1="{top}" y2="{}" stroke="#eee"/><text x="{x:.1}" y="{}" text-anchor="middle">{p}</text>"##,
            h - bottom,
            h - bottom + 16.0,
            x = x(p)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">cores (log scale)</text><text x="16" y="{}" transform="rotate(-90 16 {})" text-anchor="middle">efficiency T1 / (p · Tp)</text>"#,
        (w - right + left) / 2.0,
        h - 12.0,
        h / 2.0,
        h / 2.0
    );
    for (k, (label, color, dash, points)) in series.iter().enumerate() {
        let path: Vec<String> = points
            .iter()
            .map(|&(p, e)| format!("{:.1},{:.1}", x(p), y(e.clamp(0.0, 1.0))))
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/>"#,
            path.join(" ")
        );
        let ly = top + 10.0 + 20.0 * k as f64;
        let _ = writeln!(
            s,
            r#"<line x1="{}" x2="{}" y1="{ly}" y2="{ly}" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/><text x="{}" y="{}">{label}</text>"#,
            w - right + 10.0,
            w - right + 40.0,
            w - right + 46.0,
            ly + 4.0
        );
    }
    s.push_str("</svg>\n");
    s
}

/// Computes every series on `base` and writes the chart.
pub fn write(measured: &[MeasuredWorkload], base: &Machine) {
    let colors = [
        (Policy::Chunked, "#1f77b4"),
        (Policy::Rayon, "#d62728"),
        (Policy::RayonMinLen, "#2ca02c"),
    ];
    let mut series = Vec::new();
    for (k, workload) in measured.iter().take(2).enumerate() {
        let (name, items) = (workload.name, &workload.items);
        let dash = if k == 0 { "" } else { "6 4" };
        let batches: Vec<(usize, Items, (f64, f64))> = CHART_CORES
            .iter()
            .map(|&p| {
                let batch = scaled(items, WORK_PER_WORKER_NS[0] * p as f64);
                let plans = plan_ns(&batch, p);
                (p, batch, plans)
            })
            .collect();
        for (policy, color) in colors {
            let points = batches
                .iter()
                .map(|(p, batch, (plan_now, _))| {
                    let tp = makespan(policy, batch, *p, base, *plan_now);
                    (*p, batch.work_ns() / (*p as f64 * tp))
                })
                .collect();
            series.push((format!("{policy}, {name}"), color, dash, points));
        }
        // Chunked with the per-item planner's time, as a baseline.
        let points = batches
            .iter()
            .map(|(p, batch, (_, plan_before))| {
                let tp = makespan(Policy::Chunked, batch, *p, base, *plan_before);
                (*p, batch.work_ns() / (*p as f64 * tp))
            })
            .collect();
        series.push((
            format!("per-item plan (before), {name}"),
            "#999999",
            dash,
            points,
        ));
    }
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benchmark/results/scheduler-scaling.svg"
    );
    std::fs::write(path, svg(&series)).expect("write the chart");
    println!("\nchart written to {path}");
}
