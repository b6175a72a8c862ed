//! End to end, as a host calls it: `Gate::trim_bytes` from the provider's
//! bytes to the bytes to send, for each action, with a byte and a token
//! budget, next to the floor (serde_json typed parse and serialize of the
//! same bytes). The gate is built once and kept, as a host keeps it: its
//! decision cache is warm after the first iteration (see `policy` for cold).
//!
//! `cargo bench --bench end_to_end`; add `CTXGATE_BENCH_1M=1` for 1M elements.

mod common;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ctxgate::{Budget, Gate, Request};

/// What a 8,000-token context holds, give or take, in each unit.
pub const BUDGETS: [(&str, Budget); 2] = [
    ("32000 bytes", Budget::Bytes(32_000)),
    ("8000 tokens", Budget::Tokens(8_000)),
];

fn end_to_end(c: &mut Criterion) {
    let gate = Gate::embedded_default().expect("the default policy loads");
    for n in common::sizes() {
        let bytes = common::input(n);
        let mut group = c.benchmark_group(format!("end_to_end/{n}"));
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function("floor: serde typed round trip", |b| {
            b.iter(|| common::floor_round_trip(&bytes))
        });
        for action in ["selection", "focus", "window", "app"] {
            for (name, budget) in BUDGETS {
                let request = Request::new(action).budget(budget);
                let out = gate.trim_bytes(&bytes, &request).expect("trims");
                assert!(!out.rendered.is_empty());
                group.bench_function(format!("{action}, {name}"), |b| {
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
    targets = end_to_end
}
criterion_main!(benches);
