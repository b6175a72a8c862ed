//! Arbitrary policy text: loading never panics, and a policy that loads
//! either trims examples/notes.json within the budget or fails with an
//! error (fail closed), never a panic. Evaluation is bounded by a short
//! time limit so a looping policy costs one slow input, not a hang.
#![no_main]

use std::sync::OnceLock;
use std::time::Duration;

use ctxgate::{Budget, Gate, Policy, Request};
use libfuzzer_sys::fuzz_target;

fn notes() -> &'static [u8] {
    static NOTES: OnceLock<Vec<u8>> = OnceLock::new();
    NOTES.get_or_init(|| {
        std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../examples/notes.json"
        ))
        .expect("examples/notes.json")
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    let files = vec![("fuzz.rego".to_string(), source.to_string())];
    let Ok(policy) = Policy::from_sources(files) else {
        return;
    };
    let gate = Gate::new(policy.with_time_limit(Duration::from_millis(200)));
    for action in ["focus", "app"] {
        let request = Request::new(action).budget(Budget::Bytes(2000));
        if let Ok(out) = gate.trim_bytes(notes(), &request) {
            assert!(out.rendered.len() <= 2000);
            let findings = ctxgate::check(&out.answer);
            assert!(
                findings.iter().all(|f| !f.is_error()),
                "{action}: output does not conform: {findings:?}"
            );
        }
    }
});
