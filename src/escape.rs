//! The one escaper of provider text. Every string a provider wrote that
//! either format sends (roles, subroles, ids, titles, urls, attribute names
//! and values, content text, mime types, block types, notice words) is
//! written through [`escape`]: JSON's own escapes for `"`, `\` and C0
//! controls, and `\uXXXX` (a surrogate pair above U+FFFF) for every other
//! char that could break a line, reorder text or hide ([`hidden`]).
//!
//! The result is always the body of a valid JSON string that reads back to
//! the same text, so the JSON format stays byte-for-byte what the fitter
//! measured, and the outline can quote with it.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::{CharEscape, CompactFormatter, Formatter, PrettyFormatter, Serializer};

/// The chars of Unicode 16.0 general categories Cc (controls, NEL
/// included), Cf (format controls: bidi embeddings, overrides and
/// isolates, U+061C, zero-width chars, U+180E, U+FEFF, tags), Zl (U+2028)
/// and Zp (U+2029), as inclusive ranges in order. A unit test holds the
/// table equal to the `regex` crate's `\p{Cc}\p{Cf}\p{Zl}\p{Zp}`.
const HIDDEN: &[(char, char)] = &[
    ('\u{0}', '\u{1f}'),
    ('\u{7f}', '\u{9f}'),
    ('\u{ad}', '\u{ad}'),
    ('\u{600}', '\u{605}'),
    ('\u{61c}', '\u{61c}'),
    ('\u{6dd}', '\u{6dd}'),
    ('\u{70f}', '\u{70f}'),
    ('\u{890}', '\u{891}'),
    ('\u{8e2}', '\u{8e2}'),
    ('\u{180e}', '\u{180e}'),
    ('\u{200b}', '\u{200f}'),
    ('\u{2028}', '\u{202e}'),
    ('\u{2060}', '\u{2064}'),
    ('\u{2066}', '\u{206f}'),
    ('\u{feff}', '\u{feff}'),
    ('\u{fff9}', '\u{fffb}'),
    ('\u{110bd}', '\u{110bd}'),
    ('\u{110cd}', '\u{110cd}'),
    ('\u{13430}', '\u{1343f}'),
    ('\u{1bca0}', '\u{1bca3}'),
    ('\u{1d173}', '\u{1d17a}'),
    ('\u{e0001}', '\u{e0001}'),
    ('\u{e0020}', '\u{e007f}'),
];

/// Whether `c` could break a line (LF, VT, FF, CR, NEL, U+2028, U+2029),
/// reorder the text around it (bidi controls) or not show at all: a char
/// of [`HIDDEN`]. Such a char is never written raw.
pub fn hidden(c: char) -> bool {
    if c < '\u{ad}' {
        return c < ' ' || ('\u{7f}'..='\u{9f}').contains(&c);
    }
    HIDDEN
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// Whether `c` is a combining mark or variation selector that a reader of
/// secrets and of secret words reads as part of the char before it: the
/// combining diacritical marks (and their extended and supplement blocks),
/// those for symbols, the half marks and the variation selectors.
pub fn combining_mark(c: char) -> bool {
    matches!(c,
        '\u{300}'..='\u{36F}'
        | '\u{1AB0}'..='\u{1AFF}'
        | '\u{1DC0}'..='\u{1DFF}'
        | '\u{20D0}'..='\u{20FF}'
        | '\u{FE00}'..='\u{FE0F}'
        | '\u{FE20}'..='\u{FE2F}'
        | '\u{E0100}'..='\u{E01EF}')
}

/// Whether `c` is [`hidden`] without breaking a line: a format char (the
/// soft hyphen, zero-width and bidi controls, tags), which a reader of
/// secrets and of secret words skips. Controls (C1 and NEL among them)
/// and U+2028/U+2029 are not: they break lines, as the ASCII controls do.
pub fn unseen_format(c: char) -> bool {
    hidden(c) && !c.is_control() && !matches!(c, '\u{2028}' | '\u{2029}')
}

/// Writes `text` with `\`, every [`hidden`] char and, when `quote`, `"`
/// escaped as JSON escapes them. With `quote` this is the body of a JSON
/// string literal; without, an outline content line (where `"` is plain).
pub fn escape<W: Write + ?Sized>(out: &mut W, text: &str, quote: bool) -> io::Result<()> {
    let bytes = text.as_bytes();
    let (mut run, mut at) = (0, 0);
    while at < bytes.len() {
        // Printable ASCII but `\` and `"` is most text: no char to decode.
        let b = bytes[at];
        if (b' '..=b'~').contains(&b) && b != b'\\' && (b != b'"' || !quote) {
            at += 1;
            continue;
        }
        let Some(c) = text[at..].chars().next() else {
            break;
        };
        let next = at + c.len_utf8();
        if b == b'\\' || b == b'"' || hidden(c) {
            out.write_all(&bytes[run..at])?;
            escape_char(out, c)?;
            run = next;
        }
        at = next;
    }
    out.write_all(&bytes[run..])
}

/// One char's escape: JSON's short forms where it has one, else `\uXXXX`
/// per UTF-16 unit (lowercase hex, as serde_json writes C0 controls).
fn escape_char<W: Write + ?Sized>(out: &mut W, c: char) -> io::Result<()> {
    let short = match c {
        '"' => "\\\"",
        '\\' => "\\\\",
        '\u{8}' => "\\b",
        '\u{c}' => "\\f",
        '\n' => "\\n",
        '\r' => "\\r",
        '\t' => "\\t",
        c => {
            for unit in c.encode_utf16(&mut [0; 2]) {
                write!(out, "\\u{unit:04x}")?;
            }
            return Ok(());
        }
    };
    out.write_all(short.as_bytes())
}

/// `text` with every hidden char (C0 and C1 controls, format and bidi
/// controls, line and paragraph separators) written as `\uXXXX` and nothing
/// else changed: for diagnostics (findings, errors on stderr) that name a
/// provider's id, role or key, so no input can start a line, move the
/// cursor or reorder what a terminal or a log shows.
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(hidden) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if hidden(c) {
            for unit in c.encode_utf16(&mut [0; 2]) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A JSON string literal of `text`, written by [`escape`].
pub fn quoted<W: Write + ?Sized>(out: &mut W, text: &str) -> io::Result<()> {
    out.write_all(b"\"")?;
    escape(out, text, true)?;
    out.write_all(b"\"")
}

/// Whether `text` is a plain word, written as itself where a name is
/// expected: 1 or more ASCII letters, digits, `_ - . : /`. Such a word
/// holds no space, quote, bracket or arrow, so it cannot end a field early
/// or say anything but itself.
pub fn plain_word(text: &str) -> bool {
    !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':' | b'/'))
}

/// A name (an id, a role word, a rule): a [`plain_word`] as is, anything
/// else as a string literal ([`quoted`]).
pub fn word<W: Write + ?Sized>(out: &mut W, text: &str) -> io::Result<()> {
    if plain_word(text) {
        out.write_all(text.as_bytes())
    } else {
        quoted(out, text)
    }
}

/// Compact JSON of `value` with every string (keys too) written by
/// [`escape`].
pub fn json_value<W: Write, T: Serialize + ?Sized>(out: &mut W, value: &T) {
    let mut serializer = Serializer::with_formatter(out, Escaping(CompactFormatter));
    value
        .serialize(&mut serializer)
        .expect("JSON values and content blocks serialize into memory");
}

/// Indented JSON of `value` (serde_json's pretty layout), with every string
/// written by [`escape`]: for JSON a person reads in a terminal.
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
pub fn json_pretty<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::with_capacity(4096);
    let mut serializer = Serializer::with_formatter(&mut out, Escaping(PrettyFormatter::new()));
    value
        .serialize(&mut serializer)
        .expect("JSON values serialize into memory");
    String::from_utf8(out).expect("JSON is written from strs and ASCII")
}

/// A serde_json formatter (compact or pretty) with strings written by
/// [`escape`]: serde_json hands over the runs between the chars it escapes
/// itself (`"`, `\`, C0) and those chars one by one; both go through the
/// escaper. Layout is the inner formatter's.
struct Escaping<F>(F);

impl<F: Formatter> Formatter for Escaping<F> {
    fn begin_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_array(writer)
    }

    fn end_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_array(writer)
    }

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_array_value(writer, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_array_value(writer)
    }

    fn begin_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_object(writer)
    }

    fn end_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object(writer)
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_object_key(writer, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_object_value(writer)
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object_value(writer)
    }

    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        escape(writer, fragment, true)
    }

    fn write_char_escape<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        char_escape: CharEscape,
    ) -> io::Result<()> {
        let c = match char_escape {
            CharEscape::Quote => '"',
            CharEscape::ReverseSolidus => '\\',
            CharEscape::Solidus => return writer.write_all(b"\\/"),
            CharEscape::Backspace => '\u{8}',
            CharEscape::FormFeed => '\u{c}',
            CharEscape::LineFeed => '\n',
            CharEscape::CarriageReturn => '\r',
            CharEscape::Tab => '\t',
            CharEscape::AsciiControl(byte) => char::from(byte),
        };
        escape_char(writer, c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quote(text: &str) -> String {
        let mut out = Vec::new();
        quoted(&mut out, text).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_table_is_exactly_unicode_cc_cf_zl_and_zp() {
        let regex = regex::Regex::new(r"^[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]$").unwrap();
        assert!(HIDDEN.windows(2).all(|w| w[0].1 < w[1].0));
        let mut buf = [0; 4];
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            assert_eq!(hidden(c), regex.is_match(c.encode_utf8(&mut buf)), "{c:?}");
        }
    }

    #[test]
    fn every_line_terminator_and_bidi_control_is_escaped() {
        assert_eq!(
            quote("a\nb\u{b}c\u{c}d\re\u{85}f\u{2028}g\u{2029}h"),
            r#""a\nb\u000bc\fd\re\u0085f\u2028g\u2029h""#
        );
        assert_eq!(
            quote("\u{202e}\u{2066}\u{2067}\u{2068}\u{2069}\u{61c}\u{200b}\u{feff}\u{180e}"),
            r#""\u202e\u2066\u2067\u2068\u2069\u061c\u200b\ufeff\u180e""#
        );
        // A tag char is a surrogate pair, as JSON needs.
        assert_eq!(quote("x\u{e0041}"), r#""x\udb40\udc41""#);
        assert_eq!(quote("\"\\\u{7f}é"), r#""\"\\\u007fé""#);
        let mut line = Vec::new();
        escape(&mut line, "say \"hi\" \\ \t", false).unwrap();
        assert_eq!(String::from_utf8(line).unwrap(), r#"say "hi" \\ \t"#);
    }

    #[test]
    fn literals_and_values_read_back_to_the_same_text() {
        let hostile =
            "\u{0}\u{1f} \u{7f}\u{85}\u{9f}\n\r\u{2028}\u{202e}\u{e007f}\"\\/{}[ctxgate] ok é 😀";
        let literal = quote(hostile);
        assert!(!literal.chars().any(hidden), "{literal}");
        assert_eq!(serde_json::from_str::<String>(&literal).unwrap(), hostile);
        let value = serde_json::json!({ hostile: [hostile, {"k": hostile}, 1, null] });
        let mut out = Vec::new();
        json_value(&mut out, &value);
        let text = String::from_utf8(out).unwrap();
        assert!(!text.chars().any(hidden), "{text}");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            value
        );
        // A string through the formatter is the literal `quoted` writes.
        let mut through = Vec::new();
        json_value(&mut through, hostile);
        assert_eq!(String::from_utf8(through).unwrap(), literal);
        // Text without such chars is written as serde_json writes it.
        let plain = serde_json::json!({"a": ["b \" \\ \n", 2.5, true]});
        let mut ours = Vec::new();
        json_value(&mut ours, &plain);
        assert_eq!(String::from_utf8(ours).unwrap(), plain.to_string());
    }

    #[test]
    fn pretty_json_is_serde_jsons_layout_with_the_same_escapes() {
        let plain = serde_json::json!({"a": ["b \" \\ \n", 2.5, true], "c": {}, "d": []});
        assert_eq!(
            json_pretty(&plain),
            serde_json::to_string_pretty(&plain).unwrap()
        );
        let hostile = serde_json::json!({"k\u{2028}": ["a\u{85}b\u{202e}c\u{2069}"]});
        let text = json_pretty(&hostile);
        assert_eq!(
            text,
            "{\n  \"k\\u2028\": [\n    \"a\\u0085b\\u202ec\\u2069\"\n  ]\n}"
        );
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            hostile
        );
    }

    #[test]
    fn a_word_is_plain_or_a_literal() {
        for (text, written) in [
            ("keep:focus-path", "keep:focus-path"),
            ("a/b.c_d", "a/b.c_d"),
            ("", r#""""#),
            ("x → masked", r#""x → masked""#),
            ("a\"b\n", r#""a\"b\n""#),
        ] {
            let mut out = Vec::new();
            word(&mut out, text).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), written, "{text:?}");
        }
    }
}
