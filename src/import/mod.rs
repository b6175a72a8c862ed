//! Importing an operating system's accessibility tree as a 0.2.0 answer, for
//! apps that are not providers (RFC-0001 section 2: "a host that reads apps
//! through the operating system's accessibility interface").
//!
//! One file per source format turns its bytes into a neutral source tree
//! (`build::Node`); `build` turns that tree into an [`Answer`] that
//! passes [`crate::check::check`]. Which source role becomes which of the
//! thirteen roles is data, in `roles`, one table per source. This module
//! does no I/O: bytes in, an answer out.
//!
//! # Decisions
//!
//! * **Controls, menus, indicators and window furniture are not reported**
//!   (RFC-0001 4.2). What a person reads in them is kept: a control's
//!   children are hoisted into its parent in place (a button's inner text,
//!   a menu's items), and a control whose children carry no text becomes
//!   one `Text` element holding its label (title, else description, else
//!   its string value) as a text block. That `Text` has the control's own
//!   word as its subrole (`AXButton`, `AXTabButton`, `PageTab`, `button`),
//!   its id, and its selected and focused states, so a selected tab still
//!   reads as selected. Furniture (scroll bars, splitters, a window's close,
//!   minimise and zoom buttons, Chromium's `AXColumn`, whose cells repeat
//!   the rows') is dropped with everything inside it.
//! * **Secure fields** become `Text` with subrole `secure`, their title
//!   kept and their value and children dropped. The signals, per format:
//!   macOS `AXSecureTextField`, or the role description "secure text
//!   field" where a file has no subroles (macapptree); UIA `IsPassword`,
//!   its name and value in any case (`True`, `'true'`, `1`); AT-SPI
//!   `PasswordText` in any spelling (`[password text]`) or
//!   `text-input-type:password`; an ARIA textbox whose name says password.
//!   Each importer skips the value where it reads it: the text dumps never
//!   decode it and read no line inside the field; the JSON importers never
//!   copy it out of the parsed document, which is dropped when the import
//!   returns. Nothing the answer owns holds it. A filled field (the value
//!   is not empty, or an AT-SPI caret is past 0) carries one text block,
//!   `[secure value not imported]`, and nothing of the value.
//! * **Role words** are matched in any case and spelling where sources
//!   vary: UIA control types (`Edit`, `edit`), the ARIA role words older
//!   Chromium UIA dumps write (`textbox`, `description`), AT-SPI roles
//!   (`PushButton`, `push button`, `PUSH_BUTTON`).
//! * **What is not understood is refused**, naming it and where (a JSON
//!   pointer or a line): a node in no schema the format's real files use
//!   (ax-json reads macapptree's `role` and Screen2AX's `cls`), a `children`
//!   that is not a list, an ax-dump line in another dialect than the first
//!   or in none, Chromium dumps of other platforms (Blink, IA2, Android).
//!   An import that keeps no element of its source is an error too, never
//!   an empty app-and-window shell.
//! * **A key written twice** in one JSON object, at any depth, is refused
//!   (at its line and the JSON pointer of the second), as the answer reader
//!   refuses one: readers differ on which value counts, so a second, plain
//!   `subrole` must not outvote a first `AXSecureTextField`. Words of the
//!   input a message echoes (keys, role words) are JSON string literals, so
//!   a newline or an ESC in them is written escaped.
//! * **Roots below the app**: a web area, a window or a lone control is
//!   wrapped in a synthesized `Application` (id `app`) and, where there is
//!   no window, a `Window` (id `window`); an ARIA snapshot's outline is also
//!   wrapped in a `Document`. An AT-SPI desktop keeps only the application
//!   that holds the focus (else the first with children).
//! * **Focus** is one unbroken path from the root's child down: the deepest
//!   element the source marks focused is kept (the first in document order
//!   among equals), its ancestors below the root are marked, and every
//!   other mark is dropped. A mark on something not reported is lost.
//! * **Visibility** is stated only where it differs from the parent's.
//! * **Ids** are the source's where it has them (Axe.Windows `RuntimeId`,
//!   AT-SPI object paths, ARIA `ref`s), else `n1`, `n2`, … by position in
//!   document order. A repeat gets `-2`, `-3`, … so ids are unique (R4).
//! * Empty `Group`s and `Image`s (no title, text, children or state) are
//!   dropped: they carry nothing a person reads. A `Group` holding only
//!   words (an ARIA `generic: text`, an AT-SPI section with text) is `Text`.
//! * **Text** goes where the RFC puts it: a name (AXTitle, else
//!   AXDescription; `name`; UIA `Name`) is the `title`; the words a text
//!   shows (AXValue of a text, a static's name, a UIA `Text`'s name, AT-SPI
//!   `text`) are one text content block. A heading's level is the
//!   attribute `level`.
//! * `protocol` is `0.2.0`; `instance` is `import:<format>`.

mod build;
mod roles;

mod aria;
mod atspi_json;
mod ax_dump;
mod ax_json;
mod uia_json;
mod zip;

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::model::Answer;

/// A source format `ctxgate import --from` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Chromium's `DumpAccessibilityTree` text for macOS (`AXRole
    /// AXTitle='…'`, depth by `++`), and the same framing for AT-SPI
    /// (`[role] name='…'`) and UIA (`Edit IsPassword=true`).
    AxDump,
    /// Nested JSON of a macOS window (`role`, `name`, `description`,
    /// `value`, `children`), as written by macapptree and Screen2AX.
    AxJson,
    /// Odilia's flat AT-SPI cache: a JSON array of items with `object`,
    /// `parent`, `children` references, `role`, `states`, `name`, `text`.
    AtspiJson,
    /// Axe.Windows UI Automation trees (`.snapshot`, `.hier`, and the
    /// `.a11ytest` zip holding `el.snapshot`).
    UiaJson,
    /// A Playwright ARIA snapshot (`- role "name" [attrs]: text`), bare or
    /// inside a Markdown ```yaml block.
    Aria,
}

impl Format {
    /// Every format, in the order the CLI lists them.
    pub const ALL: [Format; 5] = [
        Format::AxDump,
        Format::AxJson,
        Format::AtspiJson,
        Format::UiaJson,
        Format::Aria,
    ];

    /// The format's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::AxDump => "ax-dump",
            Format::AxJson => "ax-json",
            Format::AtspiJson => "atspi-json",
            Format::UiaJson => "uia-json",
            Format::Aria => "aria",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = Error;

    fn from_str(word: &str) -> Result<Format> {
        Format::ALL
            .into_iter()
            .find(|f| f.name() == word)
            .ok_or_else(|| {
                let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
                Error::UnknownFormat {
                    word: word.to_string(),
                    expected: names.join(", "),
                }
            })
    }
}

/// Imports an OS accessibility tree in `format` as a protocol 0.2.0 answer
/// that passes [`crate::check::check`] with no errors.
#[tracing::instrument(skip_all, fields(format = %format, bytes = bytes.len()))]
pub fn import(format: Format, bytes: &[u8]) -> Result<Answer<'static>> {
    let source = match format {
        Format::AxDump => ax_dump::parse(bytes)?,
        Format::AxJson => ax_json::parse(bytes)?,
        Format::AtspiJson => atspi_json::parse(bytes)?,
        Format::UiaJson => uia_json::parse(bytes)?,
        Format::Aria => aria::parse(bytes)?,
    };
    let answer = build::answer(format, source)?;
    tracing::debug!(
        elements = crate::model::Tree::new(&answer.root).len(),
        "imported"
    );
    Ok(answer)
}

/// The values a Playwright snapshot shows in its secure fields, which
/// [`import`] never reads: for `ctxgate mcp`, which remembers them for a
/// session to withhold them wherever they appear again.
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
pub(crate) fn aria_secure_values(bytes: &[u8]) -> Vec<String> {
    aria::secure_values(bytes)
}

/// The deepest source tree an importer accepts, in nodes. Real trees are
/// a few dozen deep; the bound keeps the recursive passes' stack small and
/// the answer (two levels deeper at most) well within the reader's limit.
const MAX_DEPTH: usize = 256;

/// An import error, on `line` (1-based) when the problem is on one.
fn error(format: Format, line: Option<usize>, message: impl Into<String>) -> Error {
    Error::Import {
        format: format.name(),
        line,
        message: message.into(),
    }
}

/// Text as UTF-8, without a byte-order mark.
fn utf8(format: Format, bytes: &[u8]) -> Result<&str> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        error(format, Some(line), "the input is not UTF-8")
    })
}

/// Parses JSON. Nesting is bounded by a byte scan first, so serde_json's
/// own recursion limit (128) does not cut real trees short and no input
/// can overflow the stack. A key written twice in one object, at any depth,
/// is refused ([`Strict`]): JSON readers differ on which of the two values
/// counts (serde_json keeps the last, others the first), and a secure
/// field's signal (`"subrole":"AXSecureTextField"`) must not be outvoted by
/// a second, plain one.
fn json(format: Format, bytes: &[u8]) -> Result<serde_json::Value> {
    use serde::de::DeserializeSeed;
    let text = utf8(format, bytes)?;
    // Each tree level is an object and a `children` array, plus room for
    // nesting inside one node's properties.
    let limit = 2 * MAX_DEPTH + 64;
    if let Some(line) = too_deep(text.as_bytes(), limit) {
        return Err(error(
            format,
            Some(line),
            format!("JSON nests deeper than {limit} levels (a tree deeper than {MAX_DEPTH} nodes)"),
        ));
    }
    // serde_json's message ends with the line and column.
    let json_error = |e: serde_json::Error| error(format, None, format!("invalid JSON: {e}"));
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let mut trail = Trail::default();
    let parsed = Strict(&mut trail).deserialize(serde_stacker::Deserializer::new(&mut de));
    let value = match parsed {
        Ok(value) => value,
        Err(e) => {
            return Err(match trail.repeated.take() {
                // serde_json places the error just after the second key.
                Some(key) => error(
                    format,
                    Some(e.line()),
                    format!(
                        "key {} appears twice in one object, the second time at {}; write each key once (JSON readers differ on which of the two values counts, so neither is taken)",
                        quoted(&key),
                        quoted(&trail.pointer(&key))
                    ),
                ),
                None => json_error(e),
            });
        }
    };
    de.end().map_err(json_error)?;
    Ok(value)
}

/// Where a repeated key was found, filled in only on the way out of a
/// failed parse (nothing is kept while parsing succeeds).
#[derive(Default)]
struct Trail {
    /// The key written twice, once [`Strict`] meets its second occurrence.
    repeated: Option<String>,
    /// The pointer's segments from the document down to the object holding
    /// the repeated key, innermost first.
    path: Vec<Segment>,
}

enum Segment {
    Key(String),
    Index(usize),
}

impl Trail {
    /// The JSON pointer (RFC 6901) of `key` in the object the trail ends at.
    fn pointer(&self, key: &str) -> String {
        let mut pointer = String::new();
        for segment in self.path.iter().rev() {
            pointer.push('/');
            match segment {
                Segment::Key(k) => pointer.push_str(&crate::finding::escape_pointer(k)),
                Segment::Index(i) => pointer.push_str(&i.to_string()),
            }
        }
        pointer.push('/');
        pointer.push_str(&crate::finding::escape_pointer(key));
        pointer
    }
}

/// Any JSON value, as serde_json's own `Value` reads it, except that an
/// object with a key written twice is an error (at the second key, which is
/// recorded in the [`Trail`] with the way down to it). One parse: the map
/// is checked as it is built.
struct Strict<'t>(&'t mut Trail);

impl<'de> serde::de::DeserializeSeed<'de> for Strict<'_> {
    type Value = serde_json::Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Strict<'_> {
    type Value = serde_json::Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(serde_json::Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(serde_json::Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(serde_json::Value::from(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(serde_json::Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(serde_json::Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        loop {
            match seq.next_element_seed(Strict(&mut *self.0)) {
                Ok(Some(item)) => items.push(item),
                Ok(None) => return Ok(serde_json::Value::Array(items)),
                Err(e) => {
                    self.0.path.push(Segment::Index(items.len()));
                    return Err(e);
                }
            }
        }
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                self.0.repeated = Some(key);
                return Err(serde::de::Error::custom(
                    "a key appears twice in one object",
                ));
            }
            match map.next_value_seed(Strict(&mut *self.0)) {
                Ok(value) => {
                    object.insert(key, value);
                }
                Err(e) => {
                    self.0.path.push(Segment::Key(key));
                    return Err(e);
                }
            }
        }
        Ok(serde_json::Value::Object(object))
    }
}

/// `text` as a JSON string literal, written through [`crate::escape`]: a
/// newline, an ESC, a bidi override or any other hidden char in the input
/// cannot start a line or a terminal sequence of its own in a message.
fn quoted(text: &str) -> String {
    let mut out = Vec::with_capacity(text.len() + 2);
    let _ = crate::escape::quoted(&mut out, text);
    String::from_utf8(out).unwrap_or_default()
}

/// What kind of JSON value `value` is, for messages (`a number`).
fn kind_of(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The line where JSON nesting first passes `limit`, if it does.
fn too_deep(bytes: &[u8], limit: usize) -> Option<usize> {
    let (mut depth, mut line) = (0usize, 1usize);
    let (mut in_string, mut escaped) = (false, false);
    for &b in bytes {
        if b == b'\n' {
            line += 1;
        }
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return Some(line);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    /// A message's echo of the input is a JSON string that reads back to
    /// the text, with no hidden char written raw.
    #[test]
    fn a_quoted_word_hides_nothing_and_reads_back() {
        for text in [
            "plain",
            "a\nb",
            "\u{1b}[2J",
            "\u{202e}drow",
            "zero\u{200b}width",
            "\u{61c}\u{feff}\u{e0041}",
            "q\"\\",
        ] {
            let quoted = super::quoted(text);
            assert!(!quoted.chars().any(crate::escape::hidden), "{quoted:?}");
            assert_eq!(serde_json::from_str::<String>(&quoted).unwrap(), text);
        }
    }
}
