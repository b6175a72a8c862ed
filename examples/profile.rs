//! Runs `Gate::trim_bytes` on one file N times with the embedded default
//! policy and an 8,000-token budget (or TOKENS, a fourth argument), for
//! instruction counts that are repeatable on a noisy machine
//! (BENCHMARKS.md):
//!
//! ```sh
//! cargo build --release --example profile
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/profile FILE ACTION 2 [TOKENS]  # minus the same with 1
//! ```
//!
//! The difference between two runs and one is one warm request, as a host
//! that keeps its `Gate` pays it. ACTION `floor` runs the benches' floor
//! instead: serde_json's typed parse and serialize of the same bytes;
//! `value-floor` parses into `serde_json::Value` and serializes it (on a
//! stack grown as needed, and not freed: the hostile shapes' floor, for
//! bytes the typed floor cannot read, BENCHMARKS.md "Hostile shapes");
//! `tokens` only tokenizes them (serde's `IgnoredAny`: what any reader
//! built on serde_json pays, BENCHMARKS.md "Synthetic trees against the serde floor");
//! `check` runs `check_bytes` on them.

#[path = "../benches/common/mod.rs"]
mod common;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (path, action, runs, tokens) = match args.as_slice() {
        [path, action, runs] => (path, action, runs, 8000),
        [path, action, runs, tokens] => (
            path,
            action,
            runs,
            tokens.parse().expect("TOKENS is a number"),
        ),
        _ => {
            eprintln!("usage: profile FILE ACTION RUNS [TOKENS]");
            std::process::exit(2);
        }
    };
    let runs: usize = runs.parse().expect("RUNS is a number");
    let bytes = std::fs::read(path).expect("FILE is readable");
    if action == "value-floor" {
        for _ in 0..runs {
            // 100,000 levels deep: the parse, serialize and drop of a
            // `Value` recurse, so all three run on a grown stack.
            stacker::grow(1 << 30, || {
                let mut de = serde_json::Deserializer::from_slice(&bytes);
                de.disable_recursion_limit();
                let value: serde_json::Value =
                    serde::Deserialize::deserialize(&mut de).expect("FILE is JSON");
                let out = serde_json::to_vec(&value).expect("a value serializes");
                std::hint::black_box(&out);
                drop(value);
            });
        }
        return;
    }
    if action == "tokens" {
        // serde_json's tokenizing alone (every value skipped, strings
        // borrowed and validated): what any serde_json reader pays.
        for _ in 0..runs {
            let mut de = serde_json::Deserializer::from_slice(&bytes);
            de.disable_recursion_limit();
            let ignored: serde::de::IgnoredAny =
                stacker::grow(1 << 30, || serde::Deserialize::deserialize(&mut de))
                    .expect("FILE is JSON");
            std::hint::black_box(ignored);
        }
        return;
    }
    if action == "check" {
        // `check_bytes` of the same bytes: the yardstick of the real-tree
        // tables (BENCHMARKS.md).
        let limits = ctxgate::Limits::default();
        for _ in 0..runs {
            std::hint::black_box(ctxgate::check_bytes(&bytes, &limits).expect("FILE reads"));
        }
        return;
    }
    if action == "floor" {
        for _ in 0..runs {
            std::hint::black_box(common::floor_round_trip(&bytes));
        }
        return;
    }
    let gate = ctxgate::Gate::embedded_default().expect("the default policy compiles");
    gate.warm_up();
    let request = ctxgate::Request::new(action.as_str())
        .budget(ctxgate::Budget::Tokens(tokens))
        // Under valgrind a request runs ~50 times slower than the
        // default deadline assumes; the count, not the clock, matters.
        .timeout(std::time::Duration::from_secs(3600));
    for _ in 0..runs {
        let out = gate
            .trim_bytes(&bytes, &request)
            .expect("the request succeeds");
        std::hint::black_box(&out);
    }
}
