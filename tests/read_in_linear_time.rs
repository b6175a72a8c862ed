//! The request path reads an answer in time linear in its size, whatever
//! lies deep behind a large prefix (the fast reader, and the two passes it
//! hands a doubt to). Everything goes through `Gate` with the embedded
//! default policy, as a host's request would. SECURITY.md cites these tests
//! by name.

mod common;

use std::time::{Duration, Instant};

use ctxgate::{Limits, Request};

/// An answer whose first child holds `pad` bytes in an attribute value (a
/// clean prefix), then a chain of `depth` Groups down to a Text;
/// the deepest Group carries `extra` (JSON members, `""` for none).
fn padded_chain(pad: usize, depth: usize, extra: &str) -> Vec<u8> {
    let mut out = String::with_capacity(pad + depth * 64 + 256);
    out.push_str(r#"{"protocol":"0.2.0","instance":"h","root":{"id":"app","role":"Application","children":["#);
    out.push_str(r#"{"id":"pad","role":"Group","attributes":{"note":""#);
    out.extend(std::iter::repeat_n('a', pad));
    out.push_str(r#""}},"#);
    for i in 0..depth {
        let extra = if i + 1 == depth { extra } else { "" };
        out.push_str(&format!(
            r#"{{"id":"e{i}","role":"Group"{extra},"children":["#
        ));
    }
    out.push_str(r#"{"id":"leaf","role":"Text","title":"here"}"#);
    for _ in 0..depth {
        out.push_str("]}");
    }
    out.push_str("]}}");
    out.into_bytes()
}

#[test]
fn a_conforming_answer_with_a_warning_deep_behind_a_large_prefix_is_read_in_linear_time() {
    // Before: the fast reader's first doubt handed the answer to the lenient
    // pass in one pass, which stopped at its first finding by returning an
    // error through serde_json; unwinding, serde_json computed a line and
    // column at every level it left, each by scanning the input from its
    // start: 1,000 levels times 200 MB took 37 s (release), past the 5 s
    // deadline, for an answer that conforms. Now a doubt goes straight to
    // the two passes, which make no error of a finding.
    // 4,000 levels (a limit a host may raise) behind 16 MB: 6 s before, in
    // a release build (minutes in a debug one); linear now, a fraction of a
    // second. The margin is wide (30 s, a debug build on a loaded machine):
    // what the test holds is the order of growth, not a speed.
    let depth = 4_000;
    let pad = 16 << 20;
    let limits = Limits {
        max_depth: 5_000,
        ..Limits::default()
    };
    let gate = ctxgate::Gate::embedded_default()
        .expect("the default policy compiles")
        .with_limits(limits);
    let clean = padded_chain(pad, depth, "");
    let request = Request::new("focus").timeout(Duration::from_secs(30));
    let expected = gate
        .trim_bytes(&clean, &request)
        .expect("the clean answer trims")
        .rendered;
    for extra in [
        r#","zz":1"#,
        r#","x-extension":{"a":[1,2,{"b":null}]}"#,
        r#","parentRef":"e0""#,
    ] {
        let bytes = padded_chain(pad, depth, extra);
        let started = Instant::now();
        let trimmed = gate
            .trim_bytes(&bytes, &request)
            .unwrap_or_else(|e| panic!("{extra}: {e} after {:?}", started.elapsed()));
        assert_eq!(trimmed.rendered, expected, "{extra}");
        let started = Instant::now();
        let report = ctxgate::check_bytes(&bytes, &limits).expect("checked");
        assert!(report.conforms, "{extra}");
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{extra}: check took {:?}",
            started.elapsed()
        );
    }
}
