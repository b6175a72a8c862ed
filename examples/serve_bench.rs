//! Latency and throughput of `ctxgate serve` (stdio and HTTP, 1/2/4
//! concurrent clients) beside one `ctxgate trim` process per request, on
//! the real trees of `tests/fixtures/answers/`. Prints a Markdown table
//! (BENCHMARKS.md, "Serving"). Run against a release binary:
//!
//! ```text
//! cargo build --release && cargo run --release --example serve_bench
//! ```
//!
//! Options (environment): `CTXGATE` the binary (default
//! `target/release/ctxgate`), `TREE` a fixture file name (default
//! `mac-apg-data-grids.json`, 463 elements), `ACTION` (default `focus`),
//! `REQUESTS` per row for the server (default 4000), `SPAWNS` per row for
//! the per-process baseline (default 60).
//!
//! Latency is from the request's first byte written to its reply's last
//! byte read, on the client; stdio clients share the one server's pipe
//! (requests tagged by id, replies matched by id), HTTP clients each keep
//! one keep-alive connection.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

struct Row {
    what: String,
    clients: usize,
    latencies: Vec<Duration>,
    wall: Duration,
}

impl Row {
    fn print(&self) {
        let mut sorted = self.latencies.clone();
        sorted.sort();
        let at = |q: f64| sorted[((sorted.len() as f64 * q) as usize).min(sorted.len() - 1)];
        println!(
            "| {} | {} | {} | {:.3} | {:.3} | {:.0} |",
            self.what,
            self.clients,
            sorted.len(),
            at(0.50).as_secs_f64() * 1e3,
            at(0.99).as_secs_f64() * 1e3,
            sorted.len() as f64 / self.wall.as_secs_f64()
        );
    }
}

/// Runs `per_client` calls on each of `clients` threads; each call returns
/// its latency.
fn drive<C: Send>(
    what: &str,
    clients: Vec<C>,
    per_client: usize,
    call: impl Fn(&mut C) -> Duration + Sync,
) -> Row {
    let n = clients.len();
    let start = Instant::now();
    let latencies: Vec<Duration> = std::thread::scope(|s| {
        let handles: Vec<_> = clients
            .into_iter()
            .map(|mut client| {
                let call = &call;
                s.spawn(move || {
                    (0..per_client)
                        .map(|_| call(&mut client))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    Row {
        what: what.to_string(),
        clients: n,
        latencies,
        wall: start.elapsed(),
    }
}

/// One server on stdio, shared by client threads.
struct StdioServer {
    child: Child,
    stdin: Mutex<std::process::ChildStdin>,
    waiting: Arc<Mutex<HashMap<u64, Sender<String>>>>,
    next: Mutex<u64>,
}

impl StdioServer {
    fn start(binary: &str) -> Arc<StdioServer> {
        let mut child = Command::new(binary)
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("ctxgate serve runs");
        let stdout = child.stdout.take().unwrap();
        let waiting: Arc<Mutex<HashMap<u64, Sender<String>>>> = Arc::default();
        {
            let waiting = waiting.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let line = line.unwrap();
                    // `{"jsonrpc":"2.0","id":N,...`: the id without a parse.
                    let at = line.find("\"id\":").unwrap() + 5;
                    let id: u64 = line[at..at + line[at..].find(',').unwrap()]
                        .parse()
                        .unwrap();
                    let sender = waiting.lock().unwrap().remove(&id).unwrap();
                    sender.send(line).unwrap();
                }
            });
        }
        Arc::new(StdioServer {
            stdin: Mutex::new(child.stdin.take().unwrap()),
            child,
            waiting,
            next: Mutex::new(1),
        })
    }

    fn call(&self, params: &str) -> Duration {
        let (sender, receiver) = channel();
        let id = {
            let mut next = self.next.lock().unwrap();
            *next += 1;
            *next
        };
        self.waiting.lock().unwrap().insert(id, sender);
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"trim\",\"params\":{params}}}\n"
        );
        let start = Instant::now();
        self.stdin
            .lock()
            .unwrap()
            .write_all(line.as_bytes())
            .unwrap();
        let reply = receiver.recv().unwrap();
        let took = start.elapsed();
        assert!(
            reply.contains("\"result\""),
            "{}",
            &reply[..reply.len().min(300)]
        );
        took
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A keep-alive HTTP/1.1 connection.
struct Connection {
    stream: BufReader<TcpStream>,
    addr: String,
}

impl Connection {
    fn open(addr: &str) -> Connection {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_nodelay(true).unwrap();
        Connection {
            stream: BufReader::new(stream),
            addr: addr.to_string(),
        }
    }

    fn post(&mut self, body: &str) -> Duration {
        let request = format!(
            "POST /v1/trim HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            self.addr,
            body.len()
        );
        let start = Instant::now();
        self.stream.get_mut().write_all(request.as_bytes()).unwrap();
        let mut length = 0;
        let mut status = String::new();
        self.stream.read_line(&mut status).unwrap();
        loop {
            let mut header = String::new();
            self.stream.read_line(&mut header).unwrap();
            if header == "\r\n" {
                break;
            }
            if let Some(v) = header.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        self.stream.read_exact(&mut body).unwrap();
        let took = start.elapsed();
        assert!(status.contains(" 200 "), "{status}");
        took
    }
}

fn main() {
    let binary = env_or(
        "CTXGATE",
        root().join("target/release/ctxgate").to_str().unwrap(),
    );
    let tree = env_or("TREE", "mac-apg-data-grids.json");
    let action = env_or("ACTION", "focus");
    let requests: usize = env_or("REQUESTS", "4000").parse().unwrap();
    let spawns: usize = env_or("SPAWNS", "60").parse().unwrap();
    let path = root().join("tests/fixtures/answers").join(&tree);
    let answer = std::fs::read_to_string(&path).expect("the tree");
    let compact: serde_json::Value = serde_json::from_str(&answer).unwrap();
    let params = serde_json::json!({"answer": compact, "action": action}).to_string();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "tree `{tree}` ({} bytes compact), action `{action}`, {cpus} CPUs, `{binary}`\n",
        params.len()
    );
    println!("| transport | clients | requests | p50 ms | p99 ms | requests/s |");
    println!("|---|---|---|---|---|---|");

    let mut baseline = 0.0;
    for clients in [1, 2, 4] {
        let row = drive(
            "one `ctxgate trim` process per request",
            vec![(); clients],
            spawns / clients,
            |_| {
                let start = Instant::now();
                let out = Command::new(&binary)
                    .args(["trim", "--json", "--action", &action])
                    .arg(&path)
                    .output()
                    .unwrap();
                assert!(out.status.success());
                start.elapsed()
            },
        );
        if clients == 1 {
            baseline = row.latencies.len() as f64 / row.wall.as_secs_f64();
        }
        row.print();
    }

    let server = StdioServer::start(&binary);
    for _ in 0..200 {
        server.call(&params);
    }
    for clients in [1, 2, 4] {
        let row = drive(
            "stdio",
            vec![server.clone(); clients],
            requests / clients,
            |s| s.call(&params),
        );
        row.print();
        if clients == 1 {
            eprintln!(
                "stdio, 1 client: {:.0}x the per-process throughput",
                row.latencies.len() as f64 / row.wall.as_secs_f64() / baseline
            );
        }
    }
    drop(server);

    let mut http = Command::new(&binary)
        .args(["serve", "--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ctxgate serve --http runs");
    let mut stderr = BufReader::new(http.stderr.take().unwrap());
    let addr = loop {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "the server stopped"
        );
        if let Some(addr) = line.trim().strip_prefix("listening on ") {
            break addr.to_string();
        }
    };
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let mut warm = Connection::open(&addr);
    for _ in 0..200 {
        warm.post(&params);
    }
    for clients in [1, 2, 4] {
        let connections = (0..clients).map(|_| Connection::open(&addr)).collect();
        let row = drive("HTTP", connections, requests / clients, |c| c.post(&params));
        row.print();
    }
    let _ = http.kill();
    let _ = http.wait();
}
