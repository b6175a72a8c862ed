//! Inputs shared by the benches, built once, outside any timed closure:
//! synthetic answers (`ctxgate::synth`) of 1k, 10k and 100k elements, and
//! 1M when `CTXGATE_BENCH_1M=1` (it takes minutes and ~1 GB).

#![allow(dead_code)]

use std::time::Duration;

use criterion::Criterion;

/// The seed every bench uses, so figures are comparable across benches.
pub const SEED: u64 = 1;

/// The sizes to measure, in elements.
pub fn sizes() -> Vec<usize> {
    let mut sizes = vec![1_000, 10_000, 100_000];
    if std::env::var("CTXGATE_BENCH_1M").is_ok_and(|v| v == "1") {
        sizes.push(1_000_000);
    }
    sizes
}

/// A synthetic answer's compact JSON.
pub fn input(elements: usize) -> Vec<u8> {
    ctxgate::render::json(&ctxgate::synth::synth(elements, SEED)).into_bytes()
}

/// Short runs: the machine is shared. Large inputs get the fewest samples
/// criterion allows.
pub fn criterion() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(10)
        .configure_from_args()
}
