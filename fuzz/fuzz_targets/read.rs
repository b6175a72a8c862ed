//! Arbitrary bytes into `read` and `check`: never a panic, and an answer
//! that reads and conforms renders to JSON that reads back the same.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = ctxgate::Limits::default();
    let Ok(reading) = ctxgate::read(data, &limits) else {
        return;
    };
    let _ = ctxgate::check_bytes(data, &limits);
    if let Some(answer) = &reading.answer {
        let findings = ctxgate::check(answer);
        let conforms = !reading
            .findings
            .iter()
            .chain(&findings)
            .any(ctxgate::Finding::is_error);
        if conforms {
            let json = ctxgate::Format::Json.render(answer);
            let again = ctxgate::read_conforming(json.as_bytes(), &limits)
                .unwrap_or_else(|e| panic!("a conforming answer re-rendered does not read: {e}"));
            assert_eq!(
                ctxgate::Format::Json.render(&again),
                json,
                "render is not a fixed point"
            );
            let _ = ctxgate::Format::Outline.render(answer);
        }
    }
});
