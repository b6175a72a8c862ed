//! `ctxgate policy test`: runs a policy's `test_` rules (regorus has no
//! test runner).

use crate::error::Result;
use crate::policy::engine::compile_with_heads;
use crate::policy::source::{split_regorus_error, PolicyFile};

/// How one test ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestOutcome {
    /// The rule was true.
    Pass,
    /// The rule was false or undefined.
    Fail,
    /// The rule could not be evaluated.
    Error(String),
}

/// One `test_*` rule's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestResult {
    /// The rule's name (`test_…`).
    pub name: String,
    /// Its file.
    pub file: String,
    /// How it ended.
    pub outcome: TestOutcome,
    /// What the test's `print()` calls wrote, in order, each as
    /// `file:line: text` (during `trim`, prints are dropped; here they are
    /// the author's to read).
    pub prints: Vec<String>,
}

/// Runs every `test_*` rule defined in a `*_test.rego` file of `files`
/// (policy and test files together), in file and line order.
pub fn run_tests(files: &[PolicyFile]) -> Result<Vec<TestResult>> {
    let (engine, _, heads) = compile_with_heads(files, false)?;
    let mut results: Vec<TestResult> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for head in heads {
        let name = head.name().to_string();
        if !name.starts_with("test_")
            || !crate::policy::source::is_test_name(&head.file)
            || !seen.insert(head.path.clone())
        {
            continue;
        }
        let mut engine = engine.clone();
        let result = engine.eval_rule(head.path.clone());
        let prints = engine.take_prints().unwrap_or_default();
        let outcome = match result {
            Ok(regorus::Value::Bool(true)) => TestOutcome::Pass,
            Ok(_) => TestOutcome::Fail,
            Err(e) => {
                let (location, message) = split_regorus_error(&e);
                TestOutcome::Error(match location {
                    Some(l) => format!("{l}: {message}"),
                    None => message,
                })
            }
        };
        results.push(TestResult {
            name,
            file: head.file.clone(),
            outcome,
            prints,
        });
    }
    Ok(results)
}

/// The embedded default policy's files: `policies/default.rego`, and
/// with `tests` also `policies/default_test.rego`.
pub fn default_files(tests: bool) -> Vec<PolicyFile> {
    let mut files = vec![
        PolicyFile {
            name: crate::policy::engine::DEFAULT_NAME.to_string(),
            source: crate::policy::engine::DEFAULT_SOURCE.to_string(),
        },
        PolicyFile {
            name: crate::policy::engine::DEFAULT_TEST_NAME.to_string(),
            source: crate::policy::engine::DEFAULT_TEST_SOURCE.to_string(),
        },
    ];
    if !tests {
        files.pop();
    }
    files
}
