//! Conformance to protocol 0.2.0 (RFC-0001 section 7): the rules that need
//! the whole tree. Every finding is reported, not just the first, each with
//! a JSON pointer, the element's id, and the requirement it breaks.
//!
//! Shape problems (types, required fields, limits) are found while reading,
//! in [`mod@crate::read`]. Reading then checking is composed here and only
//! here (`read_checked`): [`check_bytes`], [`read_conforming`] and
//! [`crate::Gate::trim_bytes`] all go through it.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use serde::Serialize;
use serde_json::Value;

use crate::deadline::Deadline;
use crate::error::{Error, Result};
use crate::finding::{Finding, Requirement};
use crate::limits::Limits;
use crate::model::{related_entry, Answer, Role, Tree, STATES};

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
/// conforms, is handed to `then` with the tree the checker indexed it by
/// (so the request does not index it again), and given back beside what
/// `then` returns for the caller to free or not. Any error finding is
/// [`Error::NotConforming`] with every finding, as [`Checked::into_conforming`]
/// gives.
pub(crate) fn with_conforming<'a, R>(
    bytes: &'a [u8],
    limits: &Limits,
    deadline: Option<&Deadline>,
    then: impl FnOnce(&Answer<'a>, &Tree<'_, 'a>) -> Result<R>,
) -> Result<(Result<R>, Answer<'a>)> {
    let reading = {
        let _read = tracing::info_span!("read", bytes = bytes.len()).entered();
        crate::read::read_until(bytes, limits, deadline)?
    };
    let mut findings = reading.findings;
    let Some(answer) = reading.answer else {
        return Err(Error::NotConforming { findings });
    };
    let result = {
        let tree = Tree::new(&answer.root);
        findings.extend(check_tree(&tree));
        if findings.iter().any(Finding::is_error) {
            return Err(Error::NotConforming { findings });
        }
        then(&answer, &tree)
    };
    Ok((result, answer))
}

/// Reads and checks an answer's bytes. `Err` only when the input cannot be
/// read at all (not JSON, over a limit).
pub fn check_bytes(bytes: &[u8], limits: &Limits) -> Result<CheckReport> {
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
#[cfg(any(test, feature = "internals"))]
pub(crate) fn require_conforming(answer: &Answer<'_>) -> Result<()> {
    require_conforming_tree(&Tree::new(&answer.root))
}

/// [`require_conforming`] of the tree that indexes a held answer.
pub(crate) fn require_conforming_tree(tree: &Tree<'_, '_>) -> Result<()> {
    let findings = check_tree(tree);
    if findings.iter().any(Finding::is_error) {
        return Err(Error::NotConforming { findings });
    }
    Ok(())
}

/// Checks the rules that need the whole tree: R1 (states under
/// `attributes`), the reserved attributes' shape, R3, R4 and R6.
pub fn check(answer: &Answer) -> Vec<Finding> {
    check_tree(&Tree::new(&answer.root))
}

/// [`check`] of the tree that indexes an answer.
pub(crate) fn check_tree(tree: &Tree<'_, '_>) -> Vec<Finding> {
    let mut findings = Vec::new();
    // Each id's first place. Ids are the provider's, but the table lives for
    // one check, with a seed of its own, and nothing of it leaves: a fast
    // hasher is enough. It holds positions (4 bytes a slot), the ids read
    // from the tree: a map of `&str` to `u32` took 24 bytes a slot, 52 MB
    // at a million elements.
    let ids = Ids::new(tree);
    let mut first_place = ids.table();
    let mut has_related = false;

    for (at, node) in tree.nodes().iter().enumerate() {
        let at = at as u32;
        let element = node.element;
        let id = || Some(element.id.to_string());
        let pointer = || tree.pointer(at);

        // R3: the root is an Application; roles come from the language.
        match (node.parent, element.role.read(), element.role.is_known()) {
            (None, Role::Application, true) => {}
            (None, _, _) => findings.push(Finding::error(
                Requirement::R3,
                "/root",
                id(),
                format!(
                    "the root must be an `Application`, found `{}`",
                    element.role
                ),
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
                format!(
                    "role `{}` is not in the role language; it is read as `Group`{}",
                    element.role,
                    crate::suggest::role(element.role.as_str())
                ),
            )),
            _ => {}
        }

        // R4: ids are unique.
        if !element.id.is_empty() {
            if let Some(first) = ids.first(&mut first_place, at) {
                findings.push(Finding::error(
                    Requirement::R4,
                    pointer(),
                    id(),
                    format!(
                        "id `{}` is repeated; it first appears at {}",
                        element.id,
                        tree.pointer(first)
                    ),
                ));
            }
        }

        // R1: no state repeated under attributes; 4.3: reserved attributes.
        for (name, value) in element.attributes.iter() {
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

        // R6 and 4.1's focus rule.
        if node.focused {
            match node.parent {
                None => findings.push(Finding::error(
                    Requirement::R6,
                    "/root",
                    id(),
                    "the root is not on the focus path, which starts at the root's child; remove `focused` from the root",
                )),
                Some(parent) if parent != 0 && !tree.node(parent).focused => {
                    findings.push(Finding::error(
                        Requirement::R6,
                        pointer(),
                        id(),
                        format!(
                            "focused element under an unfocused parent (id `{}`): the focus path must be unbroken from the root's child down",
                            tree.node(parent).element.id
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
    }

    // Two focused siblings: the path would fork.
    for (at, node) in tree.nodes().iter().enumerate() {
        if !(node.focused || at == 0) {
            continue;
        }
        let focused: Vec<u32> = tree
            .children(at as u32)
            .filter(|&c| tree.node(c).focused)
            .collect();
        if let [first, rest @ ..] = focused.as_slice() {
            let first = *first;
            for &other in rest {
                findings.push(Finding::error(
                    Requirement::R6,
                    tree.pointer(other),
                    Some(tree.node(other).element.id.to_string()),
                    format!(
                        "two focused siblings: this one and `{}` at {}; the focus path is one path",
                        tree.node(first).element.id,
                        tree.pointer(first)
                    ),
                ));
            }
        }
    }

    // related ids that name no element.
    for (at, node) in tree.nodes().iter().enumerate().filter(|_| has_related) {
        for link in node.element.attributes.related() {
            if let crate::model::RelatedTarget::Id(target) = link.target {
                if ids.find(&first_place, target).is_none() {
                    findings.push(Finding::warning(
                        Requirement::Schema,
                        format!("{}/attributes/related", tree.pointer(at as u32)),
                        Some(node.element.id.to_string()),
                        format!("`related` names id `{target}`, which is not in this answer"),
                    ));
                }
            }
        }
    }
    findings
}

/// The first place of each id: a hash table of positions in the tree,
/// hashed and compared by the id they name.
struct Ids<'p, 't, 'a> {
    tree: &'p Tree<'t, 'a>,
    hasher: foldhash::fast::RandomState,
}

impl<'p, 't, 'a> Ids<'p, 't, 'a> {
    fn new(tree: &'p Tree<'t, 'a>) -> Self {
        Ids {
            tree,
            hasher: foldhash::fast::RandomState::default(),
        }
    }

    fn table(&self) -> HashTable<u32> {
        HashTable::with_capacity(self.tree.len())
    }

    fn id(&self, at: u32) -> &str {
        &self.tree.node(at).element.id
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
