//! Conformance to protocol 0.2.0 (RFC-0001 section 7): the rules that need
//! the whole tree. Every finding is reported, not just the first, each with
//! a JSON pointer, the element's id, and the requirement it breaks.
//!
//! Shape problems (types, required fields, limits) are found while reading,
//! in [`crate::read`]; [`check_bytes`] runs both stages.

use std::fmt;

use foldhash::{HashMap, HashMapExt};
use serde::Serialize;
use serde_json::Value;

use crate::error::Result;
use crate::limits::Limits;
use crate::model::{related_entry, Answer, Role, Tree, STATES};

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
        write!(f, "{severity}[{}] {pointer}", self.requirement)?;
        if let Some(id) = &self.id {
            write!(f, " (id `{id}`)")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// The result of checking one input.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    /// No errors (warnings allowed).
    pub conforms: bool,
    /// The protocol the input was upgraded from, if it was 0.1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upgraded_from: Option<String>,
    /// Elements read.
    pub elements: usize,
    /// Every finding, in document order of the stage that found it.
    pub findings: Vec<Finding>,
}

/// Reads and checks an answer's bytes. `Err` only when the input cannot be
/// read at all (not JSON, over a limit).
pub fn check_bytes(bytes: &[u8], limits: &Limits) -> Result<CheckReport> {
    let reading = crate::read::read(bytes, limits)?;
    let mut findings = reading.findings;
    let mut elements = 0;
    if let Some(answer) = &reading.answer {
        findings.extend(check(answer));
        elements = Tree::new(&answer.root).len();
    }
    Ok(CheckReport {
        conforms: reading.answer.is_some() && !findings.iter().any(Finding::is_error),
        upgraded_from: reading.upgraded_from,
        elements,
        findings,
    })
}

/// Checks the rules that need the whole tree: R1 (states under
/// `attributes`), the reserved attributes' shape, R3, R4 and R6.
pub fn check(answer: &Answer) -> Vec<Finding> {
    let tree = Tree::new(&answer.root);
    let mut findings = Vec::new();
    // Ids are the provider's, but the map lives for one check, with a seed
    // of its own, and nothing of it leaves: a fast hasher is enough.
    let mut first_place: HashMap<&str, u32> = HashMap::with_capacity(tree.len());
    let mut has_related = false;

    for (at, node) in tree.nodes().iter().enumerate() {
        let at = at as u32;
        let element = node.element;
        let id = || Some(element.id.to_string());
        let pointer = || tree.pointer(at);

        // R3: the root is an Application; roles come from the language.
        match (node.parent, element.role.read(), element.role.is_known()) {
            (None, Role::Application, true) => {}
            (None, _, _) => findings.push(Finding::error(
                Requirement::R3,
                "/root",
                id(),
                format!(
                    "the root must be an `Application`, found `{}`",
                    element.role
                ),
            )),
            (Some(_), Role::Application, _) => findings.push(Finding::warning(
                Requirement::R3,
                pointer(),
                id(),
                "only the root should be an `Application`",
            )),
            (Some(_), _, false) => findings.push(Finding::warning(
                Requirement::R3,
                pointer(),
                id(),
                format!(
                    "role `{}` is not in the role language; it is read as `Group`{}",
                    element.role,
                    did_you_mean(element.role.as_str())
                ),
            )),
            _ => {}
        }

        // R4: ids are unique.
        if !element.id.is_empty() {
            if let Some(&first) = first_place.get(&*element.id) {
                findings.push(Finding::error(
                    Requirement::R4,
                    pointer(),
                    id(),
                    format!(
                        "id `{}` is repeated; it first appears at {}",
                        element.id,
                        tree.pointer(first)
                    ),
                ));
            } else {
                first_place.insert(&*element.id, at);
            }
        }

        // R1: no state repeated under attributes; 4.3: reserved attributes.
        for (name, value) in element.attributes.iter() {
            match name.as_str() {
                state if STATES.contains(&state) => findings.push(Finding::error(
                    Requirement::R1,
                    format!("{}/attributes/{state}", pointer()),
                    id(),
                    format!("state `{state}` is stated under `attributes`; state it once, as the element's own `{state}` field"),
                )),
                "author" if !value.is_string() => findings.push(Finding::error(
                    Requirement::Schema,
                    format!("{}/attributes/author", pointer()),
                    id(),
                    "reserved attribute `author` must be a string",
                )),
                "related" => {
                    check_related(value, pointer, id, &mut findings);
                    has_related = true;
                }
                _ => {}
            }
        }

        // R6 and 4.1's focus rule.
        if node.focused {
            match node.parent {
                None => findings.push(Finding::error(
                    Requirement::R6,
                    "/root",
                    id(),
                    "the root is not on the focus path, which starts at the root's child; remove `focused` from the root",
                )),
                Some(parent) if parent != 0 && !tree.node(parent).focused => {
                    findings.push(Finding::error(
                        Requirement::R6,
                        pointer(),
                        id(),
                        format!(
                            "focused element under an unfocused parent (id `{}`): the focus path must be unbroken from the root's child down",
                            tree.node(parent).element.id
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
    }

    // Two focused siblings: the path would fork.
    for (at, node) in tree.nodes().iter().enumerate() {
        if !(node.focused || at == 0) {
            continue;
        }
        let focused: Vec<u32> = tree
            .children(at as u32)
            .filter(|&c| tree.node(c).focused)
            .collect();
        if let [first, rest @ ..] = focused.as_slice() {
            let first = *first;
            for &other in rest {
                findings.push(Finding::error(
                    Requirement::R6,
                    tree.pointer(other),
                    Some(tree.node(other).element.id.to_string()),
                    format!(
                        "two focused siblings: this one and `{}` at {}; the focus path is one path",
                        tree.node(first).element.id,
                        tree.pointer(first)
                    ),
                ));
            }
        }
    }

    // related ids that name no element.
    for (at, node) in tree.nodes().iter().enumerate().filter(|_| has_related) {
        for link in node.element.attributes.related() {
            if let crate::model::RelatedTarget::Id(target) = link.target {
                if !first_place.contains_key(target) {
                    findings.push(Finding::warning(
                        Requirement::Schema,
                        format!("{}/attributes/related", tree.pointer(at as u32)),
                        Some(node.element.id.to_string()),
                        format!("`related` names id `{target}`, which is not in this answer"),
                    ));
                }
            }
        }
    }
    findings
}

/// Checks a `related` attribute; the place is built only for a finding.
fn check_related(
    related: &Value,
    pointer: impl Fn() -> String,
    id: impl Fn() -> Option<String>,
    findings: &mut Vec<Finding>,
) {
    let Value::Array(entries) = related else {
        findings.push(Finding::error(
            Requirement::Schema,
            format!("{}/attributes/related", pointer()),
            id(),
            "reserved attribute `related` must be an array of `{\"relation\", \"id\" | \"url\"}`",
        ));
        return;
    };
    for (i, entry) in entries.iter().enumerate() {
        if related_entry(entry).is_none() {
            findings.push(Finding::error(
                Requirement::Schema,
                format!("{}/attributes/related/{i}", pointer()),
                id(),
                "a `related` entry must be `{\"relation\": string, \"id\": string}` or `{\"relation\": string, \"url\": string}`",
            ));
        }
    }
}

/// ` (did you mean `Text`?)` when `word` is close to a role, else empty.
pub fn did_you_mean(word: &str) -> String {
    let near = Role::from_apple(word)
        .map(Role::as_str)
        .or_else(|| crate::suggest::closest(word, Role::ALL.iter().map(|r| r.as_str())));
    match near {
        Some(role) => format!(" (did you mean `{role}`?)"),
        None => String::new(),
    }
}
