//! `ctxgate check`: conformance findings, human-readable or JSON.

use std::fmt::Write;
use std::path::PathBuf;

use clap::Args;

use super::{read_input, write_stdout, Failure, Outcome, ReadLimitArgs};

#[derive(Args)]
pub struct CheckArgs {
    /// The answer to check (`-` or nothing: standard input).
    file: Option<PathBuf>,
    /// Print the findings as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    limits: ReadLimitArgs,
}

pub fn run(args: CheckArgs) -> Result<Outcome, Failure> {
    let bytes = read_input(args.file.as_deref())?;
    let report = crate::check_bytes(&bytes, &args.limits.limits())?;
    let text = if args.json {
        let mut text = serde_json::to_string_pretty(&report).expect("a report serializes");
        text.push('\n');
        text
    } else {
        human(&report)
    };
    write_stdout(text.as_bytes())?;
    Ok(if report.conforms {
        Outcome::Fine
    } else {
        Outcome::Findings(None)
    })
}

fn human(report: &crate::CheckReport) -> String {
    let mut out = String::new();
    for finding in &report.findings {
        let _ = writeln!(out, "{finding}");
    }
    let errors = report.findings.iter().filter(|f| f.is_error()).count();
    let warnings = report.findings.len() - errors;
    let upgraded = match &report.upgraded_from {
        Some(version) => format!(" (upgraded from {version})"),
        None => String::new(),
    };
    let verdict = if report.conforms {
        "conforms"
    } else {
        "does not conform"
    };
    let _ = writeln!(
        out,
        "{verdict}: {} elements{upgraded}, {errors} errors, {warnings} warnings",
        report.elements
    );
    out
}
