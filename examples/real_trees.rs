//! The request hosts make most, on real trees, warm: `Gate::trim_bytes` of
//! each real tree of `tests/fixtures/` (`benches/common`'s `real_trees`)
//! for `selection`, `focus`, `window` and `app` at 500, 2,000 and 8,000
//! tokens (the last is the default policy's own budget: the request sets
//! none), beside `check_bytes` of the same bytes and the serde floor
//! (serde_json's typed parse and serialize), all in one run.
//!
//! ```sh
//! cargo run --release --example real_trees               # BENCHMARKS.md's first tables
//! RUNS=400 ONLY=window cargo run --release --example real_trees
//! ```
//!
//! Each of `RUNS` rounds (default 200) times one call of every request of
//! a tree, in turn, so that the machine's load falls on all of them alike;
//! the figures are the medians (p50) of the rounds. A cell's `*` marks a
//! budget that binds (the output leaves something out for it).

#[path = "../benches/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use ctxgate::{Budget, Gate, Limits, Outcome, Request};

const ACTIONS: [&str; 4] = ["selection", "focus", "window", "app"];
/// Request budgets in tokens; `None`: the policy's (8,000 tokens).
const BUDGETS: [Option<usize>; 3] = [Some(500), Some(2_000), None];

struct Row {
    name: String,
    elements: usize,
    check: f64,
    floor: f64,
    /// Per action, per budget: the p50 and whether the budget binds.
    trims: Vec<Vec<(f64, bool)>>,
}

fn median(mut times: Vec<Duration>) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1e6
}

fn main() {
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(200);
    let only = std::env::var("ONLY").ok();
    let actions: Vec<&str> = ACTIONS
        .into_iter()
        .filter(|a| only.as_deref().is_none_or(|o| o == *a))
        .collect();
    let gate = Gate::embedded_default().expect("the default policy loads");
    gate.warm_up();
    Gate::warm_up_tokens();
    let limits = Limits::default();
    let mut rows = Vec::new();
    for (name, bytes) in common::real_trees() {
        let requests: Vec<Vec<Request>> = actions
            .iter()
            .map(|&action| {
                BUDGETS
                    .iter()
                    .map(|budget| {
                        let request = Request::new(action);
                        match budget {
                            Some(n) => request.budget(Budget::Tokens(*n)),
                            None => request,
                        }
                    })
                    .collect()
            })
            .collect();
        let binds: Vec<Vec<bool>> = requests
            .iter()
            .map(|row| {
                row.iter()
                    .map(|request| {
                        let out = gate.trim_bytes(&bytes, request).expect("it trims");
                        [Outcome::Budget, Outcome::Cut, Outcome::Placeholder]
                            .iter()
                            .any(|o| out.report.outcomes.get(o).is_some_and(|&n| n > 0))
                    })
                    .collect()
            })
            .collect();
        let mut check = Vec::with_capacity(runs);
        let mut floor = Vec::with_capacity(runs);
        let mut trims = vec![vec![Vec::with_capacity(runs); BUDGETS.len()]; actions.len()];
        for _ in 0..runs {
            let start = Instant::now();
            std::hint::black_box(ctxgate::check_bytes(&bytes, &limits).expect("it reads"));
            check.push(start.elapsed());
            let start = Instant::now();
            std::hint::black_box(common::floor_round_trip(&bytes));
            floor.push(start.elapsed());
            for (a, row) in requests.iter().enumerate() {
                for (b, request) in row.iter().enumerate() {
                    let start = Instant::now();
                    std::hint::black_box(gate.trim_bytes(&bytes, request).expect("it trims"));
                    trims[a][b].push(start.elapsed());
                }
            }
        }
        let trims = trims
            .into_iter()
            .zip(&binds)
            .map(|(row, binds)| {
                row.into_iter()
                    .zip(binds)
                    .map(|(times, &binds)| (median(times), binds))
                    .collect()
            })
            .collect();
        rows.push(Row {
            elements: common::elements(&bytes),
            name,
            check: median(check),
            floor: median(floor),
            trims,
        });
    }

    let window = actions.iter().position(|&a| a == "window");
    println!("p50 of {runs} warm calls, µs; ratios to `check_bytes` of the same bytes\n");
    println!("| tree | elements | `check` | floor | `window`, 2,000 tokens | ÷ `check` | `window`, policy's 8,000 | ÷ `check` |");
    println!("|---|---|---|---|---|---|---|---|");
    for row in &rows {
        let (w2000, w8000) = match window {
            Some(w) => (row.trims[w][1], row.trims[w][2]),
            None => ((f64::NAN, false), (f64::NAN, false)),
        };
        let star = |binds: bool| if binds { "*" } else { "" };
        println!(
            "| {} | {} | {:.0} | {:.0} | {:.0}{} | {:.2}× | {:.0}{} | {:.2}× |",
            row.name,
            row.elements,
            row.check,
            row.floor,
            w2000.0,
            star(w2000.1),
            w2000.0 / row.check,
            w8000.0,
            star(w8000.1),
            w8000.0 / row.check,
        );
    }
    println!("\n÷ `check` / ÷ floor, same run; `*`: the budget binds\n");
    println!("| tree | tokens | {} |", actions.join(" | "));
    println!("|---|---|{}", "---|".repeat(actions.len()));
    for row in &rows {
        for (b, budget) in BUDGETS.iter().enumerate() {
            let cells: Vec<String> = row
                .trims
                .iter()
                .map(|by_budget| {
                    let (t, binds) = by_budget[b];
                    let star = if binds { "*" } else { "" };
                    format!("{:.1} / {:.1}{star}", t / row.check, t / row.floor)
                })
                .collect();
            let budget = budget.map_or("policy's 8,000".to_string(), |n| n.to_string());
            println!("| {} | {budget} | {} |", row.name, cells.join(" | "));
        }
    }
}
