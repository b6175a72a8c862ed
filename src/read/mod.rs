//! Reading an answer: bytes in, an [`Answer`] and every finding out.
//!
//! Three layers, cheapest first:
//! 1. a byte scan (`scan`) that bounds JSON nesting before any recursive
//!    parser runs, so no input can overflow the stack, however deep;
//! 2. one lenient pass of serde_json with our own visitors: a field of the
//!    wrong type, a missing field, a key written twice in one object or an
//!    unknown field becomes a [`Finding`] at its JSON pointer and reading
//!    goes on, so the user sees every problem at once; limits on elements,
//!    depth and content abort at once. A value that is not kept (an unknown
//!    field's, a wrong-typed one) is skipped as strictly as a kept one is
//!    read (`Skip`): a number no f64 holds or a lone surrogate is refused
//!    wherever it stands;
//! 3. protocol dispatch: 0.2.x is taken as is, 0.1 is upgraded
//!    ([`crate::model::v01`]) under the same limits.
//!
//! The lenient pass is split by job: `element` reads the answer object, the
//! elements, their children and content blocks; `fields` holds the one
//! table of field names (the enum, its parsing, names and seen-bits are
//! generated from it) and the findings about fields; `value` reads scalars,
//! bounded values kept whole, and skips values as strictly as it reads
//! them. This file holds the entry points, the reader's context and the
//! protocol dispatch.
//!
//! Conformance rules that need the whole tree (R1, R3, R4, R6) are in
//! [`mod@crate::check`], which also composes reading and checking; this module
//! does not depend on it.

use serde::de::{self, DeserializeSeed};
use serde_json::Value;

use crate::deadline::{Deadline, Stage};
use crate::error::{Error, Result};
use crate::finding::{Finding, Requirement};
use crate::limits::Limits;
use crate::model::doc::Doc;
use crate::model::{v01, Answer, Content, Element};

// The lenient pass.

/// Visits any JSON value: objects and arrays go to the visitor's `on_map`
/// and `on_seq`; anything else is `Err(kind)`, for the caller's finding.
macro_rules! kind_visitor {
    ($visitor:ty, $ok:ty, $expecting:literal) => {
        impl<'de> Visitor<'de> for $visitor {
            type Value = Result<$ok, &'static str>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str($expecting)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Err("a boolean"))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Err("a number"))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Err("a number"))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Err("a number"))
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Err("a string"))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Err("null"))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                self.on_seq(seq)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                self.on_map(map)
            }
        }
    };
}

mod element;
mod fast;
mod fields;
mod scan;
mod value;

use element::{AnswerSeed, BlockScratch};
use scan::{line_column, scan_nesting};
use value::Scalar;

/// What reading produced: the answer (when its shape allowed building one)
/// and every finding of the reading stage.
#[derive(Debug)]
pub struct Reading<'a> {
    /// The answer, in 0.2.0 form, its strings borrowed from the input where
    /// they need no unescaping. `None` when there was no usable root.
    pub answer: Option<Answer<'a>>,
    /// Findings of the reading stage, errors and warnings.
    pub findings: Vec<Finding>,
    /// The protocol the input was written in, when it was upgraded from 0.1.
    pub upgraded_from: Option<String>,
}

/// Reads an answer. `Err` when the input cannot be read at all (not JSON,
/// over a limit); otherwise every shape problem is a finding.
pub fn read<'a>(bytes: &'a [u8], limits: &Limits) -> Result<Reading<'a>> {
    read_until(bytes, limits, None)
}

/// [`read`], failing with [`Error::Deadline`] once `deadline` passes.
///
/// Most answers are read in one pass by the fast reader ([`read_fast_into`],
/// its JSON nesting bounded from what it read). Any answer it is not sure of
/// (a finding, a limit, bad JSON, a 0.1 answer, a key with an escape) is
/// read again in two passes ([`read_two_passes`]: the nesting scan, then the
/// lenient pass), so every refusal and every finding is the two-pass
/// reader's, word for word.
///
/// The lenient pass is not tried in one pass: it stops at its first finding
/// by returning an error through serde_json, which, unwinding, computes a
/// line and column at every level it leaves, each by scanning the input from
/// its start: the levels times the offset. The two passes make no error of a
/// finding.
pub(crate) fn read_until<'a>(
    bytes: &'a [u8],
    limits: &Limits,
    deadline: Option<&Deadline>,
) -> Result<Reading<'a>> {
    if let Some(((), reading)) = read_fast_into(bytes, limits, deadline, |_, _| {}, |_| Some(()))? {
        return Ok(reading);
    }
    read_until_not_fast(bytes, limits, deadline)
}

/// A clean answer read straight into a [`Doc`] (for a request, and for the
/// checker alone): `Some` exactly when [`read_until`] would read it in one
/// pass by the fast reader (a 0.2.x answer with no finding: the checks of
/// [`finish_one_pass`]), `None` for anything else, which the caller reads
/// whole. No public [`Element`](crate::model::Element) tree is built. The
/// same `Err` as [`read_until`] for an input over `max_input_bytes` or past
/// `deadline`.
pub(crate) fn read_doc<'a>(
    bytes: &'a [u8],
    limits: &Limits,
    deadline: Option<&Deadline>,
) -> Result<Option<Doc<'a>>> {
    let read = read_fast_into(
        bytes,
        limits,
        deadline,
        |ctx, text| ctx.doc = Some(Doc::new(text)),
        |ctx| ctx.doc.take(),
    )?;
    Ok(read.and_then(|(mut doc, reading)| {
        let answer = reading.answer?;
        doc.protocol = answer.protocol;
        doc.instance = answer.instance;
        doc.finish();
        Some(doc)
    }))
}

/// [`read_until`] after [`read_doc`] gave `None`: its fast reader was
/// not sure, and would not be again, so the answer is read in two passes
/// (what [`read_until`] does next; see there for why not the
/// lenient pass in one).
pub(crate) fn read_until_not_fast<'a>(
    bytes: &'a [u8],
    limits: &Limits,
    deadline: Option<&Deadline>,
) -> Result<Reading<'a>> {
    let bytes = within_size(bytes, limits)?;
    read_two_passes(bytes, limits, deadline)
}

/// The fast reader alone, keeping what `keep` sets the context up to keep
/// (a [`Doc`], or nothing; `keep` is given the text after the byte-order
/// mark) and `take` takes back from it: `Some` with the reading exactly
/// when [`read_until`] would read the answer in one pass by the fast
/// reader (the checks of [`finish_one_pass`]). The same `Err` as
/// [`read_until`] for an input over `max_input_bytes` or past `deadline`.
fn read_fast_into<'a, T>(
    bytes: &'a [u8],
    limits: &Limits,
    deadline: Option<&Deadline>,
    keep: impl FnOnce(&mut Ctx<'_, 'a>, &'a str),
    take: impl FnOnce(&mut Ctx<'_, 'a>) -> Option<T>,
) -> Result<Option<(T, Reading<'a>)>> {
    let bytes = within_size(bytes, limits)?;
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Ok(None);
    };
    let _one_pass = value::OnePass::start();
    let mut ctx = Ctx::new(limits, deadline);
    keep(&mut ctx, text);
    let raw = match fast::read_answer(text, &mut ctx) {
        Ok(raw) => raw,
        Err(fast::Stop::Deadline) => {
            let deadline = deadline.expect("only a deadline stops the fast reader so");
            return Err(deadline.passed(Stage::Read));
        }
        Err(fast::Stop::Doubt) => return Ok(None),
    };
    let Some(kept) = take(&mut ctx) else {
        return Ok(None);
    };
    let reading = finish_one_pass(raw, &ctx, limits, deadline)?;
    Ok(reading.map(|reading| (kept, reading)))
}

/// What the fast reader read, kept only when it is exactly what the two
/// passes give (`None` otherwise).
fn finish_one_pass<'a>(
    raw: RawAnswer<'a>,
    ctx: &Ctx<'_, 'a>,
    limits: &Limits,
    deadline: Option<&Deadline>,
) -> Result<Option<Reading<'a>>> {
    // What the two passes would find nothing in: a 0.2.x answer with its
    // `protocol`, `instance` and `root`, none of the answer fields 0.2.0
    // removed, and no finding anywhere.
    let clean = ctx.findings.is_empty()
        && raw.instance.is_some()
        && raw.root.is_some()
        && raw.items.is_none()
        && raw.focus.is_none()
        && raw.title.is_none()
        && !raw.unreadable
        && raw
            .protocol
            .as_deref()
            .is_some_and(|p| matches!(Version::of(p), Version::V02));
    // The deepest bracket: an element at depth k is at nesting 2k, its
    // `content` array 2k + 1, a block 2k + 2, a value at level L inside a
    // block 2k + 2 + L (inside `attributes`, 2k + 1 + L).
    let nesting = 2 * ctx.deepest + 2 + value::OnePass::deepest_value();
    if !clean || nesting > limits.max_json_nesting() {
        return Ok(None);
    }
    let mut findings = Vec::new();
    let (answer, upgraded_from) = dispatch(raw, &mut findings, limits)?;
    if !findings.is_empty() || answer.is_none() {
        return Ok(None);
    }
    if let Some(deadline) = deadline {
        deadline.check(Stage::Read)?;
    }
    Ok(Some(Reading {
        answer,
        findings,
        upgraded_from,
    }))
}

/// The fast reader alone: `Ok(None)` at its first doubt (the differential
/// tests' reader of the one pass).
#[cfg(test)]
pub(crate) fn read_fast_alone<'a>(bytes: &'a [u8], limits: &Limits) -> Result<Option<Reading<'a>>> {
    let read = read_fast_into(bytes, limits, None, |_, _| {}, |_| Some(()))?;
    Ok(read.map(|((), reading)| reading))
}

/// The reference reader: the input's size, the byte-order mark, then two
/// passes, whatever the answer (the differential tests').
#[cfg(test)]
pub(crate) fn read_in_two_passes<'a>(
    bytes: &'a [u8],
    limits: &Limits,
    deadline: Option<&Deadline>,
) -> Result<Reading<'a>> {
    read_two_passes(within_size(bytes, limits)?, limits, deadline)
}

/// The input, refused over `max_input_bytes`, without its UTF-8 byte-order
/// mark (allowed before JSON text, RFC 8259 8.1).
fn within_size<'a>(bytes: &'a [u8], limits: &Limits) -> Result<&'a [u8]> {
    if bytes.len() > limits.max_input_bytes {
        return Err(Error::InputTooLarge {
            size: bytes.len(),
            limit: limits.max_input_bytes,
        });
    }
    Ok(bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes))
}

/// The reader in two passes: the nesting scan, then the lenient pass.
pub(crate) fn read_two_passes<'a>(
    bytes: &'a [u8],
    limits: &Limits,
    deadline: Option<&Deadline>,
) -> Result<Reading<'a>> {
    scan_nesting(bytes, limits)?;
    // JSON text is UTF-8 (RFC 8259 8.1): validated once, up front, so the
    // parser reads a `str` and skips validating each string again.
    let text = std::str::from_utf8(bytes).map_err(|err| {
        let (line, column) = line_column(bytes, err.valid_up_to());
        Error::Json {
            line,
            column,
            message: "invalid UTF-8 (JSON text must be UTF-8)".into(),
        }
    })?;

    let mut ctx = Ctx::new(limits, deadline);
    let mut json = serde_json::Deserializer::from_str(text);
    json.disable_recursion_limit();
    let parsed = AnswerSeed(&mut ctx).deserialize(&mut json);
    let raw = match parsed.and_then(|raw| json.end().map(|()| raw)) {
        Ok(raw) => raw,
        Err(err) => {
            return Err(match ctx.abort.take() {
                Some(abort) => abort,
                None => json_error(&err, bytes),
            })
        }
    };
    let mut findings = ctx.findings;
    let Some(raw) = raw else {
        return Ok(Reading {
            answer: None,
            findings,
            upgraded_from: None,
        });
    };
    let (answer, upgraded_from) = dispatch(raw, &mut findings, limits)?;
    if let Some(deadline) = deadline {
        deadline.check(Stage::Read)?;
    }
    Ok(Reading {
        answer,
        findings,
        upgraded_from,
    })
}

/// serde_json's error at a 1-based line and column of `bytes`: the byte it
/// failed on, or, when the input ended too early, the place just past its
/// last byte (serde_json says column 0 after a final newline).
fn json_error(err: &serde_json::Error, bytes: &[u8]) -> Error {
    let message = err.to_string();
    // serde_json appends " at line L column C"; we state the place ourselves.
    let message = match message.rfind(" at line ") {
        Some(at) => message[..at].to_string(),
        None => message,
    };
    let (line, column) = match err.is_eof() {
        true => line_column(bytes, bytes.len()),
        false => (err.line().max(1), err.column().max(1)),
    };
    Error::Json {
        line,
        column,
        message,
    }
}

// ---------------------------------------------------------------------------
// Protocol dispatch.

#[derive(Default)]
struct RawAnswer<'de> {
    protocol: Option<String>,
    instance: Option<String>,
    root: Option<Element<'de>>,
    items: Option<Value>,
    focus: Option<Value>,
    title: Option<String>,
    /// `items` or `focus` was there but could not be read (a finding says
    /// why): a 0.1 answer is then not upgraded.
    unreadable: bool,
}

fn dispatch<'a>(
    raw: RawAnswer<'a>,
    findings: &mut Vec<Finding>,
    limits: &Limits,
) -> Result<(Option<Answer<'a>>, Option<String>)> {
    let Some(protocol) = raw.protocol else {
        findings.push(Finding::error(
            Requirement::Schema,
            "/protocol",
            None,
            "the answer needs a `protocol` (\"0.2.0\")",
        ));
        return Ok((None, None));
    };
    let instance = raw.instance.unwrap_or_else(|| {
        findings.push(Finding::error(
            Requirement::Schema,
            "/instance",
            None,
            "the answer needs an `instance` string",
        ));
        String::new()
    });
    match Version::of(&protocol) {
        Version::V02 => {
            for (field, present) in [
                ("items", raw.items.is_some() || raw.unreadable),
                ("focus", raw.focus.is_some() || raw.unreadable),
            ] {
                if present {
                    findings.push(Finding::error(
                        Requirement::R1,
                        format!("/{field}"),
                        None,
                        format!(
                            "the answer-level `{field}` was removed in 0.2.0; state is said on the element it describes (set `focused`/`selected` on the elements themselves)"
                        ),
                    ));
                }
            }
            if raw.title.is_some() {
                findings.push(Finding::warning(
                    Requirement::Schema,
                    "/title",
                    None,
                    "unknown answer field `title` is ignored and never sent (the app's title is the root's `title`)",
                ));
            }
            let Some(root) = raw.root else {
                findings.push(Finding::error(
                    Requirement::Schema,
                    "/root",
                    None,
                    "the answer needs a `root` element",
                ));
                return Ok((None, None));
            };
            Ok((
                Some(Answer {
                    protocol,
                    instance,
                    root,
                }),
                None,
            ))
        }
        Version::V01 => {
            if raw.root.is_some() {
                findings.push(Finding::error(
                    Requirement::Version,
                    "/root",
                    None,
                    "a 0.1 answer has `items`, not `root`; say \"protocol\": \"0.2.0\" for a tree",
                ));
                return Ok((None, None));
            }
            if raw.unreadable {
                return Ok((None, Some(protocol)));
            }
            let root = match v01::upgrade(raw.items, raw.focus, raw.title, limits) {
                Ok(root) => root,
                Err(Error::Upgrade { pointer, message }) => {
                    findings.push(Finding::error(
                        Requirement::Version,
                        pointer,
                        None,
                        format!("cannot upgrade the 0.1 answer: {message}"),
                    ));
                    return Ok((None, Some(protocol)));
                }
                Err(other) => return Err(other),
            };
            Ok((
                Some(Answer {
                    protocol: crate::model::PROTOCOL.to_string(),
                    instance,
                    root,
                }),
                Some(protocol),
            ))
        }
        Version::Unknown => {
            findings.push(Finding::error(
                Requirement::Version,
                "/protocol",
                None,
                // Named only when it looks like a version (digits and
                // dots, short): anything else is the provider's text, and a
                // finding carries none.
                if protocol.len() <= 16
                    && protocol.bytes().all(|b| b.is_ascii_digit() || b == b'.')
                {
                    format!(
                        "unknown protocol version `{protocol}`; ctxgate reads 0.2.x and upgrades 0.1"
                    )
                } else {
                    format!(
                        "unknown protocol version (a string of {} bytes that is not a version); ctxgate reads 0.2.x and upgrades 0.1",
                        protocol.len()
                    )
                },
            ));
            Ok((None, None))
        }
    }
}

enum Version {
    V01,
    V02,
    Unknown,
}

impl Version {
    fn of(protocol: &str) -> Version {
        let patch = |rest: &str| {
            rest.is_empty()
                || (rest.starts_with('.')
                    && rest.len() > 1
                    && rest[1..].bytes().all(|b| b.is_ascii_digit()))
        };
        if let Some(rest) = protocol.strip_prefix("0.2") {
            if rest.starts_with('.') && patch(rest) {
                return Version::V02;
            }
        }
        if let Some(rest) = protocol.strip_prefix("0.1") {
            if patch(rest) {
                return Version::V01;
            }
        }
        Version::Unknown
    }
}

// ---------------------------------------------------------------------------

struct Ctx<'l, 'de> {
    limits: &'l Limits,
    deadline: Option<&'l Deadline>,
    findings: Vec<Finding>,
    /// Child indices from the root to the element being read; its JSON
    /// pointer is built from them only when a finding needs it.
    path: Vec<u32>,
    elements: usize,
    depth: usize,
    /// The deepest element read so far (the root is 1).
    deepest: usize,
    /// A limit error that stopped the parse; reported instead of serde's.
    abort: Option<Error>,
    /// Scratch stacks, reused for every element: the children read so far
    /// (of every open element; each list is moved out at its end, at its
    /// exact size), one element's content blocks, one block's pairs, the
    /// order [`repeats`] sorts many keys in.
    siblings: Vec<Element<'de>>,
    blocks: Vec<Content<'de>>,
    block: BlockScratch<'de>,
    order: Vec<u32>,
    /// One element's attributes as they are read ([`value::AttributesSeed`]).
    pairs: Vec<(String, Value)>,
    /// Reading into a doc ([`read_doc`], the fast reader only): each
    /// element's fields move here, its shell is dropped.
    doc: Option<Doc<'de>>,
}

impl<'l> Ctx<'l, '_> {
    fn new(limits: &'l Limits, deadline: Option<&'l Deadline>) -> Self {
        Ctx {
            limits,
            deadline,
            findings: Vec::new(),
            path: Vec::new(),
            elements: 0,
            depth: 0,
            deepest: 0,
            abort: None,
            siblings: Vec::new(),
            blocks: Vec::new(),
            block: BlockScratch::default(),
            order: Vec::new(),
            pairs: Vec::new(),
            doc: None,
        }
    }

    /// The JSON pointer of the element being read.
    fn pointer(&self) -> String {
        let mut pointer = String::from("/root");
        for index in &self.path {
            pointer.push_str("/children/");
            pointer.push_str(&index.to_string());
        }
        pointer
    }

    fn stop<E: de::Error>(&mut self, error: Error) -> E {
        self.abort = Some(error);
        E::custom("limit exceeded")
    }

    /// A list as read, or (when something else stood there) a finding and
    /// an empty list.
    fn list_or_wrong_type<T>(
        &mut self,
        read: std::result::Result<Vec<T>, &'static str>,
        field: &str,
        expected: &str,
    ) -> Vec<T> {
        read.unwrap_or_else(|kind| {
            self.wrong_type(field, expected, &Scalar::Other(kind), None);
            Vec::new()
        })
    }

    fn wrong_type(&mut self, field: &str, expected: &str, found: &Scalar<'_>, id: Option<&str>) {
        self.findings.push(Finding::error(
            Requirement::Schema,
            format!("{}/{}", self.pointer(), field),
            id.map(str::to_string),
            format!("`{field}` must be {expected}, found {}", found.kind()),
        ));
    }
}

#[cfg(test)]
pub(crate) mod differential;

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::fields::repeats;
    use super::*;
    use crate::check::read_conforming;
    use crate::model::Block;

    fn errors(json: &[u8]) -> Vec<String> {
        let reading = read(json, &Limits::default()).unwrap();
        reading
            .findings
            .iter()
            .filter(|f| f.is_error())
            .map(|f| f.to_string())
            .collect()
    }

    #[test]
    fn a_repeated_key_in_a_content_block_is_refused_and_the_block_dropped() {
        let json = br#"{"protocol":"0.2.0","instance":"i","root":{"id":"a","role":"Application",
            "content":[{"type":"text","text":"one","note":1,"text":"two"},{"type":"text","text":"ok"}]}}"#;
        assert_eq!(
            errors(json),
            ["error[4.1] /root/content/0/text: key `text` appears twice in one object; write each key once (JSON readers differ on which value counts)"]
        );
        let reading = read(json, &Limits::default()).unwrap();
        let root = reading.answer.unwrap().root;
        assert_eq!(
            serde_json::to_string(&root.content).unwrap(),
            r#"[{"type":"text","text":"ok"}]"#
        );
    }

    #[test]
    fn a_block_of_many_keys_keeps_each_once_in_order() {
        let json = br#"{"protocol":"0.2.0","instance":"i","root":{"id":"a","role":"Application",
            "content":[{"type":"text","a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"text":"t"}]}}"#;
        let answer = read_conforming(json, &Limits::default()).unwrap();
        assert_eq!(
            serde_json::to_string(&answer.root.content).unwrap(),
            r#"[{"type":"text","text":"t","a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8}]"#
        );
    }

    #[test]
    fn repeats_finds_every_second_occurrence_few_or_many() {
        let mut order = Vec::new();
        let few = ["a", "b", "a", "c", "b", "a"];
        assert_eq!(repeats(&few, |k| k, &mut order), [2, 4, 5]);
        let many: Vec<String> = (0..20).map(|i| format!("k{}", i % 7)).collect();
        let expected: Vec<usize> = (7..20).collect();
        assert_eq!(repeats(&many, String::as_str, &mut order), expected);
        let distinct: Vec<String> = (0..20).map(|i| format!("k{i}")).collect();
        assert!(repeats(&distinct, String::as_str, &mut order).is_empty());
    }

    #[test]
    fn numbers_out_of_an_f64_range_are_refused_wherever_they_stand() {
        let cases: [(&[u8], &str); 6] = [
            // An unknown field's value is skipped, not parsed.
            (
                br#"{"protocol":"0.2.0","instance":"i","x":1e999,"root":{"id":"a","role":"Application"}}"#,
                "invalid JSON at line 1, column 44: number out of range",
            ),
            (
                br#"{"protocol":"0.2.0","instance":"i","root":{"id":"a","role":"Application","note":[-2E+308]}}"#,
                "invalid JSON at line 1, column 88: number out of range",
            ),
            // A wrong-typed value is skipped too.
            (
                br#"{"protocol":"0.2.0","instance":"i","root":{"id":"a","role":"Application","title":{"n":1.8e308}}}"#,
                "invalid JSON at line 1, column 93: number out of range",
            ),
            (
                br#"{"protocol":"0.1","instance":"i","items":[{"id":"a","type":"pane","payload":{"n":1e400}}]}"#,
                "invalid JSON at line 1, column 86: number out of range",
            ),
            (
                br#"{"protocol":"0.2.0","instance":"i","root":{"id":"a","role":"Application"}} 1e999"#,
                "invalid JSON at line 1, column 76: trailing characters",
            ),
            (
                b"{\"x\":\n  1e999}",
                "invalid JSON at line 2, column 7: number out of range",
            ),
        ];
        for (json, message) in cases {
            let err = read(json, &Limits::default()).unwrap_err();
            assert_eq!(
                err.to_string(),
                message,
                "{}",
                String::from_utf8_lossy(json)
            );
        }
        // Past the depth values are read to, what is skipped is still checked.
        for field in ["x", "attributes"] {
            let deep = format!("{}{{\"n\":1e999}}{}", "[".repeat(500), "]".repeat(500));
            let json = format!(
                r#"{{"protocol":"0.2.0","instance":"i","root":{{"id":"a","role":"Application","{field}":{{"k":{deep}}}}}}}"#
            );
            let err = read(json.as_bytes(), &Limits::default()).unwrap_err();
            assert!(
                err.to_string().ends_with(": number out of range"),
                "{field}: {err}"
            );
        }
        // 309 digits pass f64::MAX; 300 do not.
        for (digits, ok) in [(300, true), (309, false)] {
            let json = format!(
                r#"{{"protocol":"0.2.0","instance":"i","x":{},"root":{{"id":"a","role":"Application"}}}}"#,
                "9".repeat(digits)
            );
            assert_eq!(
                read(json.as_bytes(), &Limits::default()).is_ok(),
                ok,
                "{digits}"
            );
        }
        // Finite ones pass, however they are written; `e` in words is no number.
        let json = br#"{"protocol":"0.2.0","instance":"i","x":[1e308,-1.7976931348623157e308,1e-400,0e99999,true,false],"root":{"id":"a","role":"Application","title":"1e999"}}"#;
        assert!(read(json, &Limits::default()).is_ok());
    }

    #[test]
    fn strings_borrow_from_the_input_unless_they_have_escapes() {
        let json = br#"{"protocol":"0.2.0","instance":"i","root":{"id":"a","role":"Application",
            "title":"say \"hi\"","content":[{"type":"text","text":"plain","note":"n"}]}}"#;
        let answer = read_conforming(json, &Limits::default()).unwrap();
        assert!(matches!(answer.root.id, Cow::Borrowed("a")));
        assert!(matches!(answer.root.title.as_ref(), Some(Cow::Owned(t)) if t == "say \"hi\""));
        let Block::Text { text } = &answer.root.content[0].block else {
            panic!("a text block");
        };
        assert!(matches!(text, Cow::Borrowed("plain")));
        // Detached, it is the same answer.
        let owned = answer.clone().into_owned();
        assert_eq!(owned, answer);
        assert!(matches!(owned.root.id, Cow::Owned(_)));
    }

    #[test]
    fn version_words() {
        assert!(matches!(Version::of("0.2.0"), Version::V02));
        assert!(matches!(Version::of("0.2.7"), Version::V02));
        assert!(matches!(Version::of("0.1"), Version::V01));
        assert!(matches!(Version::of("0.1.3"), Version::V01));
        assert!(matches!(Version::of("0.2"), Version::Unknown));
        assert!(matches!(Version::of("0.3.0"), Version::Unknown));
        assert!(matches!(Version::of("0.2.x"), Version::Unknown));
        assert!(matches!(Version::of("0.10"), Version::Unknown));
    }
}
