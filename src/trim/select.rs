//! What each element's fate is before the budget: the policy's decisions
//! with their precedence (deny > mask > keep > prune/scope), the scope of
//! the action, and the order in which the rest fills the budget.

use std::sync::Arc;

use foldhash::{HashMap, HashMapExt};

use crate::error::{Error, Result};
use crate::floor::Floor;
use crate::model::doc::Doc;
use crate::model::{NodeId, Role};
use crate::policy::{Decision, Scope};

/// A rule label's place in [`Selection`]'s list of labels: one per
/// distinct label, so that equal labels have equal places.
pub type Label = u32;

/// Why an element is or is not sent, before the budget (8 bytes: the rule
/// is a [`Label`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fate {
    /// Denied by a rule: never sent, nor anything inside.
    Denied(Label),
    /// Inside a denied element.
    InsideDenied(Label),
    /// Masked by a rule (or the floor): sent as a placeholder at most.
    Masked(Label),
    /// Inside a masked element: never sent.
    InsideMasked(Label),
    /// Kept by a rule: sent even under budget pressure.
    Kept(Label),
    /// Pruned by a rule (here or above): not sent unless something inside is kept.
    Pruned(Label),
    /// Outside the action's scope: not sent unless something inside is kept.
    OutOfScope,
    /// A candidate: sent if the budget allows.
    Candidate,
}

const _: () = assert!(std::mem::size_of::<Fate>() == 8);

/// The rule label a report and a notice use for a decision.
pub fn label(kind: &str, reason: &str) -> String {
    if Floor::of_reason(reason).is_some() {
        reason.to_string()
    } else {
        format!("{kind}:{reason}")
    }
}

/// The distinct labels of one selection, each once.
#[derive(Default)]
struct Labels {
    list: Vec<Arc<str>>,
    places: HashMap<Arc<str>, Label>,
}

impl Labels {
    /// `budget` and `scope` first, at [`BUDGET`] and [`SCOPE`].
    fn new() -> Labels {
        let mut labels = Labels::default();
        labels.place("budget");
        labels.place("scope");
        labels
    }

    fn place(&mut self, label: &str) -> Label {
        if let Some(&at) = self.places.get(label) {
            return at;
        }
        let label: Arc<str> = Arc::from(label);
        let at = self.list.len() as Label;
        self.list.push(label.clone());
        self.places.insert(label, at);
        at
    }
}

/// `budget`'s place.
const BUDGET: Label = 0;
/// `scope`'s place.
const SCOPE: Label = 1;

/// No label: a `u32` field's absence.
const NO_LABEL: Label = Label::MAX;

/// The selection stage's result.
pub struct Selection {
    /// One per node.
    pub fates: Vec<Fate>,
    /// Nodes that must be sent (kept, kept masks), in the static order.
    pub mandatory: Vec<NodeId>,
    /// Candidates (and masked candidates): in fill order when `ordered`,
    /// else in the static order ([`fill_order_of`] gives the fill order,
    /// which only a budget that binds reads).
    pub candidates: Vec<NodeId>,
    /// Whether `candidates` are in fill order: a selection of more than
    /// [`LAZY_ORDER_MOST`] candidates, ordered while selected.
    pub ordered: bool,
    /// Per element, why it is not sent, should it not be: a rule label,
    /// `scope`, or `budget` ([`Selection::unsent`]).
    unsent: Vec<Label>,
    /// Per element, its decision's labels' place in `lists`
    /// ([`Selection::own`]).
    own: Vec<u32>,
    /// Every rule of each decision, labelled, in precedence order (deny,
    /// mask, keep, prune; sorted within each): one list per decision.
    lists: Vec<Arc<[Arc<str>]>>,
    /// The labels the fates and `unsent` name.
    labels: Vec<Arc<str>>,
    /// Whether each element is inside the action's scope.
    pub in_scope: Vec<bool>,
    /// The attributes `strip` removes from an element sent whole or cut:
    /// the names of its decision's `strip` that it has, only for the
    /// elements with one (most have none), in document order
    /// ([`Selection::stripped`]).
    stripped: Vec<(NodeId, Box<[Arc<str>]>)>,
}

impl Selection {
    /// The attributes `strip` removes from `at`, when it removes any.
    pub fn stripped(&self, at: NodeId) -> Option<&[Arc<str>]> {
        let i = self
            .stripped
            .binary_search_by_key(&at, |(id, _)| *id)
            .ok()?;
        Some(&self.stripped[i].1)
    }

    /// The label at `at` (a fate's rule).
    pub fn label(&self, at: Label) -> &Arc<str> {
        &self.labels[at as usize]
    }

    /// Why element `at` is not sent, should it not be.
    pub fn unsent(&self, at: NodeId) -> &Arc<str> {
        self.label(self.unsent[at as usize])
    }

    /// Whether two elements are left unsent for the same reason.
    pub fn same_unsent(&self, a: NodeId, b: NodeId) -> bool {
        self.unsent[a as usize] == self.unsent[b as usize]
    }

    /// Every rule of element `at`'s own decision, labelled, in precedence
    /// order.
    pub fn own(&self, at: NodeId) -> &Arc<[Arc<str>]> {
        &self.lists[self.own[at as usize] as usize]
    }
}

/// What a decision says of its own elements, labelled for reports and
/// notices: the fate a deny, mask or keep gives, the prune rule, and every
/// rule that matched.
struct Labelled {
    fate: Option<Fate>,
    /// A masked element that a keep rule also names is sent (as a placeholder).
    kept_mask: bool,
    /// The prune rule, or [`NO_LABEL`].
    prune: Label,
    /// Every label, in precedence order: its place in the selection's
    /// lists.
    all: u32,
}

impl Labelled {
    fn of(decision: &Decision, labels: &mut Labels, lists: &mut Vec<Arc<[Arc<str>]>>) -> Labelled {
        let mut all: Vec<Arc<str>> = Vec::new();
        let mut labelled = |kind: &str, reasons: &[Arc<str>]| -> Vec<Label> {
            reasons
                .iter()
                .map(|r| {
                    let at = labels.place(&label(kind, r));
                    all.push(labels.list[at as usize].clone());
                    at
                })
                .collect()
        };
        let deny = labelled("deny", &decision.deny);
        let mask = labelled("mask", &decision.mask);
        let keep = labelled("keep", &decision.keep);
        let prune = labelled("prune", &decision.prune);
        let fate = if let Some(&rule) = deny.first() {
            Some(Fate::Denied(rule))
        } else if let Some(&rule) = mask
            .iter()
            .zip(&decision.mask)
            .find(|(_, r)| Floor::of_reason(r).is_none())
            .map(|(rule, _)| rule)
            .or(mask.first())
        {
            // The policy's own rule names the mask; the floor only when the
            // policy did not mask.
            Some(Fate::Masked(rule))
        } else {
            keep.first().map(|&rule| Fate::Kept(rule))
        };
        lists.push(all.into());
        Labelled {
            kept_mask: matches!(fate, Some(Fate::Masked(_))) && !keep.is_empty(),
            fate,
            prune: prune.first().copied().unwrap_or(NO_LABEL),
            all: lists.len() as u32 - 1,
        }
    }
}

/// Computes fates, scope and fill order.
pub fn select(
    tree: &Doc<'_>,
    decisions: &[Arc<Decision>],
    scope: Scope,
    target: Option<&str>,
) -> Result<Selection> {
    let n = tree.len();
    let in_scope = scope_of(tree, scope, target)?;
    let mut fates: Vec<Fate> = Vec::with_capacity(n);
    let mut pruned_by: Vec<Label> = Vec::with_capacity(n);
    let mut kept_masks = vec![false; n];
    let mut own: Vec<u32> = Vec::with_capacity(n);
    let mut labels = Labels::new();
    let mut lists: Vec<Arc<[Arc<str>]>> = Vec::new();
    // Elements of one projection share their decision (one `Arc`): label
    // each decision once, not once per element.
    let mut labelled: HashMap<*const Decision, Labelled> = HashMap::new();
    for (at, node) in tree.nodes().iter().enumerate() {
        let decision = &decisions[at];
        let mine = labelled
            .entry(Arc::as_ptr(decision))
            .or_insert_with(|| Labelled::of(decision, &mut labels, &mut lists));
        let parent = node.parent().map(|p| p as usize);
        let inherited = parent.and_then(|p| match fates[p] {
            Fate::Denied(r) | Fate::InsideDenied(r) => Some(Fate::InsideDenied(r)),
            Fate::Masked(r) | Fate::InsideMasked(r) => Some(Fate::InsideMasked(r)),
            _ => None,
        });
        let prune = match mine.prune {
            NO_LABEL => parent.map_or(NO_LABEL, |p| pruned_by[p]),
            rule => rule,
        };
        let fate = if let Some(fate) = inherited {
            fate
        } else if let Some(fate) = mine.fate {
            kept_masks[at] = mine.kept_mask;
            fate
        } else if prune != NO_LABEL {
            Fate::Pruned(prune)
        } else if !in_scope[at] {
            Fate::OutOfScope
        } else {
            Fate::Candidate
        };
        fates.push(fate);
        pruned_by.push(prune);
        own.push(mine.all);
    }
    drop(labelled);

    let near = nearness(tree);
    let at_user = position(tree) as usize;
    let mut mandatory: Vec<NodeId> = Vec::new();
    let mut candidates: Vec<NodeId> = Vec::new();
    for (at, fate) in fates.iter().enumerate() {
        let id = at as NodeId;
        match fate {
            Fate::Kept(_) => mandatory.push(id),
            Fate::Masked(_) if kept_masks[at] => mandatory.push(id),
            Fate::Masked(_) if in_scope[at] && pruned_by[at] == NO_LABEL => candidates.push(id),
            Fate::Candidate => candidates.push(id),
            _ => {}
        }
    }
    sort_by_static_key(&mut mandatory, decisions, &near, at_user);
    sort_by_static_key(&mut candidates, decisions, &near, at_user);
    // A large selection is put in fill order now, with `near` at hand; a
    // small one only if a budget binds ([`fill_order_of`]).
    let ordered = candidates.len() > LAZY_ORDER_MOST;
    if ordered {
        candidates = fill_order(tree, decisions, &near, &mandatory, candidates);
    }
    drop(near);
    let unsent = fates
        .iter()
        .zip(pruned_by)
        .enumerate()
        .map(|(at, (&fate, prune))| match fate {
            Fate::Denied(r) | Fate::InsideDenied(r) | Fate::InsideMasked(r) | Fate::Pruned(r) => r,
            Fate::Masked(_) | Fate::Kept(_) | Fate::Candidate => match prune {
                _ if kept_masks[at] || matches!(fate, Fate::Kept(_)) => BUDGET,
                NO_LABEL if !in_scope[at] => SCOPE,
                NO_LABEL => BUDGET,
                prune => prune,
            },
            Fate::OutOfScope => SCOPE,
        })
        .collect();
    let stripped = stripped(tree, decisions);
    Ok(Selection {
        fates,
        mandatory,
        candidates,
        unsent,
        own,
        lists,
        labels: labels.list,
        in_scope,
        stripped,
        ordered,
    })
}

/// The static fill order's key (every level unsent), best first: score,
/// ring, document distance from the user's position, id.
type StaticKey = (std::cmp::Reverse<OrderedPriority>, u32, usize, NodeId);

/// The static fill order's key (every level unsent): best first.
fn static_key(decisions: &[Arc<Decision>], near: &[Near], at_user: usize, id: NodeId) -> StaticKey {
    let at = id as usize;
    let ring = near[at].ring();
    (
        std::cmp::Reverse(OrderedPriority(score(decisions[at].priority, ring))),
        ring,
        at.abs_diff(at_user),
        id,
    )
}

/// Sorts `ids`, in document order, into the order of [`static_key`]
/// without comparing whole keys: the candidates are grouped by score and
/// ring (a policy gives few priorities and a tree few rings: a few dozen
/// groups), the groups sorted, and each group, in document order, merged
/// outward from the user's position, nearest first and at equal distance
/// the one before it (the smaller id), as the key's last two fields order
/// them. Linear in the candidates but for the groups' sort: a sort by key
/// of 59,000 candidates was 138 M instructions, a comparison sort of their
/// keys computed once 36 M.
fn sort_by_static_key(
    ids: &mut [NodeId],
    decisions: &[Arc<Decision>],
    near: &[Near],
    at_user: usize,
) {
    debug_assert!(ids.windows(2).all(|w| w[0] < w[1]), "in document order");
    // Per candidate, its group: the key's first two fields.
    let mut groups: HashMap<(u64, u32), u32> = HashMap::new();
    let mut keys: Vec<(u64, u32)> = Vec::new();
    let member: Vec<u32> = ids
        .iter()
        .map(|&id| {
            let (std::cmp::Reverse(OrderedPriority(score)), ring, ..) =
                static_key(decisions, near, at_user, id);
            let key = (descending(score), ring);
            *groups.entry(key).or_insert_with(|| {
                keys.push(key);
                keys.len() as u32 - 1
            })
        })
        .collect();
    // The groups best first, and where each one's members begin.
    let mut by_key: Vec<u32> = (0..keys.len() as u32).collect();
    by_key.sort_unstable_by_key(|&g| keys[g as usize]);
    let mut sizes = vec![0usize; keys.len()];
    for &g in &member {
        sizes[g as usize] += 1;
    }
    let mut starts = vec![0usize; keys.len()];
    let mut next = 0;
    for &g in &by_key {
        starts[g as usize] = next;
        next += sizes[g as usize];
    }
    // Each group's members in document order, the groups in their order.
    let mut grouped = vec![0 as NodeId; ids.len()];
    let mut fill = starts.clone();
    for (&id, &g) in ids.iter().zip(&member) {
        grouped[fill[g as usize]] = id;
        fill[g as usize] += 1;
    }
    // Each group merged outward from the user's position.
    let mut out = 0;
    for &g in &by_key {
        let group = &grouped[starts[g as usize]..starts[g as usize] + sizes[g as usize]];
        let split = group.partition_point(|&id| (id as usize) <= at_user);
        let (mut before, mut after) = (split, split);
        while before > 0 || after < group.len() {
            let take_before = match (before.checked_sub(1), group.get(after)) {
                (Some(b), Some(&a)) => at_user - group[b] as usize <= a as usize - at_user,
                (Some(_), None) => true,
                _ => false,
            };
            ids[out] = match take_before {
                true => {
                    before -= 1;
                    group[before]
                }
                false => {
                    after += 1;
                    group[after - 1]
                }
            };
            out += 1;
        }
    }
}

/// A score as an integer that falls as [`OrderedPriority`] orders scores
/// up (NaN as 0, then `total_cmp`): best first.
fn descending(score: f64) -> u64 {
    let score = if score.is_nan() { 0.0 } else { score };
    let bits = score.to_bits();
    // `total_cmp`'s order as unsigned integers: negatives flipped whole,
    // positives above them.
    let ascending = match bits >> 63 {
        1 => !bits,
        _ => bits | 1 << 63,
    };
    !ascending
}

/// Per element, the names in its decision's `strip` that it has.
fn stripped(tree: &Doc<'_>, decisions: &[Arc<Decision>]) -> Vec<(NodeId, Box<[Arc<str>]>)> {
    let mut out = Vec::new();
    for (at, attributes) in tree.all_attributes() {
        let strip = &decisions[at as usize].strip;
        if strip.is_empty() {
            continue;
        }
        let names: Box<[Arc<str>]> = strip
            .iter()
            .filter(|name| attributes.get(name).is_some())
            .cloned()
            .collect();
        if !names.is_empty() {
            out.push((at, names));
        }
    }
    out.shrink_to_fit();
    out
}

/// Total order on scores (NaN sorts as 0).
#[derive(Debug, Clone, Copy, PartialEq)]
struct OrderedPriority(f64);

impl Eq for OrderedPriority {}

impl PartialOrd for OrderedPriority {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for OrderedPriority {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let a = if self.0.is_nan() { 0.0 } else { self.0 };
        let b = if other.0.is_nan() { 0.0 } else { other.0 };
        a.total_cmp(&b)
    }
}

/// Which elements the action's scope covers.
fn scope_of(tree: &Doc<'_>, scope: Scope, target: Option<&str>) -> Result<Vec<bool>> {
    let n = tree.len();
    let mut in_scope = vec![false; n];
    let subtree = |root: NodeId, in_scope: &mut Vec<bool>| {
        let end = tree.node(root).end;
        for flag in &mut in_scope[root as usize..end as usize] {
            *flag = true;
        }
    };
    if let Some(target) = target {
        let Some(at) = (0..tree.len() as NodeId).position(|at| tree.el(at).id() == target) else {
            return Err(Error::UnknownTarget {
                id: target.to_string(),
            });
        };
        subtree(at as NodeId, &mut in_scope);
        return Ok(in_scope);
    }
    let focus = tree.focus();
    match scope {
        Scope::App => subtree(0, &mut in_scope),
        Scope::Window => {
            let window = tree
                .children(0)
                .find(|&c| tree.node(c).focused())
                .or_else(|| {
                    tree.children(0)
                        .find(|&c| tree.node(c).role() == Role::Window && tree.node(c).visible())
                });
            if let Some(window) = window {
                subtree(window, &mut in_scope);
            }
        }
        Scope::Focus => {
            if let Some(focus) = focus {
                subtree(focus, &mut in_scope);
                for a in tree.ancestors(focus) {
                    in_scope[a as usize] = true;
                }
            }
        }
        Scope::Selection => {
            for (at, node) in tree.nodes().iter().enumerate() {
                if node.selected() {
                    subtree(at as NodeId, &mut in_scope);
                }
            }
            if let Some(focus) = focus {
                in_scope[focus as usize] = true;
                for a in tree.ancestors(focus) {
                    in_scope[a as usize] = true;
                }
            }
        }
    }
    Ok(in_scope)
}

/// The user's position: the end of the focus path, else the first selected
/// element, else the root.
pub fn position(tree: &Doc<'_>) -> NodeId {
    tree.focus()
        .or_else(|| {
            tree.nodes()
                .iter()
                .position(|n| n.selected())
                .map(|p| p as NodeId)
        })
        .unwrap_or(0)
}

/// Score points a candidate loses each time its ring plus one doubles
/// ([`rings`]): `priority − RING_WEIGHT × log2(1 + ring)`.
pub const RING_WEIGHT: f64 = 20.0;

/// The fill order's score: the policy's priority (NaN as 0) less
/// [`RING_WEIGHT`] per doubling of `1 + ring`: siblings (ring 0) lose
/// nothing, P's children 20, ring 3 40, ring 7 60, ring 15 80.
fn score(priority: f64, ring: u32) -> f64 {
    // `log2(1 + ring)` of the small rings from a table (the same values):
    // a sort computes each key many times.
    static LOG2: std::sync::OnceLock<Vec<f64>> = std::sync::OnceLock::new();
    let table = LOG2.get_or_init(|| {
        (0..LOG2_TABLE)
            .map(|r| (1.0 + f64::from(r)).log2())
            .collect()
    });
    match table.get(ring as usize) {
        Some(&log2) => {
            let priority = if priority.is_nan() { 0.0 } else { priority };
            priority - RING_WEIGHT * log2
        }
        None => score_f(priority, f64::from(ring)),
    }
}

/// Rings whose `log2(1 + ring)` [`score`] keeps in a table.
const LOG2_TABLE: u32 = 1024;

fn score_f(priority: f64, ring: f64) -> f64 {
    let priority = if priority.is_nan() { 0.0 } else { priority };
    priority - RING_WEIGHT * (1.0 + ring).log2()
}

/// Where an element is from the user's position P: with `a` the deepest
/// element of P's path (P and its ancestors) above or at it, `k` how many
/// levels `a` is above P and `h` how many levels the element is below `a`
/// (0 on the path).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Near {
    /// Levels `a` is above P.
    pub k: u32,
    /// Levels the element is below `a`.
    pub h: u32,
}

impl Near {
    /// The ring with nothing but the path sent: [`Near::ring_with`] with
    /// every level between `a` and the element still to send.
    pub fn ring(self) -> u32 {
        self.ring_with(f64::from(self.h.saturating_sub(1))) as u32
    }

    /// The ring, in one of these cases:
    /// - 0: the path itself, and P's siblings (`k = 1, h = 1`);
    /// - 1: P's children (`k = 0, h = 1`);
    /// - k: the other children of the path's elements, the k-th ancestor's
    ///   (`h = 1, k ≥ 2`);
    /// - k + 1 + m: the rest (`h ≥ 2`), where `m` is how many of the
    ///   `h − 1` elements between `a` and it are not sent yet (sent by what
    ///   the policy keeps or by a candidate earlier in the fill order). With
    ///   none of them sent this is the tree distance `k + h`; each one sent
    ///   brings it a ring nearer, as it costs one skeleton less.
    pub fn ring_with(self, unsent_between: f64) -> f64 {
        match (self.k, self.h) {
            (_, 0) => 0.0,
            (1, 1) => 0.0,
            (0, 1) => 1.0,
            (k, 1) => f64::from(k),
            (k, h) => f64::from(k) + 1.0 + unsent_between.min(f64::from(h - 1)),
        }
    }
}

/// How near each element is to the user's position P ([`Near`]), in one
/// pass.
pub fn nearness(tree: &Doc<'_>) -> Vec<Near> {
    let at = position(tree);
    let mut on_path = vec![false; tree.len()];
    on_path[at as usize] = true;
    for a in tree.ancestors(at) {
        on_path[a as usize] = true;
    }
    let depth_at = tree.node(at).depth;
    // The depth `s` of the deepest ancestor an element shares with the
    // position is its own on the path, else its parent's: the parent's
    // depth less its `h` (0 on the path), so no second array holds it.
    let mut near: Vec<Near> = Vec::with_capacity(tree.len());
    for (i, node) in tree.nodes().iter().enumerate() {
        let next = if on_path[i] {
            Near { k: 0, h: 0 }
        } else {
            let p = node.parent();
            let s = p.map_or(0, |p| tree.node(p).depth - near[p as usize].h);
            // An element off the path shares an ancestor above it, so
            // h ≥ 1; P's depth is at least the shared one.
            Near {
                k: depth_at.saturating_sub(s),
                h: node.depth.saturating_sub(s),
            }
        };
        near.push(next);
    }
    near
}

/// At most this many candidates (the first of the static order) are
/// ordered with the levels already sent counted ([`fill_order`]); the rest
/// follow in the static order, so that the work stays bounded on a tree of
/// a million candidates (the budgets this is for send far fewer).
pub const DYNAMIC_ORDER: usize = 4096;

/// Candidates up to which the fill order is made only when a budget binds:
/// a larger selection is ordered while selected, so that its decisions
/// are not held through the fill (8 MB at 1M elements).
pub const LAZY_ORDER_MOST: usize = 1 << 14;

/// The selection's candidates in fill order ([`fill_order`]).
pub fn fill_order_of(
    tree: &Doc<'_>,
    decisions: &[Arc<Decision>],
    selection: &Selection,
) -> Vec<NodeId> {
    if selection.ordered {
        return selection.candidates.clone();
    }
    let near = nearness(tree);
    fill_order(
        tree,
        decisions,
        &near,
        &selection.mandatory,
        selection.candidates.clone(),
    )
}

/// One whole level in the fixed point of [`fill_order`]'s shares.
const SHARE_ONE: u64 = 1 << 32;

/// The largest ring (`k + h`) of a front candidate for which [`fill_order`]
/// orders by classes: below it two rings a fixed-point share apart
/// (2^-32) have `log2(1 + ring)` more than 40 ulps apart, so the score
/// falls strictly as the ring grows, as the classes assume. The default
/// `max_depth` (1,024) keeps every ring below it; a deeper tree is ordered
/// by [`fill_order_rescoring`].
const CLASS_RING_LIMIT: u64 = 4096;

/// The fill order: greedily, the best candidate by [`score`] next, its ring
/// counting only the levels between the path and it that are not sent yet
/// ([`Near::ring_with`]): once one heading is in, the others under the same
/// skeletons cost less and move up. `sorted` is the candidates in the
/// static order (every level unsent). The same order as
/// [`fill_order_rescoring`] (a test compares them), with work in
/// proportion to the levels sent rather than to the candidates below them.
///
/// How: the front candidates whose ring can change (`h ≥ 2`) are split in
/// classes of one priority and one `k` (the ancestors they share with the
/// user's path). Within a class the score falls as the share of unsent
/// levels `m` grows, so a class's best is its least `(m, levels, distance
/// from P, id)`; a level sent takes the same share off every member of its
/// class below it (the share is per priority, and the level's `k` is
/// theirs): one range update of a segment tree over the class's members in
/// document order. A heap holds each class's best under the full key (and
/// the static candidates, `h ≤ 1`, in a list of their own).
fn fill_order(
    tree: &Doc<'_>,
    decisions: &[Arc<Decision>],
    near: &[Near],
    mandatory: &[NodeId],
    sorted: Vec<NodeId>,
) -> Vec<NodeId> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let front = sorted.len().min(DYNAMIC_ORDER);
    if front < 2 {
        return sorted;
    }
    if sorted[..front].iter().any(|&id| {
        let n = near[id as usize];
        u64::from(n.k) + u64::from(n.h) > CLASS_RING_LIMIT
    }) {
        return fill_order_rescoring(tree, decisions, near, mandatory, sorted);
    }
    let at_user = position(tree) as usize;
    let sent = initially_sent(tree, mandatory);
    let priority = |id: NodeId| {
        let p = decisions[id as usize].priority;
        if p.is_nan() { 0.0f64 } else { p }.to_bits()
    };
    let full_key = |id: NodeId, m: u64, levels: u32| {
        let at = id as usize;
        let ring = near[at].ring_with(m as f64 / SHARE_ONE as f64);
        (
            OrderedPriority(score_f(decisions[at].priority, ring)),
            Reverse(OrderedPriority(ring)),
            Reverse(levels),
            Reverse(at.abs_diff(at_user)),
            Reverse(id),
        )
    };
    // The classes, each with its members in document order.
    let mut class_of: HashMap<(u64, u32), usize> = HashMap::new();
    let mut classes: Vec<Class> = Vec::new();
    let mut by_k: HashMap<u32, Vec<usize>> = HashMap::new();
    let mut fixed: Vec<NodeId> = Vec::new();
    for &id in &sorted[..front] {
        let n = near[id as usize];
        if n.h < 2 {
            fixed.push(id);
            continue;
        }
        let c = *class_of.entry((priority(id), n.k)).or_insert_with(|| {
            by_k.entry(n.k).or_default().push(classes.len());
            classes.push(Class::default());
            classes.len() - 1
        });
        classes[c].ids.push(id);
    }
    // The static candidates' keys never change: best first.
    // Each key once (a score is a logarithm); keys differ by id.
    fixed.sort_by_cached_key(|&id| Reverse(full_key(id, 0, 0)));
    for class in &mut classes {
        class.ids.sort_unstable();
        // Each member's unsent levels, and their shares: the unsent levels
        // are its nearest ancestors (the sent ones are closed upwards), up
        // to the path; each is shared by the class's members below it.
        // Walked once per level, nearest the root first.
        let mut levels: Vec<NodeId> = Vec::new();
        let mut seen: HashMap<NodeId, (u64, u32)> = HashMap::new();
        for &id in &class.ids {
            let n = near[id as usize].h.saturating_sub(1) as usize;
            for a in tree.ancestors(id).take(n) {
                if sent[a as usize] || seen.insert(a, (0, 0)).is_some() {
                    break;
                }
                levels.push(a);
            }
        }
        levels.sort_unstable();
        for &a in &levels {
            let share = SHARE_ONE / class.count_below(tree, a) as u64;
            let up = tree.node(a).parent().and_then(|p| seen.get(&p).copied());
            let (m, n) = up.unwrap_or((0, 0));
            seen.insert(a, (m + share, n + 1));
        }
        let leaves: Vec<Leaf> = class
            .ids
            .iter()
            .map(|&id| {
                let parent = tree.node(id).parent();
                let (m, levels) = parent.and_then(|p| seen.get(&p).copied()).unwrap_or((0, 0));
                Leaf {
                    m,
                    levels,
                    distance: (id as usize).abs_diff(at_user),
                    id,
                }
            })
            .collect();
        class.tree = Segments::new(&leaves);
    }
    // Each class's best (and the static list's), by the full key; an
    // entry is stale once its class's version moved on.
    const FIXED: usize = usize::MAX;
    let mut versions = vec![0u32; classes.len()];
    let mut heap = BinaryHeap::new();
    for (c, class) in classes.iter().enumerate() {
        if let Some(best) = class.tree.best() {
            heap.push((full_key(best.id, best.m, best.levels), c, 0));
        }
    }
    let mut next_fixed = 0;
    if let Some(&id) = fixed.first() {
        heap.push((full_key(id, 0, 0), FIXED, 0));
    }
    let mut sent = sent;
    let mut order = Vec::with_capacity(sorted.len());
    let mut newly = Vec::new();
    while let Some((key, c, version)) = heap.pop() {
        let id = key.4 .0;
        if c == FIXED {
            next_fixed += 1;
            if let Some(&next) = fixed.get(next_fixed) {
                heap.push((full_key(next, 0, 0), FIXED, 0));
            }
        } else {
            if version != versions[c] {
                continue;
            }
            let at = classes[c].position(id);
            classes[c].tree.take(at);
            versions[c] += 1;
            if let Some(best) = classes[c].tree.best() {
                heap.push((full_key(best.id, best.m, best.levels), c, versions[c]));
            }
        }
        order.push(id);
        send(tree, &mut sent, id, &mut newly);
        for &a in &newly {
            let n = near[a as usize];
            // A level on the path is between no candidate and the path.
            if n.h == 0 {
                continue;
            }
            for &c in by_k.get(&n.k).map_or(&[][..], Vec::as_slice) {
                let class = &mut classes[c];
                let (lo, hi) = class.range_below(tree, a);
                if lo == hi {
                    continue;
                }
                let share = SHARE_ONE / (hi - lo) as u64;
                class.tree.lower(lo, hi, share);
                versions[c] += 1;
                if let Some(best) = class.tree.best() {
                    heap.push((full_key(best.id, best.m, best.levels), c, versions[c]));
                }
            }
        }
    }
    order.extend_from_slice(&sorted[front..]);
    order
}

/// Marks `id` and its unsent ancestors sent (`sent` is closed upwards),
/// the ones it marks in `newly`.
fn send(tree: &Doc<'_>, sent: &mut [bool], id: NodeId, newly: &mut Vec<NodeId>) {
    newly.clear();
    if !sent[id as usize] {
        sent[id as usize] = true;
        newly.push(id);
    }
    for a in tree.ancestors(id) {
        if sent[a as usize] {
            break;
        }
        sent[a as usize] = true;
        newly.push(a);
    }
}

/// What is sent whatever the budget: the root, the kept elements and
/// their ancestors (closed upwards).
fn initially_sent(tree: &Doc<'_>, mandatory: &[NodeId]) -> Vec<bool> {
    let mut sent = vec![false; tree.len()];
    sent[0] = true;
    for &id in mandatory {
        sent[id as usize] = true;
        for a in tree.ancestors(id) {
            if sent[a as usize] {
                break;
            }
            sent[a as usize] = true;
        }
    }
    sent
}

/// One class of [`fill_order`]: front candidates of one priority and one
/// `k`, in document order, and their keys.
#[derive(Default)]
struct Class {
    ids: Vec<NodeId>,
    tree: Segments,
}

impl Class {
    /// The members strictly inside `a`'s subtree, as a range of positions.
    fn range_below(&self, tree: &Doc<'_>, a: NodeId) -> (usize, usize) {
        let end = tree.node(a).end;
        let lo = self.ids.partition_point(|&id| id <= a);
        let hi = self.ids.partition_point(|&id| id < end);
        (lo, hi.max(lo))
    }

    fn count_below(&self, tree: &Doc<'_>, a: NodeId) -> usize {
        let (lo, hi) = self.range_below(tree, a);
        hi - lo
    }

    fn position(&self, id: NodeId) -> usize {
        self.ids.partition_point(|&x| x < id)
    }
}

/// A class member's key: least first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Leaf {
    /// Shares of its unsent levels (fixed point).
    m: u64,
    /// Its unsent levels.
    levels: u32,
    distance: usize,
    id: NodeId,
}

/// Taken, or no member: above every key.
const NO_LEAF: Leaf = Leaf {
    m: u64::MAX,
    levels: u32::MAX,
    distance: usize::MAX,
    id: NodeId::MAX,
};

/// A segment tree of [`Leaf`] keys: the least, taking one, and lowering
/// `m` by a share and `levels` by one across a range (which keeps the
/// range's order, so each node's least stays its least).
#[derive(Default)]
struct Segments {
    len: usize,
    least: Vec<Leaf>,
    /// Pending (share, levels) for the children of each node.
    pending: Vec<(u64, u32)>,
}

impl Segments {
    fn new(leaves: &[Leaf]) -> Segments {
        let len = leaves.len();
        let mut s = Segments {
            len,
            least: vec![NO_LEAF; 4 * len.max(1)],
            pending: vec![(0, 0); 4 * len.max(1)],
        };
        if len > 0 {
            s.build(1, 0, len, leaves);
        }
        s
    }

    fn build(&mut self, node: usize, lo: usize, hi: usize, leaves: &[Leaf]) {
        if hi - lo == 1 {
            self.least[node] = leaves[lo];
            return;
        }
        let mid = (lo + hi) / 2;
        self.build(2 * node, lo, mid, leaves);
        self.build(2 * node + 1, mid, hi, leaves);
        self.least[node] = self.least[2 * node].min(self.least[2 * node + 1]);
    }

    fn best(&self) -> Option<Leaf> {
        let best = *self.least.get(1)?;
        (best != NO_LEAF).then_some(best)
    }

    fn apply(&mut self, node: usize, (share, levels): (u64, u32)) {
        let least = &mut self.least[node];
        // A taken leaf (or a node of taken leaves only) stays taken.
        if *least != NO_LEAF {
            least.m -= share;
            least.levels -= levels;
        }
        let pending = &mut self.pending[node];
        pending.0 += share;
        pending.1 += levels;
    }

    fn push(&mut self, node: usize) {
        let pending = std::mem::take(&mut self.pending[node]);
        if pending != (0, 0) {
            self.apply(2 * node, pending);
            self.apply(2 * node + 1, pending);
        }
    }

    /// Lowers the positions `lo..hi` by `share` and one level.
    fn lower(&mut self, lo: usize, hi: usize, share: u64) {
        self.lower_in(1, 0, self.len, lo, hi, share);
    }

    fn lower_in(&mut self, node: usize, l: usize, r: usize, lo: usize, hi: usize, share: u64) {
        if hi <= l || r <= lo {
            return;
        }
        if lo <= l && r <= hi {
            self.apply(node, (share, 1));
            return;
        }
        self.push(node);
        let mid = (l + r) / 2;
        self.lower_in(2 * node, l, mid, lo, hi, share);
        self.lower_in(2 * node + 1, mid, r, lo, hi, share);
        self.least[node] = self.least[2 * node].min(self.least[2 * node + 1]);
    }

    /// Takes the member at `at` out.
    fn take(&mut self, at: usize) {
        let (mut node, mut l, mut r) = (1, 0, self.len);
        let mut path = Vec::new();
        while r - l > 1 {
            self.push(node);
            path.push(node);
            let mid = (l + r) / 2;
            if at < mid {
                (node, r) = (2 * node, mid);
            } else {
                (node, l) = (2 * node + 1, mid);
            }
        }
        self.least[node] = NO_LEAF;
        for &node in path.iter().rev() {
            self.least[node] = self.least[2 * node].min(self.least[2 * node + 1]);
        }
    }
}

/// [`fill_order`] by re-scoring: scores only rise as elements are sent,
/// so each candidate is re-scored (a fresh heap entry) each time one of
/// its levels is sent: the work is the front's size times its depth. For
/// rings past [`CLASS_RING_LIMIT`], and the reference the tests compare
/// [`fill_order`] with.
fn fill_order_rescoring(
    tree: &Doc<'_>,
    decisions: &[Arc<Decision>],
    near: &[Near],
    mandatory: &[NodeId],
    sorted: Vec<NodeId>,
) -> Vec<NodeId> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let front = sorted.len().min(DYNAMIC_ORDER);
    if front < 2 {
        return sorted;
    }
    let at_user = position(tree) as usize;
    let mut sent = initially_sent(tree, mandatory);
    // Per front candidate, its unsent levels between `a` and it, each
    // shared by the front candidates of the same priority below it (each
    // counts 1/n of it, in fixed point: sums exact in any order); per such
    // level, the front candidates below it.
    let priority = |id: NodeId| {
        let p = decisions[id as usize].priority;
        if p.is_nan() { 0.0f64 } else { p }.to_bits()
    };
    let between = |id: NodeId| {
        let levels = near[id as usize].h.saturating_sub(1) as usize;
        tree.ancestors(id).take(levels)
    };
    let mut sharing: HashMap<(NodeId, u64), u64> = HashMap::new();
    let mut below: HashMap<NodeId, Vec<u32>> = HashMap::new();
    for (i, &id) in sorted[..front].iter().enumerate() {
        for a in between(id).filter(|&a| !sent[a as usize]) {
            *sharing.entry((a, priority(id))).or_default() += 1;
            below.entry(a).or_default().push(i as u32);
        }
    }
    let share = |a: NodeId, id: NodeId| SHARE_ONE / sharing[&(a, priority(id))];
    // (shares of the unsent levels, unsent levels) per front candidate.
    let mut unsent: Vec<(u64, u32)> = sorted[..front]
        .iter()
        .map(|&id| {
            between(id)
                .filter(|&a| !sent[a as usize])
                .fold((0, 0), |(m, n), a| (m + share(a, id), n + 1))
        })
        .collect();
    // Score, then ring, then fewer unsent levels, then nearer P in
    // document order, then the earlier; last the entry's version.
    let key = |i: usize, (m, levels): (u64, u32), version: u32| {
        let id = sorted[i];
        let at = id as usize;
        let ring = near[at].ring_with(m as f64 / SHARE_ONE as f64);
        (
            OrderedPriority(score_f(decisions[at].priority, ring)),
            Reverse(OrderedPriority(ring)),
            Reverse(levels),
            Reverse(at.abs_diff(at_user)),
            Reverse(id),
            version,
        )
    };
    let mut version = vec![0u32; front];
    let mut heap: BinaryHeap<_> = (0..front).map(|i| (key(i, unsent[i], 0), i)).collect();
    let mut taken = vec![false; front];
    let mut order = Vec::with_capacity(sorted.len());
    let mut newly = Vec::new();
    while let Some((k, i)) = heap.pop() {
        // A stale entry: the candidate was taken, or re-scored since.
        if taken[i] || k.5 != version[i] {
            continue;
        }
        taken[i] = true;
        let id = sorted[i];
        order.push(id);
        send(tree, &mut sent, id, &mut newly);
        for &a in &newly {
            for &j in below.get(&a).map_or(&[][..], Vec::as_slice) {
                let j = j as usize;
                if !taken[j] {
                    let (m, n) = unsent[j];
                    unsent[j] = (m - share(a, sorted[j]), n - 1);
                    version[j] += 1;
                    heap.push((key(j, unsent[j], version[j]), j));
                }
            }
        }
    }
    order.extend_from_slice(&sorted[front..]);
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::Limits;

    /// The user on `p` (kept with its path); two headings under one
    /// group `g1`, two levels down, and one under its own chain `c1`/`c2`,
    /// nearer P in document order. Every heading has the same priority.
    const TREE: &str = r#"{"protocol":"0.2.0","instance":"i","root":{"id":"app","role":"Application","children":[
        {"id":"w","role":"Window","focused":true,"children":[
            {"id":"c1","role":"Group","children":[{"id":"c2","role":"Group","children":[
                {"id":"h0","role":"Heading","title":"alone"}]}]},
            {"id":"p","role":"Row","focused":true},
            {"id":"g1","role":"Group","children":[
                {"id":"g2","role":"Group","children":[{"id":"h1","role":"Heading","title":"one"}]},
                {"id":"g3","role":"Group","children":[{"id":"h2","role":"Heading","title":"two"}]}]}]}]}}"#;

    fn order() -> Vec<String> {
        let answer = crate::read_conforming(TREE.as_bytes(), &Limits::default()).unwrap();
        let tree = crate::model::doc::Doc::from_answer(&answer, "");
        let decisions: Vec<Arc<Decision>> = tree
            .nodes()
            .iter()
            .map(|node| {
                let mut d = Decision::default();
                if node.focused() {
                    d.keep = vec![Arc::from("focus-path")];
                }
                if node.role() == Role::Heading {
                    d.priority = 100.0;
                }
                Arc::new(d)
            })
            .collect();
        let selection = select(&tree, &decisions, Scope::Window, None).unwrap();
        fill_order_of(&tree, &decisions, &selection)
            .iter()
            .map(|&id| tree.el(id).id().to_string())
            .collect()
    }

    #[test]
    fn the_static_order_by_groups_is_the_order_by_key() {
        let priorities = [
            0.0,
            -0.0,
            30.0,
            -10.0,
            -1e300,
            1e300,
            f64::NAN,
            -f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            // A priority whose score at ring 1 another's at ring 0 equals.
            110.0,
            90.0,
        ];
        let mut checked = 0;
        for seed in 0..40u64 {
            let random = |at: u64, salt: u64| {
                (at ^ seed.wrapping_mul(0x9E37_79B9) ^ salt).wrapping_mul(0x2545_F491_4F6C_DD1D)
                    >> 33
            };
            let n = 1 + random(0, 1) as usize % 3000;
            let decisions: Vec<Arc<Decision>> = (0..n as u64)
                .map(|at| {
                    Arc::new(Decision {
                        priority: priorities[random(at, 2) as usize % priorities.len()],
                        ..Decision::default()
                    })
                })
                .collect();
            let near: Vec<Near> = (0..n as u64)
                .map(|at| Near {
                    k: random(at, 3) as u32 % 4,
                    h: random(at, 4) as u32 % 5,
                })
                .collect();
            let at_user = random(0, 5) as usize % n;
            let mut ids: Vec<NodeId> = (0..n as NodeId)
                .filter(|&id| random(u64::from(id), 6) % 4 != 0)
                .collect();
            let mut expected = ids.clone();
            expected.sort_by_key(|&id| static_key(&decisions, &near, at_user, id));
            sort_by_static_key(&mut ids, &decisions, &near, at_user);
            assert_eq!(ids, expected, "seed {seed}");
            checked += ids.len();
        }
        assert!(checked > 10_000);
    }

    #[test]
    fn a_score_from_the_table_is_the_score_computed() {
        for ring in 0..LOG2_TABLE + 8 {
            for priority in [0.0, 50.0, -3.5, 1e9, f64::NAN] {
                assert_eq!(
                    score(priority, ring).to_bits(),
                    score_f(priority, f64::from(ring)).to_bits(),
                    "{priority} {ring}"
                );
            }
        }
    }

    #[test]
    fn headings_under_a_shared_skeleton_come_first_and_pull_each_other_up() {
        // Statically h0 (ring k + h = 1 + 3, nearer in document order)
        // ties with h1 and h2 (ring 4) and goes first. Counted with what
        // they share, h1 and h2 each bring half of g1 and their own group:
        // ring 3.5, so h1 goes first; then h2 brings only g3 (ring 3),
        // before h0 (c1 and c2: ring 4).
        let order = order();
        let at = |id: &str| order.iter().position(|o| o == id).unwrap();
        assert!(at("h1") < at("h2"), "{order:?}");
        assert!(at("h2") < at("h0"), "{order:?}");
        // Every candidate is in the order once.
        let mut sorted = order.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), order.len());
        assert_eq!(order.len(), 8, "{order:?}");
    }

    /// A generated tree: wide levels, deep chains (some past the front of
    /// 4,096 candidates), a focus path to a random element; as JSON.
    fn generated(seed: u64, chains: usize, depth: usize, wide: usize) -> String {
        let mut gen = seed;
        let mut next = move || {
            gen ^= gen << 13;
            gen ^= gen >> 7;
            gen ^= gen << 17;
            gen
        };
        let roles = ["Group", "Heading", "Text", "Link", "Row", "Cell", "List"];
        let mut n = 0usize;
        let mut element = |role: &str, focused: bool, children: Vec<String>| {
            n += 1;
            format!(
                r#"{{"id":"e{n}","role":"{role}"{}{}}}"#,
                if focused { r#","focused":true"# } else { "" },
                if children.is_empty() {
                    String::new()
                } else {
                    format!(r#","children":[{}]"#, children.join(","))
                }
            )
        };
        // The focus: in chain `fc` at depth `fd` (none when past the chains).
        let fc = next() as usize % (chains + 2);
        let fd = next() as usize % depth.max(1);
        let mut kids = Vec::new();
        for c in 0..chains {
            // A chain with a few siblings hanging off each level.
            let mut below: Option<String> = None;
            let len = 1 + next() as usize % depth.max(1);
            for d in (0..len).rev() {
                let mut children: Vec<String> = below.take().into_iter().collect();
                for _ in 0..next() as usize % (wide + 1) {
                    let role = roles[next() as usize % roles.len()];
                    children.push(element(role, false, vec![]));
                }
                let role = roles[next() as usize % roles.len()];
                let focused = c == fc && d <= fd.min(len - 1);
                below = Some(element(role, focused, children));
            }
            kids.extend(below);
        }
        let window = element("Window", true, kids);
        format!(
            r#"{{"protocol":"0.2.0","instance":"g","root":{{"id":"app","role":"Application","children":[{window}]}}}}"#
        )
    }

    #[test]
    fn the_fill_order_by_classes_is_the_order_by_re_scoring() {
        let cases: Vec<(u64, usize, usize, usize)> = (1..40u64)
            .map(|s| {
                (
                    s * 0x9E37_79B9,
                    1 + s as usize % 7,
                    2 + (s as usize * 7) % 60,
                    s as usize % 4,
                )
            })
            .chain([(7, 19, 300, 0), (11, 12, 400, 1), (13, 3, 1000, 0)])
            .collect();
        let mut compared = 0;
        for (seed, chains, depth, wide) in cases {
            let json = generated(seed, chains, depth, wide);
            let answer = crate::read_conforming(json.as_bytes(), &Limits::default()).unwrap();
            let tree = crate::model::doc::Doc::from_answer(&answer, "");
            // Priorities from a few values (ties are common), some kept.
            let priorities = [0.0, 30.0, 40.0, 110.0, -10.0, f64::NAN, -0.0, 20.0];
            let decisions: Vec<Arc<Decision>> = (0..tree.len())
                .map(|at| {
                    let mut d = Decision::default();
                    let r = (at as u64 ^ seed).wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40;
                    d.priority = priorities[r as usize % priorities.len()];
                    if tree.node(at as NodeId).focused() || r % 37 == 0 {
                        d.keep = vec![Arc::from("k")];
                    }
                    Arc::new(d)
                })
                .collect();
            for scope in [Scope::App, Scope::Window, Scope::Focus] {
                let selection = select(&tree, &decisions, scope, None).unwrap();
                let near = nearness(&tree);
                let at_user = position(&tree) as usize;
                let mut sorted = selection.candidates.clone();
                sorted.sort_by_key(|&id| static_key(&decisions, &near, at_user, id));
                assert_eq!(selection.candidates, sorted, "seed {seed}, {scope:?}");
                let reference =
                    fill_order_rescoring(&tree, &decisions, &near, &selection.mandatory, sorted);
                let order = fill_order_of(&tree, &decisions, &selection);
                assert_eq!(order, reference, "seed {seed}, {scope:?}");
                compared += reference.len();
            }
        }
        assert!(compared > 20_000, "{compared}");
    }

    #[test]
    fn a_ring_counts_only_the_levels_not_yet_sent() {
        let near = Near { k: 3, h: 4 };
        assert_eq!(near.ring(), 7);
        assert_eq!(near.ring_with(3.0), 7.0);
        assert_eq!(near.ring_with(0.0), 4.0);
        assert_eq!(near.ring_with(9.0), 7.0);
        assert_eq!(Near { k: 1, h: 1 }.ring(), 0);
        assert_eq!(Near { k: 0, h: 1 }.ring(), 1);
        assert_eq!(Near { k: 5, h: 1 }.ring_with(0.0), 5.0);
        assert_eq!(Near { k: 0, h: 0 }.ring(), 0);
    }
}
