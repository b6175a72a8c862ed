//! The Rust side of `bench/bench.py`: one warm request through the library's
//! public API (`Gate::trim_bytes`, the gate built once and warmed, as a host
//! keeps it), timed per request on the same trees and requests as the
//! Python package. Prints one tab-separated line per tree and request:
//! `file  action  format  budget  median_us  min_us` (the least time is what
//! a loaded machine's noise touches least).
//!
//! ```sh
//! cd bindings/python && cargo build --release --example warm_request
//! target/release/examples/warm_request RUNS FILE...
//! ```
//!
//! `--only ACTION` before RUNS keeps one of the two requests: with RUNS 1
//! and 2 under callgrind, the difference is one warm request's
//! instructions (BENCHMARKS.md, "Python").

use std::time::{Duration, Instant};

use ctxgate::{Budget, Format, Gate, Request};

/// The requests `bench/bench.py` times (keep the two lists equal).
const REQUESTS: [(&str, Format, &str, Budget); 2] = [
    (
        "selection",
        Format::Outline,
        "tokens:2000",
        Budget::Tokens(2000),
    ),
    ("app", Format::Json, "tokens:4000", Budget::Tokens(4000)),
];

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let only = match args.first().map(String::as_str) {
        Some("--only") if args.len() > 1 => {
            let action = args.remove(1);
            args.remove(0);
            Some(action)
        }
        _ => None,
    };
    let Some((runs, files)) = args.split_first() else {
        eprintln!("usage: warm_request [--only ACTION] RUNS FILE...");
        std::process::exit(2);
    };
    let runs: usize = runs.parse().expect("RUNS is a number");
    let gate = Gate::embedded_default().expect("the default policy compiles");
    gate.warm_up();
    for file in files {
        let bytes = std::fs::read(file).expect("FILE is readable");
        for (action, format, budget_name, budget) in REQUESTS {
            if only.as_ref().is_some_and(|only| only != action) {
                continue;
            }
            let request = Request::new(action)
                .format(format)
                .budget(budget)
                .timeout(Duration::from_secs(60));
            for _ in 0..3 {
                std::hint::black_box(
                    gate.trim_bytes(&bytes, &request)
                        .expect("the request succeeds"),
                );
            }
            let mut times: Vec<Duration> = (0..runs)
                .map(|_| {
                    let start = Instant::now();
                    let out = gate
                        .trim_bytes(&bytes, &request)
                        .expect("the request succeeds");
                    std::hint::black_box(&out);
                    drop(out);
                    start.elapsed()
                })
                .collect();
            times.sort();
            let median = times[times.len() / 2];
            let format = match format {
                Format::Json => "json",
                _ => "outline",
            };
            println!(
                "{file}\t{action}\t{format}\t{budget_name}\t{:.1}\t{:.1}",
                median.as_secs_f64() * 1e6,
                times[0].as_secs_f64() * 1e6
            );
        }
    }
}
