//! Trimming: applies a policy's decisions, the action's scope and a budget
//! to a tree, and produces the output answer, its rendering and the report.
//!
//! Stages: project each element and ask the policy ([`Decider`]); select
//! (fates, scope, fill order: `select`); fill the budget and build the
//! output (`fill`); report. Any error ends the request: nothing is sent.

mod fill;
pub mod report;
mod select;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use foldhash::{HashMap, HashMapExt};

use crate::deadline::{Deadline, Stage};
use crate::error::{Error, Result};
use crate::floor::Floor;
use crate::limits::Limits;
use crate::model::doc::Doc;
use crate::model::{Answer, NodeId, Role};
use crate::policy::{Action, Budget, Decision, ElementInput, Inside, RequestInput, RequestPlan};
use crate::render::{notice, Format};

pub use fill::Mode;
pub use report::{BudgetReport, ElementReport, Ignored, Outcome, Report};
pub use select::Fate;

/// One request: what the user's action is, and how the output is wanted.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Request {
    /// The action, with its optional target.
    pub action: Action,
    /// A budget; it can only make the policy's smaller.
    pub budget: Option<Budget>,
    /// The output format (the budget is measured on it).
    pub format: Format,
    /// How long the request may take, from when the gate receives it to the
    /// rendered output; `None`: [`crate::DEFAULT_TIMEOUT`]. Past it the
    /// request fails with [`Error::Deadline`] and nothing is sent.
    pub timeout: Option<Duration>,
}

impl Request {
    /// A request for `action`, no target, the policy's budget, JSON output.
    pub fn new(action: impl Into<String>) -> Request {
        Request {
            action: Action {
                name: action.into(),
                target: None,
            },
            budget: None,
            format: Format::Json,
            timeout: None,
        }
    }

    /// Sets the request's deadline, counted from when the gate receives it.
    pub fn timeout(mut self, timeout: Duration) -> Request {
        self.timeout = Some(timeout);
        self
    }

    /// The deadline that applies: the request's, or the default.
    pub(crate) fn deadline(&self) -> Deadline {
        Deadline::after(self.timeout.unwrap_or(crate::DEFAULT_TIMEOUT))
    }

    /// Names a target element.
    pub fn target(mut self, id: impl Into<String>) -> Request {
        self.action.target = Some(id.into());
        self
    }

    /// Sets the request's budget.
    pub fn budget(mut self, budget: Budget) -> Request {
        self.budget = Some(budget);
        self
    }

    /// Sets the output format.
    pub fn format(mut self, format: Format) -> Request {
        self.format = format;
        self
    }
}

/// What may be sent, and the account of it.
///
/// Built only by the library (`#[non_exhaustive]`): hosts read its fields.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Trimmed<'a> {
    /// The trimmed answer (conforms to 0.2.0); its strings borrow from the
    /// input's where they were sent unchanged.
    pub answer: Answer<'a>,
    /// Its rendering in the requested format: the bytes to send.
    pub rendered: String,
    /// What was sent, withheld and why.
    pub report: Report<'a>,
    /// Replacements per redaction pattern id for each sent element that
    /// had any, by its position in the input's document order (`ctxgate
    /// explain`'s per-element counts; the report has the totals).
    pub(crate) redacted: Vec<(NodeId, Redacted)>,
}

/// Replacements per redaction pattern id, the patterns with none left out.
pub(crate) type Redacted = Vec<(Arc<str>, usize)>;

impl Trimmed<'_> {
    /// The same result detached from the input it was trimmed from (the
    /// answer's strings and the report's ids its own), for a host that keeps
    /// it after the input is gone (an audit log, another task).
    /// Iterative, as [`Answer::into_owned`] is.
    pub fn into_owned(self) -> Trimmed<'static> {
        Trimmed {
            answer: self.answer.into_owned(),
            rendered: self.rendered,
            report: self.report.into_owned(),
            redacted: self.redacted,
        }
    }
}

pub use crate::policy::Decider;

/// The request input the policy sees for `answer` and `request` (the
/// root's title is not part of it; see [`RequestInput`]).
#[cfg(any(test, feature = "internals"))]
pub fn request_input(answer: &Answer<'_>, request: &Request) -> RequestInput {
    request_input_of(&answer.protocol, &answer.instance, request)
}

/// [`request_input`] of an answer's protocol and instance.
pub(crate) fn request_input_of(protocol: &str, instance: &str, request: &Request) -> RequestInput {
    RequestInput {
        action: request.action.clone(),
        instance: instance.to_owned(),
        protocol: protocol.to_owned(),
    }
}

/// Trims a conforming answer with a plan and a decider. Checks the answer
/// first: a non-conforming one is rejected, whatever its origin.
#[cfg(test)]
pub fn trim_with<'a>(
    answer: &Answer<'a>,
    request: &Request,
    plan: &RequestPlan,
    decider: &mut dyn Decider,
    policy_hash: &str,
    limits: &Limits,
) -> Result<Trimmed<'a>> {
    let deadline = request.deadline();
    crate::check::require_conforming(answer)?;
    deadline.check(Stage::Check)?;
    trim_checked(
        answer,
        request,
        plan,
        decider,
        policy_hash,
        limits,
        &deadline,
        Counts::Exact,
    )
}

/// What the report's budgets count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Counts {
    /// Every budget's `used`, exactly (what the library reports).
    Exact,
    /// A token budget the output cannot exceed (no more bytes than its
    /// limit) is not counted: its `used` is the output's bytes, an upper
    /// bound. For callers that never show the report (`ctxgate trim`
    /// without `--report` or `--json`), so a byte budget loads no token
    /// vocabulary. Nor are the report's per-element lines
    /// ([`Report::decisions`]) built: at 1M elements they are ~140 MB.
    #[cfg_attr(
        not(any(feature = "cli", test)),
        allow(dead_code, reason = "only the CLI asks for it")
    )]
    Binding,
}

/// [`trim_with`] for an answer already checked, within `deadline`.
#[cfg(test)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn trim_checked<'a>(
    answer: &Answer<'a>,
    request: &Request,
    plan: &RequestPlan,
    decider: &mut dyn Decider,
    policy_hash: &str,
    limits: &Limits,
    deadline: &Deadline,
    counts: Counts,
) -> Result<Trimmed<'a>> {
    let doc = Doc::from_answer(answer, "");
    trim_doc(
        &doc,
        request,
        plan,
        decider,
        policy_hash,
        limits,
        deadline,
        counts,
    )
}

/// [`trim_checked`] of an answer's [`Doc`].
#[allow(clippy::too_many_arguments)]
pub(crate) fn trim_doc<'a>(
    tree: &Doc<'a>,
    request: &Request,
    plan: &RequestPlan,
    decider: &mut dyn Decider,
    policy_hash: &str,
    limits: &Limits,
    deadline: &Deadline,
    counts: Counts,
) -> Result<Trimmed<'a>> {
    let span = tracing::info_span!("trim", elements = tree.len(), action = %request.action.name);
    let _enter = span.enter();

    let decisions = {
        let _decide = tracing::debug_span!("decide").entered();
        let decisions = decide_all(tree, plan, decider, limits.max_projections, deadline)?;
        tracing::debug!(evaluations = decider.evaluations(), "decided");
        decisions
    };

    let budgets = budgets(plan.budget, request.budget)?;
    let selection = {
        let _select = tracing::debug_span!("select").entered();
        let selection = select::select(
            tree,
            &decisions,
            plan.scope,
            request.action.target.as_deref(),
        )?;
        tracing::debug!(
            mandatory = selection.mandatory.len(),
            candidates = selection.candidates.len(),
            "selected"
        );
        selection
    };
    // The fill and the report read the selection alone, but for the fill
    // order of a small selection, made only if a budget binds: its
    // decisions go with it, dropped once it is made.
    let selected = &selection;
    let order = match selection.ordered {
        true => {
            drop(decisions);
            fill::Order::Made(selection.candidates.clone())
        }
        false => fill::Order::Later(move || select::fill_order_of(tree, &decisions, selected)),
    };

    let filled = {
        let _fill = tracing::debug_span!("fill", budgets = budgets.len()).entered();
        let filler = fill::Filler::new(
            tree,
            &selection,
            plan,
            request.format,
            budgets.iter().map(|b| b.0).collect(),
        )
        .within(*deadline);
        let filler = match counts {
            Counts::Exact => filler,
            Counts::Binding => filler.without_unbound_counts(),
        };
        let filled = filler.fill(order)?;
        tracing::debug!(
            probes = filled.probes,
            bytes = filled.rendered.len(),
            "filled"
        );
        filled
    };

    let report = report(
        tree,
        request,
        plan,
        &selection,
        &filled,
        &budgets,
        decider.evaluations(),
        policy_hash,
        counts == Counts::Exact,
    );
    tracing::info!(
        sent = filled.modes.iter().filter(|m| m.is_some()).count(),
        bytes = filled.rendered.len(),
        evaluations = report.evaluations,
        "trimmed"
    );
    let ids: Vec<Arc<str>> = plan.redact.iter().map(|r| Arc::from(&*r.id)).collect();
    let redacted = filled
        .redacted
        .into_iter()
        .map(|(at, counts)| {
            let counts = ids
                .iter()
                .zip(counts)
                .filter(|(_, n)| *n > 0)
                .map(|(id, n)| (id.clone(), n))
                .collect();
            (at, counts)
        })
        .collect();
    Ok(Trimmed {
        answer: filled.answer,
        rendered: filled.rendered,
        report,
        redacted,
    })
}

/// For the fitter's property tests, not a stable API: trims like
/// [`trim_with`] (without the conformance check) and says how many
/// candidates of the fill order were sent as the largest fitting prefix
/// (`None` when no prefix fit, the request failed, or no budget applied),
/// with (when `sizes`) the size in the first budget's unit of the
/// mandatory part plus the first k candidates with compact notices, for
/// every k, and of all of them with the notices sent when all fit (full
/// ones unless the input carries compact ones).
#[cfg(test)]
pub fn fill_prefixes(
    answer: &Answer<'_>,
    request: &Request,
    plan: &RequestPlan,
    decider: &mut dyn Decider,
    limits: &Limits,
    sizes: bool,
) -> Result<(Option<usize>, Vec<usize>, usize)> {
    let tree = Doc::from_answer(answer, "");
    let deadline = request.deadline();
    let decisions = decide_all(&tree, plan, decider, limits.max_projections, &deadline)?;
    let budgets: Vec<Budget> = budgets(plan.budget, request.budget)?
        .iter()
        .map(|b| b.0)
        .collect();
    let Some(&first) = budgets.first() else {
        return Ok((None, Vec::new(), 0));
    };
    let selection = select::select(
        &tree,
        &decisions,
        plan.scope,
        request.action.target.as_deref(),
    )?;
    let filler =
        |budgets: Vec<Budget>| fill::Filler::new(&tree, &selection, plan, request.format, budgets);
    let order = || select::fill_order_of(&tree, &decisions, &selection);
    let prefix = filler(budgets.clone())
        .fill(fill::Order::Later(order))
        .ok()
        .and_then(|f| f.prefix);
    let (sizes, whole) = match sizes {
        true => filler(budgets).prefix_sizes(first, order())?,
        false => (Vec::new(), 0),
    };
    Ok((prefix, sizes, whole))
}

/// The budgets that apply: the policy's, and the request's, which can only
/// make it smaller (in the same unit it replaces it if smaller; in another
/// unit both apply).
fn budgets(policy: Option<Budget>, request: Option<Budget>) -> Result<Vec<(Budget, &'static str)>> {
    for budget in [policy, request].into_iter().flatten() {
        if crate::tokens::limit(budget) == 0 {
            return Err(Error::ZeroBudget);
        }
    }
    Ok(match (policy, request) {
        (None, None) => vec![],
        (Some(p), None) => vec![(p, "policy")],
        (None, Some(r)) => vec![(r, "request")],
        (Some(Budget::Bytes(p)), Some(Budget::Bytes(r))) => {
            vec![if r < p {
                (Budget::Bytes(r), "request")
            } else {
                (Budget::Bytes(p), "policy")
            }]
        }
        (Some(Budget::Tokens(p)), Some(Budget::Tokens(r))) => {
            vec![if r < p {
                (Budget::Tokens(r), "request")
            } else {
                (Budget::Tokens(p), "policy")
            }]
        }
        (Some(p), Some(r)) => vec![(p, "policy"), (r, "request")],
    })
}

/// Asks the decider about every distinct projection, once, floor enforced
/// ([`crate::policy::decide`]). Within the request, projections are told
/// apart by [`ElementInput`] itself with the ancestors given by their
/// chain's id (derived equality over every field, so nothing the policy
/// sees can be missed), and a chain is built only for a projection not
/// seen before.
fn decide_all(
    tree: &Doc<'_>,
    plan: &RequestPlan,
    decider: &mut dyn Decider,
    max_projections: usize,
    deadline: &Deadline,
) -> Result<Vec<Arc<Decision>>> {
    // A selection inside an element the policy withholds is never sent, so
    // it must not make the policy keep that element's ancestors (trimming
    // the output again would not see it, and decide otherwise). Which
    // elements are withheld is known only once decided: decide again with
    // them as barriers until no new one appears (rarely more than twice;
    // projections already decided come from the caches).
    let mut withheld = vec![false; tree.len()];
    let mut round = 0;
    loop {
        let decisions = decide_round(tree, plan, decider, max_projections, deadline, &withheld)?;
        round += 1;
        let mut grew = false;
        // Each ancestor is looked at once a round: linear in the tree.
        let mut looked = vec![false; tree.len()];
        for node in tree.nodes().iter().filter(|n| n.selected()) {
            let mut above = node.parent();
            while let Some(p) = above {
                if std::mem::replace(&mut looked[p as usize], true) {
                    break;
                }
                let d = &decisions[p as usize];
                if !withheld[p as usize] && (!d.mask.is_empty() || !d.deny.is_empty()) {
                    withheld[p as usize] = true;
                    grew = true;
                }
                above = tree.node(p).parent();
            }
        }
        // Past the last round the decisions stand as they are: every mask
        // and deny in them is applied, only a kept ancestor may differ
        // from what a second trim decides.
        if !grew || round == MAX_SELECTION_ROUNDS {
            return Ok(decisions);
        }
    }
}

/// Rounds of [`decide_all`] at most (each adds at least one withheld
/// ancestor of a selected element).
const MAX_SELECTION_ROUNDS: usize = 4;

fn decide_round(
    tree: &Doc<'_>,
    plan: &RequestPlan,
    decider: &mut dyn Decider,
    max_projections: usize,
    deadline: &Deadline,
    withheld: &[bool],
) -> Result<Vec<Arc<Decision>>> {
    let mut projector = Projector::new(tree, plan, withheld);
    let mut seen: HashMap<ElementInput<'_, u32>, Arc<Decision>> = HashMap::new();
    let mut decisions = Vec::with_capacity(tree.len());
    for at in 0..tree.len() {
        deadline.every(at, Stage::Decide)?;
        let key = projector.key(at);
        if let Some(decision) = seen.get(&key) {
            decisions.push(decision.clone());
            continue;
        }
        // A projection not seen in this request: the policy may be asked.
        deadline.check(Stage::Decide)?;
        if seen.len() >= max_projections {
            return Err(Error::TooManyProjections {
                limit: max_projections,
            });
        }
        let input = projector.input(&key);
        let decision = crate::policy::decide(decider, &input)?;
        decisions.push(decision.clone());
        seen.insert(key, decision);
    }
    tracing::debug!(
        projections = seen.len(),
        contexts = projector.contexts.len(),
        links = projector.chains.links_built(),
        "projections"
    );
    Ok(decisions)
}

/// Every element's projection as the trimmer builds it, in document order,
/// handed to `then` (for benches; not a stable API).
#[cfg(any(test, feature = "internals"))]
pub fn with_projections<R>(
    answer: &Answer<'_>,
    plan: &RequestPlan,
    then: impl FnOnce(&[ElementInput<'_>]) -> R,
) -> R {
    let doc = Doc::from_answer(answer, "");
    let mut projector = Projector::new(&doc, plan, &vec![false; doc.len()]);
    let inputs: Vec<ElementInput<'_>> = (0..doc.len())
        .map(|at| {
            let key = projector.key(at);
            projector.input(&key)
        })
        .collect();
    then(&inputs)
}

/// Builds one request's projections, element by element in document order.
/// The projection holds no title, content, url or attribute value other
/// than those the policy declared.
struct Projector<'t, 'a> {
    tree: &'t Doc<'a>,
    plan: &'t RequestPlan,
    /// Whether a selected element is below each element.
    contains_selection: Vec<bool>,
    /// Context ids by (parent context, role, subrole). Both maps live for
    /// this request only and are keyed by this answer's own roles and
    /// projections: a fast hasher, seeded per map, is enough, as nothing
    /// about them (order, hashes) leaves the request. The policy's
    /// cross-request cache keys its hasher randomly.
    contexts: HashMap<(u32, Role, Option<&'t str>), u32>,
    /// The context an element's children see: its own context plus itself.
    child_context: Vec<u32>,
    /// Each context's chain of ancestors, built from its parent's (one
    /// link, one digest) the first time a projection under it is decided: a
    /// projection then costs the same at any depth.
    chains: Chains<'t>,
}

impl<'t, 'a> Projector<'t, 'a> {
    fn new(tree: &'t Doc<'a>, plan: &'t RequestPlan, withheld: &[bool]) -> Self {
        let n = tree.len();
        // Children come after their parent in document order, so one
        // backward pass. A selection inside a secure field counts neither
        // for the field nor above it: nothing inside the field is ever
        // sent, so it must not make the policy keep the field or its
        // ancestors (and trimming the output again, where the field is a
        // placeholder, would decide otherwise).
        // The same holds for an element the policy masks or denies
        // (`withheld`, found by a first round of decisions): a selection
        // inside it counts for neither it nor its ancestors.
        let mut contains_selection = vec![false; n];
        for (at, node) in tree.nodes().iter().enumerate().rev() {
            if let Some(parent) = node.parent() {
                if (node.selected() || contains_selection[at])
                    && !withheld[parent as usize]
                    && !Floor::applies_to(
                        tree.el(parent).role().unknown_word(),
                        tree.el(parent).subrole(),
                    )
                {
                    contains_selection[parent as usize] = true;
                }
            }
        }
        Projector {
            tree,
            plan,
            contains_selection,
            contexts: HashMap::new(),
            child_context: Vec::with_capacity(n),
            chains: Chains {
                links: vec![(0, Role::Group, None)],
                built: vec![Some(Inside::new())],
            },
        }
    }

    /// The projection of the element at `at`, its ancestors by context id.
    /// Called for every element in document order, from one loop, and
    /// inlined there: out of line, the call costs about what its work does.
    #[inline(always)]
    fn key(&mut self, at: usize) -> ElementInput<'t, u32> {
        let node = &self.tree.nodes()[at];
        let element = self.tree.el(at as NodeId);
        let plan = self.plan;
        let context = node.parent().map_or(0, |p| self.child_context[p as usize]);
        let next = self.contexts.len() as u32 + 1;
        let subrole = element.subrole();
        let mine = *self
            .contexts
            .entry((context, node.role(), subrole))
            .or_insert(next);
        if mine == next {
            self.chains.links.push((context, node.role(), subrole));
            self.chains.built.push(None);
        }
        self.child_context.push(mine);

        let title = element.title();
        let attributes = element.attributes();
        let title_matches: Vec<&str> = match title {
            Some(title) if !plan.title_patterns.is_empty() => {
                let title = crate::redact::AsRead::title(title);
                plan.title_patterns
                    .iter()
                    .filter(|(_, regex)| title.is_match(regex))
                    .map(|(name, _)| name.as_str())
                    .collect()
            }
            _ => Vec::new(),
        };
        // A secure field's attribute values (its value, say) never reach
        // the policy, declared or not: nothing it could print or turn into
        // a reason. The floor masks the field whatever the policy decides.
        let secure_elsewhere = Floor::applies_elsewhere(
            element.role().unknown_word(),
            attributes
                .iter()
                .map(|(name, value)| (name.as_str(), value)),
        );
        ElementInput {
            role: node.role(),
            subrole,
            selected: node.selected(),
            focused: node.focused(),
            visible: node.visible(),
            hovered: node.hovered(),
            has_title: title.is_some(),
            has_content: !element.content().is_empty(),
            contains_selection: self.contains_selection[at],
            attribute_names: attributes
                .keys()
                .map(String::as_str)
                .filter(|k| !notice::is_reserved(k))
                .collect(),
            attributes: plan
                .element_attributes
                .iter()
                .filter_map(|name| attributes.get_key_value(name.as_str()))
                .map(|(k, v)| (k.as_str(), v))
                .collect(),
            title_matches,
            inside: context,
            secure_elsewhere,
        }
    }

    /// The projection the policy sees, its chain of ancestors built.
    fn input(&mut self, key: &ElementInput<'t, u32>) -> ElementInput<'t> {
        let inside = self.chains.get(key.inside);
        key.clone().with_inside(inside)
    }
}

/// The chains of ancestors of one request's contexts, by context id (0: no
/// ancestors).
struct Chains<'a> {
    /// A context's parent context and the element it adds.
    links: Vec<(u32, Role, Option<&'a str>)>,
    built: Vec<Option<Inside<'a>>>,
}

impl<'a> Chains<'a> {
    /// Links built so far: one per context above a decided projection, so
    /// at most one per element, whatever the depth.
    fn links_built(&self) -> usize {
        self.built.iter().skip(1).filter(|b| b.is_some()).count()
    }

    /// The chain of `context`, building it and the unbuilt ones above it,
    /// without recursion; each is built once per request.
    fn get(&mut self, context: u32) -> Inside<'a> {
        let mut unbuilt = Vec::new();
        let mut at = context as usize;
        let mut inside = loop {
            match &self.built[at] {
                Some(inside) => break inside.clone(),
                None => {
                    unbuilt.push(at);
                    at = self.links[at].0 as usize;
                }
            }
        };
        for &at in unbuilt.iter().rev() {
            let (_, role, subrole) = self.links[at];
            inside = inside.child(role, subrole);
            self.built[at] = Some(inside.clone());
        }
        inside
    }
}

#[allow(clippy::too_many_arguments)]
fn report<'a>(
    tree: &Doc<'a>,
    request: &Request,
    plan: &RequestPlan,
    selection: &select::Selection,
    filled: &fill::Filled,
    budgets: &[(Budget, &'static str)],
    evaluations: usize,
    policy_hash: &str,
    lines: bool,
) -> Report<'a> {
    let mut decisions = Vec::with_capacity(if lines { tree.len() } else { 0 });
    let mut outcomes: BTreeMap<Outcome, usize> = BTreeMap::new();
    let mut rules: BTreeMap<Arc<str>, usize> = BTreeMap::new();
    let mut dropped = 0;
    let mut stripped_total: BTreeMap<String, usize> = BTreeMap::new();
    let budget_rule: Arc<str> = Arc::from("budget");
    let mut reasons = Reasons::new();
    for (at, node) in tree.nodes().iter().enumerate() {
        dropped += tree
            .el(at as NodeId)
            .attributes()
            .keys()
            .filter(|k| notice::is_reserved(k))
            .count();
        let fate = selection.fates[at];
        let unsent = selection.unsent(at as NodeId);
        let label = |rule: select::Label| Some(selection.label(rule).clone());
        let (outcome, rule, inherited) = match (filled.modes[at], fate) {
            (Some(Mode::Placeholder), Fate::Masked(rule)) => (Outcome::Masked, label(rule), false),
            // The root, denied: sent as a placeholder, as an answer needs one.
            (Some(Mode::Placeholder), Fate::Denied(rule)) => (Outcome::Denied, label(rule), false),
            (Some(Mode::Full { cut }), _) => {
                let rule = match fate {
                    Fate::Kept(rule) => label(rule),
                    _ => None,
                };
                (
                    if cut.is_some() {
                        Outcome::Cut
                    } else {
                        Outcome::Sent
                    },
                    rule,
                    false,
                )
            }
            (Some(Mode::Skeleton), Fate::Kept(rule)) => (Outcome::Skeleton, label(rule), false),
            // Kept, but the budget could only hold its placeholder.
            (Some(Mode::Placeholder), Fate::Kept(_)) => {
                (Outcome::Placeholder, Some(budget_rule.clone()), false)
            }
            // Kept, its title cut and its content left out to fit.
            (Some(Mode::Bare { .. }), Fate::Kept(rule)) => (Outcome::Cut, label(rule), false),
            (Some(_), _) => (Outcome::Skeleton, Some(unsent.clone()), false),
            (None, Fate::InsideDenied(rule)) => (Outcome::Denied, label(rule), true),
            (None, Fate::InsideMasked(rule)) => (Outcome::Masked, label(rule), true),
            (None, Fate::Denied(rule)) => (Outcome::Denied, label(rule), false),
            (None, _) => {
                let outcome = match &**unsent {
                    "budget" => Outcome::Budget,
                    "scope" => Outcome::OutOfScope,
                    _ => Outcome::Pruned,
                };
                // Pruned by the same rule as its parent: the parent's doing.
                let inherited = outcome == Outcome::Pruned
                    && node.parent().is_some_and(|p| {
                        selection.same_unsent(p, at as NodeId)
                            && matches!(selection.fates[p as usize], Fate::Pruned(_))
                    });
                (outcome, Some(unsent.clone()), inherited)
            }
        };
        let stripped: Vec<Arc<str>> = match filled.modes[at] {
            Some(Mode::Full { .. }) => selection
                .stripped(at as crate::model::NodeId)
                .map(|names| names.to_vec())
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        for name in &stripped {
            *stripped_total.entry(name.to_string()).or_default() += 1;
        }
        *outcomes.entry(outcome).or_default() += 1;
        if let Some(rule) = &rule {
            match rules.get_mut(rule) {
                Some(count) => *count += 1,
                None => {
                    rules.insert(rule.clone(), 1);
                }
            }
        }
        if !lines {
            continue;
        }
        // Outside the scope, and not sent whole for it (a kept element is
        // sent whatever the scope).
        let scope_too = !selection.in_scope[at]
            && !matches!(fate, Fate::Kept(_))
            && !matches!(outcome, Outcome::Sent | Outcome::Cut);
        let reasons = reasons.of(rule.as_ref(), selection.own(at as NodeId), scope_too);
        let element = tree.el(at as NodeId);
        decisions.push(ElementReport {
            id: element.id_cow(),
            role: element.role().clone(),
            subrole: element.subrole_cow(),
            outcome,
            rule,
            inherited,
            reasons,
            stripped,
        });
    }
    let redactions = plan
        .redact
        .iter()
        .zip(&filled.redactions)
        .map(|(r, n)| (r.id.clone(), *n))
        .collect();
    Report {
        policy_hash: policy_hash.to_string(),
        action: request.action.name.clone(),
        target: request.action.target.clone(),
        scope: plan.scope,
        format: request.format.as_str(),
        budgets: budgets
            .iter()
            .zip(&filled.used)
            .map(|((budget, source), used)| BudgetReport {
                unit: crate::tokens::unit(*budget),
                limit: crate::tokens::limit(*budget),
                used: *used,
                source,
            })
            .collect(),
        warnings: report::budget_warnings(plan.budget, request.budget),
        ignored: None,
        output_bytes: filled.rendered.len(),
        evaluations,
        probes: filled.probes,
        elements: tree.len(),
        outcomes,
        rules: rules
            .into_iter()
            .map(|(rule, n)| (rule.to_string(), n))
            .collect(),
        redactions,
        stripped: stripped_total,
        reserved_attributes_dropped: dropped,
        decisions,
    }
}

/// Builds each element's `reasons`, sharing one list between the elements
/// that have the same (most do: one per projection, or one rule alone).
struct Reasons {
    none: Arc<[Arc<str>]>,
    /// `[rule]`, per rule (by the rule's allocation: labels are shared).
    alone: HashMap<*const str, Arc<[Arc<str>]>>,
    scope: Arc<str>,
}

impl Reasons {
    fn new() -> Reasons {
        Reasons {
            none: Arc::from([]),
            alone: HashMap::new(),
            scope: Arc::from("scope"),
        }
    }

    /// The deciding rule first, then the element's own rules, then `scope`.
    fn of(
        &mut self,
        rule: Option<&Arc<str>>,
        own: &Arc<[Arc<str>]>,
        scope_too: bool,
    ) -> Arc<[Arc<str>]> {
        let scope_listed = |list: &[Arc<str>]| list.iter().any(|r| **r == *self.scope);
        let own_first = match (rule, own.first()) {
            (None, _) => true,
            (Some(rule), Some(first)) => rule == first,
            (Some(_), None) => false,
        };
        if own_first && (!scope_too || scope_listed(own)) {
            return if own.is_empty() {
                self.none.clone()
            } else {
                own.clone()
            };
        }
        if let (Some(rule), true) = (rule, own.is_empty()) {
            if !scope_too || **rule == *self.scope {
                return self
                    .alone
                    .entry(Arc::as_ptr(rule))
                    .or_insert_with(|| Arc::from([rule.clone()]))
                    .clone();
            }
        }
        let mut list: Vec<Arc<str>> = Vec::with_capacity(own.len() + 2);
        list.extend(rule.cloned());
        list.extend(own.iter().filter(|r| Some(*r) != rule).cloned());
        if scope_too && !scope_listed(&list) {
            list.push(self.scope.clone());
        }
        list.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Role;
    use crate::policy::Scope;

    /// A native stand-in for a policy: masks secure text, prunes the
    /// invisible, keeps the focus path and the selection.
    struct Native(usize);

    impl Decider for Native {
        fn decide(&mut self, e: &ElementInput<'_>) -> Result<Arc<Decision>> {
            self.0 += 1;
            let mut d = Decision::default();
            if e.role == Role::Text
                && e.subrole
                    .is_some_and(|s| s.to_lowercase().contains("secure"))
            {
                d.mask.push("floor:secure-text".into());
            }
            if !e.visible {
                d.prune.push("invisible".into());
            }
            if e.focused || e.selected {
                d.keep.push("user-position".into());
            }
            Ok(Arc::new(d))
        }
        fn evaluations(&self) -> usize {
            self.0
        }
    }

    fn plan(scope: Scope, budget: Option<Budget>) -> RequestPlan {
        RequestPlan {
            scope,
            budget,
            redact: vec![],
            title_patterns: vec![],
            element_attributes: vec![],
        }
    }

    /// A token budget the output cannot exceed: counted exactly for the
    /// report, left at the output's bytes (an upper bound) when the report
    /// is not shown; the output is the same either way.
    #[cfg(feature = "tokens")]
    #[test]
    fn a_token_budget_that_cannot_bind_is_counted_only_for_a_shown_report() {
        let answer = notes();
        let request = Request::new("app").budget(Budget::Bytes(600));
        let plan = plan(Scope::App, Some(Budget::Tokens(8_000)));
        let run = |counts| {
            trim_checked(
                &answer,
                &request,
                &plan,
                &mut Native(0),
                "h",
                &Limits::default(),
                &request.deadline(),
                counts,
            )
            .unwrap()
        };
        let (exact, binding) = (run(Counts::Exact), run(Counts::Binding));
        assert_eq!(exact.rendered, binding.rendered);
        // The report that is never shown has its totals, not its lines.
        assert_eq!(
            exact.report.decisions.len(),
            crate::Tree::new(&answer.root).len()
        );
        assert!(binding.report.decisions.is_empty());
        assert_eq!(exact.report.outcomes, binding.report.outcomes);
        assert_eq!(exact.report.rules, binding.report.rules);
        let used = |t: &Trimmed<'_>| -> Vec<(&str, usize)> {
            t.report.budgets.iter().map(|b| (b.unit, b.used)).collect()
        };
        let bytes = exact.rendered.len();
        let tokens = crate::tokens::measure(&exact.rendered, Budget::Tokens(8_000)).unwrap();
        assert!(tokens < bytes, "{tokens} tokens in {bytes} bytes");
        assert_eq!(used(&exact), [("tokens", tokens), ("bytes", bytes)]);
        assert_eq!(used(&binding), [("tokens", bytes), ("bytes", bytes)]);
    }

    fn notes() -> Answer<'static> {
        let bytes =
            std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/notes.json")).unwrap();
        crate::read_conforming(&bytes, &crate::Limits::default())
            .unwrap()
            .into_owned()
    }

    #[test]
    fn focus_scope_sends_the_path_and_says_what_it_left_out() {
        let answer = notes();
        let out = trim_with(
            &answer,
            &Request::new("focus"),
            &plan(Scope::Focus, None),
            &mut Native(0),
            "h",
            &Limits::default(),
        )
        .unwrap();
        assert_eq!(
            out.rendered,
            r#"{"protocol":"0.2.0","instance":"k3f9x2","root":{"id":"app","role":"Application","title":"Example","children":[{"id":"w-1","role":"Window","subrole":"pane","focused":true,"children":[{"id":"th-2","role":"List","subrole":"thread","title":"Launch plan","focused":true,"children":[{"id":"c-3","role":"Row","subrole":"comment","title":"Comment by Ada","focused":true,"children":[{"id":"sel-4","role":"Text","content":[{"type":"text","text":"what it shows"}],"selected":true}]}]}]}],"attributes":{"ctxgate:omitted":{"children":1,"reasons":{"scope":1}}}}}"#
        );
        assert!(crate::check::check(&out.answer)
            .iter()
            .all(|f| !f.is_error()));
    }

    /// Sleeps on its `nth` call, as a slow policy would.
    struct Slow {
        calls: usize,
        nth: usize,
    }

    impl Decider for Slow {
        fn decide(&mut self, e: &ElementInput<'_>) -> Result<Arc<Decision>> {
            self.calls += 1;
            if self.calls == self.nth {
                std::thread::sleep(std::time::Duration::from_millis(60));
            }
            Native(0).decide(e)
        }
        fn evaluations(&self) -> usize {
            self.calls
        }
    }

    fn within(decider: &mut dyn Decider, deadline: Deadline) -> Result<Trimmed<'static>> {
        let answer = Box::leak(Box::new(notes()));
        trim_checked(
            answer,
            &Request::new("app").budget(Budget::Bytes(600)),
            &plan(Scope::App, None),
            decider,
            "h",
            &Limits::default(),
            &deadline,
            Counts::Exact,
        )
    }

    fn stage(result: Result<Trimmed<'_>>) -> Option<Stage> {
        match result {
            Err(Error::Deadline { stage, .. }) => Some(stage),
            Err(other) => panic!("{other}"),
            Ok(_) => None,
        }
    }

    #[test]
    fn a_deadline_that_passes_while_deciding_or_fitting_names_the_stage_and_sends_nothing() {
        let mut native = Native(0);
        within(&mut native, Deadline::after(Duration::from_secs(60))).unwrap();
        let projections = native.0;
        assert!(projections > 1);
        // Slow on the first projection: the next one is not asked.
        let mut slow = Slow { calls: 0, nth: 1 };
        let got = stage(within(
            &mut slow,
            Deadline::after(Duration::from_millis(30)),
        ));
        assert_eq!((got, slow.calls), (Some(Stage::Decide), 1));
        // Slow on the last: deciding is done, the first rendering is not measured.
        let mut slow = Slow {
            calls: 0,
            nth: projections,
        };
        let got = stage(within(
            &mut slow,
            Deadline::after(Duration::from_millis(30)),
        ));
        assert_eq!(got, Some(Stage::Fill));
        // Time enough: the same request succeeds.
        let mut slow = Slow { calls: 0, nth: 1 };
        assert_eq!(
            stage(within(&mut slow, Deadline::after(Duration::from_secs(60)))),
            None
        );
    }

    #[test]
    fn too_many_distinct_projections_fail_closed() {
        let limits = Limits {
            max_projections: 3,
            ..Limits::default()
        };
        let err = trim_with(
            &notes(),
            &Request::new("app"),
            &plan(Scope::App, None),
            &mut Native(0),
            "h",
            &limits,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the tree has more than 3 distinct element projections for the policy to decide (`max_projections`, `--max-projections`)"
        );
    }

    /// A focus path under a row with a 951-byte title, and a selected text
    /// off the path (kept, like the path).
    fn long_titled_path() -> Answer<'static> {
        let json = format!(
            r#"{{"protocol":"0.2.0","instance":"i","root":{{"id":"app","role":"Application","children":[{{"id":"w","role":"Window","focused":true,"children":[{{"id":"row","role":"Row","title":"{}","focused":true,"children":[{{"id":"cell","role":"Cell","title":"Due","focused":true,"content":[{{"type":"text","text":"tomorrow at noon"}}]}}]}},{{"id":"sel","role":"Text","title":"A selected passage of the report","selected":true,"content":[{{"type":"text","text":"{}"}}]}},{{"id":"other","role":"Text","content":[{{"type":"text","text":"more"}}]}}]}}]}}}}"#,
            "title words ".repeat(79).trim_end(),
            "selected words ".repeat(20).trim_end()
        );
        crate::read_conforming(json.as_bytes(), &Limits::default())
            .unwrap()
            .into_owned()
    }

    /// Trimming an output again sends the same elements, text and
    /// attributes (its notices are its own counts: the earlier trim's are
    /// input to it, dropped), and trimming that again changes nothing.
    fn assert_again(out: &Trimmed<'_>, again: impl Fn(&Answer<'_>) -> Trimmed<'static>) {
        let second = again(&out.answer);
        assert_eq!(
            crate::tests::trim_properties::without_notices(&second.answer),
            crate::tests::trim_properties::without_notices(&out.answer),
            "{}",
            out.rendered
        );
        assert_eq!(again(&second.answer).rendered, second.rendered);
    }

    fn trim_at(answer: &Answer<'_>, budget: usize) -> Result<Trimmed<'static>> {
        trim_with(
            answer,
            &Request::new("app").budget(Budget::Bytes(budget)),
            &plan(Scope::App, None),
            &mut Native(0),
            "h",
            &Limits::default(),
        )
        .map(Trimmed::into_owned)
    }

    fn outcome_of(out: &Trimmed<'_>, id: &str) -> Outcome {
        out.report
            .decisions
            .iter()
            .find(|d| d.id == id)
            .map(|d| d.outcome)
            .unwrap()
    }

    #[test]
    fn a_path_too_long_for_the_budget_degrades_before_failing() {
        let answer = long_titled_path();
        // Whole, the row's title alone outweighs these budgets.
        let out = trim_at(&answer, 650).unwrap();
        assert!(out.rendered.len() <= 650);
        // The row's title is cut, and said so; the path is whole.
        let row = &out.answer.root.children[0].children[0];
        assert_eq!(row.id, "row");
        assert!(row.title.as_ref().unwrap().len() <= SHORT_TITLE_FOR_TESTS);
        assert_eq!(
            row.attributes["ctxgate:cut"],
            serde_json::json!({"reason": "budget", "title": true})
        );
        assert_eq!(row.children[0].id, "cell");
        // Tighter: the kept text off the path is a placeholder, with its notice.
        let out = trim_at(&answer, 575).unwrap();
        assert!(out.rendered.len() <= 575, "{}", out.rendered);
        let sel = out.answer.root.children[0]
            .children
            .iter()
            .find(|e| e.id == "sel")
            .unwrap();
        assert_eq!(
            sel.attributes["ctxgate:withheld"],
            serde_json::json!({"rule": "budget", "empty": false})
        );
        assert!(sel.content.is_empty());
        assert_eq!(outcome_of(&out, "sel"), Outcome::Placeholder);
        // The bare path (ids, roles, states, notices) is the least that
        // works: the error names it exactly.
        let Err(Error::BudgetUnreachable { needed, .. }) = trim_at(&answer, 100) else {
            panic!("100 bytes cannot hold the path");
        };
        let bare = trim_at(&answer, needed).unwrap();
        assert_eq!(bare.rendered.len(), needed);
        assert!(bare.rendered.contains(r#""id":"cell""#));
        assert!(!bare.rendered.contains("title words"));
        // One notice, on the root, for the whole bare path: what every
        // element's cut and omitted notices would say (a placeholder keeps
        // its own: its rule).
        assert!(
            !bare.rendered.contains("ctxgate:omitted"),
            "{}",
            bare.rendered
        );
        assert!(!bare.rendered.contains("ctxgate:cut"), "{}", bare.rendered);
        assert_eq!(
            bare.answer.root.attributes.get("ctxgate:bare"),
            Some(&serde_json::json!({"cut": 2, "omitted": {"budget": 1}}))
        );
        assert!(matches!(
            trim_at(&answer, needed - 1),
            Err(Error::BudgetUnreachable { needed: n, .. }) if n == needed
        ));
        // A little more room: what the bare path cut grows back (the
        // path's titles nearest the user first), its notice still the
        // root's one.
        let grown = trim_at(&answer, needed + 60).unwrap();
        assert!(grown.rendered.len() <= needed + 60);
        assert!(grown.rendered.len() > needed, "{}", grown.rendered);
        assert!(grown.answer.root.attributes.get("ctxgate:bare").is_some());
        assert!(!grown.rendered.contains("ctxgate:omitted"));
        // A degraded output trimmed again, at its own size.
        for out in [
            trim_at(&answer, 650).unwrap(),
            trim_at(&answer, 575).unwrap(),
            bare,
            grown,
        ] {
            let budget = out.rendered.len();
            assert_again(&out, |a| trim_at(a, budget).unwrap());
        }
    }

    /// Wherever the budget leaves something out, no element
    /// carries its own omitted notice (each cost as much as the skeleton
    /// it sat on); the root's one notice counts them all, per reason, and
    /// a budget the whole selection fits in still writes each element's.
    #[test]
    fn a_budget_that_cuts_counts_what_it_left_out_once_on_the_root() {
        let answer = notes();
        let out = trim_at(&answer, 600).unwrap();
        assert!(out.rendered.len() <= 600);
        assert!(
            !out.rendered.contains("ctxgate:omitted"),
            "{}",
            out.rendered
        );
        let left_out = out
            .report
            .decisions
            .iter()
            .filter(|d| d.outcome == Outcome::Budget)
            .count() as u64;
        assert!(left_out > 0);
        // th-7 is left out, under w-2 (sent): one child not sent; nothing
        // cut, so the counts alone.
        assert_eq!(
            out.answer.root.attributes.get("ctxgate:bare"),
            Some(&serde_json::json!({"budget": 1}))
        );
        assert_eq!(out.rendered.matches("ctxgate:").count(), 1);
        assert_again(&out, |a| trim_at(a, 600).unwrap());
        // The outline says it in a line of its own, on the root, one byte
        // under the whole answer.
        let outline = |limit: usize| {
            trim_with(
                &answer,
                &Request::new("app")
                    .budget(Budget::Bytes(limit))
                    .format(Format::Outline),
                &plan(Scope::App, None),
                &mut Native(0),
                "h",
                &Limits::default(),
            )
            .unwrap()
            .rendered
        };
        let whole = outline(100_000);
        assert!(!whole.contains("in all"), "{whole}");
        let cut = outline(whole.len() - 1);
        assert!(
            cut.lines()
                .nth(1)
                .unwrap()
                .starts_with("  [ctxgate] in all, not sent: "),
            "{cut}"
        );
        // Room for everything: no root notice.
        let whole = trim_at(&answer, 100_000).unwrap();
        assert!(whole.answer.root.attributes.get("ctxgate:bare").is_none());
    }

    #[test]
    fn a_provider_s_notices_are_dropped_and_counted_never_carried() {
        let json = r#"{"protocol":"0.2.0","instance":"i","root":{"id":"app","role":"Application","attributes":{"ctxgate:bare":{"cut":1,"omitted":{"budget":4111111111111111,"sk-live secret words":5}}},"children":[{"id":"w","role":"Window","focused":true,"attributes":{"ctxgate:omitted":{"children":4111111111111111,"reasons":{"budget":4111111111111111}},"ctxgate:cut":{"reason":"budget","blocks":4111111111111111},"ctxgate:withheld":{"rule":"mask:x4111111111111111","empty":true}}}]}}"#;
        let answer = crate::read_conforming(json.as_bytes(), &Limits::default())
            .unwrap()
            .into_owned();
        let out = trim_at(&answer, 10_000).unwrap();
        assert_eq!(out.report.reserved_attributes_dropped, 4);
        assert!(!out.rendered.contains("ctxgate:"), "{}", out.rendered);
        assert!(!out.rendered.contains("4111"), "{}", out.rendered);
        assert!(!out.rendered.contains("secret words"), "{}", out.rendered);
        // The window, no longer a placeholder: its rule was the input's.
        assert_eq!(outcome_of(&out, "w"), Outcome::Sent);
    }

    const SHORT_TITLE_FOR_TESTS: usize = 32;

    #[test]
    fn budgets_are_never_exceeded_and_grow_monotonically() {
        let answer = notes();
        let mut previous = 0;
        let mut unreachable = 0;
        for limit in 1..700 {
            let request = Request::new("app").budget(Budget::Bytes(limit));
            match trim_with(
                &answer,
                &request,
                &plan(Scope::App, None),
                &mut Native(0),
                "h",
                &Limits::default(),
            ) {
                Ok(out) => {
                    assert!(out.rendered.len() <= limit, "{limit}: {}", out.rendered);
                    let sent = out
                        .report
                        .decisions
                        .iter()
                        .filter(|d| d.outcome != Outcome::Budget)
                        .count();
                    // Between answers sent whole (not degraded): a degraded
                    // one cut titles to make room, and can hold an element
                    // the next budget's whole answer has no room for.
                    let degraded = out
                        .report
                        .decisions
                        .iter()
                        .any(|d| matches!(d.outcome, Outcome::Cut | Outcome::Placeholder));
                    if !degraded {
                        assert!(sent >= previous, "{limit}: sent {sent} < {previous}");
                        previous = sent;
                    }
                    assert!(crate::check::check(&out.answer)
                        .iter()
                        .all(|f| !f.is_error()));
                    assert_again(&out, |a| {
                        trim_with(
                            a,
                            &request,
                            &plan(Scope::App, None),
                            &mut Native(0),
                            "h",
                            &Limits::default(),
                        )
                        .unwrap()
                        .into_owned()
                    });
                }
                Err(Error::BudgetUnreachable { needed, .. }) => {
                    unreachable += 1;
                    assert!(needed > limit);
                }
                Err(other) => panic!("{limit}: {other}"),
            }
        }
        assert!(unreachable > 0 && previous == 7);
    }
}
