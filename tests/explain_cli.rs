//! `ctxgate explain` without a browser: its text and JSON on a real tree
//! (expectations in `tests/explain/`, `UPDATE_EXPECT=1` rewrites them), its
//! agreement with `ctxgate trim` (the report's lines and totals, and what is
//! sent), nothing withheld in any format, and its errors.

mod common;
mod explain_common;

use std::collections::BTreeMap;

use common::{ctxgate, expect_file, root, transcript};
use explain_common::{planted, CANARY, CONTROL};
use serde_json::Value;

const INPUT_TYPES: &str = "tests/fixtures/answers/atspi-input-types.json";
const LAYERS: [&str; 4] = ["--policy", "default", "--policy", "tests/policies/explain"];

/// Explains the case with every kind of reason: three masks on one cell,
/// a deny over a mask, prune inherited, keep over a mask, scope.
const REASONS: [&str; 6] = [
    "explain",
    "tests/cases/trim/reasons-all-listed/answer.json",
    "--policy",
    "tests/cases/trim/_policies/many-reasons.rego",
    "--action",
    "window",
];

fn run(args: &[&str]) -> String {
    let out = ctxgate(args, b"");
    assert!(out.status.success(), "{args:?}: {}", transcript(&out));
    String::from_utf8(out.stdout).unwrap()
}

/// The policy's hash out of an expectation: it changes with every edit of
/// the default policy, which is not what these files are about.
fn without_hash(text: &str, hash: &str) -> String {
    text.replace(hash, "<hash>").replace(&hash[..12], "<hash>")
}

fn policy_hash() -> String {
    let json: Value =
        serde_json::from_str(&run(&["explain", INPUT_TYPES, "--format", "json"])).unwrap();
    json["policy_hash"].as_str().unwrap().to_string()
}

#[test]
fn text_and_json_match_their_expectations() {
    let hash = policy_hash();
    let dir = root().join("tests/explain");
    // A real tree under the default policy, with a budget that leaves some out.
    let text = run(&[
        "explain",
        INPUT_TYPES,
        "--action",
        "window",
        "--max-tokens",
        "300",
    ]);
    let reasons_text = run(&REASONS);
    let reasons_json = run(&[&REASONS[..], &["--format", "json"]].concat());
    let reasons_hash: Value = serde_json::from_str(&reasons_json).unwrap();
    let reasons_hash = reasons_hash["policy_hash"].as_str().unwrap();
    let mut failures = Vec::new();
    for (file, actual) in [
        (
            "input-types-window-300-tokens.txt",
            without_hash(&text, &hash),
        ),
        ("reasons.txt", without_hash(&reasons_text, reasons_hash)),
        ("reasons.json", without_hash(&reasons_json, reasons_hash)),
    ] {
        if let Err(e) = expect_file(&dir.join(file), &actual) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every element of a rendered answer's JSON, by id.
fn output_elements(answer: &Value) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    let mut stack = vec![&answer["root"]];
    while let Some(e) = stack.pop() {
        out.insert(e["id"].as_str().unwrap().to_string(), e.clone());
        if let Some(children) = e["children"].as_array() {
            stack.extend(children);
        }
    }
    out
}

#[test]
fn explain_says_what_trim_reports_and_shows_only_what_trim_sends() {
    let trees = [
        INPUT_TYPES,
        "tests/fixtures/answers/atspi-firefox-zbus-docs.json",
        "tests/fixtures/answers/mac-apg-treegrid.json",
    ];
    let requests: [&[&str]; 3] = [
        &["--action", "focus"],
        &["--action", "window"],
        &["--action", "app", "--max-bytes", "1500"],
    ];
    let dir = std::env::temp_dir().join(format!("ctxgate-explain-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for tree in trees {
        for request in requests {
            let report_file = dir.join("report.json");
            let mut args = vec!["trim", tree];
            args.extend(request);
            args.extend(["--report", report_file.to_str().unwrap()]);
            let output: Value = serde_json::from_str(&run(&args)).unwrap();
            let report: Value =
                serde_json::from_slice(&std::fs::read(&report_file).unwrap()).unwrap();
            let mut args = vec!["explain", tree, "--format", "json"];
            args.extend(request);
            let explained: Value = serde_json::from_str(&run(&args)).unwrap();
            let what = format!("{tree} {request:?}");
            for key in [
                "policy_hash",
                "action",
                "scope",
                "format",
                "budgets",
                "output_bytes",
            ] {
                assert_eq!(explained[key], report[key], "{what}: {key}");
            }
            for key in [
                "elements",
                "outcomes",
                "rules",
                "redactions",
                "reserved_attributes_dropped",
            ] {
                assert_eq!(
                    explained["totals"][key], report[key],
                    "{what}: totals.{key}"
                );
            }
            let sent = output_elements(&output);
            let elements = explained["elements"].as_array().unwrap();
            let lines = report["decisions"].as_array().unwrap();
            assert_eq!(elements.len(), lines.len(), "{what}");
            for (e, line) in elements.iter().zip(lines) {
                for key in ["id", "role", "outcome"] {
                    assert_eq!(e[key], line[key], "{what}: {key}");
                }
                let or_null = |v: &Value| if v.is_null() { Value::Null } else { v.clone() };
                assert_eq!(e["subrole"], or_null(&line["subrole"]), "{what}");
                assert_eq!(e["rule"], or_null(&line["rule"]), "{what}");
                assert_eq!(
                    e["inherited"],
                    line["inherited"].as_bool().unwrap_or(false),
                    "{what}"
                );
                let reasons = line.get("reasons").cloned().unwrap_or(Value::Array(vec![]));
                assert_eq!(e["reasons"], reasons, "{what}");
                if let Some(rule) = line["rule"].as_str() {
                    assert_eq!(reasons[0], rule, "{what}: the deciding rule comes first");
                }
                let id = e["id"].as_str().unwrap();
                match sent.get(id) {
                    Some(out) => {
                        assert_eq!(e["sent"]["title"], or_null(&out["title"]), "{what}: {id}");
                        assert_eq!(e["sent"]["url"], or_null(&out["url"]), "{what}: {id}");
                        let content = out.get("content").cloned().unwrap_or(Value::Array(vec![]));
                        assert_eq!(e["sent"]["content"], content, "{what}: {id}");
                    }
                    None => assert!(e["sent"].is_null(), "{what}: `{id}` is not sent"),
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn nothing_withheld_appears_in_any_format() {
    let (answer, canaries) = planted();
    let bytes = serde_json::to_vec(&answer).unwrap();
    for format in ["text", "json", "html"] {
        for request in [
            &["--action", "app"][..],
            &["--action", "focus"],
            &["--action", "app", "--max-tokens", "300"],
        ] {
            let mut args = vec!["explain", "-", "--format", format];
            args.extend(LAYERS);
            args.extend(request);
            let out = ctxgate(&args, &bytes);
            assert!(out.status.success(), "{}", transcript(&out));
            let shown = String::from_utf8(out.stdout).unwrap();
            for canary in &canaries {
                assert!(
                    !shown.contains(canary.as_str()),
                    "{format} {request:?}: `{canary}`"
                );
            }
            assert!(!shown.contains(CANARY), "{format} {request:?}");
            if request.len() == 2 && request[1] == "app" {
                assert!(shown.contains(CONTROL), "{format}: what is sent is shown");
            }
        }
    }
}

#[test]
fn the_report_lists_every_rule_that_masked_an_element() {
    // A cell three mask rules match (tests/cases/trim/_policies/many-reasons.rego).
    let out = run(&REASONS);
    let line = out.lines().find(|l| l.contains("r1-salary")).unwrap();
    assert_eq!(
        line.trim(),
        "r1-salary Cell:salary → masked by mask:money-column; also mask:private-cell, mask:salary"
    );
}

#[test]
fn one_line_per_element_whatever_the_titles_hold() {
    let (answer, _) = planted();
    let mut answer = answer;
    answer["root"]["children"][0]["title"] = Value::from("two\nlines\u{202e}\r\u{7}");
    let bytes = serde_json::to_vec(&answer).unwrap();
    let out = ctxgate(&["explain", "-", "--action", "app"], &bytes);
    assert!(out.status.success(), "{}", transcript(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    let elements = text.lines().filter(|l| l.contains(" → ")).count();
    let head = text.lines().take_while(|l| !l.contains(" → ")).count();
    assert_eq!(elements, 52);
    assert_eq!(text.lines().count(), head + elements);
    assert!(!text.contains('\u{202e}') && !text.contains('\u{7}') && !text.contains('\r'));
    assert!(text.contains(r#"— "two\nlines\u202e\r\u0007""#), "{text}");
}

#[test]
fn errors_say_what_and_send_nothing() {
    let out = ctxgate(&["explain", "tests/fixtures/no-such-tree.json"], b"");
    assert_eq!(out.status.code(), Some(2), "{}", transcript(&out));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-tree.json"));

    let out = ctxgate(&["explain", "-"], b"{\"protocol\": ");
    assert_eq!(out.status.code(), Some(1), "{}", transcript(&out));
    assert!(out.stdout.is_empty());

    let out = ctxgate(
        &[
            "explain",
            INPUT_TYPES,
            "--target",
            "nope",
            "--format",
            "html",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2), "{}", transcript(&out));
    assert!(out.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("nope"),
        "{}",
        transcript(&out)
    );

    let out = ctxgate(&["explain", INPUT_TYPES, "--max-bytes", "10"], b"");
    assert_eq!(out.status.code(), Some(1), "{}", transcript(&out));
    assert!(out.stdout.is_empty());
}

#[test]
fn stripped_attributes_are_named_never_shown() {
    // The default policy strips `author` for `app` off the user's position.
    let json: Value = serde_json::from_str(&run(&[
        "explain",
        "examples/thread.json",
        "--action",
        "app",
        "--format",
        "json",
    ]))
    .unwrap();
    let elements = json["elements"].as_array().unwrap();
    let stripped: Vec<&str> = elements
        .iter()
        .filter(|e| e["stripped"].as_array().is_some_and(|s| !s.is_empty()))
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(stripped, ["c2", "c3"]);
    assert_eq!(json["totals"]["stripped"]["author"], 2);
    for e in elements
        .iter()
        .filter(|e| stripped.contains(&e["id"].as_str().unwrap()))
    {
        assert_eq!(e["stripped"], serde_json::json!(["author"]));
        assert!(e["sent"]["attributes"].get("author").is_none(), "{e}");
    }
    // The focused comment keeps its author; the others' never appear.
    for format in ["text", "json", "html"] {
        let out = run(&[
            "explain",
            "examples/thread.json",
            "--action",
            "app",
            "--format",
            format,
        ]);
        if format != "text" {
            // The text format shows titles and text, not attributes.
            assert!(out.contains("Ada Lovelace"), "{format}");
        }
        let thread: Value =
            serde_json::from_str(&std::fs::read_to_string("examples/thread.json").unwrap())
                .unwrap();
        for id in ["c2", "c3"] {
            let author = find(&thread["root"], id)["attributes"]["author"]
                .as_str()
                .unwrap()
                .to_string();
            assert!(!out.contains(&author), "{format}: {id}'s author");
        }
    }
}

fn find<'v>(element: &'v Value, id: &str) -> &'v Value {
    if element["id"] == id {
        return element;
    }
    element["children"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| find(c, id))
        .find(|e| !e.is_null())
        .unwrap_or(&Value::Null)
}

/// Ids and titles made of what an element line says: verdicts, quotes,
/// backslashes, every line break and the bidi controls.
fn forging_answer() -> Value {
    let breaks = [
        "\n", "\r", "\r\n", "\u{b}", "\u{c}", "\u{85}", "\u{2028}", "\u{2029}",
    ];
    let bidi = [
        "\u{202a}", "\u{202b}", "\u{202c}", "\u{202d}", "\u{202e}", "\u{2066}", "\u{2067}",
        "\u{2068}", "\u{2069}",
    ];
    let verdict = " → masked by floor:secure-text";
    let mut children = Vec::new();
    let mut ids: Vec<String> = vec![
        format!("x{verdict}"),
        format!("\"{verdict}"),
        format!("a\\\"{verdict}"),
        "plain-1".to_string(),
        "y Text → denied by deny:all; also scope".to_string(),
        "[focused]".to_string(),
        "\"\"".to_string(),
        "\\".to_string(),
    ];
    for (i, b) in breaks.iter().chain(&bidi).enumerate() {
        ids.push(format!("n{i}{b}  z{i} Text{verdict}"));
    }
    for (i, id) in ids.iter().enumerate() {
        let b = breaks[i % breaks.len()];
        let d = bidi[i % bidi.len()];
        let mut element = serde_json::json!({
            "id": id,
            "role": "Text",
            "title": format!("\"{b}  {id} Text{verdict}{d}\" — \"\\\"{b}"),
            "content": [{"type": "text", "text": format!("t{b}  q Text → sent{d}\"")}],
        });
        if i % 4 == 1 {
            element["subrole"] = Value::from(format!("secure{b}  w Text{verdict}"));
        }
        if i % 3 == 2 {
            element["url"] = Value::from(format!("https://e.example/{b}{d}\""));
        }
        children.push(element);
    }
    // A secure field, which the floor masks, among them.
    children.push(serde_json::json!({
        "id": format!("s{verdict}\u{2028}"),
        "role": "Text",
        "subrole": "secure",
        "title": format!("pw\"{verdict}"),
    }));
    serde_json::json!({
        "protocol": "0.2.0",
        "instance": "i",
        "root": {"id": "app", "role": "Application", "title": "\u{2029}→ sent", "children": [{
            "id": "w\n→ denied", "role": "Window", "focused": true, "children": children,
        }]},
    })
}

/// A name in an element line: a word of `[A-Za-z0-9._:/-]`, or a JSON
/// string literal. Returns it and what follows.
fn name(line: &str) -> Option<(String, &str)> {
    if let Some(body) = line.strip_prefix('"') {
        let mut escaped = false;
        for (at, c) in body.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => {
                    let literal = &line[..at + 2];
                    return Some((serde_json::from_str(literal).ok()?, &line[at + 2..]));
                }
                _ => {}
            }
        }
        return None;
    }
    let end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || "._:/-".contains(c)))
        .unwrap_or(line.len());
    (end > 0).then(|| (line[..end].to_string(), &line[end..]))
}

/// A string literal, with the `…` that says it was cut.
fn literal(line: &str) -> Option<&str> {
    if !line.starts_with('"') {
        return None;
    }
    let (_, rest) = name(line)?;
    Some(rest.strip_prefix('…').unwrap_or(rest))
}

/// One element line, read by its grammar: (depth, id, role, subrole,
/// outcome). `None` when any part of it is not where the grammar has it.
fn element_line(line: &str) -> Option<(usize, String, String, Option<String>, String)> {
    let body = line.trim_start_matches(' ');
    let indent = line.len() - body.len();
    if indent % 2 != 0 {
        return None;
    }
    let (id, rest) = name(body)?;
    let rest = rest.strip_prefix(' ')?;
    // A role is a word without `:` (the subrole's mark), or a literal.
    let end = rest.find([':', ' ']).unwrap_or(rest.len());
    let (role, mut rest) = match rest.starts_with('"') {
        true => name(rest)?,
        false
            if end > 0
                && rest[..end]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._/-".contains(c)) =>
        {
            (rest[..end].to_string(), &rest[end..])
        }
        false => return None,
    };
    let mut subrole = None;
    if let Some(after) = rest.strip_prefix(':') {
        let (s, after) = name(after)?;
        (subrole, rest) = (Some(s), after);
    }
    if let Some(after) = rest.strip_prefix(" [") {
        let (states, after) = after.split_once(']')?;
        if !states
            .split(' ')
            .all(|s| ["focused", "selected", "hovered", "hidden"].contains(&s))
        {
            return None;
        }
        rest = after;
    }
    let rest = rest.strip_prefix(" → ")?;
    let end = rest.find([' ', ';']).unwrap_or(rest.len());
    let (outcome, mut rest) = (rest[..end].to_string(), &rest[end..]);
    if let Some(after) = rest.strip_prefix(" by ") {
        rest = name(after)?.1;
        rest = rest.strip_prefix(" (inherited)").unwrap_or(rest);
    }
    for (lead, counted) in [
        ("; also ", false),
        ("; redacted ", true),
        ("; stripped ", false),
    ] {
        if let Some(mut after) = rest.strip_prefix(lead) {
            loop {
                after = name(after)?.1;
                if counted {
                    let digits = after.strip_prefix(" ×")?;
                    let end = digits
                        .find(|c: char| !c.is_ascii_digit())
                        .unwrap_or(digits.len());
                    after = &digits[end..];
                }
                match after.strip_prefix(", ") {
                    Some(next) => after = next,
                    None => break,
                }
            }
            rest = after;
        }
    }
    if let Some(after) = rest.strip_prefix(" — ") {
        rest = literal(after)?;
    }
    if let Some(after) = rest.strip_prefix(" text ") {
        rest = literal(after)?;
    }
    rest.is_empty()
        .then_some((indent / 2, id, role, subrole, outcome))
}

#[test]
fn provider_text_cannot_start_a_line_or_imitate_a_verdict() {
    let answer = forging_answer();
    let bytes = serde_json::to_vec(&answer).unwrap();
    let dir = std::env::temp_dir().join(format!("ctxgate-explain-forge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let report_file = dir.join("report.json");
    let out = ctxgate(
        &[
            "trim",
            "-",
            "--action",
            "app",
            "--report",
            report_file.to_str().unwrap(),
        ],
        &bytes,
    );
    assert!(out.status.success(), "{}", transcript(&out));
    let report: Value = serde_json::from_slice(&std::fs::read(&report_file).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let decisions = report["decisions"].as_array().unwrap();
    let depths = explain_common::pointers(&answer);
    let shown = |c: char| {
        !(c.is_control()
            || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'))
    };

    let text =
        String::from_utf8(ctxgate(&["explain", "-", "--action", "app"], &bytes).stdout).unwrap();
    assert!(text.chars().all(|c| c == '\n' || shown(c)), "{text}");
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with("action app, "), "{text}");
    assert!(lines.next().unwrap().contains(" elements: "), "{text}");
    let lines: Vec<&str> = lines
        .skip_while(|l| {
            ["redacted: ", "stripped: ", "warning: "]
                .iter()
                .any(|h| l.starts_with(h))
        })
        .collect();
    assert_eq!(lines.len(), decisions.len(), "{text}");
    for (line, decision) in lines.iter().zip(decisions) {
        let Some((depth, id, role, subrole, outcome)) = element_line(line) else {
            panic!("not an element line: {line}\n{text}");
        };
        assert_eq!(id, decision["id"].as_str().unwrap(), "{line}");
        assert_eq!(outcome, decision["outcome"].as_str().unwrap(), "{line}");
        assert_eq!(role, decision["role"].as_str().unwrap(), "{line}");
        assert_eq!(subrole.as_deref(), decision["subrole"].as_str(), "{line}");
        assert_eq!(depth, depths[&id].matches("/children/").count(), "{line}");
    }
    assert!(
        decisions.iter().any(|d| d["outcome"] == "masked"),
        "the secure field is masked"
    );

    let json = String::from_utf8(
        ctxgate(
            &["explain", "-", "--action", "app", "--format", "json"],
            &bytes,
        )
        .stdout,
    )
    .unwrap();
    assert!(json.chars().all(|c| c == '\n' || shown(c)), "{json}");
    let json: Value = serde_json::from_str(&json).unwrap();
    let ids: Vec<&Value> = json["elements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["id"])
        .collect();
    let want: Vec<&Value> = decisions.iter().map(|d| &d["id"]).collect();
    assert_eq!(ids, want);

    let html = String::from_utf8(
        ctxgate(
            &["explain", "-", "--action", "app", "--format", "html"],
            &bytes,
        )
        .stdout,
    )
    .unwrap();
    assert!(html.chars().all(|c| c == '\n' || shown(c)));
    assert_eq!(html.matches("<li class=").count(), decisions.len());
    assert!(
        !html.contains("\"\u{20}→"),
        "a quote closed before a verdict"
    );
}
