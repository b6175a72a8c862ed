//! What goes over the wire, for every transport and for `trim --json`: the
//! `{"output", "report"}` result and the error object `{"code", "message",
//! "data": {"kind", …}}`. `data.kind` is [`ErrorKind`] in snake_case (plus
//! the server's own `overloaded` and `shutting_down`); the other fields of
//! `data` are the error's structured parts: positions, limits, findings.
//! Never an element's text: errors name pointers, ids, sizes and files.

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::{Error, ErrorKind, Report};

/// The result of `trim`: what may be sent, and the report (the object
/// `trim --report` writes).
#[derive(Serialize)]
pub struct TrimResult<'r, 'a> {
    /// The rendered output, exactly the bytes the budget measured.
    pub output: &'r str,
    /// The report.
    pub report: &'r Report<'a>,
}

/// What kind of failure a reply is: the library's kinds and the server's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// One of the library's (and the CLI's) kinds.
    Lib(ErrorKind),
    /// Every worker is busy and the queue is full; try again later.
    Overloaded,
    /// The server stopped taking requests (SIGTERM or end of input).
    ShuttingDown,
}

impl Kind {
    /// The `data.kind` word.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Lib(kind) => kind_name(kind),
            Kind::Overloaded => "overloaded",
            Kind::ShuttingDown => "shutting_down",
        }
    }

    /// The JSON-RPC error code. -32602 (invalid params) for a request that
    /// asks for what cannot be done, -32603 for a bug; the rest are in the
    /// range JSON-RPC leaves to servers. Clients decide by `data.kind`.
    pub fn code(self) -> i64 {
        match self {
            Kind::Lib(kind) => match kind {
                ErrorKind::InvalidInput => -32001,
                ErrorKind::NotConforming => -32002,
                ErrorKind::OverLimit => -32003,
                ErrorKind::BudgetUnreachable => -32004,
                ErrorKind::Deadline => -32005,
                ErrorKind::Policy => -32010,
                ErrorKind::Io => -32011,
                ErrorKind::Usage => -32602,
                ErrorKind::Internal => -32603,
            },
            Kind::Overloaded => -32020,
            Kind::ShuttingDown => -32021,
        }
    }

    /// The HTTP status of an error of this kind.
    pub fn status(self) -> u16 {
        match self {
            Kind::Lib(kind) => match kind {
                ErrorKind::InvalidInput | ErrorKind::Usage => 400,
                ErrorKind::NotConforming | ErrorKind::BudgetUnreachable => 422,
                ErrorKind::OverLimit => 413,
                ErrorKind::Deadline => 504,
                ErrorKind::Policy | ErrorKind::Io | ErrorKind::Internal => 500,
            },
            Kind::Overloaded | Kind::ShuttingDown => 503,
        }
    }
}

/// [`ErrorKind`] as one snake_case word. Exhaustive inside the crate: a new
/// kind stops this compiling until it has a name.
pub fn kind_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::InvalidInput => "invalid_input",
        ErrorKind::NotConforming => "not_conforming",
        ErrorKind::OverLimit => "over_limit",
        ErrorKind::BudgetUnreachable => "budget_unreachable",
        ErrorKind::Policy => "policy",
        ErrorKind::Deadline => "deadline",
        ErrorKind::Io => "io",
        ErrorKind::Usage => "usage",
        ErrorKind::Internal => "internal",
    }
}

/// An error as sent: JSON-RPC's error object.
#[derive(Debug, Clone)]
pub struct Failure {
    /// Its kind.
    pub kind: Kind,
    /// One line for a person, controls escaped.
    pub message: String,
    /// `data` without `kind`: the structured fields.
    pub fields: Map<String, Value>,
}

impl Failure {
    /// A failure with a message and no structured fields.
    pub fn new(kind: Kind, message: impl Into<String>) -> Failure {
        Failure {
            kind,
            message: crate::render::visible(&message.into()).into_owned(),
            fields: Map::new(),
        }
    }

    /// A request that asks for what cannot be done.
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
        let mut failure = Failure::new(Kind::Lib(err.kind()), format!("{err:#}"));
        if let Some(line) = err.line() {
            failure = failure.with("line", line);
        }
        if let Some(column) = err.column() {
            failure = failure.with("column", column);
        }
        if let Some(pointer) = err.pointer() {
            failure = failure.with("pointer", pointer);
        }
        match err {
            Error::InputTooLarge { size, limit } => {
                failure.with("size", *size).with("limit", *limit)
            }
            Error::ContentTooLarge { size, limit, .. } => {
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
            Error::Policy { location, .. } => {
                let (file, line, column) = split_location(location);
                failure = failure.with("file", file);
                if let Some(line) = line {
                    failure = failure.with("line", line);
                }
                if let Some(column) = column {
                    failure = failure.with("column", column);
                }
                failure
            }
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

/// `file:line:col`, `file:line` or `file` into its parts.
pub fn split_location(location: &str) -> (String, Option<usize>, Option<usize>) {
    let number = |s: &str| s.parse::<usize>().ok();
    let Some((rest, last)) = location
        .rsplit_once(':')
        .filter(|(_, n)| number(n).is_some())
    else {
        return (location.to_string(), None, None);
    };
    match rest.rsplit_once(':').filter(|(_, n)| number(n).is_some()) {
        Some((file, line)) => (file.to_string(), number(line), number(last)),
        None => (rest.to_string(), number(last), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_split_into_file_line_and_column() {
        assert_eq!(
            split_location("p/x.rego:3:14"),
            ("p/x.rego".to_string(), Some(3), Some(14))
        );
        assert_eq!(
            split_location("p/x.rego:3"),
            ("p/x.rego".to_string(), Some(3), None)
        );
        assert_eq!(split_location("(none)"), ("(none)".to_string(), None, None));
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
}
