//! The audit report: for every input element, its role and subrole, what
//! happened to it, which rule decided and every other reason that bore on
//! it; totals per rule; the budget; the policy's hash. It carries ids,
//! roles, subroles, rule ids, stripped attributes' names and counts only —
//! never titles, content, urls or attribute values — so it can be logged
//! and shown to a reviewer.
//!
//! Its ids borrow from the input, as the answer's strings do;
//! [`Report::into_owned`] detaches a report a host keeps (an async audit
//! log) after the input is gone. The report's types are built only by the
//! library and are `#[non_exhaustive]`: hosts read them and match on
//! [`Outcome`] with a wildcard arm.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use crate::model::RoleName;
use crate::policy::Scope;

/// What happened to one element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Outcome {
    /// Sent whole.
    Sent,
    /// Sent with its content (or, degraded to fit, its title) cut to fit
    /// the budget.
    Cut,
    /// Sent as a skeleton (id, role, subrole, title, states) because
    /// something inside it was sent.
    Skeleton,
    /// Sent as a placeholder, or (inside a masked element) not at all.
    Masked,
    /// Not sent: a deny rule, here or above.
    Denied,
    /// Not sent: a prune rule, here or above.
    Pruned,
    /// Not sent: outside the action's scope.
    OutOfScope,
    /// Not sent: no room in the budget.
    Budget,
    /// Kept by a rule, but sent as a placeholder (id, role, subrole,
    /// states, a `ctxgate:withheld` notice with rule `budget`): the budget
    /// could not hold more of it.
    Placeholder,
}

/// One element's line in the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ElementReport<'a> {
    /// The element's id (borrowed from the input, as the answer's is).
    pub id: Cow<'a, str>,
    /// The role as the provider wrote it (a word of the role language, or
    /// the provider's own word).
    #[serde(serialize_with = "role_word")]
    pub role: RoleName,
    /// The subrole as the provider wrote it, when it gave one (a name,
    /// like the role; the report carries no title, content or value).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subrole: Option<Cow<'a, str>>,
    /// What happened.
    pub outcome: Outcome,
    /// The deciding rule (`deny:…`, `mask:…`, `keep:…`, `prune:…`,
    /// `floor:secure-text`), `scope` or `budget`; absent when sent whole
    /// with no rule involved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<Arc<str>>,
    /// The rule decided on an ancestor, not on this element.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub inherited: bool,
    /// Every reason that bears on this element: the deciding one first
    /// (`rule`, when there is one), then every other rule of the element's
    /// own decision in precedence order (deny, mask — the floor's
    /// `floor:secure-text` among them —, keep, prune; sorted within each),
    /// then `scope` when the element is outside the action's scope and was
    /// not sent whole for it. An element masked by three rules lists all
    /// three. Absent when empty (sent whole, no rule involved).
    #[serde(skip_serializing_if = "no_reasons")]
    pub reasons: Arc<[Arc<str>]>,
    /// The attributes a `strip` rule removed from the element as sent, by
    /// name (never value); absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stripped: Vec<Arc<str>>,
}

fn no_reasons(reasons: &Arc<[Arc<str>]>) -> bool {
    reasons.is_empty()
}

fn role_word<S: serde::Serializer>(role: &RoleName, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(role.as_str())
}

/// The budget as applied.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct BudgetReport {
    /// `bytes` or `tokens`.
    pub unit: &'static str,
    /// The limit.
    pub limit: usize,
    /// What the output uses.
    pub used: usize,
    /// Where the limit came from: `policy` or `request`.
    pub source: &'static str,
}

/// The report of one trim.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Report<'a> {
    /// The policy's content hash: SHA-256 of its sources, not their names
    /// or folders (`policies/README.md`).
    pub policy_hash: String,
    /// The action.
    pub action: String,
    /// The target, when the action named one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The scope the policy gave the action.
    pub scope: Scope,
    /// `json` or `outline`.
    pub format: &'static str,
    /// Each budget applied (none when neither the policy nor the request sets one).
    pub budgets: Vec<BudgetReport>,
    /// What the host should know about how the request was applied: a
    /// request budget over the policy's, which caps it. Absent when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// What of the answer was read past: fields outside the protocol
    /// (never sent) and role words outside the language (read as `Group`).
    /// Absent when nothing was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ignored: Option<Ignored>,
    /// Bytes of the rendered output.
    pub output_bytes: usize,
    /// Policy rule values computed for this request: run on regorus, or
    /// for the embedded default read from its table of regorus's answers
    /// (0 when all were cached).
    pub evaluations: usize,
    /// Measured renderings taken to fit the budget.
    pub probes: usize,
    /// Elements in the input.
    pub elements: usize,
    /// Elements per outcome.
    pub outcomes: BTreeMap<Outcome, usize>,
    /// Elements per deciding rule.
    pub rules: BTreeMap<String, usize>,
    /// Replacements per redaction pattern id.
    pub redactions: BTreeMap<String, usize>,
    /// Elements per attribute name a `strip` rule removed (absent when none).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub stripped: BTreeMap<String, usize>,
    /// Input attributes in ctxgate's reserved `ctxgate:` namespace
    /// (read by meaning: case, look-alike letters and colons, compatibility forms), every one dropped: an
    /// input's notices, an earlier trim's among them, are not carried.
    pub reserved_attributes_dropped: usize,
    /// Every input element, in document order.
    pub decisions: Vec<ElementReport<'a>>,
}

/// What a trim read past: counts and the first place, never a value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ignored {
    /// Fields outside the protocol, ignored and never sent.
    pub fields: usize,
    /// Elements whose role word is outside the language, read as `Group`.
    pub roles: usize,
    /// The JSON pointer of the first of them.
    pub first: String,
}

impl Ignored {
    /// What `warnings` (a conforming answer's findings) say was read
    /// past; `None` when nothing was.
    pub(crate) fn of(warnings: &[crate::Finding]) -> Option<Ignored> {
        use crate::finding::Requirement;
        let mut out = Ignored {
            fields: 0,
            roles: 0,
            first: String::new(),
        };
        for w in warnings {
            let ignored = match w.requirement {
                Requirement::Schema if w.message.starts_with("unknown ") => &mut out.fields,
                Requirement::R3 if w.message.contains("read as `Group`") => &mut out.roles,
                _ => continue,
            };
            *ignored += 1;
            if out.first.is_empty() {
                out.first = w.pointer.clone();
            }
        }
        (out.fields + out.roles > 0).then_some(out)
    }
}

impl ElementReport<'_> {
    /// The same line with its id its own.
    pub fn into_owned(self) -> ElementReport<'static> {
        ElementReport {
            id: Cow::Owned(self.id.into_owned()),
            role: self.role,
            subrole: self.subrole.map(|s| Cow::Owned(s.into_owned())),
            outcome: self.outcome,
            rule: self.rule,
            inherited: self.inherited,
            reasons: self.reasons,
            stripped: self.stripped,
        }
    }
}

impl Report<'_> {
    /// The same report with every id its own, detached from the input
    /// (one pass over the decisions; rule names stay shared).
    pub fn into_owned(self) -> Report<'static> {
        Report {
            policy_hash: self.policy_hash,
            action: self.action,
            target: self.target,
            scope: self.scope,
            format: self.format,
            budgets: self.budgets,
            warnings: self.warnings,
            ignored: self.ignored,
            output_bytes: self.output_bytes,
            evaluations: self.evaluations,
            probes: self.probes,
            elements: self.elements,
            outcomes: self.outcomes,
            rules: self.rules,
            redactions: self.redactions,
            stripped: self.stripped,
            reserved_attributes_dropped: self.reserved_attributes_dropped,
            decisions: self
                .decisions
                .into_iter()
                .map(ElementReport::into_owned)
                .collect(),
        }
    }
}

/// A request can lower the policy's budget, never raise it: a request
/// budget over the policy's in the same unit is capped, and said so.
pub(crate) fn budget_warnings(
    policy: Option<crate::policy::Budget>,
    request: Option<crate::policy::Budget>,
) -> Vec<String> {
    use crate::policy::Budget;
    let (unit, asked, cap) = match (policy, request) {
        (Some(Budget::Tokens(p)), Some(Budget::Tokens(r))) if r > p => ("tokens", r, p),
        (Some(Budget::Bytes(p)), Some(Budget::Bytes(r))) if r > p => ("bytes", r, p),
        _ => return Vec::new(),
    };
    vec![format!(
        "the request asked for a budget of {asked} {unit}; the policy's budget of {cap} {unit} applies (a request can lower the policy's budget, never raise it)"
    )]
}
