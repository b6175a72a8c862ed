//! `ax-dump`: Chromium's `DumpAccessibilityTree` text. One node per line;
//! depth is the number of leading `+` divided by two; a line of `+` alone
//! stands for an ignored node and is skipped. Three dialects share the
//! framing and are told apart per line:
//!
//! * macOS: `AXRole AXSubrole=AXWord AXTitle='…' AXValue='…' AXSelected=1`;
//! * AT-SPI (`-expected-auralinux.txt`): `[role words] name='…' focused`;
//! * UIA (`-expected-uia-win.txt`): `ControlType Name='…' IsPassword=true`,
//!   the control type in any case; older Chromium writes each node's ARIA
//!   role instead (`document`, `group`, `textbox`, `description` for static
//!   text), which is read too.
//!
//! A dump written again after `=== Start Continuation ===` replaces the
//! one before (the last is the page's current state); `<-- End-of-file -->`
//! ends the input and `#` lines are comments, as in Chromium's files.
//!
//! The first node line sets the dialect; a line in another dialect, or a
//! role word no dialect has, is an error naming the line. Chromium's other
//! dumps (Blink's `rootWebArea`, Windows IA2 `ROLE_SYSTEM_…`, Android) are
//! refused by name.
//!
//! Secure fields: macOS `AXSubrole=AXSecureTextField` (or
//! `AXRoleDescription='secure text field'`), AT-SPI `[password text]` or
//! `text-input-type:password`, UIA `IsPassword=true` (name and value in any
//! case). Whether one is filled is read from the length of its quoted value
//! (AT-SPI: `text='…'` or a caret past 0), never from the value.
//!
//! String values are single-quoted and may hold unescaped `'`: a quote
//! closes a value only at the end of the line or before the next
//! attribute. Non-ASCII bytes are `%XX`-escaped; `<newline>` is a newline.
//! Values are decoded only when they are used, so a secure field's value
//! is never decoded or copied.

use super::build::{Kind, Node};
use super::{error, quoted, roles, utf8, Format, MAX_DEPTH};
use crate::error::Result;
use crate::model::Role;

const FORMAT: Format = Format::AxDump;

/// The line before each further dump of the same page.
const CONTINUATION: &str = "=== Start Continuation ===";
/// The line that ends a dump in Chromium's test logs.
const END_OF_FILE: &str = "<-- End-of-file -->";

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

/// The dialect of a dump, set by its first node line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    Mac,
    AtSpi,
    Uia,
}

impl Dialect {
    fn name(self) -> &'static str {
        match self {
            Dialect::Mac => "a macOS (`AXRole`)",
            Dialect::AtSpi => "an AT-SPI (`[role]`)",
            Dialect::Uia => "a UIA (a control type such as `Edit`)",
        }
    }
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

    /// `1`, `true`, `True`, `'true'`: dumps differ in how they write it.
    fn is_true(&self, name: &str) -> bool {
        self.raw(name).is_some_and(truthy)
    }

    /// Like [`Line::is_true`], with the name in any case too
    /// (`IsPassword`, `isPassword`, `ISPASSWORD`).
    fn is_true_any_case(&self, name: &str) -> bool {
        self.attrs
            .iter()
            .any(|a| a.name.eq_ignore_ascii_case(name) && a.value.is_some_and(truthy))
    }

    fn flag(&self, name: &str) -> bool {
        self.attrs
            .iter()
            .any(|a| a.name == name && a.value.is_none())
    }

    /// The line's dialect, if its role word belongs to one.
    fn dialect(&self) -> Option<Dialect> {
        if self.bracketed {
            Some(Dialect::AtSpi)
        } else if self.role.starts_with("AX") {
            Some(Dialect::Mac)
        } else if roles::uia_by_name(self.role).is_some()
            || roles::chromium_uia_aria(self.role).is_some()
        {
            Some(Dialect::Uia)
        } else {
            None
        }
    }
}

fn truthy(value: &str) -> bool {
    let value = value.trim_matches('\'');
    value == "1" || value.eq_ignore_ascii_case("true")
}

/// Whether a quoted raw value (`'…'`) holds anything, without decoding it.
fn quoted_non_empty(raw: Option<&str>) -> bool {
    raw.is_some_and(|v| v.starts_with('\'') && v.len() > 2)
}

/// What is wrong with a line whose role word no dialect has.
fn not_a_role(role: &str) -> String {
    // A JSON string literal: a newline or an ESC in the word is escaped.
    let shown = quoted(&role.chars().take(32).collect::<String>());
    let other = if role.starts_with("ROLE_SYSTEM_") || role.starts_with("IA2_ROLE_") {
        Some("a Windows IA2 dump (`-expected-win.txt`); import the UIA dump (`-expected-uia-win.txt`) instead")
    } else if role.starts_with("android.") {
        Some("an Android dump (`-expected-android.txt`), which is not supported")
    } else if role == "rootWebArea" {
        Some("a Blink dump (`-expected-blink.txt`), which is not supported; import the platform dump (`-expected-mac.txt`, `-expected-auralinux.txt`, `-expected-uia-win.txt`) instead")
    } else {
        None
    };
    match other {
        Some(what) => format!("{shown} starts {what}"),
        None => format!(
            "{shown} is not a role: expected `AXRole`, `[at-spi role]` or a UIA control type such as `Edit`"
        ),
    }
}

pub(crate) fn parse(bytes: &[u8]) -> Result<Vec<Node>> {
    let text = utf8(FORMAT, bytes)?;
    let mut top: Vec<Node> = Vec::new();
    let mut stack: Vec<(usize, Node)> = Vec::new();
    let mut secure_depth: Option<usize> = None;
    let mut dialect: Option<(Dialect, usize)> = None;
    for (number, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        // Chromium's framing around dumps: a test that waits for a change
        // writes the tree again after `=== Start Continuation ===` (the
        // last is the page as it is now); test logs end a dump with
        // `<-- End-of-file -->`; `#` starts a comment (`#<skip`).
        match line.trim() {
            CONTINUATION => {
                top.clear();
                stack.clear();
                secure_depth = None;
                continue;
            }
            END_OF_FILE => break,
            framing if framing.starts_with('#') => continue,
            _ => {}
        }
        let plus = line.bytes().take_while(|&b| b == b'+').count();
        let rest = &line[plus..];
        if rest.trim().is_empty() {
            continue;
        }
        let depth = plus / 2;
        if depth > MAX_DEPTH {
            return Err(error(
                FORMAT,
                Some(number + 1),
                format!("the tree is deeper than {MAX_DEPTH} levels"),
            ));
        }
        // Inside a secure field nothing is read: its text may be the value.
        if secure_depth.is_some_and(|d| depth > d) {
            continue;
        }
        secure_depth = None;
        let line = tokenize(rest);
        let Some(this) = line.dialect() else {
            return Err(error(FORMAT, Some(number + 1), not_a_role(line.role)));
        };
        let (first, first_line) = *dialect.get_or_insert((this, number + 1));
        if this != first {
            return Err(error(
                FORMAT,
                Some(number + 1),
                format!(
                    "{} is {} role, but line {first_line} started {} dump; a dump has one dialect",
                    quoted(&line.role.chars().take(32).collect::<String>()),
                    this.name(),
                    first.name()
                ),
            ));
        }
        let node = node(&line, this);
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
        return Err(error(FORMAT, None, "the input has no node lines"));
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

fn node(line: &Line<'_>, dialect: Dialect) -> Node {
    match dialect {
        Dialect::AtSpi => atspi_node(line),
        Dialect::Mac => mac_node(line),
        Dialect::Uia => uia_node(line),
    }
}

fn mac_node(line: &Line<'_>) -> Node {
    let secure_described = line
        .raw("AXRoleDescription")
        .is_some_and(|d| crate::floor::describes_secure_field(&decode(d)));
    // Either signal makes a secure field: one is enough to withhold it.
    let subrole = if secure_described {
        Some("AXSecureTextField")
    } else {
        line.raw("AXSubrole")
    };
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
    let (known, entry) = roles::atspi(line.role);
    let word = known.map_or_else(|| camel(line.role), str::to_string);
    let secure = roles::atspi_is_password(line.role)
        || line
            .attrs
            .iter()
            .any(|a| a.value.is_none() && a.name.eq_ignore_ascii_case("text-input-type:password"));
    let kind = if secure { Kind::Secure } else { entry.kind };
    let mut node = Node::new(word.clone(), kind);
    node.focused = line.flag("focused");
    node.selected = line.flag("selected");
    let name = line.string("name");
    if secure {
        // The text is the value: only whether there is one, or a caret past
        // its start, is read.
        node.title = name;
        node.filled = quoted_non_empty(line.raw("text"))
            || line
                .raw("caret_offset")
                .and_then(|c| c.parse::<u64>().ok())
                .is_some_and(|c| c > 0);
        return node;
    }
    match kind {
        Kind::Report(Role::Text) if word == "Static" || word == "Text" => node.text = name,
        _ => node.title = name,
    }
    if entry.keep_word {
        node.subrole = Some(word);
    }
    node
}

fn uia_node(line: &Line<'_>) -> Node {
    // `parse` has checked that the word is a control type or an ARIA role.
    // A word with a capital is a control type (`Tab` is a tab control);
    // a lowercase one is first read as Chromium's ARIA word (`tab` is a tab).
    let lowercase = !line.role.bytes().any(|b| b.is_ascii_uppercase());
    let control_type = roles::uia_by_name(line.role);
    let aria = roles::chromium_uia_aria(line.role).filter(|_| lowercase || control_type.is_none());
    let (word, entry, name_is_text) = match aria {
        Some(aria) => aria,
        None => {
            let (word, entry) = roles::uia(control_type.unwrap_or(0));
            (word, entry, word == "Text")
        }
    };
    let secure = line.is_true_any_case("IsPassword");
    let kind = if secure { Kind::Secure } else { entry.kind };
    let mut node = Node::new(word, kind);
    node.focused = line.is_true("HasKeyboardFocus");
    node.selected = line.is_true("SelectionItem.IsSelected");
    let name = line.string("Name");
    if secure {
        // The value is never decoded: only whether there is one.
        node.title = name;
        node.filled = quoted_non_empty(line.raw("Value.Value"));
        return node;
    }
    match kind {
        Kind::Report(Role::Text) if name_is_text => node.text = name,
        _ => node.title = name,
    }
    if kind == Kind::Report(Role::Text) && !name_is_text {
        node.text = line.string("Value.Value");
    }
    if entry.keep_word {
        node.subrole = Some(word.to_string());
    }
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
