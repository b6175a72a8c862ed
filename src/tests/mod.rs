//! Tests of the machinery behind the public API, which need the crate's
//! private items: the policy engine (evaluators, plans, the floor, the
//! caches), the data-driven policy cases, and trimming with a test's own
//! decider. They lived in `tests/` until the modules became private
//! (issue 13); like every unit test, they may use any layer.

mod canonical;
mod harness;
mod patterns;
mod policy_cases;
mod policy_engine;
mod policy_rvm;

include!("../../tests/common/with_logs.rs");
