//! `ctxgate serve` on stdio (JSON-RPC 2.0, one object per line): the three
//! methods, `trim --json` parity, each bad input the server must survive
//! (each followed by a request that must still work), and the shutdown.

mod serve_support;

use std::time::Duration;

use serde_json::{json, Value};
use serve_support::*;

/// A request that must still be answered after a fault.
fn still_answers(server: &mut Stdio, id: u64) {
    let reply = server.call(
        id,
        "trim",
        json!({"answer": fixture("uia-input-types.json"), "max_bytes": 2000}),
    );
    assert!(reply["result"]["output"].is_string(), "{reply}");
}

#[test]
fn trim_check_and_policy_answer_on_stdout() {
    let mut server = Stdio::start(&[]);
    let policy = server.call(1, "policy", Value::Null);
    let hash = policy["result"]["hash"]
        .as_str()
        .expect("a hash")
        .to_string();
    assert_eq!(policy["result"]["files"], json!(["<default>"]));
    assert_eq!(policy["result"]["last_reload_error"], Value::Null);
    assert!(policy["result"]["loaded_at"]
        .as_str()
        .unwrap()
        .ends_with('Z'));

    for (n, (name, answer)) in fixtures().into_iter().enumerate() {
        let reply = server.call(
            10 + n as u64,
            "trim",
            json!({"answer": answer, "action": "window", "max_tokens": 1500}),
        );
        let result = &reply["result"];
        assert_eq!(result["report"]["policy_hash"], hash.as_str(), "{name}");
        assert_eq!(result["report"]["action"], "window", "{name}");
        let output: Value =
            serde_json::from_str(result["output"].as_str().unwrap()).expect("JSON output");
        assert_eq!(output["protocol"], "0.2.0", "{name}");
    }
    // `answer_text` and the outline format.
    let text = std::fs::read_to_string(root().join("tests/fixtures/answers/mac-apg-treegrid.json"))
        .unwrap();
    let reply = server.call(
        50,
        "trim",
        json!({"answer_text": text, "format": "outline", "action": "app"}),
    );
    assert_eq!(reply["result"]["report"]["format"], "outline");
    assert!(!reply["result"]["output"].as_str().unwrap().starts_with('{'));

    let reply = server.call(
        51,
        "check",
        json!({"answer": fixture("mac-apg-treegrid.json")}),
    );
    assert_eq!(reply["result"]["conforms"], true, "{reply}");
    let reply = server.call(52, "check", json!({"answer": {"protocol": "0.2.0"}}));
    assert_eq!(reply["result"]["conforms"], false);
    assert!(
        reply["result"]["findings"][0]["pointer"].is_string(),
        "{reply}"
    );

    let (status, stderr) = server.finish();
    assert!(status.success(), "{stderr}");
}

#[test]
fn trim_json_prints_what_serve_returns() {
    let path = root().join("tests/fixtures/answers/screen2ax-chats-window.json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .args(["trim", "--json", "--action", "app", "--max-bytes", "4000"])
        .arg(&path)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(out.status.success());
    let cli: Value = serde_json::from_slice(&out.stdout).unwrap();

    let mut server = Stdio::start(&[]);
    let reply = server.call(1, "trim", json!({"answer": fixture("screen2ax-chats-window.json"), "action": "app", "max_bytes": 4000}));
    assert_eq!(reply["result"], cli);

    // Errors: the same object on stderr, with the usual exit code.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .args(["trim", "--json", "--max-bytes", "3"])
        .arg(&path)
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let cli: Value = serde_json::from_slice(&out.stderr).unwrap();
    let reply = server.call(
        2,
        "trim",
        json!({"answer": fixture("screen2ax-chats-window.json"), "max_bytes": 3}),
    );
    assert_eq!(reply["error"], cli["error"]);
    assert_eq!(cli["error"]["data"]["kind"], "budget_unreachable");
    assert!(cli["error"]["data"]["needed"].as_u64().unwrap() > 3);

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .args(["trim", "--json", "no-such-file.json"])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let cli: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(cli["error"]["data"]["kind"], "io");

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .args(["trim", "--report", "-"])
        .arg(&path)
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("use `--json`"));
}

#[test]
fn garbage_gets_a_parse_error_and_the_server_goes_on() {
    let mut server = Stdio::start(&[]);
    server.send("this is not json");
    let reply = server.recv();
    assert_eq!(reply["id"], Value::Null);
    assert_eq!(reply["error"]["code"], -32700);
    assert_eq!(reply["error"]["data"]["kind"], "invalid_input");
    assert!(reply["error"]["data"]["column"].is_number());
    server.send_raw(&[0xff, 0xfe, b'{', b'\n']);
    assert_eq!(server.recv()["error"]["code"], -32700);
    still_answers(&mut server, 2);
}

#[test]
fn a_request_that_is_not_json_rpc_is_an_invalid_request() {
    let mut server = Stdio::start(&[]);
    server.send(r#"{"id": 7, "method": "policy"}"#);
    let reply = server.recv();
    assert_eq!(
        (reply["id"].clone(), reply["error"]["code"].clone()),
        (json!(7), json!(-32600))
    );
    server.send(r#"{"jsonrpc": "2.0", "id": {"deep": 1}, "method": "policy"}"#);
    assert_eq!(server.recv()["error"]["code"], -32600);
    still_answers(&mut server, 2);
}

#[test]
fn an_unknown_method_is_method_not_found() {
    let mut server = Stdio::start(&[]);
    let reply = server.call(1, "trimm", json!({}));
    assert_eq!(reply["error"]["code"], -32601);
    assert_eq!(reply["error"]["data"]["kind"], "usage");
    still_answers(&mut server, 2);
}

#[test]
fn bad_params_are_usage_errors() {
    let mut server = Stdio::start(&[]);
    let answer = fixture("uia-input-types.json");
    for (n, params) in [
        json!({"answer": answer, "max_token": 10}),
        json!({"answer": answer, "max_tokens": 10, "max_bytes": 10}),
        json!({"answer": answer, "answer_text": "{}"}),
        json!({"answer": answer, "format": "yaml"}),
        json!({"answer": answer, "timeout_ms": 0}),
        json!({"action": "app"}),
        json!({"answer": answer, "target": "no-such-element"}),
    ]
    .into_iter()
    .enumerate()
    {
        let reply = server.call(n as u64, "trim", params.clone());
        assert_eq!(reply["error"]["data"]["kind"], "usage", "{params}: {reply}");
        assert_eq!(reply["error"]["code"], -32602);
    }
    let reply = server.call(20, "trim", Value::Null);
    assert_eq!(reply["error"]["data"]["kind"], "usage");
    still_answers(&mut server, 21);
}

#[test]
fn an_answer_that_does_not_conform_names_its_findings() {
    let mut server = Stdio::start(&[]);
    let reply = server.call(1, "trim", json!({"answer": {"protocol": "0.2.0", "instance": "x", "root": {"id": "a", "role": "Nonsense"}}}));
    assert_eq!(reply["error"]["data"]["kind"], "not_conforming", "{reply}");
    assert_eq!(reply["error"]["data"]["findings"][0]["pointer"], "/root");
    assert!(!reply["error"]["data"]["findings"][0]["message"]
        .as_str()
        .unwrap()
        .is_empty());
    let reply = server.call(2, "trim", json!({"answer_text": "{\"protocol\": "}));
    assert_eq!(reply["error"]["data"]["kind"], "invalid_input");
    assert!(reply["error"]["data"]["line"].is_number());
    still_answers(&mut server, 3);
}

#[test]
fn an_oversized_line_is_refused_and_skipped_to_its_end() {
    let mut server = Stdio::start(&["--max-request-bytes", "10000"]);
    let big = fixture("atspi-firefox-zbus-docs.json");
    server.send(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "trim", "params": {"answer": big}})
            .to_string(),
    );
    let reply = server.recv();
    assert_eq!(reply["error"]["data"]["kind"], "over_limit", "{reply}");
    assert_eq!(reply["error"]["data"]["limit"], 10000);
    still_answers(&mut server, 2);
}

#[test]
fn a_tree_over_a_limit_is_refused_with_the_limit() {
    let mut server = Stdio::start(&["--max-elements", "20"]);
    let reply = server.call(
        1,
        "trim",
        json!({"answer": fixture("uia-input-types.json")}),
    );
    assert_eq!(reply["error"]["data"]["kind"], "over_limit");
    assert_eq!(reply["error"]["data"]["limit"], 20);
    let reply = server.call(2, "check", json!({"answer": {"protocol": "0.2.0", "instance": "x", "root": {"id": "a", "role": "Application"}}}));
    assert_eq!(reply["result"]["conforms"], true, "{reply}");
}

#[test]
fn a_deeply_nested_line_is_answered_not_crashed_on() {
    let mut server = Stdio::start(&[]);
    let deep = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
    server.send(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"trim","params":{{"answer":{deep}}}}}"#
    ));
    let reply = server.recv();
    assert!(reply["error"].is_object(), "{reply}");
    server.send(&format!(r#"{{"jsonrpc":"2.0","id":2,"method":"trim","params":{{"answer":{deep}, "action": {deep}}}}}"#));
    assert_eq!(server.recv()["error"]["data"]["kind"], "usage");
    still_answers(&mut server, 3);
}

#[test]
fn a_request_past_its_deadline_sends_nothing() {
    let mut server = Stdio::start(&["--timeout", "1ms"]);
    let reply = server.call(
        1,
        "trim",
        json!({"answer": fixture("mac-apg-data-grids.json"), "action": "app"}),
    );
    assert_eq!(reply["error"]["data"]["kind"], "deadline", "{reply}");
    assert!(reply.get("result").is_none());
}

#[test]
fn past_the_queue_requests_are_refused_as_overloaded() {
    let mut server = Stdio::start(&["--max-concurrency", "1", "--max-queue", "0"]);
    let line = json!({"jsonrpc": "2.0", "id": 0, "method": "trim", "params": {"answer": fixture("mac-apg-data-grids.json"), "action": "app"}}).to_string();
    // All at once: with one worker and no queue, some are refused.
    let mut burst = String::new();
    for id in 0..20 {
        burst.push_str(&line.replacen("\"id\":0", &format!("\"id\":{id}"), 1));
        burst.push('\n');
    }
    server.send_raw(burst.as_bytes());
    let replies: Vec<Value> = (0..20).map(|_| server.recv()).collect();
    let refused: Vec<&Value> = replies
        .iter()
        .filter(|r| r["error"]["data"]["kind"] == "overloaded")
        .collect();
    assert!(!refused.is_empty(), "none refused");
    assert!(refused.len() < 20, "all refused");
    for r in &refused {
        assert_eq!(r["error"]["code"], -32020);
        assert!(r["id"].is_number(), "the refusal names the request: {r}");
    }
    for r in &replies {
        assert!(
            r["result"].is_object() || r["error"]["data"]["kind"] == "overloaded",
            "{r}"
        );
    }
    still_answers(&mut server, 100);
}

#[test]
fn a_notification_gets_no_reply() {
    let mut server = Stdio::start(&[]);
    server.send(r#"{"jsonrpc":"2.0","method":"policy"}"#);
    server.send(r#"{"jsonrpc":"2.0","id":null,"method":"policy"}"#);
    let reply = server.recv();
    assert_eq!(reply["id"], Value::Null);
    assert!(reply["result"]["hash"].is_string());
    assert!(server.try_recv(Duration::from_millis(300)).is_none());
}

#[test]
fn a_truncated_last_line_is_answered_then_the_server_exits_0() {
    let mut server = Stdio::start(&[]);
    still_answers(&mut server, 1);
    server.send_raw(br#"{"jsonrpc":"2.0","id":2,"method":"tr"#);
    server.close();
    let reply = server.recv();
    assert_eq!(reply["error"]["code"], -32700);
    let (status, stderr) = server.finish();
    assert_eq!(status.code(), Some(0), "{stderr}");
}

#[test]
fn end_of_input_finishes_the_requests_in_flight() {
    let mut server = Stdio::start(&["--max-concurrency", "2"]);
    let answer = fixture("mac-apg-data-grids.json");
    let mut burst = String::new();
    for id in 0..8 {
        burst.push_str(&json!({"jsonrpc": "2.0", "id": id, "method": "trim", "params": {"answer": answer, "action": "app"}}).to_string());
        burst.push('\n');
    }
    server.send_raw(burst.as_bytes());
    server.close();
    let mut ids: Vec<u64> = (0..8)
        .map(|_| {
            let reply = server.recv();
            assert!(reply["result"].is_object(), "{reply}");
            reply["id"].as_u64().unwrap()
        })
        .collect();
    ids.sort();
    assert_eq!(ids, (0..8).collect::<Vec<_>>());
    let (status, stderr) = server.finish();
    assert_eq!(status.code(), Some(0), "{stderr}");
}

#[test]
fn sigterm_finishes_the_requests_in_flight_and_exits_0() {
    let mut server = Stdio::start(&["--max-concurrency", "1"]);
    still_answers(&mut server, 0);
    let answer = fixture("mac-apg-data-grids.json");
    let mut burst = String::new();
    for id in 1..=6 {
        burst.push_str(&json!({"jsonrpc": "2.0", "id": id, "method": "trim", "params": {"answer": answer, "action": "app"}}).to_string());
        burst.push('\n');
    }
    server.send_raw(burst.as_bytes());
    // Once the first is answered the rest are admitted.
    assert!(server.recv()["result"].is_object());
    signal(server.pid(), "TERM");
    for _ in 0..5 {
        let reply = server.recv();
        assert!(
            reply["result"].is_object(),
            "an admitted request was dropped: {reply}"
        );
    }
    let (status, stderr) = server.wait();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("SIGTERM"), "{stderr}");
}

#[test]
fn a_policy_that_does_not_load_stops_the_server_before_it_serves() {
    let dir = scratch("broken-start");
    let path = dir.join("broken.rego");
    std::fs::write(&path, "package ctxgate\nscope := \n").unwrap();
    let server = Stdio::start(&["--policy", path.to_str().unwrap()]);
    let (status, stderr) = server.finish();
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("broken.rego:"), "{stderr}");
}

/// `serve --policy default --policy extra/` layers the policy as `trim`
/// does: the same hash, both layers' files, the extra layer's deny applied.
#[test]
fn serve_layers_policies_as_trim_does() {
    let extra = "tests/policies/layers/extra";
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .args(["trim", "--json", "--policy", "default", "--policy", extra])
        .arg(root().join("tests/fixtures/answers/uia-input-types.json"))
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cli: Value = serde_json::from_slice(&out.stdout).unwrap();

    let mut server = Stdio::start(&["--policy", "default", "--policy", extra]);
    let policy = server.call(1, "policy", Value::Null);
    assert_eq!(policy["result"]["hash"], cli["report"]["policy_hash"]);
    let files = policy["result"]["files"].as_array().unwrap();
    assert_eq!(files.len(), 2, "{files:?}");
    assert_ne!(
        policy["result"]["hash"],
        Stdio::start(&[]).call(1, "policy", Value::Null)["result"]["hash"]
    );
    let chat = json!({
        "protocol": "0.2.0",
        "instance": "t",
        "root": {"id": "app", "role": "Application", "children": [
            {"id": "w", "role": "Window", "subrole": "chat", "title": "private chat line"}
        ]}
    });
    let reply = server.call(2, "trim", json!({"answer": chat, "action": "app"}));
    let output = reply["result"]["output"].as_str().expect("an output");
    assert!(!output.contains("private chat line"), "{output}");
    still_answers(&mut server, 3);
}
