//! Policy evaluation alone: every element's projection decided by the
//! default policy and by a policy of 50 more rules (generated below), with
//! the caches cold (a freshly loaded policy: one regorus evaluation per
//! rule per distinct projection) and warm (every decision cached by an
//! earlier request, as in a host that keeps its `Gate`); and end to end
//! with the 50-rule policy.
//!
//! `cargo bench --bench policy`

mod common;

use std::fmt::Write;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use ctxgate::internals::{ElementInput, RequestInput};
use ctxgate::{Action, Answer, Budget, Gate, Policy, Request};

const DEFAULT: &str = include_str!("../policies/default.rego");

/// 50 rules of the kinds policies hold: subroles to deny, attributes and
/// title patterns to mask, ancestors to prune, roles to keep.
fn fifty_rules() -> String {
    let mut rego = String::from("package ctxgate\n\n");
    for i in 0..50 {
        let _ = match i % 5 {
            0 => writeln!(
                rego,
                "deny contains \"private-{i}\" if {{\n\tinput.element.subrole == \"private-{i}\"\n}}\n"
            ),
            1 => writeln!(
                rego,
                "mask contains \"attribute-{i}\" if {{\n\tinput.element.role == \"Text\"\n\t\"secret-{i}\" in input.element.attribute_names\n}}\n"
            ),
            2 => writeln!(
                rego,
                "prune contains \"archive-{i}\" if {{\n\tsome a in input.inside\n\ta.subrole == \"archive-{i}\"\n}}\n"
            ),
            3 => writeln!(
                rego,
                "keep contains \"pinned-{i}\" if {{\n\tinput.element.role in {{\"Row\", \"Cell\"}}\n\tinput.element.subrole == \"pinned-{i}\"\n\tinput.action.name != \"selection\"\n}}\n"
            ),
            _ => writeln!(
                rego,
                "deny contains \"hidden-window-{i}\" if {{\n\tinput.element.role == \"Window\"\n\tnot input.element.visible\n\tinput.element.subrole == \"vault-{i}\"\n}}\n"
            ),
        };
    }
    rego
}

fn fifty_rule_policy() -> Policy {
    Policy::from_sources(vec![
        ("policies/default.rego".into(), DEFAULT.into()),
        ("fifty.rego".into(), fifty_rules()),
    ])
    .expect("the 50-rule policy loads")
}

fn request_input(answer: &Answer) -> RequestInput {
    RequestInput {
        action: Action {
            name: "focus".into(),
            target: None,
        },
        instance: answer.instance.clone(),
        protocol: answer.protocol.clone(),
    }
}

fn decide_all(policy: &Policy, request: &RequestInput, inputs: &[ElementInput<'_>]) -> usize {
    let mut evaluator = ctxgate::internals::evaluator(policy, request).expect("a plan");
    for input in inputs {
        evaluator.decide(input).expect("a decision");
    }
    evaluator.evaluations()
}

/// Loads a policy afresh: empty caches.
type LoadPolicy = fn() -> Policy;

fn policy(c: &mut Criterion) {
    let policies: [(&str, LoadPolicy); 2] = [
        ("default", || Policy::embedded_default().expect("loads")),
        ("default + 50 rules", fifty_rule_policy),
    ];
    for n in [1_000, 10_000, 100_000] {
        let answer = ctxgate::synth::synth(n, common::SEED);
        let request = request_input(&answer);
        let mut group = c.benchmark_group(format!("policy/{n}"));
        group.throughput(Throughput::Elements(n as u64));
        for (name, load) in policies {
            let warm = load();
            let plan = ctxgate::internals::plan(&warm, &request).expect("a plan");
            // The projections trimming asks about: the trimmer's own.
            ctxgate::internals::with_projections(&answer, &plan, |inputs| {
                let cold_evaluations = decide_all(&warm, &request, inputs);
                assert!(cold_evaluations > 0);
                assert_eq!(decide_all(&warm, &request, inputs), 0, "warm: all cached");
                group.bench_function(format!("{name}, cold"), |b| {
                    b.iter_batched(
                        load,
                        |fresh| decide_all(&fresh, &request, inputs),
                        BatchSize::PerIteration,
                    )
                });
                group.bench_function(format!("{name}, cached"), |b| {
                    b.iter(|| decide_all(&warm, &request, inputs))
                });
            });
        }
        let bytes = ctxgate::Format::Json.render(&answer).into_bytes();
        let gate = Gate::new(fifty_rule_policy());
        let trim = Request::new("focus").budget(Budget::Tokens(8_000));
        gate.trim_bytes(&bytes, &trim).expect("trims");
        group.bench_function("end to end, default + 50 rules, focus, 8000 tokens", |b| {
            b.iter(|| gate.trim_bytes(&bytes, &trim).unwrap())
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = common::criterion();
    targets = policy
}
criterion_main!(benches);
