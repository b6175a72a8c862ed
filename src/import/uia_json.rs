//! `uia-json`: Windows UI Automation trees as Axe.Windows saves them
//! (`.snapshot`, `.hier`; UTF-8 with a byte-order mark), and the
//! `.a11ytest` zip that holds one as `el.snapshot`.
//!
//! Each element has `Properties` keyed by UIA property id (`Value` inside)
//! and `Children`; newer files repeat `Name`, `ControlTypeId` and
//! `RuntimeId` at the top. Property ids read: 30000 RuntimeId, 30003
//! ControlType, 30005 Name, 30008 HasKeyboardFocus, 30019 IsPassword,
//! 30022 IsOffscreen, 30045 Value.Value, 30079 SelectionItem.IsSelected.
//! A desktop pane holding windows is left out: the windows are the top.
//!
//! `IsPassword` is read as Axe.Windows writes it (`"Value": true`) and as
//! text in any case (`"True"`, `TextValue`). An element with no control
//! type (neither `ControlTypeId` nor property 30003), `Children` that are
//! not a list, or a child that is not an object is an error naming its
//! JSON pointer.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::build::{Kind, Node};
use super::{error, json, roles, zip, Format, MAX_DEPTH};
use crate::error::Result;
use crate::model::Role;

const FORMAT: Format = Format::UiaJson;

const RUNTIME_ID: &str = "30000";
const CONTROL_TYPE: &str = "30003";
const NAME: &str = "30005";
const HAS_KEYBOARD_FOCUS: &str = "30008";
const IS_PASSWORD: &str = "30019";
const IS_OFFSCREEN: &str = "30022";
const VALUE: &str = "30045";
const IS_SELECTED: &str = "30079";

const WINDOW: u32 = 50032;
const PANE: u32 = 50033;

pub(crate) fn parse(bytes: &[u8]) -> Result<Vec<Node>> {
    let unzipped;
    let bytes = if bytes.starts_with(b"PK\x03\x04") {
        unzipped = zip::extract(bytes, "el.snapshot").map_err(|m| error(FORMAT, None, m))?;
        &unzipped[..]
    } else {
        bytes
    };
    let value = json(FORMAT, bytes)?;
    let Value::Object(root) = &value else {
        return Err(error(
            FORMAT,
            None,
            "expected an Axe.Windows element: a JSON object with `Properties` and `Children`",
        ));
    };
    let windows: Vec<&Map<String, Value>> = if control_type(root) == Some(PANE) {
        children(root)
            .filter(|c| control_type(c) == Some(WINDOW))
            .collect()
    } else {
        Vec::new()
    };
    if windows.is_empty() {
        Ok(vec![node(root, 0, &mut String::new())?])
    } else {
        let mut pointer = String::new();
        let mut nodes = Vec::with_capacity(windows.len());
        for (i, child) in children(root).enumerate() {
            if control_type(child) == Some(WINDOW) {
                pointer.clear();
                let _ = write!(pointer, "/Children/{i}");
                nodes.push(node(child, 0, &mut pointer)?);
            }
        }
        Ok(nodes)
    }
}

fn property<'a>(element: &'a Map<String, Value>, id: &str) -> Option<&'a Value> {
    element.get("Properties")?.get(id)?.get("Value")
}

fn is_true(element: &Map<String, Value>, id: &str) -> bool {
    property(element, id).and_then(Value::as_bool) == Some(true)
}

/// A boolean property written as a JSON boolean or as text in any case
/// (`"Value": "True"`, `"TextValue": "True"`).
fn is_true_any_spelling(element: &Map<String, Value>, id: &str) -> bool {
    let Some(entry) = element.get("Properties").and_then(|p| p.get(id)) else {
        return false;
    };
    ["Value", "TextValue"]
        .iter()
        .any(|key| match entry.get(key) {
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) => s.eq_ignore_ascii_case("true"),
            Some(Value::Number(n)) => n.as_u64() == Some(1),
            _ => false,
        })
}

fn control_type(element: &Map<String, Value>) -> Option<u32> {
    element
        .get("ControlTypeId")
        .or_else(|| property(element, CONTROL_TYPE))
        .and_then(Value::as_u64)
        .and_then(|id| u32::try_from(id).ok())
}

fn children(element: &Map<String, Value>) -> impl Iterator<Item = &Map<String, Value>> {
    element
        .get("Children")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
}

/// `RuntimeId` as Axe.Windows writes it: `[7,436C,50B051]`.
fn runtime_id(element: &Map<String, Value>) -> Option<String> {
    if let Some(id) = element.get("RuntimeId").and_then(Value::as_str) {
        return Some(id.to_string());
    }
    let parts = property(element, RUNTIME_ID)?.as_array()?;
    let hex: Option<Vec<String>> = parts
        .iter()
        .map(|p| p.as_i64().map(|n| format!("{:X}", n as u32)))
        .collect();
    Some(format!("[{}]", hex?.join(",")))
}

fn string(value: Option<&Value>) -> Option<&str> {
    value.and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// `pointer` as a reader sees it: the document itself has the empty pointer.
fn shown(pointer: &str) -> String {
    if pointer.is_empty() {
        "the top-level element".to_string()
    } else {
        format!("`{pointer}`")
    }
}

fn node(element: &Map<String, Value>, depth: usize, pointer: &mut String) -> Result<Node> {
    if depth > MAX_DEPTH {
        return Err(error(
            FORMAT,
            None,
            format!("the tree is deeper than {MAX_DEPTH} levels"),
        ));
    }
    let Some(control) = control_type(element) else {
        return Err(error(
            FORMAT,
            None,
            format!(
                "{} has no control type: expected `ControlTypeId` or `Properties` › `30003` › `Value` (a number such as 50004)",
                shown(pointer)
            ),
        ));
    };
    let (word, entry) = roles::uia(control);
    let secure = is_true_any_spelling(element, IS_PASSWORD);
    let kind = if secure { Kind::Secure } else { entry.kind };
    let mut node = Node::new(word, kind);
    node.id = runtime_id(element);
    let name = string(element.get("Name")).or_else(|| string(property(element, NAME)));
    if word == "Text" {
        node.text = name.map(str::to_string);
    } else {
        node.title = name.map(str::to_string);
    }
    if entry.keep_word && !secure {
        node.subrole = Some(word.to_string());
    }
    node.focused = is_true(element, HAS_KEYBOARD_FOCUS);
    node.selected = is_true(element, IS_SELECTED);
    if let Some(offscreen) = property(element, IS_OFFSCREEN).and_then(Value::as_bool) {
        node.visible = Some(!offscreen);
    }
    match kind {
        // A password's value is never read, nor what is inside the field:
        // only whether there is one.
        Kind::Secure => {
            node.filled = property(element, VALUE)
                .and_then(Value::as_str)
                .is_some_and(|v| !v.is_empty());
            return Ok(node);
        }
        Kind::Furniture => return Ok(node),
        Kind::Report(Role::Text) | Kind::Control if word != "Text" => {
            node.text = string(property(element, VALUE)).map(str::to_string);
        }
        _ => {}
    }
    match element.get("Children") {
        None | Some(Value::Null) => {}
        Some(Value::Array(kids)) => {
            let len = pointer.len();
            for (i, child) in kids.iter().enumerate() {
                let _ = write!(pointer, "/Children/{i}");
                let Value::Object(child) = child else {
                    return Err(error(
                        FORMAT,
                        None,
                        format!(
                            "`{pointer}` is not an element: expected an object with `Properties`"
                        ),
                    ));
                };
                node.children.push(self::node(child, depth + 1, pointer)?);
                pointer.truncate(len);
            }
        }
        Some(_) => {
            return Err(error(
                FORMAT,
                None,
                format!("`{pointer}/Children` is not a list of elements"),
            ))
        }
    }
    Ok(node)
}
