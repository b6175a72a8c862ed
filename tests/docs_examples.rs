//! Every command shown with its output in the README and the docs runs, and
//! prints what the page says: an example that drifts fails here.
//!
//! What a page holds, as this test reads it:
//! - A fenced block (` ```text `, ` ```console ` or ` ```sh `) whose first
//!   line starts with `$ ` is a transcript: each `$ ` line is a command (a
//!   line ending in `\` continues it; a heredoc's body and end line belong
//!   to it), the lines up to the next command are what it prints, stdout
//!   then stderr. `…` in a line stands for any text; a line that is only
//!   `…` stands for any number of lines.
//! - A block whose info string has `file=NAME` (` ```json file=min.json `)
//!   is written to `NAME` before the page's next transcript runs.
//!
//! Each page's blocks run in order, in one scratch folder holding links to
//! the repository's `examples`, `tests` and `policies`, with `ctxgate` first
//! on `PATH`; the commands of one transcript run in one shell, so variables
//! carry from one to the next. A transcript that uses `curl` skips (or
//! fails, with `CTXGATE_REQUIRE_TOOLS=1`) where curl is absent.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The pages whose examples are run.
const PAGES: &[&str] = &["README.md", "docs/FORMAT.md", "policies/README.md"];

/// One command of a transcript and what it prints.
#[derive(Debug)]
struct Step {
    /// The page's line of the command.
    line: usize,
    command: String,
    expected: Vec<String>,
}

#[derive(Debug)]
enum Block {
    File { name: String, body: String },
    Transcript(Vec<Step>),
}

fn blocks(page: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let lines: Vec<&str> = page.lines().collect();
    let mut at = 0;
    while at < lines.len() {
        // A fence may be indented (inside a list item); so is its body.
        let indent = &lines[at][..lines[at].len() - lines[at].trim_start().len()];
        let Some(info) = lines[at].trim_start().strip_prefix("```") else {
            at += 1;
            continue;
        };
        let start = at + 1;
        let end = (start..lines.len())
            .find(|&i| lines[i].trim_start().starts_with("```"))
            .unwrap_or(lines.len());
        let body: Vec<&str> = lines[start..end]
            .iter()
            .map(|l| l.strip_prefix(indent).unwrap_or(l))
            .collect();
        at = end + 1;
        if let Some(name) = info
            .split_whitespace()
            .find_map(|w| w.strip_prefix("file="))
        {
            out.push(Block::File {
                name: name.to_string(),
                body: body.join("\n") + "\n",
            });
            continue;
        }
        let language = info.split_whitespace().next().unwrap_or("");
        if !matches!(language, "" | "text" | "console" | "sh")
            || !body.first().is_some_and(|l| l.starts_with("$ "))
        {
            continue;
        }
        out.push(Block::Transcript(steps(&body, start)));
    }
    out
}

fn steps(body: &[&str], first_line: usize) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let Some(command) = body[i].strip_prefix("$ ") else {
            if let Some(step) = steps.last_mut() {
                step.expected.push(body[i].to_string());
            }
            i += 1;
            continue;
        };
        let line = first_line + i + 1;
        let mut command = command.to_string();
        // Continuation lines and heredocs belong to the command.
        while command.ends_with('\\') && i + 1 < body.len() {
            i += 1;
            command.push('\n');
            command.push_str(body[i]);
        }
        if let Some(tag) = heredoc_tag(&command) {
            while i + 1 < body.len() {
                i += 1;
                command.push('\n');
                command.push_str(body[i]);
                if body[i] == tag {
                    break;
                }
            }
        }
        steps.push(Step {
            line,
            command,
            expected: Vec::new(),
        });
        i += 1;
    }
    steps
}

/// The end word of a heredoc the command opens (`<<'EOF'`, `<<EOF`).
fn heredoc_tag(command: &str) -> Option<String> {
    let after = command.rsplit_once("<<")?.1.trim_start_matches('-');
    let tag: String = after
        .trim_start_matches(['\'', '"'])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!tag.is_empty()).then_some(tag)
}

/// Whether `text` is what `pattern` says, `…` standing for any text.
fn line_matches(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('…').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || !text[first.len()..].ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// Whether the lines printed are what the page says (a `…` line stands for
/// any number of lines).
fn lines_match(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first == "…" => {
            (0..=actual.len()).any(|skip| lines_match(rest, &actual[skip..]))
        }
        Some((first, rest)) => {
            actual.first().is_some_and(|line| line_matches(first, line))
                && lines_match(rest, &actual[1..])
        }
    }
}

fn scratch(page: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("docs-examples")
        .join(page.replace('/', "-"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for linked in ["examples", "tests", "policies"] {
        std::os::unix::fs::symlink(common::root().join(linked), dir.join(linked)).unwrap();
    }
    dir
}

/// Runs a transcript in `dir`; the failures, each naming its line.
fn run(page: &str, dir: &Path, steps: &[Step]) -> Vec<String> {
    let bin = Path::new(env!("CARGO_BIN_EXE_ctxgate")).parent().unwrap();
    let mut script = String::new();
    for (k, step) in steps.iter().enumerate() {
        script += &format!("{{\n{}\n}} >.out.{k} 2>.err.{k}\n", step.command);
    }
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let status = Command::new("sh")
        .arg("-c")
        .arg(&script)
        .current_dir(dir)
        .env("PATH", path)
        .env_remove("CTXGATE_LOG")
        .status()
        .expect("sh runs");
    let _ = status;
    let mut failures = Vec::new();
    for (k, step) in steps.iter().enumerate() {
        let read = |name: String| std::fs::read_to_string(dir.join(name)).unwrap_or_default();
        let printed = read(format!(".out.{k}")) + &read(format!(".err.{k}"));
        let actual: Vec<&str> = printed.lines().collect();
        if !lines_match(&step.expected, &actual) {
            failures.push(format!(
                "{page}:{}: `{}` printed\n{printed}\nwhere the page says\n{}\n",
                step.line,
                step.command.lines().next().unwrap_or(""),
                step.expected.join("\n")
            ));
        }
    }
    failures
}

fn curl_found() -> bool {
    Command::new("curl").arg("--version").output().is_ok()
}

#[test]
fn every_example_on_the_pages_prints_what_the_page_says() {
    let mut failures = Vec::new();
    let mut transcripts = 0;
    for page in PAGES {
        let text = std::fs::read_to_string(common::root().join(page)).unwrap();
        let dir = scratch(page);
        for block in blocks(&text) {
            match block {
                Block::File { name, body } => std::fs::write(dir.join(name), body).unwrap(),
                Block::Transcript(steps) => {
                    let uses_curl = steps.iter().any(|s| s.command.contains("curl "));
                    if uses_curl
                        && !common::tool_found(
                            "docs_examples",
                            "curl",
                            curl_found(),
                            "apt-get install curl",
                        )
                    {
                        continue;
                    }
                    transcripts += 1;
                    failures.extend(run(page, &dir, &steps));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(transcripts >= 10, "only {transcripts} transcripts found");
}

#[test]
fn a_pattern_line_matches_as_the_pages_mean_it() {
    assert!(line_matches(
        "policy …, hash …",
        "policy default, hash 42bc"
    ));
    assert!(!line_matches(
        "policy …, hash …",
        "policy default; hash 42bc"
    ));
    assert!(line_matches("a…", "a"));
    assert!(!line_matches("a…b", "ab-c"));
    let lines = |s: &str| s.lines().map(String::from).collect::<Vec<_>>();
    assert!(lines_match(
        &lines("one\n…\nfour"),
        &["one", "two", "three", "four"]
    ));
    assert!(lines_match(&lines("one\n…\nfour"), &["one", "four"]));
    assert!(!lines_match(&lines("one\nfour"), &["one", "two", "four"]));
    assert!(!lines_match(&lines("one"), &[]));
}
