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
        PolicyCommand::Test { paths } => test(&paths),
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

fn test(paths: &[String]) -> Result<Outcome, Failure> {
    let files = layers(paths, true)?.concat();
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
