//! `aria`: a Playwright ARIA snapshot, bare or inside a Markdown ```yaml
//! block ("# Page snapshot"). A hand-written reader of the subset
//! Playwright writes, one item per line, nesting by indentation:
//!
//! ```text
//! - role "name" [level=1] [active] [ref=e7]: inline text
//!   - /url: /address
//! ```
//!
//! `[active]` is the focus, `[selected]` the selection, `[ref=…]` the id,
//! `[level=N]` a heading's level, `/url:` the parent's address;
//! `[checked]`, `[disabled]`, `[expanded]` and `[pressed]` are the
//! attributes of the same names (`true`, or the word written after `=`,
//! such as `mixed`). The
//! snapshot is a page, so its items go inside a `Document`. A textbox
//! whose name says "password" is a secure field: its inline value is
//! never sliced, unescaped or copied.

use super::build::{Kind, Node};
use super::{error, roles, utf8, Format, MAX_DEPTH};
use crate::error::Result;
use crate::model::Role;

const FORMAT: Format = Format::Aria;

pub(crate) fn parse(bytes: &[u8]) -> Result<Vec<Node>> {
    let text = utf8(FORMAT, bytes)?;
    let mut top: Vec<Node> = Vec::new();
    let mut stack: Vec<(usize, Node)> = Vec::new();
    let mut secure_depth: Option<usize> = None;
    for (number, line) in snapshot_lines(text) {
        let line = line.trim_end();
        let indent = line.len() - line.trim_start().len();
        let Some(item) = line.trim_start().strip_prefix('-') else {
            continue;
        };
        let item = item.trim_start();
        let depth = indent / 2;
        if depth > MAX_DEPTH {
            return Err(error(
                FORMAT,
                Some(number),
                format!("the outline is deeper than {MAX_DEPTH} levels"),
            ));
        }
        while stack.last().is_some_and(|(d, _)| *d >= depth) {
            let (_, done) = stack.pop().expect("checked");
            attach(&mut stack, &mut top, done);
        }
        // Inside a secure field nothing is read: its text may be the value.
        // An item there (not a `/property:`) says only that it is filled.
        if secure_depth.is_some_and(|d| depth > d) {
            if !item.starts_with('/') {
                if let Some((_, field)) = stack.last_mut() {
                    field.filled = true;
                }
            }
            continue;
        }
        secure_depth = None;
        if let Some(property) = item.strip_prefix('/') {
            // `/url: …` belongs to the item above.
            let (name, value) = property.split_once(':').unwrap_or((property, ""));
            if let Some((_, parent)) = stack.last_mut() {
                if name == "url" {
                    parent.url = Some(unquote(value.trim())).filter(|u| !u.is_empty());
                }
            }
            continue;
        }
        let node = item_node(item).map_err(|m| error(FORMAT, Some(number), m))?;
        if node.kind == Kind::Secure {
            secure_depth = Some(depth);
        }
        stack.push((depth, node));
    }
    while let Some((_, done)) = stack.pop() {
        attach(&mut stack, &mut top, done);
    }
    if top.is_empty() {
        return Err(error(
            FORMAT,
            None,
            "the input has no snapshot items (`- role \"name\"`)",
        ));
    }
    let mut page = Node::new("document", Kind::Report(Role::Document));
    page.synthetic = true;
    page.children = top;
    Ok(vec![page])
}

/// The lines of the snapshot with their 1-based numbers: inside the first
/// ```yaml fence if there is one, else all of them.
fn snapshot_lines(text: &str) -> Vec<(usize, &str)> {
    let lines: Vec<(usize, &str)> = text.lines().enumerate().map(|(i, l)| (i + 1, l)).collect();
    let fence = lines
        .iter()
        .position(|(_, l)| l.trim_start().starts_with("```yaml") || l.trim() == "```aria");
    match fence {
        Some(open) => lines[open + 1..]
            .iter()
            .take_while(|(_, l)| !l.trim_start().starts_with("```"))
            .copied()
            .collect(),
        None => lines,
    }
}

fn attach(stack: &mut [(usize, Node)], top: &mut Vec<Node>, node: Node) {
    match stack.last_mut() {
        Some((_, parent)) => parent.children.push(node),
        None => top.push(node),
    }
}

/// One item: `role "name" [attrs]: text`.
fn item_node(item: &str) -> Result<Node, String> {
    // A bare string item is text.
    if item.starts_with('"') || item.starts_with('\'') {
        let mut node = Node::new("text", Kind::Report(Role::Text));
        node.text = Some(unquote(item.trim_end_matches(':'))).filter(|t| !t.is_empty());
        return Ok(node);
    }
    let role = role_word(item);
    let mut rest = item[role.len()..].trim_start();
    let mut name = None;
    if rest.starts_with('"') {
        let end = closing_double_quote(rest).ok_or("a name's quote is not closed")?;
        name = Some(unquote(&rest[..end]));
        rest = rest[end..].trim_start();
    }
    let mut attrs: Vec<(&str, Option<&str>)> = Vec::new();
    while let Some(inner) = rest.strip_prefix('[') {
        let end = inner.find(']').ok_or("an `[attribute]` is not closed")?;
        let attr = &inner[..end];
        attrs.push(match attr.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (attr, None),
        });
        rest = inner[end + 1..].trim_start();
    }
    let attr = |key: &str| attrs.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
    let name = name.filter(|n| !n.is_empty());
    let entry = roles::aria(role);
    let secure =
        SECURE_ROLES.contains(&role) && name.as_deref().is_some_and(crate::floor::names_password);
    let mut node = Node::new(role, if secure { Kind::Secure } else { entry.kind });
    node.id = attr("ref").flatten().map(str::to_string);
    node.focused = attr("active").is_some();
    node.selected = matches!(attr("selected"), Some(None | Some("true")));
    if entry.keep_word && !secure {
        node.subrole = Some(role.to_string());
    }
    if let Some(Some(level)) = attr("level") {
        if let Ok(level) = level.parse::<u64>() {
            node.attributes.push(("level".into(), level.into()));
        }
    }
    for state in STATES {
        match attr(state) {
            Some(None | Some("true")) => node.attributes.push((state.into(), true.into())),
            Some(Some("false")) => node.attributes.push((state.into(), false.into())),
            Some(Some(word)) if word.bytes().all(|b| b.is_ascii_lowercase()) => {
                node.attributes.push((state.into(), word.into()))
            }
            _ => {}
        }
    }
    if role == "text" {
        node.text = name;
    } else {
        node.title = name;
    }
    if secure {
        // The inline value is the password: not read, only whether there
        // is one.
        node.filled = rest
            .strip_prefix(':')
            .is_some_and(|value| !value.trim().is_empty());
        return Ok(node);
    }
    let inline = rest
        .strip_prefix(':')
        .map(str::trim)
        .filter(|t| !t.is_empty());
    if let Some(inline) = inline {
        node.text = Some(unquote(inline));
    }
    Ok(node)
}

/// An item's first word: its role (up to a space, `:` or `[`).
fn role_word(item: &str) -> &str {
    &item[..item.find([' ', ':', '[']).unwrap_or(item.len())]
}

/// The roles of the items that may be secure fields (with a name that says
/// password).
const SECURE_ROLES: [&str; 2] = ["textbox", "searchbox"];

/// The states Playwright writes in brackets that are kept as attributes.
pub(crate) const STATES: [&str; 4] = ["checked", "disabled", "expanded", "pressed"];

/// The values Playwright showed in the secure fields of a snapshot (bare
/// or fenced), in document order, empty ones left out: for a caller that
/// must recognise them later to withhold them (`ctxgate mcp`'s session
/// memory). They never enter an answer: [`parse`] reads none of them.
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
pub(crate) fn secure_values(bytes: &[u8]) -> Vec<String> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Vec::new();
    };
    let mut values = Vec::new();
    for (_, line) in snapshot_lines(text) {
        let Some(item) = line.trim().strip_prefix('-') else {
            continue;
        };
        let item = item.trim_start();
        // Only these roles may be secure: other items are not parsed.
        if !SECURE_ROLES.contains(&role_word(item)) {
            continue;
        }
        let Ok(node) = item_node(item) else { continue };
        if node.kind != Kind::Secure {
            continue;
        }
        // The value is what follows the role, the name and the brackets.
        let mut rest = item[role_word(item).len()..].trim_start();
        if let Some(end) = rest
            .starts_with('"')
            .then(|| closing_double_quote(rest))
            .flatten()
        {
            rest = rest[end..].trim_start();
        }
        while let Some(end) = rest.strip_prefix('[').and_then(|inner| inner.find(']')) {
            rest = rest[end + 2..].trim_start();
        }
        if let Some(value) = rest.strip_prefix(':') {
            let value = unquote(value.trim());
            if !value.is_empty() {
                values.push(value);
            }
        }
    }
    values
}

/// The end (after the quote) of a JSON-style double-quoted string.
fn closing_double_quote(text: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in text.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return Some(i + 1),
            _ => {}
        }
    }
    None
}

/// A YAML scalar as text: `"…"` with JSON escapes, `'…'` with `''`, or
/// plain.
fn unquote(text: &str) -> String {
    if text.len() >= 2 && text.starts_with('"') && text.ends_with('"') {
        if let Ok(s) = serde_json::from_str::<String>(text) {
            return s;
        }
        return text[1..text.len() - 1].to_string();
    }
    if text.len() >= 2 && text.starts_with('\'') && text.ends_with('\'') {
        return text[1..text.len() - 1].replace("''", "'");
    }
    text.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_read_their_parts() {
        let node = item_node(r#"heading "Sign \"In\"" [level=1] [ref=e10]"#).unwrap();
        assert_eq!(node.title.as_deref(), Some("Sign \"In\""));
        assert_eq!(node.id.as_deref(), Some("e10"));
        assert_eq!(node.attributes[0].1, 1);
        let node = item_node(r#"generic [ref=e28]: "Checkout: Your Information""#).unwrap();
        assert_eq!(node.text.as_deref(), Some("Checkout: Your Information"));
    }

    #[test]
    fn states_are_attributes() {
        let node = item_node(r#"checkbox "Remember" [checked=mixed] [disabled] [ref=e4]"#).unwrap();
        let names: Vec<_> = node
            .attributes
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        assert_eq!(names, ["checked=\"mixed\"", "disabled=true"]);
    }

    #[test]
    fn secure_values_are_found_only_in_secure_fields() {
        let text = "```yaml\n- textbox \"User\" [ref=e1]: ada\n- textbox \"Password\" [ref=e2]: \"hun: ter2\"\n- textbox \"PIN\" [ref=e3]\n```";
        assert_eq!(secure_values(text.as_bytes()), ["hun: ter2"]);
    }

    #[test]
    fn a_password_textbox_keeps_no_value() {
        let node = item_node(r#"textbox "Password" [active] [ref=e30]: hunter2"#).unwrap();
        assert_eq!(node.kind, Kind::Secure);
        assert!(node.focused && node.filled);
        assert_eq!(node.text, None);
        let node = item_node(r#"textbox "Password" [ref=e30]"#).unwrap();
        assert!(!node.filled);
    }
}
