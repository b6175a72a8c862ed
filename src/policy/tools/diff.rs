//! `ctxgate policy diff OLD NEW`: what changes between two policy
//! versions (each one or more layers), and whether NEW sends anything OLD
//! withheld. Per request (action, instance, target, the app title's
//! pattern matches): the scope, budget, redactions, title patterns and
//! declared attributes, compared by content. Per element: the winning
//! class and its reasons, the priority and what `strip` removes, on every
//! class of input the rules of either policy can tell apart
//! ([`super::space`]): each role, subrole, state combination, attribute
//! set and value, title-match set and ancestor shape they compare with a
//! literal, and one value none of them names. What cannot be enumerated is
//! undecided, by rule; so is a space larger than [`MAX_INPUTS`].

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value as Json;

use super::space::{self, Collection, Leaf, Reads, Undecided, FLAGS};
use crate::error::Result;
use crate::floor::Floor;
use crate::model::Role;
use crate::policy::engine::probe_request;
use crate::policy::engine::ELEMENT_RULES;
use crate::policy::probes::ACTIONS;
use crate::policy::{Budget, Decision, ElementInput, Policy, RequestInput, RequestPlan, Scope};

/// One change between the two policies.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Change {
    /// The request: the action, with the instance, target and app title
    /// matches when they are not the plain probe's.
    pub action: String,
    /// `scope`, `budget`, `redact`, `title_patterns`, `element_attributes`
    /// or `element`.
    pub kind: &'static str,
    /// The element's label, for `element`: the simplest input explored
    /// that shows the change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub element: Option<String>,
    /// How many explored inputs show it (1 for a request's change).
    pub inputs: u64,
    /// Before and after, as a reader sees them.
    pub old: String,
    /// After.
    pub new: String,
    /// Whether NEW sends more than OLD here.
    pub sends_more: bool,
}

/// How much of an element a class sends: deny and prune nothing, mask a
/// placeholder, scope what the scope and budget allow, keep it whole.
pub fn class_level(class: &str) -> u8 {
    match class {
        "deny" | "prune" => 0,
        "mask" => 1,
        "scope" => 2,
        _ => 3,
    }
}

fn scope_level(scope: Scope) -> u8 {
    match scope {
        Scope::Selection => 0,
        Scope::Focus => 1,
        Scope::Window => 2,
        Scope::App => 3,
    }
}

fn scope_word(scope: Scope) -> String {
    serde_json::to_value(scope)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn budget_text(budget: Option<Budget>) -> String {
    match budget {
        Some(Budget::Tokens(n)) => format!("{n} tokens"),
        Some(Budget::Bytes(n)) => format!("{n} bytes"),
        None => "none".to_string(),
    }
}

/// Whether `new` allows more than `old`: none is unbounded; another unit
/// cannot be compared, so counts as more.
fn budget_more(old: Option<Budget>, new: Option<Budget>) -> bool {
    match (old, new) {
        (_, None) => old.is_some(),
        (None, Some(_)) => false,
        (Some(Budget::Tokens(a)), Some(Budget::Tokens(b)))
        | (Some(Budget::Bytes(a)), Some(Budget::Bytes(b))) => b > a,
        _ => true,
    }
}

/// The class that wins and its reasons, as a cell: `deny (chat-window)`.
pub fn outcome_text(decision: &Decision) -> (String, &'static str) {
    let (class, reasons) = decision.outcome();
    let reasons: Vec<&str> = reasons.iter().map(|r| &**r).collect();
    if reasons.is_empty() {
        (class.to_string(), class)
    } else {
        (format!("{class} ({})", reasons.join(", ")), class)
    }
}

/// The most inputs (requests × elements) the diff evaluates; a larger
/// space is undecided.
pub const MAX_INPUTS: u64 = 1_000_000;

/// The most distinct title patterns whose match sets are explored (every
/// subset of them).
const MAX_TITLE_PATTERNS: usize = 10;

/// The most attribute names whose sets are explored (every subset).
const MAX_ATTRIBUTE_NAMES: usize = 8;

/// What was explored, per field: how many values (or classes) of each;
/// per element field, the most any one request explored.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Explored {
    /// Action names: the built-in four, every word either policy compares
    /// `input.action.name` with, and one neither names.
    pub actions: usize,
    /// `input.app.instance` values.
    pub instances: usize,
    /// `input.action.target` values (absent included).
    pub targets: usize,
    /// Sets of app title matches.
    pub app_title_sets: usize,
    /// Element roles.
    pub roles: usize,
    /// Element subroles (absent included).
    pub subroles: usize,
    /// Combinations of the states either policy reads.
    pub state_combinations: usize,
    /// Attribute name sets with their values.
    pub attribute_values: usize,
    /// Title-match sets of the element.
    pub title_match_sets: usize,
    /// Ancestor shapes (`input.inside`).
    pub ancestor_shapes: usize,
    /// Inputs evaluated under each policy.
    pub inputs: u64,
}

/// What `policy diff` found.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct DiffReport {
    /// Every change.
    pub changes: Vec<Change>,
    /// The rules (or the space) the diff cannot decide.
    pub undecided: Vec<Undecided>,
    /// What was explored.
    pub explored: Explored,
    /// Whether both sides have the same sources (nothing can change).
    pub same_sources: bool,
}

impl DiffReport {
    /// Whether NEW sends anything OLD withheld, on what was explored.
    pub fn sends_more(&self) -> bool {
        self.changes.iter().any(|c| c.sends_more)
    }
}

/// A request explored: its input and its label.
struct RequestPoint {
    input: RequestInput,
    label: String,
}

/// One ancestor: role and subrole.
type Ancestor = (Role, Option<String>);

/// The element classes explored under one pair of plans.
struct ElementSpace {
    roles: Vec<Role>,
    subroles: Vec<Option<String>>,
    flags: Vec<&'static str>,
    /// Attribute sets: names, each with its value when one is read.
    attributes: Vec<Vec<(String, Json)>>,
    /// Title-match sets, as sets of distinct patterns.
    titles: Vec<Vec<usize>>,
    shapes: Vec<Vec<Ancestor>>,
}

/// The dimensions of an [`ElementSpace`], in its index order; each state
/// after them is one more, of two values.
const ROLE: usize = 0;
const SUBROLE: usize = 1;
const ATTRIBUTES: usize = 2;
const TITLES: usize = 3;
const SHAPE: usize = 4;
const STATES: usize = 5;

impl ElementSpace {
    /// How many values each dimension has.
    fn radices(&self) -> Vec<usize> {
        let mut out = vec![
            self.roles.len(),
            self.subroles.len(),
            self.attributes.len(),
            self.titles.len(),
            self.shapes.len(),
        ];
        out.extend(self.flags.iter().map(|_| 2));
        out
    }

    fn size(&self) -> u64 {
        self.radices()
            .iter()
            .fold(1u64, |n, k| n.saturating_mul(*k as u64))
    }

    /// The dimensions a per-element rule's value can depend on: what it
    /// reads through every rule it refers to. `mask` also depends on
    /// what the floor reads (the subrole, the attributes), `strip` on the
    /// attributes (it is asked only of an element that has some), and a
    /// rule reading attributes on the subrole (a secure field's values
    /// never reach the policy).
    fn dims_of(&self, reads: &Reads, rule: &str) -> Vec<bool> {
        let mut on = vec![false; STATES + self.flags.len()];
        let (leaves, inside) = reads.deps(rule);
        for leaf in &leaves {
            match leaf {
                Leaf::Role => on[ROLE] = true,
                Leaf::Subrole => on[SUBROLE] = true,
                Leaf::AttrName | Leaf::Attr(_) => {
                    on[ATTRIBUTES] = true;
                    on[SUBROLE] = true;
                }
                Leaf::Title => on[TITLES] = true,
                Leaf::InsideRole | Leaf::InsideSubrole => on[SHAPE] = true,
                Leaf::Flag(f) => {
                    if let Some(k) = self.flags.iter().position(|x| x == f) {
                        on[STATES + k] = true;
                    }
                }
                Leaf::Action | Leaf::Target | Leaf::Instance | Leaf::Protocol | Leaf::AppTitle => {}
            }
        }
        on[SHAPE] |= inside;
        if rule == "mask" {
            on[SUBROLE] = true;
            on[ATTRIBUTES] = true;
        }
        if rule == "strip" {
            on[ATTRIBUTES] = true;
        }
        on
    }

    /// The element at `at` for a reader, and how far it is from the
    /// plainest element.
    fn label(&self, at: &[usize], titles: &str) -> (usize, String) {
        let on: Vec<&str> = (0..self.flags.len())
            .filter(|k| at[STATES + k] == 1)
            .map(|k| self.flags[k])
            .collect();
        label(
            self.roles[at[ROLE]],
            self.subroles[at[SUBROLE]].as_deref(),
            &on,
            &self.attributes[at[ATTRIBUTES]],
            titles,
            !self.titles[at[TITLES]].is_empty(),
            &self.shapes[at[SHAPE]],
        )
    }

    /// How far the element at `at` is from the plainest one.
    fn distance(&self, at: &[usize]) -> usize {
        usize::from(self.subroles[at[SUBROLE]].is_some())
            + at[STATES..].iter().sum::<usize>()
            + self.attributes[at[ATTRIBUTES]].len()
            + usize::from(!self.titles[at[TITLES]].is_empty())
            + usize::from(at[SHAPE] != 0)
    }
}

/// One policy's side of the exploration under one request: per rule, the
/// value it gives each projected element (by the element's code), each
/// value interned, and the decisions they came from.
struct Side<'p> {
    eval: crate::policy::engine::Evaluator<'p>,
    plan: &'p RequestPlan,
    /// Per title set of the space, the names this plan's patterns give.
    titles: Vec<Vec<String>>,
    decisions: std::collections::HashMap<u64, std::sync::Arc<Decision>>,
    /// Per rule of [`ELEMENT_RULES`], by code: the value's id (`u32::MAX`:
    /// not evaluated yet).
    tables: Vec<Vec<u32>>,
    ids: std::collections::HashMap<(usize, String), u32>,
    /// By id: a decision holding that value.
    values: Vec<std::sync::Arc<Decision>>,
}

/// A side for `policy` under `request`, the app title matching `app`.
fn side<'p>(
    policy: &'p Policy,
    plan: &'p RequestPlan,
    request: &RequestInput,
    patterns: &[String],
    app: &[usize],
    space: &ElementSpace,
) -> Result<Side<'p>> {
    let size = usize::try_from(space.size()).unwrap_or(usize::MAX);
    Ok(Side {
        eval: policy.evaluator_with_matches(request, names_of(plan, patterns, app))?,
        plan,
        titles: space
            .titles
            .iter()
            .map(|t| names_of(plan, patterns, t))
            .collect(),
        decisions: Default::default(),
        tables: vec![vec![u32::MAX; size]; ELEMENT_RULES.len()],
        ids: Default::default(),
        values: Vec::new(),
    })
}

/// A rule's value in a decision, as a key: its reasons or names, or the
/// priority's bits.
fn value_key(decision: &Decision, rule: usize) -> String {
    let join = |v: &[std::sync::Arc<str>]| v.iter().map(|r| &**r).collect::<Vec<_>>().join("\u{0}");
    match rule {
        0 => join(&decision.deny),
        1 => join(&decision.mask),
        2 => join(&decision.keep),
        3 => join(&decision.prune),
        4 => decision.priority.to_bits().to_string(),
        _ => join(&decision.strip),
    }
}

impl Side<'_> {
    /// The id of rule `rule`'s value on the element `code` names, whose
    /// dimensions are `at` (zero outside what the rule reads).
    fn value(&mut self, space: &ElementSpace, rule: usize, at: &[usize], code: u64) -> Result<u32> {
        let id = self.tables[rule][code as usize];
        if id != u32::MAX {
            return Ok(id);
        }
        let decision = self.decide(space, at, code)?;
        let key = (rule, value_key(&decision, rule));
        let next = self.values.len() as u32;
        let id = *self.ids.entry(key).or_insert(next);
        if id == next {
            self.values.push(decision);
        }
        self.tables[rule][code as usize] = id;
        Ok(id)
    }

    fn decide(
        &mut self,
        space: &ElementSpace,
        at: &[usize],
        code: u64,
    ) -> Result<std::sync::Arc<Decision>> {
        if let Some(d) = self.decisions.get(&code) {
            return Ok(d.clone());
        }
        let on: Vec<&str> = (0..space.flags.len())
            .filter(|k| at[STATES + k] == 1)
            .map(|k| space.flags[k])
            .collect();
        let input = input(
            space.roles[at[ROLE]],
            space.subroles[at[SUBROLE]].as_deref(),
            &on,
            &space.attributes[at[ATTRIBUTES]],
            self.plan,
            &self.titles[at[TITLES]],
            &space.shapes[at[SHAPE]],
        );
        let d = self.eval.decide(&input)?;
        self.decisions.insert(code, d.clone());
        Ok(d)
    }

    /// The decision whose rules' values have these ids.
    fn assemble(&self, ids: &[u32]) -> Decision {
        let part = |r: usize| &self.values[ids[r] as usize];
        Decision {
            deny: part(0).deny.clone(),
            mask: part(1).mask.clone(),
            keep: part(2).keep.clone(),
            prune: part(3).prune.clone(),
            priority: part(4).priority,
            strip: part(5).strip.clone(),
        }
    }
}

/// Every change between `old` and `new`, on the whole input space their
/// rules can tell apart.
pub fn diff_policies(old: &Policy, new: &Policy) -> Result<DiffReport> {
    diff_with(old, new, true)
}

/// [`diff_policies`]; without `per_rule`, every rule is evaluated on the
/// whole element (the reference the per-rule exploration is tested with).
fn diff_with(old: &Policy, new: &Policy, per_rule: bool) -> Result<DiffReport> {
    let mut report = DiffReport::default();
    if old.hash() == new.hash() {
        report.same_sources = true;
        return Ok(report);
    }
    let mut reads = Reads::default();
    let files: Vec<_> = old.files().iter().chain(new.files()).collect();
    space::reads(&files, &mut reads);
    report.undecided = reads.undecided.clone();

    let requests = requests(&reads);
    report.explored.actions = requests
        .iter()
        .map(|r| &r.input.action.name)
        .collect::<BTreeSet<_>>()
        .len();
    report.explored.instances = requests
        .iter()
        .map(|r| &r.input.instance)
        .collect::<BTreeSet<_>>()
        .len();
    report.explored.targets = requests
        .iter()
        .map(|r| &r.input.action.target)
        .collect::<BTreeSet<_>>()
        .len();

    // The plans first, and the size of the space under them.
    let mut plans = Vec::new();
    let mut total: u64 = 0;
    for request in &requests {
        let (a, b) = (old.plan(&request.input)?, new.plan(&request.input)?);
        plan_changes(&request.label, &a, &b, &mut report.changes);
        let patterns = distinct_patterns(&a, &b);
        let app_sets = title_sets(
            &reads,
            Leaf::AppTitle,
            Collection::AppTitleMatches,
            &patterns,
            &a,
            &b,
        );
        let elements = element_space(&reads, &a, &b, &patterns);
        let (Some(app_sets), Some(elements)) = (app_sets, elements) else {
            report.undecided.push(Undecided {
                place: "(input space)".to_string(),
                rule: String::new(),
                why: format!(
                    "more than {MAX_TITLE_PATTERNS} title patterns or {MAX_ATTRIBUTE_NAMES} attribute names to combine"
                ),
            });
            return Ok(report);
        };
        total = total.saturating_add(elements.size().saturating_mul(app_sets.len() as u64));
        plans.push((request, a, b, patterns, app_sets, elements));
    }
    // Per field, the most any request explored (the plans may differ).
    for (_, _, _, _, app_sets, elements) in &plans {
        let e = &mut report.explored;
        e.app_title_sets = e.app_title_sets.max(app_sets.len());
        e.roles = e.roles.max(elements.roles.len());
        e.subroles = e.subroles.max(elements.subroles.len());
        e.state_combinations = e.state_combinations.max(1 << elements.flags.len());
        e.attribute_values = e.attribute_values.max(elements.attributes.len());
        e.title_match_sets = e.title_match_sets.max(elements.titles.len());
        e.ancestor_shapes = e.ancestor_shapes.max(elements.shapes.len());
    }
    if total > MAX_INPUTS {
        report.undecided.push(Undecided {
            place: "(input space)".to_string(),
            rule: String::new(),
            why: format!("{total} inputs to explore, more than the limit of {MAX_INPUTS}"),
        });
        return Ok(report);
    }
    let mut found: BTreeMap<(String, String, String), Found> = BTreeMap::new();
    for (request, a, b, patterns, app_sets, elements) in &plans {
        let radices = elements.radices();
        let strides: Vec<u64> = radices
            .iter()
            .scan(1u64, |acc, r| {
                let s = *acc;
                *acc = acc.saturating_mul(*r as u64);
                Some(s)
            })
            .collect();
        let dims: Vec<Vec<bool>> = ELEMENT_RULES
            .iter()
            .map(|r| elements.dims_of(&reads, r))
            .collect();
        let on_dims: Vec<Vec<usize>> = dims
            .iter()
            .map(|on| (0..on.len()).filter(|d| on[*d] || !per_rule).collect())
            .collect();
        let title_labels: Vec<String> = elements
            .titles
            .iter()
            .map(|t| match_label(a, b, patterns, t))
            .collect();
        for app in app_sets {
            let label = if app.is_empty() {
                request.label.clone()
            } else {
                format!(
                    "{} (app title matches {})",
                    request.label,
                    match_label(a, b, patterns, app)
                )
            };
            let side = |policy, plan| side(policy, plan, &request.input, patterns, app, elements);
            let (mut old_side, mut new_side) = (side(old, a)?, side(new, b)?);
            let mut compared: std::collections::HashMap<[u32; 12], Option<(String, String, bool)>> =
                Default::default();
            let mut at = vec![0usize; radices.len()];
            let mut projected = vec![0usize; radices.len()];
            loop {
                report.explored.inputs += 1;
                let mut ids = [0u32; 12];
                for (r, on) in on_dims.iter().enumerate() {
                    let code: u64 = on.iter().map(|&d| at[d] as u64 * strides[d]).sum();
                    let (a_id, b_id) = (
                        old_side.tables[r][code as usize],
                        new_side.tables[r][code as usize],
                    );
                    if a_id == u32::MAX || b_id == u32::MAX {
                        projected.iter_mut().for_each(|p| *p = 0);
                        for &d in on {
                            projected[d] = at[d];
                        }
                        ids[r] = old_side.value(elements, r, &projected, code)?;
                        ids[6 + r] = new_side.value(elements, r, &projected, code)?;
                    } else {
                        ids[r] = a_id;
                        ids[6 + r] = b_id;
                    }
                }
                let result = match compared.get(&ids) {
                    Some(result) => result.clone(),
                    None => {
                        let result =
                            compare(&old_side.assemble(&ids[..6]), &new_side.assemble(&ids[6..]));
                        compared.insert(ids, result.clone());
                        result
                    }
                };
                if let Some((old_text, new_text, more)) = result {
                    let distance = elements.distance(&at);
                    let entry = found
                        .entry((label.clone(), old_text, new_text))
                        .or_insert_with(|| Found {
                            example: (usize::MAX, String::new()),
                            inputs: 0,
                            sends_more: more,
                        });
                    entry.inputs += 1;
                    entry.sends_more |= more;
                    if distance < entry.example.0 {
                        entry.example = elements.label(&at, &title_labels[at[TITLES]]);
                    }
                }
                // The next element: an odometer over the dimensions.
                let mut d = 0;
                loop {
                    if d == at.len() {
                        break;
                    }
                    at[d] += 1;
                    if at[d] < radices[d] {
                        break;
                    }
                    at[d] = 0;
                    d += 1;
                }
                if d == at.len() {
                    break;
                }
            }
        }
    }
    tracing::debug!(
        inputs = report.explored.inputs,
        changes = found.len(),
        undecided = report.undecided.len(),
        "policy diff explored"
    );
    for ((action, old_text, new_text), f) in found {
        report.changes.push(Change {
            action,
            kind: "element",
            element: Some(f.example.1),
            inputs: f.inputs,
            old: old_text,
            new: new_text,
            sends_more: f.sends_more,
        });
    }
    Ok(report)
}

/// A change on elements: its simplest input and how many show it.
struct Found {
    /// (how far from the plainest element, label).
    example: (usize, String),
    inputs: u64,
    sends_more: bool,
}

/// The requests explored: every action, instance and target class.
fn requests(reads: &Reads) -> Vec<RequestPoint> {
    let mut actions: Vec<String> = ACTIONS.iter().map(|a| a.to_string()).collect();
    for word in reads.strings(&Leaf::Action) {
        if !actions.contains(&word) {
            actions.push(word);
        }
    }
    let mut unnamed = "ctxgate-unnamed-action".to_string();
    while actions.contains(&unnamed) {
        unnamed.push('-');
    }
    actions.push(unnamed);
    let strings = |leaf: &Leaf, other: &str, absent: bool| -> Vec<Option<String>> {
        if !reads.reads(leaf) {
            return vec![if absent {
                None
            } else {
                Some(other.to_string())
            }];
        }
        reads
            .candidates(leaf, Json::String(other.to_string()), absent, &|_| false)
            .into_iter()
            .map(|v| {
                v.map(|v| {
                    v.as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| v.to_string())
                })
            })
            .collect()
    };
    let instances = strings(&Leaf::Instance, "probe", false);
    let targets = strings(&Leaf::Target, "probe-target", true);
    let protocols = strings(&Leaf::Protocol, "0.2.0", false);
    let mut out = Vec::new();
    for action in &actions {
        for instance in &instances {
            for target in &targets {
                for protocol in &protocols {
                    let mut input = probe_request(action, target.as_deref());
                    let mut label = action.clone();
                    if let Some(instance) = instance {
                        if instance != "probe" {
                            label += &format!(" (instance `{instance}`)");
                        }
                        input.instance = instance.clone();
                    }
                    if let Some(target) = target {
                        label += &format!(" (target `{target}`)");
                    }
                    if let Some(protocol) = protocol {
                        if protocol != "0.2.0" {
                            label += &format!(" (protocol `{protocol}`)");
                        }
                        input.protocol = protocol.clone();
                    }
                    out.push(RequestPoint { input, label });
                }
            }
        }
    }
    out
}

/// The distinct title patterns of both plans, by content.
fn distinct_patterns(a: &RequestPlan, b: &RequestPlan) -> Vec<String> {
    let mut out: Vec<String> = a
        .title_patterns
        .iter()
        .chain(&b.title_patterns)
        .map(|(_, p)| p.as_str().to_string())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The names a plan gives a title matching exactly the patterns `set`.
fn names_of(plan: &RequestPlan, patterns: &[String], set: &[usize]) -> Vec<String> {
    let mut names: Vec<String> = plan
        .title_patterns
        .iter()
        .filter(|(_, p)| set.iter().any(|k| patterns[*k] == p.as_str()))
        .map(|(n, _)| n.clone())
        .collect();
    names.sort();
    names
}

/// `` `password` `` or, when the names differ, `` old `password`, new `pwd` ``.
fn match_label(a: &RequestPlan, b: &RequestPlan, patterns: &[String], set: &[usize]) -> String {
    let (na, nb) = (names_of(a, patterns, set), names_of(b, patterns, set));
    let list = |names: &[String]| -> String {
        if names.is_empty() {
            "none".to_string()
        } else {
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    if na == nb {
        list(&na)
    } else {
        format!("old {}, new {}", list(&na), list(&nb))
    }
}

/// The sets of distinct patterns a title may match, one per class the
/// rules tell apart by the names each side gives them; `None` when there
/// are too many patterns to combine.
fn title_sets(
    reads: &Reads,
    leaf: Leaf,
    collection: Collection,
    patterns: &[String],
    a: &RequestPlan,
    b: &RequestPlan,
) -> Option<Vec<Vec<usize>>> {
    if !reads.reads(&leaf) || patterns.is_empty() {
        return Some(vec![Vec::new()]);
    }
    if patterns.len() > MAX_TITLE_PATTERNS {
        return None;
    }
    let tests = reads.tests_of(&leaf);
    let counted = reads.counts.contains_key(&collection);
    let mut sets: Vec<Vec<usize>> = (0u32..1 << patterns.len())
        .map(|bits| (0..patterns.len()).filter(|k| bits >> k & 1 == 1).collect())
        .collect();
    sets.sort_by_key(Vec::len);
    let class = |names: &[String]| -> (Vec<bool>, Option<usize>) {
        let any = tests
            .iter()
            .map(|t| names.iter().any(|n| t.holds(&Json::String(n.clone()))))
            .collect();
        (any, counted.then_some(names.len()))
    };
    let mut seen = BTreeSet::new();
    sets.retain(|set| {
        let (na, nb) = (names_of(a, patterns, set), names_of(b, patterns, set));
        seen.insert((class(&na), class(&nb)))
    });
    Some(sets)
}

/// The element classes to explore under plans `a` and `b`.
fn element_space(
    reads: &Reads,
    a: &RequestPlan,
    b: &RequestPlan,
    patterns: &[String],
) -> Option<ElementSpace> {
    let roles = if reads.reads(&Leaf::Role) {
        reads.roles(&Leaf::Role)
    } else {
        vec![Role::Text]
    };
    let subroles: Vec<Option<String>> = if reads.reads(&Leaf::Subrole) {
        reads
            .candidates(
                &Leaf::Subrole,
                Json::String("ctxgate-other".into()),
                true,
                &|v| Floor::applies(v.as_str()),
            )
            .into_iter()
            .map(|v| v.and_then(|v| v.as_str().map(str::to_string)))
            .collect()
    } else {
        vec![None]
    };
    let flags: Vec<&'static str> = FLAGS
        .iter()
        .copied()
        .filter(|f| reads.reads(&Leaf::Flag(f.to_string())))
        .collect();
    let attributes = attribute_sets(reads, a, b)?;
    let titles = title_sets(reads, Leaf::Title, Collection::TitleMatches, patterns, a, b)?;
    let shapes = shapes(reads);
    Some(ElementSpace {
        roles,
        subroles,
        flags,
        attributes,
        titles,
        shapes,
    })
}

/// Attribute sets: every subset of the names the rules or the plans name
/// (with one name none of them does), deduplicated by what the rules can
/// tell of the names; each name read by value with each class of value.
fn attribute_sets(
    reads: &Reads,
    a: &RequestPlan,
    b: &RequestPlan,
) -> Option<Vec<Vec<(String, Json)>>> {
    let valued: BTreeSet<String> = reads
        .attribute_values()
        .into_iter()
        .chain(a.element_attributes.iter().cloned())
        .chain(b.element_attributes.iter().cloned())
        .collect();
    let names_read = reads.reads(&Leaf::AttrName);
    if !names_read && valued.is_empty() {
        return Some(vec![Vec::new()]);
    }
    let mut names: Vec<String> = valued.iter().cloned().collect();
    if names_read {
        for value in reads.candidates(
            &Leaf::AttrName,
            Json::String("ctxgate-other-attribute".into()),
            false,
            &|_| false,
        ) {
            if let Some(Json::String(name)) = value {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
    }
    if names.len() > MAX_ATTRIBUTE_NAMES {
        return None;
    }
    let tests = reads.tests_of(&Leaf::AttrName);
    let counted = reads.counts.contains_key(&Collection::AttributeNames);
    let mut subsets: Vec<Vec<&String>> = (0u32..1 << names.len())
        .map(|bits| {
            (0..names.len())
                .filter(|k| bits >> k & 1 == 1)
                .map(|k| &names[k])
                .collect()
        })
        .collect();
    subsets.sort_by_key(Vec::len);
    // A computed strip name is the name itself: every subset counts.
    if !reads.computed_strip {
        let mut seen = BTreeSet::new();
        subsets.retain(|set| {
            let any: Vec<bool> = tests
                .iter()
                .map(|t| set.iter().any(|n| t.holds(&Json::String((*n).clone()))))
                .collect();
            let by_value: Vec<&String> = set
                .iter()
                .copied()
                .filter(|n| valued.contains(*n))
                .collect();
            // `strip` is asked only of an element with attributes.
            seen.insert((any, counted.then_some(set.len()), by_value, set.is_empty()))
        });
    }
    let mut out = Vec::new();
    for set in subsets {
        let mut combos: Vec<Vec<(String, Json)>> = vec![Vec::new()];
        for name in set {
            let values: Vec<Json> = if valued.contains(name) {
                reads
                    .candidates(
                        &Leaf::Attr(name.clone()),
                        Json::String("ctxgate-other-value".into()),
                        false,
                        &|v| Floor::attribute_says_secure(name, v),
                    )
                    .into_iter()
                    .flatten()
                    .collect()
            } else {
                vec![Json::Null]
            };
            combos = combos
                .into_iter()
                .flat_map(|c| {
                    values.iter().map(move |v| {
                        let mut c = c.clone();
                        c.push((name.clone(), v.clone()));
                        c
                    })
                })
                .collect();
            if combos.len() as u64 > MAX_INPUTS {
                return None;
            }
        }
        out.extend(combos);
    }
    Some(out)
}

/// Ancestor shapes: when `input.inside` is read, chains of each length
/// its count is compared around, and each class of ancestor (role and
/// subrole the rules compare) nearest, second, at each index a rule
/// reads, and in pairs; otherwise the plain probe's chain.
fn shapes(reads: &Reads) -> Vec<Vec<Ancestor>> {
    let plain = vec![
        (Role::Group, None),
        (Role::Window, None),
        (Role::Application, None),
    ];
    if !reads.inside {
        return vec![plain];
    }
    let roles = if reads.reads(&Leaf::InsideRole) {
        reads.roles(&Leaf::InsideRole)
    } else {
        vec![Role::Group]
    };
    let subroles: Vec<Option<String>> = if reads.reads(&Leaf::InsideSubrole) {
        reads
            .candidates(
                &Leaf::InsideSubrole,
                Json::String("ctxgate-other".into()),
                true,
                &|_| false,
            )
            .into_iter()
            .map(|v| v.and_then(|v| v.as_str().map(str::to_string)))
            .collect()
    } else {
        vec![None]
    };
    // The filler is the role no rule names with no subrole: `roles` ends with it.
    let filler: Ancestor = (*roles.last().unwrap_or(&Role::Group), None);
    let items: Vec<Ancestor> = roles
        .iter()
        .flat_map(|r| subroles.iter().map(move |s| (*r, s.clone())))
        .filter(|item| *item != filler)
        .collect();
    let mut lengths: BTreeSet<usize> = [0, 1, 3].into_iter().collect();
    if let Some(counts) = reads.counts.get(&Collection::Inside) {
        for n in counts {
            for d in [-1i64, 0, 1] {
                if let Ok(k) = usize::try_from(n + d) {
                    lengths.insert(k.min(64));
                }
            }
        }
    }
    let mut out: Vec<Vec<Ancestor>> = vec![plain];
    for len in &lengths {
        out.push(vec![filler.clone(); *len]);
    }
    let mut positions: BTreeSet<usize> = [0, 1].into_iter().collect();
    positions.extend(reads.inside_indexes.iter().map(|k| (*k).min(64)));
    for item in &items {
        for at in &positions {
            let mut chain = vec![filler.clone(); *at];
            chain.push(item.clone());
            out.push(chain);
        }
        for len in &lengths {
            if *len > 1 {
                let mut chain = vec![filler.clone(); *len - 1];
                chain.insert(0, item.clone());
                out.push(chain);
            }
        }
    }
    if items.len() <= 8 {
        for x in &items {
            for y in &items {
                if x != y {
                    out.push(vec![x.clone(), y.clone()]);
                }
            }
        }
    }
    // Chains that differ only in a length no count comparison tells apart
    // are one, when nothing but the count is read of the ancestors.
    let only_count = items.is_empty();
    let counts = reads.counts.get(&Collection::Inside);
    let class = |s: &Vec<Ancestor>| -> Vec<(bool, bool)> {
        counts
            .into_iter()
            .flatten()
            .map(|n| ((s.len() as i64) < *n, s.len() as i64 == *n))
            .collect()
    };
    let mut seen = BTreeSet::new();
    let mut classes = BTreeSet::new();
    out.retain(|s| seen.insert(s.clone()) && (!only_count || classes.insert(class(s))));
    out
}

/// The projection of one explored element under `plan`: the attribute
/// values only of the names the plan declares, the names of its own title
/// patterns; states not explored as a plain element has them.
fn input<'a>(
    role: Role,
    subrole: Option<&'a str>,
    on: &[&str],
    attributes: &'a [(String, Json)],
    plan: &RequestPlan,
    titles: &'a [String],
    shape: &'a [Ancestor],
) -> ElementInput<'a> {
    let flag = |name: &str, plain: bool| if on.contains(&name) { !plain } else { plain };
    let secure_elsewhere =
        Floor::applies_elsewhere(None, attributes.iter().map(|(n, v)| (n.as_str(), v)));
    ElementInput {
        role,
        subrole,
        selected: flag("selected", false),
        focused: flag("focused", false),
        visible: flag("visible", true),
        hovered: flag("hovered", false),
        has_title: flag("has_title", true),
        has_content: flag("has_content", false),
        contains_selection: flag("contains_selection", false),
        attribute_names: attributes.iter().map(|(n, _)| n.as_str()).collect(),
        attributes: attributes
            .iter()
            .filter(|(n, v)| !v.is_null() && plan.element_attributes.contains(n))
            .map(|(n, v)| (n.as_str(), v))
            .collect(),
        title_matches: titles.iter().map(String::as_str).collect(),
        inside: shape.iter().map(|(r, s)| (*r, s.as_deref())).collect(),
        secure_elsewhere,
    }
}

/// `Text, subrole secure, focused, attribute `author`, …` and how far it
/// is from the plainest element (for the simplest example of a change).
fn label(
    role: Role,
    subrole: Option<&str>,
    on: &[&str],
    attributes: &[(String, Json)],
    titles: &str,
    has_titles: bool,
    shape: &[Ancestor],
) -> (usize, String) {
    let mut parts = vec![role.as_str().to_string()];
    let mut distance = 0;
    if let Some(s) = subrole {
        parts.push(format!("subrole {s}"));
        distance += 1;
    }
    for flag in on {
        parts.push(
            match *flag {
                "visible" => "invisible",
                "has_title" => "without a title",
                "has_content" => "with content",
                "contains_selection" => "with the selection inside",
                other => other,
            }
            .to_string(),
        );
        distance += 1;
    }
    for (name, value) in attributes {
        distance += 1;
        match value {
            Json::Null => parts.push(format!("attribute `{name}`")),
            Json::String(s) => parts.push(format!("attribute `{name}` = `{s}`")),
            other => parts.push(format!("attribute `{name}` = `{other}`")),
        }
    }
    if has_titles {
        parts.push(format!("title matches {titles}"));
        distance += 1;
    }
    let plain = [Role::Group, Role::Window, Role::Application];
    let is_plain = shape.len() == 3
        && shape
            .iter()
            .zip(plain)
            .all(|((r, s), p)| *r == p && s.is_none());
    if !is_plain {
        distance += 1;
        if shape.is_empty() {
            parts.push("no ancestors".to_string());
        } else {
            let chain: Vec<String> = shape
                .iter()
                .map(|(r, s)| match s {
                    Some(s) => format!("{r} ({s})"),
                    None => r.to_string(),
                })
                .collect();
            parts.push(format!("inside {}", chain.join(" < ")));
        }
    }
    (distance, parts.join(", "))
}

/// The decision as a reader sees it, with the priority when the two
/// differ; and whether NEW sends more: a class that sends more, an
/// attribute OLD stripped that NEW sends on an element NEW sends, or a
/// higher priority on an element the scope decides (under a budget, NEW
/// may send it where OLD cut it).
fn compare(da: &Decision, db: &Decision) -> Option<(String, String, bool)> {
    let ((ta, ca), (tb, cb)) = (outcome_text(da), outcome_text(db));
    let mut ta = format!("{ta}{}", super::doc::strips(da));
    let mut tb = format!("{tb}{}", super::doc::strips(db));
    if ta == tb && da.priority == db.priority {
        return None;
    }
    if da.priority != db.priority {
        ta += &format!(" · priority {}", da.priority);
        tb += &format!(" · priority {}", db.priority);
    }
    let unstripped = da.strip.iter().any(|n| !db.strip.contains(n));
    let sent = class_level(cb) >= class_level("scope");
    let more = class_level(cb) > class_level(ca)
        || (unstripped && sent)
        || (db.priority > da.priority && sent && cb != "keep");
    Some((ta, tb, more))
}

/// The changes of a request's plan: scope, budget, redactions and title
/// patterns by content, declared attributes.
fn plan_changes(label: &str, a: &RequestPlan, b: &RequestPlan, out: &mut Vec<Change>) {
    let mut change = |kind, old: String, new: String, sends_more| {
        out.push(Change {
            action: label.to_string(),
            kind,
            element: None,
            inputs: 1,
            old,
            new,
            sends_more,
        })
    };
    if a.scope != b.scope {
        change(
            "scope",
            scope_word(a.scope),
            scope_word(b.scope),
            scope_level(b.scope) > scope_level(a.scope),
        );
    }
    if a.budget != b.budget {
        change(
            "budget",
            budget_text(a.budget),
            budget_text(b.budget),
            budget_more(a.budget, b.budget),
        );
    }
    // By content; a pattern or replacement changed under the same id is a
    // removal and an addition.
    let entries = |p: &RequestPlan| -> Vec<(String, String)> {
        p.redact
            .iter()
            .map(|r| {
                (
                    r.id.clone(),
                    format!(
                        "{}\u{0}{}\u{0}{}{}{}",
                        r.regex.as_str(),
                        r.replace,
                        r.luhn,
                        r.mod97,
                        r.assigned
                    ),
                )
            })
            .collect()
    };
    let (ra, rb) = (entries(a), entries(b));
    let removed: Vec<&str> = ra
        .iter()
        .filter(|e| !rb.contains(e))
        .map(|(id, _)| id.as_str())
        .collect();
    let added: Vec<&str> = rb
        .iter()
        .filter(|e| !ra.contains(e))
        .map(|(id, _)| id.as_str())
        .collect();
    let list = |names: &[&str]| {
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    };
    if !removed.is_empty() || !added.is_empty() {
        change(
            "redact",
            format!("removed: {}", list(&removed)),
            format!("added: {}", list(&added)),
            !removed.is_empty(),
        );
    }
    // Title patterns by name and content: what they do to elements is the
    // elements' changes (a rule keyed on a renamed pattern no longer fires).
    let patterns = |p: &RequestPlan| -> Vec<(String, String)> {
        p.title_patterns
            .iter()
            .map(|(n, r)| (n.clone(), r.as_str().to_string()))
            .collect()
    };
    let (pa, pb) = (patterns(a), patterns(b));
    let removed: Vec<&str> = pa
        .iter()
        .filter(|e| !pb.contains(e))
        .map(|(n, _)| n.as_str())
        .collect();
    let added: Vec<&str> = pb
        .iter()
        .filter(|e| !pa.contains(e))
        .map(|(n, _)| n.as_str())
        .collect();
    if !removed.is_empty() || !added.is_empty() {
        change(
            "title_patterns",
            format!("removed or changed: {}", list(&removed)),
            format!("added or changed: {}", list(&added)),
            false,
        );
    }
    if a.element_attributes != b.element_attributes {
        change(
            "element_attributes",
            a.element_attributes.join(", "),
            b.element_attributes.join(", "),
            false,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn policy(source: &str) -> Policy {
        Policy::from_sources(vec![(
            "p.rego".to_string(),
            format!("package ctxgate\n{source}"),
        )])
        .unwrap()
    }

    fn report(old: &str, new: &str) -> DiffReport {
        diff_policies(&policy(old), &policy(new)).unwrap()
    }

    fn whys(report: &DiffReport) -> Vec<String> {
        report.undecided.iter().map(|u| u.why.clone()).collect()
    }

    #[test]
    fn what_cannot_be_enumerated_is_undecided_by_rule() {
        for (rule, why) in [
            (
                "priority := 10 if input.element.attributes.level > 3",
                "it orders `input.element.attributes.level` against a number",
            ),
            (
                "deny contains \"x\" if count(input.element.attribute_names) > 2",
                "it compares `count(input.element.attribute_names)` with a count other than 0",
            ),
            (
                "deny contains \"x\" if walk(input, [_, _])",
                "it calls `walk`",
            ),
            (
                "deny contains \"x\" if data.other.flag",
                "it reads `data.other.flag`, data not from the input",
            ),
            (
                "deny contains \"x\" if input.element.role == input.element.subrole",
                "it reads `input.element.subrole` in a way the diff cannot enumerate",
            ),
            (
                "deny contains \"x\" if sprintf(\"%s\", [input.element.role]) == \"Text\"",
                "it calls `sprintf` on a value read from the input",
            ),
        ] {
            let source = format!("element_attributes := {{\"level\"}}\n{rule}\n");
            let r = report("", &source);
            assert!(
                whys(&r).iter().any(|w| w == why),
                "{rule}: {:?}",
                r.undecided
            );
            assert!(
                r.undecided.iter().all(|u| u.place == "p.rego:3"),
                "{:?}",
                r.undecided
            );
        }
        // Literals, sets of them, substring tests and counts are enumerable.
        let r = report(
            "",
            "deny contains \"x\" if {\n\tsome w in {\"a\", \"b\"}\n\tcontains(lower(input.element.subrole), w)\n\tcount(input.inside) > 2\n\tinput.action.name in {\"focus\", \"summarize\"}\n}\n",
        );
        assert!(r.undecided.is_empty(), "{:?}", r.undecided);
        assert!(!r.sends_more() && !r.changes.is_empty());
    }

    #[test]
    fn the_same_sources_change_nothing_and_a_narrowing_sends_nothing_more() {
        let r = report(
            "deny contains \"x\" if input.element.focused\n",
            "deny contains \"x\" if input.element.focused\n",
        );
        assert!(r.same_sources && r.changes.is_empty());
        let r = report("", "deny contains \"x\" if input.element.focused\n");
        assert!(!r.sends_more() && !r.changes.is_empty(), "{:?}", r.changes);
        assert!(r.changes.iter().all(|c| c.new.starts_with("deny (x)")));
    }

    #[test]
    fn a_strip_that_reads_no_attribute_name_is_explored_on_an_element_with_it() {
        let r = report(
            "strip contains \"author\" if input.action.name == \"app\"\n",
            "",
        );
        let c = r
            .changes
            .iter()
            .find(|c| c.action == "app")
            .unwrap_or_else(|| panic!("{:?}", r.changes));
        assert_eq!(
            (c.element.as_deref(), &*c.old, &*c.new, c.sends_more),
            (
                Some("Text, attribute `author`"),
                "scope, strips author",
                "scope",
                true
            )
        );
        // A rule keyed on a value read: the element with a value is one of
        // those explored, and so is the head's own table key.
        let r = report(
            "element_attributes := {\"kind\"}\nlevels[\"a\"] := 1\ndeny contains \"x\" if { input.element.attributes.kind == \"secret\"; levels.a == 1 }\n",
            "element_attributes := {\"kind\"}\n",
        );
        assert!(r.undecided.is_empty(), "{:?}", r.undecided);
        assert!(r.changes.iter().any(|c| c.element.as_deref()
            == Some("Text, attribute `kind` = `secret`")
            && c.sends_more));
    }

    #[test]
    fn a_space_too_large_is_undecided_with_its_size() {
        // Each literal in a test of its own is a class of its own: 61
        // subroles, 61 values of each of two attributes, and three states.
        let mut source = String::from("element_attributes := {\"a\", \"b\"}\n");
        for k in 0..60 {
            for field in ["subrole", "attributes.a", "attributes.b"] {
                source += &format!("deny contains \"x\" if input.element.{field} == \"w{k}\"\n");
            }
        }
        source += "keep contains \"k\" if { input.element.focused; input.element.selected; input.element.hovered }\n";
        let r = report("", &source);
        assert!(
            whys(&r)
                .iter()
                .any(|w| w.contains("inputs to explore, more than the limit of 1000000")),
            "{:?}",
            r.undecided
        );
        assert!(r.explored.inputs == 0 && r.explored.subroles == 62);
    }

    const ROLES: [&str; 5] = ["Text", "Row", "Window", "Cell", "Link"];

    /// The conditions of one generated rule.
    #[derive(Debug, Clone)]
    struct Cond {
        subrole: Option<&'static str>,
        flag: Option<&'static str>,
        private: bool,
        in_window: bool,
    }

    fn cond() -> impl Strategy<Value = Cond> {
        (
            proptest::option::of(prop_oneof![Just("chat"), Just("comment")]),
            proptest::option::of(prop_oneof![
                Just("focused"),
                Just("selected"),
                Just("hovered")
            ]),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(subrole, flag, private, in_window)| Cond {
                subrole,
                flag,
                private,
                in_window,
            })
    }

    fn rule(head: &str, role: &str, c: &Cond) -> String {
        let mut body = vec![format!("input.element.role == \"{role}\"")];
        if let Some(s) = c.subrole {
            body.push(format!("input.element.subrole == \"{s}\""));
        }
        if let Some(f) = c.flag {
            body.push(format!("input.element.{f}"));
        }
        if c.private {
            body.push("input.element.attributes.privacy == \"private\"".to_string());
        }
        if c.in_window {
            body.push("some a in input.inside".to_string());
            body.push("a.role == \"Window\"".to_string());
        }
        format!("{head} if {{\n\t{}\n}}\n", body.join("\n\t"))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::tests::cases(16, 4) as u32))]

        /// Evaluating each rule only on what it reads finds what
        /// evaluating every rule on the whole element finds: the same
        /// changes, examples and counts, on generated pairs whose rules read
        /// each field, through helper rules too.
        #[test]
        fn per_rule_exploration_is_whole_exploration(
            old in proptest::collection::vec((0usize..5, cond(), 0usize..4), 1..4),
            new in proptest::collection::vec((0usize..5, cond(), 0usize..4), 1..4),
        ) {
            let source = |rules: &[(usize, Cond, usize)]| {
                let mut out = String::from("element_attributes := {\"privacy\"}\n");
                for (k, (role, c, head)) in rules.iter().enumerate() {
                    let head = match head {
                        0 => format!("deny contains \"r{k}\""),
                        1 => format!("keep contains \"r{k}\""),
                        2 => format!("helper{k}"),
                        _ => format!("prune contains \"r{k}\""),
                    };
                    out += &rule(&head, ROLES[*role], c);
                    if head.starts_with("helper") {
                        out += &format!("mask contains \"h{k}\" if {{ helper{k}; not input.element.hovered }}\n");
                        out += &format!("priority := 7 if helper{k}\n");
                    }
                }
                out
            };
            let (a, b) = (policy(&source(&old)), policy(&source(&new)));
            let (x, y) = (diff_with(&a, &b, true).unwrap(), diff_with(&a, &b, false).unwrap());
            let key = |r: &DiffReport| -> Vec<(String, Option<String>, String, String, bool, u64)> {
                r.changes
                    .iter()
                    .map(|c| (c.action.clone(), c.element.clone(), c.old.clone(), c.new.clone(), c.sends_more, c.inputs))
                    .collect()
            };
            prop_assert_eq!(key(&x), key(&y));
            prop_assert_eq!(x.explored.inputs, y.explored.inputs);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// NEW = OLD plus one rule that widens (a `keep` on a role no
        /// `deny` names, or one `deny` removed): the diff says NEW sends
        /// more, and decides every rule.
        #[test]
        fn a_widening_rule_is_found(
            denies in proptest::collection::vec(cond(), 1..4),
            keep in cond(),
            remove in any::<bool>(),
            pick in 0usize..4,
        ) {
            let mut old = String::from("element_attributes := {\"privacy\"}\n");
            let rules: Vec<String> = denies
                .iter()
                .enumerate()
                .map(|(k, c)| rule(&format!("deny contains \"d{k}\""), ROLES[k], c))
                .collect();
            for r in &rules {
                old += r;
            }
            let new = if remove {
                let gone = pick % rules.len();
                let mut new = String::from("element_attributes := {\"privacy\"}\n");
                for (k, r) in rules.iter().enumerate() {
                    if k != gone {
                        new += r;
                    }
                }
                new
            } else {
                format!("{old}{}", rule("keep contains \"k\"", ROLES[4], &keep))
            };
            let r = report(&old, &new);
            prop_assert!(r.undecided.is_empty(), "{:?}", r.undecided);
            prop_assert!(r.sends_more(), "{old}\n---\n{new}\n{:?}", r.changes);
        }
    }
}
