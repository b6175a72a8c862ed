//! Arbitrary bytes through the default policy's gate, for every action,
//! with small byte budgets: never a panic; what is sent fits the budget,
//! re-reads, conforms, and trimming it again changes nothing.
#![no_main]

use std::sync::OnceLock;

use ctxgate::{Budget, Format, Gate, Request};
use libfuzzer_sys::fuzz_target;

fn gate() -> &'static Gate {
    static GATE: OnceLock<Gate> = OnceLock::new();
    GATE.get_or_init(|| Gate::embedded_default().expect("the default policy compiles"))
}

fuzz_target!(|data: &[u8]| {
    // The first byte picks the budget and format; the rest is the answer.
    let Some((&knob, bytes)) = data.split_first() else {
        return;
    };
    let budget = 64 + usize::from(knob & 0x7f) * 16; // 64..2096 bytes
    let format = if knob & 0x80 != 0 {
        Format::Outline
    } else {
        Format::Json
    };
    let gate = gate();
    for action in ["selection", "focus", "window", "app", "other"] {
        let request = Request::new(action)
            .budget(Budget::Bytes(budget))
            .format(format);
        let Ok(out) = gate.trim_bytes(bytes, &request) else {
            continue;
        };
        assert!(
            out.rendered.len() <= budget,
            "{action}: {} bytes over a budget of {budget}",
            out.rendered.len()
        );
        assert_eq!(out.rendered, format.render(&out.answer));
        let json = Format::Json.render(&out.answer);
        let reread = ctxgate::read_conforming(json.as_bytes(), gate.limits())
            .unwrap_or_else(|e| panic!("{action}: the output does not re-read: {e}"));
        let again = gate
            .trim(&reread, &request)
            .unwrap_or_else(|e| panic!("{action}: trimming the output fails: {e}"));
        assert_eq!(again.rendered, out.rendered, "{action}: not idempotent");
    }
});
