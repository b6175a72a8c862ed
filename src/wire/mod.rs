//! The wire form, the same for every front end (`ctxgate trim --json`,
//! `ctxgate serve` over stdio and HTTP, the MCP proxy, the Python binding):
//!
//! - **parameters → [`Request`]**: [`TrimParams`], built from a JSON params
//!   object ([`Params`]), keyword arguments or flags, with the conversions
//!   of one parameter each ([`format()`], [`budget()`], [`timeout_ms`],
//!   [`timeout_seconds`]); every message names the parameter at fault;
//! - **the result**: [`TrimResult`], `{"output", "report"}`;
//! - **the error object**: [`Failure`], `{"code", "message", "data":
//!   {"kind", …}}`, whose `data` holds the error's structured parts
//!   (positions, limits, findings, the file);
//! - **the codes of each kind**: [`codes`], the one table from
//!   [`ErrorKind`] to its `data.kind` word, the command's exit code, the
//!   JSON-RPC code, the HTTP status and the Python exception class; [`Kind`]
//!   adds the server's own `overloaded` and `shutting_down`.
//!
//! No message or field carries an element's text: errors name pointers,
//! ids, sizes and files, with hidden characters written as `\uXXXX`.

mod members;

use std::borrow::Cow;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};

pub(crate) use members::{members, Problem};

use crate::{Budget, Error, ErrorKind, Format, Report, Request};

/// How an error of one [`ErrorKind`] goes out on each front end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Codes {
    /// The kind as one snake_case word: `data.kind` of the error object.
    pub name: &'static str,
    /// The `ctxgate` command's exit code: 1 when the input was judged and
    /// found wanting, 2 for usage, I/O, policy and internal errors.
    pub exit: u8,
    /// The JSON-RPC error code: -32602 (invalid params) for a request that
    /// asks for what cannot be done, -32603 for a bug, the rest in the range
    /// JSON-RPC leaves to servers. Clients decide by `data.kind`.
    pub rpc: i64,
    /// The HTTP status of the reply.
    pub http: u16,
    /// The Python exception class, in `ctxgate` (each a subclass of
    /// `ctxgate.Error`).
    pub python: &'static str,
}

/// The codes of `kind`: the one table every front end reads.
pub const fn codes(kind: ErrorKind) -> Codes {
    let (name, exit, rpc, http, python) = match kind {
        ErrorKind::InvalidInput => ("invalid_input", 1, -32001, 400, "InvalidInput"),
        ErrorKind::NotConforming => ("not_conforming", 1, -32002, 422, "NotConforming"),
        ErrorKind::OverLimit => ("over_limit", 1, -32003, 413, "LimitExceeded"),
        ErrorKind::BudgetUnreachable => ("budget_unreachable", 1, -32004, 422, "BudgetUnreachable"),
        ErrorKind::Deadline => ("deadline", 1, -32005, 504, "DeadlineExceeded"),
        ErrorKind::Policy => ("policy", 2, -32010, 500, "PolicyError"),
        ErrorKind::Io => ("io", 2, -32011, 500, "IoError"),
        ErrorKind::Usage => ("usage", 2, -32602, 400, "UsageError"),
        ErrorKind::Internal => ("internal", 2, -32603, 500, "InternalError"),
    };
    Codes {
        name,
        exit,
        rpc,
        http,
        python,
    }
}

/// What kind of failure an error object is: the library's kinds and the
/// server's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kind {
    /// One of the library's kinds.
    Lib(ErrorKind),
    /// Every worker of the server is busy and its queue is full; try again
    /// later.
    Overloaded,
    /// The server stopped taking requests (SIGTERM or end of input).
    ShuttingDown,
}

impl Kind {
    /// The `data.kind` word.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Lib(kind) => codes(kind).name,
            Kind::Overloaded => "overloaded",
            Kind::ShuttingDown => "shutting_down",
        }
    }

    /// The JSON-RPC error code.
    pub fn code(self) -> i64 {
        match self {
            Kind::Lib(kind) => codes(kind).rpc,
            Kind::Overloaded => -32020,
            Kind::ShuttingDown => -32021,
        }
    }

    /// The HTTP status.
    pub fn status(self) -> u16 {
        match self {
            Kind::Lib(kind) => codes(kind).http,
            Kind::Overloaded | Kind::ShuttingDown => 503,
        }
    }
}

/// The result of a trim as sent: what may be sent, and the report (the
/// object `ctxgate trim --report` writes).
#[derive(Serialize)]
pub struct TrimResult<'r, 'a> {
    /// The rendered output, exactly the bytes the budget measured.
    pub output: &'r str,
    /// The report.
    pub report: &'r Report<'a>,
}

/// An error as sent: JSON-RPC's error object, and what a binding raises.
#[derive(Debug, Clone)]
pub struct Failure {
    /// Its kind.
    pub kind: Kind,
    /// One line for a person, hidden characters written as `\uXXXX`.
    pub message: String,
    /// `data` without `kind`: the structured fields.
    pub fields: Map<String, Value>,
}

impl Failure {
    /// A failure with a message and no structured fields.
    pub fn new(kind: Kind, message: impl Into<String>) -> Failure {
        Failure {
            kind,
            message: crate::escape::visible(&message.into()).into_owned(),
            fields: Map::new(),
        }
    }

    /// A request that asks for what cannot be done ([`ErrorKind::Usage`]).
    pub fn usage(message: impl Into<String>) -> Failure {
        Failure::new(Kind::Lib(ErrorKind::Usage), message)
    }

    /// Adds a structured field.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Failure {
        self.fields.insert(key.to_string(), value.into());
        self
    }

    /// `{"code", "message", "data": {"kind", …}}`.
    pub fn to_json(&self) -> Value {
        let mut data = Map::new();
        data.insert("kind".into(), self.kind.name().into());
        data.extend(self.fields.clone());
        json!({"code": self.kind.code(), "message": self.message, "data": data})
    }
}

impl From<&Error> for Failure {
    fn from(err: &Error) -> Failure {
        let mut failure = Failure::new(Kind::Lib(err.kind()), err.to_string());
        if let Some(line) = err.line() {
            failure = failure.with("line", line);
        }
        if let Some(column) = err.column() {
            failure = failure.with("column", column);
        }
        if let Some(pointer) = err.pointer() {
            failure = failure.with("pointer", pointer);
        }
        if let Some((file, line, column)) = err.policy_location() {
            failure = failure.with("file", file);
            if let Some(line) = line {
                failure = failure.with("line", line);
            }
            if let Some(column) = column {
                failure = failure.with("column", column);
            }
        }
        match err {
            Error::InputTooLarge { size, limit } | Error::ContentTooLarge { size, limit, .. } => {
                failure.with("size", *size).with("limit", *limit)
            }
            Error::TooDeep { limit, .. }
            | Error::TooManyElements { limit }
            | Error::TooManyProjections { limit } => failure.with("limit", *limit),
            Error::NotConforming { findings } => failure.with(
                "findings",
                serde_json::to_value(findings).expect("findings serialize"),
            ),
            Error::BudgetUnreachable {
                budget,
                needed,
                unit,
            } => failure
                .with("budget", *budget)
                .with("needed", *needed)
                .with("unit", *unit),
            Error::PolicyEval { rule, .. } => failure.with("rule", rule.as_str()),
            Error::UnknownTarget { id } => failure.with("target", id.as_str()),
            Error::Deadline { stage, limit } => failure
                .with("stage", stage.to_string())
                .with("limit_ms", limit.as_millis() as u64),
            Error::Io { path, .. } => failure.with("file", path.as_str()),
            Error::Import { format, .. } => failure.with("format", *format),
            _ => failure,
        }
    }
}

/// The parameters of a trim, typed; [`TrimParams::request`] makes the
/// [`Request`]. Absent parameters are the library's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TrimParams {
    /// The user's action (`selection`, `focus`, `window`, `app`, or a
    /// host's own word); `None`: `focus`.
    pub action: Option<String>,
    /// The element the action names.
    pub target: Option<String>,
    /// A budget in o200k_base tokens.
    pub max_tokens: Option<usize>,
    /// A budget in bytes.
    pub max_bytes: Option<usize>,
    /// The output format; `None`: JSON.
    pub format: Option<Format>,
    /// How long the request may take; `None`: [`crate::DEFAULT_TIMEOUT`].
    pub timeout: Option<Duration>,
}

impl TrimParams {
    /// The request these parameters ask for; a [`ErrorKind::Usage`]
    /// failure for both budgets at once.
    pub fn request(&self) -> Result<Request, Failure> {
        let mut request = Request::new(self.action.as_deref().unwrap_or("focus"))
            .format(self.format.unwrap_or_default());
        if let Some(target) = &self.target {
            request = request.target(target.clone());
        }
        if let Some(budget) = budget(self.max_tokens, self.max_bytes)? {
            request = request.budget(budget);
        }
        if let Some(timeout) = self.timeout {
            request = request.timeout(timeout);
        }
        Ok(request)
    }
}

/// The output format a `format` parameter names: `json` or `outline`.
pub fn format(word: &str) -> Result<Format, Failure> {
    match word {
        "json" => Ok(Format::Json),
        "outline" => Ok(Format::Outline),
        other => Err(Failure::usage(format!(
            "unknown format `{}`; expected `json` or `outline`",
            other.escape_debug()
        ))),
    }
}

/// The budget `max_tokens` or `max_bytes` asks for, if either; both at once
/// is a usage failure. A budget of 0 is the library's to refuse
/// ([`Error::ZeroBudget`]).
pub fn budget(
    max_tokens: Option<usize>,
    max_bytes: Option<usize>,
) -> Result<Option<Budget>, Failure> {
    match (max_tokens, max_bytes) {
        (Some(_), Some(_)) => Err(Failure::usage("give `max_tokens` or `max_bytes`, not both")),
        (Some(n), None) => Ok(Some(Budget::Tokens(n))),
        (None, Some(n)) => Ok(Some(Budget::Bytes(n))),
        (None, None) => Ok(None),
    }
}

/// The deadline a `timeout_ms` parameter asks for: at least 1 ms.
pub fn timeout_ms(ms: u64) -> Result<Duration, Failure> {
    match ms {
        0 => Err(Failure::usage("`timeout_ms` must be at least 1")),
        ms => Ok(Duration::from_millis(ms)),
    }
}

/// The deadline a `timeout` in seconds asks for: a positive number a
/// [`Duration`] can hold.
pub fn timeout_seconds(seconds: f64) -> Result<Duration, Failure> {
    match Duration::try_from_secs_f64(seconds) {
        Ok(timeout) if !timeout.is_zero() => Ok(timeout),
        _ => Err(Failure::usage(format!(
            "a timeout must be a positive number of seconds, not {seconds}"
        ))),
    }
}

/// The keys of `trim`'s params object.
pub const TRIM_PARAMS: &[&str] = &[
    "answer",
    "answer_text",
    "action",
    "target",
    "max_tokens",
    "max_bytes",
    "format",
    "timeout_ms",
];

/// The keys of `check`'s params object.
pub const CHECK_PARAMS: &[&str] = &["answer", "answer_text"];

/// A JSON params object of one method: its members, each value the bytes
/// it arrived as, so the answer is read once, by the gate, with its own
/// limits.
#[derive(Debug)]
pub struct Params<'a> {
    method: &'a str,
    members: Vec<(String, &'a [u8])>,
}

impl<'a> Params<'a> {
    /// The params of `method` (`None` or `null` is a usage failure that
    /// says what to send), each key one of `allowed` ([`TRIM_PARAMS`],
    /// [`CHECK_PARAMS`]).
    pub fn parse(
        params: Option<&'a [u8]>,
        method: &'a str,
        allowed: &[&str],
    ) -> Result<Params<'a>, Failure> {
        let params = params.filter(|p| *p != b"null").ok_or_else(|| {
            Failure::usage(format!(
                "`{method}` needs params: {{\"answer\": {{…}}}} or {{\"answer_text\": \"…\"}}"
            ))
        })?;
        let members = members(params).map_err(|problem| match problem {
            Problem::Json(err) => Failure::new(
                Kind::Lib(ErrorKind::InvalidInput),
                format!("the params are not JSON: {err}; send one JSON object"),
            )
            .with("line", err.line())
            .with("column", err.column()),
            Problem::Shape(message) => {
                Failure::usage(format!("invalid params for `{method}`: {message}"))
            }
        })?;
        if let Some((key, _)) = members.iter().find(|(k, _)| !allowed.contains(&k.as_str())) {
            return Err(Failure::usage(format!(
                "invalid params for `{method}`: unknown field `{}`, expected one of `{}`",
                key.escape_debug(),
                allowed.join("`, `")
            )));
        }
        Ok(Params { method, members })
    }

    /// A member's bytes as written, `null` counting as absent.
    pub fn raw(&self, key: &str) -> Option<&'a [u8]> {
        self.members
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| *v)
            .filter(|v| *v != b"null")
    }

    /// A member as a `T`, `null` counting as absent.
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, Failure> {
        self.raw(key)
            .map(|bytes| {
                serde_json::from_slice::<T>(bytes).map_err(|err| {
                    Failure::usage(format!(
                        "invalid params for `{}`: `{key}`: {err}",
                        self.method
                    ))
                })
            })
            .transpose()
    }

    /// The answer's bytes: the `answer` object as written, or the text of
    /// `answer_text`; exactly one of the two.
    pub fn answer(&self) -> Result<Cow<'a, [u8]>, Failure> {
        let text = self.get::<String>("answer_text")?;
        match (self.raw("answer"), text) {
            (Some(answer), None) => Ok(Cow::Borrowed(answer)),
            (None, Some(text)) => Ok(Cow::Owned(text.into_bytes())),
            (Some(_), Some(_)) => Err(Failure::usage(
                "give `answer` or `answer_text`, not both",
            )),
            (None, None) => Err(Failure::usage(
                "the params need the answer: `answer` (an object) or `answer_text` (its JSON as a string)",
            )),
        }
    }

    /// The trim parameters (every key of [`TRIM_PARAMS`] but the answer).
    pub fn trim(&self) -> Result<TrimParams, Failure> {
        Ok(TrimParams {
            action: self.get("action")?,
            target: self.get("target")?,
            max_tokens: self.get("max_tokens")?,
            max_bytes: self.get("max_bytes")?,
            format: self
                .get::<String>("format")?
                .as_deref()
                .map(format)
                .transpose()?,
            timeout: self.get::<u64>("timeout_ms")?.map(timeout_ms).transpose()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    /// Every kind has a row, and the words a client decides by (the
    /// `data.kind` word, the JSON-RPC code, the Python class) name one kind
    /// each, the server's own included. Exit codes and HTTP statuses are
    /// shared by design.
    #[test]
    fn the_table_is_total_and_its_names_and_codes_are_distinct() {
        let mut kinds: Vec<Kind> = ErrorKind::ALL.iter().map(|k| Kind::Lib(*k)).collect();
        kinds.extend([Kind::Overloaded, Kind::ShuttingDown]);
        let names: HashSet<_> = kinds.iter().map(|k| k.name()).collect();
        let rpc: HashSet<_> = kinds.iter().map(|k| k.code()).collect();
        let python: HashSet<_> = ErrorKind::ALL.iter().map(|k| codes(*k).python).collect();
        assert_eq!(names.len(), kinds.len(), "{names:?}");
        assert_eq!(rpc.len(), kinds.len(), "{rpc:?}");
        assert_eq!(python.len(), ErrorKind::ALL.len(), "{python:?}");
        for kind in ErrorKind::ALL {
            let row = codes(*kind);
            assert!(matches!(row.exit, 1 | 2), "{kind:?}");
            assert!((400..600).contains(&row.http), "{kind:?}");
            assert!(
                row.name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{kind:?}"
            );
        }
        // JSON-RPC's own meanings where they fit.
        assert_eq!(codes(ErrorKind::Usage).rpc, -32602);
        assert_eq!(codes(ErrorKind::Internal).rpc, -32603);
        // A server's kinds are 503; no library error is.
        assert_eq!(Kind::Overloaded.status(), 503);
        assert!(ErrorKind::ALL.iter().all(|k| codes(*k).http != 503));
    }

    #[test]
    fn a_budget_error_names_what_is_needed() {
        let err = Error::BudgetUnreachable {
            budget: 10,
            needed: 42,
            unit: "bytes",
        };
        let json = Failure::from(&err).to_json();
        assert_eq!(json["code"], -32004);
        assert_eq!(json["data"]["kind"], "budget_unreachable");
        assert_eq!(json["data"]["needed"], 42);
    }

    #[test]
    fn a_policy_error_names_file_line_and_column() {
        let err = Error::Policy {
            location: "a.rego:2:7".into(),
            message: "unexpected token".into(),
        };
        let json = Failure::from(&err).to_json();
        assert_eq!(json["data"]["kind"], "policy");
        assert_eq!(json["data"]["file"], "a.rego");
        assert_eq!(json["data"]["line"], 2);
        assert_eq!(json["data"]["column"], 7);
    }

    #[test]
    fn params_become_a_request_or_a_failure_naming_the_parameter() {
        let params = |text: &'static str| Params::parse(Some(text.as_bytes()), "trim", TRIM_PARAMS);
        let request = params(r#"{"answer": {}, "action": "app", "target": "e1", "max_bytes": 900, "format": "outline", "timeout_ms": 250}"#)
            .and_then(|p| p.trim())
            .and_then(|t| t.request())
            .unwrap();
        assert_eq!(
            request,
            Request::new("app")
                .target("e1")
                .budget(Budget::Bytes(900))
                .format(Format::Outline)
                .timeout(Duration::from_millis(250))
        );
        assert_eq!(
            TrimParams::default().request().unwrap(),
            Request::new("focus")
        );
        let message = |text: &'static str| {
            params(text)
                .and_then(|p| p.trim()?.request().map(|_| ()).and(p.answer().map(|_| ())))
                .unwrap_err()
                .message
        };
        for (text, expected) in [
            (r#"{"max_token": 1}"#, "invalid params for `trim`: unknown field `max_token`, expected one of `answer`, `answer_text`, `action`, `target`, `max_tokens`, `max_bytes`, `format`, `timeout_ms`"),
            (r#"{"max_tokens": "x"}"#, "invalid params for `trim`: `max_tokens`: invalid type: string \"x\", expected usize at line 1 column 3"),
            (r#"{"format": "yaml"}"#, "unknown format `yaml`; expected `json` or `outline`"),
            (r#"{"timeout_ms": 0}"#, "`timeout_ms` must be at least 1"),
            (r#"{"max_tokens": 1, "max_bytes": 1}"#, "give `max_tokens` or `max_bytes`, not both"),
            (r#"{"answer": {}, "answer_text": "{}"}"#, "give `answer` or `answer_text`, not both"),
            (r#"{"action": "app"}"#, "the params need the answer: `answer` (an object) or `answer_text` (its JSON as a string)"),
            (r#"{"a": 1, "a": 2}"#, "invalid params for `trim`: the key `a` appears twice"),
        ] {
            assert_eq!(message(text), expected, "{text}");
        }
        assert_eq!(
            Params::parse(None, "check", CHECK_PARAMS)
                .unwrap_err()
                .message,
            "`check` needs params: {\"answer\": {…}} or {\"answer_text\": \"…\"}"
        );
        let not_json = Params::parse(Some(b"{"), "trim", TRIM_PARAMS).unwrap_err();
        assert_eq!(not_json.kind, Kind::Lib(ErrorKind::InvalidInput));
        assert_eq!(
            timeout_seconds(-1.0).unwrap_err().message,
            "a timeout must be a positive number of seconds, not -1"
        );
        assert_eq!(timeout_seconds(0.5).unwrap(), Duration::from_millis(500));
    }

    #[test]
    fn messages_show_hidden_characters() {
        let err = Error::UnknownTarget {
            id: "e\u{202e}1".into(),
        };
        let failure = Failure::from(&err);
        assert_eq!(
            failure.message,
            "target `e\\u202e1` is not an element of this answer"
        );
        assert_eq!(failure.fields["target"], "e\u{202e}1");
    }
}
