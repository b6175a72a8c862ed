//! Tests of the machinery behind the public API, which need the crate's
//! private items: the policy engine (evaluators, plans, the floor, the
//! caches), the data-driven policy cases, and trimming with a test's own
//! decider. Like every unit test, they may use any layer.

mod canonical;
mod harness;
mod patterns;
mod policy_cases;
mod policy_engine;
pub(crate) mod trim_properties;

include!("../../tests/common/with_logs.rs");

/// `full` when `CTXGATE_SLOW_TESTS=1` (which `.ci/run` sets), else
/// `quick`: how many generated cases a slow property runs, so that the
/// README's `cargo test` stays within minutes and CI runs every case.
pub(crate) fn cases(full: usize, quick: usize) -> usize {
    match std::env::var("CTXGATE_SLOW_TESTS").as_deref() {
        Ok("1") => full,
        _ => quick,
    }
}
