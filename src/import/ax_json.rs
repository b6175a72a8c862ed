//! `ax-json`: a macOS window as nested JSON, as macapptree and Screen2AX
//! write it: `role` (an AX role), `subrole` (when present), `name`,
//! `description`, `role_description`, `value` and `children`. Roles go
//! through RFC-0001 4.2's table; a window's own buttons, which these files
//! tell apart only by `role_description` ("close button"), are furniture.

use serde_json::{Map, Value};

use super::build::{Kind, Node};
use super::{error, json, roles, Format};
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
    let roots: Vec<&Map<String, Value>> = match &value {
        Value::Object(object) => vec![object],
        Value::Array(items) => items.iter().filter_map(Value::as_object).collect(),
        _ => Vec::new(),
    };
    if roots.is_empty() {
        return Err(error(
            FORMAT,
            0,
            "expected a JSON object with `role` and `children` (or an array of them)",
        ));
    }
    roots.into_iter().map(|r| node(r, 0)).collect()
}

fn string<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    object
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

fn node(object: &Map<String, Value>, depth: usize) -> Result<Node> {
    if depth > super::MAX_DEPTH {
        return Err(error(
            FORMAT,
            0,
            format!("the tree is deeper than {} levels", super::MAX_DEPTH),
        ));
    }
    let role = string(object, "role").unwrap_or("AXUnknown");
    let subrole = string(object, "subrole").or_else(|| {
        let description = string(object, "role_description")?;
        FURNITURE_DESCRIPTIONS
            .iter()
            .find(|(d, _)| *d == description)
            .map(|(_, s)| *s)
    });
    let entry = roles::apple(role, subrole);
    let mut node = Node::new(role, entry.kind);
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
    match entry.kind {
        // The value is skipped where it is read: never copied.
        Kind::Secure | Kind::Furniture => return Ok(node),
        Kind::Report(Role::Text) | Kind::Control => {
            node.text = string(object, "value").map(str::to_string);
        }
        Kind::Report(_) => {}
    }
    if let Some(Value::Array(children)) = object.get("children") {
        for child in children.iter().filter_map(Value::as_object) {
            node.children.push(self::node(child, depth + 1)?);
        }
    }
    Ok(node)
}
