//! `ctxgate mcp` in front of the real Playwright MCP server (the version
//! pinned in tests/mcp/package.json, `npm ci` in tests/mcp) driving
//! Debian's headless Chromium on a page this test serves on 127.0.0.1,
//! with the official MCP Python SDK as the client (tests/mcp/client.py, its
//! pins in tests/mcp/requirements.txt; `CTXGATE_MCP_PYTHON` names a Python
//! that has them, else `python3`). Nothing the client receives may hold the
//! autofilled or typed password, the token or the card number.

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

const AUTOFILLED: &str = "Autofill-Secret-7Qx";
const TYPED: &str = "Typed-Secret-99";
const TOKEN: &str = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
const CARD: &str = "4111 1111 1111 1111";
const BUDGET: usize = 4_000;

fn login_page() -> String {
    let items: String = (1..=300)
        .map(|i| format!("<li>Item number {i} of the long list</li>"))
        .collect();
    format!(
        r#"<!doctype html><html><head><title>Sign in</title></head><body>
<h1>Sign in</h1>
<form onsubmit="event.preventDefault(); document.getElementById('status').textContent='Signed in'; console.log('submitted ' + document.getElementById('pw').value);">
<label for="user">User name</label><input id="user" value="ada">
<label for="pw">Password</label><input id="pw" type="password" value="{AUTOFILLED}">
<label for="tok">API token</label><input id="tok" value="{TOKEN}">
<button type="submit">Sign in</button>
</form>
<p id="status">Not signed in</p>
<p>Card on file: {CARD}</p>
<ul>{items}</ul></body></html>"#
    )
}

/// Serves the two pages on 127.0.0.1 until the test ends; the base url.
fn serve() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = [0u8; 4096];
            let n = stream.read(&mut request).unwrap_or(0);
            let head = String::from_utf8_lossy(&request[..n]);
            let path = head.split_whitespace().nth(1).unwrap_or("/");
            let (status, body) = match path {
                "/login.html" => ("200 OK", login_page()),
                "/other.html" => (
                    "200 OK",
                    format!("<!doctype html><title>Second</title><p>second tab, card {CARD}</p>"),
                ),
                _ => ("404 Not Found", String::new()),
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    base
}

fn python() -> String {
    std::env::var("CTXGATE_MCP_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn tools_found() -> bool {
    let test = "mcp_playwright";
    let root = common::root();
    let cli = root.join("tests/mcp/node_modules/@playwright/mcp/cli.js");
    let chromium = std::path::Path::new("/usr/bin/chromium").exists();
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let sdk = Command::new(python())
        .args(["-c", "import mcp.client.stdio"])
        .output()
        .is_ok_and(|o| o.status.success());
    common::tool_found(test, "node", node, "install Node.js")
        && common::tool_found(
            test,
            "@playwright/mcp",
            cli.exists(),
            "npm ci --prefix tests/mcp",
        )
        && common::tool_found(test, "chromium", chromium, "apt-get install chromium")
        && common::tool_found(
            test,
            "the MCP Python SDK",
            sdk,
            "pip install -r tests/mcp/requirements.txt, and CTXGATE_MCP_PYTHON=that python",
        )
}

fn texts(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

#[test]
fn playwright_mcp_through_the_gate() {
    if !tools_found() {
        return;
    }
    let started = std::time::Instant::now();
    let base = serve();
    let dir = std::env::temp_dir().join(format!("ctxgate-mcp-e2e-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("received.json");
    let decisions = dir.join("decisions.jsonl");
    let cli: PathBuf = common::root().join("tests/mcp/node_modules/@playwright/mcp/cli.js");
    let args: Vec<String> = [
        env!("CARGO_BIN_EXE_ctxgate"),
        "mcp",
        "--max-bytes",
        &BUDGET.to_string(),
        "--decision-log",
        decisions.to_str().unwrap(),
        "--",
        "node",
        cli.to_str().unwrap(),
        "--browser",
        "chromium",
        "--executable-path",
        "/usr/bin/chromium",
        "--headless",
        "--no-sandbox",
        "--isolated",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let run = Command::new(python())
        .arg(common::root().join("tests/mcp/client.py"))
        .arg(&base)
        .arg(&out)
        .arg(serde_json::to_string(&args).unwrap())
        .output()
        .unwrap();
    let received = std::fs::read_to_string(&out).unwrap_or_else(|_| {
        panic!(
            "the client wrote nothing: {}\n{}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        )
    });
    let all: Value = serde_json::from_str(&received).unwrap();

    for secret in [AUTOFILLED, TYPED, TOKEN, CARD] {
        assert!(!received.contains(secret), "{secret} reached the client");
    }
    let tools: Vec<&str> = all["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(
        tools.contains(&"browser_click") && !tools.contains(&"browser_evaluate"),
        "{tools:?}"
    );
    assert!(
        all["evaluate"].as_str().unwrap().contains("denied"),
        "{}",
        all["evaluate"]
    );

    let results = all["results"].as_object().unwrap();
    for (key, result) in results {
        let text = texts(result);
        // Every snapshot fits the budget; no result links to a file.
        for block in text.split("```yaml\n").skip(1) {
            let block = block.split("\n```").next().unwrap();
            assert!(
                block.len() <= BUDGET,
                "{key}: a snapshot of {} bytes",
                block.len()
            );
        }
        assert!(
            !text.contains(".playwright-mcp"),
            "{key} links a file: {text}"
        );
        for link in text.split("](").skip(1) {
            let target = link.split(')').next().unwrap();
            assert!(
                target.starts_with("http://") || target.starts_with("about:"),
                "{key} links {target}"
            );
        }
    }
    let snapshot = texts(&results["snapshot"]);
    assert!(snapshot.contains("[ctxgate] withheld by"), "{snapshot}");
    assert!(
        snapshot.contains("- [ctxgate] in all"),
        "the long list was cut: {snapshot}"
    );
    assert!(
        snapshot.contains("[card number]") && snapshot.contains("[github token]"),
        "{snapshot}"
    );
    // The click by the trimmed snapshot's ref worked: the page says so.
    assert!(
        texts(&results["click"]).contains("\"Signed in\""),
        "{}",
        texts(&results["click"])
    );
    assert!(
        texts(&results["type"]).contains("[ctxgate: withheld value"),
        "{}",
        texts(&results["type"])
    );
    assert!(texts(&results["console"]).contains("submitted [ctxgate: withheld value"));
    // A tool that returns no snapshot passes unchanged.
    assert_eq!(
        texts(&results["tabs"]),
        format!("### Result\n- 0: [Sign in]({base}/login.html)\n- 1: (current) [Second]({base}/other.html)")
    );
    // The upstream killed mid-call: an error, not a hang.
    assert!(
        all["killed"].as_str().unwrap().contains("upstream exited"),
        "{}",
        all["killed"]
    );
    let log = std::fs::read_to_string(&decisions).unwrap();
    assert!(log.lines().count() >= 8, "{log}");
    for secret in [AUTOFILLED, TYPED, TOKEN, CARD, "Item number"] {
        assert!(!log.contains(secret));
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        started.elapsed().as_secs() < 60,
        "took {:?}",
        started.elapsed()
    );
}
