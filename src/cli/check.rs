//! `ctxgate check`: conformance findings, human-readable or JSON.

use std::fmt::Write;
use std::path::PathBuf;

use clap::Args;

use super::{read_input, write_stdout, LimitArgs, Outcome};

#[derive(Args)]
pub struct CheckArgs {
    /// The answer to check (`-` or nothing: standard input).
    file: Option<PathBuf>,
    /// Print the findings as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    limits: LimitArgs,
}

pub fn run(args: CheckArgs) -> Outcome {
    let bytes = match read_input(args.file.as_deref()) {
        Ok(bytes) => bytes,
        Err(message) => return Outcome::Failed(message),
    };
    let report = match ctxgate::check_bytes(&bytes, &args.limits.limits()) {
        Ok(report) => report,
        // Not JSON at all: unreadable (2). Over a limit: judged and rejected (1).
        Err(err @ ctxgate::Error::Json { .. }) => return Outcome::Failed(format!("{err:#}")),
        Err(err) => return Outcome::Rejected(Some(format!("{err:#}"))),
    };
    let text = if args.json {
        let mut text = serde_json::to_string_pretty(&report).expect("a report serializes");
        text.push('\n');
        text
    } else {
        human(&report)
    };
    if let Err(message) = write_stdout(text.as_bytes()) {
        return Outcome::Failed(message);
    }
    if report.conforms {
        Outcome::Fine
    } else {
        Outcome::Rejected(None)
    }
}

fn human(report: &ctxgate::CheckReport) -> String {
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
