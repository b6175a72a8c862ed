//! `ctxgate policy diff` through the binary: every field a rule can read
//! is explored (host-named actions, title patterns by content, subrole
//! with attribute, ancestors, computed strip names, the app instance), a
//! rule it cannot enumerate is undecided and fails the gate, and each side
//! may be layers.

use std::process::Output;

mod common;

/// `ctxgate args` from the crate's root, with nothing on stdin.
fn ctxgate(args: &[&str]) -> Output {
    common::ctxgate(args, b"")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn tempdir() -> std::path::PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "ctxgate-policy-diff-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// OLD and NEW as one file each, in a fresh folder; their paths.
fn pair(old: &str, new: &str) -> (String, String) {
    let dir = tempdir();
    let (a, b) = (dir.join("old.rego"), dir.join("new.rego"));
    std::fs::write(&a, format!("package ctxgate\n{old}")).unwrap();
    std::fs::write(&b, format!("package ctxgate\n{new}")).unwrap();
    (
        a.to_str().unwrap().to_string(),
        b.to_str().unwrap().to_string(),
    )
}

/// Runs `policy diff OLD NEW`; its exit code and output.
fn diff(old: &str, new: &str) -> (Option<i32>, String) {
    let (a, b) = pair(old, new);
    let output = ctxgate(&["policy", "diff", &a, &b]);
    let text = stdout(&output);
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code(), text)
}

fn has(text: &str, line: &str) {
    assert!(text.contains(line), "{line}\n---\n{text}");
}

#[test]
fn a_host_named_action_that_widens_the_scope_sends_more() {
    let (code, text) = diff(
        r#"scope := "focus""#,
        r#"scope := "app" if input.action.name == "summarize" else := "focus""#,
    );
    has(&text, "summarize: scope: focus -> app (sends more)\n");
    assert!(text.contains(" 6 actions,"), "{text}");
    assert_eq!(code, Some(1), "{text}");
    // The other way round narrows it: exit 0, the change still named.
    let (code, text) = diff(
        r#"scope := "app" if input.action.name == "summarize" else := "focus""#,
        r#"scope := "focus""#,
    );
    has(&text, "summarize: scope: app -> focus\n");
    assert_eq!(code, Some(0), "{text}");
}

#[test]
fn an_action_neither_policy_names_is_explored() {
    let (code, text) = diff(
        r#"scope := "focus" if input.action.name in {"selection", "focus", "window", "app"} else := "selection""#,
        r#"scope := "focus""#,
    );
    has(
        &text,
        "ctxgate-unnamed-action: scope: selection -> focus (sends more)\n",
    );
    assert_eq!(code, Some(1));
}

const SECRET_MASK: &str = r#"
mask contains "secret-title" if "secret" in input.element.title_matches
"#;

#[test]
fn a_renamed_title_pattern_that_a_rule_no_longer_sees_sends_more() {
    let (code, text) = diff(
        &format!("title_patterns := {{\"secret\": `(?i)secret`}}\n{SECRET_MASK}"),
        &format!("title_patterns := {{\"hidden\": `(?i)secret`}}\n{SECRET_MASK}"),
    );
    has(
        &text,
        "focus: title_patterns: removed or changed: secret; added or changed: hidden\n",
    );
    has(
        &text,
        "focus: Text, title matches old `secret`, new `hidden`: mask (secret-title) -> scope (sends more)\n",
    );
    assert_eq!(code, Some(1));
}

#[test]
fn a_neutralised_title_pattern_sends_more() {
    let (code, text) = diff(
        &format!("title_patterns := {{\"secret\": `(?i)secret`}}\n{SECRET_MASK}"),
        &format!("title_patterns := {{\"secret\": `(?i)xyzzy-never`}}\n{SECRET_MASK}"),
    );
    has(
        &text,
        "focus: title_patterns: removed or changed: secret; added or changed: secret\n",
    );
    has(
        &text,
        "focus: Text, title matches old `secret`, new none: mask (secret-title) -> scope (sends more)\n",
    );
    assert_eq!(code, Some(1));
}

#[test]
fn a_rule_on_role_subrole_and_attribute_together_is_explored() {
    let declared = r#"element_attributes := {"privacy"}
"#;
    let (code, text) = diff(
        &format!(
            "{declared}deny contains \"private-chat\" if {{\n\tinput.element.role == \"Row\"\n\tinput.element.subrole == \"chat\"\n\tinput.element.attributes.privacy == \"private\"\n}}\n"
        ),
        declared,
    );
    has(
        &text,
        "focus: Row, subrole chat, attribute `privacy` = `private`: deny (private-chat) -> scope (sends more)\n",
    );
    assert_eq!(code, Some(1));
}

#[test]
fn a_rule_on_ancestors_is_explored_by_role_and_count() {
    let rule = |n: u32| {
        format!(
            "deny contains \"in-chat\" if {{\n\tsome a in input.inside\n\ta.role == \"Window\"\n\ta.subrole == \"chat\"\n\tcount(input.inside) > {n}\n}}\n"
        )
    };
    let (code, text) = diff(&rule(2), &rule(5));
    has(
        &text,
        "focus: Text, inside Window (chat) < Group < Group: deny (in-chat) -> scope (sends more)\n",
    );
    assert_eq!(code, Some(1));
}

#[test]
fn a_computed_strip_name_is_explored() {
    let (code, text) = diff(
        "strip contains n if {\n\tsome n in input.element.attribute_names\n\tstartswith(n, \"x-\")\n}\n",
        "strip contains \"x-email\" if \"x-email\" in input.element.attribute_names\n",
    );
    has(
        &text,
        "focus: Text, attribute `x-`: scope, strips x- -> scope (sends more)\n",
    );
    assert_eq!(code, Some(1));
}

#[test]
fn the_app_instance_is_explored() {
    let (code, text) = diff(
        "deny contains \"banking\" if input.app.instance == \"bank\"\n",
        "deny contains \"banking\" if input.app.instance == \"bank-app\"\n",
    );
    has(
        &text,
        "focus (instance `bank`): Text: deny (banking) -> scope (sends more)\n",
    );
    has(
        &text,
        "focus (instance `bank-app`): Text: scope -> deny (banking)\n",
    );
    assert_eq!(code, Some(1));
}

#[test]
fn a_regex_on_a_declared_attribute_is_undecided_and_fails_the_gate() {
    let policy = "element_attributes := {\"email\"}\nmask contains \"email\" if regex.match(`@`, input.element.attributes.email)\n";
    let (code, text) = diff(policy, &format!("{policy}# reviewed\n"));
    // Once per side: each file is named.
    has(&text, "undecided: 2 rules\n");
    for side in ["old", "new"] {
        has(
            &text,
            &format!(
                "{side}.rego:3 `mask`: it calls `regex.match` on a value read from the input\n"
            ),
        );
    }
    assert!(
        text.ends_with("NEW sends more than OLD: no; undecided: 2 rules\n"),
        "{text}"
    );
    assert_eq!(code, Some(1));
}

#[test]
fn layered_sides_are_loaded_as_layers() {
    let dir = tempdir();
    let (site, next) = (dir.join("site"), dir.join("site-next"));
    std::fs::create_dir_all(&site).unwrap();
    std::fs::create_dir_all(&next).unwrap();
    std::fs::write(
        site.join("chat.rego"),
        "package ctxgate\ndeny contains \"chat-window\" if {\n\tinput.element.role == \"Window\"\n\tinput.element.subrole == \"chat\"\n}\n",
    )
    .unwrap();
    std::fs::write(
        next.join("chat.rego"),
        "package ctxgate\nstrip contains \"x-email\" if \"x-email\" in input.element.attribute_names\n",
    )
    .unwrap();
    let (site, next) = (site.to_str().unwrap(), next.to_str().unwrap());
    let output = ctxgate(&[
        "policy", "diff", "--old", "default", "--old", site, "--new", "default", "--new", next,
    ]);
    let text = stdout(&output);
    assert!(
        text.starts_with(&format!("policy diff: default + {site} (")),
        "{text}"
    );
    has(
        &text,
        "focus: Window, subrole chat: deny (chat-window) -> scope (sends more)\n",
    );
    assert_eq!(output.status.code(), Some(1), "{text}");
    // The JSON says the same, with what was explored.
    let output = ctxgate(&[
        "policy", "diff", "--old", "default", "--old", site, "--new", "default", "--new", next,
        "--format", "json",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["sends_more"], true);
    assert_eq!(json["old"]["layers"], serde_json::json!(["default", site]));
    // The eleven roles the default names, and one it does not.
    assert_eq!(json["explored"]["roles"], 12);
    assert!(json["explored"]["inputs"].as_u64().unwrap() > 1000);
    assert!(json["changes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["element"] == "Window, subrole chat" && c["sends_more"] == true));
    // One side given both ways is a usage error.
    let output = ctxgate(&["policy", "diff", "default", "--old", site, "--new", next]);
    assert_eq!(output.status.code(), Some(2));
    let output = ctxgate(&["policy", "diff", "--new", next]);
    assert_eq!(output.status.code(), Some(2));
}
