//! What `ctxgate mcp` adds to a snapshot round trip: one Playwright MCP
//! `tools/call` reply holding a 1,000-node ARIA snapshot, read from its
//! JSON-RPC line, rewritten (secure values learnt, the snapshot imported,
//! trimmed for `window` under the default policy's 8,000 tokens and
//! written back, the rest redacted) and written as a line again. Inputs
//! are built outside the timed loop; prints the median and the 90th
//! percentile of 200 runs (`RUNS=N` for another number: callgrind at two
//! numbers gives one call's instructions, as a session pays them).
//!
//! ```sh
//! cargo run --release --example mcp_latency
//! ```

use ctxgate::cli::mcp::profile::Profile;
use ctxgate::cli::mcp::rewrite::{Counts, Rewriter};

fn snapshot(nodes: usize) -> String {
    let mut out = String::from("- generic [active] [ref=e1]:\n  - heading \"Orders\" [level=1] [ref=e2]\n  - textbox \"Password\" [ref=e3]: hunter2-secret\n  - list [ref=e4]:\n");
    for i in 5..nodes {
        match i % 4 {
            0 => out.push_str(&format!("    - listitem [ref=e{i}]: Order {i} shipped to Ada Lovelace, 12 Main St\n")),
            1 => out.push_str(&format!("    - link \"Order {i}\" [ref=e{i}] [cursor=pointer]:\n      - /url: /orders/{i}\n")),
            2 => out.push_str(&format!("    - button \"Cancel {i}\" [ref=e{i}]\n")),
            _ => out.push_str(&format!("    - checkbox \"Select {i}\" [checked] [ref=e{i}]\n")),
        }
    }
    out
}

fn main() {
    let text = format!(
        "### Page\n- Page URL: http://127.0.0.1/orders\n- Page Title: Orders\n### Snapshot\n```yaml\n{}```",
        snapshot(1_000)
    );
    let line = serde_json::json!({"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": text}]}}).to_string();
    let mut rewriter = Rewriter::new(
        ctxgate::Gate::embedded_default().unwrap(),
        "window",
        None,
        Profile::load("playwright").unwrap(),
        None,
    )
    .unwrap();
    ctxgate::Gate::warm_up_tokens();
    let mut times = Vec::new();
    let mut out_bytes = 0;
    for _ in 0..std::env::var("RUNS").map_or(200, |r| r.parse().unwrap()) {
        let start = std::time::Instant::now();
        let mut message: serde_json::Value = serde_json::from_str(&line).unwrap();
        let mut counts = Counts::default();
        rewriter
            .tool_result(
                Some("browser_snapshot"),
                &mut message["result"],
                &mut counts,
            )
            .unwrap();
        let written = serde_json::to_string(&message).unwrap();
        times.push(start.elapsed());
        out_bytes = written.len();
    }
    times.sort();
    println!(
        "1,000-node snapshot, {} bytes in, {} bytes out: median {:.2} ms, p90 {:.2} ms",
        line.len(),
        out_bytes,
        times[times.len() / 2].as_secs_f64() * 1e3,
        times[times.len() * 9 / 10].as_secs_f64() * 1e3
    );
}
