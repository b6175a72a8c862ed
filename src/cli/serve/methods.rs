//! The methods (`trim`, `check`, `policy`), the same for every transport:
//! params in, a result's JSON or a [`Failure`] out. Each call loads the
//! served gate once and runs wholly under it; each is counted in the
//! metrics and, with `--decision-log`, logged as one line of counts.
//! JSON-RPC framing for stdio is here too (`rpc_line`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use super::log::{rfc3339, DecisionLog, Entry, TrimCounts};
use super::pool::{Pool, Refused};
use super::reload::State;
use crate::wire::{members, Failure, Kind, Params, Problem, TrimResult, CHECK_PARAMS, TRIM_PARAMS};
use crate::ErrorKind;

/// Which transport a request came by.
#[derive(Debug, Clone, Copy)]
pub enum Transport {
    /// JSON-RPC lines on stdin and stdout.
    Stdio,
    /// HTTP.
    Http,
}

impl Transport {
    fn name(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
        }
    }
}

/// Everything a request needs: the served policy, the workers, the log
/// and the limits.
pub struct Server {
    /// The served policy.
    pub state: Arc<State>,
    /// The workers.
    pub pool: Pool,
    /// The decision log, if any.
    pub log: Option<DecisionLog>,
    /// The longest a request may take, queueing included.
    pub timeout: Duration,
    /// The largest request, in bytes.
    pub max_request_bytes: usize,
    sequence: AtomicU64,
}

/// The JSON-RPC envelope; `id` and `params` are kept as written.
struct Envelope<'a> {
    jsonrpc: Option<String>,
    id: Option<&'a [u8]>,
    method: Option<String>,
    params: Option<&'a [u8]>,
}

/// The envelope of a line; other members are ignored.
fn envelope(line: &[u8]) -> Result<Envelope<'_>, Problem> {
    let mut envelope = Envelope {
        jsonrpc: None,
        id: None,
        method: None,
        params: None,
    };
    for (key, bytes) in members(line)? {
        let string = |what: &str| {
            serde_json::from_slice::<String>(bytes)
                .map_err(|_| Problem::Shape(format!("`{what}` must be a string")))
        };
        match key.as_str() {
            "jsonrpc" => envelope.jsonrpc = Some(string("jsonrpc")?),
            "method" => envelope.method = Some(string("method")?),
            "id" => envelope.id = Some(bytes),
            "params" => envelope.params = Some(bytes),
            _ => {}
        }
    }
    Ok(envelope)
}

impl Server {
    /// A server for `state`.
    pub fn new(
        state: Arc<State>,
        pool: Pool,
        log: Option<DecisionLog>,
        timeout: Duration,
        max_request_bytes: usize,
    ) -> Server {
        Server {
            state,
            pool,
            log,
            timeout,
            max_request_bytes,
            sequence: AtomicU64::new(1),
        }
    }

    /// One JSON-RPC line: the reply line (without its newline), or `None`
    /// for a notification (a request without `id`).
    pub fn rpc_line(&self, line: &[u8], received: Instant) -> Option<String> {
        let envelope = match envelope(line) {
            Ok(envelope) => envelope,
            Err(Problem::Json(err)) => {
                let failure = Failure::new(
                    Kind::Lib(ErrorKind::InvalidInput),
                    format!("the request is not JSON: {err}; send one JSON-RPC object per line"),
                )
                .with("line", err.line())
                .with("column", err.column());
                self.refused_or_malformed(&failure, "invalid", Transport::Stdio, received);
                return Some(rpc_error(None, -32700, &failure));
            }
            Err(Problem::Shape(message)) => {
                let failure =
                    Failure::usage(format!("the request is not a JSON-RPC request: {message}"));
                self.refused_or_malformed(&failure, "invalid", Transport::Stdio, received);
                return Some(rpc_error(None, -32600, &failure));
            }
        };
        let id = envelope.id;
        if id.is_some_and(|id| !is_id(id)) {
            let failure = Failure::usage("`id` must be a string, a number or null");
            self.refused_or_malformed(&failure, "invalid", Transport::Stdio, received);
            return Some(rpc_error(None, -32600, &failure));
        }
        let invalid = match (&envelope.jsonrpc, &envelope.method) {
            (Some(v), _) if v != "2.0" => Some("`jsonrpc` must be \"2.0\""),
            (None, _) => Some("`jsonrpc` is missing; it must be \"2.0\""),
            (_, None) => Some("`method` is missing: `trim`, `check` or `policy`"),
            _ => None,
        };
        if let Some(message) = invalid {
            let failure = Failure::usage(message);
            self.refused_or_malformed(&failure, "invalid", Transport::Stdio, received);
            return Some(rpc_error(id, -32600, &failure));
        }
        let method = envelope.method.as_deref().unwrap_or_default();
        let result = self.call(method, envelope.params, received, Transport::Stdio);
        let id = id?;
        Some(match result {
            Ok(result) => format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#,
                String::from_utf8_lossy(id)
            ),
            Err(failure) => {
                let code = if failure.kind == Kind::Lib(ErrorKind::Usage) && method_unknown(method)
                {
                    -32601
                } else {
                    failure.kind.code()
                };
                rpc_error(Some(id), code, &failure)
            }
        })
    }

    /// A reply for a line the reader could not hand to a worker (too
    /// long, or the pool full or closed), with the line's id if it has one.
    pub fn rpc_refusal(&self, line: Option<&[u8]>, failure: &Failure, received: Instant) -> String {
        self.refused_or_malformed(failure, "refused", Transport::Stdio, received);
        let id = line.and_then(|l| {
            envelope(l)
                .ok()
                .and_then(|e| e.id)
                .filter(|id| is_id(id))
                .map(|id| String::from_utf8_lossy(id).into_owned())
        });
        let id = id.as_deref().unwrap_or("null");
        let mut error = failure.to_json();
        error["code"] = failure.kind.code().into();
        format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#)
    }

    /// Counts (and logs) a request that never reached a method.
    pub fn refused_or_malformed(
        &self,
        failure: &Failure,
        method: &'static str,
        transport: Transport,
        received: Instant,
    ) {
        let took = received.elapsed();
        self.state
            .metrics
            .request(method, failure.kind.name(), took);
        let served = self.state.current();
        self.record(Entry {
            error_kind: Some(failure.kind.name()),
            ..self.entry(method, transport, served.gate.policy().hash(), took)
        });
    }

    /// Runs a method. The result is the `result` member's JSON.
    pub fn call(
        &self,
        method: &str,
        params: Option<&[u8]>,
        received: Instant,
        transport: Transport,
    ) -> Result<String, Failure> {
        let served = self.state.current();
        let hash = served.gate.policy().hash();
        let (name, result) = match method {
            "trim" => ("trim", self.trim(&served.gate, params, received, transport)),
            "check" => ("check", self.check(params, received, transport, hash)),
            "policy" => {
                let result = self.state.describe().to_string();
                self.record(self.entry("policy", transport, hash, received.elapsed()));
                ("policy", Ok(result))
            }
            _ => {
                let failure = Failure::usage(format!(
                    "unknown method `{}`; the methods are `trim`, `check` and `policy`",
                    method.escape_debug()
                ));
                self.record(Entry {
                    error_kind: Some(failure.kind.name()),
                    ..self.entry("unknown", transport, hash, received.elapsed())
                });
                ("unknown", Err(failure))
            }
        };
        let took = received.elapsed();
        let outcome = match &result {
            Ok(_) => "ok",
            Err(failure) => failure.kind.name(),
        };
        self.state.metrics.request(name, outcome, took);
        tracing::debug!(
            method = name,
            outcome,
            us = took.as_micros() as u64,
            "request"
        );
        result
    }

    fn trim(
        &self,
        gate: &crate::Gate,
        params: Option<&[u8]>,
        received: Instant,
        transport: Transport,
    ) -> Result<String, Failure> {
        let hash = gate.policy().hash();
        let parsed = Params::parse(params, "trim", TRIM_PARAMS).and_then(|params| {
            let action = params.get::<String>("action")?;
            let target = params.get::<String>("target")?;
            Ok((params, action, target))
        });
        let (params, action, target) = match parsed {
            Ok(parsed) => parsed,
            Err(failure) => {
                self.log_failure("trim", transport, hash, None, None, &failure, received);
                return Err(failure);
            }
        };
        let action = action.as_deref().unwrap_or("focus");
        let target = target.as_deref();
        let fail = |failure: Failure| {
            self.log_failure(
                "trim",
                transport,
                hash,
                Some(action),
                target,
                &failure,
                received,
            );
            Err(failure)
        };
        let asked = params.trim().and_then(|trim| {
            let bytes = params.answer()?;
            Ok((trim.request()?, bytes))
        });
        let (request, bytes) = match asked {
            Ok(asked) => asked,
            Err(failure) => return fail(failure),
        };
        // The request's own timeout can only shorten the server's.
        let timeout = request
            .timeout
            .map_or(self.timeout, |t| t.min(self.timeout));
        let Some(left) = timeout
            .checked_sub(received.elapsed())
            .filter(|d| !d.is_zero())
        else {
            return fail(queued_too_long(timeout, received));
        };
        let trimmed = match gate.trim_bytes(&bytes, &request.timeout(left)) {
            Ok(trimmed) => trimmed,
            Err(err) => return fail(Failure::from(&err)),
        };
        let report = &trimmed.report;
        self.state
            .metrics
            .trimmed(report.evaluations, report.elements);
        self.record(Entry {
            action: Some(action),
            target,
            trim: Some(TrimCounts {
                scope: report.scope,
                format: report.format,
                budgets: &report.budgets,
                elements: report.elements,
                output_bytes: report.output_bytes,
                outcomes: &report.outcomes,
                rules: &report.rules,
                redactions: &report.redactions,
                evaluations: report.evaluations,
            }),
            ..self.entry("trim", transport, hash, received.elapsed())
        });
        Ok(serde_json::to_string(&TrimResult {
            output: &trimmed.rendered,
            report,
        })
        .expect("a report serializes"))
    }

    fn check(
        &self,
        params: Option<&[u8]>,
        received: Instant,
        transport: Transport,
        hash: &str,
    ) -> Result<String, Failure> {
        let result = Params::parse(params, "check", CHECK_PARAMS).and_then(|params| {
            let bytes = params.answer()?;
            crate::check_bytes(&bytes, self.state.limits()).map_err(|e| Failure::from(&e))
        });
        match result {
            Ok(report) => {
                self.record(Entry {
                    conforms: Some(report.conforms),
                    findings: Some(report.findings.len()),
                    ..self.entry("check", transport, hash, received.elapsed())
                });
                Ok(serde_json::to_string(&report).expect("a check report serializes"))
            }
            Err(failure) => {
                self.log_failure("check", transport, hash, None, None, &failure, received);
                Err(failure)
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn log_failure(
        &self,
        method: &'static str,
        transport: Transport,
        hash: &str,
        action: Option<&str>,
        target: Option<&str>,
        failure: &Failure,
        received: Instant,
    ) {
        self.record(Entry {
            action,
            target,
            error_kind: Some(failure.kind.name()),
            ..self.entry(method, transport, hash, received.elapsed())
        });
    }

    fn entry<'a>(
        &self,
        method: &'a str,
        transport: Transport,
        hash: &'a str,
        took: Duration,
    ) -> Entry<'a> {
        Entry {
            time: rfc3339(SystemTime::now() - took),
            request_id: self.sequence.fetch_add(1, Ordering::Relaxed),
            transport: transport.name(),
            method,
            policy_hash: hash,
            action: None,
            target: None,
            trim: None,
            conforms: None,
            findings: None,
            error_kind: None,
            duration_us: took.as_micros() as u64,
        }
    }

    fn record(&self, entry: Entry) {
        if let Some(log) = &self.log {
            log.write(&entry);
        }
    }

    /// Runs `job` on a worker, or the failure to reply with.
    pub fn submit(
        &self,
        job: impl FnOnce(super::pool::Permit) + Send + 'static,
    ) -> Result<(), Failure> {
        self.pool.submit(job).map_err(|refused| match refused {
            Refused::Overloaded => Failure::new(
                Kind::Overloaded,
                format!(
                    "the server is busy: {} requests are running and {} waiting (`--max-concurrency`, `--max-queue`); retry later",
                    self.pool.concurrency, self.pool.queue
                ),
            )
            .with("limit", self.pool.concurrency + self.pool.queue),
            Refused::Closed => Failure::new(
                Kind::ShuttingDown,
                "the server is shutting down and takes no new requests",
            ),
        })
    }

    /// The failure for a request larger than `--max-request-bytes`.
    pub fn too_large(&self, size: Option<usize>) -> Failure {
        let mut failure = Failure::new(
            Kind::Lib(ErrorKind::OverLimit),
            format!(
                "the request is larger than {} bytes (`--max-request-bytes`); send a smaller tree or raise the limit",
                self.max_request_bytes
            ),
        )
        .with("limit", self.max_request_bytes);
        if let Some(size) = size {
            failure = failure.with("size", size);
        }
        failure
    }
}

/// A JSON-RPC id: a string, a number or null (the bytes are valid JSON).
fn is_id(id: &[u8]) -> bool {
    matches!(id.first(), Some(b'"' | b'-' | b'0'..=b'9' | b'n'))
}

fn method_unknown(method: &str) -> bool {
    !matches!(method, "trim" | "check" | "policy")
}

/// `{"jsonrpc": "2.0", "id", "error"}`; the id is `null` when unknown.
fn rpc_error(id: Option<&[u8]>, code: i64, failure: &Failure) -> String {
    let mut error = failure.to_json();
    error["code"] = code.into();
    let id = id.map_or("null".into(), String::from_utf8_lossy);
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#)
}

fn queued_too_long(timeout: Duration, received: Instant) -> Failure {
    Failure::new(
        Kind::Lib(ErrorKind::Deadline),
        format!(
            "the request waited {} ms for a worker, past its deadline of {} ms; nothing was sent (raise `--max-concurrency` or the timeout)",
            received.elapsed().as_millis(),
            timeout.as_millis()
        ),
    )
    .with("stage", "queued")
    .with("limit_ms", timeout.as_millis() as u64)
}
