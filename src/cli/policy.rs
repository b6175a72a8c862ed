//! `ctxgate policy`: check, test, document and preview policies. PATH is a
//! `.rego` file, a directory of them, or `default` (the embedded default
//! policy and, for `test`, its tests); several PATHs are layers, as with
//! `trim --policy`; without PATH, the embedded default.

use std::fmt::Write;

use crate::policy::{self as lib, PolicyFile, TestOutcome};
use clap::{Args, Subcommand};

use super::{write_stdout, Failure, Outcome};

#[derive(Args)]
pub struct PolicyArgs {
    #[command(subcommand)]
    command: PolicyCommand,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum TestFormat {
    Text,
    Json,
}

#[derive(Subcommand)]
enum PolicyCommand {
    /// Parse, compile and lint a policy; run it once on probe elements.
    Check {
        /// `.rego` files, directories or `default`, as layers (default: the embedded default policy).
        paths: Vec<String>,
    },
    /// Run every `test_*` rule of the `*_test.rego` files.
    Test {
        /// `.rego` files, directories or `default`, as layers (default: the embedded default policy and its tests).
        paths: Vec<String>,
        /// Also each test's place and how long it ran.
        #[arg(short, long)]
        verbose: bool,
        /// Only the tests whose name matches this regex.
        #[arg(long, value_name = "REGEX")]
        run: Option<String>,
        /// Report which lines of the policy files the tests evaluated: a
        /// percentage per file and the lines no test reached.
        #[arg(long)]
        coverage: bool,
        /// `text` or `json` (one object: tests, totals, coverage).
        #[arg(long, value_enum, default_value_t = TestFormat::Text)]
        format: TestFormat,
    },
    /// Markdown for a privacy reviewer: rules, floor, patterns, decisions.
    Doc {
        /// `.rego` files, directories or `default`, as layers (default: the embedded default policy).
        paths: Vec<String>,
    },
    /// JSON: the per-request results for an action, and decisions on probe elements.
    Plan {
        /// `.rego` files, directories or `default`, as layers (default: the embedded default policy).
        paths: Vec<String>,
        /// The action (`selection`, `focus`, `window`, `app`, or a host's own word).
        #[arg(long, value_name = "NAME")]
        action: String,
        /// The element id the action names.
        #[arg(long, value_name = "ID")]
        target: Option<String>,
    },
}

pub fn run(args: PolicyArgs) -> Result<Outcome, Failure> {
    match args.command {
        PolicyCommand::Check { paths } => check(&paths),
        PolicyCommand::Test {
            paths,
            verbose,
            run,
            coverage,
            format,
        } => test(&paths, verbose, run.as_deref(), coverage, format),
        PolicyCommand::Doc { paths } => doc(&paths),
        PolicyCommand::Plan {
            paths,
            action,
            target,
        } => plan(&paths, &action, target.as_deref()),
    }
}

/// Each layer's files; no PATH is the embedded default.
fn layers(paths: &[String], tests: bool) -> Result<Vec<Vec<PolicyFile>>, Failure> {
    if paths.is_empty() {
        return Ok(vec![lib::default_files(tests)]);
    }
    paths
        .iter()
        .map(|p| Ok(lib::layer_files(p, tests)?))
        .collect()
}

fn load(paths: &[String]) -> Result<crate::policy::Policy, Failure> {
    if paths.is_empty() {
        return Ok(lib::Policy::embedded_default()?);
    }
    layered(paths, false)
}

/// The gate for `--policy` values: none is the embedded default; each
/// value is a layer ([`lib::layer_files`]).
pub(super) fn gate(layers: &[String]) -> Result<crate::Gate, Failure> {
    if layers.is_empty() {
        return Ok(crate::Gate::embedded_default()?);
    }
    Ok(crate::Gate::new(layered(layers, false)?))
}

/// The policy of layers given as `--policy` values or paths.
fn layered(layers: &[String], tests: bool) -> Result<lib::Policy, Failure> {
    let mut sources = Vec::new();
    for arg in layers {
        let files = lib::layer_files(arg, tests)?;
        sources.push(files.into_iter().map(|f| (f.name, f.source)).collect());
    }
    Ok(lib::Policy::from_layers(sources)?)
}

fn emit(text: &str, outcome: Outcome) -> Result<Outcome, Failure> {
    write_stdout(text.as_bytes())?;
    Ok(outcome)
}

fn check(paths: &[String]) -> Result<Outcome, Failure> {
    let layers = layers(paths, true)?;
    let findings = lib::check_layers(&layers);
    let files = layers.concat();
    let mut out = String::new();
    for finding in &findings {
        let _ = writeln!(out, "{finding}");
    }
    let errors = findings.iter().filter(|f| f.is_error()).count();
    let warnings = findings.len() - errors;
    let _ = writeln!(
        out,
        "{} file{}: {errors} error{}, {warnings} warning{}",
        files.len(),
        plural(files.len()),
        plural(errors),
        plural(warnings)
    );
    emit(
        &out,
        if errors > 0 {
            Outcome::Findings(None)
        } else {
            Outcome::Fine
        },
    )
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn test(
    paths: &[String],
    verbose: bool,
    run: Option<&str>,
    coverage: bool,
    format: TestFormat,
) -> Result<Outcome, Failure> {
    let files = layers(paths, true)?.concat();
    let filtered = run.is_some();
    let run = run
        .map(|r| {
            regex::Regex::new(r)
                .map_err(|e| Failure::usage(format!("`--run` is not a valid regex: {e}")))
        })
        .transpose()?;
    let outcome_of = |results: &[lib::TestResult]| {
        let failed = results
            .iter()
            .filter(|r| r.outcome != TestOutcome::Pass)
            .count();
        if results.is_empty() {
            Outcome::Findings(Some(if filtered {
                "no tests ran: no `test_*` rule of a `*_test.rego` file matches `--run`".to_string()
            } else {
                "no tests ran: no `test_*` rule in a `*_test.rego` file".to_string()
            }))
        } else if failed > 0 {
            Outcome::Findings(None)
        } else {
            Outcome::Fine
        }
    };
    let report = lib::run_tests_with(&files, &lib::TestOptions { run })?;
    let results = &report.results;
    let passed = results
        .iter()
        .filter(|r| r.outcome == TestOutcome::Pass)
        .count();
    let failed = results.len() - passed;
    if format == TestFormat::Json {
        let tests: Vec<serde_json::Value> = results
            .iter()
            .map(|r| {
                let (outcome, message) = match &r.outcome {
                    TestOutcome::Pass => ("pass", None),
                    TestOutcome::Fail => ("fail", None),
                    TestOutcome::Error(m) => ("error", Some(m.clone())),
                };
                let mut test = serde_json::json!({
                    "name": r.name,
                    "file": r.file,
                    "line": r.line,
                    "outcome": outcome,
                    "duration_ms": r.duration.as_secs_f64() * 1000.0,
                    "prints": r.prints,
                });
                if let Some(message) = message {
                    test["message"] = message.into();
                }
                if let Some((line, expression)) = &r.stopped_at {
                    test["stopped_at"] =
                        serde_json::json!({ "line": line, "expression": expression });
                }
                test
            })
            .collect();
        let mut json = serde_json::json!({ "tests": tests, "passed": passed, "failed": failed });
        if coverage {
            json["coverage"] = coverage_json(&report.coverage);
        }
        let mut text = serde_json::to_string_pretty(&json).expect("JSON serializes");
        text.push('\n');
        return emit(&text, outcome_of(results));
    }
    let mut out = String::new();
    for result in results {
        let place = if verbose {
            format!(
                " ({}:{}, {:.1} ms)",
                result.file,
                result.line,
                result.duration.as_secs_f64() * 1000.0
            )
        } else {
            String::new()
        };
        match &result.outcome {
            TestOutcome::Pass => {
                let _ = writeln!(out, "PASS {}{place}", result.name);
            }
            TestOutcome::Fail => {
                let _ = write!(out, "FAIL {}: {}:{}", result.name, result.file, result.line);
                if let Some((line, expression)) = &result.stopped_at {
                    let _ = write!(
                        out,
                        ": false at {}:{line}: `{}`",
                        result.file,
                        one_line(expression)
                    );
                }
                let _ = writeln!(out);
            }
            TestOutcome::Error(message) => {
                let _ = writeln!(out, "ERROR {}: {message}", result.name);
            }
        }
        for print in &result.prints {
            let _ = writeln!(out, "  print {}", one_line(print));
        }
    }
    let _ = writeln!(out, "{passed} passed, {failed} failed");
    if coverage {
        for file in &report.coverage {
            let _ = writeln!(
                out,
                "coverage {}: {:.1}% ({} of {} lines)",
                file.file,
                file.percent(),
                file.covered.len(),
                file.covered.len() + file.not_covered.len()
            );
            if !file.not_covered.is_empty() {
                let _ = writeln!(out, "  not covered: {}", ranges(&file.not_covered));
            }
        }
        let covered: usize = report.coverage.iter().map(|f| f.covered.len()).sum();
        let missed: usize = report.coverage.iter().map(|f| f.not_covered.len()).sum();
        let _ = writeln!(out, "coverage: {:.1}%", lib::percent(covered, missed));
    }
    emit(&out, outcome_of(results))
}

fn coverage_json(files: &[lib::FileCoverage]) -> serde_json::Value {
    let covered: usize = files.iter().map(|f| f.covered.len()).sum();
    let missed: usize = files.iter().map(|f| f.not_covered.len()).sum();
    serde_json::json!({
        "percent": lib::percent(covered, missed),
        "files": files.iter().map(|f| serde_json::json!({
            "file": f.file,
            "percent": f.percent(),
            "covered": f.covered,
            "not_covered": f.not_covered,
        })).collect::<Vec<_>>(),
    })
}

/// `3, 5-7, 10`.
fn ranges(lines: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let mut j = i;
        while j + 1 < lines.len() && lines[j + 1] == lines[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            lines[i].to_string()
        } else {
            format!("{}-{}", lines[i], lines[j])
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// A printed value on one line: controls (newlines, bidi overrides, …)
/// escaped, so that a print cannot pass for a test's result line.
fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control()
            || matches!(c, '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

fn doc(paths: &[String]) -> Result<Outcome, Failure> {
    let policy = load(paths)?;
    emit(&lib::doc_markdown(&policy)?, Outcome::Fine)
}

fn plan(paths: &[String], action: &str, target: Option<&str>) -> Result<Outcome, Failure> {
    let policy = load(paths)?;
    let mut text = serde_json::to_string_pretty(&lib::plan_json(&policy, action, target)?)
        .expect("JSON serializes");
    text.push('\n');
    emit(&text, Outcome::Fine)
}
