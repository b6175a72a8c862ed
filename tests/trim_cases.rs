//! Trimming over the cases in `tests/cases/trim/<name>/`: `request.json`
//! says the action, target, budget, format and policy (default: the
//! embedded one), and the answer (`answer.json` beside it, or a path);
//! `expected.txt` holds what is sent (or the error) and the report.
//! `UPDATE_EXPECT=1` rewrites the expectations for review.

mod common;

use std::collections::HashMap;
use std::path::Path;

use common::{expect_file, root, without_notices};
use ctxgate::{Budget, Format, Gate, Request};
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
            // What is sent conforms; trimming it again sends the same
            // elements (notices are each trim's own), and trimming that
            // again changes nothing.
            let findings = ctxgate::check(&out.answer);
            assert!(
                findings.iter().all(|f| !f.is_error()),
                "{}: {findings:?}",
                dir.display()
            );
            let again = gate.trim(&out.answer, &request).unwrap();
            assert_eq!(
                without_notices(&again.answer),
                without_notices(&out.answer),
                "{}: not sent again",
                dir.display()
            );
            let twice = gate.trim(&again.answer, &request).unwrap();
            assert_eq!(
                twice.rendered,
                again.rendered,
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

/// What `ctxgate trim` writes to stdout is exactly what the budget
/// measured, newline included: nothing is added after it, so an output at
/// the budget is at most the budget on stdout.
#[test]
fn stdout_never_exceeds_the_budget_at_the_edge() {
    let gate = Gate::embedded_default().unwrap();
    let notes = std::fs::read(root().join("examples/notes.json")).unwrap();
    for (format, name) in [(Format::Json, "json"), (Format::Outline, "outline")] {
        let whole = gate
            .trim_bytes(&notes, &Request::new("app").format(format))
            .unwrap()
            .rendered;
        for budget in [
            whole.len() + 1,
            whole.len(),
            whole.len() - 1,
            whole.len() - 40,
        ] {
            let out = common::ctxgate(
                &[
                    "trim",
                    "--action",
                    "app",
                    "--format",
                    name,
                    "--max-bytes",
                    &budget.to_string(),
                    "examples/notes.json",
                ],
                b"",
            );
            assert!(out.stdout.len() <= budget, "{name} {budget}");
            let expected = gate.trim_bytes(
                &notes,
                &Request::new("app")
                    .format(format)
                    .budget(Budget::Bytes(budget)),
            );
            match expected {
                Ok(expected) => {
                    assert_eq!(out.status.code(), Some(0), "{name} {budget}");
                    assert_eq!(String::from_utf8(out.stdout).unwrap(), expected.rendered);
                }
                Err(_) => assert_eq!((out.status.code(), out.stdout.len()), (Some(1), 0)),
            }
        }
        // The outline's lines end with a newline; JSON ends with its brace.
        assert_eq!(whole.ends_with('\n'), format == Format::Outline);
    }
}

/// An answer whose element `w` carries `ctxgate:omitted` with `counts`.
fn carrying(counts: &str, child: bool) -> Vec<u8> {
    let child = if child {
        r#","children":[{"id":"x","role":"Row","title":"hidden","visible":false}]"#
    } else {
        ""
    };
    format!(
        r#"{{"protocol":"0.2.0","instance":"i","root":{{"id":"app","role":"Application","children":[{{"id":"w","role":"Window","focused":true,"attributes":{{"ctxgate:omitted":{counts}}}{child}}}]}}}}"#
    )
    .into_bytes()
}

/// A provider's `ctxgate:omitted` is input, whatever its counts (2^64−1,
/// numbers no count is, a card number): dropped and counted, never carried
/// or refused; the output's notice is ctxgate's own count of what it left
/// out.
#[test]
fn a_provider_s_omitted_counts_are_dropped_never_carried() {
    let gate = Gate::embedded_default().unwrap();
    let max = u64::MAX;
    for counts in [
        format!(r#"{{"children":{max},"reasons":{{"budget":{max}}}}}"#),
        r#"{"children":4111111111111111,"reasons":{"budget":4111111111111111}}"#.to_string(),
        r#"{"budget":4111111111111111}"#.to_string(),
        r#"{"children":18446744073709551616,"reasons":{"budget":18446744073709551616}}"#
            .to_string(),
        r#"{"children":1,"reasons":{"budget":1e3}}"#.to_string(),
        r#"{"children":2.5,"reasons":{"budget":-1}}"#.to_string(),
    ] {
        for child in [false, true] {
            let input = carrying(&counts, child);
            let out = gate.trim_bytes(&input, &Request::new("app")).unwrap();
            assert_eq!(out.report.reserved_attributes_dropped, 1, "{counts}");
            for digits in ["4111", "1844", "1e3", "2.5"] {
                assert!(!out.rendered.contains(digits), "{counts}: {}", out.rendered);
            }
            // The invisible child, left out by the default policy, is
            // ctxgate's one count.
            let notice = out.answer.root.children[0]
                .attributes
                .get("ctxgate:omitted")
                .cloned();
            let want = child
                .then(|| serde_json::json!({"children": 1, "reasons": {"prune:invisible": 1}}));
            assert_eq!(notice, want, "{counts}: {}", out.rendered);
        }
    }
}
