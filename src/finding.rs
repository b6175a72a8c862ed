//! Findings: what is wrong with an answer, where (a JSON pointer), and the
//! requirement it breaks. It uses only `escape` (to show ids and messages
//! with hidden chars visible), so the reader, the checker, the error type
//! and the model all use it without depending on one another.
//!
//! A finding never carries a title, content, a url or an attribute value:
//! ids, roles and field names only.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

/// The requirement a finding breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Requirement {
    /// State is stated only on the element it describes.
    R1,
    /// Roles come from the language; the root is an Application.
    R3,
    /// Ids are unique.
    R4,
    /// Selected and focused elements are reachable: the focus path is one
    /// unbroken path from the root's child down (RFC-0001 4.1).
    R6,
    /// The element's fields and the answer's shape (RFC-0001 4.1, 4.3, 4.4).
    #[serde(rename = "4.1")]
    Schema,
    /// The protocol version (RFC-0001 4.5, 5).
    #[serde(rename = "4.5")]
    Version,
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Requirement::R1 => "R1",
            Requirement::R3 => "R3",
            Requirement::R4 => "R4",
            Requirement::R6 => "R6",
            Requirement::Schema => "4.1",
            Requirement::Version => "4.5",
        })
    }
}

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The answer does not conform.
    Error,
    /// The answer conforms, but something deserves a look.
    Warning,
}

/// One problem, where it is, and what it breaks. Never carries titles,
/// content, urls or attribute values: ids, roles and field names only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Error or warning.
    pub severity: Severity,
    /// The requirement broken.
    pub requirement: Requirement,
    /// The JSON pointer of the element or field.
    pub pointer: String,
    /// The element's id, where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// What is wrong and what to do.
    pub message: String,
}

impl Finding {
    /// An error.
    pub fn error(
        requirement: Requirement,
        pointer: impl Into<String>,
        id: Option<String>,
        message: impl Into<String>,
    ) -> Finding {
        Finding {
            severity: Severity::Error,
            requirement,
            pointer: pointer.into(),
            id,
            message: message.into(),
        }
    }

    /// A warning.
    pub fn warning(
        requirement: Requirement,
        pointer: impl Into<String>,
        id: Option<String>,
        message: impl Into<String>,
    ) -> Finding {
        Finding {
            severity: Severity::Warning,
            ..Finding::error(requirement, pointer, id, message)
        }
    }

    /// Whether the answer fails to conform because of this.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let severity = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let pointer = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        // Pointers, ids and messages carry a provider's keys, ids and role
        // words: none may start a line or steer a terminal.
        let visible = crate::escape::visible;
        write!(f, "{severity}[{}] {}", self.requirement, visible(pointer))?;
        if let Some(id) = &self.id {
            write!(f, " (id `{}`)", visible(id))?;
        }
        write!(f, ": {}", visible(&self.message))
    }
}

/// Escapes a key for a JSON pointer (RFC 6901).
pub fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The JSON kind of a value, for messages (`a number`, `an array`).
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
