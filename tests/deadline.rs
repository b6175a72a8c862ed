//! A request's deadline: checked across reading, checking,
//! deciding and fitting; on expiry the error names the stage and nothing is
//! sent. No test here measures speed: each one makes a stage outlast a
//! deadline and asserts which stage is named.

use std::time::Duration;

use ctxgate::{Error, Gate, Policy, Request, Stage};

const NOTES: &str = include_str!("../examples/notes.json");

fn stage<T>(result: ctxgate::Result<T>) -> Stage {
    match result {
        Err(Error::Deadline { stage, .. }) => stage,
        Err(other) => panic!("expected a deadline error, got: {other}"),
        Ok(_) => panic!("expected a deadline error, got an output"),
    }
}

#[test]
fn a_deadline_passed_while_reading_names_reading() {
    let gate = Gate::embedded_default().unwrap();
    let request = Request::new("app").timeout(Duration::from_nanos(1));
    assert_eq!(
        stage(gate.trim_bytes(NOTES.as_bytes(), &request)),
        Stage::Read
    );
}

#[test]
fn a_deadline_passed_while_reading_a_large_tree_stops_the_reader() {
    // 200,000 siblings: the reader checks the clock every 1,024 elements.
    let mut json = String::from(
        r#"{"protocol":"0.2.0","instance":"i","root":{"id":"app","role":"Application","children":["#,
    );
    for i in 0..200_000 {
        if i > 0 {
            json.push(',');
        }
        json.push_str(&format!(r#"{{"id":"t{i}","role":"Text"}}"#));
    }
    json.push_str("]}}");
    let gate = Gate::embedded_default().unwrap();
    let request = Request::new("app").timeout(Duration::from_nanos(1));
    let err = gate.trim_bytes(json.as_bytes(), &request).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the request passed its deadline of 0 ms while reading; nothing was sent \
         (raise the request's timeout, `--timeout`, or send a smaller tree)"
    );
}

#[test]
fn a_deadline_passed_before_the_tree_is_checked_names_checking() {
    let gate = Gate::embedded_default().unwrap();
    let answer = ctxgate::read_conforming(NOTES.as_bytes(), gate.limits()).unwrap();
    let request = Request::new("app").timeout(Duration::from_nanos(1));
    assert_eq!(stage(gate.trim(&answer, &request)), Stage::Check);
}

#[test]
fn a_slow_policy_is_stopped_by_the_request_deadline_not_only_its_own_limit() {
    // Each evaluation takes a while but stays under the policy's 1 s limit;
    // many distinct projections would add up to minutes.
    let policy = Policy::from_sources(vec![(
        "slow.rego".into(),
        r#"package ctxgate

# METADATA
# title: Slow
# description: counts for a while on every element.
prune contains "slow" if {
	n := count([x | some x in numbers.range(1, 2000); x % 7 == 0])
	n < 0
}
"#
        .into(),
    )])
    .unwrap();
    let gate = Gate::new(policy);
    let mut json = String::from(
        r#"{"protocol":"0.2.0","instance":"i","root":{"id":"app","role":"Application","children":["#,
    );
    for i in 0..2_000 {
        if i > 0 {
            json.push(',');
        }
        json.push_str(&format!(
            r#"{{"id":"t{i}","role":"Group","subrole":"s{i}"}}"#
        ));
    }
    json.push_str("]}}");
    let request = Request::new("app").timeout(Duration::from_millis(300));
    let started = std::time::Instant::now();
    assert_eq!(
        stage(gate.trim_bytes(json.as_bytes(), &request)),
        Stage::Decide
    );
    // Not a timing assertion on speed: a request bounded by its deadline
    // must not run for the minutes 2,000 evaluations would take.
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn the_cli_names_the_stage_and_prints_nothing() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .args(["trim", "--action", "app", "--timeout", "1ms"])
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/notes.json"))
        .env_remove("CTXGATE_LOG")
        .output()
        .unwrap();
    // notes.json may trim within 1 ms on a fast machine; a 1 ns deadline
    // cannot be written on the command line, so accept either outcome but
    // never a partial one.
    match out.status.code() {
        Some(0) => assert!(!out.stdout.is_empty()),
        Some(1) => {
            assert!(out.stdout.is_empty());
            let err = String::from_utf8(out.stderr).unwrap();
            assert!(
                err.starts_with("error: the request passed its deadline of 1 ms while "),
                "{err}"
            );
        }
        other => panic!("exit {other:?}"),
    }
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .args(["trim", "--timeout", "soon", "examples/notes.json"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8(bad.stderr)
        .unwrap()
        .contains("`soon` is not a duration; write a number and a unit: `500ms`, `2s`, `1m`"));
}
