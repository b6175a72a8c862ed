//! `strip`, the per-element partial set of attribute names removed from a
//! sent element, through the real policy engine: a stripped
//! attribute's value never reaches the output, the report or the logs (a
//! canary in every stripped value, over generated trees, every action, both
//! formats and budgets that cut); the report names what was stripped, by
//! name, only for elements sent with their attributes; stripping removes,
//! never adds or unmasks; the redaction of what is kept still applies;
//! layers merge their `strip` sets; the default policy decides `author` per
//! action (RFC-0001 section 6).

mod common;

use ctxgate::{Answer, Budget, Content, Element, Format, Gate, Outcome, Policy, Request, Role};
use proptest::prelude::*;
use serde_json::json;

/// Strips `author` and `x-secret` everywhere, and every `x-` attribute the
/// input names; masks `mask-me` rows; redacts AWS key ids.
const STRIPPING: &str = r#"package ctxgate

scope := "app"

strip contains "author"

strip contains "x-secret"

strip contains name if {
	some name in input.element.attribute_names
	startswith(name, "x-")
}

mask contains "masked-row" if input.element.subrole == "mask-me"

keep contains "focus-path" if input.element.focused

redact contains {"id": "aws", "pattern": `AKIA[0-9A-Z]{16}`, "replace": "[aws key]"}
"#;

fn gate(source: &str) -> Gate {
    Gate::new(Policy::from_sources(vec![("strip.rego".into(), source.into())]).unwrap())
}

/// One generated element: its parent among the earlier ones, its role, and
/// which attributes it carries.
#[derive(Debug, Clone)]
struct Spec {
    parent: usize,
    role: usize,
    masked: bool,
    focused: bool,
    selected: bool,
    author: bool,
    x_secret: bool,
    x_other: bool,
    kept: bool,
    text_len: usize,
}

prop_compose! {
    fn spec()(
        parent in any::<usize>(),
        role in 1..13usize,
        masked in prop::bool::weighted(0.15),
        focused in prop::bool::weighted(0.2),
        selected in prop::bool::weighted(0.1),
        author in any::<bool>(),
        x_secret in any::<bool>(),
        x_other in prop::bool::weighted(0.3),
        kept in any::<bool>(),
        text_len in 0..30usize,
    ) -> Spec {
        Spec { parent, role, masked, focused, selected, author, x_secret, x_other, kept, text_len }
    }
}

/// The answer: element `eN` carries `AUTHORnZ`, `XSECRETnZ` and `XOTHERnZ`
/// canaries in the attributes the policy strips, and in the one it keeps
/// (`note`) an AWS key id to redact.
fn build(specs: &[Spec]) -> Answer<'static> {
    let mut elements: Vec<(Element<'static>, Option<usize>)> = Vec::new();
    let mut root = Element::new("e0", Role::Application);
    root.title = Some("App".into());
    elements.push((root, None));
    let mut focused_path = vec![true];
    let mut focused_child = vec![false];
    for (i, s) in specs.iter().enumerate() {
        let id = i + 1;
        let parent = s.parent % id;
        let role = if parent == 0 {
            Role::Window
        } else {
            Role::ALL[s.role]
        };
        let mut e = Element::new(format!("e{id}"), role);
        if s.masked {
            e.subrole = Some("mask-me".into());
        }
        e.title = Some(format!("title {id}").into());
        e.content = vec![Content::text(format!(
            "text {id} {}",
            "lorem ".repeat(s.text_len)
        ))];
        if s.author {
            e.attributes
                .insert("author".into(), json!(format!("AUTHOR{id}Z")));
        }
        if s.x_secret {
            e.attributes.insert(
                "x-secret".into(),
                json!({"deep": [format!("XSECRET{id}Z")]}),
            );
        }
        if s.x_other {
            e.attributes
                .insert("x-other".into(), json!(format!("XOTHER{id}Z")));
        }
        if s.kept {
            e.attributes.insert(
                "note".into(),
                json!(format!("note {id} AKIAABCDEFGHIJKLMNOP")),
            );
        }
        // One focus path, from the root's child down, with no gaps.
        let focused = s.focused && focused_path[parent] && !focused_child[parent];
        if focused {
            e.focused = Some(true);
            focused_child[parent] = true;
        }
        focused_path.push(focused);
        focused_child.push(false);
        if s.selected {
            e.selected = Some(true);
        }
        elements.push((e, Some(parent)));
    }
    // Attach children to parents, last first, so every index stays valid.
    while elements.len() > 1 {
        let (child, parent) = elements.pop().unwrap();
        let parent = parent.unwrap();
        elements[parent].0.children.insert(0, child);
    }
    Answer {
        protocol: "0.2.0".into(),
        instance: "strip".into(),
        root: elements.pop().unwrap().0,
    }
}

const ACTIONS: [&str; 4] = ["selection", "focus", "window", "app"];

fn canaries(text: &str) -> bool {
    text.contains("AUTHOR") || text.contains("XSECRET") || text.contains("XOTHER")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn a_stripped_value_never_leaves(
        specs in prop::collection::vec(spec(), 1..24),
        action in 0..4usize,
        budget in prop::option::of(300..4000usize),
        outline in any::<bool>(),
    ) {
        let answer = build(&specs);
        prop_assume!(ctxgate::check(&answer).iter().all(|f| !f.is_error()));
        let gate = gate(STRIPPING);
        let mut request = Request::new(ACTIONS[action]);
        if let Some(b) = budget {
            request = request.budget(Budget::Bytes(b));
        }
        if outline {
            request = request.format(Format::Outline);
        }
        let (result, logs) = common::with_logs(|| gate.trim(&answer, &request));
        prop_assert!(!canaries(&logs), "a stripped value in the logs");
        match result {
            Ok(out) => {
                let report = serde_json::to_string(&out.report).unwrap();
                prop_assert!(!canaries(&out.rendered), "{}", out.rendered);
                prop_assert!(!canaries(&report), "{report}");
                // What is kept is still redacted.
                prop_assert!(!out.rendered.contains("AKIAABCDEFGHIJKLMNOP"));
                // Every stripped name is one the element had, on an element
                // sent with its attributes; the totals count them.
                let tree = ctxgate::Tree::new(&answer.root);
                let mut total = std::collections::BTreeMap::<String, usize>::new();
                for (d, node) in out.report.decisions.iter().zip(tree.nodes()) {
                    for name in &d.stripped {
                        prop_assert!(matches!(d.outcome, Outcome::Sent | Outcome::Cut), "{d:?}");
                        prop_assert!(node.element.attributes.get(name).is_some());
                        prop_assert!(matches!(&**name, "author" | "x-secret" | "x-other"));
                        *total.entry(name.to_string()).or_default() += 1;
                    }
                }
                prop_assert_eq!(&total, &out.report.stripped);
                // No sent element carries a stripped name, and each one
                // sent with content keeps its `note`, redacted.
                let mut stack = vec![&out.answer.root];
                while let Some(e) = stack.pop() {
                    for name in ["author", "x-secret", "x-other"] {
                        prop_assert!(e.attributes.get(name).is_none());
                    }
                    if let Some(note) = e.attributes.get("note") {
                        prop_assert!(note.as_str().unwrap().ends_with("[aws key]"));
                    }
                    stack.extend(e.children.iter());
                }
                // Trimmed again: the same elements sent (notices are each
                // trim's own), and trimmed once more, no change.
                let again = gate.trim(&out.answer, &request).unwrap();
                prop_assert_eq!(
                    common::without_notices(&again.answer),
                    common::without_notices(&out.answer)
                );
                let twice = gate.trim(&again.answer, &request).unwrap();
                prop_assert_eq!(&twice.rendered, &again.rendered);
            }
            Err(err) => {
                prop_assert!(!canaries(&err.to_string()));
            }
        }
    }
}

/// A thread in a window, with the user in one comment (the README's
/// example of `strip`).
const THREAD: &str = include_str!("../examples/thread.json");

fn stripped_of(out: &ctxgate::Trimmed<'_>, id: &str) -> Vec<String> {
    out.report
        .decisions
        .iter()
        .find(|d| d.id == id)
        .unwrap()
        .stripped
        .iter()
        .map(|n| n.to_string())
        .collect()
}

/// RFC-0001 section 6: `author` is sent only where the action warrants it.
/// `selection` and `focus` keep it; `window` and `app` strip it, except on
/// the element the user is at; the element itself is still sent, and so is
/// `related`.
#[test]
fn the_default_policy_decides_author_per_action() {
    let gate = Gate::embedded_default().unwrap();
    for action in ["selection", "focus"] {
        let out = gate
            .trim_bytes(THREAD.as_bytes(), &Request::new(action))
            .unwrap();
        assert!(out.rendered.contains("Ada Lovelace"), "{action}");
        assert!(out.report.stripped.is_empty(), "{action}");
    }
    // The thread the user names: every comment in it with its author.
    let focus = gate
        .trim_bytes(THREAD.as_bytes(), &Request::new("focus").target("th"))
        .unwrap();
    assert!(
        focus.rendered.contains("Grace Hopper"),
        "{}",
        focus.rendered
    );
    for action in ["window", "app"] {
        let out = gate
            .trim_bytes(THREAD.as_bytes(), &Request::new(action))
            .unwrap();
        // Where the user is, the author stays.
        assert!(out.rendered.contains("Ada Lovelace"), "{action}");
        assert!(stripped_of(&out, "c1").is_empty());
        // Elsewhere it is stripped, the comment and its links still sent.
        assert!(!out.rendered.contains("Grace Hopper"), "{action}");
        assert!(out.rendered.contains("second") && out.rendered.contains("reply-to"));
        assert_eq!(stripped_of(&out, "c2"), ["author"]);
        assert_eq!(
            out.report
                .decisions
                .iter()
                .find(|d| d.id == "c2")
                .unwrap()
                .outcome,
            Outcome::Sent
        );
        let report = serde_json::to_string(&out.report).unwrap();
        assert!(!report.contains("Grace Hopper") && !report.contains("Alan Turing"));
    }
    let app = gate
        .trim_bytes(THREAD.as_bytes(), &Request::new("app"))
        .unwrap();
    assert!(!app.rendered.contains("Alan Turing"));
    assert_eq!(app.report.stripped.get("author"), Some(&2));
}

/// Stripping removes what the element has; it never adds an attribute,
/// never sends a masked element's attributes, and leaves elements without
/// the name alone (no report entry).
#[test]
fn strip_only_removes() {
    let gate = gate(
        r#"package ctxgate
scope := "app"
strip contains "author"
strip contains "nowhere"
mask contains "masked" if input.element.subrole == "mask-me"
"#,
    );
    let tree = r#"{"protocol":"0.2.0","instance":"t","root":{"id":"app","role":"Application","children":[
     {"id":"w","role":"Window","children":[
      {"id":"a","role":"Row","attributes":{"author":"AUTHORaZ","likes":1}},
      {"id":"b","role":"Row","attributes":{"likes":2}},
      {"id":"m","role":"Row","subrole":"mask-me","attributes":{"author":"AUTHORmZ","likes":3}}]}]}}"#;
    let out = gate
        .trim_bytes(tree.as_bytes(), &Request::new("app"))
        .unwrap();
    assert!(!out.rendered.contains("AUTHOR"), "{}", out.rendered);
    assert!(!out.rendered.contains("nowhere"));
    assert!(
        out.rendered
            .contains(r#""id":"a","role":"Row","attributes":{"likes":1}"#),
        "{}",
        out.rendered
    );
    assert!(out
        .rendered
        .contains(r#""id":"b","role":"Row","attributes":{"likes":2}"#));
    // The masked row is a placeholder: no attribute of its own either way.
    assert!(!out.rendered.contains(r#""likes":3"#));
    assert_eq!(stripped_of(&out, "a"), ["author"]);
    assert!(stripped_of(&out, "b").is_empty());
    assert!(stripped_of(&out, "m").is_empty());
    assert_eq!(out.report.stripped.len(), 1);
}

/// A policy that strips every attribute the input names leaves ctxgate's
/// notices alone (they are not in `attribute_names`): a placeholder trimmed
/// again is still one, its notice ctxgate's own, never said empty.
#[test]
fn stripping_every_attribute_keeps_the_notices() {
    let gate = gate(
        r#"package ctxgate
scope := "app"
strip contains name if some name in input.element.attribute_names
mask contains "masked" if input.element.subrole == "mask-me"
"#,
    );
    let tree = r#"{"protocol":"0.2.0","instance":"t","root":{"id":"app","role":"Application","children":[
     {"id":"w","role":"Window","attributes":{"color":"red"},"children":[
      {"id":"m","role":"Row","subrole":"mask-me","attributes":{"likes":3}}]}]}}"#;
    let out = gate
        .trim_bytes(tree.as_bytes(), &Request::new("app"))
        .unwrap();
    assert!(
        out.rendered.contains("ctxgate:withheld"),
        "{}",
        out.rendered
    );
    assert!(!out.rendered.contains("red"));
    let again = gate.trim(&out.answer, &Request::new("app")).unwrap();
    assert_eq!(again.rendered, out.rendered);
    assert_eq!(again.report.reserved_attributes_dropped, 1);
}

/// Layers' `strip` sets merge, as the other partial sets do.
#[test]
fn layers_merge_their_strip_sets() {
    let layer = |name: &str, source: &str| vec![(name.to_string(), source.to_string())];
    let policy = Policy::from_layers(vec![
        layer(
            "a.rego",
            "package ctxgate\nscope := \"app\"\nstrip contains \"author\"\n",
        ),
        layer("b.rego", "package ctxgate\nstrip contains \"likes\"\n"),
    ])
    .unwrap();
    let out = Gate::new(policy)
        .trim_bytes(THREAD.as_bytes(), &Request::new("app"))
        .unwrap();
    assert_eq!(stripped_of(&out, "c1"), ["author", "likes"]);
    assert!(!out.rendered.contains("Ada Lovelace") && !out.rendered.contains("likes"));
}

/// Loading refuses what cannot be a `strip`: a reserved name, a value of
/// the wrong type; a misspelling is named (did you mean).
#[test]
fn loading_refuses_a_bad_strip() {
    let load = |source: &str| {
        Policy::from_sources(vec![("p.rego".into(), source.into())])
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        load("package ctxgate\nstirp contains \"author\"\n"),
        "policy p.rego:2:1: rule `stirp` is not one ctxgate reads (did you mean `strip`?); as written it decides nothing"
    );
    assert!(
        load("package ctxgate\nstrip contains \"ctxgate:omitted\"\n").starts_with(
            "policy p.rego:2:16: `strip` names `ctxgate:omitted`, a reserved `ctxgate:` attribute"
        ),
    );
    assert!(load("package ctxgate\nstrip := 3\n").starts_with(
        "policy p.rego:2:10: `strip` is a number here; it must be a set of attribute names"
    ));
}
