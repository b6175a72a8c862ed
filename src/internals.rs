//! Machinery for the benches and fuzz targets that time or drive one stage
//! on its own (plan, decide, count, render). Not part of the API: it exists
//! only with the non-default `internals` feature, which the crate's own
//! dev-dependency on itself turns on for tests, benches and examples.
//! Nothing here takes a caller's own plan or decider and produces output
//! to send: trimming is only `Gate`'s, which applies its policy's plan,
//! redaction, scope and the floor.
//!
//! Tests use the public API, the `ctxgate` binary, or live in `src/` as
//! unit tests; the exceptions are the gate's property tests and the outline
//! round trip, which measure stages against each other.

use std::sync::Arc;

use crate::error::Result;
pub use crate::policy::{
    Decision, ElementInput, Evaluator, Inside, Redaction, RequestInput, RequestPlan,
};
pub use crate::render::{json, json_element_fragment, outline, outline_element_fragment};
#[cfg(feature = "tokens")]
pub use crate::tokens::count_o200k;
pub use crate::trim::{request_input, with_projections};
use crate::Policy;

/// The per-request plan the policy returns for `request` (cached across
/// requests, as a `Gate` uses it).
pub fn plan(policy: &Policy, request: &RequestInput) -> Result<Arc<RequestPlan>> {
    policy.plan(request)
}

/// A per-request handle for element decisions (an app without a title).
pub fn evaluator<'p>(policy: &'p Policy, request: &RequestInput) -> Result<Evaluator<'p>> {
    policy.evaluator(request)
}
