//! `ctxgate serve`: a long-running gate for hosts in any language. One
//! policy compiled once, its plan and decision caches kept across
//! requests; JSON-RPC 2.0 on stdio (default) or HTTP (`--http`); reloaded
//! live with `--watch`; a decision log of counts; limits on request size,
//! concurrency and time. The wire format is the library's `wire`, the methods in
//! `methods`, the policy swap in `reload`.
//!
//! **Invariants.** A request runs under one gate from start to end, and its
//! report names that gate's policy hash. A broken policy never replaces a
//! working one. Nothing the server logs or writes to the decision log
//! carries element text: counts, ids, kinds, hashes.

mod http;
pub(crate) mod log;
mod methods;
mod metrics;
mod pool;
mod reload;
mod stdio;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use super::{Failure, LimitArgs, Outcome};
use crate::Error;

#[derive(Args)]
pub struct ServeArgs {
    /// A policy file or folder, or `default` (the embedded policy); repeat to layer them (default: the embedded default policy).
    #[arg(long, value_name = "PATH")]
    policy: Vec<PathBuf>,
    /// Reload the policy when its files change; a broken policy never replaces the served one.
    #[arg(long, requires = "policy")]
    watch: bool,
    /// With `--watch`, how often the policy files' content is checked
    /// against the served policy, for changes the watcher cannot see.
    #[arg(long, hide = true, value_name = "DURATION", value_parser = super::parse_duration, default_value = "2s")]
    watch_check: Duration,
    /// Serve HTTP on this address (`127.0.0.1:8080`; port 0 picks one) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// Allow `--http` on an address other than loopback (the server has no authentication).
    #[arg(long)]
    allow_remote: bool,
    /// Append one JSON line per request (counts, never content) to this file.
    #[arg(long, value_name = "FILE")]
    decision_log: Option<PathBuf>,
    /// Rotate the decision log when it would pass this size (3 old files are kept).
    #[arg(long, value_name = "N", default_value_t = 64 * 1024 * 1024)]
    decision_log_max_bytes: u64,
    /// The longest a request may take, queueing included: `500ms`, `2s` (default 5s);
    /// a request's `timeout_ms` can only lower it.
    #[arg(long, value_name = "DURATION", value_parser = super::parse_duration)]
    timeout: Option<Duration>,
    /// The largest request (a JSON-RPC line or an HTTP body), in bytes.
    #[arg(long, value_name = "N", default_value_t = 64 * 1024 * 1024)]
    max_request_bytes: usize,
    /// Requests run at once (default: the number of CPUs).
    #[arg(long, value_name = "N")]
    max_concurrency: Option<usize>,
    /// Requests that may wait for a worker; past that, `overloaded`.
    #[arg(long, value_name = "N", default_value_t = 64)]
    max_queue: usize,
    #[command(flatten)]
    limits: LimitArgs,
}

pub fn run(args: ServeArgs) -> Result<Outcome, Failure> {
    if let Some(addr) = args.http {
        if !addr.ip().is_loopback() && !args.allow_remote {
            return Err(Failure::usage(format!(
                "`--http {addr}` is not a loopback address and the server has no authentication; bind 127.0.0.1 (or ::1), or pass `--allow-remote` behind your own access control"
            )));
        }
    }
    if args.max_request_bytes == 0 {
        return Err(Failure::usage("`--max-request-bytes` must be at least 1"));
    }
    let warm = std::thread::spawn(crate::Gate::warm_up_tokens);
    let state = Arc::new(reload::State::load(
        args.policy.clone(),
        args.limits.limits(),
    )?);
    let log = match &args.decision_log {
        None => None,
        Some(path) => Some(
            log::DecisionLog::open(path, args.decision_log_max_bytes).map_err(|e| {
                Failure::io(format!(
                    "cannot open the decision log `{}`: {e}",
                    path.display()
                ))
            })?,
        ),
    };
    if args.watch {
        reload::watch(state.clone(), Duration::from_millis(10), args.watch_check)?;
    }
    let concurrency = args.max_concurrency.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get)
    });
    if concurrency == 0 {
        return Err(Failure::usage("`--max-concurrency` must be at least 1"));
    }
    let _ = warm.join();
    {
        let served = state.current();
        tracing::info!(
            policy = %reload::short(served.gate.policy().hash()),
            files = served.gate.policy().files().len(),
            concurrency,
            queue = args.max_queue,
            "serving"
        );
    }
    let server = Arc::new(methods::Server::new(
        state,
        pool::Pool::new(concurrency, args.max_queue),
        log,
        args.timeout.unwrap_or(crate::DEFAULT_TIMEOUT),
        args.max_request_bytes,
    ));
    match args.http {
        Some(addr) => http::run(server, addr, args.allow_remote)?,
        None => stdio::run(server)?,
    }
    Ok(Outcome::Fine)
}

/// The runtime both transports wait on (signals; HTTP's sockets). One
/// thread: the requests' work runs on the pool.
fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Io {
            path: "(runtime)".into(),
            source: e,
        })
}

/// SIGTERM and SIGINT (Ctrl-C elsewhere), handled from the moment this is
/// made (inside the runtime) until the server stops.
struct Signals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> Result<Signals, Error> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let io = |e| Error::Io {
                path: "(signal handler)".into(),
                source: e,
            };
            Ok(Signals {
                term: signal(SignalKind::terminate()).map_err(io)?,
                int: signal(SignalKind::interrupt()).map_err(io)?,
            })
        }
        #[cfg(not(unix))]
        Ok(Signals {})
    }

    /// Waits for one; its name.
    async fn recv(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.term.recv() => "SIGTERM",
                _ = self.int.recv() => "SIGINT",
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "Ctrl-C"
        }
    }
}
