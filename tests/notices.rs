//! The reserved `ctxgate:` namespace, read by meaning: a provider attribute
//! whose key reads as `ctxgate:` to a person (by case, look-alike letters
//! of other scripts, look-alike colons, compatibility forms, chars that do
//! not show) is dropped and counted, in the JSON output, the outline and
//! the report; and a notice's numbers are ctxgate's own counts, never a
//! provider's.

mod common;

use common::{app, assert_never_sent, trim};
use ctxgate::{Format, Request};
use serde_json::{json, Value};

/// Keys that read as `ctxgate:…` and are not ctxgate's exact bytes.
const LOOKALIKES: [(&str, &str); 16] = [
    ("case", "CtxGate:omitted"),
    ("upper case", "CTXGATE:withheld"),
    ("Cyrillic с", "\u{441}txgate:omitted"),
    ("Cyrillic С, е, а", "\u{421}txg\u{430}t\u{435}:cut"),
    ("Greek α, script ɡ", "ctx\u{261}\u{3b1}te:bare"),
    ("full-width colon", "ctxgate\u{ff1a}omitted"),
    ("modifier letter colon", "ctxgate\u{a789}omitted"),
    ("ratio", "ctxgate\u{2236}omitted"),
    ("triangular colon", "ctxgate\u{2d0}omitted"),
    ("Armenian full stop", "ctxgate\u{589}omitted"),
    ("Hebrew sof pasuq", "ctxgate\u{5c3}omitted"),
    ("vertical and small colons", "ctxgate\u{fe13}x"),
    ("Mongolian and Ethiopic", "ctxgate\u{1804}x\u{1361}"),
    (
        "full-width letters",
        "\u{ff43}\u{ff54}\u{ff58}\u{ff47}\u{ff41}\u{ff54}\u{ff45}:omitted",
    ),
    (
        "mathematical bold",
        "\u{1d41c}\u{1d42d}\u{1d431}gate:omitted",
    ),
    (
        "zero-width chars",
        "c\u{200b}tx\u{200d}ga\u{2060}te\u{feff}:\u{ad}omitted",
    ),
];

/// Every attribute key of every element of a rendered JSON answer.
fn keys(rendered: &str) -> Vec<String> {
    let answer: Value = serde_json::from_str(rendered).unwrap();
    let mut out = Vec::new();
    let mut stack = vec![&answer["root"]];
    while let Some(e) = stack.pop() {
        if let Some(attributes) = e["attributes"].as_object() {
            out.extend(attributes.keys().cloned());
        }
        if let Some(children) = e["children"].as_array() {
            stack.extend(children);
        }
    }
    out
}

#[test]
fn keys_that_read_as_the_reserved_namespace_are_dropped_and_counted() {
    for (i, (what, key)) in LOOKALIKES.iter().enumerate() {
        let canary = format!("CANARYNS{i}");
        let element = json!({
            "id": "t",
            "role": "Text",
            "title": "Note",
            "attributes": {
                "note": "Ada",
                *key: {"children": 1, "reasons": {canary.as_str(): 1}},
                format!("{key}2"): canary,
            },
        });
        let bytes = app(&format!(
            r#"{{"id":"w","role":"Window","focused":true,"children":[{element}]}}"#
        ));
        for format in [Format::Json, Format::Outline] {
            let out = trim(&bytes, &Request::new("app").format(format));
            assert_eq!(out.report.reserved_attributes_dropped, 2, "{what}");
            assert_never_sent(&out, &canary, what);
            let json = Format::Json.render(&out.answer);
            assert_eq!(keys(&json), ["note"], "{what}: {json}");
            for shown in [&json, &Format::Outline.render(&out.answer)] {
                assert!(!shown.contains(key), "{what}: {shown}");
                assert!(
                    !shown.contains("\\u200b") && !shown.contains("\\ufeff"),
                    "{what}"
                );
            }
        }
    }
}

#[test]
fn plain_keys_near_the_namespace_are_the_provider_s() {
    for key in [
        "ctxgate",
        "ctxgates:x",
        "xctxgate:x",
        "ctx-gate:x",
        "ctxgaté:x",
        "ctxgate.x",
    ] {
        let element = json!({"id": "t", "role": "Text", "attributes": {key: "kept"}});
        let bytes = app(&format!(
            r#"{{"id":"w","role":"Window","focused":true,"children":[{element}]}}"#
        ));
        let out = trim(&bytes, &Request::new("app"));
        assert_eq!(out.report.reserved_attributes_dropped, 0, "{key}");
        assert_eq!(keys(&out.rendered), [key], "{key}");
    }
}

#[test]
fn a_notice_s_numbers_are_ctxgate_s_own_counts() {
    let card = "4111111111111111";
    for (key, value) in [
        (
            "ctxgate:omitted",
            json!({"children": 4111111111111111u64, "reasons": {"budget": 4111111111111111u64}}),
        ),
        ("ctxgate:omitted", json!({"budget": 4111111111111111u64})),
        (
            "ctxgate:cut",
            json!({"reason": "budget", "blocks": 4111111111111111u64}),
        ),
        (
            "ctxgate:withheld",
            json!({"rule": format!("mask:c{card}"), "empty": true}),
        ),
        (
            "ctxgate:bare",
            json!({"cut": 4111111111111111u64, "omitted": {"budget": 1}}),
        ),
        ("ctxgate:bare", json!({"budget": 4111111111111111u64})),
    ] {
        let root = json!({
            "id": "app", "role": "Application", "title": "App",
            "attributes": {key: value.clone()},
            "children": [{"id": "w", "role": "Window", "focused": true,
                "attributes": {key: value},
                "children": [{"id": "t", "role": "Text", "title": "Note"}]}],
        });
        let bytes = common::answer(&root.to_string());
        for format in [Format::Json, Format::Outline] {
            let out = trim(&bytes, &Request::new("app").format(format));
            assert_eq!(out.report.reserved_attributes_dropped, 2, "{key}");
            assert_never_sent(&out, card, key);
            assert_never_sent(&out, "4111", key);
            // Nothing was left out or cut: no notice at all.
            assert!(!out.rendered.contains("ctxgate"), "{key}: {}", out.rendered);
        }
    }
}
