//! Drives `ctxgate serve` as a host would: the real binary over stdio or
//! HTTP. Every wait has a deadline, so a hung server fails the test instead
//! of hanging CI, and a server still running when its handle is dropped is
//! killed.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio as Piped};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// How long any one reply may take (debug builds on a busy CI machine).
pub const REPLY: Duration = Duration::from_secs(30);

/// The crate's root folder.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The real trees the tests serve, with their answers as JSON values.
pub fn fixtures() -> Vec<(String, Value)> {
    let dir = root().join("tests/fixtures/answers");
    let mut out: Vec<(String, Value)> = std::fs::read_dir(&dir)
        .expect("fixtures")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("fixture readable");
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                serde_json::from_str(&text).expect("fixture is JSON"),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// One fixture by file name.
pub fn fixture(name: &str) -> Value {
    let text = std::fs::read_to_string(root().join("tests/fixtures/answers").join(name))
        .expect("fixture readable");
    serde_json::from_str(&text).expect("fixture is JSON")
}

/// A fresh scratch folder under the target directory.
pub fn scratch(name: &str) -> PathBuf {
    let dir = root()
        .join("target/serve-tests")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

/// Collects a pipe's lines on a thread.
fn lines_of(pipe: impl Read + Send + 'static, log: Option<Arc<Mutex<String>>>) -> Receiver<String> {
    let (sender, receiver) = channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(pipe);
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    if let Some(log) = &log {
                        log.lock().unwrap().push_str(&line);
                    }
                    let _ = sender.send(line.trim_end_matches('\n').to_string());
                }
            }
        }
    });
    receiver
}

/// Sends a signal to a process by id.
pub fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -{name} {pid}");
}

fn wait_for(child: &mut Child, within: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    while start.elapsed() < within {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

/// A request's deadline counts its time in the queue, and the tests queue
/// many requests for few workers on a loaded 2-core machine with a debug
/// build: 5 s (the default) was passed in CI. A test of deadlines gives its
/// own `--timeout`; every other server gets one no load reaches.
fn test_timeout(args: &[&str]) -> &'static [&'static str] {
    if args.contains(&"--timeout") {
        &[]
    } else {
        &["--timeout", "300s"]
    }
}

/// A server on stdio.
pub struct Stdio {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    stderr_lines: Receiver<String>,
}

impl Stdio {
    /// `ctxgate serve ARGS`.
    pub fn start(args: &[&str]) -> Stdio {
        Stdio::start_with_env(args, &[])
    }

    /// `ctxgate serve ARGS` with more environment variables.
    pub fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> Stdio {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ctxgate"))
            .arg("serve")
            .args(test_timeout(args))
            .args(args)
            .envs(env.iter().copied())
            .current_dir(root())
            .stdin(Piped::piped())
            .stdout(Piped::piped())
            .stderr(Piped::piped())
            .spawn()
            .expect("ctxgate serve runs");
        let stdin = child.stdin.take();
        let lines = lines_of(child.stdout.take().unwrap(), None);
        let stderr = Arc::new(Mutex::new(String::new()));
        let stderr_lines = lines_of(child.stderr.take().unwrap(), Some(stderr.clone()));
        Stdio {
            child,
            stdin,
            lines,
            stderr,
            stderr_lines,
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the server wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits for a stderr line containing `text`.
    pub fn wait_stderr(&self, text: &str) -> String {
        let start = Instant::now();
        while start.elapsed() < REPLY {
            if let Ok(line) = self.stderr_lines.recv_timeout(Duration::from_millis(50)) {
                if line.contains(text) {
                    return line;
                }
            }
        }
        panic!(
            "no `{text}` on stderr within {REPLY:?}; stderr:\n{}",
            self.stderr()
        );
    }

    /// Writes bytes to stdin as they are.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("server reads stdin");
        stdin.flush().expect("flush");
    }

    /// Writes one line.
    pub fn send(&mut self, line: &str) {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.send_raw(&bytes);
    }

    /// The next reply line, parsed.
    pub fn recv(&self) -> Value {
        match self.lines.recv_timeout(REPLY) {
            Ok(line) => serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("reply is not JSON ({e}): {line}")),
            Err(_) => panic!("no reply within {REPLY:?}; stderr:\n{}", self.stderr()),
        }
    }

    /// Whether a reply comes within `within` (for notifications).
    pub fn try_recv(&self, within: Duration) -> Option<Value> {
        self.lines
            .recv_timeout(within)
            .ok()
            .map(|l| serde_json::from_str(&l).expect("reply is JSON"))
    }

    /// One request and its reply (the reply's id must match).
    pub fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
        let reply = self.recv();
        assert_eq!(reply["id"], id, "{reply}");
        reply
    }

    /// Closes stdin (end of input).
    pub fn close(&mut self) {
        self.stdin = None;
    }

    /// Waits for the exit (closing stdin first); the status and stderr.
    pub fn finish(mut self) -> (ExitStatus, String) {
        self.close();
        let status = wait_for(&mut self.child, REPLY)
            .unwrap_or_else(|| panic!("server did not exit; stderr:\n{}", self.stderr()));
        // Let the stderr thread drain.
        std::thread::sleep(Duration::from_millis(50));
        (status, self.stderr())
    }

    /// Waits for the exit without closing stdin.
    pub fn wait(mut self) -> (ExitStatus, String) {
        let status = wait_for(&mut self.child, REPLY)
            .unwrap_or_else(|| panic!("server did not exit; stderr:\n{}", self.stderr()));
        std::thread::sleep(Duration::from_millis(50));
        (status, self.stderr())
    }
}

impl Drop for Stdio {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A server on HTTP, bound to a port the OS picked.
pub struct Http {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    stderr: Arc<Mutex<String>>,
}

impl Http {
    /// `ctxgate serve --http 127.0.0.1:0 ARGS`, once it is listening.
    pub fn start(args: &[&str]) -> Http {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ctxgate"))
            .args(["serve", "--http", "127.0.0.1:0"])
            .args(test_timeout(args))
            .args(args)
            .current_dir(root())
            .stdin(Piped::null())
            .stdout(Piped::null())
            .stderr(Piped::piped())
            .spawn()
            .expect("ctxgate serve runs");
        let stderr = Arc::new(Mutex::new(String::new()));
        let lines = lines_of(child.stderr.take().unwrap(), Some(stderr.clone()));
        let start = Instant::now();
        let addr = loop {
            match lines.recv_timeout(Duration::from_millis(100)) {
                Ok(line) => {
                    if let Some(addr) = line.strip_prefix("listening on ") {
                        break addr.to_string();
                    }
                }
                Err(_) if start.elapsed() > REPLY => {
                    panic!(
                        "not listening within {REPLY:?}:\n{}",
                        stderr.lock().unwrap()
                    )
                }
                Err(_) => {
                    if let Some(status) = child.try_wait().unwrap() {
                        panic!("server exited ({status}):\n{}", stderr.lock().unwrap());
                    }
                }
            }
        };
        Http {
            child,
            addr,
            stderr,
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the server wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// One request on its own connection: (status, body).
    pub fn request(&self, method: &str, path: &str, body: &[u8]) -> (u16, String) {
        request(&self.addr, method, path, body)
    }

    /// POSTs JSON; (status, parsed body).
    pub fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let (status, text) = self.request("POST", path, body.to_string().as_bytes());
        (
            status,
            serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("body is not JSON ({e}): {text}")),
        )
    }

    /// Waits for the exit.
    pub fn wait(mut self) -> (ExitStatus, String) {
        let status = wait_for(&mut self.child, REPLY)
            .unwrap_or_else(|| panic!("server did not exit; stderr:\n{}", self.stderr()));
        std::thread::sleep(Duration::from_millis(50));
        (status, self.stderr())
    }
}

impl Drop for Http {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A minimal HTTP/1.1 client: one request, `Connection: close`.
pub fn request(addr: &str, method: &str, path: &str, body: &[u8]) -> (u16, String) {
    let mut bytes = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    bytes.extend_from_slice(body);
    raw_request(addr, &bytes)
}

/// Sends `bytes` as they are (a whole request, headers and body) on their
/// own connection and reads the response to its end: (status, body).
pub fn raw_request(addr: &str, bytes: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).expect("connects");
    stream.set_read_timeout(Some(REPLY)).unwrap();
    stream.set_write_timeout(Some(REPLY)).unwrap();
    stream.write_all(bytes).expect("request written");
    let mut response = Vec::new();
    stream
        .read_to_end(&mut response)
        .expect("response read within the deadline");
    parse_response(&response)
}

/// (status, body) of a whole HTTP/1.1 response (`Content-Length` bodies).
pub fn parse_response(response: &[u8]) -> (u16, String) {
    let text = String::from_utf8_lossy(response);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("not an HTTP response: {text}"));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status: {head}"));
    (status, body.to_string())
}

/// The default policy with one more rule: elements of subrole
/// `private-vault` are denied. `budget` tells two valid versions apart.
pub fn vault_policy(budget: usize) -> String {
    let default = std::fs::read_to_string(root().join("policies/default.rego")).unwrap();
    let default = default.replace(
        "budget := {\"tokens\": 8000}",
        &format!("budget := {{\"tokens\": {budget}}}"),
    );
    assert!(default.contains(&format!("{{\"tokens\": {budget}}}")));
    format!(
        "{default}\n# METADATA\n# title: Deny the vault\n# description: A test rule.\ndeny contains \"vault\" if {{\n\tinput.element.subrole == \"private-vault\"\n}}\n"
    )
}

/// The canary string: it must never come back from the server.
pub const CANARY: &str = "CANARY-7f3a";

/// `answer` with two elements added under the root whose text is the
/// canary: one the vault rule denies, one the floor masks (secure text).
pub fn with_canaries(mut answer: Value) -> Value {
    let children = answer["root"]["children"]
        .as_array_mut()
        .expect("the root has children");
    children.push(json!({
        "id": "canary-vault", "role": "Group", "subrole": "private-vault",
        "title": format!("{CANARY} vault"),
        "content": [{"type": "text", "text": format!("{CANARY} note")}]
    }));
    children.push(json!({
        "id": "canary-secret", "role": "Text", "subrole": "secure-text",
        "title": "Passphrase",
        "content": [{"type": "text", "text": format!("{CANARY} secret")}]
    }));
    answer
}

/// Writes `text` to `path` by rename, as editors and deploy tools do.
pub fn replace_file(path: &Path, text: &str) {
    let tmp = path.with_extension("rego.tmp");
    std::fs::write(&tmp, text).expect("temp written");
    std::fs::rename(&tmp, path).expect("renamed");
}

/// The policy hash `ctxgate trim` reports for the policy at `path`.
pub fn policy_hash(path: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .args(["trim", "--json", "--policy"])
        .arg(path)
        .arg(root().join("tests/fixtures/answers/uia-input-types.json"))
        .current_dir(root())
        .output()
        .expect("trim runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    result["report"]["policy_hash"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Points the symlink `link` at `target` in one step, as deploy tools do:
/// a new link beside it, renamed over it.
#[cfg(unix)]
pub fn swap_link(link: &Path, target: &str) {
    let tmp = link.with_file_name(format!(
        "{}.tmp-link",
        link.file_name().unwrap().to_string_lossy()
    ));
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(target, &tmp).expect("link made");
    std::fs::rename(&tmp, link).expect("link renamed over");
}

/// A Kubernetes ConfigMap volume in `dir`, as the kubelet writes one: the
/// files in a release folder `..<release>`, `..data` a link to it, and
/// each file a link `name -> ..data/name`.
#[cfg(unix)]
pub fn configmap(dir: &Path, release: &str, files: &[(&str, &str)]) {
    std::fs::create_dir_all(dir).expect("volume folder");
    let folder = dir.join(format!("..{release}"));
    std::fs::create_dir(&folder).expect("release folder");
    for (name, text) in files {
        std::fs::write(folder.join(name), text).expect("file written");
        std::os::unix::fs::symlink(format!("..data/{name}"), dir.join(name)).expect("file link");
    }
    std::os::unix::fs::symlink(format!("..{release}"), dir.join("..data")).expect("..data");
}

/// A ConfigMap update, as the kubelet makes one: a new release folder, a
/// new link `..data_tmp` to it renamed over `..data`, the old release
/// folder deleted. The file links stay as they are.
#[cfg(unix)]
pub fn configmap_update(dir: &Path, old: &str, new: &str, files: &[(&str, &str)]) {
    let folder = dir.join(format!("..{new}"));
    std::fs::create_dir(&folder).expect("release folder");
    for (name, text) in files {
        std::fs::write(folder.join(name), text).expect("file written");
    }
    std::os::unix::fs::symlink(format!("..{new}"), dir.join("..data_tmp")).expect("..data_tmp");
    std::fs::rename(dir.join("..data_tmp"), dir.join("..data")).expect("..data swapped");
    std::fs::remove_dir_all(dir.join(format!("..{old}"))).expect("old release deleted");
}

/// Polls `/health` until `done` holds for its body (status 200 each time).
pub fn until_health(server: &Http, done: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let (status, body) = server.request("GET", "/health", b"");
        assert_eq!(status, 200, "{body}");
        let body: Value = serde_json::from_str(&body).expect("health is JSON");
        if done(&body) {
            return body;
        }
        assert!(
            start.elapsed() < REPLY,
            "never: {body}\n{}",
            server.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
