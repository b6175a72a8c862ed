//! Trimming over the cases in `tests/cases/trim/<name>/`: `request.json`
//! says the action, target, budget, format and policy (default: the
//! embedded one), and the answer (`answer.json` beside it, or a path);
//! `expected.txt` holds what is sent (or the error) and the report.
//! `UPDATE_EXPECT=1` rewrites the expectations for review.

mod common;

use std::collections::HashMap;
use std::path::Path;

use common::{expect_file, root};
use ctxgate::policy::Budget;
use ctxgate::render::Format;
use ctxgate::{Gate, Request};
use serde_json::Value;

fn request_of(spec: &Value) -> Request {
    let mut request = Request::new(spec["action"].as_str().unwrap_or("focus"));
    if let Some(target) = spec["target"].as_str() {
        request = request.target(target);
    }
    if let Some(n) = spec["budget"]["bytes"].as_u64() {
        request = request.budget(Budget::Bytes(n as usize));
    }
    if let Some(n) = spec["budget"]["tokens"].as_u64() {
        request = request.budget(Budget::Tokens(n as usize));
    }
    if spec["format"] == "outline" {
        request = request.format(Format::Outline);
    }
    request
}

fn run_case(dir: &Path, gates: &mut HashMap<String, Gate>) -> String {
    let spec: Value =
        serde_json::from_slice(&std::fs::read(dir.join("request.json")).unwrap()).unwrap();
    let answer = match spec["answer"].as_str() {
        Some(path) => root().join(path),
        None => dir.join("answer.json"),
    };
    let bytes = std::fs::read(&answer).unwrap();
    let policy = spec["policy"].as_str().unwrap_or("").to_string();
    let gate = gates.entry(policy.clone()).or_insert_with(|| {
        if policy.is_empty() {
            Gate::embedded_default().unwrap()
        } else {
            Gate::from_policy_path(root().join(&policy)).unwrap()
        }
    });
    let request = request_of(&spec);
    let trimmed = gate.trim_bytes(&bytes, &request);
    match trimmed {
        Ok(out) => {
            // What is sent conforms, and trimming it again changes nothing.
            let findings = ctxgate::check(&out.answer);
            assert!(
                findings.iter().all(|f| !f.is_error()),
                "{}: {findings:?}",
                dir.display()
            );
            let again = gate.trim(&out.answer, &request).unwrap();
            assert_eq!(
                again.rendered,
                out.rendered,
                "{}: not idempotent",
                dir.display()
            );
            let mut report = out.report.clone();
            report.policy_hash = "<hash>".into();
            format!(
                "{}\n--- report\n{}\n",
                out.rendered,
                serde_json::to_string_pretty(&report).unwrap()
            )
        }
        Err(err) => format!("error: {err}\n"),
    }
}

#[test]
fn trim_cases_match_their_expectations() {
    let base = root().join("tests/cases/trim");
    let mut dirs: Vec<_> = std::fs::read_dir(&base)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("request.json").exists())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 15, "trim cases missing");
    let mut gates = HashMap::new();
    let mut failures = Vec::new();
    for dir in &dirs {
        let actual = run_case(dir, &mut gates);
        if let Err(mismatch) = expect_file(&dir.join("expected.txt"), &actual) {
            failures.push(mismatch);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn canaries_in_the_cases_never_leave() {
    let base = root().join("tests/cases/trim");
    for entry in std::fs::read_dir(&base).unwrap() {
        let expected = entry.unwrap().path().join("expected.txt");
        if let Ok(text) = std::fs::read_to_string(&expected) {
            assert!(!text.contains("CANARY"), "{}", expected.display());
            for secret in [
                "hunter2",
                "4111 1111 1111 1111",
                "ghp_abcdef",
                "AKIAIOSFODNN7EXAMPLE",
                "abcdefghijklmnopqrstuvwxyz012345",
            ] {
                assert!(!text.contains(secret), "{secret} in {}", expected.display());
            }
        }
    }
}
