//! What each element's fate is before the budget: the policy's decisions
//! with their precedence (deny > mask > keep > prune/scope), the scope of
//! the action, and the order in which the rest fills the budget.

use std::sync::Arc;

use foldhash::{HashMap, HashMapExt};

use crate::error::{Error, Result};
use crate::model::{NodeId, Role, Tree};
use crate::policy::{Decision, Floor, Scope};

/// Why an element is or is not sent, before the budget.
#[derive(Debug, Clone, PartialEq)]
pub enum Fate {
    /// Denied by a rule: never sent, nor anything inside.
    Denied(Arc<str>),
    /// Inside a denied element.
    InsideDenied(Arc<str>),
    /// Masked by a rule (or the floor): sent as a placeholder at most.
    Masked(Arc<str>),
    /// Inside a masked element: never sent.
    InsideMasked(Arc<str>),
    /// Kept by a rule: sent even under budget pressure.
    Kept(Arc<str>),
    /// Pruned by a rule (here or above): not sent unless something inside is kept.
    Pruned(Arc<str>),
    /// Outside the action's scope: not sent unless something inside is kept.
    OutOfScope,
    /// A candidate: sent if the budget allows.
    Candidate,
}

/// The rule label a report and a notice use for a decision.
pub fn label(kind: &str, reason: &str) -> String {
    if Floor::of_reason(reason).is_some() {
        reason.to_string()
    } else {
        format!("{kind}:{reason}")
    }
}

/// The selection stage's result.
pub struct Selection {
    /// One per node.
    pub fates: Vec<Fate>,
    /// Nodes that must be sent (kept, kept masks), in fill order.
    pub mandatory: Vec<NodeId>,
    /// Candidates (and masked candidates) in fill order.
    pub candidates: Vec<NodeId>,
    /// Why each element is not sent, should it not be: a rule label,
    /// `scope`, or `budget`.
    pub unsent: Vec<Arc<str>>,
    /// Every rule of each element's own decision, labelled, in precedence
    /// order (deny, mask, keep, prune; sorted within each): elements of one
    /// projection share one list.
    pub own: Vec<Arc<[Arc<str>]>>,
    /// Whether each element is inside the action's scope.
    pub in_scope: Vec<bool>,
}

/// What a decision says of its own elements, labelled for reports and
/// notices: the fate a deny, mask or keep gives, the prune rule, and every
/// rule that matched.
struct Labelled {
    fate: Option<Fate>,
    /// A masked element that a keep rule also names is sent (as a placeholder).
    kept_mask: bool,
    prune: Option<Arc<str>>,
    /// Every label, in precedence order.
    all: Arc<[Arc<str>]>,
}

impl Labelled {
    fn of(decision: &Decision) -> Labelled {
        let labels = |kind: &str, reasons: &[Arc<str>]| -> Vec<Arc<str>> {
            reasons.iter().map(|r| Arc::from(label(kind, r))).collect()
        };
        let deny = labels("deny", &decision.deny);
        let mask = labels("mask", &decision.mask);
        let keep = labels("keep", &decision.keep);
        let prune = labels("prune", &decision.prune);
        let fate = if let Some(rule) = deny.first() {
            Some(Fate::Denied(rule.clone()))
        } else if let Some(rule) = mask
            .iter()
            .zip(&decision.mask)
            .find(|(_, r)| Floor::of_reason(r).is_none())
            .map(|(rule, _)| rule)
            .or(mask.first())
        {
            // The policy's own rule names the mask; the floor only when the
            // policy did not mask.
            Some(Fate::Masked(rule.clone()))
        } else {
            keep.first().map(|rule| Fate::Kept(rule.clone()))
        };
        Labelled {
            kept_mask: matches!(fate, Some(Fate::Masked(_))) && !keep.is_empty(),
            fate,
            prune: prune.first().cloned(),
            all: deny
                .into_iter()
                .chain(mask)
                .chain(keep)
                .chain(prune)
                .collect(),
        }
    }
}

/// Computes fates, scope and fill order.
pub fn select(
    tree: &Tree<'_, '_>,
    decisions: &[Arc<Decision>],
    scope: Scope,
    target: Option<&str>,
) -> Result<Selection> {
    let n = tree.len();
    let in_scope = scope_of(tree, scope, target)?;
    let mut fates: Vec<Fate> = Vec::with_capacity(n);
    let mut pruned_by: Vec<Option<Arc<str>>> = Vec::with_capacity(n);
    let mut kept_masks = vec![false; n];
    let mut own_labels: Vec<Arc<[Arc<str>]>> = Vec::with_capacity(n);
    // Elements of one projection share their decision (one `Arc`): label
    // each decision once, not once per element.
    let mut labelled: HashMap<*const Decision, Labelled> = HashMap::new();
    for (at, node) in tree.nodes().iter().enumerate() {
        let decision = &decisions[at];
        let own = labelled
            .entry(Arc::as_ptr(decision))
            .or_insert_with(|| Labelled::of(decision));
        let parent = node.parent.map(|p| p as usize);
        let inherited = parent.and_then(|p| match &fates[p] {
            Fate::Denied(r) | Fate::InsideDenied(r) => Some(Fate::InsideDenied(r.clone())),
            Fate::Masked(r) | Fate::InsideMasked(r) => Some(Fate::InsideMasked(r.clone())),
            _ => None,
        });
        let prune = own
            .prune
            .clone()
            .or_else(|| parent.and_then(|p| pruned_by[p].clone()));
        let fate = if let Some(fate) = inherited {
            fate
        } else if let Some(fate) = &own.fate {
            kept_masks[at] = own.kept_mask;
            fate.clone()
        } else if let Some(reason) = &prune {
            Fate::Pruned(reason.clone())
        } else if !in_scope[at] {
            Fate::OutOfScope
        } else {
            Fate::Candidate
        };
        fates.push(fate);
        pruned_by.push(prune);
        own_labels.push(own.all.clone());
    }

    let rings = rings(tree);
    let at_user = position(tree) as usize;
    let order_key = |id: &NodeId| {
        let at = *id as usize;
        let ring = rings[at];
        (
            std::cmp::Reverse(OrderedPriority(score(decisions[at].priority, ring))),
            ring,
            at.abs_diff(at_user),
            *id,
        )
    };
    let mut mandatory: Vec<NodeId> = Vec::new();
    let mut candidates: Vec<NodeId> = Vec::new();
    for (at, fate) in fates.iter().enumerate() {
        let id = at as NodeId;
        match fate {
            Fate::Kept(_) => mandatory.push(id),
            Fate::Masked(_) if kept_masks[at] => mandatory.push(id),
            Fate::Masked(_) if in_scope[at] && pruned_by[at].is_none() => candidates.push(id),
            Fate::Candidate => candidates.push(id),
            _ => {}
        }
    }
    mandatory.sort_by_key(order_key);
    candidates.sort_by_key(order_key);
    let budget: Arc<str> = Arc::from("budget");
    let scope: Arc<str> = Arc::from("scope");
    let unsent = fates
        .iter()
        .enumerate()
        .map(|(at, fate)| match fate {
            Fate::Denied(r) | Fate::InsideDenied(r) | Fate::InsideMasked(r) | Fate::Pruned(r) => {
                r.clone()
            }
            Fate::Masked(_) | Fate::Kept(_) | Fate::Candidate => match &pruned_by[at] {
                _ if kept_masks[at] || matches!(fate, Fate::Kept(_)) => budget.clone(),
                Some(prune) => prune.clone(),
                None if !in_scope[at] => scope.clone(),
                None => budget.clone(),
            },
            Fate::OutOfScope => scope.clone(),
        })
        .collect();
    Ok(Selection {
        fates,
        mandatory,
        candidates,
        unsent,
        own: own_labels,
        in_scope,
    })
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
fn scope_of(tree: &Tree<'_, '_>, scope: Scope, target: Option<&str>) -> Result<Vec<bool>> {
    let n = tree.len();
    let mut in_scope = vec![false; n];
    let subtree = |root: NodeId, in_scope: &mut Vec<bool>| {
        let end = tree.node(root).end;
        for flag in &mut in_scope[root as usize..end as usize] {
            *flag = true;
        }
    };
    if let Some(target) = target {
        let Some(at) = tree.nodes().iter().position(|n| n.element.id == target) else {
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
                .find(|&c| tree.node(c).focused)
                .or_else(|| {
                    tree.children(0)
                        .find(|&c| tree.node(c).role() == Role::Window && tree.node(c).visible)
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
                if node.selected {
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
pub fn position(tree: &Tree<'_, '_>) -> NodeId {
    tree.focus()
        .or_else(|| {
            tree.nodes()
                .iter()
                .position(|n| n.selected)
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
    let priority = if priority.is_nan() { 0.0 } else { priority };
    priority - RING_WEIGHT * (1.0 + f64::from(ring)).log2()
}

/// How near each element is to the user's position P, in rings, in one
/// pass. With `a` the deepest element of P's path (P and its ancestors)
/// above or at an element, `k` how many levels `a` is above P and `h` how
/// many levels the element is below `a`:
/// - ring 0: P's siblings (`k = 1, h = 1`);
/// - ring 1: P's children (`k = 0, h = 1`);
/// - ring k: the other children of the path's elements, the k-th ancestor's
///   (`h = 1, k ≥ 2`);
/// - ring k + h: the rest, by tree distance (`h ≥ 2`);
/// - the path itself: 0.
pub fn rings(tree: &Tree<'_, '_>) -> Vec<u32> {
    let at = position(tree);
    let mut on_path = vec![false; tree.len()];
    on_path[at as usize] = true;
    for a in tree.ancestors(at) {
        on_path[a as usize] = true;
    }
    let depth_at = tree.node(at).depth;
    // The depth of the deepest ancestor shared with the position.
    let mut shared: Vec<u32> = Vec::with_capacity(tree.len());
    for (i, node) in tree.nodes().iter().enumerate() {
        let s = if on_path[i] {
            node.depth
        } else {
            node.parent.map_or(0, |p| shared[p as usize])
        };
        shared.push(s);
    }
    tree.nodes()
        .iter()
        .zip(&shared)
        .enumerate()
        .map(|(i, (node, &s))| {
            if on_path[i] {
                return 0;
            }
            // An element off the path shares an ancestor above it, so
            // h ≥ 1; P's depth is at least the shared one.
            let h = node.depth.saturating_sub(s);
            let k = depth_at.saturating_sub(s);
            match (k, h) {
                (1, 1) => 0,
                (0, 1) => 1,
                (k, 1) => k,
                (k, h) => k + h,
            }
        })
        .collect()
}
