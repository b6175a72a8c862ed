//! Data-driven policy cases, one runner for all (as regorus's
//! `tests/interpreter/cases`): each folder of `tests/cases/policy/` holds a
//! `case.json` and, unless the case names another file, its `policy.rego`.
//!
//! `case.json`: `policy` (a path from the crate root; default the folder's
//! `policy.rego`), `action` (default `focus`), then either `load_error`
//! (the exact message), `plan_error` / `plan_error_prefix`, or `elements`:
//! projections as the policy sees them (`input.element` fields, plus
//! `inside`: `[{"role", "subrole"?}]`, nearest first), each with `expect`:
//! the decision (`deny`, `mask`, `keep`, `prune`: the deciding rules;
//! `priority`; `strip`: the attribute names removed), or `error`, the
//! exact message.

use std::path::{Path, PathBuf};

use crate::policy::{Action, Decision, ElementInput, Inside, Policy, RequestInput};
use crate::Role;
use serde_json::{json, Value};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn strings(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .map(|items| items.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn role(value: &Value) -> Role {
    let word = value.as_str().expect("a role word");
    Role::from_word(word).unwrap_or_else(|| panic!("unknown role `{word}`"))
}

/// A projection from its JSON (`input.element` fields and `inside`).
fn projection(e: &Value) -> ElementInput<'_> {
    let flag = |name: &str, default: bool| e[name].as_bool().unwrap_or(default);
    let inside: Inside<'_> = e["inside"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|a| (role(&a["role"]), a["subrole"].as_str()))
                .collect()
        })
        .unwrap_or_default();
    ElementInput {
        role: role(&e["role"]),
        subrole: e["subrole"].as_str(),
        selected: flag("selected", false),
        focused: flag("focused", false),
        visible: flag("visible", true),
        hovered: flag("hovered", false),
        has_title: flag("has_title", true),
        has_content: flag("has_content", false),
        contains_selection: flag("contains_selection", false),
        attribute_names: strings(&e["attribute_names"]),
        attributes: e["attributes"]
            .as_object()
            .map(|m| m.iter().map(|(k, v)| (k.as_str(), v)).collect())
            .unwrap_or_default(),
        title_matches: strings(&e["title_matches"]),
        inside,
        secure_elsewhere: false,
    }
}

fn decision_json(d: &Decision) -> Value {
    let reasons = |r: &[std::sync::Arc<str>]| r.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    json!({
        "deny": reasons(&d.deny),
        "mask": reasons(&d.mask),
        "keep": reasons(&d.keep),
        "prune": reasons(&d.prune),
        "priority": d.priority,
        "strip": reasons(&d.strip),
    })
}

/// The expected decision with absent classes empty and priority 0.
fn expected_decision(want: &Value) -> Value {
    json!({
        "deny": want.get("deny").cloned().unwrap_or(json!([])),
        "mask": want.get("mask").cloned().unwrap_or(json!([])),
        "keep": want.get("keep").cloned().unwrap_or(json!([])),
        "prune": want.get("prune").cloned().unwrap_or(json!([])),
        "priority": want.get("priority").and_then(Value::as_f64).unwrap_or(0.0),
        "strip": want.get("strip").cloned().unwrap_or(json!([])),
    })
}

/// Runs one case; the mismatches it finds.
fn run_case(dir: &Path) -> Vec<String> {
    let name = dir.file_name().unwrap().to_string_lossy().to_string();
    let case: Value =
        serde_json::from_slice(&std::fs::read(dir.join("case.json")).unwrap()).unwrap();
    let policy_path = match case["policy"].as_str() {
        Some(path) => PathBuf::from(path),
        None => dir.strip_prefix(root()).unwrap().join("policy.rego"),
    };
    let mut failures = Vec::new();
    let policy = match Policy::from_path(&policy_path) {
        Ok(policy) => policy,
        Err(err) => {
            match case["load_error"].as_str() {
                Some(want) if want == err.to_string() => {}
                _ => failures.push(format!("{name}: load: {err}")),
            }
            return failures;
        }
    };
    if case.get("load_error").is_some() {
        return vec![format!("{name}: the policy loaded")];
    }
    let request = RequestInput {
        action: Action {
            name: case["action"].as_str().unwrap_or("focus").to_string(),
            target: None,
        },
        instance: "test".to_string(),
        protocol: "0.2.0".to_string(),
    };
    let mut evaluator = match policy.evaluator(&request) {
        Ok(evaluator) => evaluator,
        Err(err) => {
            let err = err.to_string();
            let exact = case["plan_error"].as_str().is_some_and(|w| w == err);
            let prefix = case["plan_error_prefix"]
                .as_str()
                .is_some_and(|w| err.starts_with(w));
            if !exact && !prefix {
                failures.push(format!("{name}: plan: {err}"));
            }
            return failures;
        }
    };
    if case.get("plan_error").is_some() || case.get("plan_error_prefix").is_some() {
        return vec![format!("{name}: the plan succeeded")];
    }
    if let Some(want) = case.get("element_attributes") {
        let got = json!(evaluator.plan().element_attributes);
        if &got != want {
            failures.push(format!("{name}: element_attributes {got}, expected {want}"));
        }
    }
    let elements = case["elements"].as_array().expect("`elements`");
    assert!(!elements.is_empty(), "{name}: no elements");
    for (i, e) in elements.iter().enumerate() {
        let got = match evaluator.decide(&projection(e)) {
            Ok(d) => json!({ "decision": decision_json(&d) }),
            Err(err) => json!({ "error": err.to_string() }),
        };
        let want = &e["expect"];
        let want = match want.get("error") {
            Some(error) => json!({ "error": error }),
            None => json!({ "decision": expected_decision(want) }),
        };
        if got != want {
            failures.push(format!("{name}: element {i}: got {got}, expected {want}"));
        }
    }
    failures
}

#[test]
fn policy_cases_match_their_expectations() {
    let base = root().join("tests/cases/policy");
    let mut dirs: Vec<_> = std::fs::read_dir(&base)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("case.json").exists())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 9, "policy cases missing");
    // Paths in cases and messages are from the crate root.
    std::env::set_current_dir(root()).unwrap();
    let failures: Vec<String> = dirs.iter().flat_map(|d| run_case(d)).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
