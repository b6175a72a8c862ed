//! `ctxgate mcp`: an MCP server on stdio that starts an upstream MCP
//! server as its child and puts the gate between the two. Every message
//! is forwarded both ways; tool results, resources, prompts and progress
//! messages are redacted, trees (a Playwright ARIA snapshot, an AX tree)
//! trimmed for the action and the budget and written back, values the
//! session withheld replaced wherever they come again, files the upstream
//! links to inlined through the gate, and tools that show what the gate
//! cannot read are denied (`profile`). `ctxgate mcp-intercept` applies
//! the same rewriting to one result, as Docker MCP Gateway's `after` exec
//! interceptor.
//!
//! `proxy` owns the plumbing, `rewrite` what changes in a result,
//! `profile` what is known of an upstream.
//!
//! **Invariant.** Nothing of an upstream's result reaches the client
//! except through `rewrite`; values remembered for a session live in the
//! proxy's memory only, never on disk or in a log.

pub mod profile;
pub mod proxy;
pub mod rewrite;

use std::io::Read;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use clap::Args;
use serde_json::Value;

use super::{Failure, Outcome};
use profile::Profile;
use rewrite::{Counts, Rewriter};

/// The default `--timeout`: how long one call may take upstream.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// What `mcp` and `mcp-intercept` both take.
#[derive(Args)]
pub struct GateArgs {
    /// A policy file or folder, or `default` (the embedded default policy,
    /// also what no `--policy` means); repeat to layer them.
    #[arg(long, value_name = "PATH")]
    policy: Vec<String>,
    /// The action trees are trimmed for. `window` by default: a page is one
    /// window, and `focus` would send only the element last clicked.
    #[arg(long, value_name = "NAME", default_value = "window")]
    action: String,
    /// Budget per tree in o200k_base tokens (default: the policy's, else 8000).
    #[arg(long, value_name = "N", conflicts_with = "max_bytes")]
    max_tokens: Option<usize>,
    /// Budget per tree in bytes.
    #[arg(long, value_name = "N")]
    max_bytes: Option<usize>,
    /// A built-in profile (`playwright`, `macos-ax`) or a profile file (JSON).
    #[arg(long, value_name = "NAME|FILE", default_value = "playwright")]
    profile: String,
    /// Allow a tool the profile denies (repeatable).
    #[arg(long, value_name = "TOOL")]
    allow_tool: Vec<String>,
}

#[derive(Args)]
pub struct McpArgs {
    #[command(flatten)]
    gate: GateArgs,
    /// How long one request may wait for the upstream's answer: `500ms`, `30s`, `2m` (default 30s).
    #[arg(long, value_name = "DURATION", value_parser = super::parse_duration)]
    timeout: Option<Duration>,
    /// Append one JSON line per tool result (counts, never content) to this file.
    #[arg(long, value_name = "FILE")]
    decision_log: Option<PathBuf>,
    /// The upstream MCP server's command and arguments, after `--`.
    #[arg(last = true, required = true, value_name = "UPSTREAM_CMD")]
    upstream: Vec<String>,
}

#[derive(Args)]
pub struct InterceptArgs {
    #[command(flatten)]
    gate: GateArgs,
    /// The tool whose result this is, when the input does not say.
    #[arg(long, value_name = "NAME")]
    tool: Option<String>,
}

impl GateArgs {
    fn rewriter(&self, workdir: Option<PathBuf>) -> Result<Rewriter, Failure> {
        let mut profile = Profile::load(&self.profile).map_err(Failure::usage)?;
        for tool in &self.allow_tool {
            profile.deny.remove(tool);
        }
        let gate = super::policy::gate(&self.policy)?;
        if self.max_tokens == Some(0) || self.max_bytes == Some(0) {
            return Err(Failure::usage(
                "a budget of 0 sends nothing; give at least 1",
            ));
        }
        let budget = crate::wire::budget(self.max_tokens, self.max_bytes)?;
        Ok(Rewriter::new(gate, &self.action, budget, profile, workdir)?)
    }
}

/// The private working folder, removed at exit.
static WORKDIR: OnceLock<PathBuf> = OnceLock::new();

/// Removes the private working folder, if there is one.
pub(crate) fn cleanup() {
    if let Some(dir) = WORKDIR.get() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// A new folder only this user can open.
fn private_folder() -> Result<PathBuf, Failure> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("ctxgate-mcp-{}-{nanos}", std::process::id()));
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(&dir).map_err(|e| {
        Failure::io(format!(
            "cannot make a private folder in `{}`: {e}",
            dir.display()
        ))
    })?;
    Ok(dir)
}

pub(crate) fn run(args: McpArgs) -> Result<Outcome, Failure> {
    let profile_private = Profile::load(&args.gate.profile)
        .map_err(Failure::usage)?
        .private_workdir;
    let workdir = match profile_private {
        true => Some(private_folder()?),
        false => None,
    };
    if let Some(dir) = &workdir {
        let _ = WORKDIR.set(dir.clone());
    }
    let rewriter = match args.gate.rewriter(workdir.clone()) {
        Ok(r) => r,
        Err(e) => {
            cleanup();
            return Err(e);
        }
    };
    let log = match &args.decision_log {
        None => None,
        Some(path) => Some(
            crate::cli::serve::log::DecisionLog::open(path, 64 * 1024 * 1024).map_err(|e| {
                cleanup();
                Failure::io(format!(
                    "cannot open the decision log `{}`: {e}",
                    path.display()
                ))
            })?,
        ),
    };
    let (program, rest) = args.upstream.split_first().expect("clap requires one");
    let mut command = std::process::Command::new(program);
    command
        .args(rest)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit());
    if let Some(dir) = &workdir {
        command.current_dir(dir);
    }
    let child = command.spawn().map_err(|e| {
        cleanup();
        Failure::io(format!("cannot start the upstream `{program}`: {e}"))
    })?;
    tracing::info!(
        profile = %rewriter.profile.name,
        denied = rewriter.profile.deny.len(),
        private = workdir.is_some(),
        "proxying"
    );
    let code = proxy::run(
        rewriter,
        child,
        args.timeout.unwrap_or(DEFAULT_CALL_TIMEOUT),
        log,
    );
    cleanup();
    match code {
        0 => Ok(Outcome::Fine),
        _ => Ok(Outcome::Findings(Some("the upstream exited".into()))),
    }
}

/// `ctxgate mcp-intercept`: one `CallToolResult` (or `{request,
/// response}`, or `null`) on stdin; the replacement on stdout, nothing when
/// nothing changes.
pub(crate) fn intercept(args: InterceptArgs) -> Result<Outcome, Failure> {
    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .map_err(|e| Failure::io(format!("cannot read standard input: {e}")))?;
    let value: Value = serde_json::from_slice(&input)
        .map_err(|e| Failure::findings(format!("the input is not JSON: {e}")))?;
    let mut rewriter = args.gate.rewriter(None)?;
    let out = intercepted(&mut rewriter, args.tool.as_deref(), value).map_err(Failure::findings)?;
    if let Some(out) = out {
        super::write_stdout(out.as_bytes())?;
    }
    Ok(Outcome::Fine)
}

/// What `mcp-intercept` writes for one input: `None` to pass it through.
pub fn intercepted(
    rewriter: &mut Rewriter,
    tool: Option<&str>,
    value: Value,
) -> Result<Option<String>, String> {
    let (tool, mut result) = match value {
        Value::Null => return Ok(None),
        Value::Object(mut map) if map.contains_key("response") && !map.contains_key("content") => {
            let name = map
                .get("request")
                .and_then(|r| r.pointer("/params/name").or_else(|| r.get("name")))
                .and_then(Value::as_str)
                .map(str::to_string)
                .or(tool.map(str::to_string));
            let response = map.remove("response").unwrap_or(Value::Null);
            let result = match response {
                Value::Object(mut r) if r.contains_key("result") => {
                    r.remove("result").unwrap_or(Value::Null)
                }
                other => other,
            };
            if result.is_null() {
                return Ok(None);
            }
            (name, result)
        }
        other => (tool.map(str::to_string), other),
    };
    if let Some(name) = &tool {
        if rewriter.profile.denies(name) {
            let text = format!(
                "[ctxgate] the tool `{name}` is denied by the profile `{}`: it shows what the gate cannot trim",
                rewriter.profile.name
            );
            return Ok(Some(
                serde_json::json!({"content": [{"type": "text", "text": text}], "isError": true})
                    .to_string(),
            ));
        }
    }
    let before = result.clone();
    let mut counts = Counts::default();
    rewriter.tool_result(tool.as_deref(), &mut result, &mut counts)?;
    Ok((result != before).then(|| result.to_string()))
}
