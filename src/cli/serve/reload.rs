//! The served policy: one [`Gate`] behind an [`ArcSwap`], loaded at start
//! and, with `--watch`, reloaded when a policy file changes. A reload reads,
//! compiles and lints the files on the watcher's thread, never a request's;
//! only a policy that passes all three replaces the served one, in one
//! atomic swap. A request loads the `Arc` once and runs wholly under that
//! gate, so its report names the policy that decided it. A failed reload
//! keeps the last good policy and is recorded (file:line:col) for the
//! `policy` method, `/health` and the log.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use arc_swap::ArcSwap;
use serde_json::{json, Value};

use super::metrics::Metrics;
use super::wire::split_location;
use crate::policy as lib;
use crate::{Error, Gate, Limits, Policy};

/// A gate and when it was loaded.
pub struct Served {
    /// The gate every request of this generation runs under.
    pub gate: Gate,
    /// When the policy was loaded (RFC 3339, UTC).
    pub loaded_at: String,
}

/// Why the last reload failed.
#[derive(Clone)]
struct ReloadError {
    message: String,
    location: String,
    at: String,
}

/// What the server serves, and how to reload it.
pub struct State {
    current: ArcSwap<Served>,
    last_error: Mutex<Option<ReloadError>>,
    paths: Vec<PathBuf>,
    limits: Limits,
    /// Counters for `/metrics`.
    pub metrics: Metrics,
}

impl State {
    /// Loads the policy at `paths` (none: the embedded default). A policy
    /// that does not load, compile or lint is an error: the server does not
    /// start without a good one.
    pub fn load(paths: Vec<PathBuf>, limits: Limits) -> Result<State, Error> {
        let gate = build(&paths, limits)?;
        Ok(State {
            current: ArcSwap::from_pointee(Served {
                gate,
                loaded_at: super::log::rfc3339(SystemTime::now()),
            }),
            last_error: Mutex::new(None),
            paths,
            limits,
            metrics: Metrics::default(),
        })
    }

    /// The gate now served; hold it for the whole request.
    pub fn current(&self) -> Arc<Served> {
        self.current.load_full()
    }

    /// Reads the files again; swaps the new policy in if it is good and
    /// differs from the served one. Returns whether the policy changed.
    pub fn reload(&self) -> bool {
        let started = std::time::Instant::now();
        let built = read_settled(&self.paths, || std::thread::sleep(SETTLED))
            .and_then(|layers| build_from(layers, self.limits));
        let ms = started.elapsed().as_millis() as u64;
        match built {
            Ok(gate) => {
                *self.last_error.lock().unwrap_or_else(|e| e.into_inner()) = None;
                self.metrics.reload(true);
                let old = self.current();
                if old.gate.policy().hash() == gate.policy().hash() {
                    tracing::info!(hash = %short(gate.policy().hash()), ms, "policy unchanged");
                    return false;
                }
                tracing::info!(
                    from = %short(old.gate.policy().hash()),
                    to = %short(gate.policy().hash()),
                    files = gate.policy().files().len(),
                    ms,
                    "policy reloaded"
                );
                self.current.store(Arc::new(Served {
                    gate,
                    loaded_at: super::log::rfc3339(SystemTime::now()),
                }));
                true
            }
            Err(err) => {
                self.metrics.reload(false);
                let message = crate::render::visible(&format!("{err:#}")).into_owned();
                let location = match &err {
                    Error::Policy { location, .. } => location.clone(),
                    Error::Io { path, .. } => path.clone(),
                    _ => String::new(),
                };
                tracing::warn!(
                    at = %location,
                    served = %short(self.current().gate.policy().hash()),
                    ms,
                    "policy reload failed; serving the last good policy: {message}"
                );
                *self.last_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(ReloadError {
                    message,
                    location,
                    at: super::log::rfc3339(SystemTime::now()),
                });
                false
            }
        }
    }

    /// The `policy` method's result (and `/health`'s body, without status).
    pub fn describe(&self) -> Value {
        let served = self.current();
        let policy = served.gate.policy();
        let files: Vec<&str> = policy.files().iter().map(|f| f.name.as_str()).collect();
        let error = self
            .last_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let error = match error {
            None => Value::Null,
            Some(e) => {
                let (file, line, column) = split_location(&e.location);
                json!({"message": e.message, "file": file, "line": line, "column": column, "at": e.at})
            }
        };
        json!({
            "hash": policy.hash(),
            "files": files,
            "loaded_at": served.loaded_at,
            "last_reload_error": error,
        })
    }

    /// The limits on what is read.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The policy paths given on the command line.
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }
}

/// The first 12 hex digits of a policy hash, for logs.
pub fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}

/// How long the policy files must read the same before a reload loads
/// them, and how many times they may change meanwhile.
const SETTLED: Duration = Duration::from_millis(20);
const SETTLE_TRIES: usize = 50;

/// Reads, compiles and lints the policy at `paths`, each path one layer
/// as `trim --policy` takes them (`default` names the embedded default).
/// Loading refuses what `ctxgate policy check` calls an error, with its
/// file:line:col, so a broken policy never replaces a working one.
fn build(paths: &[PathBuf], limits: Limits) -> Result<Gate, Error> {
    build_from(read_layers(paths)?, limits)
}

/// The layers' files as (name, source), or `None` for the embedded default.
type Layers = Option<Vec<Vec<(String, String)>>>;

fn read_layers(paths: &[PathBuf]) -> Result<Layers, Error> {
    if paths.is_empty() {
        return Ok(None);
    }
    let mut layers = Vec::with_capacity(paths.len());
    for path in paths {
        let files = lib::layer_files(&path.to_string_lossy(), false)?;
        layers.push(files.into_iter().map(|f| (f.name, f.source)).collect());
    }
    Ok(Some(layers))
}

/// The layers once two reads [`SETTLED`] apart (`wait`) find the same files with the
/// same bytes. An editor that rewrites a file in place (truncate, then
/// write) or a copy in progress can be read half-written, and a half-written
/// policy that still parses (its later `deny` rules missing) must not be
/// served: a reload reads again until the files hold still, and fails
/// (keeping the served policy) when they keep changing.
fn read_settled(paths: &[PathBuf], mut wait: impl FnMut()) -> Result<Layers, Error> {
    let mut last = read_layers(paths);
    for _ in 0..SETTLE_TRIES {
        wait();
        let now = read_layers(paths);
        let same = match (&last, &now) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        };
        if same {
            return now;
        }
        last = now;
    }
    Err(Error::Policy {
        location: paths
            .first()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
        message: format!(
            "the policy files kept changing for {} ms; the served policy stays: \
             save them again when done",
            SETTLED.as_millis() * SETTLE_TRIES as u128
        ),
    })
}

fn build_from(layers: Layers, limits: Limits) -> Result<Gate, Error> {
    let Some(layers) = layers else {
        return Ok(Gate::embedded_default()?.with_limits(limits));
    };
    Ok(Gate::new(Policy::from_layers(layers)?).with_limits(limits))
}

/// Watches the policy paths and reloads on change until the process ends
/// (the watcher, its filtering and its settling are `cli::watch`'s, shared
/// with `policy test --watch`).
pub fn watch(state: Arc<State>, settle: Duration) -> Result<(), Error> {
    let changes = crate::cli::watch::Changes::watch(state.paths(), settle)?;
    tracing::info!(paths = changes.watched(), "watching the policy files");
    std::thread::Builder::new()
        .name("ctxgate-reload".into())
        .spawn(move || {
            while changes.wait() {
                state.reload();
            }
        })
        .map_err(|e| Error::Io {
            path: "(reload thread)".into(),
            source: e,
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file rewritten between reads (an editor writing in place, a copy
    /// in progress) is read only once it holds still: never a version
    /// between; files that never hold still fail the reload. The writes
    /// happen where the reload waits, so the test does not race.
    #[test]
    fn a_reload_reads_the_files_once_they_hold_still() {
        let dir = std::env::temp_dir().join(format!("ctxgate-settle-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("p.rego");
        let paths = std::slice::from_ref(&file);
        let version = |n: usize| format!("package ctxgate\n# version {n}\n");
        std::fs::write(&file, "package ctxgate\n# half-wri").unwrap();
        let mut n = 0;
        let layers = read_settled(paths, || {
            if n < 5 {
                n += 1;
                std::fs::write(&file, version(n)).unwrap();
            }
        })
        .unwrap()
        .unwrap();
        assert_eq!(layers[0][0].1, version(5));

        let mut n = 100;
        let err = read_settled(paths, || {
            n += 1;
            std::fs::write(&file, version(n)).unwrap();
        })
        .unwrap_err();
        assert!(err.to_string().contains("kept changing"), "{err}");
        assert_eq!(n, 100 + SETTLE_TRIES);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
