//! The authoring tools around a policy, for `ctxgate policy
//! check|test|doc|plan`: lint ([`check_sources`]), `# METADATA` comments
//! ([`metadata::rule_docs`]), the probe set, the test runner and the reviewer's doc.
//! Nothing in a request's path uses them; they use the runtime (load, plan,
//! decide) as a host would.

mod doc;
mod lint;
mod metadata;
mod probes;
mod test;

pub use doc::{doc_markdown, plan_json};
pub use lint::check_sources;
pub use test::{default_files, run_tests, TestOutcome};
