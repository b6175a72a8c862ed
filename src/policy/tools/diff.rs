//! `ctxgate policy diff OLD NEW`: what changes between two policy
//! versions, per action (scope, budget, redactions, declared attributes)
//! and per probe element (the winning class and its reasons, and the
//! attributes `strip` removes), on the
//! probes both policies' rules mention, with every combination of the
//! states they read; and whether NEW sends anything OLD withheld.

use crate::error::Result;
use crate::policy::engine::probe_request;
use crate::policy::probes::{mentions, policy_probes, ACTIONS};
use crate::policy::{Budget, Decision, Policy, Scope};

/// One change between the two policies.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Change {
    /// The action.
    pub action: String,
    /// `scope`, `budget`, `redact`, `element_attributes` or `element`.
    pub kind: &'static str,
    /// The probe element's label, for `element`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub element: Option<String>,
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

/// Every change, per action and probe, between `old` and `new`.
pub fn diff_policies(old: &Policy, new: &Policy) -> Result<Vec<Change>> {
    let mut files = old.files().to_vec();
    files.extend(new.files().iter().cloned());
    let mentioned = mentions(&files);
    let mut changes = Vec::new();
    for action in ACTIONS {
        let request = probe_request(action, None);
        let mut old_eval = old.evaluator(&request)?;
        let mut new_eval = new.evaluator(&request)?;
        let (a, b) = (old_eval.plan().clone(), new_eval.plan().clone());
        let mut change = |kind, old: String, new: String, sends_more| {
            changes.push(Change {
                action: action.to_string(),
                kind,
                element: None,
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
        // By id; a pattern or replacement changed under the same id is a
        // removal and an addition.
        let entries = |p: &crate::policy::RequestPlan| -> Vec<(String, String)> {
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
        let (ra, rb) = (entries(&a), entries(&b));
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
        if !removed.is_empty() || !added.is_empty() {
            change(
                "redact",
                format!(
                    "removed: {}",
                    if removed.is_empty() {
                        "none".to_string()
                    } else {
                        removed.join(", ")
                    }
                ),
                format!(
                    "added: {}",
                    if added.is_empty() {
                        "none".to_string()
                    } else {
                        added.join(", ")
                    }
                ),
                !removed.is_empty(),
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
        let mut names: Vec<String> = a
            .title_patterns
            .iter()
            .chain(b.title_patterns.iter())
            .map(|(n, _)| n.clone())
            .collect();
        names.sort();
        names.dedup();
        for probe in policy_probes(&mentioned, &names, true) {
            let input = probe.input();
            let (da, db) = (old_eval.decide(&input)?, new_eval.decide(&input)?);
            let ((ta, ca), (tb, cb)) = (outcome_text(&da), outcome_text(&db));
            let (ta, tb) = (
                format!("{ta}{}", super::doc::strips(&da)),
                format!("{tb}{}", super::doc::strips(&db)),
            );
            if ta != tb {
                // An attribute OLD stripped that NEW sends, on an element
                // NEW sends (in scope or kept), is more sent too.
                let unstripped = da.strip.iter().any(|n| !db.strip.contains(n));
                changes.push(Change {
                    action: action.to_string(),
                    kind: "element",
                    element: Some(probe.label.clone()),
                    old: ta,
                    new: tb,
                    sends_more: class_level(cb) > class_level(ca)
                        || (unstripped && class_level(cb) >= class_level("scope")),
                });
            }
        }
    }
    Ok(changes)
}
