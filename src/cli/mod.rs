//! Command-line interface: clap → library → output → exit code.
//!
//! Exit codes, for every subcommand: 0 = fine; 1 = the input was judged and
//! found wanting (does not conform, over a limit, findings, failures,
//! budget unreachable); 2 = usage, I/O or policy error. Errors go to stderr
//! as `error: …`. `trim` and `import` write nothing to stdout on a non-zero
//! exit; `check` and `policy` print their findings there, as their output.

mod check;
mod import;
mod policy;
mod synth;
mod trim;

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

/// ctxgate: trims an app's element tree to what a user's action warrants
/// before it is sent to an AI agent.
#[derive(Parser)]
#[command(name = "ctxgate", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Trim an answer to what the action warrants, under a policy and a budget (the main job).
    Trim(trim::TrimArgs),
    /// Check that an answer conforms to protocol 0.2.0 (0.1 answers are upgraded first).
    Check(check::CheckArgs),
    /// Import an OS accessibility tree (Chromium AX dump, macOS AX JSON, AT-SPI, UIA, Playwright ARIA) as a 0.2.0 answer.
    Import(import::ImportArgs),
    /// Check, test, document and preview policies.
    Policy(policy::PolicyArgs),
    /// Generate a realistic 0.2.0 answer of N elements, deterministic for a seed.
    Synth(synth::SynthArgs),
}

/// Limits on what is read; defaults in the README.
#[derive(Args, Clone, Copy)]
pub struct LimitArgs {
    /// Largest input in bytes.
    #[arg(long, value_name = "N", default_value_t = ctxgate::Limits::DEFAULT.max_input_bytes)]
    pub max_input_bytes: usize,
    /// Most elements in one tree.
    #[arg(long, value_name = "N", default_value_t = ctxgate::Limits::DEFAULT.max_elements)]
    pub max_elements: usize,
    /// Deepest tree, in elements (the root is 1).
    #[arg(long, value_name = "N", default_value_t = ctxgate::Limits::DEFAULT.max_depth)]
    pub max_depth: usize,
    /// Most bytes of title, url and content in one element.
    #[arg(long, value_name = "N", default_value_t = ctxgate::Limits::DEFAULT.max_content_bytes)]
    pub max_content_bytes: usize,
    /// Most distinct element projections the policy decides in one request.
    #[arg(long, value_name = "N", default_value_t = ctxgate::Limits::DEFAULT.max_projections)]
    pub max_projections: usize,
}

impl LimitArgs {
    pub fn limits(&self) -> ctxgate::Limits {
        ctxgate::Limits {
            max_input_bytes: self.max_input_bytes,
            max_elements: self.max_elements,
            max_depth: self.max_depth,
            max_content_bytes: self.max_content_bytes,
            max_projections: self.max_projections,
        }
    }
}

/// A duration as people write one: a number and a unit, `ms`, `s` or `m`
/// (`250ms`, `1.5s`, `2m`).
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale = match unit.trim() {
        "ms" => 0.001,
        "s" => 1.0,
        "m" => 60.0,
        _ => {
            return Err(format!(
                "`{text}` is not a duration; write a number and a unit: `500ms`, `2s`, `1m`"
            ))
        }
    };
    match number.parse::<f64>() {
        Ok(n) if n.is_finite() && n > 0.0 && n * scale <= 86_400.0 => {
            Ok(std::time::Duration::from_secs_f64(n * scale))
        }
        _ => Err(format!("`{text}` is not a duration between 1ms and 24 hours; write a number and a unit: `500ms`, `2s`, `1m`")),
    }
}

/// The outcome of a subcommand, mapped to the exit-code contract.
pub enum Outcome {
    /// Exit 0.
    Fine,
    /// Exit 1: findings or a rejected input; the message goes to stderr.
    Rejected(Option<String>),
    /// Exit 2: usage, I/O or policy error.
    Failed(String),
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let code = if err.use_stderr() { 2 } else { 0 };
            let _ = err.print();
            return ExitCode::from(code);
        }
    };
    init_logging();
    let outcome = match cli.command {
        Command::Trim(args) => trim::run(args),
        Command::Check(args) => check::run(args),
        Command::Import(args) => import::run(args),
        Command::Policy(args) => policy::run(args),
        Command::Synth(args) => synth::run(args),
    };
    match outcome {
        Outcome::Fine => ExitCode::SUCCESS,
        Outcome::Rejected(message) => {
            if let Some(message) = message {
                eprintln!("error: {message}");
            }
            ExitCode::from(1)
        }
        Outcome::Failed(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

/// Logs go to stderr, filtered by `CTXGATE_LOG` (e.g. `CTXGATE_LOG=debug`);
/// off by default. The library only emits spans and events.
fn init_logging() {
    let Ok(filter) = std::env::var("CTXGATE_LOG") else {
        return;
    };
    let filter = tracing_subscriber::EnvFilter::new(filter);
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        // Each stage's span reports its time when it closes.
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .try_init();
}

/// Reads a file, or stdin for `-` or no path.
pub fn read_input(path: Option<&Path>) -> Result<Vec<u8>, String> {
    match path {
        None => read_stdin(),
        Some(p) if p == Path::new("-") => read_stdin(),
        Some(p) => std::fs::read(p).map_err(|e| format!("cannot read `{}`: {e}", p.display())),
    }
}

fn read_stdin() -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read standard input: {e}"))?;
    Ok(bytes)
}

/// Writes all of `bytes` to stdout, or says why not.
pub fn write_stdout(bytes: &[u8]) -> Result<(), String> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|e| format!("cannot write standard output: {e}"))
}
