//! The proxy's plumbing: newline-delimited JSON-RPC 2.0 on the client's
//! stdio and on the upstream's, one thread reading each side and one
//! watching deadlines. Every message is forwarded as it came, `_meta` and
//! unknown members included, except what the gate must change: tool
//! results, resources and prompts (`rewrite`), progress and log messages
//! (redacted), `tools/list` (denied tools removed, `nextCursor` kept),
//! denied or unsafe tool calls (refused here, never forwarded) and
//! `initialize` (the client's `roots` capability withheld when the
//! upstream runs in a private folder, so its files stay there).
//!
//! **Invariant.** Nothing the upstream wrote reaches the client unless it
//! went through the rewriter: a reply the rewriter cannot handle, a line
//! that is not JSON, a call past its deadline and an upstream that exits
//! become JSON-RPC errors that carry none of the upstream's output.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{json, Value};

use super::rewrite::{Counts, Rewriter, MARK};
use crate::cli::serve::log::{rfc3339, DecisionLog};

/// JSON-RPC error codes the proxy answers with.
pub mod code {
    /// The client's line is not JSON.
    pub const PARSE: i64 = -32700;
    /// A denied tool, or arguments the proxy refuses.
    pub const REFUSED: i64 = -32602;
    /// The upstream exited before answering.
    pub const UPSTREAM_EXITED: i64 = -32000;
    /// The upstream did not answer within `--timeout`.
    pub const TIMEOUT: i64 = -32001;
    /// The upstream's answer could not be read or rewritten.
    pub const MALFORMED: i64 = -32002;
}

/// A request of the client's the upstream has not answered.
struct Pending {
    method: String,
    tool: Option<String>,
    id: Value,
    deadline: Instant,
    started: Instant,
}

/// What both reading threads share.
pub struct Shared {
    client: Mutex<Box<dyn Write + Send>>,
    upstream: Mutex<Option<ChildStdin>>,
    state: Mutex<State>,
    log: Option<DecisionLog>,
    timeout: Duration,
    /// The client closed first: the upstream's end is expected.
    closing: std::sync::atomic::AtomicBool,
}

struct State {
    rewriter: Rewriter,
    pending: HashMap<String, Pending>,
    /// Tools that declared an `outputSchema`.
    schemas: std::collections::HashSet<String>,
    sequence: u64,
}

/// The key of a JSON-RPC id.
fn key(id: &Value) -> String {
    id.to_string()
}

impl Shared {
    fn to_client(&self, message: &Value) {
        let mut line = serde_json::to_vec(message).expect("a value serializes");
        line.push(b'\n');
        let mut out = self.client.lock().unwrap_or_else(|e| e.into_inner());
        let _ = out.write_all(&line).and_then(|()| out.flush());
    }

    fn to_upstream(&self, message: &Value) {
        let mut line = serde_json::to_vec(message).expect("a value serializes");
        line.push(b'\n');
        let mut guard = self.upstream.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(stdin) = guard.as_mut() {
            if stdin.write_all(&line).and_then(|()| stdin.flush()).is_err() {
                *guard = None;
            }
        }
    }

    fn error(&self, id: &Value, code: i64, message: &str) {
        self.to_client(&json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": code, "message": format!("ctxgate mcp: {message}")},
        }));
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Runs the proxy until either side closes; the exit code.
pub fn run(
    rewriter: Rewriter,
    mut child: Child,
    timeout: Duration,
    log: Option<DecisionLog>,
) -> u8 {
    let upstream_out = child.stdout.take().expect("piped");
    let shared = Arc::new(Shared {
        client: Mutex::new(Box::new(std::io::stdout())),
        upstream: Mutex::new(child.stdin.take()),
        state: Mutex::new(State {
            rewriter,
            pending: HashMap::new(),
            schemas: Default::default(),
            sequence: 0,
        }),
        log,
        timeout,
        closing: Default::default(),
    });
    let child = Arc::new(Mutex::new(child));

    let watcher = shared.clone();
    std::thread::spawn(move || watch(&watcher));

    let reader = shared.clone();
    let exited = child.clone();
    std::thread::spawn(move || {
        from_upstream(&reader, BufReader::new(upstream_out));
        if reader.closing.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        // The upstream closed its output: whatever was asked is lost.
        let status = wait_briefly(&exited, Duration::from_millis(500));
        let pending: Vec<Pending> = reader.state().pending.drain().map(|(_, p)| p).collect();
        for p in &pending {
            reader.error(
                &p.id,
                code::UPSTREAM_EXITED,
                &format!("the upstream exited ({status}) before answering `{}`; nothing of its output was sent", p.method),
            );
        }
        tracing::warn!(pending = pending.len(), %status, "the upstream exited");
        super::cleanup();
        std::process::exit(1);
    });

    from_client(&shared, BufReader::new(std::io::stdin().lock()));
    // The client closed: close the upstream's input, let it end.
    shared
        .closing
        .store(true, std::sync::atomic::Ordering::SeqCst);
    shared
        .upstream
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    let status = wait_briefly(&child, Duration::from_secs(5));
    tracing::info!(%status, "the client closed");
    0
}

/// Waits up to `patience` for the child, then kills it; its status.
fn wait_briefly(child: &Mutex<Child>, patience: Duration) -> String {
    let until = Instant::now() + patience;
    loop {
        let mut child = child.lock().unwrap_or_else(|e| e.into_inner());
        match child.try_wait() {
            Ok(Some(status)) => return status.to_string(),
            Ok(None) if Instant::now() < until => {}
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return "killed after the client closed".into();
            }
            Err(e) => return format!("unknown status: {e}"),
        }
        drop(child);
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Fails calls past their deadline and cancels them upstream.
fn watch(shared: &Shared) {
    loop {
        std::thread::sleep(Duration::from_millis(20));
        let now = Instant::now();
        let late: Vec<Pending> = {
            let mut state = shared.state();
            let keys: Vec<String> = state
                .pending
                .iter()
                .filter(|(_, p)| p.deadline <= now)
                .map(|(k, _)| k.clone())
                .collect();
            keys.iter()
                .filter_map(|k| state.pending.remove(k))
                .collect()
        };
        for p in late {
            shared.to_upstream(&json!({
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": p.id, "reason": "ctxgate mcp: timed out"},
            }));
            shared.error(
                &p.id,
                code::TIMEOUT,
                &format!(
                    "the upstream did not answer `{}` within {:?} (`--timeout`)",
                    p.method, shared.timeout
                ),
            );
            tracing::warn!(method = %p.method, "timed out");
        }
    }
}

/// Reads the client's messages until it closes.
pub(super) fn from_client(shared: &Shared, input: impl BufRead) {
    for line in input.split(b'\n') {
        let Ok(line) = line else { break };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let mut message: Value = match serde_json::from_slice(&line) {
            Ok(message) => message,
            Err(e) => {
                shared.error(
                    &Value::Null,
                    code::PARSE,
                    &format!("the line is not JSON: {e}"),
                );
                continue;
            }
        };
        match method_and_id(&message) {
            (Some(method), Some(id)) => {
                if let Some(refusal) = client_request(shared, &method, &mut message) {
                    shared.error(&id, code::REFUSED, &refusal);
                    continue;
                }
                let tool = (method == "tools/call")
                    .then(|| message.pointer("/params/name").and_then(Value::as_str))
                    .flatten()
                    .map(str::to_string);
                let now = Instant::now();
                shared.state().pending.insert(
                    key(&id),
                    Pending {
                        method,
                        tool,
                        id,
                        deadline: now + shared.timeout,
                        started: now,
                    },
                );
                shared.to_upstream(&message);
            }
            (Some(method), None) => {
                if method == "notifications/cancelled" {
                    if let Some(id) = message.pointer("/params/requestId") {
                        shared.state().pending.remove(&key(id));
                    }
                }
                shared.to_upstream(&message);
            }
            // A reply to the upstream's own request (roots, sampling).
            (None, _) => shared.to_upstream(&message),
        }
    }
}

/// What the proxy does to a client's request before forwarding it; a
/// reason to refuse it instead.
fn client_request(shared: &Shared, method: &str, message: &mut Value) -> Option<String> {
    let mut state = shared.state();
    match method {
        "initialize" if state.rewriter.profile.private_workdir => {
            if let Some(caps) = message
                .pointer_mut("/params/capabilities")
                .and_then(Value::as_object_mut)
            {
                caps.remove("roots");
            }
            None
        }
        "tools/call" => {
            let tool = message
                .pointer("/params/name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            if state.rewriter.profile.denies(&tool) {
                return Some(format!(
                    "the tool `{tool}` is denied by the profile `{}`: it shows page state the gate cannot trim (pass `--allow-tool {tool}` or a profile that allows it)",
                    state.rewriter.profile.name
                ));
            }
            let arguments = message
                .pointer("/params/arguments")
                .cloned()
                .unwrap_or(Value::Null);
            let replacements: Vec<String> =
                state.rewriter.replacements().map(str::to_string).collect();
            if let Some(found) = strings(&arguments)
                .into_iter()
                .find(|s| s.contains(MARK) || replacements.iter().any(|r| s.contains(r.as_str())))
            {
                let what = if found.contains(MARK) {
                    "a placeholder or notice ctxgate wrote"
                } else {
                    "a redaction ctxgate wrote"
                };
                return Some(format!(
                    "the arguments of `{tool}` hold {what}, not a value: ask the user for the value instead"
                ));
            }
            if state.rewriter.profile.private_workdir {
                if let Some(Value::String(name)) = arguments.get("filename") {
                    let path = std::path::Path::new(name);
                    if path.is_absolute()
                        || path
                            .components()
                            .any(|c| !matches!(c, std::path::Component::Normal(_)))
                    {
                        return Some(format!(
                            "`{tool}`'s `filename` must be a name inside the upstream's private folder (no `/` at the start, no `..`): the gate inlines the file's content"
                        ));
                    }
                }
            }
            let learnt = state.rewriter.remember_arguments(&arguments);
            if learnt > 0 {
                tracing::debug!(learnt, "values typed into secure fields remembered");
            }
            None
        }
        _ => None,
    }
}

/// Every string inside a value.
fn strings(value: &Value) -> Vec<&str> {
    let mut out = Vec::new();
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => out.push(s.as_str()),
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    out
}

/// Reads the upstream's messages until it closes.
fn from_upstream(shared: &Shared, input: impl BufRead) {
    for line in input.split(b'\n') {
        let Ok(line) = line else { break };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let message: Value = match serde_json::from_slice(&line) {
            Ok(message @ Value::Object(_)) => message,
            _ => {
                malformed(
                    shared,
                    "the upstream wrote a line that is not a JSON-RPC message",
                );
                continue;
            }
        };
        from_upstream_message(shared, message);
    }
}

/// Fails every pending request: the upstream said something that cannot
/// be matched to one.
fn malformed(shared: &Shared, why: &str) {
    let pending: Vec<Pending> = shared.state().pending.drain().map(|(_, p)| p).collect();
    tracing::warn!(failed = pending.len(), "malformed upstream output");
    for p in pending {
        shared.error(
            &p.id,
            code::MALFORMED,
            &format!("{why}; nothing of it was sent"),
        );
    }
}

/// A JSON-RPC message's `method` and `id`: both for a request, a method
/// alone for a notification, an id alone for a response.
fn method_and_id(message: &Value) -> (Option<String>, Option<Value>) {
    let method = message
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_string);
    (method, message.get("id").cloned())
}

fn from_upstream_message(shared: &Shared, mut message: Value) {
    match method_and_id(&message) {
        // The upstream's own request (roots/list, sampling, elicitation).
        (Some(_), Some(_)) => {
            let state = shared.state();
            if let Some(params) = message.get_mut("params") {
                state.rewriter.value(params, &mut Counts::default());
            }
            drop(state);
            shared.to_client(&message);
        }
        (Some(method), None) => {
            let state = shared.state();
            let mut counts = Counts::default();
            match method.as_str() {
                "notifications/progress" => {
                    if let Some(Value::String(text)) = message.pointer_mut("/params/message") {
                        *text = state.rewriter.text(text, &mut counts);
                    }
                }
                "notifications/message" => {
                    if let Some(data) = message.pointer_mut("/params/data") {
                        state.rewriter.value(data, &mut counts);
                    }
                }
                _ => {}
            }
            drop(state);
            shared.to_client(&message);
        }
        (None, Some(id)) => {
            let Some(pending) = shared.state().pending.remove(&key(&id)) else {
                // Cancelled or timed out: the client was answered already.
                tracing::debug!("a reply to no pending request dropped");
                return;
            };
            match reply(shared, &pending, &mut message) {
                Ok(()) => shared.to_client(&message),
                Err(why) => shared.error(
                    &id,
                    code::MALFORMED,
                    &format!("{why}; nothing of the upstream's answer was sent"),
                ),
            }
        }
        (None, None) => malformed(
            shared,
            "the upstream wrote a message with no method and no id",
        ),
    }
}

/// Rewrites the upstream's reply to a pending request in place.
fn reply(shared: &Shared, pending: &Pending, message: &mut Value) -> Result<(), String> {
    let mut state = shared.state();
    let state = &mut *state;
    if let Some(error) = message.get_mut("error") {
        state.rewriter.value(error, &mut Counts::default());
        return Ok(());
    }
    let Some(result) = message.get_mut("result") else {
        return Err(format!(
            "the reply to `{}` has neither `result` nor `error`",
            pending.method
        ));
    };
    match pending.method.as_str() {
        "tools/list" => {
            let Some(Value::Array(tools)) = result.get_mut("tools") else {
                return Err("the upstream's `tools/list` has no `tools` list".into());
            };
            let before = tools.len();
            tools.retain(|tool| {
                let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
                !state.rewriter.profile.denies(name)
            });
            for tool in tools.iter() {
                if tool.get("outputSchema").is_some() {
                    if let Some(name) = tool.get("name").and_then(Value::as_str) {
                        state.schemas.insert(name.to_string());
                    }
                }
            }
            tracing::debug!(removed = before - tools.len(), "tools listed");
            Ok(())
        }
        "tools/call" => {
            let started = pending.started;
            let mut counts = Counts::default();
            let numbers_before = count_numbers(result.get("structuredContent"));
            let outcome = state
                .rewriter
                .tool_result(pending.tool.as_deref(), result, &mut counts);
            let tool = pending.tool.as_deref().unwrap_or("");
            if outcome.is_ok()
                && state.schemas.contains(tool)
                && count_numbers(result.get("structuredContent")) != numbers_before
            {
                // A number redacted to a string no longer fits the schema.
                *result = json!({
                    "content": [{"type": "text", "text": "[ctxgate] the result was withheld: redacting it broke the tool's output schema"}],
                    "isError": true,
                });
            }
            state.sequence += 1;
            if let Some(log) = &shared.log {
                log.write(&Entry {
                    time: rfc3339(SystemTime::now()),
                    request_id: state.sequence,
                    transport: "mcp",
                    method: "tools/call",
                    tool,
                    policy_hash: state.rewriter.policy_hash(),
                    counts: &counts,
                    session_values: state.rewriter.memory.len(),
                    error: outcome.as_ref().err().map(|_| "malformed"),
                    duration_us: started.elapsed().as_micros() as u64,
                });
            }
            tracing::debug!(
                tool,
                trees = counts.trees,
                elements = counts.elements,
                bytes_in = counts.bytes_in,
                bytes_out = counts.bytes_out,
                "tool result"
            );
            outcome
        }
        "resources/read" | "prompts/get" => {
            state.rewriter.value(result, &mut Counts::default());
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Numbers inside a value (a redacted number becomes a string).
fn count_numbers(value: Option<&Value>) -> usize {
    let mut n = 0;
    let mut stack: Vec<&Value> = value.into_iter().collect();
    while let Some(v) = stack.pop() {
        match v {
            Value::Number(_) => n += 1,
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    n
}

/// One decision-log line: a tool result's counts, never content.
#[derive(serde::Serialize)]
pub struct Entry<'a> {
    /// When the reply was rewritten (RFC 3339, UTC).
    pub time: String,
    /// The proxy's sequence number for tool results.
    pub request_id: u64,
    /// `mcp` or `mcp-intercept`.
    pub transport: &'static str,
    /// `tools/call`.
    pub method: &'static str,
    /// The tool's name.
    pub tool: &'a str,
    /// The policy's hash.
    pub policy_hash: &'a str,
    /// Trees, elements, outcomes, redactions, files, sizes.
    #[serde(flatten)]
    pub counts: &'a Counts,
    /// Values the session withholds so far.
    pub session_values: usize,
    /// `malformed` when the result could not be rewritten.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'static str>,
    /// From the client's request to the rewritten reply.
    pub duration_us: u64,
}
