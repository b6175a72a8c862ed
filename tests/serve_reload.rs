//! `ctxgate serve --watch`: a good policy replaces the served one, a broken
//! one never does (and `policy`, `/health` and the log say why, with
//! file:line:col); and the load-and-fault test: several clients, hundreds
//! of requests on the real trees, while the policy file is rewritten every
//! few tens of milliseconds, alternating valid and broken versions.

mod serve_support;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use serve_support::*;

const BROKEN_SYNTAX: &str = "package ctxgate\n\nscope := \"app\" if {\n\tinput.action.name ==\n}\n";
/// Parses and compiles; `ctxgate policy check` finds an error (a rule over
/// a field the element input does not have).
const BROKEN_LINT: &str =
    "package ctxgate\n\ndeny contains \"x\" if {\n\tinput.element.colour == \"red\"\n}\n";

/// Polls the `policy` method until `done` holds for its result.
fn until(server: &mut Stdio, id: &mut u64, done: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        *id += 1;
        let reply = server.call(*id, "policy", Value::Null);
        if done(&reply["result"]) {
            return reply["result"].clone();
        }
        assert!(
            start.elapsed() < REPLY,
            "never: {reply}\n{}",
            server.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_broken_policy_never_replaces_a_working_one() {
    let dir = scratch("reload");
    let path = dir.join("policy.rego");
    std::fs::write(&path, vault_policy(8000)).unwrap();
    let second = policy_hash_of(&path, &vault_policy(6000));
    std::fs::write(&path, vault_policy(8000)).unwrap();
    let first = policy_hash(&path);
    let name = path.to_str().unwrap();
    let mut server = Stdio::start(&["--watch", "--policy", name]);
    let mut id = 0;
    let result = until(&mut server, &mut id, |r| r["hash"].is_string());
    assert_eq!(result["hash"], first.as_str());

    // In place, with a syntax error: kept, and the error says where.
    std::fs::write(&path, BROKEN_SYNTAX).unwrap();
    let result = until(&mut server, &mut id, |r| !r["last_reload_error"].is_null());
    assert_eq!(result["hash"], first.as_str());
    let error = &result["last_reload_error"];
    assert_eq!(error["file"], name);
    assert_eq!(error["line"], 5, "{error}");
    assert!(error["column"].is_number(), "{error}");
    let reply = server.call(
        100,
        "trim",
        json!({"answer": with_canaries(fixture("uia-input-types.json")), "action": "app"}),
    );
    assert_eq!(reply["result"]["report"]["policy_hash"], first.as_str());
    server.wait_stderr("policy reload failed");

    // A good one, by rename: swapped in, the error cleared.
    replace_file(&path, &vault_policy(6000));
    let result = until(&mut server, &mut id, |r| r["hash"] == second.as_str());
    assert_eq!(result["last_reload_error"], Value::Null);
    let reply = server.call(
        101,
        "trim",
        json!({"answer": fixture("uia-input-types.json"), "action": "app"}),
    );
    assert_eq!(reply["result"]["report"]["policy_hash"], second.as_str());
    assert_eq!(reply["result"]["report"]["budgets"][0]["limit"], 6000);

    // One that compiles but `policy check` rejects: kept too.
    replace_file(&path, BROKEN_LINT);
    let result = until(&mut server, &mut id, |r| !r["last_reload_error"].is_null());
    assert_eq!(result["hash"], second.as_str());
    assert!(
        result["last_reload_error"]["message"]
            .as_str()
            .unwrap()
            .contains("colour"),
        "{result}"
    );

    // A deleted file: kept.
    std::fs::remove_file(&path).unwrap();
    let result = until(&mut server, &mut id, |r| {
        r["last_reload_error"]["message"]
            .as_str()
            .is_some_and(|m| !m.contains("colour"))
    });
    assert_eq!(result["hash"], second.as_str());
    let (status, stderr) = server.finish();
    assert!(status.success(), "{stderr}");
}

#[test]
fn health_names_the_last_reload_error() {
    let dir = scratch("reload-http");
    let path = dir.join("policy.rego");
    std::fs::write(&path, vault_policy(8000)).unwrap();
    let server = Http::start(&["--watch", "--policy", path.to_str().unwrap()]);
    std::fs::write(&path, BROKEN_SYNTAX).unwrap();
    let start = Instant::now();
    loop {
        let (status, body) = server.request("GET", "/health", b"");
        assert_eq!(status, 200, "a good policy is still served");
        let body: Value = serde_json::from_str(&body).unwrap();
        if !body["last_reload_error"].is_null() {
            assert_eq!(body["last_reload_error"]["line"], 5);
            assert_eq!(body["status"], "stale", "{body}");
            assert_eq!(body["stale"]["reason"], "refused", "{body}");
            assert_eq!(body["stale"]["file"], path.to_str().unwrap(), "{body}");
            assert_eq!(body["stale"]["line"], 5, "{body}");
            break;
        }
        assert!(start.elapsed() < REPLY, "{body}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let (_, metrics) = server.request("GET", "/metrics", b"");
    assert!(
        !metrics.contains("ctxgate_reloads_total{result=\"failed\"} 0"),
        "{metrics}"
    );
}

/// The hash of `text` served from `path` (`path` is left holding it).
fn policy_hash_of(path: &std::path::Path, text: &str) -> String {
    std::fs::write(path, text).unwrap();
    policy_hash(path)
}

/// Several clients, hundreds of requests on the real trees (each with two
/// canaries: one the policy denies, one the floor masks), while the policy
/// file is rewritten every 30 ms, alternating two valid versions with
/// broken ones: no request fails, every report names a valid version's
/// hash, and no canary comes back. Bounded: 60 s of requests at
/// most (250 requests took 8-30 s in a debug build on 2 busy cores).
#[test]
fn load_and_faults_while_the_policy_churns() {
    let dir = scratch("churn");
    let path = dir.join("policy.rego");
    let valid = [vault_policy(8000), vault_policy(6000)];
    let hashes: BTreeSet<String> = valid.iter().map(|v| policy_hash_of(&path, v)).collect();
    assert_eq!(hashes.len(), 2);
    std::fs::write(&path, &valid[0]).unwrap();

    let http = Http::start(&["--watch", "--policy", path.to_str().unwrap()]);
    // And one on stdio, both started on a valid version.
    let mut stdio = Stdio::start(&["--watch", "--policy", path.to_str().unwrap()]);
    stdio.call(0, "policy", Value::Null);
    let trees: Vec<(String, Value)> = fixtures()
        .into_iter()
        .map(|(name, answer)| (name, with_canaries(answer)))
        .collect();
    let trees = Arc::new(trees);
    let stop = Arc::new(AtomicBool::new(false));
    // Clients go on past their share until the writer has written this
    // many versions, so a fast build still serves across the churn.
    const WRITES: usize = 20;
    let written = Arc::new(AtomicUsize::new(0));

    let writer = {
        let (path, stop, written) = (path.clone(), stop.clone(), written.clone());
        std::thread::spawn(move || {
            let versions = [
                valid[0].as_str(),
                BROKEN_SYNTAX,
                valid[1].as_str(),
                BROKEN_LINT,
            ];
            let mut writes = 0usize;
            while !stop.load(Ordering::Acquire) {
                let text = versions[writes % versions.len()];
                // Half by rename, half in place over the same file.
                if writes % 3 == 0 {
                    std::fs::write(&path, text).unwrap();
                } else {
                    replace_file(&path, text);
                }
                writes += 1;
                written.store(writes, Ordering::Release);
                std::thread::sleep(Duration::from_millis(30));
            }
            // End on a valid version.
            replace_file(&path, versions[0]);
            writes
        })
    };

    const CLIENTS: usize = 4;
    const PER_CLIENT: usize = 50;
    let started = Instant::now();
    let deadline = started + Duration::from_secs(60);
    let addr = http.addr.clone();
    let (results, stdio_seen) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..CLIENTS)
            .map(|client| {
                let (trees, addr, written) = (trees.clone(), addr.clone(), written.clone());
                s.spawn(move || {
                    let mut seen = Vec::new();
                    for n in 0.. {
                        let churned = written.load(Ordering::Acquire) >= WRITES;
                        if Instant::now() > deadline || (n >= PER_CLIENT && churned) {
                            break;
                        }
                        let (name, answer) = &trees[(client + n) % trees.len()];
                        let action = ["app", "window", "focus"][n % 3];
                        let body = json!({"answer": answer, "action": action, "max_tokens": 4000})
                            .to_string();
                        let (status, text) = request(&addr, "POST", "/v1/trim", body.as_bytes());
                        assert_eq!(status, 200, "{name} ({action}) failed: {text}");
                        assert!(
                            !text.contains(CANARY),
                            "{name} ({action}) leaked the canary"
                        );
                        let reply: Value = serde_json::from_str(&text).unwrap();
                        seen.push(reply["report"]["policy_hash"].as_str().unwrap().to_string());
                    }
                    seen
                })
            })
            .collect();
        let stdio_client = s.spawn(|| {
            let mut seen = Vec::new();
            for (n, (name, answer)) in trees.iter().cycle().take(PER_CLIENT).enumerate() {
                if Instant::now() > deadline {
                    break;
                }
                let reply = stdio.call(
                    n as u64 + 1,
                    "trim",
                    json!({"answer": answer, "action": "app"}),
                );
                let text = reply.to_string();
                assert!(
                    reply["result"].is_object(),
                    "{name} failed on stdio: {text}"
                );
                assert!(!text.contains(CANARY), "{name} leaked the canary on stdio");
                seen.push(
                    reply["result"]["report"]["policy_hash"]
                        .as_str()
                        .unwrap()
                        .to_string(),
                );
            }
            seen
        });
        let results: Vec<Vec<String>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        (results, stdio_client.join().unwrap())
    });
    stop.store(true, Ordering::Release);
    let writes = writer.join().unwrap();

    let served: Vec<&String> = results.iter().flatten().chain(&stdio_seen).collect();
    assert!(
        served.len() >= 200,
        "only {} requests ran in time",
        served.len()
    );
    for hash in &served {
        assert!(
            hashes.contains(*hash),
            "a report names a policy that was never valid: {hash}"
        );
    }
    let distinct: BTreeSet<&String> = served.iter().copied().collect();
    eprintln!(
        "{} requests in {:?}, {writes} policy writes",
        served.len(),
        started.elapsed()
    );
    assert!(
        writes >= WRITES,
        "the policy was rewritten only {writes} times"
    );

    let (_, metrics) = http.request("GET", "/metrics", b"");
    let failed = metric(&metrics, "ctxgate_reloads_total{result=\"failed\"}");
    let ok = metric(&metrics, "ctxgate_reloads_total{result=\"ok\"}");
    assert!(
        failed > 0 && ok > 0,
        "reloads ok {ok}, failed {failed}; {writes} writes"
    );
    assert!(
        distinct.len() == 2,
        "both valid versions served: {distinct:?}"
    );
    signal(http.pid(), "TERM");
    let (status, stderr) = http.wait();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains(CANARY));
    let (status, stderr) = stdio.finish();
    assert!(status.success());
    assert!(!stderr.contains(CANARY));
}

fn metric(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in\n{text}"))
}

#[test]
fn a_watched_folder_reloads_when_a_file_in_it_changes() {
    let dir = scratch("reload-folder");
    let folder = dir.join("policy");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("main.rego"), vault_policy(8000)).unwrap();
    let extra = dir.join("extra.rego");
    std::fs::write(
        &extra,
        "package ctxgate\n\nprune contains \"extra\" if {\n\tinput.element.role == \"Image\"\n}\n",
    )
    .unwrap();
    let mut server = Stdio::start(&[
        "--watch",
        "--policy",
        folder.to_str().unwrap(),
        "--policy",
        extra.to_str().unwrap(),
    ]);
    let mut id = 0;
    let first = until(&mut server, &mut id, |r| r["hash"].is_string());
    assert_eq!(first["files"].as_array().unwrap().len(), 2, "{first}");

    // A broken file added to the folder: kept, and named.
    std::fs::write(folder.join("zz_broken.rego"), BROKEN_SYNTAX).unwrap();
    let result = until(&mut server, &mut id, |r| !r["last_reload_error"].is_null());
    assert_eq!(result["hash"], first["hash"]);
    assert!(
        result["last_reload_error"]["file"]
            .as_str()
            .unwrap()
            .ends_with("zz_broken.rego"),
        "{result}"
    );
    // Removed: the folder is good again, and the same policy as before.
    std::fs::remove_file(folder.join("zz_broken.rego")).unwrap();
    let result = until(&mut server, &mut id, |r| r["last_reload_error"].is_null());
    assert_eq!(result["hash"], first["hash"]);
    // A file outside the folder that is not watched changes nothing.
    std::fs::write(dir.join("other.rego"), BROKEN_SYNTAX).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let result = until(&mut server, &mut id, |_| true);
    assert_eq!(result["last_reload_error"], Value::Null);
    // A second file, watched on its own: a good change is served.
    replace_file(
        &extra,
        "package ctxgate\n\nprune contains \"extra\" if {\n\tinput.element.role == \"Link\"\n}\n",
    );
    let result = until(&mut server, &mut id, |r| r["hash"] != first["hash"]);
    assert_eq!(result["last_reload_error"], Value::Null);
}

/// The content check off (`--watch-check` past any test's length): what
/// these servers load, the watcher saw.
const WATCHER_ONLY: [&str; 2] = ["--watch-check", "10m"];

/// `ctxgate serve --watch --policy PATH` on stdio, the watcher alone
/// noticing changes, once it has answered.
fn watching(path: &std::path::Path) -> (Stdio, u64) {
    let mut args = vec!["--watch", "--policy", path.to_str().unwrap()];
    args.extend(WATCHER_ONLY);
    let mut server = Stdio::start(&args);
    let mut id = 0;
    until(&mut server, &mut id, |r| r["hash"].is_string());
    (server, id)
}

/// The budget limit the served policy gives a `trim`.
fn served_budget(server: &mut Stdio, id: &mut u64) -> u64 {
    *id += 1;
    let reply = server.call(
        *id,
        "trim",
        json!({"answer": fixture("uia-input-types.json"), "action": "app"}),
    );
    reply["result"]["report"]["budgets"][0]["limit"]
        .as_u64()
        .unwrap_or_else(|| panic!("{reply}"))
}

/// Polls until the served policy's hash differs from `from`; the result.
fn until_new(server: &mut Stdio, id: &mut u64, from: &Value) -> Value {
    until(server, id, |r| r["hash"] != *from && r["stale"].is_null())
}

/// A policy folder reached through a link that a release swaps to another
/// folder: the new folder is served, and an edit inside it is too.
#[cfg(unix)]
#[test]
fn a_swapped_folder_link_is_followed() {
    let dir = scratch("reload-folder-link");
    for (release, budget) in [("v1", 8000), ("v2", 6000)] {
        std::fs::create_dir_all(dir.join(release)).unwrap();
        std::fs::write(dir.join(release).join("main.rego"), vault_policy(budget)).unwrap();
    }
    let current = dir.join("current");
    std::os::unix::fs::symlink("v1", &current).unwrap();
    let (mut server, mut id) = watching(&current);
    let v1 = until(&mut server, &mut id, |_| true);
    assert_eq!(served_budget(&mut server, &mut id), 8000);

    swap_link(&current, "v2");
    let v2 = until_new(&mut server, &mut id, &v1["hash"]);
    assert_eq!(served_budget(&mut server, &mut id), 6000);
    assert_eq!(v2["files"][0], current.join("main.rego").to_str().unwrap());

    // The watches moved with the link: an edit in the folder it names now.
    replace_file(&dir.join("v2/main.rego"), &vault_policy(5000));
    until_new(&mut server, &mut id, &v2["hash"]);
    assert_eq!(served_budget(&mut server, &mut id), 5000);
}

/// A policy file that is a link into a releases folder, pointed at another
/// file there: the new file is served, and then an edit to it in place.
#[cfg(unix)]
#[test]
fn a_retargeted_file_link_is_followed() {
    let dir = scratch("reload-file-link");
    std::fs::create_dir_all(dir.join("releases")).unwrap();
    std::fs::write(dir.join("releases/a.rego"), vault_policy(8000)).unwrap();
    std::fs::write(dir.join("releases/b.rego"), vault_policy(6000)).unwrap();
    std::fs::create_dir_all(dir.join("etc")).unwrap();
    let link = dir.join("etc/policy.rego");
    std::os::unix::fs::symlink("../releases/a.rego", &link).unwrap();
    let (mut server, mut id) = watching(&link);
    let a = until(&mut server, &mut id, |_| true);

    swap_link(&link, "../releases/b.rego");
    let b = until_new(&mut server, &mut id, &a["hash"]);
    assert_eq!(served_budget(&mut server, &mut id), 6000);

    std::fs::write(dir.join("releases/b.rego"), vault_policy(5000)).unwrap();
    until_new(&mut server, &mut id, &b["hash"]);
    assert_eq!(served_budget(&mut server, &mut id), 5000);
}

/// The file a policy link names, edited where it is (by rename, then in
/// place): each version is served.
#[cfg(unix)]
#[test]
fn an_edit_behind_a_linked_file_is_served() {
    let dir = scratch("reload-behind-link");
    std::fs::create_dir_all(dir.join("store")).unwrap();
    std::fs::create_dir_all(dir.join("etc")).unwrap();
    let real = dir.join("store/real.rego");
    std::fs::write(&real, vault_policy(8000)).unwrap();
    let link = dir.join("etc/policy.rego");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let (mut server, mut id) = watching(&link);
    let first = until(&mut server, &mut id, |_| true);

    replace_file(&real, &vault_policy(6000));
    let second = until_new(&mut server, &mut id, &first["hash"]);
    assert_eq!(served_budget(&mut server, &mut id), 6000);
    std::fs::write(&real, vault_policy(5000)).unwrap();
    until_new(&mut server, &mut id, &second["hash"]);
    assert_eq!(served_budget(&mut server, &mut id), 5000);
}

/// A Kubernetes ConfigMap volume updated twice the kubelet's way (a new
/// release folder, `..data` swapped by rename, the old folder deleted),
/// served as a file (`dir/policy.rego`) and as a folder (`dir`): each
/// update is served by both.
#[cfg(unix)]
#[test]
fn a_configmap_update_is_served() {
    let dir = scratch("reload-configmap").join("volume");
    let v1 = vault_policy(8000);
    configmap(&dir, "2026_x", &[("policy.rego", &v1)]);
    let (mut file, mut file_id) = watching(&dir.join("policy.rego"));
    let (mut folder, mut folder_id) = watching(&dir);
    let file_v1 = until(&mut file, &mut file_id, |_| true);
    let folder_v1 = until(&mut folder, &mut folder_id, |_| true);
    assert_eq!(
        folder_v1["files"].as_array().unwrap().len(),
        1,
        "{folder_v1}"
    );

    configmap_update(
        &dir,
        "2026_x",
        "2026_y",
        &[("policy.rego", &vault_policy(6000))],
    );
    let file_v2 = until_new(&mut file, &mut file_id, &file_v1["hash"]);
    let folder_v2 = until_new(&mut folder, &mut folder_id, &folder_v1["hash"]);
    assert_eq!(served_budget(&mut file, &mut file_id), 6000);
    assert_eq!(served_budget(&mut folder, &mut folder_id), 6000);

    configmap_update(
        &dir,
        "2026_y",
        "2026_z",
        &[("policy.rego", &vault_policy(5000))],
    );
    until_new(&mut file, &mut file_id, &file_v2["hash"]);
    until_new(&mut folder, &mut folder_id, &folder_v2["hash"]);
    assert_eq!(served_budget(&mut file, &mut file_id), 5000);
    assert_eq!(served_budget(&mut folder, &mut folder_id), 5000);
}

/// A policy folder deleted: `/health` says `stale`, `missing`, naming it
/// (not that the files "kept changing"), and the last good policy is
/// served; created again with a new policy: that one is served.
#[test]
fn a_deleted_folder_is_missing_until_created_again() {
    let dir = scratch("reload-deleted-folder");
    let folder = dir.join("policy");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("main.rego"), vault_policy(8000)).unwrap();
    let mut args = vec!["--watch", "--policy", folder.to_str().unwrap()];
    args.extend(WATCHER_ONLY);
    let server = Http::start(&args);
    let first = until_health(&server, |b| b["status"] == "ok");

    std::fs::remove_dir_all(&folder).unwrap();
    let health = until_health(&server, |b| b["stale"]["reason"] == "missing");
    assert_eq!(health["status"], "stale", "{health}");
    assert_eq!(health["stale"]["file"], folder.to_str().unwrap());
    assert_eq!(health["hash"], first["hash"]);
    let message = health["last_reload_error"]["message"].as_str().unwrap();
    assert!(!message.contains("kept changing"), "{message}");
    let (status, body) = server.post(
        "/v1/trim",
        &json!({"answer": with_canaries(fixture("uia-input-types.json")), "action": "app"}),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["report"]["policy_hash"], first["hash"]);
    assert!(!body.to_string().contains(CANARY));
    let (_, policy) = server.request("GET", "/v1/policy", b"");
    let policy: Value = serde_json::from_str(&policy).unwrap();
    assert_eq!(policy["stale"]["reason"], "missing", "{policy}");

    std::fs::create_dir_all(&folder).unwrap();
    replace_file(&folder.join("main.rego"), &vault_policy(6000));
    let health = until_health(&server, |b| {
        b["hash"] != first["hash"] && b["status"] == "ok"
    });
    assert_eq!(health["stale"], Value::Null);
    assert_eq!(health["last_reload_error"], Value::Null);
    let (_, body) = server.post(
        "/v1/trim",
        &json!({"answer": fixture("uia-input-types.json"), "action": "app"}),
    );
    assert_eq!(body["report"]["budgets"][0]["limit"], 6000, "{body}");
}

/// A write the watcher cannot see: through a hard link in a folder that is
/// not watched (inotify reports a write to the folder it was made in). The
/// content check finds it and the new policy is served.
#[cfg(unix)]
#[test]
fn the_content_check_finds_what_the_watcher_cannot_see() {
    let dir = scratch("reload-unseen");
    std::fs::create_dir_all(dir.join("watched")).unwrap();
    std::fs::create_dir_all(dir.join("elsewhere")).unwrap();
    let path = dir.join("watched/policy.rego");
    std::fs::write(&path, vault_policy(8000)).unwrap();
    let twin = dir.join("elsewhere/twin.rego");
    std::fs::hard_link(&path, &twin).unwrap();
    let mut server = Stdio::start(&[
        "--watch",
        "--watch-check",
        "200ms",
        "--policy",
        path.to_str().unwrap(),
    ]);
    let mut id = 0;
    let first = until(&mut server, &mut id, |r| r["hash"].is_string());

    std::fs::write(&twin, vault_policy(6000)).unwrap();
    until_new(&mut server, &mut id, &first["hash"]);
    assert_eq!(served_budget(&mut server, &mut id), 6000);
}
