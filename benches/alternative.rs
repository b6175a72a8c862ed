//! The alternative a user would write instead of ctxgate: the default
//! policy and the trimming wholly in Rego (`benches/alternative.rego`),
//! evaluated by regorus's interpreter over the whole tree as input, bytes
//! in and bytes out, against ctxgate doing the same request (the gate
//! kept across requests, as a host keeps it).
//!
//! `cargo bench --bench alternative` (1k and 10k elements only: the Rego
//! takes seconds per evaluation at 10k).

mod common;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const REGO: &str = include_str!("alternative.rego");
/// About 8,000 tokens of JSON.
const BUDGET_BYTES: usize = 32_000;

fn engine() -> regorus::Engine {
    let mut engine = regorus::Engine::new();
    engine
        .add_policy("benches/alternative.rego".into(), REGO.into())
        .expect("the alternative compiles");
    engine
}

/// Bytes in, bytes out, as a host would run it.
fn pure_rego(engine: &regorus::Engine, input: &str) -> String {
    let mut engine = engine.clone();
    engine.set_input_json(input).expect("the input is JSON");
    let output = engine
        .eval_rule("data.alternative.output".into())
        .expect("the alternative evaluates");
    output.to_json_str().expect("the output serializes")
}

fn rego_input(action: &str, answer: &[u8]) -> String {
    format!(
        r#"{{"action":"{action}","budget_bytes":{BUDGET_BYTES},"answer":{}}}"#,
        std::str::from_utf8(answer).unwrap()
    )
}

fn alternative(c: &mut Criterion) {
    let engine = engine();
    let gate = ctxgate::Gate::embedded_default().expect("the default policy loads");
    for n in [1_000, 10_000] {
        let bytes = common::input(n);
        let mut group = c.benchmark_group(format!("alternative/{n}"));
        group.throughput(Throughput::Elements(n as u64));
        for action in ["focus", "window"] {
            let input = rego_input(action, &bytes);
            // What it sends must at least conform, withhold secrets and
            // fit the budget, or the comparison means nothing.
            let out = pure_rego(&engine, &input);
            let answer = ctxgate::read_conforming(out.as_bytes(), &ctxgate::Limits::default())
                .unwrap_or_else(|e| panic!("{action}: the alternative's output: {e}"));
            assert!(ctxgate::Format::Json.render(&answer).len() <= BUDGET_BYTES + 2_000);
            assert!(!out.contains("ghp_") && !out.contains("AKIA"), "{action}");
            group.bench_function(format!("pure rego, {action}"), |b| {
                b.iter(|| pure_rego(&engine, &input))
            });
            let request =
                ctxgate::Request::new(action).budget(ctxgate::Budget::Bytes(BUDGET_BYTES));
            gate.trim_bytes(&bytes, &request).expect("ctxgate trims");
            group.bench_function(format!("ctxgate, {action}"), |b| {
                b.iter(|| gate.trim_bytes(&bytes, &request).unwrap())
            });
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = common::criterion();
    targets = alternative
}
criterion_main!(benches);
