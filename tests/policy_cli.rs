//! `ctxgate policy` through the binary: exact findings with file:line:col,
//! exit codes, the test runner, doc and plan.

use std::process::{Command, Output};

fn ctxgate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("ctxgate runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn check(path: &str) -> (i32, String) {
    let output = ctxgate(&["policy", "check", path]);
    (output.status.code().unwrap(), stdout(&output))
}

#[test]
fn check_reports_a_syntax_error() {
    assert_eq!(
        check("tests/policies/syntax_error.rego"),
        (1, "tests/policies/syntax_error.rego:6:6: error: expecting `}` while parsing query\n1 file: 1 error, 0 warnings\n".to_string())
    );
}

#[test]
fn check_reports_an_unknown_function() {
    assert_eq!(
        check("tests/policies/unknown_function.rego"),
        (1, "tests/policies/unknown_function.rego:5:5: error: unknown function `strings.contains_secure`\n1 file: 1 error, 0 warnings\n".to_string())
    );
}

#[test]
fn check_reports_a_misspelled_input_field() {
    assert_eq!(
        check("tests/policies/misspelled_field.rego"),
        (1, "tests/policies/misspelled_field.rego:5:31: error: `input.element.subrol` is not in the input (did you mean `input.element.subrole`?)\n1 file: 1 error, 0 warnings\n".to_string())
    );
}

#[test]
fn check_reports_role_names_outside_the_language() {
    assert_eq!(
        check("tests/policies/wrong_role.rego"),
        (
            1,
            "tests/policies/wrong_role.rego:4:24: error: `TextField` is not a role (did you mean `Text`?)\n\
             tests/policies/wrong_role.rego:9:38: error: `Docment` is not a role (did you mean `Document`?)\n\
             1 file: 2 errors, 0 warnings\n"
                .to_string()
        )
    );
}

#[test]
fn check_reports_a_runtime_error_on_a_probe_element() {
    assert_eq!(
        check("tests/policies/probe_error.rego"),
        (1, "tests/policies/probe_error.rego:3:24: error: could not parse string as number (evaluating `priority` for element Image, action `selection`)\n1 file: 1 error, 0 warnings\n".to_string())
    );
}

#[test]
fn check_refuses_a_misspelled_decision_rule() {
    assert_eq!(
        check("tests/policies/unused_rule.rego"),
        (1, "tests/policies/unused_rule.rego:3:1: error: rule `denny` is not one ctxgate reads (did you mean `deny`?); as written it decides nothing\n1 file: 1 error, 0 warnings\n".to_string())
    );
}

#[test]
fn check_warns_when_a_request_rule_reads_the_element() {
    assert_eq!(
        check("tests/policies/request_reads_element.rego"),
        (0, "tests/policies/request_reads_element.rego:4:2: warning: `scope` is evaluated once per request, where `input.element` is undefined\n1 file: 0 errors, 1 warning\n".to_string())
    );
}

#[test]
fn check_reports_recursion() {
    assert_eq!(
        check("tests/policies/recursive_function.rego"),
        (1, "tests/policies/recursive_function.rego:4:1: error: recursion: `depth` -> `depth`; a rule or function may not depend on itself\n1 file: 1 error, 0 warnings\n".to_string())
    );
}

#[test]
fn check_passes_the_default_policy() {
    let output = ctxgate(&["policy", "check"]);
    assert_eq!(stdout(&output), "2 files: 0 errors, 0 warnings\n");
    assert_eq!(output.status.code(), Some(0));
    let output = ctxgate(&["policy", "check", "policies"]);
    assert_eq!(stdout(&output), "2 files: 0 errors, 0 warnings\n");
}

#[test]
fn check_of_a_missing_path_is_a_usage_error() {
    let output = ctxgate(&["policy", "check", "tests/policies/no-such.rego"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stdout(&output).is_empty());
    assert!(
        String::from_utf8_lossy(&output.stderr).starts_with("error: tests/policies/no-such.rego: ")
    );
}

#[test]
fn test_runs_the_default_policy_tests() {
    for args in [&["policy", "test"][..], &["policy", "test", "policies"][..]] {
        let output = ctxgate(args);
        let text = stdout(&output);
        assert_eq!(output.status.code(), Some(0), "{text}");
        let last = text.lines().last().unwrap();
        assert!(last.ends_with(" passed, 0 failed"), "{last}");
        assert!(!last.starts_with("0 "), "{last}");
        assert!(text.lines().filter(|l| l.starts_with("PASS test_")).count() >= 10);
    }
}

#[test]
fn test_reports_failures_and_errors() {
    let output = ctxgate(&["policy", "test", "tests/policies/failing"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stdout(&output),
        "PASS test_focused_is_kept\n\
         FAIL test_unfocused_is_kept: tests/policies/failing/policy_test.rego:7: false at tests/policies/failing/policy_test.rego:8: `\"focus-path\" in keep with input as {\"element\": {\"focused\": false}}`\n\
         ERROR test_errors: tests/policies/failing/policy_test.rego:12:16: could not parse string as number\n\
         1 passed, 2 failed\n"
    );
}

#[test]
fn test_without_tests_fails() {
    let output = ctxgate(&["policy", "test", "tests/policies/runtime_error.rego"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout(&output), "0 passed, 0 failed\n");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "error: no tests ran: no `test_*` rule in a `*_test.rego` file\n"
    );
}

#[test]
fn doc_names_every_rule_the_floor_and_the_matrix() {
    let output = ctxgate(&["policy", "doc"]);
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/policies/default.rego"
    ))
    .unwrap();
    let titles: Vec<&str> = source
        .lines()
        .filter_map(|l| l.strip_prefix("# title: "))
        .collect();
    assert!(titles.len() >= 20);
    for title in titles {
        assert!(text.contains(title), "doc lacks `{title}`");
    }
    assert!(!text.contains("(no METADATA)"));
    assert!(text.contains("`floor:secure-text`"));
    assert!(text.contains(
        "| Text, subrole AXSecureTextField | mask (floor:secure-text, secure-text) · 30 |"
    ));
    assert!(text.contains("| Document, focused | keep (enclosing-document, focus-path) · 100 | keep (enclosing-document, focus-path) · 100 | keep (focus-path) · 100 | keep (focus-path) · 100 |"));
    assert!(
        text.contains("| card-number | `\\d+(?:[-./+ \\t\\r\\n\\x{A0}\\x{2007}\\x{2009}\\x{202F}\\x{3000}\\x{2010}-\\x{2015}\\x{2027}\\x{30FB}\\x{30FC}\\x{FF0D}\\x{FF0F}\\x{FF65}\\x{FF70}]{1,3}\\d+)*` | `[card number]` | yes |")
    );
}

#[test]
fn plan_prints_the_request_plan_and_probe_decisions() {
    let output = ctxgate(&["policy", "plan", "--action", "selection", "--target", "e-1"]);
    assert_eq!(output.status.code(), Some(0));
    let plan: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(plan["scope"], "selection");
    assert_eq!(plan["budget"], serde_json::json!({"tokens": 8000}));
    assert_eq!(
        plan["action"],
        serde_json::json!({"name": "selection", "target": "e-1"})
    );
    assert_eq!(plan["redact"].as_array().unwrap().len(), 33);
    assert!(plan["title_patterns"]["password"].is_string());
    let secure = plan["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["element"] == "Text, subrole AXSecureTextField")
        .unwrap();
    assert_eq!(secure["outcome"], "mask");
    assert_eq!(
        secure["by"],
        serde_json::json!(["floor:secure-text", "secure-text"])
    );
}

fn ctxgate_with_stdin(args: &[&str], env: &[(&str, &str)], stdin: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .args(args)
        .env_remove("CTXGATE_LOG")
        .envs(env.iter().copied())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("ctxgate runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// An answer whose field's value and app title a policy could print.
const BANK: &str = r#"{"protocol":"0.2.0","instance":"i","root":{"id":"app","role":"Application","title":"Bank of Ada","children":[{"id":"w","role":"Window","focused":true,"children":[{"id":"f","role":"Text","attributes":{"AXValue":"hunter2 is mine"},"focused":true},{"id":"g","role":"Text","attributes":{"AXValue":"hunter2"}}]}]}}"#;

#[test]
fn trim_never_writes_what_a_policy_prints() {
    for log in [None, Some("trace")] {
        let env: Vec<(&str, &str)> = log.map(|l| ("CTXGATE_LOG", l)).into_iter().collect();
        let output = ctxgate_with_stdin(
            &[
                "trim",
                "--policy",
                "tests/policies/prints",
                "--action",
                "app",
            ],
            &env,
            BANK,
        );
        assert_eq!(output.status.code(), Some(0));
        let stderr = String::from_utf8_lossy(&output.stderr);
        if log.is_none() {
            assert_eq!(stderr, "");
        } else {
            assert!(stderr.contains("policy prints dropped"), "{stderr}");
        }
        assert!(
            !stderr.contains("hunter2") && !stderr.contains("Ada"),
            "{stderr}"
        );
        // The policy still decided: the password field is withheld.
        assert!(stdout(&output).contains(r#"{"id":"g","role":"Text","attributes":{"ctxgate:withheld":{"rule":"mask:secure-text","empty":false}}}"#), "{}", stdout(&output));
    }
}

#[test]
fn policy_test_shows_what_the_tests_print_one_line_each() {
    let output = ctxgate(&["policy", "test", "tests/policies/prints"]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        stdout(&output),
        "PASS test_a_password_value_is_masked\n\
         \x20 print tests/policies/prints/policy.rego:11: value: hunter2 title: [\"bank\"]\n\
         PASS test_the_print_is_escaped\n\
         \x20 print tests/policies/prints/policy_test.rego:8: two\\nlines\n\
         \x20 print tests/policies/prints/policy.rego:16: focused? false\n\
         2 passed, 0 failed\n"
    );
}

#[test]
fn trim_fails_closed_when_a_reason_carries_a_value() {
    let output = ctxgate_with_stdin(
        &[
            "trim",
            "--policy",
            "tests/policies/reason_from_value.rego",
            "--action",
            "app",
        ],
        &[],
        BANK,
    );
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stdout(&output), "");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "error: policy evaluation failed (mask): `mask` holds a reason of 15 bytes that is not a rule id; reasons are written into notices and the report, so each must match `[a-z0-9][a-z0-9._:-]{0,63}` (a constant such as `\"secure-text\"`, never a value read from the input)\n"
    );
}

/// `policy test --watch`: the tests run, then again when a test file
/// changes (a test made to fail shows as a FAIL in the second run), until
/// the process is stopped. Bounded: each wait for output gives up after 30 s.
#[test]
fn test_watch_runs_again_when_a_file_changes() {
    use std::io::{BufRead, BufReader};
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    let dir = std::env::temp_dir().join(format!("ctxgate-watch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let root = env!("CARGO_MANIFEST_DIR");
    std::fs::copy(
        format!("{root}/policies/default.rego"),
        dir.join("default.rego"),
    )
    .unwrap();
    let test_file = dir.join("default_test.rego");
    std::fs::copy(format!("{root}/policies/default_test.rego"), &test_file).unwrap();

    let mut child = Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .args(["policy", "test", "--watch", "--run", "scope"])
        .arg(&dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("ctxgate runs");
    let (lines, received) = mpsc::channel::<String>();
    for stream in [
        Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
        Box::new(child.stderr.take().unwrap()),
    ] {
        let lines = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                let _ = lines.send(line);
            }
        });
    }
    // stdout and stderr arrive on two threads: lines of one run may
    // interleave in any order, so each step waits for a set of lines.
    let mut seen = Vec::new();
    let mut wait_for_all = |wants: &[&str]| {
        let mut missing: Vec<&str> = wants.to_vec();
        let deadline = Instant::now() + Duration::from_secs(30);
        while !missing.is_empty() {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                break;
            };
            let Ok(line) = received.recv_timeout(left) else {
                break;
            };
            missing.retain(|want| !line.contains(want));
            seen.push(line);
        }
        assert!(
            missing.is_empty(),
            "no {missing:?} within 30 s; saw:\n{}",
            seen.join("\n")
        );
    };
    // The first run, then the watch.
    wait_for_all(&["2 passed, 0 failed", "watching 1 path for changes"]);
    // A test made to fail: the second run shows it.
    let source = std::fs::read_to_string(&test_file).unwrap();
    let broken = source.replace(
        r#"scope == "window" with input as req("window", {})"#,
        r#"scope == "app" with input as req("window", {})"#,
    );
    assert_ne!(source, broken);
    std::fs::write(&test_file, broken).unwrap();
    wait_for_all(&[
        "a file changed: running the tests again",
        "FAIL test_scope_follows_the_action",
        "1 passed, 1 failed",
    ]);
    child.kill().unwrap();
    child.wait().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--watch` needs something that can change.
#[test]
fn test_watch_without_a_path_is_a_usage_error() {
    let output = ctxgate(&["policy", "test", "--watch"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("`--watch` needs a PATH that can change")
    );
}

/// Outside a checkout there is no `policies/default.rego`: the embedded
/// default and its tests are named `<default>` and `<default-tests>`.
#[test]
fn the_embedded_default_is_named_for_what_it_is() {
    let dir = std::env::temp_dir().join(format!("ctxgate-default-name-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("wide.rego"),
        "package ctxgate\n\ndefault on_focus_or_selected := true\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_ctxgate"))
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap()
    };
    let tests = run(&[
        "policy",
        "test",
        "-v",
        "--run",
        "^test_secure_text_is_masked$",
    ]);
    assert_eq!(tests.status.code(), Some(0));
    assert!(stdout(&tests).starts_with("PASS test_secure_text_is_masked (<default-tests>:"));
    let layered = run(&["policy", "check", "default", "wide.rego"]);
    assert_eq!(layered.status.code(), Some(1));
    assert!(stdout(&layered).contains("is also defined by layer 1 (<default>:"));
    for output in [&tests, &layered] {
        let all = format!(
            "{}{}",
            stdout(output),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(!all.contains("policies/"), "{all}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
