//! Conventions of the command line a user expects of any Unix tool.

mod common;

use std::process::{Command, Stdio};

/// A reader that closes the pipe early (`ctxgate … | head -c 1`) ends the
/// command quietly with 0, as ripgrep does: no `Broken pipe` error.
#[test]
fn a_closed_pipe_ends_the_command_quietly() {
    let big = Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .args(["synth", "--elements", "20000"])
        .output()
        .unwrap();
    assert!(big.status.success());
    let path =
        std::env::temp_dir().join(format!("ctxgate-closed-pipe-{}.json", std::process::id()));
    std::fs::write(&path, &big.stdout).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .args(["trim", "--action", "app", "--max-bytes", "100000000"])
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read one byte, then close the pipe while ctxgate is still writing.
    {
        use std::io::Read;
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 1];
        stdout.read_exact(&mut first).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// Piped, stdout is exactly what the budget measured: no newline is added
/// after JSON, which ends with `}`.
#[test]
fn piped_output_is_exactly_what_was_measured() {
    let out = Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["trim", "--max-bytes", "600", "examples/notes.json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        out.stdout.ends_with(b"}"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(out.stdout.len() <= 600);
}

/// JSON error positions are 1-based and point at the offending byte, or
/// just past the last one when the input ends too early.
#[test]
fn json_errors_name_a_1_based_place() {
    for (input, place) in [
        (&b"{\n"[..], "line 2, column 1"),
        (b"{\"a\":", "line 1, column 6"),
        (b"{\"a\" 1}", "line 1, column 6"),
        (b"", "line 1, column 1"),
        (b"[1,\n 2,,]", "line 2, column 4"),
    ] {
        let out = common::ctxgate(&["check"], input);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(place),
            "{:?}: {err}",
            String::from_utf8_lossy(input)
        );
        let out = common::ctxgate(&["trim", "--json"], input);
        let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
        let (line, column) = place
            .strip_prefix("line ")
            .and_then(|p| p.split_once(", column "))
            .unwrap();
        assert_eq!(err["error"]["data"]["line"], line.parse::<u64>().unwrap());
        assert_eq!(
            err["error"]["data"]["column"],
            column.parse::<u64>().unwrap()
        );
    }
}

/// `ctxgate man` prints the man page, and docs/ctxgate.1 is what it
/// prints (`UPDATE_EXPECT=1` rewrites it), so the shipped page cannot
/// drift from `--help`.
#[test]
fn the_shipped_man_page_is_what_ctxgate_man_prints() {
    let out = Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .arg("man")
        .output()
        .unwrap();
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    for command in [
        "trim",
        "explain",
        "check",
        "import",
        "policy",
        "serve",
        "completions",
    ] {
        assert!(
            page.contains(&format!(".TH ctxgate-{command} ")),
            "{command}"
        );
    }
    let shipped = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ctxgate.1");
    if let Err(diff) = common::expect_file(&shipped, &page) {
        panic!("{diff}");
    }
}

/// `ctxgate completions SHELL` prints a script that names every
/// subcommand; bash parses it.
#[test]
fn completions_name_every_subcommand() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = Command::new(env!("CARGO_BIN_EXE_ctxgate"))
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        for command in ["trim", "explain", "policy", "serve", "import"] {
            assert!(script.contains(command), "{shell}: {command}");
        }
    }
    let bash = Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .args(["completions", "bash"])
        .output()
        .unwrap();
    let path = std::env::temp_dir().join(format!("ctxgate-completion-{}.bash", std::process::id()));
    std::fs::write(&path, &bash.stdout).unwrap();
    if let Ok(check) = Command::new("bash").arg("-n").arg(&path).output() {
        assert!(
            check.status.success(),
            "{}",
            String::from_utf8_lossy(&check.stderr)
        );
    }
    std::fs::remove_file(&path).unwrap();
}

/// `check` reads and checks; it decides nothing, so it offers no policy
/// limit. `trim` and `serve` do.
#[test]
fn each_subcommand_offers_only_the_limits_it_uses() {
    let help = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_ctxgate"))
            .args(args)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    assert!(!help(&["check", "--help"]).contains("--max-projections"));
    assert!(help(&["check", "--help"]).contains("--max-input-bytes"));
    for command in ["trim", "explain", "serve"] {
        assert!(
            help(&[command, "--help"]).contains("--max-projections"),
            "{command}"
        );
    }
}

/// `trim` says what it read past — fields outside the protocol, role
/// words outside the language — by count and first pointer, never by
/// value; `--strict` refuses such an answer and sends nothing.
#[test]
fn trim_tells_what_it_ignored_and_strict_refuses_it() {
    let answer =
        br#"{"protocol":"0.2.0","instance":"i","root":{"id":"a","role":"Application","children":[
        {"id":"b","role":"Button","title":"Save","focused":true,"text":"secret-value-7"},
        {"id":"c","role":"TextField","kind":"password-9"}]}}"#;
    let out = common::ctxgate(&["trim"], answer);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err,
        "warning: 2 fields outside the protocol were ignored (never sent) and 2 role words outside the language were read as `Group`; the first at /root/children/0/text (`ctxgate check` lists each; `--strict` refuses them)\n"
    );
    let sent = String::from_utf8_lossy(&out.stdout);
    assert!(
        !sent.contains("secret-value-7") && !sent.contains("password-9"),
        "{sent}"
    );
    let strict = common::ctxgate(&["trim", "--strict"], answer);
    assert_eq!(strict.status.code(), Some(1));
    assert!(strict.stdout.is_empty());
    // The report says the same, as counts.
    let json = common::ctxgate(&["trim", "--json"], answer);
    let result: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        result["report"]["ignored"],
        serde_json::json!({"fields": 2, "roles": 2, "first": "/root/children/0/text"})
    );
    // A clean answer has no `ignored`.
    let clean = Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["trim", "--json", "examples/notes.json"])
        .output()
        .unwrap();
    let result: serde_json::Value = serde_json::from_slice(&clean.stdout).unwrap();
    assert!(result["report"].get("ignored").is_none());
    assert!(clean.stderr.is_empty());
}

/// An action neither built in nor named by the policy is a guess: `trim`
/// warns and names the built-in four; `--strict` refuses it (exit 2,
/// nothing sent). A host's own word the policy names is not warned about.
#[test]
fn an_unknown_action_is_warned_about_and_strict_refuses_it() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_ctxgate"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["trim", "--action", "windw", "examples/notes.json"]);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the action `windw` is neither built in (`selection`, `focus`, `window`, `app`) nor named by the policy (did you mean `window`?)"),
        "{err}"
    );
    let strict = run(&[
        "trim",
        "--strict",
        "--action",
        "windw",
        "examples/notes.json",
    ]);
    assert_eq!(strict.status.code(), Some(2));
    assert!(strict.stdout.is_empty());
    for action in ["window", "focus"] {
        let out = run(&["trim", "--action", action, "examples/notes.json"]);
        assert!(out.stderr.is_empty(), "{action}");
    }
    let dir = std::env::temp_dir().join(format!("ctxgate-own-action-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("summarize.rego"),
        "package ctxgate\n\nkeep contains \"summary\" if input.action.name == \"summarize\"\n",
    )
    .unwrap();
    let policy = dir.to_str().unwrap();
    let out = run(&[
        "trim",
        "--policy",
        "default",
        "--policy",
        policy,
        "--action",
        "summarize",
        "examples/notes.json",
    ]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `policy show default` prints the embedded default policy's Rego, byte
/// for byte, after its hash: a reviewer reads what runs, with no checkout.
#[test]
fn policy_show_prints_the_embedded_default_and_its_hash() {
    let out = Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .args(["policy", "show", "default"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let (head, rego) = text.split_once("\n\n# ==> <default> <==\n").unwrap();
    assert_eq!(rego, include_str!("../policies/default.rego"));
    let hash = head.strip_prefix("# policy hash: ").unwrap();
    let plan = Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .args(["policy", "plan", "--action", "focus"])
        .output()
        .unwrap();
    let plan: serde_json::Value = serde_json::from_slice(&plan.stdout).unwrap();
    assert_eq!(plan["policy"].as_str(), Some(hash), "{plan}");
}
