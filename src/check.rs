//! Conformance to protocol 0.2.0 (RFC-0001 section 7): the rules that need
//! the whole tree. Every finding is reported, not just the first, each with
//! a JSON pointer, the element's id, and the requirement it breaks.
//!
//! Shape problems (types, required fields, limits) are found while reading,
//! in [`mod@crate::read`]. Reading then checking is composed here and only
//! here: [`check_bytes`] and [`read_conforming`] go through `read_checked`,
//! [`crate::Gate::trim_bytes`] through `with_conforming` (the same for a
//! request, handing on the [`Doc`] it checked); the reader's findings come
//! before the checker's on every path.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use serde::Serialize;
use serde_json::Value;

use crate::deadline::Deadline;
use crate::error::{Error, Result};
use crate::finding::{Finding, Requirement};
use crate::limits::Limits;
use crate::model::content::{not_base64, Payload};
use crate::model::doc::Doc;
use crate::model::{related_entry, Answer, Attributes, Role, RoleName, Tree, STATES};

/// The result of checking one input.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    /// No errors (warnings allowed).
    pub conforms: bool,
    /// The protocol the input was upgraded from, if it was 0.1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upgraded_from: Option<String>,
    /// Elements read.
    pub elements: usize,
    /// Every finding, in document order of the stage that found it.
    pub findings: Vec<Finding>,
}

/// An input read and checked: the answer, when its shape allowed building
/// one, and every finding of both stages (the reader's first).
pub(crate) struct Checked<'a> {
    pub(crate) answer: Option<Answer<'a>>,
    pub(crate) findings: Vec<Finding>,
    pub(crate) upgraded_from: Option<String>,
}

impl<'a> Checked<'a> {
    /// The answer, or [`Error::NotConforming`] with every finding when
    /// there is none or any finding is an error.
    pub(crate) fn into_conforming(self) -> Result<Answer<'a>> {
        match self.answer {
            Some(answer) if !self.findings.iter().any(Finding::is_error) => Ok(answer),
            _ => Err(Error::NotConforming {
                findings: self.findings,
            }),
        }
    }
}

/// Reads an answer's bytes and checks the tree: the one composition of the
/// two stages. `Err` only when the input cannot be read at all (not JSON,
/// over a limit, past `deadline`); shape and conformance problems are
/// findings. The tree is checked even when reading found errors, so that
/// every problem is reported at once.
pub(crate) fn read_checked<'a>(
    bytes: &'a [u8],
    limits: &Limits,
    deadline: Option<&Deadline>,
) -> Result<Checked<'a>> {
    let reading = {
        let _read = tracing::info_span!("read", bytes = bytes.len()).entered();
        crate::read::read_until(bytes, limits, deadline)?
    };
    let mut findings = reading.findings;
    if let Some(answer) = &reading.answer {
        findings.extend(check(answer));
    }
    Ok(Checked {
        answer: reading.answer,
        findings,
        upgraded_from: reading.upgraded_from,
    })
}

/// [`read_checked`] for a request: the answer read from `bytes`, when it
/// conforms, is handed to `then` as the [`Doc`] the checker read, and the
/// doc given back beside what `then` returns for the caller to free or not.
/// Any error finding is [`Error::NotConforming`] with every finding, as
/// [`Checked::into_conforming`] gives.
///
/// A clean reading (most answers) is read straight into the doc
/// ([`crate::read::read_doc`]): no public element tree is built. Anything
/// else is read whole, checked, and moved into a doc that borrows what the
/// answer borrows of `bytes` (the answer's shells dropped as it goes).
pub(crate) fn with_conforming<'a, R>(
    bytes: &'a [u8],
    limits: &Limits,
    deadline: Option<&Deadline>,
    then: impl FnOnce(&Doc<'a>, &[Finding]) -> Result<R>,
) -> Result<(Result<R>, Doc<'a>)> {
    let read = {
        let _read = tracing::info_span!("read", bytes = bytes.len()).entered();
        crate::read::read_doc(bytes, limits, deadline)?
    };
    if let Some(doc) = read {
        let warnings = require_conforming_doc(&doc)?;
        let result = then(&doc, &warnings);
        return Ok((result, doc));
    }
    let reading = {
        let _read = tracing::info_span!("read", bytes = bytes.len()).entered();
        crate::read::read_until_not_fast(bytes, limits, deadline)?
    };
    let mut findings = reading.findings;
    let Some(answer) = reading.answer else {
        return Err(Error::NotConforming { findings });
    };
    findings.extend(check_tree(&Tree::new(&answer.root)));
    if findings.iter().any(Finding::is_error) {
        return Err(Error::NotConforming { findings });
    }
    // What the answer borrows of `bytes` is valid UTF-8 (it was read as
    // such); a 0.1 answer borrows nothing.
    let text = std::str::from_utf8(bytes).unwrap_or("");
    let doc = Doc::from_owned(answer, text);
    let result = then(&doc, &findings);
    Ok((result, doc))
}

/// Reads and checks an answer's bytes. `Err` only when the input cannot be
/// read at all (not JSON, over a limit).
///
/// A clean reading (most answers) builds no tree: the checker reads the
/// `Doc` a request would read, and finds what [`check`] finds in the
/// answer read whole. Anything else is read whole.
pub fn check_bytes(bytes: &[u8], limits: &Limits) -> Result<CheckReport> {
    if let Some(doc) = crate::read::read_doc(bytes, limits, None)? {
        let findings = check_indexed(&doc);
        return Ok(CheckReport {
            conforms: !findings.iter().any(Finding::is_error),
            upgraded_from: None,
            elements: doc.len(),
            findings,
        });
    }
    check_bytes_whole(bytes, limits)
}

/// [`check_bytes`] of the answer read whole.
fn check_bytes_whole(bytes: &[u8], limits: &Limits) -> Result<CheckReport> {
    let checked = read_checked(bytes, limits, None)?;
    let elements = checked
        .answer
        .as_ref()
        .map_or(0, |answer| Tree::new(&answer.root).len());
    Ok(CheckReport {
        conforms: checked.answer.is_some() && !checked.findings.iter().any(Finding::is_error),
        upgraded_from: checked.upgraded_from,
        elements,
        findings: checked.findings,
    })
}

/// Reads an answer and checks it; `Err` unless it conforms (warnings
/// allowed). This is what trimming uses: on any doubt, nothing goes on.
pub fn read_conforming<'a>(bytes: &'a [u8], limits: &Limits) -> Result<Answer<'a>> {
    read_checked(bytes, limits, None)?.into_conforming()
}

/// `Ok` when a held answer conforms (warnings allowed), else
/// [`Error::NotConforming`] with every finding.
#[cfg(test)]
pub(crate) fn require_conforming(answer: &Answer<'_>) -> Result<()> {
    conforming(&check(answer))
}

/// [`require_conforming`] of an answer's [`Doc`] (a request's).
/// `Ok` with its warnings when `doc` conforms, else every finding.
pub(crate) fn require_conforming_doc(doc: &Doc<'_>) -> Result<Vec<Finding>> {
    let findings = check_indexed(doc);
    conforming(&findings)?;
    Ok(findings)
}

/// `Ok` unless a finding is an error, else every finding.
fn conforming(findings: &[Finding]) -> Result<()> {
    if findings.iter().any(Finding::is_error) {
        return Err(Error::NotConforming {
            findings: findings.to_vec(),
        });
    }
    Ok(())
}

/// Checks the rules that need the whole tree: R1 (states under
/// `attributes`), the reserved attributes' shape, content payloads in
/// base64, R3, R4 and R6.
pub fn check(answer: &Answer) -> Vec<Finding> {
    check_tree(&Tree::new(&answer.root))
}

/// [`check`] of the tree that indexes an answer.
pub(crate) fn check_tree(tree: &Tree<'_, '_>) -> Vec<Finding> {
    check_indexed(tree)
}

/// What the rules read of a tree: the [`Tree`] of an answer read whole or
/// held, or the [`Doc`] read straight from the bytes ([`check_bytes`],
/// `with_conforming`). Each gives positions in
/// document order; the rules are checked over any of them by the one
/// [`check_indexed`].
trait Indexed {
    fn len(&self) -> usize;
    /// What the first pass reads of one element, found once.
    fn element(&self, at: u32) -> Seen<'_>;
    fn id(&self, at: u32) -> &str;
    fn focused(&self, at: u32) -> bool;
    /// [`Indexed::attributes`] of every element that has them, in order.
    fn all_attributes(&self) -> impl Iterator<Item = (u32, &Attributes)>;
    fn children(&self, at: u32) -> impl Iterator<Item = u32> + '_;
    fn pointer(&self, at: u32) -> String;
    /// The payloads of the element's content that are not base64
    /// ([`not_base64`], the one test).
    fn not_base64(&self, at: u32) -> impl Iterator<Item = Payload> + '_;
}

/// One element as the first pass reads it.
struct Seen<'s> {
    id: &'s str,
    role: &'s RoleName,
    parent: Option<u32>,
    focused: bool,
    attributes: Option<&'s Attributes>,
}

impl Indexed for Tree<'_, '_> {
    fn len(&self) -> usize {
        Tree::len(self)
    }
    fn element(&self, at: u32) -> Seen<'_> {
        let node = self.node(at);
        Seen {
            id: &node.element.id,
            role: &node.element.role,
            parent: node.parent,
            focused: node.focused,
            attributes: Some(&node.element.attributes),
        }
    }
    fn id(&self, at: u32) -> &str {
        &self.node(at).element.id
    }
    fn focused(&self, at: u32) -> bool {
        self.node(at).focused
    }
    fn all_attributes(&self) -> impl Iterator<Item = (u32, &Attributes)> {
        let nodes = self.nodes().iter().enumerate();
        nodes.map(|(at, node)| (at as u32, &node.element.attributes))
    }
    fn children(&self, at: u32) -> impl Iterator<Item = u32> + '_ {
        Tree::children(self, at)
    }
    fn pointer(&self, at: u32) -> String {
        Tree::pointer(self, at)
    }
    fn not_base64(&self, at: u32) -> impl Iterator<Item = Payload> + '_ {
        not_base64(&self.node(at).element.content)
    }
}

impl Indexed for Doc<'_> {
    fn len(&self) -> usize {
        Doc::len(self)
    }
    fn element(&self, at: u32) -> Seen<'_> {
        let element = self.el(at);
        Seen {
            id: element.id(),
            role: element.role(),
            parent: self.node(at).parent(),
            focused: self.node(at).focused(),
            attributes: Some(element.attributes()),
        }
    }
    fn id(&self, at: u32) -> &str {
        self.el(at).id()
    }
    fn focused(&self, at: u32) -> bool {
        self.node(at).focused()
    }
    fn all_attributes(&self) -> impl Iterator<Item = (u32, &Attributes)> {
        Doc::all_attributes(self)
    }
    fn children(&self, at: u32) -> impl Iterator<Item = u32> + '_ {
        Doc::children(self, at)
    }
    fn pointer(&self, at: u32) -> String {
        Doc::pointer(self, at)
    }
    fn not_base64(&self, at: u32) -> impl Iterator<Item = Payload> + '_ {
        not_base64(self.el(at).content())
    }
}

/// The rules over either index of a tree ([`Indexed`]).
fn check_indexed<T: Indexed>(tree: &T) -> Vec<Finding> {
    let mut findings = Vec::new();
    // Each id's first place. Ids are the provider's, but the table lives for
    // one check, with a seed of its own, and nothing of it leaves: a fast
    // hasher is enough. It holds positions (4 bytes a slot), the ids read
    // from the tree: a map of `&str` to `u32` took 24 bytes a slot, 52 MB
    // at a million elements.
    let ids = Ids::new(tree);
    let mut first_place = ids.table();
    let mut has_related = false;

    for at in 0..tree.len() as u32 {
        let Seen {
            id: element_id,
            role,
            parent,
            focused,
            attributes,
        } = tree.element(at);
        let id = || Some(element_id.to_string());
        let pointer = || tree.pointer(at);

        // R3: the root is an Application; roles come from the language.
        match (parent, role.read(), role.is_known()) {
            (None, Role::Application, true) => {}
            (None, _, _) => findings.push(Finding::error(
                Requirement::R3,
                "/root",
                id(),
                // The role is named only when it is a word of the
                // language: another is the provider's string, and a finding
                // carries no provider text.
                if role.is_known() {
                    format!("the root must be an `Application`, found `{role}`")
                } else {
                    "the root must be an `Application`, found a role outside the language"
                        .to_string()
                },
            )),
            (Some(_), Role::Application, _) => findings.push(Finding::warning(
                Requirement::R3,
                pointer(),
                id(),
                "only the root should be an `Application`",
            )),
            (Some(_), _, false) => findings.push(Finding::warning(
                Requirement::R3,
                pointer(),
                id(),
                // Not named, as at the root: the word is the provider's.
                // The pointer says where it is; the hint is the
                // language's own word.
                format!(
                    "a role outside the role language is read as `Group`{}; the role words are `{}` (docs/FORMAT.md says which control takes which)",
                    crate::suggest::role(role.as_str()),
                    crate::model::Role::ALL.map(crate::model::Role::as_str).join("`, `")
                ),
            )),
            _ => {}
        }

        // R4: ids are unique.
        if !element_id.is_empty() {
            if let Some(first) = ids.first(&mut first_place, at) {
                findings.push(Finding::error(
                    Requirement::R4,
                    pointer(),
                    id(),
                    format!(
                        "id `{element_id}` is repeated; it first appears at {}",
                        tree.pointer(first)
                    ),
                ));
            }
        }

        // R1: no state repeated under attributes; 4.3: reserved attributes.
        for (name, value) in attributes.into_iter().flat_map(Attributes::iter) {
            match name.as_str() {
                state if STATES.contains(&state) => findings.push(Finding::error(
                    Requirement::R1,
                    format!("{}/attributes/{state}", pointer()),
                    id(),
                    format!("state `{state}` is stated under `attributes`; state it once, as the element's own `{state}` field"),
                )),
                "author" if !value.is_string() => findings.push(Finding::error(
                    Requirement::Schema,
                    format!("{}/attributes/author", pointer()),
                    id(),
                    "reserved attribute `author` must be a string",
                )),
                "related" => {
                    check_related(value, pointer, id, &mut findings);
                    has_related = true;
                }
                _ => {}
            }
        }

        // 4.1: content blocks are MCP's, whose payloads are base64.
        for payload in tree.not_base64(at) {
            findings.push(payload_finding(payload, pointer(), id()));
        }

        // R6 and 4.1's focus rule.
        if focused {
            match parent {
                None => findings.push(Finding::error(
                    Requirement::R6,
                    "/root",
                    id(),
                    "the root is not on the focus path, which starts at the root's child; remove `focused` from the root",
                )),
                Some(parent) if parent != 0 && !tree.focused(parent) => {
                    findings.push(Finding::error(
                        Requirement::R6,
                        pointer(),
                        id(),
                        format!(
                            "focused element under an unfocused parent (id `{}`): the focus path must be unbroken from the root's child down",
                            tree.id(parent)
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
    }

    // Two focused siblings: the path would fork.
    for at in 0..tree.len() as u32 {
        if !(tree.focused(at) || at == 0) {
            continue;
        }
        let focused: Vec<u32> = tree.children(at).filter(|&c| tree.focused(c)).collect();
        if let [first, rest @ ..] = focused.as_slice() {
            let first = *first;
            for &other in rest {
                findings.push(Finding::error(
                    Requirement::R6,
                    tree.pointer(other),
                    Some(tree.id(other).to_string()),
                    format!(
                        "two focused siblings: this one and `{}` at {}; the focus path is one path",
                        tree.id(first),
                        tree.pointer(first)
                    ),
                ));
            }
        }
    }

    // related ids that name no element.
    for (at, attributes) in tree.all_attributes().filter(|_| has_related) {
        for link in attributes.related() {
            if let crate::model::RelatedTarget::Id(target) = link.target {
                if ids.find(&first_place, target).is_none() {
                    findings.push(Finding::warning(
                        Requirement::Schema,
                        format!("{}/attributes/related", tree.pointer(at)),
                        Some(tree.id(at).to_string()),
                        format!("`related` names id `{target}`, which is not in this answer"),
                    ));
                }
            }
        }
    }
    findings
}

/// The finding for a payload that is not base64, at its pointer under
/// the element's. It names no provider text: such a payload may be anything.
fn payload_finding(payload: Payload, element: String, id: Option<String>) -> Finding {
    let (field, what) = match payload.kind {
        "resource" => ("resource/blob", "an embedded resource's `blob`"),
        "image" => ("data", "an image block's `data`"),
        _ => ("data", "an audio block's `data`"),
    };
    Finding::error(
        Requirement::Schema,
        format!("{element}/content/{}/{field}", payload.block),
        id,
        format!(
            "{what} is not base64 (RFC 4648, standard or URL-safe alphabet, padding optional); payloads are sent unscanned, so only base64 is one: encode the bytes as base64, or send text as a `text` block"
        ),
    )
}

/// The first place of each id: a hash table of positions in the tree,
/// hashed and compared by the id they name.
struct Ids<'p, T> {
    tree: &'p T,
    hasher: foldhash::fast::RandomState,
}

impl<'p, T: Indexed> Ids<'p, T> {
    fn new(tree: &'p T) -> Self {
        Ids {
            tree,
            hasher: foldhash::fast::RandomState::default(),
        }
    }

    fn table(&self) -> HashTable<u32> {
        HashTable::with_capacity(self.tree.len())
    }

    fn id(&self, at: u32) -> &str {
        self.tree.id(at)
    }

    /// The place where `at`'s id first appears, when before `at`; `at` is
    /// recorded as the first otherwise.
    fn first(&self, table: &mut HashTable<u32>, at: u32) -> Option<u32> {
        let id = self.id(at);
        let hash = self.hasher.hash_one(id);
        match table.entry(
            hash,
            |&seen| self.id(seen) == id,
            |&seen| self.hasher.hash_one(self.id(seen)),
        ) {
            hashbrown::hash_table::Entry::Occupied(first) => Some(*first.get()),
            hashbrown::hash_table::Entry::Vacant(slot) => {
                slot.insert(at);
                None
            }
        }
    }

    /// The place where `id` first appears.
    fn find(&self, table: &HashTable<u32>, id: &str) -> Option<u32> {
        let hash = self.hasher.hash_one(id);
        table.find(hash, |&seen| self.id(seen) == id).copied()
    }
}

/// Checks a `related` attribute; the place is built only for a finding.
fn check_related(
    related: &Value,
    pointer: impl Fn() -> String,
    id: impl Fn() -> Option<String>,
    findings: &mut Vec<Finding>,
) {
    let Value::Array(entries) = related else {
        findings.push(Finding::error(
            Requirement::Schema,
            format!("{}/attributes/related", pointer()),
            id(),
            "reserved attribute `related` must be an array of `{\"relation\", \"id\" | \"url\"}`",
        ));
        return;
    };
    for (i, entry) in entries.iter().enumerate() {
        if related_entry(entry).is_none() {
            findings.push(Finding::error(
                Requirement::Schema,
                format!("{}/attributes/related/{i}", pointer()),
                id(),
                "a `related` entry must be `{\"relation\": string, \"id\": string}` or `{\"relation\": string, \"url\": string}`",
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{json, Value};

    use super::*;
    use crate::read::differential::{element_pointers, fixtures, mutate, MUTATIONS};

    #[test]
    fn a_payload_that_is_not_base64_is_an_error_at_its_pointer() {
        let answer = |blocks: Value| {
            json!({"protocol": "0.2.0", "instance": "i", "root": {
                "id": "app", "role": "Application", "children": [{
                    "id": "img", "role": "Image", "content": blocks,
                }],
            }})
            .to_string()
        };
        let bad = answer(json!([
            {"type": "text", "text": "not a payload: fine"},
            {"type": "image", "mimeType": "image/png", "data": "my pin is 4821"},
            {"type": "audio", "mimeType": "audio/wav", "data": "Zm9v"},
            {"type": "resource", "resource": {"uri": "file:///a", "blob": "secret words here"}},
            {"type": "resource", "resource": {"uri": "file:///b", "blob": 7}},
            {"type": "audio", "mimeType": "audio/wav", "data": "UklGRg=="},
        ]));
        let limits = Limits::default();
        for report in [
            check_bytes(bad.as_bytes(), &limits).unwrap(),
            check_bytes_whole(bad.as_bytes(), &limits).unwrap(),
        ] {
            assert!(!report.conforms);
            let found: Vec<(&str, Option<&str>)> = report
                .findings
                .iter()
                .map(|f| (f.pointer.as_str(), f.id.as_deref()))
                .collect();
            assert_eq!(
                found,
                [
                    ("/root/children/0/content/1/data", Some("img")),
                    ("/root/children/0/content/3/resource/blob", Some("img")),
                    ("/root/children/0/content/4/resource/blob", Some("img")),
                ]
            );
            for f in &report.findings {
                assert!(f.is_error() && f.message.contains("not base64"), "{f:?}");
                assert!(!f.message.contains("4821") && !f.message.contains("secret"));
            }
        }
        let refused = read_conforming(bad.as_bytes(), &limits).unwrap_err();
        assert!(matches!(refused, Error::NotConforming { .. }), "{refused}");
        let good = answer(json!([
            {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
            {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo"},
            {"type": "audio", "mimeType": "audio/wav", "data": "-_8"},
            {"type": "resource", "resource": {"uri": "file:///a", "blob": "+/8="}},
            {"type": "resource", "resource": {"uri": "file:///b", "text": "any text"}},
        ]));
        assert!(check_bytes(good.as_bytes(), &limits).unwrap().conforms);
        assert!(read_conforming(good.as_bytes(), &limits).is_ok());
    }

    /// What a check gave, in a form two checks can be compared by.
    fn outcome(report: Result<CheckReport>) -> String {
        match report {
            Ok(report) => format!("ok {report:?}"),
            Err(err) => format!("err {:?} {err} {:?}", err.kind(), err.pointer()),
        }
    }

    /// Checks `bytes` as read into a doc (where it is read that way) and
    /// read whole, and requires the same report; says whether the doc was
    /// read.
    fn same(bytes: &[u8], limits: &Limits) -> bool {
        let whole = outcome(check_bytes_whole(bytes, limits));
        let now = outcome(check_bytes(bytes, limits));
        assert!(
            now == whole,
            "the doc and the whole answer check differently on {}\ndoc: {}\nwhole: {}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(400)]),
            &now[..now.len().min(2_000)],
            &whole[..whole.len().min(2_000)],
        );
        matches!(crate::read::read_doc(bytes, limits, None), Ok(Some(_)))
    }

    /// Ways to break the rules that need the whole tree (and not the
    /// reading): the element at `at`, with `other` another element's
    /// pointer, broken the `how`-th way, written as text.
    const BREAKS: usize = 14;

    fn apply(v: &mut Value, at: &str, other: &str, how: usize) {
        let other_id = v
            .pointer(&format!("{other}/id"))
            .cloned()
            .unwrap_or(json!("x"));
        let e = v.pointer_mut(at).unwrap();
        let mut attribute = |name: &str, value: Value| {
            if !e["attributes"].is_object() {
                e["attributes"] = json!({});
            }
            e["attributes"][name] = value;
        };
        match how {
            0 => e["id"] = other_id,
            1 => e["focused"] = json!(true),
            2 => e["focused"] = json!(false),
            3 => e["role"] = json!("Application"),
            4 => e["role"] = json!("button"),
            5 => e["role"] = json!("Sprocket"),
            6 => attribute(
                "related",
                json!([{"relation": "labelledBy", "id": other_id}]),
            ),
            7 => attribute(
                "related",
                json!([{"relation": "x", "id": "no-such-id"}, 1, {"relation": "y", "url": "u"}]),
            ),
            8 => attribute("related", json!("not a list")),
            9 => attribute("author", json!(3)),
            10 => attribute("author", json!("Ada")),
            11 => attribute("visible", json!(true)),
            12 => e["id"] = json!(""),
            _ => e["role"] = json!("Group"),
        }
    }

    /// The answer with each (element, other element, way) applied, as text;
    /// ids written with escapes when `escaped` (the reader's owned strings).
    fn broken(answer: &Value, breaks: &[(usize, usize, usize)], escaped: bool) -> Vec<u8> {
        let pointers = element_pointers(answer);
        let mut v = answer.clone();
        for &(at, other, how) in breaks {
            let (at, other) = (
                &pointers[at % pointers.len()],
                &pointers[other % pointers.len()],
            );
            apply(&mut v, at, other, how);
        }
        let text = serde_json::to_string(&v).unwrap();
        if !escaped {
            return text.into_bytes();
        }
        // Every `"id":"…"` value's letters as `\u` escapes.
        let mut out = String::new();
        let mut rest = text.as_str();
        while let Some(i) = rest.find(r#""id":""#) {
            let (head, tail) = rest.split_at(i + 6);
            out.push_str(head);
            let end = tail.find('"').unwrap();
            for c in tail[..end].chars() {
                match c {
                    'a'..='z' => out.push_str(&format!("\\u{:04x}", c as u32)),
                    c => out.push(c),
                }
            }
            rest = &tail[end..];
        }
        out.push_str(rest);
        out.into_bytes()
    }

    /// Every fixture tree, the check cases, and the reader's breakages of
    /// each: the report checked on the doc is the report checked on the
    /// answer read whole (the doc read for the clean ones).
    #[test]
    fn checking_the_doc_finds_what_checking_the_whole_answer_finds() {
        let limits = Limits::default();
        let mut by_doc = 0;
        let mut inputs = Vec::new();
        let cases = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases/check");
        for file in std::fs::read_dir(cases).unwrap() {
            let path = file.unwrap().path();
            if path.extension().is_some_and(|x| x == "json") {
                inputs.push(std::fs::read(path).unwrap());
            }
        }
        for (_, bytes) in fixtures() {
            let value: Value = serde_json::from_slice(&bytes).unwrap();
            let pointers = element_pointers(&value);
            for how in 0..MUTATIONS {
                inputs.push(mutate(&value, pointers.last().unwrap(), how));
            }
            let n = pointers.len();
            for how in 0..BREAKS {
                inputs.push(broken(&value, &[(n - 1, n / 2, how)], false));
                inputs.push(broken(&value, &[(n / 2, n - 1, how), (0, 1, 1)], true));
            }
            // Ancestors and their descendants with attributes a rule reads
            // (a doc takes an element's at its end, after its subtree's).
            let nested: Vec<_> = [0, 1, 2, n / 3, n / 2, n - 1]
                .into_iter()
                .flat_map(|at| [(at, 0, 7), (at, 0, 11), (at, at + 1, 6)])
                .collect();
            inputs.push(broken(&value, &nested, false));
            inputs.push(bytes);
        }
        for input in &inputs {
            by_doc += usize::from(same(input, &limits));
        }
        assert!(
            by_doc > 200,
            "only {by_doc} of {} checked on the doc",
            inputs.len()
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// Generated trees with up to seven of the breakages above (two near
        /// the root), ids escaped or not: the same report both ways.
        #[test]
        fn generated_trees_and_their_breakages_check_alike(
            n in 1usize..300,
            seed in 0u64..1_000,
            breaks in prop::collection::vec((0usize..300, 0usize..300, 0..BREAKS), 0..6),
            near_the_root in prop::collection::vec((0usize..4, 0usize..300, 0..BREAKS), 0..3),
            escaped in any::<bool>(),
            how in 0..MUTATIONS,
            at in 0usize..300,
        ) {
            let limits = Limits::default();
            let answer = serde_json::to_value(crate::synth::synth(n, seed)).unwrap();
            let breaks: Vec<_> = breaks.into_iter().chain(near_the_root).collect();
            let bytes = broken(&answer, &breaks, escaped);
            prop_assert!(same(&bytes, &limits));
            let value: Value = serde_json::from_slice(&bytes).unwrap();
            let pointers = element_pointers(&value);
            same(&mutate(&value, &pointers[at % pointers.len()], how), &limits);
        }
    }
}
