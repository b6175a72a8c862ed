//! The policy tools, through the public API and the binary:
//! what `policy check` calls an error also refuses the policy at load
//! (`Gate`, `--policy`), with the same place and message.

use std::process::{Command, Output};

use ctxgate::{ErrorKind, Gate};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn ctxgate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .args(args)
        .current_dir(ROOT)
        .output()
        .expect("ctxgate runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

const TREE: &str = "tests/fixtures/answers/atspi-input-types.json";

/// Every new lint has a position, and all are reported at once.
#[test]
fn check_reports_each_safety_error_at_its_place() {
    let output = ctxgate(&["policy", "check", "tests/policies/lint/wrong_types.rego"]);
    assert_eq!(output.status.code(), Some(1));
    let f = "tests/policies/lint/wrong_types.rego";
    assert_eq!(
        stdout(&output),
        format!(
            "{f}:3:10: error: `scope` must be one of `selection`, `focus`, `window`, `app`; `\"everything\"` is none of them\n\
             {f}:5:11: error: `budget` is a number here; it must be an object, `{{\"tokens\": N}}` or `{{\"bytes\": N}}`\n\
             {f}:7:13: error: `priority` is a string here; it must be a number (`priority := 50 if …`)\n\
             {f}:9:1: error: `deny` is the boolean `true` where its body holds (`… if` with no value) here; it must be a set of reason strings (`deny contains \"reason\" if …`)\n\
             {f}:11:53: error: `input.element.attributes.x` is read, but no action declares `x` in `element_attributes`, so it is always undefined and the rule never holds: add `element_attributes contains \"x\"`\n\
             {f}:13:1: error: rule `masks` is not one ctxgate reads (did you mean `mask`?); as written it decides nothing\n\
             {f}:15:42: error: `input.element.subrol` is not in the input (did you mean `input.element.subrole`?)\n\
             1 file: 7 errors, 0 warnings\n"
        )
    );
}

/// `trim --policy` refuses what `check` refuses, with check's first line.
#[test]
fn trim_refuses_a_policy_check_rejects_with_the_same_message() {
    for (file, first) in [
        ("tests/policies/misspelled_field.rego", "tests/policies/misspelled_field.rego:5:31: `input.element.subrol` is not in the input (did you mean `input.element.subrole`?)"),
        ("tests/cases/policy/undeclared-attribute/policy.rego", "tests/cases/policy/undeclared-attribute/policy.rego:5:53: `input.element.attributes.x` is read, but no action declares `x` in `element_attributes`, so it is always undefined and the rule never holds: add `element_attributes contains \"x\"`"),
        ("tests/cases/policy/misspelled-decision-rule/policy.rego", "tests/cases/policy/misspelled-decision-rule/policy.rego:3:1: rule `masks` is not one ctxgate reads (did you mean `mask`?); as written it decides nothing"),
        ("tests/policies/wrong_role.rego", "tests/policies/wrong_role.rego:4:24: `TextField` is not a role (did you mean `Text`?) (and 1 more error: `ctxgate policy check` lists every one)"),
    ] {
        let output = ctxgate(&["trim", "--policy", file, TREE]);
        assert_eq!(output.status.code(), Some(2), "{file}");
        assert!(output.stdout.is_empty(), "{file}: something was sent");
        assert_eq!(stderr(&output), format!("error: policy {first}\n"), "{file}");
        // `policy check` names the same place first.
        let check = stdout(&ctxgate(&["policy", "check", file]));
        let (place, _) = first.split_once(": ").unwrap();
        assert!(check.starts_with(&format!("{place}: error: ")), "{check}");
    }
}

#[test]
fn the_library_refuses_at_load_too() {
    std::env::set_current_dir(ROOT).unwrap();
    let err = Gate::from_policy_path("tests/cases/policy/undeclared-attribute/policy.rego")
        .err()
        .expect("refused");
    assert_eq!(err.kind(), ErrorKind::Policy);
    assert!(
        err.to_string().starts_with(
            "policy tests/cases/policy/undeclared-attribute/policy.rego:5:53: `input.element.attributes.x` is read"
        ),
        "{err}"
    );
}

#[test]
fn the_default_policy_still_loads() {
    std::env::set_current_dir(ROOT).unwrap();
    Gate::embedded_default().expect("the embedded default loads");
    Gate::from_policy_path("policies").expect("policies/ loads");
    Gate::from_policy_path("policies/default.rego").expect("the file loads");
    let output = ctxgate(&["trim", TREE]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

/// The report's `policy_hash` for `trim` with these `--policy` values.
fn report_hash(policy: &[&str]) -> String {
    let dir = tempdir();
    let report = dir.join("report.json");
    let mut args = vec!["trim"];
    for p in policy {
        args.extend(["--policy", p]);
    }
    let report_arg = report.to_str().unwrap().to_string();
    args.extend(["--report", &report_arg, TREE]);
    let output = ctxgate(&args);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{policy:?}: {}",
        stderr(&output)
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    json["policy_hash"].as_str().unwrap().to_string()
}

fn tempdir() -> std::path::PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "ctxgate-policy-tools-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// SHA-256 of the tag, then each source as (u64 LE length, bytes), the
/// sources sorted by their bytes: computed here independently.
fn expected_hash(sources: &[&[u8]]) -> String {
    use sha2::{Digest, Sha256};
    let mut sorted = sources.to_vec();
    sorted.sort();
    let mut h = Sha256::new();
    h.update(b"ctxgate-policy-sources-v1\0");
    for s in sorted {
        h.update((s.len() as u64).to_le_bytes());
        h.update(s);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn the_same_policy_bytes_give_one_hash_whatever_the_path() {
    let absolute = format!("{ROOT}/policies");
    let hashes = [
        report_hash(&[]),
        report_hash(&["default"]),
        report_hash(&["policies"]),
        report_hash(&["./policies"]),
        report_hash(&[&absolute]),
        report_hash(&["policies/default.rego"]),
    ];
    let source = std::fs::read(format!("{ROOT}/policies/default.rego")).unwrap();
    let want = expected_hash(&[&source]);
    for hash in &hashes {
        assert_eq!(hash, &want);
    }
    // A copy under another name and folder: the same bytes, the same hash.
    let dir = tempdir();
    std::fs::write(dir.join("renamed.rego"), &source).unwrap();
    assert_eq!(report_hash(&[dir.to_str().unwrap()]), want);
    // One byte more: another hash.
    let mut changed = source.clone();
    changed.extend_from_slice(b"\n");
    std::fs::write(dir.join("renamed.rego"), &changed).unwrap();
    assert_ne!(report_hash(&[dir.to_str().unwrap()]), want);
    // The library gives the same.
    std::env::set_current_dir(ROOT).unwrap();
    assert_eq!(Gate::embedded_default().unwrap().policy().hash(), want);
    assert_eq!(
        Gate::from_policy_path(&absolute).unwrap().policy().hash(),
        want
    );
}

const CHAT_TREE: &str = r#"{"protocol":"0.2.0","instance":"i","root":{"id":"app","role":"Application","children":[
 {"id":"w","role":"Window","focused":true,"children":[
  {"id":"t","role":"Text","focused":true,"content":[{"type":"text","text":"my card 4111 1111 1111 1111 and TICKET-123456"}]},
  {"id":"pw","role":"Text","subrole":"AXSecureTextField","title":"Password","content":[{"type":"text","text":"pw-canary-5e1b"}]}]},
 {"id":"c","role":"Window","subrole":"chat","children":[{"id":"m","role":"Text","content":[{"type":"text","text":"private chat line"}]}]}]}}"#;

fn trim_with(policy: &[&str], action: &str) -> Output {
    let dir = tempdir();
    let tree = dir.join("tree.json");
    std::fs::write(&tree, CHAT_TREE).unwrap();
    let mut args = vec!["trim", "--action", action];
    for p in policy {
        args.extend(["--policy", p]);
    }
    let tree_arg = tree.to_str().unwrap().to_string();
    args.push(&tree_arg);
    ctxgate(&args)
}

/// `--policy default --policy extra/`: the extra layer's deny and
/// redaction are added; the default's redactions, scope and budget stay.
#[test]
fn a_layer_extends_the_default() {
    let extra = "tests/policies/layers/extra";
    let alone = trim_with(&[extra], "app");
    let layered = trim_with(&["default", extra], "app");
    let default = trim_with(&[], "app");
    for o in [&alone, &layered, &default] {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
    }
    let (alone, layered, default) = (stdout(&alone), stdout(&layered), stdout(&default));
    // The default alone sends the chat; the extra layer denies it.
    assert!(default.contains("private chat line"));
    assert!(!layered.contains("private chat line"), "{layered}");
    // The default's card redaction stays; the layer's ticket redaction is added.
    assert!(!layered.contains("4111 1111 1111 1111"), "{layered}");
    assert!(!layered.contains("TICKET-123456"), "{layered}");
    assert!(layered.contains("[ticket]"), "{layered}");
    // Alone, the extra layer has no card redaction: the card is sent.
    assert!(alone.contains("4111 1111 1111 1111"), "{alone}");
    // The secure field is masked by the floor either way.
    assert!(!layered.contains("pw-canary-5e1b") && !alone.contains("pw-canary-5e1b"));
}

#[test]
fn a_single_valued_rule_in_two_layers_is_a_load_error() {
    let output = trim_with(&["default", "tests/policies/layers/scope"], "app");
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    assert_eq!(
        stderr(&output),
        "error: policy tests/policies/layers/scope/scope.rego:3:1: `scope` is also defined by layer 1 (<default>:40:1); a layer may not change what an earlier layer's rules mean: across layers only the partial sets (`deny`, `mask`, `keep`, `prune`, `strip`, `redact`, `element_attributes`) merge, with `contains`, and every other name (a rule, a `default`, a function, an `else` chain) belongs to one layer: remove one definition, or rename the helper\n"
    );
    // `policy check` names the same conflict.
    let check = ctxgate(&["policy", "check", "default", "tests/policies/layers/scope"]);
    assert_eq!(check.status.code(), Some(1));
    assert!(stdout(&check).contains(
        "tests/policies/layers/scope/scope.rego:3:1: error: `scope` is also defined by layer 1"
    ));
    // The same file twice is refused too.
    let twice = trim_with(&["default", "default"], "app");
    assert_eq!(twice.status.code(), Some(2));
    assert_eq!(
        stderr(&twice),
        "error: policy <default>: the file is given twice (layers 1 and 2); give each file once\n"
    );
}

/// A request over the policy's budget is capped, and says so: in the
/// report and on stderr; a request under it is not warned about.
#[test]
fn a_request_over_the_policy_budget_is_warned_about() {
    let dir = tempdir();
    let report = dir.join("report.json");
    let report_arg = report.to_str().unwrap().to_string();
    let output = ctxgate(&[
        "trim",
        "--max-tokens",
        "20000",
        "--report",
        &report_arg,
        TREE,
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let warning = "the request asked for a budget of 20000 tokens; the policy's budget of 8000 tokens applies (a request can lower the policy's budget, never raise it)";
    assert_eq!(stderr(&output), format!("warning: {warning}\n"));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(json["warnings"], serde_json::json!([warning]));
    assert_eq!(json["budgets"][0]["limit"], 8000);
    assert_eq!(json["budgets"][0]["source"], "policy");
    let output = ctxgate(&[
        "trim",
        "--max-tokens",
        "2000",
        "--report",
        &report_arg,
        TREE,
    ]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stderr(&output), "");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert!(json.get("warnings").is_none(), "{json}");
    // The default policy's own METADATA says a larger request is capped.
    let source = std::fs::read_to_string(format!("{ROOT}/policies/default.rego")).unwrap();
    assert!(source.contains("A request for more is capped at this budget"));
    assert!(!source.contains("smaller or larger"));
}

/// `policy doc` and `plan` probe what the rules mention: a policy that
/// denies chat windows and masks private rows shows both.
#[test]
fn doc_and_plan_probe_what_the_policy_mentions() {
    let file = "tests/policies/probes/chat_and_rows.rego";
    let doc = ctxgate(&["policy", "doc", file]);
    assert_eq!(doc.status.code(), Some(0), "{}", stderr(&doc));
    let doc = stdout(&doc);
    let deny = "deny (chat-window) · 0";
    let mask = "mask (private-row) · 0";
    assert!(
        doc.contains(&format!(
            "| Window, subrole chat | {deny} | {deny} | {deny} | {deny} |"
        )),
        "{doc}"
    );
    assert!(
        doc.contains(&format!(
            "| Row, attribute `privacy` = `private` | {mask} | {mask} | {mask} | {mask} |"
        )),
        "{doc}"
    );
    // The plain Window and Row are not withheld: only what the rules name is.
    assert!(doc.contains("| Window | scope · 0 |"), "{doc}");
    let plan = ctxgate(&["policy", "plan", file, "--action", "focus"]);
    let plan: serde_json::Value = serde_json::from_slice(&plan.stdout).unwrap();
    let outcome = |label: &str| {
        plan["elements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["element"] == label)
            .map(|e| e["outcome"].as_str().unwrap().to_string())
    };
    assert_eq!(outcome("Window, subrole chat").as_deref(), Some("deny"));
    assert_eq!(
        outcome("Row, attribute `privacy` = `private`").as_deref(),
        Some("mask")
    );
    assert_eq!(
        outcome("Row, attribute `privacy`").as_deref(),
        Some("scope")
    );
}

/// Two priority rules that conflict only when an element is focused and
/// selected: `policy check` evaluates every combination of the states the
/// policy reads, so the conflict surfaces there, at its place.
#[test]
fn check_finds_a_conflict_that_needs_two_states() {
    let file = "tests/policies/probes/priority_conflict.rego";
    let output = ctxgate(&["policy", "check", file]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stdout(&output),
        format!("{file}:5:1: error: rule conflicts with rule at {file}:3:1 (evaluating `priority` for element Text, focused, selected, action `selection`)\n1 file: 1 error, 0 warnings\n")
    );
}

#[test]
fn policy_test_filters_shows_places_and_covers() {
    // `--run` and `-v`: only matching tests, each with its place.
    let output = ctxgate(&[
        "policy",
        "test",
        "-v",
        "--run",
        "^test_secure_text_is_masked$",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].starts_with("PASS test_secure_text_is_masked (<default-tests>:"),
        "{text}"
    );
    assert!(lines[0].ends_with(" ms)"), "{text}");
    assert_eq!(lines[1], "1 passed, 0 failed");
    // A regex that matches nothing runs nothing: exit 1.
    let output = ctxgate(&["policy", "test", "--run", "^no_such_test$"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr(&output),
        "error: no tests ran: no `test_*` rule of a `*_test.rego` file matches `--run`\n"
    );
    // Coverage: the default's tests reach every line with an expression.
    let output = ctxgate(&["policy", "test", "--coverage"]);
    let text = stdout(&output);
    assert!(text.contains("coverage <default>: 100.0% ("), "{text}");
    assert!(text.ends_with("coverage: 100.0%\n"), "{text}");
    // One test covers part of the file: the lines it did not reach are named.
    let output = ctxgate(&[
        "policy",
        "test",
        "--coverage",
        "--run",
        "^test_secure_text_is_masked$",
    ]);
    let text = stdout(&output);
    let line = text
        .lines()
        .find(|l| l.starts_with("  not covered: "))
        .expect("uncovered lines");
    // The budget rule's line is one no masking test reaches.
    let source = std::fs::read_to_string(format!("{ROOT}/policies/default.rego")).unwrap();
    let budget = source
        .lines()
        .position(|l| l.starts_with("budget :="))
        .unwrap()
        + 1;
    assert!(
        line.split([' ', ',']).any(|p| p == budget.to_string()
            || p.split_once('-').is_some_and(|(a, b)| {
                a.parse::<usize>().unwrap() <= budget && budget <= b.parse::<usize>().unwrap()
            })),
        "{line} (budget at {budget})"
    );
}

#[test]
fn policy_test_json_names_the_failing_expression() {
    let output = ctxgate(&[
        "policy",
        "test",
        "tests/policies/failing",
        "--format",
        "json",
        "--coverage",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["passed"], 1);
    assert_eq!(json["failed"], 2);
    let failed = &json["tests"][1];
    assert_eq!(failed["name"], "test_unfocused_is_kept");
    assert_eq!(failed["outcome"], "fail");
    assert_eq!(failed["line"], 7);
    assert_eq!(failed["stopped_at"]["line"], 8);
    assert_eq!(
        failed["stopped_at"]["expression"],
        "\"focus-path\" in keep with input as {\"element\": {\"focused\": false}}"
    );
    assert_eq!(json["tests"][2]["outcome"], "error");
    assert_eq!(
        json["tests"][2]["message"],
        "tests/policies/failing/policy_test.rego:12:16: could not parse string as number"
    );
    let files = json["coverage"]["files"].as_array().unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0]["file"], "tests/policies/failing/policy.rego");
    assert_eq!(files[0]["percent"], 100.0);
}

/// `policy diff OLD NEW --tree`: per request and explored input, and per
/// element of a real tree (ids, roles, rules; never content); exit 1 only
/// when NEW sends something OLD withheld.
#[test]
fn policy_diff_names_what_changes_and_gates_on_sending_more() {
    let dir = tempdir();
    let new = dir.join("new");
    std::fs::create_dir_all(&new).unwrap();
    std::fs::copy(
        format!("{ROOT}/policies/default.rego"),
        new.join("default.rego"),
    )
    .unwrap();
    std::fs::copy(
        format!("{ROOT}/tests/policies/layers/extra/chat.rego"),
        new.join("chat.rego"),
    )
    .unwrap();
    let tree = dir.join("tree.json");
    std::fs::write(&tree, CHAT_TREE).unwrap();
    let (new, tree) = (new.to_str().unwrap(), tree.to_str().unwrap());
    // Stricter: exit 0, every change named.
    let output = ctxgate(&["policy", "diff", "default", new, "--tree", tree]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    for line in [
        "focus: redact: removed: none; added: ticket\n",
        "focus: Window, subrole chat: scope -> deny (chat-window)\n",
        &format!("{tree}, app: `c` Window, subrole chat: sent -> denied (deny:chat-window)\n"),
        &format!("{tree}, app: `m` Text: sent -> denied (deny:chat-window)\n"),
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
    assert!(text.ends_with("NEW sends more than OLD: no\n"), "{text}");
    assert!(!text.contains("(sends more)"), "{text}");
    // No content, title or text of the tree appears.
    for secret in ["private chat line", "pw-canary-5e1b", "Password", "4111"] {
        assert!(!text.contains(secret), "{secret}: {text}");
    }
    // The other way: it sends what the old withheld: exit 1.
    let output = ctxgate(&["policy", "diff", new, "default", "--tree", tree]);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(
        text.contains(&format!("{tree}, app: `c` Window, subrole chat: denied (deny:chat-window) -> sent (sends more)\n")),
        "{text}"
    );
    assert!(
        text.contains("focus: redact: removed: ticket; added: none (sends more)\n"),
        "{text}"
    );
    assert!(text.ends_with("NEW sends more than OLD: yes\n"), "{text}");
    // The same policy: nothing changes.
    let output = ctxgate(&["policy", "diff", "default", "policies"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(stdout(&output).ends_with("\n0 changes; NEW sends more than OLD: no\n"));
}

/// `--tree` on `doc` and `plan`: a real tree's elements, decided per
/// action, by id, role and rule; never content.
#[test]
fn doc_and_plan_decide_a_real_tree() {
    let dir = tempdir();
    let tree = dir.join("tree.json");
    std::fs::write(&tree, CHAT_TREE).unwrap();
    let tree = tree.to_str().unwrap();
    let extra = "tests/policies/layers/extra";
    let doc = ctxgate(&["policy", "doc", "default", extra, "--tree", tree]);
    assert_eq!(doc.status.code(), Some(0), "{}", stderr(&doc));
    let doc = stdout(&doc);
    assert!(doc.contains(&format!("## On `{tree}`")), "{doc}");
    assert!(
        doc.contains("| app | `c` | Window, subrole chat | denied | deny:chat-window |"),
        "{doc}"
    );
    assert!(
        doc.contains(
            "| app | `pw` | Text, subrole AXSecureTextField | masked | mask:secret-title |"
        ),
        "{doc}"
    );
    for secret in ["private chat line", "pw-canary-5e1b", "4111"] {
        assert!(!doc.contains(secret), "{secret}");
    }
    let plan = ctxgate(&[
        "policy", "plan", "default", extra, "--action", "app", "--tree", tree,
    ]);
    assert_eq!(plan.status.code(), Some(0), "{}", stderr(&plan));
    let json: serde_json::Value = serde_json::from_slice(&plan.stdout).unwrap();
    let elements = json["trees"][0]["elements"].as_array().unwrap();
    let chat = elements.iter().find(|e| e["id"] == "c").unwrap();
    assert_eq!(chat["role"], "Window");
    assert_eq!(chat["subrole"], "chat");
    assert_eq!(chat["outcome"], "denied");
    assert_eq!(chat["rule"], "deny:chat-window");
    assert!(!String::from_utf8_lossy(&plan.stdout).contains("private chat line"));
}

/// A thread in a window, the user in one comment, each comment by someone.
const AUTHORS_TREE: &str = r#"{"protocol":"0.2.0","instance":"t","root":{"id":"app","role":"Application","children":[
 {"id":"w","role":"Window","focused":true,"children":[
  {"id":"c1","role":"Row","subrole":"comment","focused":true,"attributes":{"author":"Ada Lovelace"}},
  {"id":"c2","role":"Row","subrole":"comment","attributes":{"author":"Grace Hopper"}}]}]}}"#;

/// `strip` in the tools: `doc` and `plan` show what each action strips
/// (names, never values), and `diff` flags a policy that stops stripping
/// as sending more, on probes and on a real tree.
#[test]
fn doc_plan_and_diff_show_what_is_stripped() {
    let dir = tempdir();
    let tree = dir.join("tree.json");
    std::fs::write(&tree, AUTHORS_TREE).unwrap();
    let tree = tree.to_str().unwrap();
    let doc = ctxgate(&["policy", "doc", "--tree", tree]);
    assert_eq!(doc.status.code(), Some(0), "{}", stderr(&doc));
    let doc = stdout(&doc);
    assert!(
        doc.contains("| strip | Strip authors from wide context |"),
        "{doc}"
    );
    // Per action, what some probe has stripped.
    for (action, stripped) in [
        ("selection", "none"),
        ("focus", "none"),
        ("window", "author"),
        ("app", "author"),
    ] {
        let row = doc
            .lines()
            .find(|l| l.starts_with(&format!("| {action} | {action} |")))
            .unwrap_or_else(|| panic!("{action}: {doc}"));
        assert!(row.ends_with(&format!("| {stripped} |")), "{row}");
    }
    assert!(
        doc.contains("| Row, attribute `author` | scope · 20 | scope · 20 | scope, strips author · 20 | scope, strips author · 20 |"),
        "{doc}"
    );
    assert!(
        doc.contains("| app | `c2` | Row, subrole comment | sent | strips author |"),
        "{doc}"
    );
    assert!(!doc.contains("`c1` | Row, subrole comment | sent"), "{doc}");
    assert!(!doc.contains("Grace Hopper") && !doc.contains("Ada Lovelace"));

    let plan = ctxgate(&["policy", "plan", "--action", "window", "--tree", tree]);
    assert_eq!(plan.status.code(), Some(0), "{}", stderr(&plan));
    let json: serde_json::Value = serde_json::from_slice(&plan.stdout).unwrap();
    let probe = json["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["element"] == "Row, attribute `author`")
        .unwrap();
    assert_eq!(probe["strip"], serde_json::json!(["author"]));
    let rows = json["trees"][0]["elements"].as_array().unwrap();
    let c2 = rows.iter().find(|e| e["id"] == "c2").unwrap();
    assert_eq!(c2["stripped"], serde_json::json!(["author"]));
    let c1 = rows.iter().find(|e| e["id"] == "c1").unwrap();
    assert_eq!(c1["stripped"], serde_json::json!([]));

    // The default without its strip rule sends the authors: exit 1.
    let source = std::fs::read_to_string(format!("{ROOT}/policies/default.rego")).unwrap();
    let start = source.find("# METADATA\n# title: Strip authors").unwrap();
    let end = source.find("# METADATA\n# title: Priority").unwrap();
    let lax = dir.join("lax.rego");
    std::fs::write(&lax, format!("{}{}", &source[..start], &source[end..])).unwrap();
    let lax = lax.to_str().unwrap();
    let output = ctxgate(&["policy", "diff", "default", lax, "--tree", tree]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let text = stdout(&output);
    for line in [
        "window: Cell, attribute `author`: scope, strips author -> scope (sends more)\n",
        &format!(
            "{tree}, app: `c2` Row, subrole comment: sent, strips author -> sent (sends more)\n"
        ),
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
    assert!(!text.contains(&format!("{tree}, app: `c1`")), "{text}");
    assert!(!text.contains("Grace Hopper"));
    // The other way round strips more: nothing sends more.
    let output = ctxgate(&["policy", "diff", lax, "default", "--tree", tree]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    assert!(
        stdout(&output).contains("app: Cell, attribute `author`: scope -> scope, strips author\n")
    );
}
