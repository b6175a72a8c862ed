//! The example clients in `examples/clients/` (Python, standard library
//! only; Node, no dependencies) run against the real binary and print what
//! the server returned. The Node test skips, saying so, only when `node` is
//! not installed.

mod serve_support;

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;
use serve_support::*;

/// Runs a client on a fixture with a deadline; its stdout lines.
fn run_client(program: &str, script: &str) -> Vec<String> {
    let answer = root().join("tests/fixtures/answers/uia-input-types.json");
    let mut child = Command::new(program)
        .arg(root().join("examples/clients").join(script))
        .arg(&answer)
        .arg("app")
        .env("CTXGATE", env!("CARGO_BIN_EXE_ctxgate"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{program} runs: {e}"));
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > REPLY {
            let _ = child.kill();
            panic!("{script} did not finish within {REPLY:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{script}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

/// What every client prints: the output, then the policy hash and the
/// outcome counts, then the error kind of an unreachable budget.
fn assert_client_output(lines: &[String]) {
    assert_eq!(lines.len(), 3, "{lines:?}");
    let output: Value = serde_json::from_str(&lines[0]).expect("the output is the trimmed answer");
    assert_eq!(output["protocol"], "0.2.0");
    let summary: Value = serde_json::from_str(&lines[1]).unwrap();
    // The embedded default policy, as `ctxgate trim` reports it.
    let trim = Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .args(["trim", "--json"])
        .arg(root().join("tests/fixtures/answers/uia-input-types.json"))
        .output()
        .unwrap();
    let trim: Value = serde_json::from_slice(&trim.stdout).unwrap();
    assert_eq!(summary["policy"], trim["report"]["policy_hash"]);
    assert_eq!(summary["outcomes"]["masked"], 1, "{summary}");
    let error: Value = serde_json::from_str(&lines[2]).unwrap();
    assert_eq!(error["error"], "budget_unreachable");
    assert!(error["needed"].as_u64().unwrap() > 1);
}

#[test]
fn the_python_client_trims_through_the_server() {
    assert_client_output(&run_client("python3", "ctxgate_client.py"));
}

#[test]
fn the_node_client_trims_through_the_server() {
    if Command::new("node").arg("--version").output().is_err() {
        eprintln!("SKIPPED: `node` is not installed; the Node client was not run");
        return;
    }
    assert_client_output(&run_client("node", "ctxgate_client.mjs"));
}
