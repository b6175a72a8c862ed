//! `ctxgate mcp` and `ctxgate mcp-intercept` against recorded exchanges:
//! `tests/mcp/playwright-exchange.jsonl` holds what Playwright MCP 0.0.86
//! answered on a local login page (tests/mcp_playwright.rs drives the real
//! server), played by `examples/mcp_replay.rs`, a fake upstream that also
//! logs what reached it. Failure modes (an upstream that exits, stalls or
//! writes garbage) are scripts of a few lines.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

const AUTOFILLED: &str = "Autofill-Secret-7Qx";
const TYPED: &str = "Typed-Secret-99";
const TOKEN: &str = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
const CARD: &str = "4111 1111 1111 1111";

/// The replay binary (an example), built once per run: `cargo test --test
/// mcp` builds no example, and a stale one would play an older contract.
fn replay() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let exe = std::env::current_exe().unwrap();
            let dir = exe.parent().unwrap().parent().unwrap().join("examples");
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let status = Command::new(cargo)
                .args(["build", "--quiet", "--example", "mcp_replay"])
                .current_dir(common::root())
                .status()
                .unwrap();
            assert!(status.success());
            dir.join(format!("mcp_replay{}", std::env::consts::EXE_SUFFIX))
        })
        .clone()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ctxgate-mcp-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A client talking to `ctxgate mcp … -- mcp_replay SCRIPT LOG`.
struct Client {
    child: Child,
    lines: Receiver<String>,
    next: u64,
    /// Messages that were not the reply waited for.
    others: Vec<Value>,
    log: PathBuf,
}

impl Client {
    fn start(script: &Path, flags: &[&str], dir: &Path) -> Client {
        let log = dir.join("upstream.log");
        let mut args: Vec<String> = vec!["mcp".into()];
        args.extend(flags.iter().map(|s| s.to_string()));
        args.push("--".into());
        args.push(replay().display().to_string());
        args.push(script.display().to_string());
        args.push(log.display().to_string());
        let mut child = Command::new(env!("CARGO_BIN_EXE_ctxgate"))
            .args(&args)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Client {
            child,
            lines,
            next: 0,
            others: Vec::new(),
            log,
        }
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.reply(&json!(id))
    }

    fn reply(&mut self, id: &Value) -> Value {
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(20))
                .expect("a reply within 20 s");
            let message: Value = serde_json::from_str(&line).expect("the proxy writes JSON");
            if message.get("id") == Some(id) && message.get("method").is_none() {
                return message;
            }
            self.others.push(message);
        }
    }

    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
    }

    /// What reached the upstream, one message a line.
    fn upstream(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn close(mut self) -> std::process::ExitStatus {
        drop(self.child.stdin.take());
        self.child.wait().unwrap()
    }
}

fn exchange() -> PathBuf {
    common::root().join("tests/mcp/playwright-exchange.jsonl")
}

fn script(dir: &Path, steps: &[Value]) -> PathBuf {
    let path = dir.join("script.jsonl");
    let text: String = steps.iter().map(|s| format!("{s}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

fn text_of(reply: &Value) -> String {
    reply["result"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn initialize(client: &mut Client) -> Value {
    let reply = client.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {"roots": {"listChanged": true}}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    reply
}

/// The whole recorded session: every kind of message forwarded, what the
/// gate must change changed, nothing secret in anything the client got.
#[test]
fn a_recorded_playwright_session_goes_through_the_gate() {
    let dir = scratch("session");
    let decisions = dir.join("decisions.jsonl");
    let mut client = Client::start(
        &exchange(),
        &[
            "--max-bytes",
            "3000",
            "--decision-log",
            decisions.to_str().unwrap(),
        ],
        &dir,
    );
    let mut received = Vec::new();

    let init = initialize(&mut client);
    assert_eq!(init["result"]["serverInfo"]["name"], "Playwright");
    assert_eq!(
        init["result"]["_meta"]["vendor.example/build"], "1",
        "_meta passes"
    );
    received.push(init);

    // Paged tools/list: denied tools gone, the cursor kept.
    let first = client.request("tools/list", json!({}));
    assert_eq!(first["result"]["nextCursor"], "page-2");
    let second = client.request("tools/list", json!({"cursor": "page-2"}));
    let names: Vec<String> = [&first, &second]
        .iter()
        .flat_map(|r| r["result"]["tools"].as_array().unwrap().clone())
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert!(names.contains(&"browser_click".to_string()));
    for denied in [
        "browser_evaluate",
        "browser_run_code_unsafe",
        "browser_take_screenshot",
    ] {
        assert!(!names.contains(&denied.to_string()), "{denied} listed");
    }

    // A navigation's linked snapshot and console log come inline, trimmed.
    let navigate = client.call(
        "browser_navigate",
        json!({"url": "http://127.0.0.1:8765/login.html"}),
    );
    let text = text_of(&navigate);
    assert!(!text.contains(".playwright-mcp/"), "a link is left: {text}");
    assert!(
        text.contains("- Snapshot (inlined by ctxgate)\n```yaml\n"),
        "{text}"
    );
    assert!(text.contains("[ctxgate] withheld by "), "{text}");
    assert!(text.contains("[ref=e7]"), "the button's ref: {text}");
    received.push(navigate);

    // An inline snapshot: within the budget, every item with its ref.
    let snapshot = client.call("browser_snapshot", json!({}));
    let text = text_of(&snapshot);
    let block = text
        .split("```yaml\n")
        .nth(1)
        .unwrap()
        .split("\n```")
        .next()
        .unwrap();
    assert!(block.len() <= 3000, "{} bytes", block.len());
    for line in block.lines() {
        let item = line.trim_start();
        if !(item.starts_with("- text:")
            || item.starts_with("- /url:")
            || item.starts_with("- [ctxgate]"))
        {
            assert!(item.contains("[ref=e"), "no ref: {line}");
        }
    }
    assert!(
        block.contains("- [ctxgate] in all"),
        "the budget's notice: {block}"
    );
    received.push(snapshot);
    let progress: Vec<&Value> = client
        .others
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 1);
    assert_eq!(
        progress[0]["params"]["message"],
        "reading card [card number]"
    );
    assert_eq!(progress[0]["params"]["progressToken"], "p1");

    // Typing into the secure field: the echo and later logs withhold it.
    let typed = client.call(
        "browser_type",
        json!({"element": "Password", "target": "e5", "text": TYPED}),
    );
    assert!(
        text_of(&typed).contains("fill('[ctxgate: withheld value 2]')"),
        "{typed}"
    );
    received.push(typed);
    let console = client.call("browser_console_messages", json!({}));
    let text = text_of(&console);
    assert!(
        text.contains("submitted [ctxgate: withheld value 2]"),
        "{text}"
    );
    assert!(
        text.contains("autofilled [ctxgate: withheld value 1]"),
        "{text}"
    );
    assert!(
        text.contains("[LOG] \\[ctxgate] nothing was withheld"),
        "page text escaped: {text}"
    );
    received.push(console);

    // A tool that returns no snapshot passes unchanged.
    let tabs = client.call("browser_tabs", json!({"action": "list"}));
    assert_eq!(
        text_of(&tabs),
        "### Result\n- 0: [Sign in](http://127.0.0.1:8765/login.html)\n- 1: (current) [](about:blank)"
    );
    // A file written for `filename` is inlined, redacted.
    let network = client.call("browser_network_requests", json!({"filename": "net.txt"}));
    let text = text_of(&network);
    assert!(
        text.contains("login.html?[credential] => 200")
            && text.contains("body=[ctxgate: withheld value 1]"),
        "{text}"
    );
    received.push(network);

    // Refused without reaching the upstream: a denied tool, a placeholder
    // typed back, a file outside the private folder.
    let denied = client.call("browser_evaluate", json!({"function": "() => 1"}));
    assert_eq!(denied["error"]["code"], -32602, "{denied}");
    let echoed = client.call(
        "browser_type",
        json!({"target": "e6", "text": "[ctxgate: withheld value 1]"}),
    );
    assert!(
        echoed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("placeholder"),
        "{echoed}"
    );
    let outside = client.call(
        "browser_network_requests",
        json!({"filename": "/tmp/x.txt"}),
    );
    assert!(outside["error"]["message"]
        .as_str()
        .unwrap()
        .contains("private folder"));

    // Unknown methods and notifications pass both ways.
    client.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99, "reason": "x"}}));
    let others = std::mem::take(&mut client.others);
    assert!(client.close().success());
    let upstream = std::fs::read_to_string(dir.join("upstream.log")).unwrap();
    let upstream: Vec<Value> = upstream
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        upstream[0]["params"]["capabilities"].get("roots").is_none(),
        "roots withheld"
    );
    assert!(upstream
        .iter()
        .any(|m| m["method"] == "notifications/initialized"));
    assert!(upstream
        .iter()
        .any(|m| m["method"] == "notifications/cancelled"));
    let called: Vec<&str> = upstream
        .iter()
        .filter_map(|m| m.pointer("/params/name").and_then(Value::as_str))
        .collect();
    assert!(!called.contains(&"browser_evaluate"), "{called:?}");
    assert_eq!(called.iter().filter(|n| **n == "browser_type").count(), 1);

    let all = serde_json::to_string(&received).unwrap() + &serde_json::to_string(&others).unwrap();
    for secret in [AUTOFILLED, TYPED, TOKEN, CARD] {
        assert!(!all.contains(secret), "{secret} reached the client");
    }
    // The decision log: counts, no content.
    let log = std::fs::read_to_string(&decisions).unwrap();
    assert_eq!(log.lines().count(), 6, "{log}");
    for secret in [AUTOFILLED, TYPED, TOKEN, CARD, "Sign in", "Item number"] {
        assert!(!log.contains(secret), "{secret} in the decision log");
    }
    let first: Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
    assert_eq!(first["tool"], "browser_navigate");
    assert!(first["trees"].as_u64().unwrap() >= 1 && first["files"].as_u64().unwrap() == 2);
}

/// Text blocks, embedded resource text and structuredContent string
/// leaves are redacted, and the text copy of structuredContent stays its
/// copy; unknown methods pass with their `_meta`.
#[test]
fn every_text_of_a_result_is_redacted() {
    let dir = scratch("redact");
    let structured = json!({"card": CARD, "count": 2, "note": "plain"});
    let path = script(
        &dir,
        &[
            json!({"on": "tools/call", "send": [{"result": {
                "content": [
                    {"type": "text", "text": format!("card {CARD}")},
                    {"type": "resource", "resource": {"uri": "mem://a", "mimeType": "text/plain", "text": format!("token {TOKEN}")}},
                    {"type": "text", "text": structured.to_string()},
                ],
                "structuredContent": structured,
                "_meta": {"k": CARD},
            }}]}),
            json!({"on": "vendor/unknown", "send": [{"result": {"ok": true, "_meta": {"x": 1}}}]}),
            json!({"on": "resources/read", "send": [{"result": {"contents": [{"uri": "mem://b", "text": format!("key {TOKEN}")}]}}]}),
            json!({"on": "prompts/get", "send": [{"error": {"code": -32602, "message": format!("no prompt for {CARD}")}}]}),
        ],
    );
    let mut client = Client::start(&path, &["--profile", "macos-ax"], &dir);
    let reply = client.call("report", json!({}));
    let result = &reply["result"];
    assert_eq!(result["content"][0]["text"], "card [card number]");
    assert_eq!(
        result["content"][1]["resource"]["text"],
        "token [github token]"
    );
    assert_eq!(result["content"][1]["resource"]["uri"], "mem://a");
    assert_eq!(result["structuredContent"]["card"], "[card number]");
    assert_eq!(result["structuredContent"]["count"], 2);
    let copy: Value = serde_json::from_str(result["content"][2]["text"].as_str().unwrap()).unwrap();
    assert_eq!(copy, result["structuredContent"]);
    assert_eq!(
        result["_meta"]["k"], CARD,
        "_meta is the client's own business"
    );
    let unknown = client.request("vendor/unknown", json!({}));
    assert_eq!(unknown["result"], json!({"ok": true, "_meta": {"x": 1}}));
    let read = client.request("resources/read", json!({"uri": "mem://b"}));
    assert_eq!(read["result"]["contents"][0]["text"], "key [github token]");
    let prompt = client.request("prompts/get", json!({"name": "x"}));
    assert_eq!(prompt["error"]["message"], "no prompt for [card number]");
    assert_eq!(prompt["error"]["code"], -32602);
    assert!(client.close().success());
}

/// An upstream that exits mid-call, stalls, or writes what is not
/// JSON-RPC: the client gets an error naming it and nothing of the output.
#[test]
fn upstream_failures_are_errors_not_hangs_or_leaks() {
    let dir = scratch("failures");
    let path = script(
        &dir,
        &[
            json!({"on": "tools/call", "tool": "garbage", "send": [{"raw": format!("Error: {CARD} is not a json line")}]}),
            json!({"on": "tools/call", "tool": "broken", "send": [{"result": {"content": "not a list", "secret": CARD}}]}),
            json!({"on": "tools/call", "tool": "slow", "send": [{"hang": true}]}),
        ],
    );
    let mut client = Client::start(&path, &["--timeout", "300ms"], &dir);
    let garbage = client.call("garbage", json!({}));
    assert_eq!(garbage["error"]["code"], -32002, "{garbage}");
    let broken = client.call("broken", json!({}));
    assert_eq!(broken["error"]["code"], -32002, "{broken}");
    for reply in [&garbage, &broken] {
        assert!(!reply.to_string().contains("4111"), "{reply}");
    }
    let started = std::time::Instant::now();
    let slow = client.call("slow", json!({}));
    assert_eq!(slow["error"]["code"], -32001, "{slow}");
    assert!(started.elapsed() < Duration::from_secs(5));
    std::thread::sleep(Duration::from_millis(100));
    let cancelled = client
        .upstream()
        .into_iter()
        .any(|m| m["method"] == "notifications/cancelled");
    assert!(cancelled, "the stalled call is cancelled upstream");
    drop(client);

    let dir = scratch("exit");
    let path = script(&dir, &[json!({"on": "tools/call", "send": [{"exit": 3}]})]);
    let mut client = Client::start(&path, &[], &dir);
    let exited = client.call("browser_snapshot", json!({}));
    assert_eq!(exited["error"]["code"], -32000, "{exited}");
    assert!(exited["error"]["message"]
        .as_str()
        .unwrap()
        .contains("exited"));
    // `wait` would close the proxy's input first: kept open, the proxy
    // still exits, on its own, because its upstream did.
    let _input = client.child.stdin.take();
    let status = client.child.wait().unwrap();
    assert_eq!(status.code(), Some(1), "the proxy exits with its upstream");
}

/// The macOS AX profile: a JSON text block whose `tree` is an AX tree.
#[test]
fn an_ax_tree_in_json_is_trimmed_in_place() {
    let dir = scratch("ax");
    let tree = json!({"role": "AXWindow", "name": "Login", "children": [
        {"role": "AXStaticText", "value": format!("card {CARD}")},
        {"role": "AXTextField", "subrole": "AXSecureTextField", "name": "Password", "value": AUTOFILLED},
        {"role": "AXButton", "name": "Sign in"},
    ]});
    let body = json!({"app": "Example", "tree": tree}).to_string();
    let path = script(
        &dir,
        &[
            json!({"on": "tools/call", "tool": "get_ui_tree", "send": [{"result": {"content": [{"type": "text", "text": body}]}}]}),
            json!({"on": "tools/call", "tool": "take_screenshot", "send": [{"result": {"content": []}}]}),
        ],
    );
    let mut client = Client::start(&path, &["--profile", "macos-ax"], &dir);
    let reply = client.call("get_ui_tree", json!({}));
    let text = text_of(&reply);
    assert!(!text.contains(AUTOFILLED) && !text.contains(CARD), "{text}");
    let body: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(body["app"], "Example");
    assert_eq!(body["tree"]["protocol"], "0.2.0", "{body}");
    assert!(text.contains("ctxgate:withheld"), "{text}");
    let denied = client.call("take_screenshot", json!({}));
    assert_eq!(denied["error"]["code"], -32602);
    assert!(client.close().success());
}

fn intercept(args: &[&str], stdin: &str) -> (i32, String) {
    let mut all = vec!["mcp-intercept"];
    all.extend(args);
    let out = common::ctxgate(&all, stdin.as_bytes());
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
    )
}

/// Docker MCP Gateway's `after` interceptor: a result, `{request,
/// response}`, or `null`; empty output when nothing changes.
#[test]
fn mcp_intercept_rewrites_recorded_payloads() {
    let lines: Vec<Value> = std::fs::read_to_string(exchange())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let snapshot = lines
        .iter()
        .find(|s| s["tool"] == "browser_snapshot")
        .unwrap()["send"][1]["result"]
        .clone();
    let (code, out) = intercept(&["--max-bytes", "2000"], &snapshot.to_string());
    assert_eq!(code, 0);
    let out: Value = serde_json::from_str(&out).unwrap();
    let text = out["content"][0]["text"].as_str().unwrap();
    assert!(
        !text.contains(AUTOFILLED) && !text.contains(TOKEN) && text.contains("[ref=e7]"),
        "{text}"
    );

    let plain = json!({"content": [{"type": "text", "text": "nothing to see"}]});
    assert_eq!(intercept(&[], &plain.to_string()), (0, String::new()));
    assert_eq!(intercept(&[], "null"), (0, String::new()));
    let wrapped = json!({"request": {"method": "tools/call", "params": {"name": "browser_tabs"}},
                         "response": {"content": [{"type": "text", "text": format!("card {CARD}")}]}});
    let (code, out) = intercept(&[], &wrapped.to_string());
    assert_eq!(code, 0);
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap()["content"][0]["text"],
        "card [card number]"
    );
    let denied = json!({"request": {"params": {"name": "browser_evaluate"}}, "response": plain});
    let (_, out) = intercept(&[], &denied.to_string());
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap()["isError"],
        true
    );
    let (code, out) = intercept(&[], "{not json");
    assert_eq!((code, out.as_str()), (1, ""));
    let (code, _) = intercept(&[], r#"{"content": 3}"#);
    assert_eq!(code, 1);
}

mod properties {
    use ctxgate::cli::mcp::profile::Profile;
    use ctxgate::cli::mcp::rewrite::{Counts, Rewriter};
    use proptest::prelude::*;

    fn rewriter(bytes: usize) -> Rewriter {
        Rewriter::new(
            ctxgate::Gate::embedded_default().unwrap(),
            "window",
            Some(ctxgate::Budget::Bytes(bytes)),
            Profile::load("playwright").unwrap(),
            None,
        )
        .unwrap()
    }

    /// One generated item: (kind, words, secret).
    fn snapshot(items: &[(u8, String, String)]) -> (String, Vec<String>) {
        let mut out = String::from("- generic [active] [ref=e1]:\n");
        let mut secrets = Vec::new();
        for (i, (kind, words, secret)) in items.iter().enumerate() {
            let r = i + 2;
            let line = match kind % 6 {
                0 => format!("  - listitem [ref=e{r}]: {words}\n"),
                1 => format!("  - textbox \"Password {i}\" [ref=e{r}]: {secret}\n"),
                2 => format!("  - button \"{words}\" [ref=e{r}]\n"),
                3 => format!("  - checkbox \"{words}\" [checked] [ref=e{r}]\n"),
                4 => format!("  - link \"{words}\" [ref=e{r}]:\n    - /url: /p/{i}\n"),
                _ => format!("  - heading \"{words}\" [level=2] [ref=e{r}]\n"),
            };
            if kind % 6 == 1 {
                secrets.push(secret.clone());
            }
            out.push_str(&line);
        }
        (out, secrets)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        /// The rewritten snapshot never holds a withheld value, fits the
        /// budget, and every item it sends keeps its ref; so does a second
        /// page through the same rewriter (which starts from the first
        /// page's ARIA-to-outline ratio).
        #[test]
        fn rewritten_snapshots_withhold_fit_and_keep_refs(
            pages in proptest::collection::vec(
                proptest::collection::vec((0u8..6, "[a-z]{3,8}( [a-z]{2,6}){0,3}", "[A-Za-z0-9]{8,16}"), 1..80),
                2,
            ),
            budget in 300usize..4_000,
        ) {
            let mut rewriter = rewriter(budget);
            for items in &pages {
                let (text, secrets) = snapshot(items);
                let mut counts = Counts::default();
                let Ok(out) = rewriter.trim_aria(&text, &mut counts) else {
                    // Only a budget too small for the path may refuse.
                    prop_assert!(budget < 600);
                    continue;
                };
                prop_assert!(out.len() <= budget, "{} > {budget}", out.len());
                for secret in &secrets {
                    prop_assert!(!out.contains(secret.as_str()), "{secret} sent:\n{out}");
                }
                for line in out.lines() {
                    let item = line.trim_start();
                    if !(item.starts_with("- text:") || item.starts_with("- /url:") || item.starts_with("- [ctxgate]")) {
                        prop_assert!(item.contains("[ref=e"), "no ref: {line}");
                    }
                }
            }
        }
    }
}
