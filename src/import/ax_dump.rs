//! `ax-dump`: Chromium's `DumpAccessibilityTree` text. One node per line;
//! depth is the number of leading `+` divided by two; a line of `+` alone
//! stands for an ignored node and is skipped. Three dialects share the
//! framing and are told apart per line:
//!
//! * macOS: `AXRole AXSubrole=AXWord AXTitle='…' AXValue='…' AXSelected=1`;
//! * AT-SPI (`-expected-auralinux.txt`): `[role words] name='…' focused`;
//! * UIA (`-expected-uia-win.txt`): `ControlType Name='…' IsPassword=true`.
//!
//! String values are single-quoted and may hold unescaped `'`: a quote
//! closes a value only at the end of the line or before the next
//! attribute. Non-ASCII bytes are `%XX`-escaped; `<newline>` is a newline.
//! Values are decoded only when they are used, so a secure field's value
//! is never decoded or copied.

use super::build::{Kind, Node};
use super::{error, roles, utf8, Format, MAX_DEPTH};
use crate::error::Result;
use crate::model::Role;

const FORMAT: Format = Format::AxDump;

/// One `Name=value` or bare flag, borrowed from the line.
struct Attr<'a> {
    name: &'a str,
    value: Option<&'a str>,
}

struct Line<'a> {
    role: &'a str,
    /// Whether the role was written in brackets (the AT-SPI dialect).
    bracketed: bool,
    attrs: Vec<Attr<'a>>,
}

impl<'a> Line<'a> {
    fn raw(&self, name: &str) -> Option<&'a str> {
        self.attrs
            .iter()
            .find(|a| a.name == name)
            .and_then(|a| a.value)
    }

    fn string(&self, name: &str) -> Option<String> {
        self.raw(name).map(decode).filter(|s| !s.is_empty())
    }

    fn is_true(&self, name: &str) -> bool {
        matches!(self.raw(name), Some("1" | "true"))
    }

    fn flag(&self, name: &str) -> bool {
        self.attrs
            .iter()
            .any(|a| a.name == name && a.value.is_none())
    }
}

pub(crate) fn parse(bytes: &[u8]) -> Result<Vec<Node>> {
    let text = utf8(FORMAT, bytes)?;
    let mut top: Vec<Node> = Vec::new();
    let mut stack: Vec<(usize, Node)> = Vec::new();
    let mut secure_depth: Option<usize> = None;
    for (number, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        let plus = line.bytes().take_while(|&b| b == b'+').count();
        let rest = &line[plus..];
        if rest.trim().is_empty() {
            continue;
        }
        let depth = plus / 2;
        if depth > MAX_DEPTH {
            return Err(error(
                FORMAT,
                number + 1,
                format!("the tree is deeper than {MAX_DEPTH} levels"),
            ));
        }
        // Inside a secure field nothing is read: its text may be the value.
        if secure_depth.is_some_and(|d| depth > d) {
            continue;
        }
        secure_depth = None;
        let line = tokenize(rest);
        if !line.bracketed
            && !line.role.starts_with("AX")
            && roles::uia_by_name(line.role).is_none()
        {
            return Err(error(
                FORMAT,
                number + 1,
                format!(
                    "`{}` is not a role: expected `AXRole`, `[at-spi role]` or a UIA control type such as `Edit`",
                    line.role.chars().take(32).collect::<String>()
                ),
            ));
        }
        let node = node(&line);
        if node.kind == Kind::Secure {
            secure_depth = Some(depth);
        }
        while stack.last().is_some_and(|(d, _)| *d >= depth) {
            let (_, done) = stack.pop().expect("checked");
            attach(&mut stack, &mut top, done);
        }
        stack.push((depth, node));
    }
    while let Some((_, done)) = stack.pop() {
        attach(&mut stack, &mut top, done);
    }
    if top.is_empty() {
        return Err(error(FORMAT, 0, "the input has no node lines"));
    }
    Ok(top)
}

fn attach(stack: &mut [(usize, Node)], top: &mut Vec<Node>, node: Node) {
    match stack.last_mut() {
        Some((_, parent)) => parent.children.push(node),
        None => top.push(node),
    }
}

/// Splits a line (after its `+`) into the role and its attributes.
fn tokenize(rest: &str) -> Line<'_> {
    let (role, bracketed, mut at) = match rest.strip_prefix('[') {
        Some(inner) => {
            let end = inner.find(']').unwrap_or(inner.len());
            (&inner[..end], true, (end + 2).min(rest.len()))
        }
        None => {
            let end = rest.find(' ').unwrap_or(rest.len());
            (&rest[..end], false, end)
        }
    };
    let strict = role.starts_with("AX");
    let bytes = rest.as_bytes();
    let mut attrs = Vec::new();
    while at < rest.len() {
        if bytes[at] == b' ' {
            at += 1;
            continue;
        }
        let start = at;
        // The name runs to `=`, or the token is a flag running to a space.
        let mut end = at;
        while end < bytes.len() && !matches!(bytes[end], b'=' | b' ' | b'\'' | b'(' | b'[' | b'{') {
            end += 1;
        }
        if end < bytes.len() && bytes[end] == b'=' {
            let name = &rest[start..end];
            let value_start = end + 1;
            let value_end = if bytes.get(value_start) == Some(&b'\'') {
                closing_quote(rest, value_start, strict)
            } else {
                bracketed_token(bytes, value_start)
            };
            attrs.push(Attr {
                name,
                value: Some(&rest[value_start..value_end]),
            });
            at = value_end;
        } else {
            let flag_end = bracketed_token(bytes, start);
            attrs.push(Attr {
                name: &rest[start..flag_end],
                value: None,
            });
            at = flag_end.max(start + 1);
        }
    }
    Line {
        role,
        bracketed,
        attrs,
    }
}

/// The end (exclusive, after the closing quote) of a quoted value opening
/// at `open`. A `'` closes it at the end of the line or before what looks
/// like the next attribute; any other `'` is part of the value.
fn closing_quote(rest: &str, open: usize, strict: bool) -> usize {
    let bytes = rest.as_bytes();
    let mut at = open + 1;
    while at < bytes.len() {
        if bytes[at] == b'\'' {
            let after = &rest[at + 1..];
            if after.is_empty()
                || (after.starts_with(' ') && next_is_attribute(&after[1..], strict))
            {
                return at + 1;
            }
        }
        at += 1;
    }
    bytes.len()
}

fn next_is_attribute(after: &str, strict: bool) -> bool {
    let name_len = after
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b':'))
        .count();
    let name = &after[..name_len];
    let next = after.as_bytes().get(name_len).copied();
    if strict {
        return name.starts_with("AX") && next == Some(b'=');
    }
    if after.starts_with('(') {
        return true;
    }
    !name.is_empty()
        && name.as_bytes()[0].is_ascii_alphabetic()
        && matches!(next, None | Some(b'=' | b' '))
}

/// The end of a bare token starting at `start`: the next space outside
/// brackets and quotes.
fn bracketed_token(bytes: &[u8], start: usize) -> usize {
    let mut depth = 0usize;
    let mut quoted = false;
    let mut at = start;
    while at < bytes.len() {
        match bytes[at] {
            b'\'' => quoted = !quoted,
            b'(' | b'[' | b'{' if !quoted => depth += 1,
            b')' | b']' | b'}' if !quoted => depth = depth.saturating_sub(1),
            b' ' if depth == 0 && !quoted => return at,
            _ => {}
        }
        at += 1;
    }
    bytes.len()
}

/// A value as text: quotes removed, `%XX` and `<newline>` decoded.
fn decode(raw: &str) -> String {
    let inner = raw
        .strip_prefix('\'')
        .map(|r| r.strip_suffix('\'').unwrap_or(r))
        .unwrap_or(raw);
    let inner = inner.replace("<newline>", "\n");
    let bytes = inner.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%' && at + 2 < bytes.len() {
            if let (Some(high), Some(low)) = (hex(bytes[at + 1]), hex(bytes[at + 2])) {
                out.push(high << 4 | low);
                at += 3;
                continue;
            }
        }
        out.push(bytes[at]);
        at += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(digit: u8) -> Option<u8> {
    (digit as char).to_digit(16).map(|d| d as u8)
}

fn node(line: &Line<'_>) -> Node {
    if line.bracketed {
        atspi_node(line)
    } else if line.role.starts_with("AX") {
        mac_node(line)
    } else {
        uia_node(line)
    }
}

fn mac_node(line: &Line<'_>) -> Node {
    let subrole = line.raw("AXSubrole");
    let entry = roles::apple(line.role, subrole);
    let mut node = Node::new(line.role, entry.kind);
    node.title = line
        .string("AXTitle")
        .or_else(|| line.string("AXDescription"));
    node.subrole = match entry.kind {
        Kind::Secure => None,
        _ => subrole
            .map(str::to_string)
            .or_else(|| entry.keep_word.then(|| line.role.to_string())),
    };
    node.focused = line.is_true("AXFocused");
    node.selected =
        line.is_true("AXSelected") || (subrole == Some("AXTabButton") && line.is_true("AXValue"));
    let quoted = line.raw("AXValue").filter(|v| v.starts_with('\''));
    match entry.kind {
        // The value is skipped where it is read: never decoded, never
        // copied; only whether there is one.
        Kind::Secure => node.filled = quoted.is_some_and(|v| v.len() > 2),
        Kind::Furniture => {}
        Kind::Report(Role::Text) | Kind::Control => {
            node.text = quoted.map(decode).filter(|s| !s.is_empty());
        }
        Kind::Report(Role::Heading) => {
            if let Some(level) = line.raw("AXValue").and_then(|v| v.parse::<u64>().ok()) {
                node.attributes.push(("level".into(), level.into()));
            }
        }
        Kind::Report(_) => {}
    }
    node
}

/// `[document web]` → `DocumentWeb`, as Odilia spells AT-SPI roles.
fn camel(words: &str) -> String {
    words
        .split([' ', '_', '-'])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut chars = w.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect::<String>(),
                None => String::new(),
            }
        })
        .collect()
}

fn atspi_node(line: &Line<'_>) -> Node {
    let word = camel(line.role);
    let secure = word == "PasswordText";
    let entry = roles::atspi(&word);
    let kind = if secure { Kind::Secure } else { entry.kind };
    let mut node = Node::new(word.clone(), kind);
    let name = line.string("name");
    match kind {
        Kind::Report(Role::Text) if word == "Static" || word == "Text" => node.text = name,
        _ => node.title = name,
    }
    if entry.keep_word && !secure {
        node.subrole = Some(word);
    }
    node.focused = line.flag("focused");
    node.selected = line.flag("selected");
    node
}

fn uia_node(line: &Line<'_>) -> Node {
    // `parse` has checked that the control type is known.
    let (word, entry) = roles::uia(roles::uia_by_name(line.role).unwrap_or(0));
    let secure = line.is_true("IsPassword");
    let kind = if secure { Kind::Secure } else { entry.kind };
    let mut node = Node::new(word, kind);
    let name = line.string("Name");
    match kind {
        Kind::Report(Role::Text) if word == "Text" => node.text = name,
        _ => node.title = name,
    }
    if kind == Kind::Report(Role::Text) && word == "Edit" {
        node.text = line.string("Value.Value");
    }
    if entry.keep_word && !secure {
        node.subrole = Some(word.to_string());
    }
    node.focused = line.is_true("HasKeyboardFocus");
    node.selected = line.is_true("SelectionItem.IsSelected");
    node
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_close_only_before_the_next_attribute() {
        let line = tokenize("AXStaticText AXValue='Tinker's Hardware' AXTitle='x'");
        assert_eq!(line.raw("AXValue"), Some("'Tinker's Hardware'"));
        assert_eq!(line.raw("AXTitle"), Some("'x'"));
        let line = tokenize("AXStaticText AXValue='%E2%80%9D ('a True Artist of Music').'");
        assert_eq!(
            decode(line.raw("AXValue").unwrap()),
            "\u{201d} ('a True Artist of Music')."
        );
    }

    #[test]
    fn dialects_and_escapes() {
        let line = tokenize("[password text] name='Password:' selectable-text focused");
        assert_eq!(line.role, "password text");
        assert!(line.flag("focused"));
        assert_eq!(line.string("name").as_deref(), Some("Password:"));
        let line = tokenize("AXCell AXColumnIndexRange={len: 1, loc: 0} AXValue='a<newline>b%25'");
        assert_eq!(line.raw("AXColumnIndexRange"), Some("{len: 1, loc: 0}"));
        assert_eq!(line.string("AXValue").as_deref(), Some("a\nb%"));
    }
}
