//! Regression tests for what fuzzing and the hostile-input review found,
//! each named after what it reproduces. SECURITY.md lists them.

use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};

use ctxgate::{Gate, Policy, Request};

/// Runs `f` on a thread with a 2 MiB stack, the default for spawned
/// threads (and test threads), so a recursion bug fails the same way on
/// every machine.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(f)
        .unwrap()
        .join()
        .expect("no stack overflow")
}

/// A policy whose rules form one chain `r0 → r1 → … → r{n}`.
fn chained_rules(n: usize) -> String {
    let mut source = String::from("package ctxgate\n\npriority := r0\n\n");
    for i in 0..n {
        let _ = writeln!(source, "r{i} := r{} + 1\n", i + 1);
    }
    let _ = writeln!(source, "r{n} := 0");
    source
}

/// Found by `tests/hostile.rs`: the load-time recursion check
/// (`policy::lint::find_recursion`) walked the rule graph recursively and
/// overflowed the stack on a policy of 3,000 chained rules; with that fixed,
/// regorus's interpreter overflowed the stack evaluating the chain. Either
/// way the process aborted. Now the check is iterative and refuses chains
/// longer than 32 at load, with a message.
#[test]
fn a_policy_of_3000_chained_rules_is_refused_at_load_not_a_stack_overflow() {
    let source = chained_rules(3000);
    let err = on_small_stack(move || {
        Policy::from_sources(vec![("chain.rego".into(), source)])
            .map(|_| ())
            .unwrap_err()
            .to_string()
    });
    assert_eq!(
        err,
        "policy chain.rego:3:1: `priority` starts a chain of 3002 rules and functions, each depending on the next; the limit is 32, as deeper chains can overflow the evaluator's stack"
    );
}

/// The longest chain allowed (32: `priority`, `r0` … `r30`) evaluates on a
/// 2 MiB stack in a debug build; one more is refused.
#[test]
fn the_longest_chain_allowed_evaluates_on_a_small_stack() {
    let err = Policy::from_sources(vec![("chain.rego".into(), chained_rules(31))]).unwrap_err();
    assert!(err.to_string().contains("a chain of 33 rules"), "{err}");
    let source = chained_rules(30);
    let out = on_small_stack(move || {
        let policy = Policy::from_sources(vec![("chain.rego".into(), source)]).unwrap();
        let notes =
            std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/notes.json")).unwrap();
        Gate::new(policy)
            .trim_bytes(&notes, &Request::new("app"))
            .map(|out| out.rendered)
    });
    assert!(out.unwrap().contains("\"sel-4\""));
}

/// The same check still finds a cycle at the end of a long chain.
#[test]
fn recursion_at_the_end_of_a_long_chain_is_still_refused() {
    let mut source = chained_rules(2000);
    source = source.replace("r2000 := 0", "r2000 := r1000");
    let err = on_small_stack(move || {
        Policy::from_sources(vec![("chain.rego".into(), source)])
            .map(|_| ())
            .unwrap_err()
            .to_string()
    });
    assert!(err.starts_with("policy chain.rego:"), "{err}");
    assert!(err.contains("recursion: `r1000` -> `r1001`"), "{err}");
}

/// Found by fuzz target `policy` (artifact crash-daf44483…): a rule head
/// with a dotted name (`de.y contains r`) gave two heads at one token, and
/// the recursion check sliced `tokens[k + 1..k]` and panicked. A policy
/// that regorus rejects or accepts must never panic ctxgate.
#[test]
fn a_dotted_rule_head_does_not_panic_the_recursion_check() {
    let source = "package ctxgate\n\nde.y contains r \n";
    let result = std::panic::catch_unwind(|| {
        Policy::from_sources(vec![("fuzz.rego".into(), source.into())]).map(|_| ())
    });
    let loaded = result.expect("no panic");
    if let Err(e) = loaded {
        assert!(e.to_string().starts_with("policy fuzz.rego"), "{e}");
    }
}

/// Counts live and peak heap bytes, so a test can bound what trimming holds.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        // SAFETY: forwarded as is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as is.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Found by the hostile-input review: the policy's decision caches kept a
/// copy of every ancestor's subrole per distinct element projection, so an
/// 8.5 MB answer (one 8 MB subrole above 2,000 children with distinct
/// subroles) made a release build take 24 GB. The caches now keep a
/// SHA-256 of the ancestors. Here: a 1 MB subrole above 200 distinct
/// children held 400 MB before the fix.
#[test]
fn a_long_subrole_above_many_distinct_children_is_not_copied_per_decision() {
    let mut bytes = br#"{"protocol":"0.2.0","instance":"h","root":{"id":"app","role":"Application","children":[{"id":"w","role":"Window","subrole":""#.to_vec();
    bytes.resize(bytes.len() + 1024 * 1024, b'x');
    bytes.extend_from_slice(br#"","children":["#);
    for i in 0..200 {
        if i > 0 {
            bytes.push(b',');
        }
        let _ = write!(
            Bytes(&mut bytes),
            r#"{{"id":"c{i}","role":"Text","subrole":"s{i}"}}"#
        );
    }
    bytes.extend_from_slice(b"]}]}}");
    // The default policy reads subroles only by its `contains` tests and
    // the ancestors only by their number, so its caches' key holds neither
    // and the 200 children share one decision. This layer reads both
    // whole (`<` is not one of the tests it keys by): 200 distinct keys,
    // each with the ancestors' digest.
    let policy = Policy::from_sources(vec![
        (
            "default.rego".to_string(),
            include_str!("../policies/default.rego").to_string(),
        ),
        (
            "whole.rego".to_string(),
            "package ctxgate\n\ndeny contains \"whole\" if input.element.subrole < \"\"\n\ndeny contains \"whole\" if input.inside[0].subrole == \"never\"\n".to_string(),
        ),
    ])
    .unwrap();
    let gate = Gate::new(policy);
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    // What is measured is memory, not time: a debug build on a loaded
    // machine takes longer than the default 5 s deadline.
    let request = Request::new("app").timeout(std::time::Duration::from_secs(300));
    let out = gate.trim_bytes(&bytes, &request).unwrap();
    let peak = PEAK.load(Ordering::Relaxed) - before;
    assert!(out.report.evaluations >= 200);
    assert!(peak < 100 * 1024 * 1024, "peak {} MB", peak >> 20);
}

/// `write!` into a byte vector.
struct Bytes<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for Bytes<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// Found by the `policy` fuzz target (a 41 s timeout): 66 `[` inserted into
/// the default policy. regorus's parser takes time exponential in `[`
/// nesting, so loading hung; now the source is refused before it is parsed,
/// by `Policy::from_sources` and by `ctxgate policy check` alike.
#[test]
fn a_policy_with_66_nested_brackets_is_refused_at_once() {
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/policies/default.rego"
    ))
    .unwrap();
    let at = source.find("input.element.role == \"Heading\"").unwrap();
    let mutated = format!(
        "{}{}{}",
        &source[..at + 8],
        "[".repeat(66),
        &source[at + 8..]
    );
    // The line of the mutation, wherever the default policy puts it.
    let line = source[..at].matches('\n').count() + 1;
    let err = Policy::from_sources(vec![("fuzzed.rego".into(), mutated.clone())])
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`[` nests deeper than 10 levels of brackets"),
        "{err}"
    );
    // `ctxgate policy check` reports it with its place, as a finding.
    let dir = std::env::temp_dir().join(format!("ctxgate-brackets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("fuzzed.rego");
    std::fs::write(&file, &mutated).unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .args(["policy", "check"])
        .arg(&file)
        .output()
        .expect("ctxgate runs");
    std::fs::remove_dir_all(&dir).unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    let place = format!("fuzzed.rego:{line}:19: error: ");
    assert!(
        stdout
            .lines()
            .any(|l| l.contains(&place) && l.contains("nests deeper than 10 levels")),
        "{stdout}"
    );
}
