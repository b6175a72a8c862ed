//! `ctxgate check` over the cases in `tests/cases/check/`: each `NAME.json`
//! is checked by the binary, and what the user sees (exit code, stdout,
//! stderr) must equal `NAME.expected`. `UPDATE_EXPECT=1` rewrites them.

mod common;

use common::{ctxgate, expect_file, files, root, transcript};

#[test]
fn check_cases_match_their_expectations() {
    let dir = root().join("tests/cases/check");
    let cases = files(&dir, "json");
    assert!(cases.len() >= 20, "the check cases are missing");
    let mut failures = Vec::new();
    for case in &cases {
        let input = std::fs::read(case).expect("case readable");
        let output = ctxgate(&["check"], &input);
        if let Err(mismatch) = expect_file(&case.with_extension("expected"), &transcript(&output)) {
            failures.push(mismatch);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_rejection_names_a_pointer_and_a_requirement() {
    let dir = root().join("tests/cases/check");
    for case in files(&dir, "json") {
        let input = std::fs::read(&case).expect("case readable");
        let output = ctxgate(&["check", "--json"], &input);
        match output.status.code() {
            Some(0) | Some(1) => {}
            Some(2) => continue, // not JSON: the message gives line and column
            other => panic!("{}: exit {other:?}", case.display()),
        }
        let report: serde_json::Value =
            serde_json::from_slice(&output.stdout).expect("JSON report");
        for finding in report["findings"].as_array().expect("findings") {
            let pointer = finding["pointer"].as_str().expect("pointer");
            assert!(
                pointer.is_empty() || pointer.starts_with('/'),
                "{}: {finding}",
                case.display()
            );
            assert!(
                finding["requirement"].is_string(),
                "{}: {finding}",
                case.display()
            );
        }
        let conforms = report["conforms"].as_bool().expect("conforms");
        assert_eq!(
            conforms,
            output.status.code() == Some(0),
            "{}",
            case.display()
        );
    }
}

/// Builds `{"protocol":…,"root":{…"children":[{…"children":[…]}]}}` with
/// `depth` elements on one line, without recursion.
fn deep_tree(depth: usize) -> Vec<u8> {
    let mut json = String::from(r#"{"protocol":"0.2.0","instance":"deep","root":"#);
    json.push_str(r#"{"id":"e0","role":"Application","children":["#);
    for i in 1..depth {
        json.push_str(&format!(r#"{{"id":"e{i}","role":"Group","children":["#));
    }
    for _ in 0..depth {
        json.push_str("]}");
    }
    json.push('}');
    json.into_bytes()
}

#[test]
fn a_tree_100000_deep_is_rejected_with_the_depth_error_not_a_crash() {
    let output = ctxgate(&["check"], &deep_tree(100_000));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(output.stdout.is_empty());
    assert!(
        stderr.starts_with("error: the tree is deeper than the limit of 1024 elements"),
        "{stderr}"
    );
    assert!(stderr.contains("--max-depth"), "{stderr}");
}

#[test]
fn the_library_reads_100000_deep_without_overflow_and_names_the_limit() {
    // On a test thread (2 MiB stack): neither the reader nor drop recurses
    // on the thread's stack.
    let err = ctxgate::read(&deep_tree(100_000), &ctxgate::Limits::default()).unwrap_err();
    assert!(
        matches!(err, ctxgate::Error::TooDeep { limit: 1024, .. }),
        "{err}"
    );
}

#[test]
fn trees_up_to_the_depth_limit_are_accepted_and_deeper_raised_limits_work() {
    let limits = ctxgate::Limits::default();
    let bytes = deep_tree(limits.max_depth);
    let ok = ctxgate::read_conforming(&bytes, &limits).expect("1024 deep reads");
    assert_eq!(ctxgate::Tree::new(&ok.root).len(), limits.max_depth);
    let err = ctxgate::read(&deep_tree(limits.max_depth + 1), &limits).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the tree is deeper than the limit of 1024 elements (at /root".to_string()
            + &"/children/0".repeat(1024)
            + ") (`max_depth`, `--max-depth`)"
    );
    // A host that raises the limit reads (and frees) a 100,000-deep tree.
    let raised = ctxgate::Limits {
        max_depth: 100_000,
        ..limits
    };
    // Detached from its input (`into_owned` is iterative too).
    let deep = ctxgate::read_conforming(&deep_tree(100_000), &raised)
        .expect("raised limit")
        .into_owned();
    assert_eq!(ctxgate::Tree::new(&deep.root).len(), 100_000);
    drop(deep);
}

#[test]
fn limits_on_elements_input_and_content_are_named() {
    let wide = format!(
        r#"{{"protocol":"0.2.0","instance":"i","root":{{"id":"app","role":"Application","children":[{}]}}}}"#,
        (0..10)
            .map(|i| format!(r#"{{"id":"t{i}","role":"Text"}}"#))
            .collect::<Vec<_>>()
            .join(",")
    );
    let few = ctxgate::Limits {
        max_elements: 5,
        ..Default::default()
    };
    let err = ctxgate::read(wide.as_bytes(), &few).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the tree has more than 5 elements (`max_elements`, `--max-elements`)"
    );

    let small = ctxgate::Limits {
        max_input_bytes: 10,
        ..Default::default()
    };
    let err = ctxgate::read(wide.as_bytes(), &small).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "the input is {} bytes; the limit is 10 (`max_input_bytes`, `--max-input-bytes`)",
            wide.len()
        )
    );

    let big = format!(
        r#"{{"protocol":"0.2.0","instance":"i","root":{{"id":"app","role":"Application","children":[{{"id":"t","role":"Text","content":[{{"type":"text","text":"{}"}}]}}]}}}}"#,
        "a".repeat(100)
    );
    let tight = ctxgate::Limits {
        max_content_bytes: 64,
        ..Default::default()
    };
    let err = ctxgate::read(big.as_bytes(), &tight).unwrap_err();
    assert_eq!(
        err.to_string(),
        "element at /root/children/0 carries 100 bytes of title, url and content; the limit is 64 (`max_content_bytes`, `--max-content-bytes`)"
    );
}

#[test]
fn a_byte_order_mark_is_accepted() {
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(std::fs::read(root().join("examples/notes.json")).unwrap());
    ctxgate::read_conforming(&bytes, &ctxgate::Limits::default()).expect("BOM is skipped");
}

#[test]
fn effective_states_follow_r2_on_the_rfc_example() {
    let bytes = std::fs::read(root().join("examples/notes.json")).unwrap();
    let answer = ctxgate::read_conforming(&bytes, &ctxgate::Limits::default()).unwrap();
    let tree = ctxgate::Tree::new(&answer.root);
    let focused: Vec<&str> = tree
        .nodes()
        .iter()
        .filter(|n| n.focused)
        .map(|n| &*n.element.id)
        .collect();
    assert_eq!(focused, ["w-1", "th-2", "c-3"]);
    let selected: Vec<&str> = tree
        .nodes()
        .iter()
        .filter(|n| n.selected)
        .map(|n| &*n.element.id)
        .collect();
    assert_eq!(selected, ["sel-4"]);
    assert!(tree.nodes().iter().all(|n| n.visible && !n.hovered));
    assert_eq!(tree.focus().map(|f| &*tree.node(f).element.id), Some("c-3"));
}

#[test]
fn serializing_an_answer_reads_back_the_same() {
    let bytes = std::fs::read(root().join("tests/cases/check/v01-upgrade.json")).unwrap();
    let answer = ctxgate::read_conforming(&bytes, &ctxgate::Limits::default()).unwrap();
    let again = serde_json::to_vec(&answer).unwrap();
    let back = ctxgate::read_conforming(&again, &ctxgate::Limits::default()).unwrap();
    assert_eq!(answer, back);
    assert_eq!(answer.protocol, "0.2.0");
}
