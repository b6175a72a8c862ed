//! `ctxgate policy doc` and `plan`: the reviewer's Markdown and the plan
//! as JSON, from the rules' metadata and the probe set.

use std::fmt::Write;
use std::sync::Arc;

use crate::error::Result;
use crate::policy::engine::{compile_with_heads, probe_request};
use crate::policy::{Budget, Decision, Policy, RequestPlan};

use super::metadata::{kind_of, rule_docs};
use crate::policy::probes::{mentions, policy_probes, ACTIONS};

/// `class (reasons)[, strips a, b] · priority`: what the element gets,
/// which attributes leave it, then its place in the fill order.
fn cell(decision: &Decision) -> String {
    let (class, reasons) = decision.outcome();
    let reasons: Vec<&str> = reasons.iter().map(|r| &**r).collect();
    let by = if reasons.is_empty() {
        String::new()
    } else {
        format!(" ({})", reasons.join(", "))
    };
    format!("{class}{by}{} · {}", strips(decision), decision.priority)
}

/// `, strips author` when the decision strips attributes (none, nothing).
pub(super) fn strips(decision: &Decision) -> String {
    if decision.strip.is_empty() {
        return String::new();
    }
    let names: Vec<&str> = decision.strip.iter().map(|n| &**n).collect();
    format!(", strips {}", names.join(", "))
}

fn budget_text(budget: Option<Budget>) -> String {
    match budget {
        Some(Budget::Tokens(n)) => format!("{n} tokens"),
        Some(Budget::Bytes(n)) => format!("{n} bytes"),
        None => "none".to_string(),
    }
}

fn escape(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// Markdown for a privacy reviewer: every documented rule, the floor, the
/// redaction and title patterns, and what each action decides for each probe.
pub fn doc_markdown(policy: &Policy) -> Result<String> {
    let mut out = String::new();
    let files: Vec<&str> = policy.files().iter().map(|f| f.name.as_str()).collect();
    let _ = writeln!(out, "# Policy: {}\n", files.join(", "));
    let _ = writeln!(out, "Policy hash: `{}`\n", policy.hash());
    let _ = writeln!(out, "Precedence, applied by ctxgate: deny > mask > keep > prune and scope > budget. Reasons are rule ids; no app text appears in them.\n");
    let _ = writeln!(out, "## The floor\n");
    let _ = writeln!(out, "{}", crate::floor::description());
    let actions = super::action_words(policy);
    let own: Vec<&String> = actions
        .iter()
        .filter(|a| !super::ACTIONS.contains(&a.as_str()))
        .collect();
    let _ = writeln!(out, "## Actions\n");
    let _ = writeln!(
        out,
        "Built in: {}. Named by this policy's rules: {}. Any other action word is scoped as the policy scopes an action it does not know (`ctxgate trim` warns about it).\n",
        super::ACTIONS.map(|a| format!("`{a}`")).join(", "),
        match own.is_empty() {
            true => "none besides those".to_string(),
            false => own.iter().map(|a| format!("`{}`", escape(a))).collect::<Vec<_>>().join(", "),
        }
    );
    let _ = writeln!(out, "## Rules\n");
    let _ = writeln!(out, "| kind | rule | what it does | where |");
    let _ = writeln!(out, "|---|---|---|---|");
    // A rule is documented when some definition of it has METADATA.
    let mut documented = std::collections::HashSet::new();
    for file in policy.files() {
        for doc in rule_docs(file) {
            documented.insert(doc.name.clone());
            let _ = writeln!(
                out,
                "| {} | {} | {} | {}:{} |",
                doc.kind,
                escape(doc.title.as_deref().unwrap_or(&doc.name)),
                escape(doc.description.as_deref().unwrap_or("")),
                doc.file,
                doc.line
            );
        }
    }
    let (_, _, heads) = compile_with_heads(policy.files(), false)?;
    for head in heads {
        let name = head.name();
        if documented.insert(name.to_string()) {
            let _ = writeln!(
                out,
                "| {} | `{name}` | (no METADATA) | {}:{} |",
                kind_of(name),
                head.file,
                head.line
            );
        }
    }
    let plans: Vec<(&str, Arc<RequestPlan>)> = ACTIONS
        .iter()
        .map(|a| Ok((*a, policy.plan(&probe_request(a, None))?)))
        .collect::<Result<_>>()?;
    // Every action's decision on every probe: the matrix below, and what
    // each action strips for the table of actions.
    let mut names: Vec<String> = plans
        .iter()
        .flat_map(|(_, plan)| plan.title_patterns.iter().map(|(n, _)| n.clone()))
        .collect();
    names.sort();
    names.dedup();
    let probe_set = policy_probes(&mentions(policy.files()), &names, true);
    let mut decisions: Vec<Vec<Arc<Decision>>> = Vec::new();
    for action in ACTIONS {
        let mut evaluator = policy.evaluator(&probe_request(action, None))?;
        let column = probe_set
            .iter()
            .map(|probe| evaluator.decide(&probe.input()))
            .collect::<Result<_>>()?;
        decisions.push(column);
    }
    let _ = writeln!(out, "\n## Per action\n");
    let _ = writeln!(
        out,
        "| action | scope | budget | redactions | title patterns | attribute values read | attributes stripped |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    for (n, (action, plan)) in plans.iter().enumerate() {
        let stripped: std::collections::BTreeSet<&str> = decisions[n]
            .iter()
            .flat_map(|d| d.strip.iter().map(|name| &**name))
            .collect();
        let stripped: Vec<&str> = stripped.into_iter().collect();
        let ids: Vec<&str> = plan.redact.iter().map(|r| r.id.as_str()).collect();
        let names: Vec<&str> = plan
            .title_patterns
            .iter()
            .map(|(n, _)| n.as_str())
            .collect();
        let _ = writeln!(
            out,
            "| {action} | {} | {} | {} | {} | {} | {} |",
            serde_json::to_value(plan.scope)
                .expect("scope")
                .as_str()
                .unwrap_or(""),
            budget_text(plan.budget),
            ids.join(", "),
            names.join(", "),
            if plan.element_attributes.is_empty() {
                "none".to_string()
            } else {
                plan.element_attributes.join(", ")
            },
            if stripped.is_empty() {
                "none".to_string()
            } else {
                escape(&stripped.join(", "))
            }
        );
    }
    let mut redactions: Vec<(String, String, String, bool)> = Vec::new();
    let mut title_patterns: Vec<(String, String)> = Vec::new();
    for (_, plan) in &plans {
        for r in &plan.redact {
            let entry = (
                r.id.clone(),
                r.regex.as_str().to_string(),
                r.replace.clone(),
                r.luhn,
            );
            if !redactions.contains(&entry) {
                redactions.push(entry);
            }
        }
        for (n, r) in &plan.title_patterns {
            let entry = (n.clone(), r.as_str().to_string());
            if !title_patterns.contains(&entry) {
                title_patterns.push(entry);
            }
        }
    }
    let _ = writeln!(out, "\n## Redaction patterns\n");
    let _ = writeln!(
        out,
        "Applied natively to every string that leaves (titles, content, urls, attribute values).\n"
    );
    let _ = writeln!(out, "| id | pattern | replaced by | Luhn-checked |");
    let _ = writeln!(out, "|---|---|---|---|");
    for (id, pattern, replace, luhn) in &redactions {
        let _ = writeln!(
            out,
            "| {id} | `{}` | `{}` | {} |",
            escape(pattern),
            escape(replace),
            if *luhn { "yes" } else { "no" }
        );
    }
    let _ = writeln!(out, "\n## Title patterns\n");
    let _ = writeln!(out, "Matched natively against titles; the policy sees only the names in `input.element.title_matches` (an element's title) and `input.app.title_matches` (the app's).\n");
    let _ = writeln!(out, "| name | pattern |");
    let _ = writeln!(out, "|---|---|");
    for (name, pattern) in &title_patterns {
        let _ = writeln!(out, "| {name} | `{}` |", escape(pattern));
    }
    let _ = writeln!(out, "\n## Decisions\n");
    let _ = writeln!(out, "Each cell: the class that wins (reasons), the attributes `strip` removes when it is sent (`strips author`) · priority. `scope` means no rule spoke: the action's scope and the budget decide. Elements sit in a Window (Documents directly, others in a Group).\n");
    let _ = write!(out, "| element |");
    for action in ACTIONS {
        let _ = write!(out, " {action} |");
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "|---|{}", "---|".repeat(ACTIONS.len()));
    let columns: Vec<Vec<String>> = decisions
        .iter()
        .map(|column| column.iter().map(|d| cell(d)).collect())
        .collect();
    let mut hidden = 0;
    for (i, probe) in probe_set.iter().enumerate() {
        // A combination of states says something new to a reviewer only
        // when it decides what none of its states does alone: a single
        // state is shown when it changes the role's class or reasons, a
        // combination when its class is none of its single states' (nor
        // the role's). The rest are left out and counted.
        if let Some(role) = probe.combination_of {
            let row = |label: &str| probe_set.iter().position(|p| p.label == label);
            let class = |cell: &str| cell.split(" · ").next().unwrap_or("").to_string();
            // The winning class and what it strips: what a combination can
            // decide that its states do not.
            let outcome = |cell: &str| {
                let class = class(cell);
                let strips = class.split_once(", strips ").map(|(_, s)| s.to_string());
                let word = class.split([' ', ',']).next().unwrap_or("").to_string();
                (word, strips)
            };
            let states: Vec<&str> = probe
                .label
                .strip_prefix(&format!("{role}, "))
                .unwrap_or("")
                .split(", ")
                .collect();
            let base = row(role.as_str());
            let hide = match (states.len(), base) {
                (1, Some(b)) => columns.iter().all(|c| class(&c[i]) == class(&c[b])),
                (_, Some(b)) => columns.iter().all(|c| {
                    let mut known = vec![outcome(&c[b])];
                    for s in &states {
                        if let Some(r) = row(&format!("{role}, {s}")) {
                            known.push(outcome(&c[r]));
                        }
                    }
                    known.contains(&outcome(&c[i]))
                }),
                _ => false,
            };
            if hide {
                hidden += 1;
                continue;
            }
        }
        let _ = write!(out, "| {} |", escape(&probe.label));
        for column in &columns {
            let _ = write!(out, " {} |", column[i]);
        }
        let _ = writeln!(out);
    }
    if hidden > 0 {
        let _ = writeln!(
            out,
            "\n{hidden} more combinations of the states the policy reads decide nothing their states do not decide alone (priorities may differ); `ctxgate policy plan` lists every probe."
        );
    }
    Ok(out)
}

/// The per-request results for an action and the decisions on the probe set, as JSON.
pub fn plan_json(policy: &Policy, action: &str, target: Option<&str>) -> Result<serde_json::Value> {
    let request = probe_request(action, target);
    let mut evaluator = policy.evaluator(&request)?;
    let plan = evaluator.plan().clone();
    let budget = match plan.budget {
        Some(Budget::Tokens(n)) => serde_json::json!({ "tokens": n }),
        Some(Budget::Bytes(n)) => serde_json::json!({ "bytes": n }),
        None => serde_json::Value::Null,
    };
    let redact: Vec<serde_json::Value> = plan
        .redact
        .iter()
        .map(|r| serde_json::json!({ "id": r.id, "pattern": r.regex.as_str(), "replace": r.replace, "luhn": r.luhn }))
        .collect();
    let names: Vec<String> = plan.title_patterns.iter().map(|(n, _)| n.clone()).collect();
    let title_patterns: serde_json::Map<String, serde_json::Value> = plan
        .title_patterns
        .iter()
        .map(|(n, r)| (n.clone(), r.as_str().into()))
        .collect();
    let mut elements = Vec::new();
    for probe in policy_probes(&mentions(policy.files()), &names, true) {
        let decision = evaluator.decide(&probe.input())?;
        let (class, by) = decision.outcome();
        let list = |v: &[Arc<str>]| v.iter().map(|r| r.to_string()).collect::<Vec<_>>();
        elements.push(serde_json::json!({
            "element": probe.label,
            "outcome": class,
            "by": list(by),
            "deny": list(&decision.deny),
            "mask": list(&decision.mask),
            "keep": list(&decision.keep),
            "prune": list(&decision.prune),
            "priority": decision.priority,
            "strip": list(&decision.strip),
        }));
    }
    Ok(serde_json::json!({
        "policy": policy.hash(),
        "action": { "name": action, "target": target },
        "scope": plan.scope,
        "budget": budget,
        "redact": redact,
        "title_patterns": title_patterns,
        "element_attributes": plan.element_attributes,
        "elements": elements,
    }))
}
