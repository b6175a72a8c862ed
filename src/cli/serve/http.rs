//! The HTTP transport (`--http ADDR`), HTTP/1.1 on hyper and a
//! current-thread tokio runtime that only moves bytes: `POST /v1/trim` and
//! `POST /v1/check` take the methods' params as the body and answer the
//! result (200) or `{"error": {...}}` with a status by kind; `GET
//! /v1/policy`; `GET /health` (200 with the policy hash, the last reload
//! error and `status`: `ok`, or `stale` when the files on disk are not what
//! is served); `GET /metrics` (Prometheus text). The work runs on the
//! server's pool, as stdio's does. A client that goes away mid-request
//! costs only its own request. SIGTERM/SIGINT: the listener closes, open
//! requests finish, exit 0.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, CONTENT_LENGTH, CONTENT_TYPE, RETRY_AFTER};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::json;

use super::methods::{Server, Transport};
use crate::wire::{Failure, Kind};
use crate::{Error, ErrorKind};

/// How long a client may take to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves HTTP on `addr` until a signal comes.
pub fn run(server: Arc<Server>, addr: SocketAddr, allow_remote: bool) -> Result<(), Error> {
    let runtime = super::runtime()?;
    let io = |e: std::io::Error| Error::Io {
        path: addr.to_string(),
        source: e,
    };
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(addr).await.map_err(io)?;
        let local = listener.local_addr().map_err(io)?;
        let mut signals = super::Signals::new()?;
        // The one line a supervisor (or a test) waits for.
        eprintln!("listening on {local}");
        tracing::info!(%local, "listening");
        let graceful = hyper_util::server::graceful::GracefulShutdown::new();
        let why = loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let stream = match accepted {
                        Ok((stream, _)) => stream,
                        Err(err) => {
                            // Out of descriptors, say: wait rather than spin.
                            tracing::warn!("accept failed: {err}");
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            continue;
                        }
                    };
                    let _ = stream.set_nodelay(true);
                    let server = server.clone();
                    let service = hyper::service::service_fn(move |request| {
                        let server = server.clone();
                        async move { Ok::<_, Infallible>(handle(server, request, allow_remote).await) }
                    });
                    // A client that trickles its headers is dropped (slowloris);
                    // one that trickles its body, past the request's timeout.
                    let connection = hyper::server::conn::http1::Builder::new()
                        .timer(TokioTimer::new())
                        .header_read_timeout(HEADER_TIMEOUT)
                        .serve_connection(TokioIo::new(stream), service);
                    let connection = graceful.watch(connection);
                    tokio::spawn(async move {
                        if let Err(err) = connection.await {
                            tracing::debug!("connection ended: {err}");
                        }
                    });
                }
                why = signals.recv() => break why,
            }
        };
        drop(listener);
        tracing::info!(in_flight = server.pool.in_flight(), "{why}: finishing open requests");
        let grace = server.timeout + Duration::from_secs(5);
        tokio::select! {
            _ = graceful.shutdown() => {}
            _ = tokio::time::sleep(grace) => tracing::warn!("connections still open after {} s; closing them", grace.as_secs()),
        }
        Ok::<_, Error>(())
    })?;
    server.pool.close();
    tracing::info!("stopped");
    Ok(())
}

async fn handle(
    server: Arc<Server>,
    request: Request<Incoming>,
    allow_remote: bool,
) -> Response<Full<Bytes>> {
    let received = Instant::now();
    if let Err((failure, status)) = from_a_local_client(&request, allow_remote) {
        server.refused_or_malformed(&failure, "refused", Transport::Http, received);
        return error(&failure, status);
    }
    let method = match (request.method(), request.uri().path()) {
        (&Method::GET, "/health") => {
            // 200 while a good policy is served, stale or not: the body says which.
            let mut body = server.state.describe();
            body["status"] = if body["stale"].is_null() { "ok" } else { "stale" }.into();
            return reply(StatusCode::OK, body.to_string());
        }
        (&Method::GET, "/metrics") => {
            let served = server.state.current();
            let text = server
                .state
                .metrics
                .render(served.gate.policy().hash(), server.pool.in_flight());
            let mut response = Response::new(Full::new(Bytes::from(text)));
            response.headers_mut().insert(
                CONTENT_TYPE,
                HeaderValue::from_static("text/plain; version=0.0.4"),
            );
            return response;
        }
        (&Method::GET, "/v1/policy") => {
            return reply(StatusCode::OK, server.state.describe().to_string())
        }
        (&Method::POST, "/v1/trim") => "trim",
        (&Method::POST, "/v1/check") => "check",
        (_, "/v1/trim" | "/v1/check") => {
            return error(&Failure::usage("use POST with the params as a JSON body"), StatusCode::METHOD_NOT_ALLOWED)
        }
        (_, "/health" | "/metrics" | "/v1/policy") => {
            return error(&Failure::usage("use GET"), StatusCode::METHOD_NOT_ALLOWED)
        }
        (_, path) => {
            return error(
                &Failure::usage(format!(
                    "no route `{}`; the routes are POST /v1/trim, POST /v1/check, GET /v1/policy, GET /health, GET /metrics",
                    path.escape_debug()
                )),
                StatusCode::NOT_FOUND,
            )
        }
    };
    let limit = server.max_request_bytes;
    let declared = request
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > limit) {
        let failure = server.too_large(declared);
        server.refused_or_malformed(&failure, "refused", Transport::Http, received);
        return failed(&failure);
    }
    let body = Limited::new(request.into_body(), limit).collect();
    let body = match tokio::time::timeout(server.timeout, body).await {
        Ok(Ok(body)) => body.to_bytes(),
        Err(_) => {
            let failure = Failure::new(
                Kind::Lib(ErrorKind::Deadline),
                format!(
                    "the request body did not arrive within {} ms (`--timeout`); nothing was done",
                    server.timeout.as_millis()
                ),
            )
            .with("stage", "receiving")
            .with("limit_ms", server.timeout.as_millis() as u64);
            server.refused_or_malformed(&failure, "refused", Transport::Http, received);
            return error(&failure, StatusCode::REQUEST_TIMEOUT);
        }
        Ok(Err(err)) => {
            let failure = if err.downcast_ref::<LengthLimitError>().is_some() {
                server.too_large(None)
            } else {
                Failure::new(
                    Kind::Lib(ErrorKind::Io),
                    format!("cannot read the request body: {err}"),
                )
            };
            server.refused_or_malformed(&failure, "refused", Transport::Http, received);
            return failed(&failure);
        }
    };
    let (sender, receiver) = tokio::sync::oneshot::channel();
    let job = {
        let server = server.clone();
        move |permit: super::pool::Permit| {
            let result = call(&server, method, &body, received);
            drop(permit);
            let _ = sender.send(result);
        }
    };
    if let Err(failure) = server.submit(job) {
        server.refused_or_malformed(&failure, "refused", Transport::Http, received);
        let mut response = failed(&failure);
        if failure.kind == Kind::Overloaded {
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from_static("1"));
        }
        return response;
    }
    match receiver.await {
        Ok(Ok(result)) => reply(StatusCode::OK, result),
        Ok(Err(failure)) => failed(&failure),
        Err(_) => failed(&Failure::new(
            Kind::Lib(ErrorKind::Internal),
            "internal error: the request's worker ended without a reply; nothing was sent",
        )),
    }
}

/// Refuses what a web page in the user's browser could send: a request
/// with an `Origin` (a browser sends one with every cross-origin request
/// and every POST; no client the server is for sends one), a `Host` that is
/// not a loopback name or address (DNS rebinding: a page whose own name
/// now resolves to 127.0.0.1 is same-origin with the server, but its Host
/// is its own name; not checked under `--allow-remote`, where names are
/// the operator's), and a POST whose body is not declared JSON (a page can
/// send `text/plain` or a form without asking first, never
/// `application/json`). A request target in absolute form
/// (`GET http://name/path`) names the host the request is for in place of
/// `Host` (RFC 9112 3.2.2), so its authority must pass the same loopback
/// check; and a request with more than one `Host` is malformed (RFC 9112
/// 3.2: 400), whatever the flags, since a proxy and the server could each
/// read a different one. Checked before the body is read.
fn from_a_local_client(
    request: &Request<Incoming>,
    allow_remote: bool,
) -> Result<(), (Failure, StatusCode)> {
    let forbidden = |message: &str| Err((Failure::usage(message), StatusCode::FORBIDDEN));
    let headers = request.headers();
    let hosts = headers.get_all(hyper::header::HOST).iter().count();
    if hosts > 1 {
        return Err((
            Failure::usage(format!(
                "the request has {hosts} `Host` headers; send exactly one"
            )),
            StatusCode::BAD_REQUEST,
        ));
    }
    if headers.contains_key(hyper::header::ORIGIN) {
        return forbidden(
            "a request with an `Origin` header comes from a web page; the server takes requests only from local programs",
        );
    }
    if !allow_remote {
        const NOT_LOOPBACK: &str = "must name the loopback interface (`localhost`, `127.0.0.1` or `[::1]`, with the port); the server takes requests only from local programs";
        let host = headers.get(hyper::header::HOST).map(HeaderValue::as_bytes);
        if !host.is_some_and(loopback_host) {
            return forbidden(&format!("the `Host` header {NOT_LOOPBACK}"));
        }
        let target = request.uri().authority().map(|a| a.as_str().as_bytes());
        if target.is_some_and(|authority| !loopback_host(authority)) {
            return forbidden(&format!(
                "the request target's host (`GET http://host/path`) {NOT_LOOPBACK}; send the path alone (`GET /health`)"
            ));
        }
    }
    if request.method() == Method::POST {
        let json = headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
        if !json {
            return Err((
                Failure::usage("send the body with `Content-Type: application/json`"),
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ));
        }
    }
    Ok(())
}

/// Whether a `Host` value (`name`, `name:port`, `[v6]:port`) names the
/// loopback interface: `localhost` or a loopback address.
fn loopback_host(host: &[u8]) -> bool {
    let Ok(host) = std::str::from_utf8(host) else {
        return false;
    };
    let name = match host.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((v6, port)) if port.is_empty() || port.starts_with(':') => v6,
            _ => return false,
        },
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Runs a method on a body (the params).
fn call(server: &Server, method: &str, body: &[u8], received: Instant) -> Result<String, Failure> {
    server.call(method, Some(body), received, Transport::Http)
}

fn reply(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn failed(failure: &Failure) -> Response<Full<Bytes>> {
    let status =
        StatusCode::from_u16(failure.kind.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    error(failure, status)
}

fn error(failure: &Failure, status: StatusCode) -> Response<Full<Bytes>> {
    reply(status, json!({"error": failure.to_json()}).to_string())
}

#[cfg(test)]
mod tests {
    use super::loopback_host;

    #[test]
    fn only_loopback_names_and_addresses_are_local_hosts() {
        for host in [
            "localhost",
            "LOCALHOST:8787",
            "127.0.0.1",
            "127.0.0.1:8787",
            "127.9.9.9:1",
            "[::1]",
            "[::1]:8787",
        ] {
            assert!(loopback_host(host.as_bytes()), "{host}");
        }
        for host in [
            "",
            "evil.example",
            "evil.example:8787",
            "localhost.evil.example",
            "127.0.0.1.evil.example:80",
            "10.0.0.1:8787",
            "[::2]:8787",
            "[::1]x",
            "::1",
        ] {
            assert!(!loopback_host(host.as_bytes()), "{host}");
        }
        assert!(!loopback_host(b"\xff"));
    }
}
