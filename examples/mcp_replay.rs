//! A fake MCP server for `tests/mcp.rs`: it plays a recorded exchange.
//! `mcp_replay SCRIPT [LOG]` reads SCRIPT, one JSON step a line:
//!
//! ```text
//! {"on": "tools/call", "tool": "browser_snapshot", "files": {"a.yml": "…"}, "send": [{"method": "notifications/progress", …}, {"result": {…}}]}
//! ```
//!
//! For each request it reads on stdin, it takes the next unused step whose
//! `on` is the request's method (and `tool` its tool), writes the step's
//! `files` (relative to its working folder), then sends each of `send`: a
//! message with `result` or `error` gets the request's `id`, others go as
//! they are; `{"raw": "…"}` writes that line as it is, `{"exit": N}`
//! exits with N, `{"hang": true}` leaves the request unanswered (it goes on reading). Every line it reads is
//! appended to LOG, so a test can say what reached the upstream.

use std::io::{BufRead, Write};

fn main() {
    let mut args = std::env::args().skip(1);
    let script = std::fs::read_to_string(args.next().expect("a script")).expect("readable");
    let log = args.next();
    let mut steps: Vec<Option<serde_json::Value>> = script
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| Some(serde_json::from_str(l).expect("a JSON step")))
        .collect();
    let stdout = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if let Some(log) = &log {
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(log)
                .expect("log");
            writeln!(file, "{line}").expect("log written");
        }
        let Ok(message) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        let (Some(method), Some(id)) = (message.get("method"), message.get("id")) else {
            continue;
        };
        let tool = message.pointer("/params/name");
        let found = steps.iter_mut().find(|s| {
            s.as_ref().is_some_and(|s| {
                s.get("on") == Some(method) && s.get("tool").is_none_or(|t| Some(t) == tool)
            })
        });
        let Some(step) = found.and_then(Option::take) else {
            continue;
        };
        if let Some(files) = step.get("files").and_then(|f| f.as_object()) {
            for (path, text) in files {
                let path = std::path::Path::new(path);
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).expect("folder");
                }
                std::fs::write(path, text.as_str().unwrap_or("")).expect("file");
            }
        }
        for send in step
            .get("send")
            .and_then(|s| s.as_array())
            .into_iter()
            .flatten()
        {
            if let Some(code) = send.get("exit").and_then(|c| c.as_i64()) {
                std::process::exit(code as i32);
            }
            if send.get("hang").is_some() {
                break;
            }
            let text = match send.get("raw").and_then(|r| r.as_str()) {
                Some(raw) => raw.to_string(),
                None => {
                    let mut send = send.clone();
                    send["jsonrpc"] = "2.0".into();
                    if send.get("result").is_some() || send.get("error").is_some() {
                        send["id"] = id.clone();
                    }
                    send.to_string()
                }
            };
            let mut out = stdout.lock();
            writeln!(out, "{text}").expect("stdout");
            out.flush().expect("flushed");
        }
    }
}
