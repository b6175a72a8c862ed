//! The authoring tools around a policy, for `ctxgate policy
//! test|doc|plan|diff`: `# METADATA` comments ([`rule_docs`]), the test
//! runner, the reviewer's doc and the diff, which explores the input space
//! the rules of two policies can tell apart (`space`, on regorus's parsed
//! modules). Nothing in a request's path uses them; they use the runtime
//! (load, lint, probes, plan, decide) as a host would. The lint and the
//! probe set are the runtime's (`policy::lint`, `policy::probes`): what
//! `policy check` calls an error also refuses the policy at load.

mod diff;
mod doc;
mod metadata;
mod space;
mod test;

pub use crate::policy::probes::ACTIONS;

/// The action words `policy`'s rules compare `input.action.name` with
/// (read from its parsed modules), sorted: the built-in four it names and
/// any of the host's own.
pub fn action_words(policy: &crate::policy::Policy) -> std::collections::BTreeSet<String> {
    let mut reads = space::Reads::default();
    let files: Vec<&crate::policy::PolicyFile> = policy.files().iter().collect();
    space::reads(&files, &mut reads);
    reads.strings(&space::Leaf::Action)
}
pub use diff::diff_policies;
pub use doc::{doc_markdown, plan_json};
pub use test::{
    default_files, percent, run_tests_with, FileCoverage, TestOptions, TestOutcome, TestResult,
};
