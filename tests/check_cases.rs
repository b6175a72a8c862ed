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
            // Not JSON (exit 1, like any rejected input): no report; the
            // message gives line and column.
            Some(1) if output.stdout.is_empty() => continue,
            Some(0) | Some(1) => {}
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

/// The error findings of reading and checking `json`, as `ctxgate check`
/// prints them.
fn errors(json: &str) -> Vec<String> {
    let report = ctxgate::check_bytes(json.as_bytes(), &ctxgate::Limits::default())
        .unwrap_or_else(|e| panic!("{json}: {e}"));
    report
        .findings
        .iter()
        .filter(|f| f.is_error())
        .map(|f| f.to_string())
        .collect()
}

/// An answer whose root has these extra fields (JSON, comma-first).
fn root_with(fields: &str) -> String {
    format!(
        r#"{{"protocol":"0.2.0","instance":"i","root":{{"id":"app","role":"Application"{fields}}}}}"#
    )
}

const REPEATED: &str =
    "appears twice in one object; write each key once (JSON readers differ on which value counts)";

#[test]
fn a_repeated_key_is_refused_at_every_level_with_the_pointer_of_the_second() {
    let cases: &[(String, &str)] = &[
        (
            r#"{"protocol":"0.2.0","instance":"i","protocol":"0.2.0","root":{"id":"a","role":"Application"}}"#.into(),
            "error[4.1] /protocol: field `protocol` appears twice in the answer",
        ),
        (
            r#"{"protocol":"0.2.0","instance":"i","root":{"id":"a","role":"Application"},"root":{"id":"b","role":"Application"}}"#.into(),
            "error[4.1] /root: field `root` appears twice in the answer",
        ),
        (
            r#"{"protocol":"0.2.0","instance":"i","x/y":1,"root":{"id":"a","role":"Application"},"x/y":2}"#.into(),
            "error[4.1] /x~1y: field `x/y` appears twice in the answer",
        ),
        (
            root_with(r#","role":"Application""#),
            "error[4.1] /root/role: field `role` appears twice in one element",
        ),
        (
            root_with(r#","note":1,"title":"t","note":2"#),
            "error[4.1] /root/note: field `note` appears twice in one element",
        ),
        (
            root_with(r#","attributes":{"a":1,"b":2,"a":3}"#),
            "error[4.1] /root/attributes/a: key `a` REPEATED",
        ),
        (
            root_with(r#","attributes":{"a":{"b":[0,{"c~d":1,"c~d":2}]}}"#),
            "error[4.1] /root/attributes/a/b/1/c~0d: key `c~d` REPEATED",
        ),
        (
            root_with(r#","content":[{"type":"text","text":"x"},{"type":"text","text":"x","text":"y"}]"#),
            "error[4.1] /root/content/1/text: key `text` REPEATED",
        ),
        (
            root_with(r#","content":[{"type":"text","type":"image","text":"x"}]"#),
            "error[4.1] /root/content/0/type: key `type` REPEATED",
        ),
        (
            root_with(r#","content":[{"type":"text","text":"x","annotations":{"p":1,"p":2}}]"#),
            "error[4.1] /root/content/0/annotations/p: key `p` REPEATED",
        ),
        (
            root_with(r#","content":[{"type":"resource","resource":{"uri":"u","text":"t","uri":"v"}}]"#),
            "error[4.1] /root/content/0/resource/uri: key `uri` REPEATED",
        ),
        (
            // More keys than are compared pairwise: the sorted path.
            root_with(r#","content":[{"type":"text","a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"text":"t","e":9}]"#),
            "error[4.1] /root/content/0/e: key `e` REPEATED",
        ),
        (
            r#"{"protocol":"0.1","instance":"i","items":[{"id":"a","type":"pane","id":"b"}]}"#.into(),
            "error[4.1] /items/0/id: key `id` REPEATED",
        ),
        (
            r#"{"protocol":"0.1","instance":"i","items":[{"id":"a","type":"pane"},{"id":"b","type":"row","payload":{"k":1,"k":2}}]}"#.into(),
            "error[4.1] /items/1/payload/k: key `k` REPEATED",
        ),
        (
            r#"{"protocol":"0.1","instance":"i","items":[{"id":"a","type":"pane","content":[{"type":"text","text":"x","text":"y"}]}]}"#.into(),
            "error[4.1] /items/0/content/0/text: key `text` REPEATED",
        ),
        (
            r#"{"protocol":"0.1","instance":"i","items":[],"focus":[],"items":[]}"#.into(),
            "error[4.1] /items: field `items` appears twice in the answer",
        ),
    ];
    for (json, expected) in cases {
        let expected = expected.replace("REPEATED", REPEATED);
        assert_eq!(errors(json), [expected], "{json}");
    }
}

#[test]
fn every_repeated_key_of_an_element_is_named_and_distinct_keys_pass() {
    // Many unknown fields, each once: no finding but the warnings.
    let many: String = (0..40).map(|i| format!(r#","k{i}":{i}"#)).collect();
    assert_eq!(errors(&root_with(&many)), Vec::<String>::new());
    // Two of them repeated, among many: each second one named, in order.
    let repeated = format!(r#"{many},"k7":0,"title":"t","k3":0,"k7":1"#);
    assert_eq!(
        errors(&root_with(&repeated)),
        [
            "error[4.1] /root/k7: field `k7` appears twice in one element",
            "error[4.1] /root/k3: field `k3` appears twice in one element",
            "error[4.1] /root/k7: field `k7` appears twice in one element",
        ]
    );
    // Attribute objects of many keys, each once, are read whole.
    let attributes: Vec<String> = (0..40).map(|i| format!(r#""a{i}":{i}"#)).collect();
    let json = root_with(&format!(r#","attributes":{{{}}}"#, attributes.join(",")));
    let answer = ctxgate::read_conforming(json.as_bytes(), &ctxgate::Limits::default()).unwrap();
    assert_eq!(answer.root.attributes.len(), 40);
}

/// A 0.1 answer of `n` items on one parent chain, listed leaf first (so
/// each item's parent comes after it), every item focused.
fn chain_01(n: usize) -> Vec<u8> {
    let mut json = String::from(r#"{"protocol":"0.1","instance":"chain","items":["#);
    for i in (0..n).rev() {
        if i + 1 < n {
            json.push(',');
        }
        json.push_str(&format!(r#"{{"id":"i{i}","type":"row""#));
        if i > 0 {
            json.push_str(&format!(r#","parent":"i{}""#, i - 1));
        }
        json.push('}');
    }
    json.push_str(r#"],"focus":["#);
    for i in 0..n {
        if i > 0 {
            json.push(',');
        }
        json.push_str(&format!(r#""i{i}""#));
    }
    json.push_str("]}");
    json.into_bytes()
}

#[test]
fn a_200000_item_01_chain_is_refused_by_the_depth_limit() {
    // Quadratic code (a walk up the chain per item) takes minutes here.
    let n = 200_000;
    let bytes = chain_01(n);
    let err = ctxgate::read(&bytes, &ctxgate::Limits::default()).unwrap_err();
    // The first item past the limit in document order: `i1023` is at
    // depth 1,025 (the root is 1), listed at n - 1 - 1023.
    assert_eq!(
        err.to_string(),
        format!(
            "the tree is deeper than the limit of 1024 elements (at /items/{}) (`max_depth`, `--max-depth`)",
            n - 1 - 1023
        )
    );
    let output = ctxgate(&["check"], &bytes);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!("error: the tree is deeper than the limit of 1024 elements (at /items/{}) (`max_depth`, `--max-depth`)\n", n - 1 - 1023)
    );
}

#[test]
fn a_200000_item_01_chain_upgrades_and_checks_on_a_small_stack_when_the_limit_allows() {
    let n = 200_000;
    let bytes = chain_01(n);
    let limits = ctxgate::Limits {
        max_depth: n + 1,
        ..Default::default()
    };
    // A 2 MiB thread: neither the upgrade, the check nor drop recurses.
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let reading = ctxgate::read(&bytes, &limits).unwrap();
            assert_eq!(reading.upgraded_from.as_deref(), Some("0.1"));
            assert_eq!(reading.findings, []);
            let answer = reading.answer.expect("upgraded");
            assert_eq!(ctxgate::check(&answer), []);
            let tree = ctxgate::Tree::new(&answer.root);
            assert_eq!(tree.len(), n + 1);
            let last = tree.node(n as u32);
            assert_eq!((&*last.element.id, last.depth, last.focused), ("i199999", n as u32, true));
            assert_eq!(tree.focus(), Some(n as u32));
            // One past the limit is refused.
            let tight = ctxgate::Limits { max_depth: n, ..limits };
            let err = ctxgate::read(&bytes, &tight).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("the tree is deeper than the limit of {n} elements (at /items/0) (`max_depth`, `--max-depth`)")
            );
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn a_01_answer_is_held_to_the_element_and_content_limits() {
    let items: Vec<String> = (0..10)
        .map(|i| format!(r#"{{"id":"t{i}","type":"text"}}"#))
        .collect();
    let json = format!(
        r#"{{"protocol":"0.1","instance":"i","items":[{}]}}"#,
        items.join(",")
    );
    // Ten items and the root: eleven elements.
    let eleven = ctxgate::Limits {
        max_elements: 11,
        ..Default::default()
    };
    let answer = ctxgate::read_conforming(json.as_bytes(), &eleven).unwrap();
    assert_eq!(ctxgate::Tree::new(&answer.root).len(), 11);
    let ten = ctxgate::Limits {
        max_elements: 10,
        ..Default::default()
    };
    assert_eq!(
        ctxgate::read(json.as_bytes(), &ten)
            .unwrap_err()
            .to_string(),
        "the tree has more than 10 elements (`max_elements`, `--max-elements`)"
    );

    let big = format!(
        r#"{{"protocol":"0.1","instance":"i","items":[{{"id":"a","type":"pane"}},{{"id":"t","type":"text","title":"abcd","url":"u","content":[{{"type":"text","text":"{}"}}]}}]}}"#,
        "a".repeat(100)
    );
    let tight = ctxgate::Limits {
        max_content_bytes: 104,
        ..Default::default()
    };
    assert_eq!(
        ctxgate::read(big.as_bytes(), &tight).unwrap_err().to_string(),
        "element at /items/1 carries 105 bytes of title, url and content; the limit is 104 (`max_content_bytes`, `--max-content-bytes`)"
    );
    let enough = ctxgate::Limits {
        max_content_bytes: 105,
        ..Default::default()
    };
    ctxgate::read_conforming(big.as_bytes(), &enough).unwrap();
}

#[test]
fn parent_cycles_are_named_by_an_item_on_the_cycle() {
    let cases = [
        // Two on a cycle.
        (
            r#"[{"id":"a","type":"pane","parent":"b"},{"id":"b","type":"pane","parent":"a"}]"#,
            "/items/0/parent",
            "a",
        ),
        // Its own parent.
        (
            r#"[{"id":"top","type":"pane"},{"id":"s","type":"pane","parent":"s"}]"#,
            "/items/1/parent",
            "s",
        ),
        // Under a cycle, not on it: the cycle is named, not `c`.
        (
            r#"[{"id":"c","type":"row","parent":"a"},{"id":"a","type":"pane","parent":"b"},{"id":"b","type":"pane","parent":"a"}]"#,
            "/items/1/parent",
            "a",
        ),
    ];
    for (items, pointer, id) in cases {
        let json = format!(r#"{{"protocol":"0.1","instance":"i","items":{items}}}"#);
        assert_eq!(
            errors(&json),
            [format!("error[4.5] {pointer}: cannot upgrade the 0.1 answer: item `{id}` is its own ancestor (a parent cycle)")],
            "{items}"
        );
    }
}
