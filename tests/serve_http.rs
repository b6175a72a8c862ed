//! `ctxgate serve --http`: the routes, statuses by error kind, the faults a
//! client can cause (each followed by a request that must still work), the
//! loopback rule and the shutdown.

mod serve_support;

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{json, Value};
use serve_support::*;

fn still_answers(server: &Http) {
    let (status, body) = server.post(
        "/v1/trim",
        &json!({"answer": fixture("uia-input-types.json"), "max_bytes": 2000}),
    );
    assert_eq!(status, 200, "{body}");
    assert!(body["output"].is_string());
}

#[test]
fn routes_answer_with_the_methods_results() {
    let server = Http::start(&[]);
    let (status, health) = server.request("GET", "/health", b"");
    assert_eq!(status, 200);
    let health: Value = serde_json::from_str(&health).unwrap();
    assert_eq!(health["status"], "ok");
    let hash = health["hash"].as_str().unwrap().to_string();
    assert_eq!(health["last_reload_error"], Value::Null);

    for (name, answer) in fixtures() {
        let (status, body) = server.post(
            "/v1/trim",
            &json!({"answer": answer, "action": "app", "max_tokens": 2000}),
        );
        assert_eq!(status, 200, "{name}: {body}");
        assert_eq!(body["report"]["policy_hash"], hash.as_str());
        assert!(body["report"]["budgets"][0]["used"].as_u64().unwrap() <= 2000);
    }
    let (status, body) = server.post(
        "/v1/check",
        &json!({"answer": fixture("mac-apg-treegrid.json")}),
    );
    assert_eq!((status, body["conforms"].clone()), (200, json!(true)));
    let (status, policy) = server.request("GET", "/v1/policy", b"");
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<Value>(&policy).unwrap()["hash"],
        hash.as_str()
    );

    let (status, metrics) = server.request("GET", "/metrics", b"");
    assert_eq!(status, 200);
    let count = fixtures().len();
    assert!(
        metrics.contains(&format!(
            "ctxgate_requests_total{{method=\"trim\",outcome=\"ok\"}} {count}"
        )),
        "{metrics}"
    );
    assert!(metrics.contains("ctxgate_request_duration_seconds_bucket{le=\"+Inf\"} "));
    assert!(metrics.contains("ctxgate_reloads_total{result=\"failed\"} 0"));
    assert!(metrics.contains(&format!("ctxgate_policy_info{{hash=\"{hash}\"}} 1")));
    assert!(metrics.contains("ctxgate_policy_evaluations_total "));
}

#[test]
fn errors_have_a_status_by_kind_and_the_same_object_as_stdio() {
    let server = Http::start(&[]);
    let answer = fixture("uia-input-types.json");
    let (status, body) = server.post("/v1/trim", &json!({"answer": answer, "max_bytes": 3}));
    assert_eq!(status, 422);
    assert_eq!(body["error"]["data"]["kind"], "budget_unreachable");
    assert_eq!(body["error"]["code"], -32004);
    let (status, body) = server.post("/v1/trim", &json!({"answer": answer, "target": "nope"}));
    assert_eq!(
        (status, body["error"]["data"]["kind"].clone()),
        (400, json!("usage"))
    );
    assert_eq!(body["error"]["data"]["target"], "nope");
    let (status, body) = server.post("/v1/trim", &json!({"answer": {"protocol": "0.2.0"}}));
    assert_eq!(
        (status, body["error"]["data"]["kind"].clone()),
        (422, json!("not_conforming"))
    );
    let (status, _) = server.request("GET", "/v1/trim", b"");
    assert_eq!(status, 405);
    let (status, body) = server.request("GET", "/nowhere", b"");
    assert_eq!(status, 404, "{body}");
    still_answers(&server);
}

#[test]
fn a_body_that_is_not_json_is_a_400() {
    let server = Http::start(&[]);
    let (status, body) = server.request("POST", "/v1/trim", b"{not json");
    assert_eq!(status, 400);
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["error"]["data"]["kind"], "invalid_input");
    still_answers(&server);
}

#[test]
fn an_oversized_body_is_a_413() {
    let server = Http::start(&["--max-request-bytes", "10000"]);
    let (status, body) = server.post(
        "/v1/trim",
        &json!({"answer": fixture("mac-apg-data-grids.json")}),
    );
    assert_eq!(status, 413);
    assert_eq!(body["error"]["data"]["kind"], "over_limit");
    assert_eq!(body["error"]["data"]["limit"], 10000);
    still_answers(&server);
}

#[test]
fn a_client_that_disconnects_mid_request_affects_no_other() {
    let server = Http::start(&[]);
    // Mid-body: the headers promise more than is sent.
    let mut stream = TcpStream::connect(&server.addr).unwrap();
    stream
        .write_all(b"POST /v1/trim HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"answer\": {\"protocol\"")
        .unwrap();
    drop(stream);
    // Mid-work: the whole request, then gone before the reply.
    let body = json!({"answer": fixture("mac-apg-data-grids.json"), "action": "app"}).to_string();
    for _ in 0..4 {
        let mut stream = TcpStream::connect(&server.addr).unwrap();
        stream
            .write_all(
                format!(
                    "POST /v1/trim HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            )
            .unwrap();
        drop(stream);
    }
    // Mid-headers.
    let mut stream = TcpStream::connect(&server.addr).unwrap();
    stream.write_all(b"POST /v1/tr").unwrap();
    drop(stream);
    still_answers(&server);
    std::thread::sleep(Duration::from_millis(200));
    still_answers(&server);
}

#[test]
fn a_body_slower_than_the_timeout_is_a_408_and_holds_no_worker() {
    let server = Http::start(&[
        "--timeout",
        "300ms",
        "--max-concurrency",
        "1",
        "--max-queue",
        "0",
    ]);
    let mut slow = TcpStream::connect(&server.addr).unwrap();
    slow.set_read_timeout(Some(REPLY)).unwrap();
    slow.write_all(b"POST /v1/trim HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"answer\"")
        .unwrap();
    // While it trickles, the one worker still serves others.
    still_answers(&server);
    let mut response = Vec::new();
    let _ = std::io::Read::read_to_end(&mut slow, &mut response);
    let (status, body) = parse_response(&response);
    assert_eq!(status, 408, "{body}");
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["error"]["data"]["kind"], "deadline");
    still_answers(&server);
}

#[test]
fn past_the_queue_requests_get_503_overloaded() {
    let server = Http::start(&["--max-concurrency", "1", "--max-queue", "0"]);
    let body = json!({"answer": fixture("mac-apg-data-grids.json"), "action": "app"}).to_string();
    let statuses: Vec<(u16, String)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..12)
            .map(|_| s.spawn(|| request(&server.addr, "POST", "/v1/trim", body.as_bytes())))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let refused: Vec<&(u16, String)> = statuses.iter().filter(|(s, _)| *s == 503).collect();
    assert!(!refused.is_empty(), "none refused");
    assert!(statuses.iter().any(|(s, _)| *s == 200), "none served");
    for (_, body) in refused {
        let body: Value = serde_json::from_str(body).unwrap();
        assert_eq!(body["error"]["data"]["kind"], "overloaded");
    }
    for (status, body) in &statuses {
        assert!(*status == 200 || *status == 503, "{status}: {body}");
    }
    still_answers(&server);
}

#[test]
fn a_non_loopback_address_needs_allow_remote() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .args(["serve", "--http", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-remote"));
}

#[test]
fn sigterm_finishes_open_requests_and_exits_0() {
    let server = Http::start(&["--max-concurrency", "1"]);
    let body = json!({"answer": fixture("mac-apg-data-grids.json"), "action": "app"}).to_string();
    let addr = server.addr.clone();
    let clients: Vec<_> = (0..3)
        .map(|_| {
            let (addr, body) = (addr.clone(), body.clone());
            std::thread::spawn(move || request(&addr, "POST", "/v1/trim", body.as_bytes()))
        })
        .collect();
    // Signal once all three are admitted (one running, two queued).
    let start = std::time::Instant::now();
    loop {
        let (_, metrics) = server.request("GET", "/metrics", b"");
        if metrics.contains("ctxgate_in_flight 3") {
            break;
        }
        assert!(
            start.elapsed() < REPLY,
            "the requests were never all in flight:\n{metrics}"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    signal(server.pid(), "TERM");
    for client in clients {
        let (status, body) = client.join().unwrap();
        assert_eq!(status, 200, "an open request was dropped: {body}");
    }
    let (status, stderr) = server.wait();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("SIGTERM"), "{stderr}");
}

/// A web page in the user's browser can reach a loopback port: by a form or
/// a `fetch` with `text/plain` (CSRF: the browser sends an `Origin`), or,
/// after DNS rebinding, as if same-origin (the `Host` is the page's own
/// name). None of these is served, on any route, and none is counted as a
/// request the server ran; a local program's request still is.
#[test]
fn a_web_page_in_the_browser_cannot_use_the_server() {
    let server = Http::start(&[]);
    let addr = &server.addr;
    let port = addr.rsplit_once(':').unwrap().1;
    let body = json!({"answer": with_canaries(fixture("uia-input-types.json"))}).to_string();
    let post = |headers: &str| {
        format!(
            "POST /v1/trim HTTP/1.1\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    let cases = [
        // CSRF: a form or a simple fetch, from another origin.
        (
            post(&format!(
                "Host: {addr}\r\nOrigin: http://evil.example\r\nContent-Type: text/plain\r\n"
            )),
            403,
        ),
        (
            post(&format!(
                "Host: {addr}\r\nOrigin: null\r\nContent-Type: application/json\r\n"
            )),
            403,
        ),
        // DNS rebinding: the page's own name, same-origin.
        (
            post(&format!(
                "Host: evil.example:{port}\r\nContent-Type: application/json\r\n"
            )),
            403,
        ),
        (
            format!(
                "GET /v1/policy HTTP/1.1\r\nHost: evil.example:{port}\r\nConnection: close\r\n\r\n"
            ),
            403,
        ),
        (
            "GET /metrics HTTP/1.1\r\nHost: localhost.evil.example\r\nConnection: close\r\n\r\n"
                .to_string(),
            403,
        ),
        // No Host at all (HTTP/1.0 style).
        (
            "GET /health HTTP/1.0\r\nConnection: close\r\n\r\n".to_string(),
            403,
        ),
        // A body not declared JSON, from a local name.
        (
            post(&format!("Host: {addr}\r\nContent-Type: text/plain\r\n")),
            415,
        ),
        (post(&format!("Host: {addr}\r\n")), 415),
        (
            post(&format!(
                "Host: {addr}\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            )),
            415,
        ),
    ];
    for (request, expected) in &cases {
        let (status, reply) = raw_request(addr, request.as_bytes());
        assert_eq!(status, *expected, "{request}\n{reply}");
        assert!(
            !reply.contains(CANARY) && !reply.contains("output"),
            "{reply}"
        );
        let reply: Value = serde_json::from_str(&reply).unwrap();
        assert_eq!(reply["error"]["data"]["kind"], "usage", "{reply}");
    }
    // What a local program sends is served, by any loopback name.
    for host in [addr.clone(), format!("localhost:{port}")] {
        let request = post(&format!(
            "Host: {host}\r\nContent-Type: application/json; charset=utf-8\r\n"
        ));
        let (status, reply) = raw_request(addr, request.as_bytes());
        assert_eq!(status, 200, "{reply}");
        assert!(!reply.contains(CANARY), "{reply}");
    }
    let (_, metrics) = server.request("GET", "/metrics", b"");
    assert!(
        metrics.contains(&format!(
            "ctxgate_requests_total{{method=\"refused\",outcome=\"usage\"}} {}",
            cases.len()
        )),
        "{metrics}"
    );
}

/// A request with two `Host` headers is malformed (a proxy and the server
/// could each read a different one): 400, whichever comes first, and
/// under `--allow-remote` too. Nothing is served or counted as run.
#[test]
fn a_request_with_two_host_headers_is_a_400() {
    for args in [&[][..], &["--allow-remote"][..]] {
        let server = Http::start(args);
        let addr = &server.addr;
        for hosts in [
            format!("Host: {addr}\r\nHost: evil.example\r\n"),
            format!("Host: evil.example\r\nHost: {addr}\r\n"),
            format!("Host: {addr}\r\nHost: {addr}\r\n"),
        ] {
            let request = format!("GET /v1/policy HTTP/1.1\r\n{hosts}Connection: close\r\n\r\n");
            let (status, reply) = raw_request(addr, request.as_bytes());
            assert_eq!(status, 400, "{args:?} {request}\n{reply}");
            let reply: Value = serde_json::from_str(&reply).unwrap();
            assert_eq!(reply["error"]["data"]["kind"], "usage", "{reply}");
            assert!(
                reply["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("`Host`"),
                "{reply}"
            );
            assert!(reply.get("hash").is_none(), "{reply}");
        }
        let (_, metrics) = server.request("GET", "/metrics", b"");
        assert!(
            metrics.contains("ctxgate_requests_total{method=\"refused\",outcome=\"usage\"} 3"),
            "{metrics}"
        );
        still_answers(&server);
    }
}

/// A request target in absolute form names the host the request is for in
/// place of `Host`: one naming another authority is refused as a foreign
/// `Host` is (403), on every route; one naming the server's own loopback
/// address is served.
#[test]
fn an_absolute_form_target_naming_another_host_is_refused() {
    let server = Http::start(&[]);
    let addr = &server.addr;
    let body = json!({"answer": with_canaries(fixture("uia-input-types.json"))}).to_string();
    for request in [
        format!("GET http://evil.example/health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
        format!("GET http://evil.example:80/v1/policy HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
        format!("GET http://127.0.0.1@evil.example/metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
        format!(
            "POST http://evil.example/v1/trim HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    ] {
        let (status, reply) = raw_request(addr, request.as_bytes());
        assert_eq!(status, 403, "{request}\n{reply}");
        assert!(!reply.contains(CANARY) && !reply.contains("output"), "{reply}");
        let reply: Value = serde_json::from_str(&reply).unwrap();
        assert_eq!(reply["error"]["data"]["kind"], "usage", "{reply}");
        assert!(
            reply["error"]["message"].as_str().unwrap().contains("request target"),
            "{reply}"
        );
    }
    let request =
        format!("GET http://{addr}/health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    let (status, reply) = raw_request(addr, request.as_bytes());
    assert_eq!(status, 200, "{reply}");
    let reply: Value = serde_json::from_str(&reply).unwrap();
    assert_eq!(reply["status"], "ok", "{reply}");
}
