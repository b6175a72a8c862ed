//! Each stage of the pipeline on its own, against the floor: serde_json
//! into plain typed structs and back, the least any reader and writer of
//! the same bytes must spend.
//!
//! `cargo bench --bench stages`; add `CTXGATE_BENCH_1M=1` for 1M elements.

mod common;

use common::{floor_round_trip, FloorAnswer};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

fn stages(c: &mut Criterion) {
    let limits = ctxgate::Limits::default();
    for n in common::sizes() {
        let bytes = common::input(n);
        let answer = ctxgate::read_conforming(&bytes, &limits).expect("synth conforms");
        let outline = ctxgate::Format::Outline.render(&answer);
        // The floor must give back what it read.
        assert_eq!(
            floor_round_trip(&bytes),
            bytes.strip_suffix(b"\n").unwrap_or(&bytes)
        );

        let mut group = c.benchmark_group(format!("stages/{n}"));
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function("floor: serde typed parse", |b| {
            b.iter(|| serde_json::from_slice::<FloorAnswer>(&bytes).unwrap())
        });
        group.bench_function("floor: serde typed round trip", |b| {
            b.iter(|| floor_round_trip(&bytes))
        });
        group.bench_function("parse (read::read)", |b| {
            b.iter(|| ctxgate::read(&bytes, &limits).unwrap())
        });
        group.bench_function("check", |b| b.iter(|| ctxgate::check(&answer)));
        group.bench_function("render json", |b| {
            b.iter(|| ctxgate::Format::Json.render(&answer))
        });
        group.bench_function("render outline", |b| {
            b.iter(|| ctxgate::Format::Outline.render(&answer))
        });
        #[cfg(feature = "tokens")]
        {
            let tokenizer = bpe_openai::o200k_base();
            group.throughput(Throughput::Bytes(outline.len() as u64));
            group.bench_with_input(
                BenchmarkId::new("count o200k tokens of the outline", outline.len()),
                &outline,
                |b, outline| b.iter(|| tokenizer.count(outline)),
            );
            // The same count over ctxgate's precomputed tables.
            assert_eq!(
                ctxgate::internals::count_o200k(&outline),
                tokenizer.count(&outline)
            );
            group.bench_with_input(
                BenchmarkId::new("count o200k tokens of the outline, ctxgate", outline.len()),
                &outline,
                |b, outline| b.iter(|| ctxgate::internals::count_o200k(outline)),
            );
        }
        let _ = outline;
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = common::criterion();
    targets = stages
}
criterion_main!(benches);
