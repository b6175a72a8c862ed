//! `ctxgate policy`: check, test, document and preview policies. PATH is a
//! `.rego` file or a directory of them; without PATH, the embedded default
//! policy (and, for `test`, its embedded tests).

use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::policy::{self as lib, PolicyFile, TestOutcome};
use clap::{Args, Subcommand};

use super::{write_stdout, Failure, Outcome};

#[derive(Args)]
pub struct PolicyArgs {
    #[command(subcommand)]
    command: PolicyCommand,
}

#[derive(Subcommand)]
enum PolicyCommand {
    /// Parse, compile and lint a policy; run it once on probe elements.
    Check {
        /// A `.rego` file or a directory (default: the embedded default policy).
        path: Option<PathBuf>,
    },
    /// Run every `test_*` rule of the `*_test.rego` files.
    Test {
        /// A `.rego` file or a directory (default: the embedded default policy and its tests).
        path: Option<PathBuf>,
    },
    /// Markdown for a privacy reviewer: rules, floor, patterns, decisions.
    Doc {
        /// A `.rego` file or a directory (default: the embedded default policy).
        path: Option<PathBuf>,
    },
    /// JSON: the per-request results for an action, and decisions on probe elements.
    Plan {
        /// A `.rego` file or a directory (default: the embedded default policy).
        path: Option<PathBuf>,
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
        PolicyCommand::Check { path } => check(path.as_deref()),
        PolicyCommand::Test { path } => test(path.as_deref()),
        PolicyCommand::Doc { path } => doc(path.as_deref()),
        PolicyCommand::Plan {
            path,
            action,
            target,
        } => plan(path.as_deref(), &action, target.as_deref()),
    }
}

fn files(path: Option<&Path>, tests: bool) -> Result<Vec<PolicyFile>, Failure> {
    match path {
        None => Ok(lib::default_files(tests)),
        Some(path) => Ok(lib::load_path(path, tests)?),
    }
}

fn load(path: Option<&Path>) -> Result<crate::policy::Policy, Failure> {
    let files = files(path, false)?;
    Ok(lib::Policy::from_sources(
        files.into_iter().map(|f| (f.name, f.source)).collect(),
    )?)
}

fn emit(text: &str, outcome: Outcome) -> Result<Outcome, Failure> {
    write_stdout(text.as_bytes())?;
    Ok(outcome)
}

fn check(path: Option<&Path>) -> Result<Outcome, Failure> {
    let files = files(path, true)?;
    let findings = lib::check_sources(&files);
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

fn test(path: Option<&Path>) -> Result<Outcome, Failure> {
    let files = files(path, true)?;
    let results = lib::run_tests(&files)?;
    let mut out = String::new();
    let mut passed = 0;
    for result in &results {
        match &result.outcome {
            TestOutcome::Pass => {
                passed += 1;
                let _ = writeln!(out, "PASS {}", result.name);
            }
            TestOutcome::Fail => {
                let _ = writeln!(out, "FAIL {}", result.name);
            }
            TestOutcome::Error(message) => {
                let _ = writeln!(out, "ERROR {}: {message}", result.name);
            }
        }
        for print in &result.prints {
            let _ = writeln!(out, "  print {}", one_line(print));
        }
    }
    let failed = results.len() - passed;
    let _ = writeln!(out, "{passed} passed, {failed} failed");
    let outcome = if results.is_empty() {
        Outcome::Findings(Some(
            "no tests ran: no `test_*` rule in a `*_test.rego` file".to_string(),
        ))
    } else if failed > 0 {
        Outcome::Findings(None)
    } else {
        Outcome::Fine
    };
    emit(&out, outcome)
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

fn doc(path: Option<&Path>) -> Result<Outcome, Failure> {
    let policy = load(path)?;
    emit(&lib::doc_markdown(&policy)?, Outcome::Fine)
}

fn plan(path: Option<&Path>, action: &str, target: Option<&str>) -> Result<Outcome, Failure> {
    let policy = load(path)?;
    let mut text = serde_json::to_string_pretty(&lib::plan_json(&policy, action, target)?)
        .expect("JSON serializes");
    text.push('\n');
    emit(&text, Outcome::Fine)
}
