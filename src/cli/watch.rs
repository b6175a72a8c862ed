//! The one watcher of policy files, for `serve --watch` (reload the served
//! policy) and `policy test --watch` (run the tests again). Editors and
//! deploy tools replace files by rename as often as they write in place,
//! and operators reach policies through symlinks (a folder link swapped to
//! a new release, a Kubernetes ConfigMap's `..data` link renamed over), so
//! folders are watched, never files: the folder holding each path, the
//! folder holding each symlink met on the way to it, the folder its
//! resolved target is in, and, for a policy folder, the folder itself and
//! the links of its `.rego` files, followed the same way. A path that does
//! not exist is watched from its nearest folder that does, so a folder
//! deleted and created again is seen. Every change re-resolves the links
//! and moves the watches. Events are filtered to those paths; a burst of
//! events is one change, once they have been quiet for `settle`.
//!
//! **Architecture Invariant.** This module reads no policy bytes: it says
//! *that* something may have changed. What changed is the caller's to read
//! (`serve` also checks the files' content on a timer, for what a watcher
//! cannot see).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use notify::{RecursiveMode, Watcher};

use crate::policy as lib;
use crate::Error;

/// The most symlinks followed on the way to one path (Linux's own limit).
const MAX_LINKS: usize = 40;

/// The longest a burst may hold a change back: files that never go quiet
/// are read anyway (the reader settles them itself).
const MAX_SETTLE: Duration = Duration::from_secs(2);

/// What the watcher thread sends: the paths an event names, or `None` for
/// "look at everything" (the kernel's queue overflowed, the watch failed).
type Message = Option<Vec<PathBuf>>;

/// Changes to a set of policy paths, one burst at a time.
pub(crate) struct Changes {
    /// The watcher and what it watches; only the thread that waits locks it.
    inner: Mutex<Inner>,
    receiver: Receiver<Message>,
    settle: Duration,
    /// The paths given, made absolute.
    paths: Vec<PathBuf>,
}

struct Inner {
    watcher: notify::RecommendedWatcher,
    /// The folders watched, with the identity each had when watched.
    watching: BTreeMap<PathBuf, Option<(u64, u64)>>,
    targets: Targets,
}

/// What the paths resolve to now.
#[derive(Default, PartialEq, Debug)]
struct Targets {
    /// The folders to watch (each on its own, not recursively: the loader
    /// reads a folder's own `.rego` files, not its subfolders').
    dirs: BTreeSet<PathBuf>,
    /// The paths whose change matters: the paths given, each symlink on the
    /// way and each resolved target. A change to one of their folders
    /// (deleted, renamed, created) matters too.
    paths: BTreeSet<PathBuf>,
    /// The resolved policy folders: any `.rego` entry in them matters.
    folders: BTreeSet<PathBuf>,
}

/// What [`Changes::next`] saw.
#[derive(Debug, PartialEq)]
pub(crate) enum Next {
    /// A watched path changed (the burst has not settled yet).
    Changed,
    /// Nothing changed for the whole wait.
    Quiet,
    /// The watcher has stopped.
    Stopped,
}

impl Changes {
    /// Starts watching `paths` (files or folders; `default`, the embedded
    /// default policy, is no file and is skipped). An error names the
    /// folder that cannot be watched.
    pub(crate) fn watch(paths: &[PathBuf], settle: Duration) -> Result<Changes, Error> {
        let (sender, receiver) = std::sync::mpsc::channel::<Message>();
        let paths: Vec<PathBuf> = paths
            .iter()
            .filter(|p| p.as_os_str() != lib::DEFAULT_LAYER)
            .map(|p| absolute(p))
            .collect();
        let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            let message = match event {
                Ok(event) if matches!(event.kind, notify::EventKind::Access(_)) => return,
                Ok(event) if event.need_rescan() => None,
                Ok(event) => Some(event.paths),
                Err(_) => None,
            };
            let _ = sender.send(message);
        })
        .map_err(|e| watch_error(paths.first().map_or(Path::new("."), |p| p), e))?;
        let changes = Changes {
            inner: Mutex::new(Inner {
                watcher,
                watching: BTreeMap::new(),
                targets: Targets::default(),
            }),
            receiver,
            settle,
            paths,
        };
        changes.rewatch_or_fail(true, true)?;
        Ok(changes)
    }

    /// How many paths are watched (the embedded default is not one).
    pub(crate) fn watched(&self) -> usize {
        self.paths.len()
    }

    /// Blocks until a watched file changes and the burst has settled (the
    /// watches then follow the links as they are now); false when the
    /// watcher has stopped.
    pub(crate) fn wait(&self) -> bool {
        loop {
            match self.next(Duration::from_secs(3600)) {
                Next::Changed => break,
                Next::Quiet => self.rewatch(),
                Next::Stopped => return false,
            }
        }
        self.settle();
        true
    }

    /// Waits up to `within` for a change to a watched path; events about
    /// other paths in the watched folders are dropped and do not extend
    /// the wait.
    pub(crate) fn next(&self, within: Duration) -> Next {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.receiver.recv_timeout(left) {
                Ok(message) if self.concerns(&message) => return Next::Changed,
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => return Next::Quiet,
                Err(RecvTimeoutError::Disconnected) => return Next::Stopped,
            }
        }
    }

    /// Waits until the watched paths have been quiet for `settle` (at
    /// most [`MAX_SETTLE`]), then resolves the links again and moves the
    /// watches to where they lead now.
    pub(crate) fn settle(&self) {
        let started = Instant::now();
        let mut quiet_from = Instant::now();
        loop {
            let left = (quiet_from + self.settle).saturating_duration_since(Instant::now());
            if left.is_zero() || started.elapsed() >= MAX_SETTLE {
                break;
            }
            match self.receiver.recv_timeout(left) {
                Ok(message) if self.concerns(&message) => quiet_from = Instant::now(),
                Ok(_) => {}
                Err(_) => break,
            }
        }
        let _ = self.rewatch_or_fail(true, false);
    }

    /// Resolves the links again and watches what they lead to now, keeping
    /// the watches that still fit.
    pub(crate) fn rewatch(&self) {
        let _ = self.rewatch_or_fail(false, false);
    }

    /// `renew`: watch every folder again even where it looks the same (a
    /// folder deleted and created again can have the same inode number).
    /// `strict`: a folder that cannot be watched is an error (at start);
    /// otherwise it is logged and tried again at the next change or check.
    fn rewatch_or_fail(&self, renew: bool, strict: bool) -> Result<(), Error> {
        let targets = targets(&self.paths);
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let Inner {
            watcher,
            watching,
            targets: current,
        } = &mut *inner;
        let mut failed = 0usize;
        let mut moved = 0usize;
        watching.retain(|dir, _| {
            let keep = targets.dirs.contains(dir);
            if !keep {
                let _ = watcher.unwatch(dir);
                moved += 1;
            }
            keep
        });
        for dir in &targets.dirs {
            let now = identity(dir);
            match watching.get(dir) {
                Some(was) if !renew && *was == now && now.is_some() => continue,
                Some(_) => {
                    let _ = watcher.unwatch(dir);
                }
                None => moved += 1,
            }
            watching.remove(dir);
            match watcher.watch(dir, RecursiveMode::NonRecursive) {
                Ok(()) => {
                    watching.insert(dir.clone(), now);
                }
                Err(err) if strict => return Err(watch_error(dir, err)),
                Err(_) => failed += 1,
            }
        }
        if moved > 0 || failed > 0 || *current != targets {
            tracing::debug!(
                folders = watching.len(),
                moved,
                failed,
                "policy watches follow the links"
            );
        }
        *current = targets;
        Ok(())
    }

    /// Whether an event's paths concern the policy: `None` (look at
    /// everything) does.
    fn concerns(&self, message: &Message) -> bool {
        let Some(changed) = message else { return true };
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        changed.iter().any(|p| inner.targets.concerns(p))
    }
}

impl Targets {
    /// A changed path concerns the policy when it is a path that matters
    /// or a folder on the way to one, or a `.rego` entry of a policy folder.
    fn concerns(&self, changed: &Path) -> bool {
        self.paths.iter().any(|p| p.starts_with(changed))
            || (changed.extension().is_some_and(|e| e == "rego")
                && changed.parent().is_some_and(|d| self.folders.contains(d)))
    }
}

/// What `paths` lead to now (absolute paths).
fn targets(paths: &[PathBuf]) -> Targets {
    let mut targets = Targets::default();
    for path in paths {
        add(path, true, &mut targets);
    }
    targets
}

/// Adds `path` and what it resolves to; a policy folder (`layer`) adds its
/// `.rego` entries' links too.
fn add(path: &Path, layer: bool, targets: &mut Targets) {
    targets.paths.insert(path.to_path_buf());
    if let Some(parent) = path.parent() {
        targets
            .dirs
            .insert(existing(&resolve(parent, &mut Vec::new())));
    }
    let mut links = Vec::new();
    let resolved = resolve(path, &mut links);
    for link in links {
        if let Some(parent) = link.parent() {
            targets.dirs.insert(existing(parent));
        }
        targets.paths.insert(link);
    }
    if let Some(parent) = resolved.parent() {
        targets.dirs.insert(existing(parent));
    }
    if layer && resolved.is_dir() {
        targets.dirs.insert(resolved.clone());
        targets.folders.insert(resolved.clone());
        if let Ok(entries) = std::fs::read_dir(&resolved) {
            for entry in entries.flatten() {
                let entry = entry.path();
                let linked = std::fs::symlink_metadata(&entry).is_ok_and(|m| m.is_symlink());
                if linked && entry.extension().is_some_and(|e| e == "rego") {
                    add(&entry, false, targets);
                }
            }
        }
    }
    targets.paths.insert(resolved);
}

/// `path` with every symlink on the way replaced by its target, as the
/// kernel would resolve it; each symlink met (its own path, in a resolved
/// folder) is pushed to `links`. What does not exist is kept as written.
fn resolve(path: &Path, links: &mut Vec<PathBuf>) -> PathBuf {
    let mut hops = 0;
    resolve_from(PathBuf::new(), path, links, &mut hops)
}

fn resolve_from(
    mut done: PathBuf,
    path: &Path,
    links: &mut Vec<PathBuf>,
    hops: &mut usize,
) -> PathBuf {
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => done.push(component),
            Component::CurDir => {}
            Component::ParentDir => {
                done.pop();
            }
            Component::Normal(name) => {
                let next = done.join(name);
                let target = std::fs::symlink_metadata(&next)
                    .ok()
                    .filter(|m| m.is_symlink())
                    .and_then(|_| std::fs::read_link(&next).ok());
                match target {
                    Some(target) if *hops < MAX_LINKS => {
                        *hops += 1;
                        links.push(next);
                        done = resolve_from(done, &target, links, hops);
                    }
                    _ => done = next,
                }
            }
        }
    }
    done
}

/// `dir`, or its nearest ancestor that exists (where its creation will show).
fn existing(dir: &Path) -> PathBuf {
    let mut dir = dir;
    loop {
        if dir.is_dir() {
            return dir.to_path_buf();
        }
        match dir.parent() {
            Some(parent) => dir = parent,
            None => return dir.to_path_buf(),
        }
    }
}

/// A folder's device and inode, to tell a folder created again from the
/// one watched.
fn identity(dir: &Path) -> Option<(u64, u64)> {
    let meta = std::fs::metadata(dir).ok()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ctxgate-watch-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // The temp folder itself may be reached through a link.
        dir.canonicalize().unwrap()
    }

    /// The ConfigMap layout: `dir/policy.rego -> ..data/policy.rego`,
    /// `dir/..data -> ..2026_x`. Both links and the release folder are
    /// watched, and the `..data` rename concerns the policy.
    #[test]
    fn a_configmap_file_resolves_through_both_links() {
        let dir = scratch("configmap");
        std::fs::create_dir(dir.join("..2026_x")).unwrap();
        std::fs::write(dir.join("..2026_x/policy.rego"), "package ctxgate\n").unwrap();
        symlink("..2026_x", dir.join("..data")).unwrap();
        symlink("..data/policy.rego", dir.join("policy.rego")).unwrap();
        let targets = targets(&[dir.join("policy.rego")]);
        assert_eq!(
            targets.dirs,
            BTreeSet::from([dir.clone(), dir.join("..2026_x")])
        );
        assert!(targets.paths.contains(&dir.join("..2026_x/policy.rego")));
        assert!(targets.concerns(&dir.join("..data")));
        assert!(targets.concerns(&dir.join("..2026_x/policy.rego")));
        assert!(!targets.concerns(&dir.join("..data_tmp")));
        assert!(!targets.concerns(&dir.join("notes.txt")));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A policy folder's own `.rego` entries concern it, and so do the
    /// folders on the way to it (deleted, renamed, created); a missing
    /// folder is watched from the nearest one that exists.
    #[test]
    fn a_missing_folder_is_watched_from_its_nearest_existing_ancestor() {
        let dir = scratch("missing");
        let policy = dir.join("a/b/policy");
        let targets = targets(std::slice::from_ref(&policy));
        assert_eq!(targets.dirs, BTreeSet::from([dir.clone()]));
        assert!(targets.concerns(&dir.join("a")));
        assert!(targets.concerns(&dir.join("a/b")));
        assert!(!targets.concerns(&dir.join("c")));

        std::fs::create_dir_all(&policy).unwrap();
        let targets = super::targets(std::slice::from_ref(&policy));
        assert_eq!(
            targets.dirs,
            BTreeSet::from([dir.join("a/b"), policy.clone()])
        );
        assert!(targets.concerns(&policy.join("new.rego")));
        assert!(!targets.concerns(&policy.join("notes.txt")));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A symlink loop resolves to a path, not forever.
    #[test]
    fn a_symlink_loop_ends() {
        let dir = scratch("loop");
        symlink("b.rego", dir.join("a.rego")).unwrap();
        symlink("a.rego", dir.join("b.rego")).unwrap();
        let mut links = Vec::new();
        resolve(&dir.join("a.rego"), &mut links);
        assert_eq!(links.len(), MAX_LINKS);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
