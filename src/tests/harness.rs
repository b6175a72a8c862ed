//! The harness of `tests::canonical`: every policy set of the test suites
//! × the real fixture trees (or generated projections) × every action, each
//! decided by two evaluators of two `Policy`s loaded alike (so neither reads
//! the other's decision cache) through one comparing decider ([`Pair`])
//! that fails the test when they differ. The second evaluator is made from
//! a plain one ([`Second`]: `Evaluator::exact`, the interpreter keyed by
//! the whole projection); each test checks its own after a request or a
//! policy set.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::model::Answer;
use crate::policy::{
    Action, Decision, ElementInput, Evaluator, Inside, Policy, RequestInput, ACTIONS,
};
use crate::trim::{Decider, Trimmed};
use crate::{Limits, Request, Role};

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

pub(super) fn source(path: &Path) -> (String, String) {
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
    // it (answering from its table); `default` is the same bytes loaded as
    // any file.
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
    // A short limit: the runaway policy fails on both sides, and quickly.
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
pub(super) fn generated<'v>(
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

/// Inline policy sets of [`policy_sets`], each with whether its reads are
/// spelled out in its tokens (`engine::spelled_out`): then it is keyed and
/// memoised by what it reads; else by the whole projection.
pub(super) const INLINE: [(&str, bool); 14] = [
    // Conflicting values: an error in the interpreter.
    ("priority := 1 if input.element.focused\n\npriority := 2 if input.element.selected", false),
    // A builtin given the wrong type: the same.
    ("priority := to_number(\"x\") if input.element.role == \"Image\"", false),
    ("deny contains \"d\" if lower(input.element.attributes.private) == \"x\"", false),
    ("deny contains \"d\" if count(input.element.attributes) > 1", false),
    ("deny contains \"d\" if { some v in input.element.attributes.likes; v == 1 }", false),
    ("priority := 10 / count(input.inside)", false),
    ("prune contains \"p\" if { print(\"x\"); input.element.hovered }", false),
    ("priority := p if { p := count(input.inside) }", false),
    // Forms the check does not know, refused whether or not they could fail.
    ("deny contains \"d\" if input[\"element\"].role == \"Text\"", false),
    ("deny contains \"d\" if input.inside[1.5].role == \"Text\"", false),
    // Inside the part: constants, comparisons, `in`, string builtins of
    // strings, `count` of arrays, helpers defined twice as `true`.
    ("mask contains \"m\" if {\n\tsome w in {\"chat\", \"private\"}\n\tcontains(lower(input.element.subrole), w)\n}", true),
    ("keep contains \"k\" if near\n\nnear if input.element.focused\n\nnear if count(input.inside) < 3\n\npriority := 5 if near else := -5", true),
    ("prune contains \"p\" if {\n\tnot input.element.visible\n\tinput.inside[_].role in {\"Window\", \"Page\"}\n}\n\nstrip contains \"likes\" if \"likes\" in input.element.attribute_names", true),
    ("deny contains \"d\" if input.element.attributes.private == true\n\nelement_attributes contains \"private\"", true),
];

/// How the second evaluator of a [`Pair`] is made from a plain one.
pub(super) type Second = for<'p> fn(Evaluator<'p>) -> Evaluator<'p>;

/// A policy set's files (none: the embedded default).
pub(super) type Files = [(String, String)];
/// What [`on_trees`] calls after each policy set: its files, then its two
/// policies.
pub(super) type SetDone<'c> = dyn FnMut(&Files, &Policy, &Policy) + 'c;
/// What [`on_projections`] calls after each action: the set's name, its
/// files, the first policy and the pair.
pub(super) type ActionDone<'c> = dyn FnMut(&str, &Files, &Policy, &Pair<'_>) + 'c;

/// A decider that asks both evaluators, fails the test when they differ,
/// and answers with the first's decision.
pub(super) struct Pair<'p> {
    pub(super) first: Evaluator<'p>,
    pub(super) second: Evaluator<'p>,
    pub(super) compared: usize,
    pub(super) label: String,
}

impl Decider for Pair<'_> {
    fn decide(&mut self, element: &ElementInput<'_>) -> crate::Result<Arc<Decision>> {
        let first = Decider::decide(&mut self.first, element);
        let second = Decider::decide(&mut self.second, element);
        same(&format!("{}: {element:?}", self.label), &first, &second);
        self.compared += 1;
        first
    }
    fn evaluations(&self) -> usize {
        self.first.evaluations()
    }
}

/// The real trees of `tests/fixtures/answers`, sorted by name.
pub(super) fn fixture_trees() -> Vec<(String, Vec<u8>)> {
    let mut trees = Vec::new();
    for entry in std::fs::read_dir(root().join("tests/fixtures/answers")).unwrap() {
        let path = entry.unwrap().path();
        trees.push((path.display().to_string(), std::fs::read(&path).unwrap()));
    }
    trees.sort();
    assert!(trees.len() >= 9);
    trees
}

/// One trimmed request of [`on_trees`], for the suite's own checks.
pub(super) struct Case<'a, 'p> {
    pub(super) pair: &'a Pair<'p>,
    pub(super) out: &'a crate::Result<Trimmed<'a>>,
    pub(super) answer: &'a Answer<'a>,
    pub(super) request: &'a Request,
    pub(super) input: &'a RequestInput,
    pub(super) title: Option<&'a str>,
    /// The second evaluator's policy.
    pub(super) second: &'p Policy,
}

/// Every policy set ([`policy_sets`], not layered) × `trees` × every action,
/// trimmed through a [`Pair`]; `case` sees each request, `set` each policy
/// set's two policies after its requests. The projections compared.
pub(super) fn on_trees(
    trees: &[(String, Vec<u8>)],
    budget: Option<crate::Budget>,
    second: Second,
    case: &mut dyn FnMut(&Case<'_, '_>),
    set: &mut SetDone<'_>,
) -> usize {
    let mut compared = 0;
    for (name, files) in policy_sets(false) {
        let (Some(a), Some(b)) = (load(&files), load(&files)) else {
            continue;
        };
        for (tree, bytes) in trees {
            let answer = crate::read_conforming(bytes, &Limits::default()).unwrap();
            for action in ACTIONS {
                let mut request = Request::new(action);
                if let Some(budget) = budget {
                    request = request.budget(budget);
                }
                let input = crate::trim::request_input(&answer, &request);
                let title = answer.root.title.as_deref();
                let (Ok(first), Ok(other)) = (
                    a.evaluator_with_title(&input, title),
                    b.evaluator_with_title(&input, title),
                ) else {
                    continue;
                };
                let plan = first.plan().clone();
                let mut pair = Pair {
                    first,
                    second: second(other),
                    compared: 0,
                    label: format!("{name} / {tree} / {action}"),
                };
                let out = crate::trim::trim_with(
                    &answer,
                    &request,
                    &plan,
                    &mut pair,
                    a.hash(),
                    &Limits::default(),
                );
                case(&Case {
                    pair: &pair,
                    out: &out,
                    answer: &answer,
                    request: &request,
                    input: &input,
                    title,
                    second: &b,
                });
                compared += pair.compared;
            }
        }
        set(&files, &a, &b);
    }
    compared
}

/// Every policy set ([`policy_sets`], layered too) × `actions` × each of
/// `projections`, decided through a [`Pair`]; `done` sees each action's
/// pair after its projections. The projections compared.
pub(super) fn on_projections(
    projections: &[ElementInput<'_>],
    actions: &[&str],
    second: Second,
    done: &mut ActionDone<'_>,
) -> usize {
    let mut compared = 0;
    for (name, files) in policy_sets(true) {
        let (Some(a), Some(b)) = (load(&files), load(&files)) else {
            continue;
        };
        for &action in actions {
            let request = request(action);
            let (Ok(first), Ok(other)) = (a.evaluator(&request), b.evaluator(&request)) else {
                continue;
            };
            let mut pair = Pair {
                first,
                second: second(other),
                compared: 0,
                label: format!("{name} / {action}"),
            };
            for p in projections {
                Decider::decide(&mut pair, p).ok();
            }
            compared += pair.compared;
            done(&name, &files, &a, &pair);
        }
    }
    compared
}
