//! The decision log (`--decision-log FILE`): one JSON line per request with
//! the report's counts, never content; rotated by size. And the server's
//! own log (stderr, at the most verbose level) carries no element text.

mod serve_support;

use serde_json::{json, Value};
use serve_support::*;

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}")))
        .collect()
}

#[test]
fn one_line_per_request_with_counts_and_no_content() {
    let dir = scratch("decision-log");
    let log = dir.join("decisions.jsonl");
    let policy = dir.join("vault.rego");
    std::fs::write(&policy, vault_policy(8000)).unwrap();
    let mut server = Stdio::start(&[
        "--policy",
        policy.to_str().unwrap(),
        "--decision-log",
        log.to_str().unwrap(),
    ]);
    let answer = with_canaries(fixture("screen2ax-chats-window.json"));
    let ok = server.call(
        1,
        "trim",
        json!({"answer": answer, "action": "app", "max_bytes": 6000}),
    );
    let report = &ok["result"]["report"];
    server.call(2, "trim", json!({"answer": answer, "max_bytes": 3}));
    server.call(3, "check", json!({"answer": answer}));
    server.call(4, "policy", Value::Null);
    server.send("not json");
    server.recv();
    let (status, _) = server.finish();
    assert!(status.success());

    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains(CANARY), "content in the decision log");
    let entries = lines(&log);
    assert_eq!(entries.len(), 5, "{text}");
    let ids: Vec<u64> = entries
        .iter()
        .map(|e| e["request_id"].as_u64().unwrap())
        .collect();
    let mut unique = ids.clone();
    unique.dedup();
    assert_eq!(unique.len(), 5, "request ids are distinct: {ids:?}");
    for entry in &entries {
        assert_eq!(entry["transport"], "stdio");
        assert_eq!(entry["policy_hash"], report["policy_hash"]);
        assert!(entry["time"].as_str().unwrap().ends_with('Z'));
        assert!(entry["duration_us"].is_u64());
    }
    let trim = &entries[0];
    assert_eq!(trim["method"], "trim");
    assert_eq!(trim["action"], "app");
    assert_eq!(trim["trim"]["outcomes"], report["outcomes"]);
    assert_eq!(trim["trim"]["rules"], report["rules"]);
    assert_eq!(trim["trim"]["budgets"], report["budgets"]);
    assert_eq!(trim["trim"]["rules"]["deny:vault"], 1, "{trim}");
    assert!(trim.get("error_kind").is_none());
    assert_eq!(entries[1]["error_kind"], "budget_unreachable");
    assert_eq!(entries[2]["method"], "check");
    assert_eq!(entries[2]["conforms"], true);
    assert_eq!(entries[3]["method"], "policy");
    assert_eq!(entries[4]["error_kind"], "invalid_input");
}

#[test]
fn the_log_rotates_by_size() {
    let dir = scratch("decision-log-rotation");
    let log = dir.join("d.jsonl");
    let mut server = Stdio::start(&[
        "--decision-log",
        log.to_str().unwrap(),
        "--decision-log-max-bytes",
        "2000",
    ]);
    let answer = fixture("uia-input-types.json");
    for id in 0..40 {
        server.call(id, "trim", json!({"answer": answer, "action": "app"}));
    }
    let (status, _) = server.finish();
    assert!(status.success());
    let mut total = 0;
    for name in ["d.jsonl", "d.jsonl.1", "d.jsonl.2", "d.jsonl.3"] {
        let path = dir.join(name);
        let size = std::fs::metadata(&path)
            .unwrap_or_else(|_| panic!("{name} exists"))
            .len();
        assert!(size <= 2000, "{name} is {size} bytes");
        total += lines(&path).len();
    }
    assert!(!dir.join("d.jsonl.4").exists());
    assert!(total < 40, "old lines beyond three files are dropped");
}

#[test]
fn the_servers_own_log_carries_no_element_text() {
    let dir = scratch("stderr-log");
    let policy = dir.join("vault.rego");
    std::fs::write(&policy, vault_policy(8000)).unwrap();
    // The most verbose level, library spans included.
    let mut server = Stdio::start_with_env(
        &["--policy", policy.to_str().unwrap()],
        &[("CTXGATE_LOG", "trace")],
    );
    for (n, (_, answer)) in fixtures().into_iter().enumerate() {
        let reply = server.call(
            n as u64,
            "trim",
            json!({"answer": with_canaries(answer), "action": "app"}),
        );
        assert!(reply["result"].is_object(), "{reply}");
    }
    let (status, stderr) = server.finish();
    assert!(status.success());
    assert!(stderr.contains("serving"), "{stderr}");
    assert!(!stderr.contains(CANARY), "element text on stderr");
}
