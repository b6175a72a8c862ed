//! The request hosts make most, on real trees: `Gate::trim_bytes` of each
//! real tree of `tests/fixtures/` (`common::real_trees`) for `selection`,
//! `focus`, `window` and `app` at 500, 2,000 and 8,000 tokens (the last is
//! the default policy's own budget: the request sets none), beside
//! `check_bytes` of the same bytes and the serde floor. The gate is built
//! once and kept warm, as a host keeps it.
//!
//! `cargo bench --bench real_trees`; `cargo run --release --example
//! real_trees` prints the same requests' medians as BENCHMARKS.md's first
//! tables, each as a ratio to `check` and to the floor of the same run.

mod common;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ctxgate::{Budget, Gate, Limits, Request};

fn real_trees(c: &mut Criterion) {
    let gate = Gate::embedded_default().expect("the default policy loads");
    gate.warm_up();
    Gate::warm_up_tokens();
    let limits = Limits::default();
    for (name, bytes) in common::real_trees() {
        let mut group = c.benchmark_group(format!("real_trees/{name}"));
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function("check", |b| {
            b.iter(|| ctxgate::check_bytes(&bytes, &limits).unwrap())
        });
        group.bench_function("floor: serde typed round trip", |b| {
            b.iter(|| common::floor_round_trip(&bytes))
        });
        for action in ["selection", "focus", "window", "app"] {
            for tokens in [Some(500), Some(2_000), None] {
                let request = match tokens {
                    Some(n) => Request::new(action).budget(Budget::Tokens(n)),
                    None => Request::new(action),
                };
                gate.trim_bytes(&bytes, &request).expect("trims");
                let label = match tokens {
                    Some(n) => format!("{action}, {n} tokens"),
                    None => format!("{action}, the policy's 8000 tokens"),
                };
                group.bench_function(label, |b| {
                    b.iter(|| gate.trim_bytes(&bytes, &request).unwrap())
                });
            }
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = common::criterion();
    targets = real_trees
}
criterion_main!(benches);
