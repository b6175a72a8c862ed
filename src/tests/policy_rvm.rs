//! The two ways a projection is decided give the same decisions: the RVM
//! fast path (`Evaluator::evaluate_rvm`, falling back to the interpreter on
//! any VM error) against the interpreter alone (`Evaluator::interpreted`,
//! the path every decision took before), over the real fixture trees ×
//! every action, every policy in `tests/` and the Python binding's tests
//! (alone, by folder, and layered on the default), and generated
//! projections. Each side has its own `Policy`, so neither reads the
//! other's decision cache.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::harness::{fixture_trees, on_projections, on_trees};
use crate::policy::{Action, Decision, ElementInput, Inside, Policy, RequestInput, ACTIONS};
use crate::trim::Decider;
use crate::Role;

pub(super) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rego_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rego_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rego") {
            out.push(path);
        }
    }
}

fn source(path: &Path) -> (String, String) {
    (
        path.display().to_string(),
        std::fs::read_to_string(path).unwrap(),
    )
}

/// Every policy set of the test suites that loads: each file alone, each
/// folder's files together, and each file layered on the default.
pub(super) fn policy_sets(layered: bool) -> Vec<(String, Vec<(String, String)>)> {
    let default = source(&root().join("policies/default.rego"));
    let mut files = Vec::new();
    for dir in ["tests", "bindings/python/tests/policies", "benches"] {
        rego_files(&root().join(dir), &mut files);
    }
    // No files: the embedded default, as `Policy::embedded_default` loads
    // it (its program deserialized, its plan on the VM); `default` is the
    // same bytes loaded as any file.
    let mut sets = vec![
        ("embedded default".to_string(), Vec::new()),
        ("default".to_string(), vec![default.clone()]),
    ];
    for (body, _) in INLINE {
        let file = ("p.rego".to_string(), format!("package ctxgate\n\n{body}\n"));
        sets.push((body.to_string(), vec![file.clone()]));
        if layered {
            sets.push((format!("default + {body}"), vec![default.clone(), file]));
        }
    }
    let mut folders: std::collections::BTreeMap<PathBuf, Vec<(String, String)>> =
        Default::default();
    for path in &files {
        let file = source(path);
        sets.push((file.0.clone(), vec![file.clone()]));
        if layered {
            sets.push((
                format!("default + {}", file.0),
                vec![default.clone(), file.clone()],
            ));
        }
        folders
            .entry(path.parent().unwrap().to_path_buf())
            .or_default()
            .push(file);
    }
    for (dir, files) in folders {
        if files.len() > 1 {
            sets.push((dir.display().to_string(), files));
        }
    }
    sets
}

/// A policy set of [`policy_sets`]: no files is the embedded default.
pub(super) fn load(files: &[(String, String)]) -> Option<Policy> {
    let policy = match files {
        [] => Policy::embedded_default(),
        files => Policy::from_sources(files.to_vec()),
    };
    // A short limit: the runaway policy fails in both paths, and quickly.
    policy
        .ok()
        .map(|p| p.with_time_limit(std::time::Duration::from_millis(200)))
}

pub(super) fn same(
    label: &str,
    fast: &crate::Result<Arc<Decision>>,
    reference: &crate::Result<Arc<Decision>>,
) {
    match (fast, reference) {
        (Ok(a), Ok(b)) => assert_eq!(**a, **b, "{label}"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{label}"),
        _ => panic!("{label}: {fast:?} against {reference:?}"),
    }
}

pub(super) fn request(action: &str) -> RequestInput {
    RequestInput {
        action: Action {
            name: action.to_string(),
            target: None,
        },
        instance: "probe".to_string(),
        protocol: "0.2.0".to_string(),
    }
}

#[test]
fn the_rvm_path_decides_every_fixture_tree_as_the_interpreter_does() {
    let trees = fixture_trees();
    let on_rvm = std::cell::Cell::new(0);
    let compared = on_trees(
        &trees,
        None,
        |b| b.interpreted(),
        &mut |case| {
            let pair = case.pair;
            // The VM runs a rule only for what no other projection of
            // the request gave it already (the per-rule memo): never more
            // than the interpreter's one per rule per projection.
            assert!(
                pair.first.evaluations() <= pair.second.evaluations(),
                "{}",
                pair.label
            );
            if case.out.is_ok() {
                assert!(pair.compared > 0, "{}", pair.label);
            }
        },
        &mut |files, fast, reference| {
            on_rvm.set(on_rvm.get() + usize::from(fast.uses_rvm()));
            if files.is_empty() {
                // The embedded default decided every tree on its loaded
                // program without compiling the interpreter; its reference
                // compiled it on first need.
                assert!(fast.loaded_program() && !fast.interpreter_built());
                assert!(reference.interpreter_built());
            }
        },
    );
    let on_rvm = on_rvm.get();
    println!("{compared} projections compared; {on_rvm} policy sets on the RVM");
    assert!(on_rvm >= 8, "{on_rvm}");
    assert!(compared > 10_000, "{compared}");
}

/// A small deterministic generator (xorshift), so a failure reproduces.
pub(super) struct Gen(pub(super) u64);

impl Gen {
    pub(super) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub(super) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.next() as usize % items.len()]
    }
    pub(super) fn flag(&mut self) -> bool {
        self.next() % 3 == 0
    }
}

pub(super) const SUBROLES: [Option<&str>; 7] = [
    None,
    Some("AXSecureTextField"),
    Some("chat"),
    Some("private"),
    Some("pane"),
    Some("comment"),
    Some("search"),
];
pub(super) const NAMES: [&str; 6] = ["author", "likes", "private", "sent", "url", "AXValue"];
pub(super) const MATCHES: [&str; 5] = ["password", "passcode", "pin", "one-time-code", "other"];

/// A projection of random fields under `inside`, its attributes' values
/// drawn from `values`.
fn generated<'v>(
    gen: &mut Gen,
    values: &'v [serde_json::Value],
    inside: Inside<'static>,
) -> ElementInput<'v> {
    let mut names: Vec<&str> = (0..gen.next() % 3).map(|_| *gen.pick(&NAMES)).collect();
    names.dedup();
    ElementInput {
        role: *gen.pick(&Role::ALL),
        subrole: *gen.pick(&SUBROLES),
        selected: gen.flag(),
        focused: gen.flag(),
        visible: !gen.flag(),
        hovered: gen.flag(),
        has_title: gen.flag(),
        has_content: gen.flag(),
        contains_selection: gen.flag(),
        attributes: names
            .iter()
            .map(|n| (*n, &values[gen.next() as usize % values.len()]))
            .collect(),
        attribute_names: names,
        // Up to two names: in the plan's order, out of it, or twice.
        title_matches: (0..gen.next() % 3).map(|_| *gen.pick(&MATCHES)).collect(),
        inside,
        secure_elsewhere: false,
    }
}

#[test]
fn the_rvm_path_decides_generated_projections_as_the_interpreter_does() {
    let values = [
        serde_json::json!(true),
        serde_json::json!("Ada"),
        serde_json::json!(3),
        serde_json::json!({"a": [1, null]}),
    ];
    let mut gen = Gen(0x9E37_79B9_7F4A_7C15);
    let mut projections = Vec::new();
    for _ in 0..super::cases(250, 60) {
        let inside: Inside<'static> = (0..gen.next() % 9)
            .map(|_| (*gen.pick(&Role::ALL), *gen.pick(&SUBROLES)))
            .collect();
        projections.push(generated(&mut gen, &values, inside));
    }
    let mut on_rvm = std::collections::BTreeSet::new();
    let actions: Vec<&str> = ACTIONS.into_iter().chain(["unknown"]).collect();
    let compared = on_projections(
        &projections,
        &actions,
        |b| b.interpreted(),
        &mut |name, _, fast, pair| {
            if fast.uses_rvm() {
                on_rvm.insert(name.to_string());
            }
            // The VM runs a rule only for what no other projection of
            // the request gave it already (the per-rule memo): never more
            // than the interpreter's one per rule per projection.
            assert!(
                pair.first.evaluations() <= pair.second.evaluations(),
                "{}",
                pair.label
            );
        },
    );
    let on_rvm = on_rvm.len();
    println!("{compared} generated projections compared; {on_rvm} policy sets on the RVM");
    assert!(on_rvm >= 8, "{on_rvm}");
    assert!(compared > 10_000, "{compared}");
}

/// Policies outside the part of Rego where the RVM and the interpreter
/// agree (`rvm_subset`) are interpreted throughout; inside it, the RVM
/// decides. Each is compared on generated projections like the files.
const INLINE: [(&str, bool); 14] = [
    // Conflicting values: an error in the interpreter, none in the RVM.
    ("priority := 1 if input.element.focused\n\npriority := 2 if input.element.selected", false),
    // A builtin given the wrong type: the same.
    ("priority := to_number(\"x\") if input.element.role == \"Image\"", false),
    ("deny contains \"d\" if lower(input.element.attributes.private) == \"x\"", false),
    ("deny contains \"d\" if count(input.element.attributes) > 1", false),
    ("deny contains \"d\" if { some v in input.element.attributes.likes; v == 1 }", false),
    ("priority := 10 / count(input.inside)", false),
    ("prune contains \"p\" if { print(\"x\"); input.element.hovered }", false),
    ("priority := p if { p := count(input.inside) }", false),
    // Forms it does not know, refused whether or not they could fail.
    ("deny contains \"d\" if input[\"element\"].role == \"Text\"", false),
    ("deny contains \"d\" if input.inside[1.5].role == \"Text\"", false),
    // Inside the part: constants, comparisons, `in`, string builtins of
    // strings, `count` of arrays, helpers defined twice as `true`.
    ("mask contains \"m\" if {\n\tsome w in {\"chat\", \"private\"}\n\tcontains(lower(input.element.subrole), w)\n}", true),
    ("keep contains \"k\" if near\n\nnear if input.element.focused\n\nnear if count(input.inside) < 3\n\npriority := 5 if near else := -5", true),
    ("prune contains \"p\" if {\n\tnot input.element.visible\n\tinput.inside[_].role in {\"Window\", \"Page\"}\n}\n\nstrip contains \"likes\" if \"likes\" in input.element.attribute_names", true),
    ("deny contains \"d\" if input.element.attributes.private == true\n\nelement_attributes contains \"private\"", true),
];

#[test]
fn only_policies_where_the_two_cannot_disagree_run_on_the_rvm() {
    assert!(Policy::embedded_default().unwrap().uses_rvm());
    for (body, on_rvm) in INLINE {
        let files = vec![("p.rego".to_string(), format!("package ctxgate\n\n{body}\n"))];
        // Without the lint, whose probes may already fail some of these.
        let (policy, _) = Policy::unchecked(files).unwrap_or_else(|e| panic!("{body}: {e}"));
        assert_eq!(policy.uses_rvm(), on_rvm, "{body}");
    }
}

/// Where the RVM is not used, a request sees the interpreter's errors, with
/// the rule and its place in the file.
#[test]
fn a_policy_the_rvm_would_get_wrong_fails_with_the_interpreters_error() {
    let policy = Policy::from_sources(vec![(
        "f.rego".into(),
        "package ctxgate\n\nmask contains \"m\" if input.element.role == \"Text\"\n\npriority := 1 if input.element.focused\n\npriority := 2 if input.element.selected\n".into(),
    )])
    .unwrap();
    assert!(!policy.uses_rvm());
    let mut element = ElementInput {
        role: Role::Text,
        subrole: None,
        selected: true,
        focused: true,
        visible: true,
        hovered: false,
        has_title: false,
        has_content: false,
        contains_selection: false,
        attribute_names: vec![],
        attributes: vec![],
        title_matches: vec![],
        inside: Inside::new(),
        secure_elsewhere: false,
    };
    let mut evaluator = policy.evaluator(&request("app")).unwrap();
    let message = Decider::decide(&mut evaluator, &element)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("priority") && message.contains("f.rego:7:1"),
        "{message}"
    );
    element.selected = false;
    let got = Decider::decide(&mut evaluator, &element).unwrap();
    assert_eq!(got.priority, 1.0);
    assert_eq!(got.mask, vec![Arc::<str>::from("m")]);
}

/// The embedded default's plan, on the VM, is the interpreter's, for every
/// action (and one it does not know), with and without a target, and the
/// same as the default's bytes loaded as a file (compiled, planned by the
/// interpreter) give; the plan needs no interpreter.
#[test]
fn the_embedded_defaults_plan_on_the_rvm_is_the_interpreters() {
    let embedded = Policy::embedded_default().unwrap();
    let file = load(&[source(&root().join("policies/default.rego"))]).unwrap();
    let mut requests = Vec::new();
    for action in ACTIONS.into_iter().chain(["unknown", "", "Focus"]) {
        for target in [None, Some("e1")] {
            let mut input = request(action);
            input.action.target = target.map(str::to_string);
            requests.push(input.clone());
            input.instance = "other".to_string();
            input.protocol = "9.9.9".to_string();
            requests.push(input);
        }
    }
    let plans: Vec<String> = requests
        .iter()
        .map(|input| format!("{:?}", embedded.plan(input).unwrap()))
        .collect();
    assert!(!embedded.interpreter_built());
    for (input, plan) in requests.iter().zip(&plans) {
        let interpreted = format!("{:?}", embedded.plan_through_interpreter(input).unwrap());
        assert_eq!(*plan, interpreted, "{input:?}");
        assert_eq!(
            *plan,
            format!("{:?}", file.plan(input).unwrap()),
            "{input:?}"
        );
        assert_eq!(
            *plan,
            format!("{:?}", file.plan_through_interpreter(input).unwrap()),
            "{input:?}"
        );
    }
    assert!(embedded.interpreter_built());
    // Every plan rule is defined and on the VM.
    assert!(embedded.plans_on_rvm() && !file.plans_on_rvm());
}

/// The deserialized program decides as a fresh compile of the same bytes
/// does (both on the VM), on generated projections × every action.
#[test]
fn the_loaded_program_decides_as_a_fresh_compile() {
    let embedded = load(&[]).unwrap();
    let compiled = load(&[source(&root().join("policies/default.rego"))]).unwrap();
    assert!(embedded.loaded_program() && !compiled.loaded_program());
    assert!(compiled.uses_rvm());
    let values = [serde_json::json!("Ada"), serde_json::json!(3)];
    let mut gen = Gen(0x5DEE_CE66_D1CE_4E5B);
    let mut compared = 0;
    for action in ACTIONS.into_iter().chain(["unknown"]) {
        let mut a = embedded.evaluator(&request(action)).unwrap();
        let mut b = compiled.evaluator(&request(action)).unwrap();
        for _ in 0..300 {
            let inside = (0..gen.next() % 5)
                .map(|_| (*gen.pick(&Role::ALL), *gen.pick(&SUBROLES)))
                .collect();
            let p = generated(&mut gen, &values, inside);
            same(
                &format!("{action}: {p:?}"),
                &Decider::decide(&mut a, &p),
                &Decider::decide(&mut b, &p),
            );
            compared += 1;
        }
        assert_eq!(a.evaluations(), b.evaluations(), "{action}");
    }
    assert!(!embedded.interpreter_built());
    assert_eq!(compared, 300 * (ACTIONS.len() + 1));
}

/// Every trim of a fixture tree under the default, each action: where no
/// element has attributes (which `strip` reads, and the table does not
/// enumerate), the table decides the whole request, so no program is
/// loaded and nothing compiled; the decisions are the VM's (`tests::
/// canonical` and `tests::policy_rvm` compare every one). Where one has
/// attributes, the program is loaded for that rule alone.
#[test]
fn a_request_the_table_holds_loads_no_program() {
    use crate::trim::{request_input, trim_with};
    use crate::{Limits, Request};
    let dir = root().join("tests/fixtures/answers");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    let (mut alone, mut loaded) = (0, 0);
    for path in paths {
        let bytes = std::fs::read(&path).unwrap();
        let answer = crate::read_conforming(&bytes, &Limits::default()).unwrap();
        let mut attributes = false;
        let mut stack = vec![&answer.root];
        while let Some(e) = stack.pop() {
            attributes |= !e.attributes.is_empty();
            stack.extend(e.children.iter());
        }
        for action in ACTIONS {
            let policy = Policy::embedded_default().unwrap();
            let request = Request::new(action);
            let input = request_input(&answer, &request);
            let mut evaluator = policy
                .evaluator_with_title(&input, answer.root.title.as_deref())
                .unwrap();
            let plan = evaluator.plan().clone();
            let out = trim_with(
                &answer,
                &request,
                &plan,
                &mut evaluator,
                policy.hash(),
                &Limits::default(),
            );
            out.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(evaluator.evaluations() > 0);
            assert!(!policy.interpreter_built());
            assert_eq!(
                policy.program_in_memory(),
                attributes,
                "{} / {action}",
                path.display()
            );
            match attributes {
                false => alone += 1,
                true => loaded += 1,
            }
        }
    }
    assert!(
        alone >= 7 * ACTIONS.len() && loaded >= ACTIONS.len(),
        "{alone} {loaded}"
    );
}
