//! The one watcher of policy files, for `serve --watch` (reload the served
//! policy) and `policy test --watch` (run the tests again). Editors and
//! deploy tools replace files by rename as often as they write in place, so
//! each path's folder is watched and events are filtered to the paths given
//! (a file) or the `.rego` files under them (a folder); a burst of events is
//! one change, once the files have been quiet for `settle`.

use std::path::{Path, PathBuf};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use notify::{RecursiveMode, Watcher};

use crate::policy as lib;
use crate::Error;

/// Changes to a set of policy paths, one burst at a time.
pub(crate) struct Changes {
    /// Held so the watch lasts as long as this.
    _watcher: notify::RecommendedWatcher,
    receiver: Receiver<()>,
    settle: Duration,
    watched: usize,
}

impl Changes {
    /// Starts watching `paths` (files or folders; `default`, the embedded
    /// default policy, is no file and is skipped). An error names the path
    /// that cannot be watched.
    pub(crate) fn watch(paths: &[PathBuf], settle: Duration) -> Result<Changes, Error> {
        let (sender, receiver) = std::sync::mpsc::channel::<()>();
        let watched: Vec<PathBuf> = paths
            .iter()
            .filter(|p| p.as_os_str() != lib::DEFAULT_LAYER)
            .map(|p| absolute(p))
            .collect();
        let filter = watched.clone();
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                let Ok(event) = event else { return };
                if matches!(event.kind, notify::EventKind::Access(_)) {
                    return;
                }
                if event.paths.iter().any(|p| concerns(&filter, p)) {
                    let _ = sender.send(());
                }
            })
            .map_err(|e| watch_error(watched.first().map_or(Path::new("."), |p| p), e))?;
        for path in &watched {
            let (target, mode) = if path.is_dir() {
                (path.clone(), RecursiveMode::Recursive)
            } else {
                let parent = path
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_else(|| PathBuf::from("."));
                (parent, RecursiveMode::NonRecursive)
            };
            watcher
                .watch(&target, mode)
                .map_err(|e| watch_error(&target, e))?;
        }
        Ok(Changes {
            _watcher: watcher,
            receiver,
            settle,
            watched: watched.len(),
        })
    }

    /// How many paths are watched (the embedded default is not one).
    pub(crate) fn watched(&self) -> usize {
        self.watched
    }

    /// Blocks until a watched file changes and the burst has settled;
    /// false when the watcher has stopped.
    pub(crate) fn wait(&self) -> bool {
        if self.receiver.recv().is_err() {
            return false;
        }
        while self.receiver.recv_timeout(self.settle).is_ok() {}
        true
    }
}

fn watch_error(path: &Path, err: notify::Error) -> Error {
    Error::Io {
        path: path.display().to_string(),
        source: std::io::Error::other(format!("cannot watch it: {err}")),
    }
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Whether a changed path is a watched file, or a `.rego` file inside a
/// watched folder.
fn concerns(watched: &[PathBuf], changed: &Path) -> bool {
    watched.iter().any(|w| {
        changed == w || (changed.starts_with(w) && changed.extension().is_some_and(|e| e == "rego"))
    })
}
