//! The harness `tests::policy_rvm` and `tests::canonical` share: every
//! policy set of the test suites × the real fixture trees (or generated
//! projections) × every action, each decided by two evaluators of two
//! `Policy`s loaded alike (so neither reads the other's decision cache)
//! through one comparing decider ([`Pair`]) that fails the test when they
//! differ. What differs between the suites is how the second evaluator
//! decides (`Evaluator::interpreted`: the interpreter alone;
//! `Evaluator::exact`: keyed by the whole projection) and what each checks
//! after a request or a policy set.

use std::sync::Arc;

use super::policy_rvm::{load, policy_sets, root, same};
use crate::model::Answer;
use crate::policy::{Decision, ElementInput, Evaluator, Policy, RequestInput, ACTIONS};
use crate::trim::{Decider, Trimmed};
use crate::{Limits, Request};

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
            let request = super::policy_rvm::request(action);
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
