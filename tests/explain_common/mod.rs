//! The planted tree the explain tests share: the real
//! `tests/fixtures/answers/atspi-input-types.json` (Chromium's input-types
//! page read through AT-SPI; tests/fixtures/SOURCES.md) with canaries
//! where `tests/policies/explain/` over the default policy withholds them
//! (a denied element and its descendants, a masked one and its
//! descendants, the tree's real secure field, secrets the redaction
//! patterns replace), markup in a sent title and text, and a control word
//! in a sent title.

#![allow(dead_code)]

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::common::root;

pub const CANARY: &str = "CANARYQX";
pub const CONTROL: &str = "CONTROLWORDQX";

/// The JSON pointer of every element of an answer, by id (a stack, not
/// recursion).
pub fn pointers(answer: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![("/root".to_string(), &answer["root"])];
    while let Some((at, element)) = stack.pop() {
        out.insert(element["id"].as_str().unwrap().to_string(), at.clone());
        if let Some(children) = element["children"].as_array() {
            for (i, child) in children.iter().enumerate() {
                stack.push((format!("{at}/children/{i}"), child));
            }
        }
    }
    out
}

fn el<'v>(answer: &'v mut Value, at: &BTreeMap<String, String>, id: &str) -> &'v mut Value {
    answer.pointer_mut(&at[id]).unwrap()
}

/// The fixture with canaries where the policy withholds them, the control
/// word and markup where it sends them. Returns the answer and every
/// canary planted.
pub fn planted() -> (Value, Vec<String>) {
    let path = root().join("tests/fixtures/answers/atspi-input-types.json");
    let mut answer: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let mut canaries = Vec::new();
    {
        let at = pointers(&answer);
        let answer = &mut answer;
        let mut word = |place: &str| {
            let w = format!("{CANARY}{}", place.to_uppercase());
            canaries.push(w.clone());
            w
        };
        // The real secure field (the floor masks it).
        assert_eq!(el(answer, &at, "n30")["subrole"], "secure");
        let (t, c) = (word("secureTitle"), word("secureText"));
        el(answer, &at, "n30")["title"] = json!(t);
        el(answer, &at, "n30")["content"] = json!([{"type": "text", "text": c}]);
        // Denied, with its descendants.
        el(answer, &at, "n5")["subrole"] = json!("deny-canary");
        for id in ["n5", "n6", "n7"] {
            let (t, c) = (
                word(&format!("denied{id}")),
                word(&format!("deniedText{id}")),
            );
            el(answer, &at, id)["title"] = json!(t);
            el(answer, &at, id)["content"] = json!([{"type": "text", "text": c}]);
        }
        // Masked, with its descendants.
        el(answer, &at, "n8")["subrole"] = json!("mask-canary");
        for id in ["n8", "n9", "n10"] {
            let (t, c) = (
                word(&format!("masked{id}")),
                word(&format!("maskedText{id}")),
            );
            el(answer, &at, id)["title"] = json!(t);
            el(answer, &at, id)["content"] = json!([{"type": "text", "text": c}]);
        }
        // Secrets the default policy's patterns replace, in sent elements.
        let github = format!("ghp_{CANARY}abcdefghijklmnopqrstuvwxyz0123");
        let aws = format!("AKIA{CANARY}AB12CD34");
        canaries.push(github.clone());
        canaries.push(aws.clone());
        el(answer, &at, "n13")["content"] =
            json!([{"type": "text", "text": format!("token {github} here")}]);
        el(answer, &at, "n16")["title"] = json!(format!("key {aws}"));
        // Markup in a sent title and text: shown as text, never parsed.
        el(answer, &at, "n19")["title"] = json!(
            "</summary></details><script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">"
        );
        el(answer, &at, "n19")["content"] = json!([{"type": "text", "text": "</pre><li class=\"o-sent\" data-outcome=\"sent\">forged</li>"}]);
        // A word nothing withholds: the page must show it.
        el(answer, &at, "n22")["title"] = json!(CONTROL);
    }
    (answer, canaries)
}
