//! The served policy: one [`Gate`] behind an [`ArcSwap`], loaded at start
//! and, with `--watch`, reloaded when a policy file changes. A reload reads,
//! compiles and lints the files on the watcher's thread, never a request's;
//! only a policy that passes all three replaces the served one, in one
//! atomic swap. A request loads the `Arc` once and runs wholly under that
//! gate, so its report names the policy that decided it. A failed reload
//! keeps the last good policy and is recorded (file:line:col) for the
//! `policy` method, `/health` and the log.
//!
//! What the files on disk hold is tracked beside what is served: a digest
//! of every file's name and bytes as `--policy` names them now (links
//! followed). The watcher says when to look; a check on a timer looks
//! anyway, for what a watcher cannot see (a write through a hard link in
//! another folder, a network filesystem, a lost event), and reloads when
//! the digest differs from the last one read. Whenever the files are not
//! what is served, `policy` and `/health` say `stale` and why: `missing`,
//! `refused` (with the error's location) or `changed` (not yet loaded).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use arc_swap::ArcSwap;
use serde_json::{json, Value};

use super::metrics::Metrics;
use crate::cli::watch::{Changes, Next};
use crate::error::split_location;
use crate::policy as lib;
use crate::{Error, Gate, Limits, Policy};

/// A gate and when it was loaded.
pub struct Served {
    /// The gate every request of this generation runs under.
    pub gate: Gate,
    /// When the policy was loaded (RFC 3339, UTC).
    pub loaded_at: String,
}

/// Why a reload failed.
#[derive(Clone)]
struct ReloadError {
    message: String,
    location: String,
    at: String,
}

/// A SHA-256 of the layers' file names and bytes.
type Digest = [u8; 32];

/// What the last read of the files found.
#[derive(Clone, PartialEq)]
enum Seen {
    /// Files with this digest.
    Files(Digest),
    /// An error, by its text.
    Failed(String),
    /// Nothing settled (the files kept changing): read again.
    Unknown,
}

/// Why the files on disk are not what is served.
#[derive(Clone)]
enum Stale {
    /// A path `--policy` names does not exist.
    Missing { path: String, since: String },
    /// The files do not load, compile or lint.
    Refused(ReloadError),
    /// The files changed and are not loaded yet.
    Changed { since: String },
}

/// The files on disk against the served policy.
struct Disk {
    /// The digest of the files the served policy was built from.
    served: Digest,
    /// What the last read found; a check reloads only when this changes.
    seen: Seen,
    stale: Option<Stale>,
    last_error: Option<ReloadError>,
}

/// What the server serves, and how to reload it.
pub struct State {
    current: ArcSwap<Served>,
    disk: Mutex<Disk>,
    watching: AtomicBool,
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
        let layers = read_layers(&paths)?;
        let digest = fingerprint(&layers);
        let gate = build_from(layers, limits)?;
        Ok(State {
            current: ArcSwap::from_pointee(Served {
                gate,
                loaded_at: super::log::rfc3339(SystemTime::now()),
            }),
            disk: Mutex::new(Disk {
                served: digest,
                seen: Seen::Files(digest),
                stale: None,
                last_error: None,
            }),
            watching: AtomicBool::new(false),
            paths,
            limits,
            metrics: Metrics::default(),
        })
    }

    /// The gate now served; hold it for the whole request.
    pub fn current(&self) -> Arc<Served> {
        self.current.load_full()
    }

    fn disk(&self) -> std::sync::MutexGuard<'_, Disk> {
        self.disk.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reads the files again; swaps the new policy in if it is good and
    /// differs from the served one. Returns whether the policy changed.
    pub fn reload(&self) -> bool {
        let started = std::time::Instant::now();
        let (digest, built) = match read_settled(&self.paths, || std::thread::sleep(SETTLED)) {
            Ok(layers) => (Some(fingerprint(&layers)), build_from(layers, self.limits)),
            Err(unread) => (None, Err(unread)),
        };
        let ms = started.elapsed().as_millis() as u64;
        let now = || super::log::rfc3339(SystemTime::now());
        let gate = match built {
            Ok(gate) => gate,
            Err(err) => {
                self.metrics.reload(false);
                let message = crate::render::visible(&format!("{err:#}")).into_owned();
                let location = match &err {
                    Error::Policy { location, .. } => location.clone(),
                    Error::Io { path, .. } => path.clone(),
                    _ => String::new(),
                };
                let error = ReloadError {
                    message: message.clone(),
                    location: location.clone(),
                    at: now(),
                };
                let served = self.current();
                let served = short(served.gate.policy().hash());
                let mut disk = self.disk();
                let (stale, seen) = match digest {
                    // Read whole, and refused: not retried until the files change.
                    Some(digest) => (Stale::Refused(error.clone()), Seen::Files(digest)),
                    None if missing(&err) => {
                        tracing::warn!(at = %location, served, ms, "policy files missing; serving the last good policy");
                        (
                            Stale::Missing {
                                path: location.clone(),
                                since: now(),
                            },
                            Seen::Failed(message.clone()),
                        )
                    }
                    None if unsettled(&err) => (Stale::Changed { since: now() }, Seen::Unknown),
                    None => (Stale::Refused(error.clone()), Seen::Failed(message.clone())),
                };
                if !matches!(stale, Stale::Missing { .. }) {
                    tracing::warn!(
                        at = %location,
                        served,
                        ms,
                        "policy reload failed; serving the last good policy: {message}"
                    );
                }
                // A missing file that stays missing keeps its first `since`.
                let same_missing = matches!(
                    (&disk.stale, &stale),
                    (Some(Stale::Missing { path: a, .. }), Stale::Missing { path: b, .. }) if a == b
                );
                if !same_missing {
                    disk.stale = Some(stale);
                }
                disk.seen = seen;
                disk.last_error = Some(error);
                return false;
            }
        };
        self.metrics.reload(true);
        let digest = digest.expect("a policy built from files read has their digest");
        {
            let mut disk = self.disk();
            disk.served = digest;
            disk.seen = Seen::Files(digest);
            disk.stale = None;
            disk.last_error = None;
        }
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
            loaded_at: now(),
        }));
        true
    }

    /// The content check: reads what `--policy` names now (links followed)
    /// and reloads when it differs from what the last read found; files
    /// already refused, or still missing, are not read again until they
    /// change. Returns whether the served policy changed.
    pub fn check(&self) -> bool {
        let now = match read_layers(&self.paths) {
            Ok(layers) => Seen::Files(fingerprint(&layers)),
            Err(err) => Seen::Failed(crate::render::visible(&format!("{err:#}")).into_owned()),
        };
        {
            let disk = self.disk();
            if disk.seen == now {
                return false;
            }
        }
        tracing::info!(
            served = %short(self.current().gate.policy().hash()),
            "the policy files differ from the last read; reloading"
        );
        self.changed();
        self.reload()
    }

    /// Records that the files changed and are not loaded yet.
    pub fn changed(&self) {
        self.disk().stale = Some(Stale::Changed {
            since: super::log::rfc3339(SystemTime::now()),
        });
    }

    /// The `policy` method's result (and `/health`'s body, without status).
    pub fn describe(&self) -> Value {
        let served = self.current();
        let policy = served.gate.policy();
        let files: Vec<&str> = policy.files().iter().map(|f| f.name.as_str()).collect();
        let (error, stale) = {
            let disk = self.disk();
            (disk.last_error.clone(), disk.stale.clone())
        };
        let error = match error {
            None => Value::Null,
            Some(e) => error_json(&e),
        };
        let stale = match stale {
            None => Value::Null,
            Some(Stale::Missing { path, since }) => json!({
                "reason": "missing",
                "file": path,
                "message": format!("`{path}` does not exist; the last good policy is served until it does"),
                "since": since,
            }),
            Some(Stale::Refused(e)) => {
                let mut stale = error_json(&e);
                stale["reason"] = "refused".into();
                stale["since"] = stale["at"].take();
                stale.as_object_mut().map(|o| o.remove("at"));
                stale
            }
            Some(Stale::Changed { since }) => json!({
                "reason": "changed",
                "message": "the policy files changed and are not loaded yet",
                "since": since,
            }),
        };
        json!({
            "hash": policy.hash(),
            "files": files,
            "loaded_at": served.loaded_at,
            "last_reload_error": error,
            "watching": self.watching.load(Ordering::Relaxed),
            "stale": stale,
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

fn error_json(e: &ReloadError) -> Value {
    let (file, line, column) = split_location(&e.location);
    json!({"message": e.message, "file": file, "line": line, "column": column, "at": e.at})
}

/// The first 12 hex digits of a policy hash, for logs.
pub fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}

/// How long the policy files must read the same before a reload loads
/// them, and how many times they may change meanwhile.
const SETTLED: Duration = Duration::from_millis(20);
const SETTLE_TRIES: usize = 50;

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

/// The digest of the layers' names and bytes, each length-prefixed so no
/// two different sets of files share one.
fn fingerprint(layers: &Layers) -> Digest {
    use sha2::{Digest as _, Sha256};
    let mut hash = Sha256::new();
    let mut part = |bytes: &[u8]| {
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(bytes);
    };
    match layers {
        None => part(lib::DEFAULT_LAYER.as_bytes()),
        Some(layers) => {
            for layer in layers {
                part(b"layer");
                for (name, source) in layer {
                    part(name.as_bytes());
                    part(source.as_bytes());
                }
            }
        }
    }
    hash.finalize().into()
}

/// Whether a read failed because a path does not exist.
fn missing(err: &Error) -> bool {
    matches!(err, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
}

/// The message of [`read_settled`]'s error when the files never held still.
const KEPT_CHANGING: &str = "the policy files kept changing";

fn unsettled(err: &Error) -> bool {
    matches!(err, Error::Policy { message, .. } if message.starts_with(KEPT_CHANGING))
}

/// The layers once two reads [`SETTLED`] apart (`wait`) find the same files with the
/// same bytes. An editor that rewrites a file in place (truncate, then
/// write) or a copy in progress can be read half-written, and a half-written
/// policy that still parses (its later `deny` rules missing) must not be
/// served: a reload reads again until the files hold still, and fails
/// (keeping the served policy) when they keep changing. Two reads that
/// fail the same way (a deleted folder) have held still: that error is
/// the answer.
fn read_settled(paths: &[PathBuf], mut wait: impl FnMut()) -> Result<Layers, Error> {
    let mut last = read_layers(paths);
    for _ in 0..SETTLE_TRIES {
        wait();
        let now = read_layers(paths);
        let same = match (&last, &now) {
            (Ok(a), Ok(b)) => a == b,
            (Err(a), Err(b)) => a.to_string() == b.to_string(),
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
            "{KEPT_CHANGING} for {} ms; the served policy stays: \
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

/// Watches the policy paths until the process ends: reloads after a
/// change has settled (the watcher, its filtering and its settling are
/// `cli::watch`'s, shared with `policy test --watch`), and runs the
/// content check whenever `every` passes without one. If the watcher
/// stops, the check goes on alone.
pub fn watch(state: Arc<State>, settle: Duration, every: Duration) -> Result<(), Error> {
    let changes = Changes::watch(state.paths(), settle)?;
    state.watching.store(true, Ordering::Relaxed);
    tracing::info!(
        paths = changes.watched(),
        check_ms = every.as_millis() as u64,
        "watching the policy files"
    );
    std::thread::Builder::new()
        .name("ctxgate-reload".into())
        .spawn(move || {
            loop {
                match changes.next(every) {
                    Next::Changed => {
                        state.changed();
                        changes.settle();
                        state.reload();
                    }
                    Next::Quiet => {
                        changes.rewatch();
                        state.check();
                    }
                    Next::Stopped => break,
                }
            }
            tracing::warn!(
                check_ms = every.as_millis() as u64,
                "the file watcher stopped; the policy files are checked on the timer alone"
            );
            loop {
                std::thread::sleep(every);
                state.check();
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

        // Gone, and still gone at the second read: that is the answer.
        std::fs::remove_file(&file).unwrap();
        let mut waits = 0;
        let err = read_settled(paths, || waits += 1).unwrap_err();
        assert!(missing(&err), "{err}");
        assert_eq!(waits, 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn policy(budget: usize) -> String {
        format!("package ctxgate\n\nbudget := {{\"tokens\": {budget}}}\n")
    }

    fn failed_reloads(state: &State) -> String {
        let text = state.metrics.render("h", 0);
        text.lines()
            .find(|l| l.starts_with("ctxgate_reloads_total{result=\"failed\"}"))
            .unwrap()
            .to_string()
    }

    /// The content check, with no watcher: a change is loaded; a broken
    /// version is refused once (with its location), kept, and not read
    /// again while it stays; a deleted folder is `missing`, never "kept
    /// changing", with the last good policy served; the folder created
    /// again is loaded.
    #[test]
    fn the_content_check_loads_what_differs_from_the_last_read() {
        let dir = std::env::temp_dir().join(format!("ctxgate-check-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let folder = dir.join("policy");
        std::fs::create_dir_all(&folder).unwrap();
        let file = folder.join("main.rego");
        std::fs::write(&file, policy(8000)).unwrap();
        let state = State::load(vec![folder.clone()], Limits::default()).unwrap();
        let first = state.current().gate.policy().hash().to_string();
        assert!(!state.check(), "nothing changed");
        assert_eq!(state.describe()["stale"], Value::Null);

        std::fs::write(&file, policy(6000)).unwrap();
        assert!(state.check());
        let second = state.current().gate.policy().hash().to_string();
        assert_ne!(first, second);
        assert_eq!(state.describe()["stale"], Value::Null);

        std::fs::write(
            &file,
            "package ctxgate\n\nscope := \"app\" if {\n\tinput.action.name ==\n}\n",
        )
        .unwrap();
        assert!(!state.check());
        let described = state.describe();
        assert_eq!(described["hash"], second.as_str());
        assert_eq!(described["stale"]["reason"], "refused", "{described}");
        assert_eq!(described["stale"]["line"], 5, "{described}");
        assert!(described["stale"]["file"]
            .as_str()
            .unwrap()
            .ends_with("main.rego"));
        let failed = failed_reloads(&state);
        assert!(!state.check(), "the same refused files are not read again");
        assert_eq!(failed_reloads(&state), failed);

        std::fs::remove_dir_all(&folder).unwrap();
        assert!(!state.check());
        let described = state.describe();
        assert_eq!(described["hash"], second.as_str());
        assert_eq!(described["stale"]["reason"], "missing", "{described}");
        assert_eq!(described["stale"]["file"], folder.display().to_string());
        let message = described["last_reload_error"]["message"].as_str().unwrap();
        assert!(!message.contains("kept changing"), "{message}");
        assert!(!state.check(), "still missing");

        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(&file, policy(5000)).unwrap();
        assert!(state.check());
        let described = state.describe();
        assert_ne!(described["hash"], second.as_str());
        assert_eq!(described["stale"], Value::Null);
        assert_eq!(described["last_reload_error"], Value::Null);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Files changed and not read yet are `changed` until a reload reads them.
    #[test]
    fn changed_files_are_stale_until_read() {
        let dir = std::env::temp_dir().join(format!("ctxgate-changed-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("p.rego");
        std::fs::write(&file, policy(8000)).unwrap();
        let state = State::load(vec![file.clone()], Limits::default()).unwrap();
        state.changed();
        let described = state.describe();
        assert_eq!(described["stale"]["reason"], "changed", "{described}");
        assert!(described["stale"]["since"].is_string());
        assert!(!state.reload());
        assert_eq!(state.describe()["stale"], Value::Null);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
