//! `ctxgate policy test`: runs a policy's `test_` rules (regorus has no
//! test runner), optionally only those matching `--run`, with regorus's
//! coverage: per test, where a failing test stopped (the last line of its
//! body that was evaluated: a query stops at its first false expression),
//! and over the run, which policy lines no test reached.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

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
    /// The line of the test's head.
    pub line: usize,
    /// For a failed test: the last line of its body that was evaluated
    /// (where the query stopped) and its text, trimmed.
    pub stopped_at: Option<(usize, String)>,
    /// How long it ran.
    pub duration: Duration,
}

/// Which tests to run, and whether to gather coverage.
#[derive(Debug, Clone, Default)]
pub struct TestOptions {
    /// Only tests whose name matches.
    pub run: Option<regex::Regex>,
}

/// The lines of one policy file that the tests run evaluated, and those
/// they did not.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FileCoverage {
    /// The file.
    pub file: String,
    /// Lines evaluated by some test.
    pub covered: Vec<u32>,
    /// Lines that hold an expression no test evaluated.
    pub not_covered: Vec<u32>,
}

impl FileCoverage {
    /// Covered lines as a percentage of the lines that hold expressions.
    pub fn percent(&self) -> f64 {
        percent(self.covered.len(), self.not_covered.len())
    }
}

/// Covered lines as a percentage of all lines with expressions (100 when none).
pub fn percent(covered: usize, not_covered: usize) -> f64 {
    let total = covered + not_covered;
    if total == 0 {
        100.0
    } else {
        covered as f64 * 100.0 / total as f64
    }
}

/// A test run: each test's result and the policy files' coverage.
#[derive(Debug, Clone)]
pub struct TestRun {
    /// Per test, in file and line order.
    pub results: Vec<TestResult>,
    /// Per policy file (test files excepted), in name order.
    pub coverage: Vec<FileCoverage>,
}

/// Runs every `test_*` rule defined in a `*_test.rego` file of `files`
/// (policy and test files together), in file and line order, as `options`
/// say; with the coverage of the policy files.
pub fn run_tests_with(files: &[PolicyFile], options: &TestOptions) -> Result<TestRun> {
    let (mut engine, _, heads) = compile_with_heads(files, false)?;
    engine.set_enable_coverage(true);
    let mut results: Vec<TestResult> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut covered: BTreeMap<String, BTreeSet<u32>> = BTreeMap::new();
    let mut not_covered: BTreeMap<String, BTreeSet<u32>> = BTreeMap::new();
    for (index, head) in heads.iter().enumerate() {
        let name = head.name().to_string();
        if !name.starts_with("test_")
            || !crate::policy::source::is_test_name(&head.file)
            || options.run.as_ref().is_some_and(|r| !r.is_match(&name))
            || !seen.insert(head.path.clone())
        {
            continue;
        }
        let mut engine = engine.clone();
        let start = Instant::now();
        let result = engine.eval_rule(head.path.clone());
        let duration = start.elapsed();
        let prints = engine.take_prints().unwrap_or_default();
        // The test's body: from its head to the next head of its file.
        let end = heads[index + 1..]
            .iter()
            .find(|h| h.file == head.file)
            .map_or(usize::MAX, |h| h.line);
        let mut stopped = None;
        if let Ok(report) = engine.get_coverage_report() {
            for file in report.files {
                if file.path == head.file {
                    stopped = file
                        .covered
                        .iter()
                        .copied()
                        .filter(|&l| l as usize > head.line && (l as usize) < end)
                        .max();
                }
                if crate::policy::source::is_test_name(&file.path) {
                    continue;
                }
                covered
                    .entry(file.path.clone())
                    .or_default()
                    .extend(file.covered);
                not_covered
                    .entry(file.path)
                    .or_default()
                    .extend(file.not_covered);
            }
        }
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
        let stopped_at = match outcome {
            TestOutcome::Fail => {
                let source = files.iter().find(|f| f.name == head.file);
                stopped.or(Some(head.line as u32)).and_then(|l| {
                    let text = source?.source.lines().nth(l as usize - 1)?;
                    Some((l as usize, text.trim().to_string()))
                })
            }
            _ => None,
        };
        results.push(TestResult {
            name,
            file: head.file.clone(),
            outcome,
            prints,
            line: head.line,
            stopped_at,
            duration,
        });
    }
    let coverage = not_covered
        .into_iter()
        .map(|(file, missed)| {
            let hit = covered.remove(&file).unwrap_or_default();
            FileCoverage {
                file,
                not_covered: missed.difference(&hit).copied().collect(),
                covered: hit.into_iter().collect(),
            }
        })
        .collect();
    Ok(TestRun { results, coverage })
}

/// The embedded default policy's files: `<default>`, and
/// with `tests` also `<default-tests>`.
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
