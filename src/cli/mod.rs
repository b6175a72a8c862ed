//! Command-line interface: clap → library → output → exit code.
//!
//! Exit codes, for every subcommand, decided in one place (the `exit` of
//! [`crate::wire::codes`]) by the error's [`ErrorKind`]: 0 = fine; 1 = the input was judged and found
//! wanting (not JSON or not of the import format, does not conform, over a
//! limit, budget unreachable, past the deadline) or the command's findings
//! say so (`check`, `policy check`, failed `policy test`); 2 = usage, I/O,
//! policy or internal error. Errors go to stderr as `error: …`. `trim` and
//! `import` write nothing to stdout on a non-zero exit; `check` and `policy`
//! print their findings there, as their output.

mod check;
mod explain;
mod import;
#[doc(hidden)]
pub mod mcp;
mod policy;
mod serve;
mod synth;
mod trim;
mod watch;

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

use crate::ErrorKind;
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
    /// Explain a trim element by element: role, states, outcome, every reason, redactions; text, JSON or one HTML page.
    Explain(explain::ExplainArgs),
    /// Check that an answer conforms to protocol 0.2.0 (0.1 answers are upgraded first).
    Check(check::CheckArgs),
    /// Import an OS accessibility tree (Chromium AX dump, macOS AX JSON, AT-SPI, UIA, Playwright ARIA) as a 0.2.0 answer.
    Import(import::ImportArgs),
    /// Check, test, document and preview policies.
    Policy(policy::PolicyArgs),
    /// Serve trims to hosts in any language: JSON-RPC on stdio, or HTTP; policies reloaded live.
    Serve(serve::ServeArgs),
    /// Put the gate in front of an MCP server (Playwright MCP by default): an MCP proxy on stdio.
    Mcp(mcp::McpArgs),
    /// Rewrite one MCP tool result through the gate: Docker MCP Gateway's `after` exec interceptor.
    McpIntercept(mcp::InterceptArgs),
    /// Generate a realistic 0.2.0 answer of N elements, deterministic for a seed.
    Synth(synth::SynthArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), as shipped in docs/ctxgate.1.
    Man,
}

/// Limits on what is read; defaults in the README.
#[derive(Args, Clone, Copy)]
pub(crate) struct ReadLimitArgs {
    /// Largest input in bytes.
    #[arg(long, value_name = "N", default_value_t = crate::Limits::DEFAULT.max_input_bytes)]
    pub max_input_bytes: usize,
    /// Most elements in one tree.
    #[arg(long, value_name = "N", default_value_t = crate::Limits::DEFAULT.max_elements)]
    pub max_elements: usize,
    /// Deepest tree, in elements (the root is 1).
    #[arg(long, value_name = "N", default_value_t = crate::Limits::DEFAULT.max_depth)]
    pub max_depth: usize,
    /// Most bytes of title, url and content in one element.
    #[arg(long, value_name = "N", default_value_t = crate::Limits::DEFAULT.max_content_bytes)]
    pub max_content_bytes: usize,
}

impl ReadLimitArgs {
    /// The limits, with the default for what is not read's to say.
    pub fn limits(&self) -> crate::Limits {
        crate::Limits {
            max_input_bytes: self.max_input_bytes,
            max_elements: self.max_elements,
            max_depth: self.max_depth,
            max_content_bytes: self.max_content_bytes,
            ..crate::Limits::DEFAULT
        }
    }
}

/// Limits on what is read and on what the policy decides.
#[derive(Args, Clone, Copy)]
pub(crate) struct LimitArgs {
    #[command(flatten)]
    pub read: ReadLimitArgs,
    /// Most distinct element projections the policy decides in one request.
    #[arg(long, value_name = "N", default_value_t = crate::Limits::DEFAULT.max_projections)]
    pub max_projections: usize,
}

impl LimitArgs {
    pub fn limits(&self) -> crate::Limits {
        crate::Limits {
            max_projections: self.max_projections,
            ..self.read.limits()
        }
    }
}

/// What `trim` and `explain` both take: the answer, the policy layers, the
/// request and the limits on what is read.
#[derive(Args)]
pub(crate) struct RequestArgs {
    /// The answer (`-` or nothing: standard input).
    pub file: Option<std::path::PathBuf>,
    /// A policy file or folder, or `default` (the embedded default
    /// policy, also what no `--policy` means). Repeat to layer policies:
    /// `--policy default --policy extra/` (see the README's policy layers).
    #[arg(long, value_name = "PATH")]
    pub policy: Vec<String>,
    /// The user's action: selection, focus, window, app, or a host's own word.
    #[arg(long, value_name = "NAME", default_value = "focus")]
    pub action: String,
    /// An element id the action names.
    #[arg(long, value_name = "ID")]
    pub target: Option<String>,
    /// Budget in o200k_base tokens (can only lower the policy's).
    #[arg(long, value_name = "N", conflicts_with = "max_bytes")]
    pub max_tokens: Option<usize>,
    /// Budget in bytes (can only lower the policy's).
    #[arg(long, value_name = "N")]
    pub max_bytes: Option<usize>,
    /// How long the request may take, from reading to output: `500ms`,
    /// `2s`, `1m` (default 5s). Past it nothing is sent (exit 1).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<std::time::Duration>,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// The format of what is sent (`trim --format`, `explain --sent-format`).
#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum FormatArg {
    Json,
    Outline,
}

impl RequestArgs {
    /// The gate for `--policy` and the limits.
    pub fn gate(&self) -> Result<crate::Gate, Failure> {
        Ok(policy::gate(&self.policy)?.with_limits(self.limits.limits()))
    }

    /// The request these flags ask for, sent in `format`.
    pub fn request(&self, format: FormatArg) -> Result<crate::Request, Failure> {
        let params = crate::wire::TrimParams {
            action: Some(self.action.clone()),
            target: self.target.clone(),
            max_tokens: self.max_tokens,
            max_bytes: self.max_bytes,
            format: Some(match format {
                FormatArg::Json => crate::Format::Json,
                FormatArg::Outline => crate::Format::Outline,
            }),
            timeout: self.timeout,
        };
        params.request().map_err(Failure::from)
    }
}

/// A duration as people write one: a number and a unit, `ms`, `s` or `m`
/// (`250ms`, `1.5s`, `2m`).
pub(crate) fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
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

/// What a subcommand that ran to the end found.
pub(crate) enum Outcome {
    /// Exit 0.
    Fine,
    /// Exit 1: the command's findings (printed on stdout) say the input is
    /// wanting; a message for stderr, if any.
    Findings(Option<String>),
}

/// Why a subcommand stopped: an error of some kind, and its message.
pub(crate) struct Failure {
    kind: ErrorKind,
    message: String,
    /// The library's error, when it was one (for `--json`'s structured fields).
    error: Option<Box<crate::Error>>,
    /// Already written to stderr (as JSON): only the exit code is left.
    printed: bool,
    /// Standard output was closed by its reader (`ctxgate … | head`): the
    /// command ends quietly with 0, as ripgrep does.
    closed_pipe: bool,
}

impl Failure {
    /// A failure of the command line itself (what was asked cannot be done).
    pub fn usage(message: impl Into<String>) -> Failure {
        Failure {
            kind: ErrorKind::Usage,
            message: message.into(),
            error: None,
            printed: false,
            closed_pipe: false,
        }
    }

    /// The input was judged and found wanting (exit 1).
    pub fn findings(message: impl Into<String>) -> Failure {
        Failure {
            kind: ErrorKind::NotConforming,
            message: message.into(),
            error: None,
            printed: false,
            closed_pipe: false,
        }
    }

    /// Reading or writing a file or a stream.
    pub fn io(message: impl Into<String>) -> Failure {
        Failure {
            kind: ErrorKind::Io,
            message: message.into(),
            error: None,
            printed: false,
            closed_pipe: false,
        }
    }
}

impl From<crate::wire::Failure> for Failure {
    fn from(failure: crate::wire::Failure) -> Failure {
        let kind = match failure.kind {
            crate::wire::Kind::Lib(kind) => kind,
            // The server's own kinds are never a command's: one here is a bug.
            _ => ErrorKind::Internal,
        };
        Failure {
            kind,
            message: failure.message,
            error: None,
            printed: false,
            closed_pipe: false,
        }
    }
}

impl From<crate::Error> for Failure {
    fn from(err: crate::Error) -> Failure {
        Failure {
            kind: err.kind(),
            message: format!("{err:#}"),
            error: Some(Box::new(err)),
            printed: false,
            closed_pipe: false,
        }
    }
}

/// Runs the command line: what `ctxgate` (the binary) does.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let code = if err.use_stderr() {
                crate::wire::codes(ErrorKind::Usage).exit
            } else {
                0
            };
            let _ = err.print();
            return ExitCode::from(code);
        }
    };
    init_logging(matches!(cli.command, Command::Serve(_)));
    let outcome = match cli.command {
        Command::Trim(args) => trim::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Check(args) => check::run(args),
        Command::Import(args) => import::run(args),
        Command::Policy(args) => policy::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Mcp(args) => mcp::run(args),
        Command::McpIntercept(args) => mcp::intercept(args),
        Command::Synth(args) => synth::run(args),
        Command::Completions { shell } => completions(shell),
        Command::Man => man(),
    };
    match outcome {
        Ok(Outcome::Fine) => ExitCode::SUCCESS,
        Ok(Outcome::Findings(message)) => {
            if let Some(message) = message {
                eprintln!("error: {}", crate::render::visible(&message));
            }
            ExitCode::from(1)
        }
        Err(Failure {
            closed_pipe: true, ..
        }) => ExitCode::SUCCESS,
        // One line, whatever ids, keys or role words of the input it names:
        // a control or bidi char in them is written as `\uXXXX`.
        Err(Failure {
            kind,
            message,
            printed,
            ..
        }) => {
            if !printed {
                eprintln!("error: {}", crate::render::visible(&message));
            }
            ExitCode::from(crate::wire::codes(kind).exit)
        }
    }
}

fn completions(shell: clap_complete::Shell) -> Result<Outcome, Failure> {
    use clap::CommandFactory;
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "ctxgate", &mut out);
    write_stdout(&out)?;
    Ok(Outcome::Fine)
}

fn man() -> Result<Outcome, Failure> {
    write_stdout(&man_page())?;
    Ok(Outcome::Fine)
}

/// The man page: the top-level page, then each subcommand's, in one roff
/// document.
pub fn man_page() -> Vec<u8> {
    use clap::CommandFactory;
    let command = Cli::command();
    let mut out = Vec::new();
    clap_mangen::Man::new(command.clone())
        .render(&mut out)
        .expect("a man page renders to memory");
    for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
        clap_mangen::Man::new(sub.clone())
            .title(format!("ctxgate-{}", sub.get_name()))
            .render(&mut out)
            .expect("a man page renders to memory");
    }
    out
}

/// Logs go to stderr, filtered by `CTXGATE_LOG` (e.g. `CTXGATE_LOG=debug`);
/// off by default, except `serve`'s own events at `info` (start, reloads,
/// shutdown). The library only emits spans and events.
fn init_logging(serve: bool) {
    let filter = match std::env::var("CTXGATE_LOG") {
        Ok(filter) => filter,
        Err(_) if serve => "warn,ctxgate::cli::serve=info".to_string(),
        Err(_) => return,
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
pub(crate) fn read_input(path: Option<&Path>) -> Result<Vec<u8>, Failure> {
    match path {
        None => read_stdin(),
        Some(p) if p == Path::new("-") => read_stdin(),
        Some(p) => {
            std::fs::read(p).map_err(|e| Failure::io(format!("cannot read `{}`: {e}", p.display())))
        }
    }
}

fn read_stdin() -> Result<Vec<u8>, Failure> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::io(format!("cannot read standard input: {e}")))?;
    Ok(bytes)
}

/// Writes all of `bytes` to stdout, or says why not.
/// Writes `bytes` to stdout, and a newline after them when stdout is a
/// terminal and they do not end with one (a person is reading: the prompt
/// starts on its own line). Piped or redirected, stdout gets exactly
/// `bytes`, which is what a budget measured.
pub(crate) fn write_stdout(bytes: &[u8]) -> Result<(), Failure> {
    use std::io::{IsTerminal, Write};
    let stdout = std::io::stdout();
    let newline = stdout.is_terminal() && !bytes.is_empty() && !bytes.ends_with(b"\n");
    let mut out = stdout.lock();
    out.write_all(bytes)
        .and_then(|()| {
            if newline {
                out.write_all(b"\n")
            } else {
                Ok(())
            }
        })
        .and_then(|()| out.flush())
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::BrokenPipe => Failure {
                closed_pipe: true,
                ..Failure::io("standard output was closed")
            },
            _ => Failure::io(format!("cannot write standard output: {e}")),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Error, Finding, Requirement, Stage};

    /// Every variant of the library's error, its kind, and the exit code
    /// the CLI gives it: the whole contract in one table.
    #[test]
    fn every_error_has_a_kind_and_an_exit_code() {
        let finding = Finding::error(Requirement::R4, "/root", None, "repeated id");
        let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let table: Vec<(Error, ErrorKind, u8)> = vec![
            (
                Error::Json {
                    line: 1,
                    column: 2,
                    message: "expected value".into(),
                },
                ErrorKind::InvalidInput,
                1,
            ),
            (
                Error::Import {
                    format: "ax-json",
                    line: None,
                    message: "invalid JSON".into(),
                },
                ErrorKind::InvalidInput,
                1,
            ),
            (
                Error::InputTooLarge { size: 2, limit: 1 },
                ErrorKind::OverLimit,
                1,
            ),
            (
                Error::TooDeep {
                    limit: 1,
                    place: crate::DepthPlace::Element("/root".into()),
                },
                ErrorKind::OverLimit,
                1,
            ),
            (Error::TooManyElements { limit: 1 }, ErrorKind::OverLimit, 1),
            (
                Error::TooManyProjections { limit: 1 },
                ErrorKind::OverLimit,
                1,
            ),
            (
                Error::ContentTooLarge {
                    pointer: "/root".into(),
                    size: 2,
                    limit: 1,
                },
                ErrorKind::OverLimit,
                1,
            ),
            (
                Error::NotConforming {
                    findings: vec![finding],
                },
                ErrorKind::NotConforming,
                1,
            ),
            (
                Error::Upgrade {
                    pointer: "/items/0".into(),
                    message: "no id".into(),
                },
                ErrorKind::NotConforming,
                1,
            ),
            (
                Error::BudgetUnreachable {
                    budget: 1,
                    needed: 2,
                    unit: "bytes",
                },
                ErrorKind::BudgetUnreachable,
                1,
            ),
            (
                Error::Deadline {
                    stage: Stage::Read,
                    limit: std::time::Duration::from_millis(1),
                },
                ErrorKind::Deadline,
                1,
            ),
            (
                Error::Policy {
                    location: "p.rego:1:1".into(),
                    message: "bad".into(),
                },
                ErrorKind::Policy,
                2,
            ),
            (
                Error::PolicyEval {
                    rule: "deny".into(),
                    message: "bad".into(),
                },
                ErrorKind::Policy,
                2,
            ),
            (
                Error::UnknownTarget { id: "e9".into() },
                ErrorKind::Usage,
                2,
            ),
            (Error::ZeroBudget, ErrorKind::Usage, 2),
            (Error::TokensUnavailable, ErrorKind::Usage, 2),
            (
                Error::UnknownFormat {
                    word: "x".into(),
                    expected: "aria".into(),
                },
                ErrorKind::Usage,
                2,
            ),
            (
                Error::OverBudget {
                    size: 2,
                    limit: 1,
                    unit: "bytes",
                },
                ErrorKind::Internal,
                2,
            ),
            (
                Error::Io {
                    path: "p".into(),
                    source: io(),
                },
                ErrorKind::Io,
                2,
            ),
        ];
        // Every variant is in the table (the library's own test matches
        // them exhaustively); a new one must be added here with its code.
        assert_eq!(table.len(), 19);
        for (err, kind, code) in table {
            assert_eq!(err.kind(), kind, "{err}");
            assert_eq!(crate::wire::codes(kind).exit, code, "{err}");
            let message = format!("{err:#}");
            let failure = Failure::from(err);
            assert_eq!((failure.kind, failure.message), (kind, message));
        }
        // The CLI's own failures follow the same table.
        assert_eq!(crate::wire::codes(Failure::usage("x").kind).exit, 2);
        assert_eq!(crate::wire::codes(Failure::io("x").kind).exit, 2);
    }
}
