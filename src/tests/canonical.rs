//! The decision caches' key by what a policy reads (`engine::reads_of`,
//! `ElementInput::key_for`) gives every projection the decision the full
//! key gives: one `Policy` keyed by what it reads against one keyed by the
//! whole projection (`Evaluator::exact`), each its own cache, over the real
//! fixture trees and deep generated chains × every action, and generated
//! projections (subroles that differ only where no test of the policy
//! looks, ancestors that differ only where `count` does not look), for the
//! default policy and every policy set of the test suites.

use std::sync::Arc;

use super::policy_rvm::{load, policy_sets, request, root, same, Gen, MATCHES, NAMES, SUBROLES};
use crate::policy::{Decision, ElementInput, Evaluator, Inside, Policy, ACTIONS};
use crate::trim::Decider;
use crate::{Limits, Request, Role};

/// A decider that asks both keys and fails the test when they differ.
struct Keys<'p> {
    read: Evaluator<'p>,
    full: Evaluator<'p>,
    compared: usize,
    label: String,
}

impl Decider for Keys<'_> {
    fn decide(&mut self, element: &ElementInput<'_>) -> crate::Result<Arc<Decision>> {
        let read = Decider::decide(&mut self.read, element);
        let full = Decider::decide(&mut self.full, element);
        same(&format!("{}: {element:?}", self.label), &read, &full);
        self.compared += 1;
        read
    }
    fn evaluations(&self) -> usize {
        self.read.evaluations()
    }
}

/// 6 chains of 150 nested Groups with distinct subroles (some secure, some
/// in other cases), each ending in a Text, under a focused Window: the
/// hostile shape of SECURITY.md, smaller.
fn chains() -> Vec<u8> {
    let subrole = |c: usize, d: usize| match (c + d) % 5 {
        0 => format!("sub-{c}-{d}"),
        1 => format!("Pass-Word-{c}-{d}"),
        2 => format!("x{d}SECURE{c}"),
        3 => format!("ſecure-{c}-{d}"),
        _ => format!("PASSWORD{c}{d}"),
    };
    let chain = |c: usize| {
        let mut s = String::new();
        for d in 0..150 {
            s += &format!(
                r#"{{"id":"c{c}-{d}","role":"{}","subrole":"{}","children":["#,
                ["Group", "Text", "Cell", "Document"][(c * d) % 4],
                subrole(c, d)
            );
        }
        s += &format!(
            r#"{{"id":"c{c}-leaf","role":"Text","content":[{{"type":"text","text":"leaf"}}]}}"#
        );
        s + &"]}".repeat(150)
    };
    let chains: Vec<String> = (0..6).map(chain).collect();
    format!(
        r#"{{"protocol":"0.2.0","instance":"chains","root":{{"id":"app","role":"Application","title":"A","children":[{{"id":"w","role":"Window","focused":true,"children":[{}]}}]}}}}"#,
        chains.join(",")
    )
    .into_bytes()
}

#[test]
fn the_key_of_what_the_policy_reads_decides_every_tree_as_the_full_key_does() {
    let mut trees = Vec::new();
    for entry in std::fs::read_dir(root().join("tests/fixtures/answers")).unwrap() {
        let path = entry.unwrap().path();
        trees.push((path.display().to_string(), std::fs::read(&path).unwrap()));
    }
    trees.sort();
    assert!(trees.len() >= 9);
    trees.push(("chains".to_string(), chains()));
    let (mut compared, mut fewer) = (0, 0);
    for (name, files) in policy_sets(false) {
        let (Some(read), Some(full)) = (load(&files), load(&files)) else {
            continue;
        };
        for (tree, bytes) in &trees {
            let answer = crate::read_conforming(bytes, &Limits::default()).unwrap();
            for action in ACTIONS {
                let request = Request::new(action).budget(crate::Budget::Bytes(3000));
                let input = crate::trim::request_input(&answer, &request);
                let title = answer.root.title.as_deref();
                let (Ok(a), Ok(b)) = (
                    read.evaluator_with_title(&input, title),
                    full.evaluator_with_title(&input, title),
                ) else {
                    continue;
                };
                let plan = a.plan().clone();
                let mut keys = Keys {
                    read: a,
                    full: b.exact(),
                    compared: 0,
                    label: format!("{name} / {tree} / {action}"),
                };
                let out = crate::trim::trim_with(
                    &answer,
                    &request,
                    &plan,
                    &mut keys,
                    read.hash(),
                    &Limits::default(),
                );
                assert!(keys.read.evaluations() <= keys.full.evaluations());
                fewer += usize::from(keys.read.evaluations() < keys.full.evaluations());
                compared += keys.compared;
                // The same output, decided by the full key alone.
                let again = full.evaluator_with_title(&input, title).unwrap().exact();
                let mut again = again;
                let reference = crate::trim::trim_with(
                    &answer,
                    &request,
                    &plan,
                    &mut again,
                    full.hash(),
                    &Limits::default(),
                );
                match (out, reference) {
                    (Ok(a), Ok(b)) => assert_eq!(a.rendered, b.rendered, "{name} / {tree}"),
                    (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                    (a, b) => panic!("{name} / {tree}: {:?} / {:?}", a.is_ok(), b.is_ok()),
                }
            }
        }
    }
    println!("{compared} projections compared; {fewer} requests evaluated fewer");
    assert!(compared > 10_000, "{compared}");
    assert!(fewer > 50, "{fewer}");
}

/// Subroles that the default policy's tests tell apart and that they do
/// not, in cases and scripts where lowering is not ASCII.
const MORE_SUBROLES: [Option<&str>; 10] = [
    Some("Secure"),
    Some("XSECUREX"),
    Some("ſecure"),
    Some("pass-word"),
    Some("PassWord"),
    Some("İpassword"),
    Some("chatroom"),
    Some(""),
    Some("ＳＥＣＵＲＥ"),
    Some("secur"),
];

#[test]
fn the_key_of_what_the_policy_reads_decides_generated_projections_as_the_full_key_does() {
    let values = [
        serde_json::json!(true),
        serde_json::json!("Ada"),
        serde_json::json!({"a": [1, null]}),
    ];
    let subroles: Vec<Option<&str>> = SUBROLES.iter().chain(&MORE_SUBROLES).copied().collect();
    let mut gen = Gen(0x2545_F491_4F6C_DD1D);
    let mut projections = Vec::new();
    for _ in 0..250 {
        let inside: Inside<'static> = (0..gen.next() % 12)
            .map(|_| (*gen.pick(&Role::ALL), *gen.pick(&subroles)))
            .collect();
        let mut names: Vec<&str> = (0..gen.next() % 3).map(|_| *gen.pick(&NAMES)).collect();
        names.dedup();
        // Few roles and flags, so that projections the read key merges
        // are common.
        projections.push(ElementInput {
            role: *gen.pick(&[Role::Text, Role::Group, Role::Cell, Role::Document]),
            subrole: *gen.pick(&subroles),
            selected: gen.next() % 5 == 0,
            focused: gen.next() % 5 == 0,
            visible: !gen.flag(),
            hovered: false,
            has_title: gen.flag(),
            has_content: gen.flag(),
            contains_selection: false,
            attributes: names
                .iter()
                .map(|n| (*n, &values[gen.next() as usize % values.len()]))
                .collect(),
            attribute_names: names,
            title_matches: (0..gen.next() % 2).map(|_| *gen.pick(&MATCHES)).collect(),
            inside,
        });
    }
    let (mut compared, mut fewer) = (0, 0);
    for (name, files) in policy_sets(true) {
        let (Some(read), Some(full)) = (load(&files), load(&files)) else {
            continue;
        };
        for action in ACTIONS {
            let (Ok(mut a), Ok(b)) = (
                read.evaluator(&request(action)),
                full.evaluator(&request(action)),
            ) else {
                continue;
            };
            let mut b = b.exact();
            for p in &projections {
                let label = format!("{name} / {action}: {p:?}");
                same(
                    &label,
                    &Decider::decide(&mut a, p),
                    &Decider::decide(&mut b, p),
                );
                compared += 1;
            }
            fewer += usize::from(a.evaluations() < b.evaluations());
        }
    }
    println!("{compared} generated projections compared; {fewer} sets evaluated fewer");
    assert!(compared > 10_000, "{compared}");
    assert!(fewer > 20, "{fewer}");
}

#[test]
fn what_a_policy_reads_is_found_from_its_tokens_and_refused_when_in_doubt() {
    let default = Policy::embedded_default().unwrap();
    assert!(default.reads().inside_count_only);
    assert_eq!(
        format!("{:?}", default.reads().subrole),
        r#"Some([SubroleTest { op: Contains, case: Lower, needle: "password" }, SubroleTest { op: Contains, case: Lower, needle: "secure" }])"#
    );
    // (body, `input.inside` only counted, the subrole only tested)
    let cases: [(&str, bool, bool); 17] = [
        ("priority := 1 if count(input.inside) > 2", true, true),
        ("deny contains \"d\" if input.inside[0].role == \"Window\"", false, true),
        ("deny contains \"d\" if { some a in input.inside; a.role == \"Page\" }", false, true),
        ("deny contains \"d\" if startswith(upper(input.element.subrole), \"AX\")", true, true),
        ("deny contains \"d\" if input.element.subrole == \"pane\"", true, true),
        ("deny contains \"d\" if \"pane\" != lower(input.element.subrole)", true, true),
        ("deny contains \"d\" if upper(input.element.subrole) == \"PANE\"", true, true),
        // Compared with anything but a literal: the whole subrole.
        ("deny contains \"d\" if input.element.subrole == input.element.role", true, false),
        ("deny contains \"d\" if input.element.subrole < \"m\"", true, false),
        ("deny contains \"d\" if input.element.subrole in {\"a\", \"b\"}", true, false),
        // An escape the tokenizer leaves as written: the whole subrole.
        ("deny contains \"d\" if contains(input.element.subrole, \"a\\\\b\")", true, false),
        // The element whole: its subrole may be read under another name.
        ("deny contains \"d\" if { e := input.element; e.subrole == \"x\" }", true, false),
        // A needle bound to something other than a literal somewhere.
        ("deny contains \"d\" if { some v in input.element.attribute_names; v == \"a\" }\n\nmask contains \"m\" if { some v in {\"a\"}; contains(input.element.subrole, v) }", false, false),
        // A needle's name bound otherwise in another rule (`:=`, or a
        // field of that name): its values are not only the literals.
        ("mask contains \"m\" if { some v in {\"a\"}; contains(input.element.subrole, v) }\n\ndeny contains \"d\" if { v := \"zz\"; contains(input.element.subrole, v) }", false, false),
        ("mask contains \"m\" if { some v in {\"a\"}; contains(input.element.subrole, v) }\n\ndeny contains \"d\" if { v := input.element.role; contains(input.element.subrole, v) }", false, false),
        // The same name bound by `some … in` literals in both: exact.
        ("mask contains \"m\" if { some v in {\"a\"}; contains(input.element.subrole, v) }\n\ndeny contains \"d\" if { some v in {\"b\"}; endswith(input.element.subrole, v) }", true, true),
        // Outside the subset, everything is read.
        ("deny contains \"d\" if { x := [a | some a in input.inside]; count(x) > 1 }", false, false),
    ];
    for (body, inside, subrole) in cases {
        let files = vec![("p.rego".to_string(), format!("package ctxgate\n\n{body}\n"))];
        let (policy, _) = Policy::unchecked(files).unwrap_or_else(|e| panic!("{body}: {e}"));
        assert_eq!(policy.reads().inside_count_only, inside, "{body}");
        assert_eq!(policy.reads().subrole.is_some(), subrole, "{body}");
    }
}
