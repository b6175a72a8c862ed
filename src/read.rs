//! Reading an answer: bytes in, an [`Answer`] and every finding out.
//!
//! Three layers, cheapest first:
//! 1. a byte scan that bounds JSON nesting before any recursive parser runs,
//!    so no input can overflow the stack, however deep;
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
//! Conformance rules that need the whole tree (R1, R3, R4, R6) are in
//! [`mod@crate::check`], which also composes reading and checking; this module
//! does not depend on it.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::deadline::{Deadline, Stage};
use crate::error::{DepthPlace, Error, Result};
use crate::finding::{escape_pointer, json_kind, Finding, Requirement};
use crate::limits::Limits;
use crate::model::{text_bytes, v01, Answer, BlockValue, Content, Element, RoleName};

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
pub(crate) fn read_until<'a>(
    bytes: &'a [u8],
    limits: &Limits,
    deadline: Option<&Deadline>,
) -> Result<Reading<'a>> {
    if bytes.len() > limits.max_input_bytes {
        return Err(Error::InputTooLarge {
            size: bytes.len(),
            limit: limits.max_input_bytes,
        });
    }
    // A UTF-8 byte-order mark is allowed before JSON text (RFC 8259 8.1).
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
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

    let mut ctx = Ctx {
        limits,
        deadline,
        findings: Vec::new(),
        path: Vec::new(),
        elements: 0,
        depth: 0,
        abort: None,
        siblings: Vec::new(),
        blocks: Vec::new(),
        block: BlockScratch::default(),
        order: Vec::new(),
    };
    let mut json = serde_json::Deserializer::from_str(text);
    json.disable_recursion_limit();
    let parsed = AnswerSeed(&mut ctx).deserialize(&mut json);
    let raw = match parsed.and_then(|raw| json.end().map(|()| raw)) {
        Ok(raw) => raw,
        Err(err) => {
            return Err(match ctx.abort.take() {
                Some(abort) => abort,
                None => json_error(&err),
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

fn json_error(err: &serde_json::Error) -> Error {
    let message = err.to_string();
    // serde_json appends " at line L column C"; we state the place ourselves.
    let message = match message.rfind(" at line ") {
        Some(at) => message[..at].to_string(),
        None => message,
    };
    Error::Json {
        line: err.line(),
        column: err.column(),
        message,
    }
}

/// Rejects JSON nested deeper than the limits allow, before any recursive
/// parser sees it. Strings are skipped with their escapes.
fn scan_nesting(bytes: &[u8], limits: &Limits) -> Result<()> {
    let max = limits.max_json_nesting();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                // Skip the string's body: find its closing quote, stepping
                // over escapes.
                i += 1;
                loop {
                    match memchr::memchr2(b'"', b'\\', &bytes[i.min(bytes.len())..]) {
                        Some(at) if bytes[i + at] == b'\\' => i += at + 2,
                        Some(at) => {
                            i += at;
                            break;
                        }
                        None => {
                            i = bytes.len();
                            break;
                        }
                    }
                }
            }
            b'{' | b'[' => {
                depth += 1;
                if depth > max {
                    let (line, column) = line_column(bytes, i);
                    return Err(Error::TooDeep {
                        limit: limits.max_depth,
                        place: DepthPlace::Nesting {
                            nesting: max,
                            line,
                            column,
                        },
                    });
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

fn line_column(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    (line, offset - start + 1)
}

// ---------------------------------------------------------------------------
// Protocol dispatch.

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
                format!(
                    "unknown protocol version `{protocol}`; ctxgate reads 0.2.x and upgrades 0.1"
                ),
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

struct Ctx<'l, 'de> {
    limits: &'l Limits,
    deadline: Option<&'l Deadline>,
    findings: Vec<Finding>,
    /// Child indices from the root to the element being read; its JSON
    /// pointer is built from them only when a finding needs it.
    path: Vec<u32>,
    elements: usize,
    depth: usize,
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
}

impl Ctx<'_, '_> {
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

/// A scalar field's value, or the kind of what stood there instead.
enum Scalar<'de> {
    /// Borrowed from the input unless it had escapes.
    Str(Cow<'de, str>),
    Bool(bool),
    Other(&'static str),
}

impl Scalar<'_> {
    fn kind(&self) -> &'static str {
        match self {
            Scalar::Str(_) => "a string",
            Scalar::Bool(_) => "a boolean",
            Scalar::Other(kind) => kind,
        }
    }
}

struct ScalarSeed;

impl<'de> DeserializeSeed<'de> for ScalarSeed {
    type Value = Scalar<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Scalar<'de>, D::Error> {
        d.deserialize_any(ScalarVisitor)
    }
}

struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Scalar::Bool(v))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Scalar::Other("a number"))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Scalar::Other("a number"))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Scalar::Other("a number"))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Owned(v.to_string())))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Owned(v)))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Other("null"))
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Other("null"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(Scalar::Other("an array"))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<Skip, Skip>()?.is_some() {}
        Ok(Scalar::Other("an object"))
    }
}

/// An element's or the answer's field names.
enum Field {
    Id,
    Role,
    Subrole,
    Title,
    Content,
    Url,
    Selected,
    Focused,
    Visible,
    Hovered,
    Children,
    Attributes,
    Protocol,
    Instance,
    Root,
    Items,
    Focus,
    Other(String),
}

impl<'de> de::Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Field, D::Error> {
        struct FieldVisitor;
        impl Visitor<'_> for FieldVisitor {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E>(self, v: &str) -> Result<Field, E> {
                Ok(match v {
                    "id" => Field::Id,
                    "role" => Field::Role,
                    "subrole" => Field::Subrole,
                    "title" => Field::Title,
                    "content" => Field::Content,
                    "url" => Field::Url,
                    "selected" => Field::Selected,
                    "focused" => Field::Focused,
                    "visible" => Field::Visible,
                    "hovered" => Field::Hovered,
                    "children" => Field::Children,
                    "attributes" => Field::Attributes,
                    "protocol" => Field::Protocol,
                    "instance" => Field::Instance,
                    "root" => Field::Root,
                    "items" => Field::Items,
                    "focus" => Field::Focus,
                    other => Field::Other(other.to_string()),
                })
            }
        }
        d.deserialize_str(FieldVisitor)
    }
}

impl Field {
    fn name(&self) -> &str {
        match self {
            Field::Id => "id",
            Field::Role => "role",
            Field::Subrole => "subrole",
            Field::Title => "title",
            Field::Content => "content",
            Field::Url => "url",
            Field::Selected => "selected",
            Field::Focused => "focused",
            Field::Visible => "visible",
            Field::Hovered => "hovered",
            Field::Children => "children",
            Field::Attributes => "attributes",
            Field::Protocol => "protocol",
            Field::Instance => "instance",
            Field::Root => "root",
            Field::Items => "items",
            Field::Focus => "focus",
            Field::Other(name) => name,
        }
    }
}

struct AnswerSeed<'c, 'l, 'de>(&'c mut Ctx<'l, 'de>);

impl<'de> DeserializeSeed<'de> for AnswerSeed<'_, '_, 'de> {
    type Value = Option<RawAnswer<'de>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(AnswerVisitor(self.0))
    }
}

struct AnswerVisitor<'c, 'l, 'de>(&'c mut Ctx<'l, 'de>);

impl<'de> Visitor<'de> for AnswerVisitor<'_, '_, 'de> {
    type Value = Option<RawAnswer<'de>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an answer object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let ctx = self.0;
        let mut raw = RawAnswer {
            protocol: None,
            instance: None,
            root: None,
            items: None,
            focus: None,
            title: None,
            unreadable: false,
        };
        let mut seen: u32 = 0;
        let mut others: Vec<String> = Vec::new();
        while let Some(field) = map.next_key::<Field>()? {
            let bit = field_bit(&field);
            if seen & bit != 0 {
                repeated_field(ctx, String::new(), field.name(), "the answer");
            }
            seen |= bit;
            match field {
                Field::Protocol | Field::Instance | Field::Title => {
                    let value = map.next_value_seed(ScalarSeed)?;
                    let name = field.name().to_string();
                    let Scalar::Str(s) = value else {
                        ctx.wrong_type(&name, "a string", &value, None);
                        continue;
                    };
                    match field {
                        Field::Protocol => raw.protocol = Some(s.into_owned()),
                        Field::Instance => raw.instance = Some(s.into_owned()),
                        _ => raw.title = Some(s.into_owned()),
                    }
                }
                Field::Root => {
                    ctx.path.clear();
                    raw.root = map.next_value_seed(ElementSeed(&mut *ctx))?;
                }
                Field::Items | Field::Focus => {
                    let name = if matches!(field, Field::Items) {
                        "items"
                    } else {
                        "focus"
                    };
                    let Some(value) = map.next_value_seed(ListSeed(&mut *ctx, name))? else {
                        raw.unreadable = true;
                        continue;
                    };
                    match field {
                        Field::Items => raw.items = Some(value),
                        _ => raw.focus = Some(value),
                    }
                }
                other => {
                    map.next_value::<Skip>()?;
                    ctx.findings.push(Finding::warning(
                        Requirement::Schema,
                        format!("/{}", escape_pointer(other.name())),
                        None,
                        format!(
                            "unknown answer field `{}` is ignored and never sent",
                            other.name()
                        ),
                    ));
                    if let Field::Other(name) = other {
                        others.push(name);
                    }
                }
            }
        }
        for at in repeats(&others, String::as_str, &mut ctx.order) {
            repeated_field(ctx, String::new(), &others[at], "the answer");
        }
        Ok(Some(raw))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        self.0.findings.push(Finding::error(
            Requirement::Schema,
            "",
            None,
            "an answer must be a JSON object, found an array",
        ));
        Ok(None)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        self.not_object("a boolean")
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        self.not_object("a number")
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        self.not_object("a number")
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        self.not_object("a number")
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        self.not_object("a string")
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        self.not_object("null")
    }
}

impl AnswerVisitor<'_, '_, '_> {
    fn not_object<'de, E>(self, kind: &str) -> Result<Option<RawAnswer<'de>>, E> {
        self.0.findings.push(Finding::error(
            Requirement::Schema,
            "",
            None,
            format!("an answer must be a JSON object, found {kind}"),
        ));
        Ok(None)
    }
}

struct ElementSeed<'c, 'l, 'de>(&'c mut Ctx<'l, 'de>);

impl<'de> DeserializeSeed<'de> for ElementSeed<'_, '_, 'de> {
    type Value = Option<Element<'de>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let ctx = self.0;
        // Elements nest as deep as the limits allow: each one makes sure of
        // room on the stack for itself (its own fields are shallow; values
        // nested inside them are read through `serde_stacker`).
        let read = stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
            d.deserialize_any(ScalarOrElement(&mut *ctx))
        });
        match read? {
            Ok(element) => Ok(Some(element)),
            Err(kind) => {
                ctx.findings.push(Finding::error(
                    Requirement::Schema,
                    ctx.pointer(),
                    None,
                    format!("an element must be a JSON object, found {kind}"),
                ));
                Ok(None)
            }
        }
    }
}

/// Visits an element: `Ok(element)` for an object, `Err(kind)` otherwise.
struct ScalarOrElement<'c, 'l, 'de>(&'c mut Ctx<'l, 'de>);

kind_visitor!(
    ScalarOrElement<'_, '_, 'de>,
    Element<'de>,
    "an element object"
);

impl<'de> ScalarOrElement<'_, '_, 'de> {
    fn on_seq<A: SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> Result<Result<Element<'de>, &'static str>, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(Err("an array"))
    }
    fn on_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> Result<Result<Element<'de>, &'static str>, A::Error> {
        let ctx = self.0;
        ctx.elements += 1;
        if ctx.elements > ctx.limits.max_elements {
            let limit = ctx.limits.max_elements;
            return Err(ctx.stop(Error::TooManyElements { limit }));
        }
        if let Some(deadline) = ctx.deadline {
            if let Err(err) = deadline.every(ctx.elements, Stage::Read) {
                return Err(ctx.stop(err));
            }
        }
        ctx.depth += 1;
        if ctx.depth > ctx.limits.max_depth {
            let error = Error::TooDeep {
                limit: ctx.limits.max_depth,
                place: DepthPlace::Element(ctx.pointer()),
            };
            return Err(ctx.stop(error));
        }
        let mut element = Element::default();
        let mut seen: u32 = 0;
        // Unknown field names, to find one written twice (no allocation
        // for an element without them).
        let mut others: Vec<String> = Vec::new();
        let (mut has_id, mut has_role) = (false, false);
        let mut role_word: Option<Cow<'de, str>> = None;
        while let Some(field) = map.next_key::<Field>()? {
            let bit = field_bit(&field);
            if seen & bit != 0 {
                repeated_field(ctx, ctx.pointer(), field.name(), "one element");
            }
            seen |= bit;
            match field {
                Field::Id | Field::Role | Field::Subrole | Field::Title | Field::Url => {
                    let value = map.next_value_seed(ScalarSeed)?;
                    // Present, if not well-typed: one finding, not two.
                    has_id |= matches!(field, Field::Id);
                    has_role |= matches!(field, Field::Role);
                    let Scalar::Str(s) = value else {
                        ctx.wrong_type(field.name(), "a string", &value, None);
                        continue;
                    };
                    match field {
                        Field::Id => element.id = s,
                        Field::Role => role_word = Some(s),
                        Field::Subrole => element.subrole = Some(s),
                        Field::Title => element.title = Some(s),
                        _ => element.url = Some(s),
                    }
                }
                Field::Selected | Field::Focused | Field::Visible | Field::Hovered => {
                    let value = map.next_value_seed(ScalarSeed)?;
                    let Scalar::Bool(b) = value else {
                        ctx.wrong_type(field.name(), "true or false", &value, None);
                        continue;
                    };
                    match field {
                        Field::Selected => element.selected = Some(b),
                        Field::Focused => element.focused = Some(b),
                        Field::Visible => element.visible = Some(b),
                        _ => element.hovered = Some(b),
                    }
                }
                Field::Children => {
                    let children = map.next_value_seed(ChildrenSeed(&mut *ctx))?;
                    element.children = children.into();
                }
                Field::Content => {
                    element.content = map.next_value_seed(ContentSeed(&mut *ctx))?;
                }
                Field::Attributes => match map.next_value_seed(BoundedValue(0))? {
                    Ok(Value::Object(attributes)) => {
                        element.attributes = attributes.into_iter().collect();
                    }
                    Err(problem) => {
                        let at = format!("{}/attributes", ctx.pointer());
                        ctx.value_problem(at, problem);
                    }
                    Ok(other) => {
                        let found = Scalar::Other(json_kind(&other));
                        ctx.wrong_type("attributes", "an object", &found, None);
                    }
                },
                Field::Items | Field::Focus | Field::Protocol | Field::Instance | Field::Root => {
                    map.next_value::<Skip>()?;
                    unknown_field(ctx, field.name());
                }
                Field::Other(name) => {
                    map.next_value::<Skip>()?;
                    match name.as_str() {
                        "type" | "parent" | "locatable" | "payload" => {
                            ctx.findings.push(Finding::error(
                                Requirement::Version,
                                format!("{}/{}", ctx.pointer(), name),
                                None,
                                format!(
                                    "`{name}` is a 0.1 field, removed in 0.2.0 ({})",
                                    removed_hint(&name)
                                ),
                            ));
                        }
                        _ => unknown_field(ctx, &name),
                    }
                    others.push(name);
                }
            }
        }
        for at in repeats(&others, String::as_str, &mut ctx.order) {
            repeated_field(ctx, ctx.pointer(), &others[at], "one element");
        }
        if let Some(word) = role_word {
            element.role = RoleName::parse(&word);
        }
        for (present, field) in [(has_id, "id"), (has_role, "role")] {
            if !present {
                let id = has_id.then(|| element.id.to_string());
                ctx.findings.push(Finding::error(
                    Requirement::Schema,
                    format!("{}/{}", ctx.pointer(), field),
                    id,
                    format!("an element needs `{field}`"),
                ));
            }
        }
        let size = text_bytes(&element);
        if size > ctx.limits.max_content_bytes {
            let error = Error::ContentTooLarge {
                pointer: ctx.pointer(),
                size,
                limit: ctx.limits.max_content_bytes,
            };
            return Err(ctx.stop(error));
        }
        ctx.depth -= 1;
        Ok(Ok(element))
    }
}

fn removed_hint(field: &str) -> &'static str {
    match field {
        "type" => "use `role` and `subrole`",
        "parent" => "nest the element in its parent's `children`",
        "locatable" => "whether an element can be located is asked with `locate`",
        _ => "use `attributes`",
    }
}

/// A field written twice in one object (`element` pointer, or empty for the
/// answer): refused, as JSON readers differ on which value counts.
fn repeated_field(ctx: &mut Ctx, pointer: String, name: &str, within: &str) {
    ctx.findings.push(Finding::error(
        Requirement::Schema,
        format!("{pointer}/{}", escape_pointer(name)),
        None,
        format!("field `{name}` appears twice in {within}"),
    ));
}

fn unknown_field(ctx: &mut Ctx, name: &str) {
    ctx.findings.push(Finding::warning(
        Requirement::Schema,
        format!("{}/{}", ctx.pointer(), escape_pointer(name)),
        None,
        format!("unknown element field `{name}` is ignored and never sent"),
    ));
}

fn field_bit(field: &Field) -> u32 {
    match field {
        Field::Id => 1,
        Field::Role => 1 << 1,
        Field::Subrole => 1 << 2,
        Field::Title => 1 << 3,
        Field::Content => 1 << 4,
        Field::Url => 1 << 5,
        Field::Selected => 1 << 6,
        Field::Focused => 1 << 7,
        Field::Visible => 1 << 8,
        Field::Hovered => 1 << 9,
        Field::Children => 1 << 10,
        Field::Attributes => 1 << 11,
        Field::Protocol => 1 << 12,
        Field::Instance => 1 << 13,
        Field::Root => 1 << 14,
        Field::Items => 1 << 15,
        Field::Focus => 1 << 16,
        Field::Other(_) => 0,
    }
}

/// An element's `content`: its blocks, each read straight into a
/// [`Content`] (strings borrowed); a problem is a finding at its pointer.
struct ContentSeed<'c, 'l, 'de>(&'c mut Ctx<'l, 'de>);

impl<'de> DeserializeSeed<'de> for ContentSeed<'_, '_, 'de> {
    type Value = Vec<Content<'de>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let ctx = self.0;
        let read = d.deserialize_any(ContentVisitor(&mut *ctx))?;
        Ok(ctx.list_or_wrong_type(read, "content", "an array of content blocks"))
    }
}

struct ContentVisitor<'c, 'l, 'de>(&'c mut Ctx<'l, 'de>);
kind_visitor!(
    ContentVisitor<'_, '_, 'de>,
    Vec<Content<'de>>,
    "an array of content blocks"
);

impl<'de> ContentVisitor<'_, '_, 'de> {
    fn on_seq<A: SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> Result<Result<Vec<Content<'de>>, &'static str>, A::Error> {
        let ctx = self.0;
        let start = ctx.blocks.len();
        let mut i = 0;
        while let Some(block) = seq.next_element_seed(BlockSeed(&mut ctx.block))? {
            let problem = match block {
                Ok(()) => match Content::from_pairs(&mut ctx.block.pairs) {
                    Ok(content) => {
                        ctx.blocks.push(content);
                        i += 1;
                        continue;
                    }
                    Err(problem) => problem,
                },
                Err(VALUE_PROBLEM) => {
                    let problem = ctx.block.problem.take().expect("the block's problem");
                    let at = format!("{}/content/{i}", ctx.pointer());
                    ctx.value_problem(at, problem);
                    i += 1;
                    continue;
                }
                Err(kind) => format!("a content block must be an object, found {kind}"),
            };
            ctx.findings.push(Finding::error(
                Requirement::Schema,
                format!("{}/content/{i}", ctx.pointer()),
                None,
                problem,
            ));
            i += 1;
        }
        Ok(Ok(ctx.blocks.drain(start..).collect()))
    }
    fn on_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> Result<Result<Vec<Content<'de>>, &'static str>, A::Error> {
        while map.next_entry::<Skip, Skip>()?.is_some() {}
        Ok(Err("an object"))
    }
}

/// One content block: its keys and values, in order, into the reused
/// `pairs` (no map is built for a block's few keys).
struct BlockSeed<'c, 'de>(&'c mut BlockScratch<'de>);

/// What the reader reuses for every content block: its pairs, the order for
/// finding a repeated key among many, and the problem that stopped it.
#[derive(Default)]
struct BlockScratch<'de> {
    pairs: Vec<(Cow<'de, str>, BlockValue<'de>)>,
    order: Vec<u32>,
    problem: Option<ValueProblem>,
}

impl<'de> DeserializeSeed<'de> for BlockSeed<'_, 'de> {
    type Value = Result<(), &'static str>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(BlockVisitor(self.0))
    }
}

struct BlockVisitor<'c, 'de>(&'c mut BlockScratch<'de>);
kind_visitor!(BlockVisitor<'_, 'de>, (), "a content block");

/// The kind a block reports when a [`ValueProblem`] waits in its scratch.
const VALUE_PROBLEM: &str = "a value problem";

impl<'de> BlockVisitor<'_, 'de> {
    fn on_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Result<(), &'static str>, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(Err("an array"))
    }
    fn on_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Result<(), &'static str>, A::Error> {
        let scratch = self.0;
        scratch.pairs.clear();
        scratch.problem = None;
        while let Some(key) = map.next_key::<BorrowedStr<'de>>()? {
            match map.next_value_seed(BlockValueSeed)? {
                Ok(value) => scratch.pairs.push((key.0, value)),
                Err(problem) => {
                    // The first problem is the block's; the rest is skipped.
                    while map.next_entry::<Skip, Skip>()?.is_some() {}
                    scratch.problem = Some(problem.inside(&key.0));
                    return Ok(Err(VALUE_PROBLEM));
                }
            }
        }
        // A repeated key is refused: JSON readers differ on which value
        // counts, and the agent's might not take the one a policy saw.
        if let Some(&at) = repeats(&scratch.pairs, |(k, _)| k, &mut scratch.order).first() {
            let key = scratch.pairs[at].0.to_string();
            scratch.problem = Some(ValueProblem::repeated(key));
            return Ok(Err(VALUE_PROBLEM));
        }
        Ok(Ok(()))
    }
}

/// The positions of the keys that repeat an earlier key, in order. Most
/// objects have a few keys: they are compared pairwise, allocating nothing;
/// more are sorted by key through `order`, which the caller reuses.
fn repeats<T>(items: &[T], key: impl Fn(&T) -> &str, order: &mut Vec<u32>) -> Vec<usize> {
    let mut found = Vec::new();
    if items.len() <= 8 {
        for (i, item) in items.iter().enumerate() {
            let k = key(item);
            if items[..i].iter().any(|seen| key(seen) == k) {
                found.push(i);
            }
        }
        return found;
    }
    order.clear();
    order.extend(0..items.len() as u32);
    order.sort_unstable_by(|&a, &b| {
        key(&items[a as usize])
            .cmp(key(&items[b as usize]))
            .then(a.cmp(&b))
    });
    for pair in order.windows(2) {
        if key(&items[pair[0] as usize]) == key(&items[pair[1] as usize]) {
            found.push(pair[1] as usize);
        }
    }
    found.sort_unstable();
    found
}

/// Any JSON value, skipped without being built, but read as strictly as a
/// value that is kept: serde_json's own skipping (`IgnoredAny`) takes a
/// number out of an f64's range (`1e999`) and a lone surrogate escape
/// (`"\ud800"`) without a word, so an unknown field's value could hold what
/// the same field read anywhere else refuses. Nested values are skipped on a
/// stack that grows as it needs (`stacker`); their nesting is bounded by
/// `scan_nesting`.
struct Skip;

impl<'de> de::Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Skip, D::Error> {
        struct SkipVisitor;
        impl<'de> Visitor<'de> for SkipVisitor {
            type Value = Skip;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Skip, E> {
                Ok(Skip)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Skip, E> {
                Ok(Skip)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Skip, E> {
                Ok(Skip)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Skip, E> {
                Ok(Skip)
            }
            fn visit_str<E>(self, _: &str) -> Result<Skip, E> {
                Ok(Skip)
            }
            fn visit_unit<E>(self) -> Result<Skip, E> {
                Ok(Skip)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Skip, A::Error> {
                while seq.next_element::<Skip>()?.is_some() {}
                Ok(Skip)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skip, A::Error> {
                while map.next_entry::<Skip, Skip>()?.is_some() {}
                Ok(Skip)
            }
        }
        stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || d.deserialize_any(SkipVisitor))
    }
}

/// A string borrowed from the input unless it had escapes.
struct BorrowedStr<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for BorrowedStr<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<BorrowedStr<'de>, D::Error> {
        struct StrVisitor;
        impl<'de> Visitor<'de> for StrVisitor {
            type Value = BorrowedStr<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(BorrowedStr(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(BorrowedStr(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(BorrowedStr(Cow::Owned(v)))
            }
        }
        d.deserialize_str(StrVisitor)
    }
}

/// Stack room an element makes sure of before it is read, and the size of a
/// new stack segment when there is less (as `serde_stacker`'s defaults).
const RED_ZONE: usize = 64 * 1024;
const STACK_SEGMENT: usize = 2 * 1024 * 1024;

/// How deep a value inside an element (an attribute, a content block's
/// value, a 0.1 `items` entry) may nest: as serde_json's own default. Elements
/// nest as the limits allow; values are data, and a bound keeps reading,
/// copying, rendering and freeing them off any risk to the stack.
pub const MAX_VALUE_DEPTH: usize = 128;

/// Why a value inside an element (or a 0.1 `items` or `focus`) was not read.
#[derive(Debug)]
enum ValueProblem {
    /// It nests deeper than [`MAX_VALUE_DEPTH`]; reported at the value.
    TooDeep,
    /// A key appears twice in one object; reported at the second one.
    Repeated {
        /// The key, as written.
        key: String,
        /// The pointer's segments from the value down to the key, escaped,
        /// innermost first (pushed as the problem travels out).
        path: Vec<String>,
    },
}

impl ValueProblem {
    fn repeated(key: String) -> ValueProblem {
        let path = vec![escape_pointer(&key)];
        ValueProblem::Repeated { key, path }
    }

    /// The same problem seen from the value that holds this one at `segment`.
    fn inside(mut self, segment: &str) -> ValueProblem {
        if let ValueProblem::Repeated { path, .. } = &mut self {
            path.push(escape_pointer(segment));
        }
        self
    }
}

fn too_deep_message() -> String {
    format!("nests deeper than {MAX_VALUE_DEPTH} levels; values inside an element are read to {MAX_VALUE_DEPTH} levels")
}

impl Ctx<'_, '_> {
    fn too_deep(&mut self, pointer: String) {
        self.findings.push(Finding::error(
            Requirement::Schema,
            pointer,
            None,
            too_deep_message(),
        ));
    }

    /// The finding for a value read at `at` that had `problem`.
    fn value_problem(&mut self, mut at: String, problem: ValueProblem) {
        match problem {
            ValueProblem::TooDeep => self.too_deep(at),
            ValueProblem::Repeated { key, path } => {
                for segment in path.iter().rev() {
                    at.push('/');
                    at.push_str(segment);
                }
                self.findings.push(Finding::error(
                    Requirement::Schema,
                    at,
                    None,
                    format!("key `{key}` appears twice in one object; write each key once (JSON readers differ on which value counts)"),
                ));
            }
        }
    }
}

/// Any JSON value, as serde_json reads a `Value`, at most
/// [`MAX_VALUE_DEPTH`] levels deep (the field is the current level), each
/// key once in each object. On a problem the rest of the value is skipped
/// ([`Skip`]).
struct BoundedValue(usize);

impl<'de> DeserializeSeed<'de> for BoundedValue {
    type Value = Result<Value, ValueProblem>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for BoundedValue {
    type Value = Result<Value, ValueProblem>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Ok(Value::Bool(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Ok(Value::from(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Ok(Value::from(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Ok(Value::from(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Ok(Value::String(v.to_string())))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Ok(Value::String(v)))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Ok(Value::Null))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        if self.0 >= MAX_VALUE_DEPTH {
            while seq.next_element::<Skip>()?.is_some() {}
            return Ok(Err(ValueProblem::TooDeep));
        }
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(BoundedValue(self.0 + 1))? {
            match item {
                Ok(item) => items.push(item),
                Err(problem) => {
                    while seq.next_element::<Skip>()?.is_some() {}
                    return Ok(Err(problem.inside(&items.len().to_string())));
                }
            }
        }
        Ok(Ok(Value::Array(items)))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        if self.0 >= MAX_VALUE_DEPTH {
            while map.next_entry::<Skip, Skip>()?.is_some() {}
            return Ok(Err(ValueProblem::TooDeep));
        }
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = match map.next_value_seed(BoundedValue(self.0 + 1))? {
                Ok(value) => value,
                Err(problem) => {
                    while map.next_entry::<Skip, Skip>()?.is_some() {}
                    return Ok(Err(problem.inside(&key)));
                }
            };
            // The map finds a repeated key as it inserts: no second lookup.
            match object.entry(key) {
                serde_json::map::Entry::Vacant(slot) => {
                    slot.insert(value);
                }
                serde_json::map::Entry::Occupied(slot) => {
                    let key = slot.key().clone();
                    while map.next_entry::<Skip, Skip>()?.is_some() {}
                    return Ok(Err(ValueProblem::repeated(key)));
                }
            }
        }
        Ok(Ok(Value::Object(object)))
    }
}

/// A 0.1 `items` or `focus` list (the field's name): each entry read as a
/// [`BoundedValue`], so a problem in one is a finding at its index and the
/// others are still read. `None` when there was a problem.
struct ListSeed<'c, 'l, 'de>(&'c mut Ctx<'l, 'de>, &'static str);

impl<'de> DeserializeSeed<'de> for ListSeed<'_, '_, 'de> {
    type Value = Option<Value>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl ListSeed<'_, '_, '_> {
    fn read(self, value: Result<Value, ValueProblem>) -> Option<Value> {
        value
            .map_err(|problem| self.0.value_problem(format!("/{}", self.1), problem))
            .ok()
    }
}

impl<'de> Visitor<'de> for ListSeed<'_, '_, 'de> {
    type Value = Option<Value>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Some(Value::Bool(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Some(Value::from(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Some(Value::from(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Some(Value::from(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(Value::String(v.to_string())))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Some(Value::Null))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let value = BoundedValue(0).visit_map(map)?;
        Ok(self.read(value))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let (ctx, field) = (self.0, self.1);
        let mut entries = Vec::new();
        let mut clean = true;
        let mut i = 0;
        while let Some(entry) = seq.next_element_seed(BoundedValue(1))? {
            match entry {
                Ok(entry) => entries.push(entry),
                Err(problem) => {
                    ctx.value_problem(format!("/{field}/{i}"), problem);
                    clean = false;
                }
            }
            i += 1;
        }
        Ok(clean.then_some(Value::Array(entries)))
    }
}

/// A content block's value: strings borrowed as [`BorrowedStr`], anything
/// else a [`BoundedValue`] (the block is the first level).
struct BlockValueSeed;

impl<'de> DeserializeSeed<'de> for BlockValueSeed {
    type Value = Result<BlockValue<'de>, ValueProblem>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for BlockValueSeed {
    type Value = Result<BlockValue<'de>, ValueProblem>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Ok(BlockValue::Str(Cow::Borrowed(v))))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Ok(BlockValue::Str(Cow::Owned(v.to_string()))))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Ok(BlockValue::Str(Cow::Owned(v))))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(BoundedValue(1).visit_bool(v)?.map(BlockValue::Other))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(BoundedValue(1).visit_i64(v)?.map(BlockValue::Other))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(BoundedValue(1).visit_u64(v)?.map(BlockValue::Other))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(BoundedValue(1).visit_f64(v)?.map(BlockValue::Other))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(BoundedValue(1).visit_unit()?.map(BlockValue::Other))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Ok(BoundedValue(1).visit_seq(seq)?.map(BlockValue::Other))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Ok(BoundedValue(1).visit_map(map)?.map(BlockValue::Other))
    }
}

struct ChildrenSeed<'c, 'l, 'de>(&'c mut Ctx<'l, 'de>);

impl<'de> DeserializeSeed<'de> for ChildrenSeed<'_, '_, 'de> {
    type Value = Vec<Element<'de>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let ctx = self.0;
        let read = d.deserialize_any(ChildrenVisitor(&mut *ctx))?;
        Ok(ctx.list_or_wrong_type(read, "children", "an array of elements"))
    }
}

struct ChildrenVisitor<'c, 'l, 'de>(&'c mut Ctx<'l, 'de>);

kind_visitor!(
    ChildrenVisitor<'_, '_, 'de>,
    Vec<Element<'de>>,
    "an array of elements"
);

impl<'de> ChildrenVisitor<'_, '_, 'de> {
    fn on_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> Result<Result<Vec<Element<'de>>, &'static str>, A::Error> {
        while map.next_entry::<Skip, Skip>()?.is_some() {}
        Ok(Err("an object"))
    }
    fn on_seq<A: SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> Result<Result<Vec<Element<'de>>, &'static str>, A::Error> {
        let ctx = self.0;
        // JSON gives no length up front: children gather on the shared
        // stack and move out at their exact count (no regrowth, no slack).
        let start = ctx.siblings.len();
        let mut index = 0u32;
        loop {
            ctx.path.push(index);
            let next = seq.next_element_seed(ElementSeed(&mut *ctx));
            ctx.path.pop();
            match next? {
                Some(Some(child)) => ctx.siblings.push(child),
                Some(None) => {}
                None => break,
            }
            index += 1;
        }
        Ok(Ok(ctx.siblings.drain(start..).collect()))
    }
}

#[cfg(test)]
mod tests {
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
