//! `ctxgate explain --format html` in a real browser: headless Chromium
//! loads the page (its script runs), and the DOM it dumps is checked: the
//! legend's counts are the report's (`ctxgate trim --report` for the same
//! tree, policy and request), the script's own count of the tree's elements
//! agrees, and nothing withheld — canaries in a denied element and its
//! descendants, a masked one, the tree's real secure field and secrets the
//! redaction patterns replace — appears anywhere in the page, while a word
//! in a sent element does (the check can fail). A sent title made of markup
//! stays text.
//!
//! The tree is the real `tests/fixtures/answers/atspi-input-types.json`
//! (Chromium's input-types page read through AT-SPI; see
//! tests/fixtures/SOURCES.md) with canaries planted; the policy is the
//! default with `tests/policies/explain/` layered over it.
//!
//! Chromium is found through `CTXGATE_CHROMIUM`, else `chromium`,
//! `chromium-browser`, `google-chrome` on `PATH`. Without one the test
//! says it skipped, unless `CTXGATE_REQUIRE_TOOLS=1` (`.ci/run`, which
//! installs Debian's `chromium`) makes that a failure.

mod common;
mod explain_common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::ctxgate;
use explain_common::{planted, CANARY, CONTROL};
use serde_json::Value;

fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CTXGATE_CHROMIUM") {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "CTXGATE_CHROMIUM names `{}`, which is not a file",
            path.display()
        );
        return Some(path);
    }
    let dirs = std::env::var_os("PATH")?;
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::split_paths(&dirs) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

/// A fresh folder for one run.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ctxgate-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

/// Runs a command to its end, or kills it after `limit`.
fn run_bounded(mut command: Command, limit: Duration) -> std::process::Output {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the browser starts");
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let read = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            buf
        })
    };
    let (out, err) = (read(Box::new(stdout)), read(Box::new(stderr)));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("the browser runs") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the browser did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    std::process::Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// The DOM of `page` after Chromium loaded it and ran its script.
fn rendered_dom(browser: &Path, page: &Path, profile: &Path) -> String {
    let mut command = Command::new(browser);
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()));
    let output = run_bounded(command, Duration::from_secs(120));
    assert!(
        output.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let dom = String::from_utf8(output.stdout).expect("the DOM is UTF-8");
    assert!(dom.contains("</html>"), "no DOM dumped: {dom}");
    dom
}

/// `(name, count)` for each match of `pattern` (two groups).
fn pairs(dom: &str, pattern: &str) -> BTreeMap<String, String> {
    regex::Regex::new(pattern)
        .unwrap()
        .captures_iter(dom)
        .map(|c| (c[1].to_string(), c[2].to_string()))
        .collect()
}

fn count_of(counts: &BTreeMap<String, String>, key: &str) -> usize {
    counts
        .get(key)
        .unwrap_or_else(|| panic!("no count for `{key}` in {counts:?}"))
        .parse()
        .unwrap_or_else(|_| panic!("`{key}`'s count is not a number: {counts:?}"))
}

const OUTCOMES: [&str; 9] = [
    "sent",
    "cut",
    "skeleton",
    "placeholder",
    "masked",
    "denied",
    "pruned",
    "out_of_scope",
    "budget",
];

#[test]
fn the_html_page_renders_in_chromium_with_the_report_s_totals_and_nothing_withheld() {
    let browser = chromium();
    if !common::tool_found(
        "explain_browser",
        "Chromium",
        browser.is_some(),
        "install it with `apt-get install -y --no-install-recommends chromium`, or name it with CTXGATE_CHROMIUM",
    ) {
        return;
    }
    let browser = browser.expect("found");
    let dir = scratch("explain-browser");
    let (answer, canaries) = planted();
    let tree = dir.join("tree.json");
    std::fs::write(&tree, serde_json::to_vec(&answer).unwrap()).unwrap();
    let tree_arg = tree.to_str().unwrap();
    let policy = ["--policy", "default", "--policy", "tests/policies/explain"];

    // The whole app, then a budget that leaves some of it out.
    let requests: [&[&str]; 2] = [
        &["--action", "app"],
        &["--action", "app", "--max-tokens", "400"],
    ];
    let mut seen_outcomes = std::collections::BTreeSet::new();
    let fetches = regex::Regex::new(r#"<[a-zA-Z][^>]*\s(?:src|href)\s*="#).unwrap();
    let tree_entry = regex::Regex::new(r#"<li class="o-\w+" data-outcome="(\w+)""#).unwrap();
    for (run, request) in requests.iter().enumerate() {
        let report_file = dir.join(format!("report-{run}.json"));
        let mut args = vec!["trim", tree_arg];
        args.extend(policy);
        args.extend(*request);
        args.extend(["--report", report_file.to_str().unwrap()]);
        let trim = ctxgate(&args, b"");
        assert!(
            trim.status.success(),
            "{}",
            String::from_utf8_lossy(&trim.stderr)
        );
        let report: Value = serde_json::from_slice(&std::fs::read(&report_file).unwrap()).unwrap();

        let mut args = vec!["explain", tree_arg];
        args.extend(policy);
        args.extend(*request);
        args.extend(["--format", "html"]);
        let explain = ctxgate(&args, b"");
        assert!(
            explain.status.success(),
            "{}",
            String::from_utf8_lossy(&explain.stderr)
        );
        let page_source = String::from_utf8(explain.stdout).unwrap();
        // Self-contained: nothing to fetch, scripts and styles allowed by hash only.
        assert!(page_source.contains("default-src 'none'"));
        assert!(!fetches.is_match(&page_source));
        let page = dir.join(format!("page-{run}.html"));
        std::fs::write(&page, &page_source).unwrap();

        let dom = rendered_dom(&browser, &page, &dir.join(format!("profile-{run}")));

        // The page's script ran and found the tree to match the legend.
        assert!(
            dom.contains(r#"id="check" data-check="ok""#),
            "the page's own check did not pass"
        );
        let reported = pairs(&dom, r#"data-report="(\w+)">(\d+)<"#);
        let shown = pairs(&dom, r#"data-shown="(\w+)">(\d+)<"#);
        let in_tree: BTreeMap<String, usize> =
            tree_entry
                .captures_iter(&dom)
                .fold(BTreeMap::new(), |mut m, c| {
                    *m.entry(c[1].to_string()).or_default() += 1;
                    m
                });
        for outcome in OUTCOMES {
            let want = report["outcomes"][outcome].as_u64().unwrap_or(0) as usize;
            assert_eq!(
                count_of(&reported, outcome),
                want,
                "run {run}: legend, {outcome}"
            );
            assert_eq!(
                count_of(&shown, outcome),
                want,
                "run {run}: script's count, {outcome}"
            );
            assert_eq!(
                in_tree.get(outcome).copied().unwrap_or(0),
                want,
                "run {run}: tree, {outcome}"
            );
            if want > 0 {
                seen_outcomes.insert(outcome);
            }
        }
        let elements = report["elements"].as_u64().unwrap() as usize;
        assert_eq!(count_of(&reported, "all"), elements);
        assert_eq!(count_of(&shown, "all"), elements);
        // The deciding rules, as the report counts them.
        let rules_table = dom
            .split(r#"<table id="rules">"#)
            .nth(1)
            .and_then(|t| t.split("</table>").next())
            .expect("a rules table");
        let rules: BTreeMap<String, u64> = pairs(
            rules_table,
            r#"<tr><td><code>([^<]*)</code></td><td class="n">(\d+)</td></tr>"#,
        )
        .into_iter()
        .map(|(k, v)| (k, v.parse().unwrap()))
        .collect();
        let want_rules: BTreeMap<String, u64> = report["rules"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
            .collect();
        assert_eq!(rules, want_rules, "run {run}: rules");
        assert!(rules.contains_key("deny:marked") && rules.contains_key("mask:marked"));
        if run == 0 {
            // The redactions happened, and the page says where.
            assert_eq!(report["redactions"]["github-token"], 1);
            assert_eq!(report["redactions"]["aws-access-key"], 1);
            let n13 = dom.split(r#"data-id="n13">"#).nth(1).unwrap();
            let n13 = &n13[..n13.find("</li>").unwrap()];
            assert!(n13.contains("redacted github-token ×1"), "{n13}");
        }

        // Nothing withheld anywhere in the page: text, attributes, script.
        for canary in &canaries {
            assert!(
                !dom.contains(canary.as_str()),
                "run {run}: `{canary}` is in the page"
            );
        }
        assert!(
            !dom.contains(CANARY),
            "run {run}: a canary's prefix is in the page"
        );
        // Markup in a sent title is text: one script (the page's), no image,
        // the title unchanged, and no forged tree entry.
        assert_eq!(dom.matches("<script").count(), 1, "run {run}");
        assert!(!dom.contains("<img"), "run {run}");
        assert!(
            dom.contains("<title>ctxgate explain: app</title>"),
            "run {run}"
        );
        if run == 0 {
            assert!(dom.contains("&lt;script&gt;document.title="));
            // What is sent is shown: the check above can see a leak.
            assert!(dom.contains(CONTROL), "the control word is not in the page");
            assert!(dom.contains("&lt;li class=\"o-sent\" data-outcome=\"sent\"&gt;forged"));
        }
    }
    // The two runs between them colour more than one kind of outcome.
    for outcome in ["sent", "masked", "denied"] {
        assert!(
            seen_outcomes.contains(outcome),
            "{outcome} never shown: {seen_outcomes:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
