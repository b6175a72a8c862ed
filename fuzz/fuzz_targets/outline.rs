//! Arbitrary answers through the default policy's gate as outlines, with
//! and without a byte budget: each outline reads back, by the grammar of
//! `tests/outline_roundtrip.rs`'s independent reader, to exactly the
//! elements, states, content lines and notices of the JSON rendering of
//! the same trimmed answer, and writes no control, separator or format
//! char raw. The reader and the comparison are that test file's own
//! (included as a module: its proptest cases compile only under `cargo
//! test`).
#![no_main]
#![allow(dead_code, unused_imports)]

use std::sync::OnceLock;

use ctxgate::{Budget, Format, Gate, Request};
use libfuzzer_sys::fuzz_target;

#[path = "../../tests/outline_roundtrip.rs"]
mod roundtrip;

fn gate() -> &'static Gate {
    static GATE: OnceLock<Gate> = OnceLock::new();
    GATE.get_or_init(|| Gate::embedded_default().expect("the default policy compiles"))
}

fuzz_target!(|data: &[u8]| {
    let Some((&knob, bytes)) = data.split_first() else {
        return;
    };
    let gate = gate();
    let budget = 64 + usize::from(knob & 0x7f) * 32;
    for action in ["focus", "app"] {
        for request in [
            Request::new(action).format(Format::Outline),
            Request::new(action)
                .format(Format::Outline)
                .budget(Budget::Bytes(budget)),
        ] {
            let Ok(out) = gate.trim_bytes(bytes, &request) else {
                continue;
            };
            let json = Format::Json.render(&out.answer);
            if let Err(e) = roundtrip::round_trips(&out.rendered, &json) {
                panic!("{action}: the outline does not read back: {e}");
            }
        }
    }
});
