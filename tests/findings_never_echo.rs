//! What the provider writes in the answer's words (a role, the protocol
//! version) never comes back in a finding or an error, through `check`,
//! `trim` and the server alike.

mod common;

use common::{ctxgate, transcript};
use serde_json::json;

const CANARY: &str = "CANARY-r3-5e1b";

/// Answers whose only fault is a provider's word that carries the canary.
fn answers() -> Vec<serde_json::Value> {
    vec![
        json!({"protocol": "0.2.0", "instance": "x",
               "root": {"id": "a", "role": CANARY, "title": "t"}}),
        json!({"protocol": "0.2.0", "instance": "x",
               "root": {"id": "a", "role": format!("Window{CANARY}"), "title": "t"}}),
        json!({"protocol": CANARY, "instance": "x",
               "root": {"id": "a", "role": "Application", "title": "t"}}),
        json!({"protocol": format!("0.9.{CANARY}"), "instance": "x",
               "root": {"id": "a", "role": "Application", "title": "t"}}),
    ]
}

#[test]
fn a_providers_role_or_version_is_never_echoed_in_a_finding_or_an_error() {
    for answer in answers() {
        let bytes = answer.to_string();
        for args in [
            &["check"][..],
            &["check", "--json"],
            &["trim"],
            &["trim", "--json"],
        ] {
            let out = ctxgate(args, bytes.as_bytes());
            assert!(!out.status.success(), "{args:?} accepted {answer}");
            let text = transcript(&out);
            assert!(!text.contains(CANARY), "{args:?} on {answer}:\n{text}");
            assert!(
                text.contains("role outside the language") || text.contains("not a version"),
                "{args:?}: the finding still says what is wrong:\n{text}"
            );
        }
        let lib = ctxgate::check_bytes(bytes.as_bytes(), &ctxgate::Limits::default());
        let text = format!("{lib:?}");
        assert!(!text.contains(CANARY), "{text}");
    }
}

#[test]
fn a_known_role_and_a_version_shaped_protocol_are_still_named() {
    let out = ctxgate(
        &["check"],
        json!({"protocol": "0.3.0", "instance": "x",
               "root": {"id": "a", "role": "Window", "title": "t"}})
        .to_string()
        .as_bytes(),
    );
    let text = transcript(&out);
    assert!(text.contains("`0.3.0`"), "{text}");
}

#[test]
fn a_childs_unknown_role_is_flagged_without_being_echoed() {
    // A warning, not an error: the answer conforms and the element is read
    // as `Group`. The finding names the place and the nearest word of the
    // language, never the provider's word, whatever its shape.
    for role in [CANARY, "CANARYletters", "Text CANARY", "TextCANARYField"] {
        let bytes = json!({"protocol": "0.2.0", "instance": "x",
               "root": {"id": "a", "role": "Application", "title": "t",
                        "children": [{"id": "c", "role": role, "title": "t"}]}})
        .to_string();
        let canary = "CANARY";
        for args in [&["check"][..], &["check", "--json"]] {
            let out = ctxgate(args, bytes.as_bytes());
            assert!(out.status.success(), "{args:?} refused {bytes}");
            let text = transcript(&out);
            assert!(!text.contains(canary), "{args:?} on {role}:\n{text}");
            assert!(
                text.contains("/root/children/0"),
                "{args:?}: where:\n{text}"
            );
            assert!(text.contains("role outside the role language"), "{text}");
        }
        let out = ctxgate(&["trim"], bytes.as_bytes());
        assert!(out.status.success(), "trim refused {bytes}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains(canary),
            "trim's stderr on {role}:\n{stderr}"
        );
        let lib = ctxgate::check_bytes(bytes.as_bytes(), &ctxgate::Limits::default());
        assert!(!format!("{lib:?}").contains(canary), "{lib:?}");
    }
}
