//! Helpers shared by the integration tests: running the binary and
//! comparing against expectation files (`UPDATE_EXPECT=1` rewrites them).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// What every importer writes in place of a secure field's value (never
/// the value): part of the output a host sees, so the tests name it.
pub const SECURE_MARKER: &str = "[secure value not imported]";

/// Whether a test may run that needs a tool outside the Rust toolchain
/// (Chromium, Python, Node), given whether it was found. Not found, the
/// test says it skipped, in one line, and returns; with
/// `CTXGATE_REQUIRE_TOOLS=1` (what `.ci/run` sets) a missing tool fails
/// the test instead.
pub fn tool_found(test: &str, tool: &str, found: bool, install: &str) -> bool {
    if found {
        return true;
    }
    if std::env::var("CTXGATE_REQUIRE_TOOLS").as_deref() == Ok("1") {
        panic!("{test}: {tool} not found and CTXGATE_REQUIRE_TOOLS=1: {install}");
    }
    eprintln!("{test}: skipped: {tool} not found ({install}; CTXGATE_REQUIRE_TOOLS=1 makes this a failure)");
    false
}

/// Whether a slow test runs: with `CTXGATE_SLOW_TESTS=1` (what `.ci/run`
/// sets). Otherwise it says it skipped, in one line, and the README's
/// `cargo test` stays within minutes.
pub fn slow_test_runs(test: &str) -> bool {
    if std::env::var("CTXGATE_SLOW_TESTS").as_deref() == Ok("1") {
        return true;
    }
    eprintln!("{test}: skipped: slow (CTXGATE_SLOW_TESTS=1 runs it)");
    false
}

/// The crate's root folder.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `ctxgate` with `args`, feeding `stdin`.
pub fn ctxgate(args: &[&str], stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ctxgate runs");
    let mut input = child.stdin.take().expect("stdin");
    let stdin = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let output = child.wait_with_output().expect("ctxgate ends");
    writer.join().expect("stdin written");
    output
}

/// `exit: N`, then stdout, then `--- stderr`, then stderr: what a user sees.
pub fn transcript(output: &Output) -> String {
    format!(
        "exit: {}\n{}--- stderr\n{}",
        output
            .status
            .code()
            .map_or("signal".to_string(), |c| c.to_string()),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Compares `actual` with the file at `path`, or rewrites it under
/// `UPDATE_EXPECT=1`. Returns a description of the mismatch.
pub fn expect_file(path: &Path, actual: &str) -> Result<(), String> {
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(path, actual).expect("expectation written");
        return Ok(());
    }
    let expected = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "{}: {e} (run with UPDATE_EXPECT=1 to create it)",
            path.display()
        )
    })?;
    if expected == actual {
        Ok(())
    } else {
        Err(format!(
            "{} differs\n--- expected\n{expected}\n--- actual\n{actual}",
            path.display()
        ))
    }
}

/// Every file in `dir` with extension `ext`, sorted.
pub fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    files
}

include!("with_logs.rs");

/// One `Gate` with the embedded default policy, shared by a test binary.
pub fn gate() -> &'static ctxgate::Gate {
    static GATE: std::sync::OnceLock<ctxgate::Gate> = std::sync::OnceLock::new();
    GATE.get_or_init(|| ctxgate::Gate::embedded_default().expect("the default policy compiles"))
}

/// An answer around a root element's JSON.
pub fn answer(root: &str) -> Vec<u8> {
    format!(r#"{{"protocol":"0.2.0","instance":"h","root":{root}}}"#).into_bytes()
}

/// An answer whose root `Application` has these children (JSON, comma-separated).
pub fn app(children: &str) -> Vec<u8> {
    answer(&format!(
        r#"{{"id":"app","role":"Application","title":"App","children":[{children}]}}"#
    ))
}

/// `bytes` trimmed by [`gate`]; panics on an error.
pub fn trim<'a>(bytes: &'a [u8], request: &ctxgate::Request) -> ctxgate::Trimmed<'a> {
    gate()
        .trim_bytes(bytes, request)
        .unwrap_or_else(|e| panic!("trim failed: {e}"))
}

/// The outcome the report gives element `id`, and the rule that decided it.
pub fn outcome(out: &ctxgate::Trimmed, id: &str) -> (ctxgate::Outcome, Option<String>) {
    let d = out
        .report
        .decisions
        .iter()
        .find(|d| d.id == id)
        .unwrap_or_else(|| panic!("no decision for `{id}`"));
    (d.outcome, d.rule.as_deref().map(str::to_string))
}

/// `canary` is in none of the output, the report and both renderings;
/// `what` names the case in a failure.
pub fn assert_never_sent(out: &ctxgate::Trimmed, canary: &str, what: &str) {
    assert!(!out.rendered.contains(canary), "{what}: {}", out.rendered);
    assert!(
        !serde_json::to_string(&out.report).unwrap().contains(canary),
        "{what}"
    );
    for format in [ctxgate::Format::Json, ctxgate::Format::Outline] {
        assert!(!format.render(&out.answer).contains(canary), "{what}");
    }
}

/// An answer's JSON without ctxgate's notices (`ctxgate:` attributes): what
/// a trim sent of the provider's elements. A trim drops the notices its
/// input carries (they are input, which a provider can write) and writes
/// its own from its own counts, so trimming an output again keeps this, not
/// the notices; and trimming that again changes nothing.
pub fn without_notices(answer: &ctxgate::Answer) -> serde_json::Value {
    use serde_json::Value;
    let mut value: Value = serde_json::from_str(&ctxgate::Format::Json.render(answer)).unwrap();
    let mut stack = vec![&mut value["root"]];
    while let Some(element) = stack.pop() {
        let Value::Object(element) = element else {
            continue;
        };
        if let Some(Value::Object(attributes)) = element.get_mut("attributes") {
            attributes.retain(|k, _| !k.starts_with("ctxgate:"));
            if attributes.is_empty() {
                element.remove("attributes");
            }
        }
        if let Some(Value::Array(children)) = element.get_mut("children") {
            stack.extend(children.iter_mut());
        }
    }
    value
}
