//! `ax-json`: a macOS window as nested JSON. Two schemas real files use
//! are read, per node:
//!
//! * macapptree's (Screen2AX's `system_acc.json`): `role` (an AX role),
//!   `subrole` (when present), `name`, `description`, `role_description`,
//!   `value`, `visible` and `children`. These files carry no subrole, so a
//!   window's own buttons are told apart by `role_description` ("close
//!   button", furniture), and a secure field by "secure text field".
//! * Screen2AX's own output, a hierarchy read from a screenshot: `cls`
//!   (`Group`, `Text`, `AXButton`, `AXImage`, `AXLink`, `AXTextArea`,
//!   `AXDisclosureTriangle`), `value` (the text or the caption), `box` and
//!   `children`.
//!
//! Roles go through RFC-0001 4.2's table. A node in neither schema, a
//! `children` that is not a list, or a child that is not an object, is an
//! error naming its JSON pointer: a tree the importer does not understand
//! is refused, never imported as an empty shell.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::build::{Kind, Node};
use super::{error, json, kind_of, quoted, roles, Format};
use crate::error::Result;
use crate::model::Role;

const FORMAT: Format = Format::AxJson;

/// Window furniture these files name only in `role_description`.
const FURNITURE_DESCRIPTIONS: &[(&str, &str)] = &[
    ("close button", "AXCloseButton"),
    ("minimize button", "AXMinimizeButton"),
    ("full screen button", "AXFullScreenButton"),
    ("zoom button", "AXZoomButton"),
];

pub(crate) fn parse(bytes: &[u8]) -> Result<Vec<Node>> {
    let value = json(FORMAT, bytes)?;
    let mut pointer = String::new();
    match &value {
        Value::Object(object) => Ok(vec![node(object, 0, &mut pointer)?]),
        Value::Array(items) if !items.is_empty() => {
            let mut roots = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                pointer.clear();
                let _ = write!(pointer, "/{i}");
                let Value::Object(object) = item else {
                    return Err(not_a_node(&pointer, item));
                };
                roots.push(node(object, 0, &mut pointer)?);
            }
            Ok(roots)
        }
        _ => Err(error(
            FORMAT,
            None,
            "expected a JSON object with `role` and `children` (or an array of them)",
        )),
    }
}

/// Whether a secure field has a value, without reading it further: only
/// that it is a non-empty string.
fn has_value(object: &Map<String, Value>) -> bool {
    object
        .get("value")
        .and_then(Value::as_str)
        .is_some_and(|v| !v.is_empty())
}

fn string<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    object
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// `pointer` as a reader sees it: the document itself has the empty pointer.
fn shown(pointer: &str) -> String {
    if pointer.is_empty() {
        "the top-level object".to_string()
    } else {
        format!("`{pointer}`")
    }
}

fn not_a_node(pointer: &str, value: &Value) -> crate::error::Error {
    let what = kind_of(value);
    error(
        FORMAT,
        None,
        format!("{} is {what}, not a node: expected an object with `role` (macapptree) or `cls` (Screen2AX)", shown(pointer)),
    )
}

/// The node's role word and which schema it is in (`true`: Screen2AX's).
fn role_of<'a>(object: &'a Map<String, Value>, pointer: &str) -> Result<(&'a str, bool)> {
    for (key, screen2ax) in [("role", false), ("cls", true)] {
        match object.get(key) {
            Some(Value::String(word)) if !word.is_empty() => return Ok((word, screen2ax)),
            None | Some(Value::Null) => {}
            Some(_) => {
                return Err(error(
                    FORMAT,
                    None,
                    format!(
                    "`{pointer}/{key}` is not a role name: expected a string such as `AXWindow`"
                ),
                ))
            }
        }
    }
    // Key names only, a few and short: the message says what the node
    // looks like without copying the input into it. Each is a JSON string
    // literal, so a newline or an ESC in a key is written escaped.
    let mut keys: Vec<String> = object
        .keys()
        .take(8)
        .map(|k| k.chars().take(32).collect())
        .collect();
    keys.sort_unstable();
    let found = if keys.is_empty() {
        "it has no keys".to_string()
    } else {
        let keys: Vec<String> = keys.iter().map(|k| quoted(k)).collect();
        format!("its keys are {}", keys.join(", "))
    };
    Err(error(
        FORMAT,
        None,
        format!(
            "{} has neither `role` (macapptree) nor `cls` (Screen2AX output); {found}",
            shown(pointer)
        ),
    ))
}

fn node(object: &Map<String, Value>, depth: usize, pointer: &mut String) -> Result<Node> {
    if depth > super::MAX_DEPTH {
        return Err(error(
            FORMAT,
            None,
            format!("the tree is deeper than {} levels", super::MAX_DEPTH),
        ));
    }
    let (role, screen2ax) = role_of(object, pointer)?;
    let description = string(object, "role_description");
    // A secure role description makes a secure field whatever the subrole
    // says: either signal is enough to withhold it.
    let subrole = if description.is_some_and(crate::floor::describes_secure_field) {
        Some("AXSecureTextField")
    } else {
        string(object, "subrole").or_else(|| {
            let description = description?;
            FURNITURE_DESCRIPTIONS
                .iter()
                .find(|(d, _)| description.eq_ignore_ascii_case(d))
                .map(|(_, s)| *s)
        })
    };
    let entry = roles::apple(role, subrole);
    let mut node = Node::new(role, entry.kind);
    if screen2ax {
        // A hierarchy read from pixels: no ids, states or subroles; `value`
        // is what the node shows (text) or a caption of it (its title).
        match entry.kind {
            Kind::Report(Role::Text) => node.text = string(object, "value").map(str::to_string),
            Kind::Furniture => return Ok(node),
            // A secure field's value is never copied, whatever the schema.
            Kind::Secure => {
                node.filled = has_value(object);
                return Ok(node);
            }
            _ => node.title = string(object, "value").map(str::to_string),
        }
        if entry.keep_word {
            node.subrole = Some(role.to_string());
        }
    } else {
        node.id = string(object, "id").map(str::to_string);
        node.title = string(object, "name")
            .or_else(|| string(object, "title"))
            .or_else(|| string(object, "description"))
            .map(str::to_string);
        if entry.kind != Kind::Secure {
            node.subrole = subrole
                .map(str::to_string)
                .or_else(|| entry.keep_word.then(|| role.to_string()));
        }
        node.selected = object.get("selected").and_then(Value::as_bool) == Some(true);
        node.focused = object.get("focused").and_then(Value::as_bool) == Some(true);
        node.visible = object.get("visible").and_then(Value::as_bool);
        match entry.kind {
            // The value is skipped where it is read: never copied; only
            // whether there is one.
            Kind::Secure => {
                node.filled = has_value(object);
                return Ok(node);
            }
            Kind::Furniture => return Ok(node),
            Kind::Report(Role::Text) | Kind::Control => {
                node.text = string(object, "value").map(str::to_string);
            }
            Kind::Report(_) => {}
        }
    }
    match object.get("children") {
        None | Some(Value::Null) => {}
        Some(Value::Array(children)) => {
            let len = pointer.len();
            for (i, child) in children.iter().enumerate() {
                let _ = write!(pointer, "/children/{i}");
                let Value::Object(child) = child else {
                    return Err(not_a_node(pointer, child));
                };
                node.children.push(self::node(child, depth + 1, pointer)?);
                pointer.truncate(len);
            }
        }
        Some(_) => {
            return Err(error(
                FORMAT,
                None,
                format!("`{pointer}/children` is not a list of nodes"),
            ))
        }
    }
    Ok(node)
}
