//! The decision caches' key by what a policy reads (`engine::reads_of`,
//! `ElementInput::key_for`) gives every projection the decision the full
//! key gives: one `Policy` keyed by what it reads against one keyed by the
//! whole projection (`Evaluator::exact`), each its own cache, over the real
//! fixture trees and deep generated chains × every action, and generated
//! projections (subroles that differ only where no test of the policy
//! looks, ancestors that differ only where `count` does not look), for the
//! default policy and every policy set of the test suites. For the embedded
//! default the first side answers from its table (`policy::table`) and the
//! second from the interpreter: the table's differential test.

use std::sync::Arc;

use super::harness::{
    fixture_trees, generated, load, on_projections, on_trees, request, root, same, source, Gen,
    INLINE, MATCHES, NAMES, SUBROLES,
};
use crate::policy::{ElementInput, Inside, Policy, ACTIONS};
use crate::trim::Decider;
use crate::{Limits, Role};

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
    // Every tree under CTXGATE_SLOW_TESTS=1; else every third.
    let step = super::cases(1, 3);
    let mut trees: Vec<_> = fixture_trees().into_iter().step_by(step).collect();
    trees.push(("chains".to_string(), chains()));
    let mut fewer = 0;
    let compared = on_trees(
        &trees,
        Some(crate::Budget::Bytes(3000)),
        |b| b.exact(),
        &mut |case| {
            let (read, full) = (&case.pair.first, &case.pair.second);
            assert!(read.evaluations() <= full.evaluations());
            fewer += usize::from(read.evaluations() < full.evaluations());
            // The same output, decided by the full key alone.
            let mut again = case
                .second
                .evaluator_with_title(case.input, case.title)
                .unwrap()
                .exact();
            let plan = again.plan().clone();
            let reference = crate::trim::trim_with(
                case.answer,
                case.request,
                &plan,
                &mut again,
                case.second.hash(),
                &Limits::default(),
            );
            let label = &case.pair.label;
            match (case.out, reference) {
                (Ok(a), Ok(b)) => assert_eq!(a.rendered, b.rendered, "{label}"),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                (a, b) => panic!("{label}: {:?} / {:?}", a.is_ok(), b.is_ok()),
            }
        },
        &mut |_, _, _| {},
    );
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
    for _ in 0..super::cases(250, 60) {
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
            secure_elsewhere: false,
        });
    }
    let mut fewer = 0;
    let actions: Vec<&str> = ACTIONS.into_iter().chain(["unknown"]).collect();
    let compared = on_projections(
        &projections,
        &actions,
        |b| b.exact(),
        &mut |_, _, _, pair| {
            fewer += usize::from(pair.first.evaluations() < pair.second.evaluations());
        },
    );
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

/// What each rule reads, through the rules it names, is found from the
/// policy's tokens (`engine::rule_reads`), and is everything where in
/// doubt; the per-rule memo keys a rule's value by it alone.
#[test]
fn what_each_rule_reads_is_found_through_the_rules_it_names() {
    let bit = |names: &[&str]| -> u16 {
        // `ElementInput::fields`'s order.
        let all = [
            "role",
            "subrole",
            "selected",
            "focused",
            "visible",
            "hovered",
            "has_title",
            "has_content",
            "contains_selection",
            "attribute_names",
            "attributes",
            "title_matches",
        ];
        names
            .iter()
            .map(|n| 1 << all.iter().position(|f| f == n).unwrap())
            .sum()
    };
    let all = (1 << 12) - 1;
    // (policy body, the `deny` rule's fields, whether it reads the ancestors)
    let cases: Vec<(&str, u16, bool)> = vec![
        ("deny contains \"d\" if input.element.focused", bit(&["focused"]), false),
        ("deny contains \"d\" if count(input.inside) > 2", 0, true),
        ("deny contains \"d\" if input.action.name == \"app\"", 0, false),
        // Through a helper, named bare or as data, in either order.
        ("deny contains \"d\" if h\n\nh if input.element.role == \"Text\"\n\nh if input.element.hovered", bit(&["role", "hovered"]), false),
        ("h if input.element.selected\n\ndeny contains \"d\" if data.ctxgate.h", bit(&["selected"]), false),
        ("deny contains \"d\" if { h; not k }\n\nh if k\n\nk if count(input.element.attribute_names) > 1", bit(&["attribute_names"]), false),
        // Another rule's reads are not this one's.
        ("deny contains \"d\" if input.element.visible\n\nmask contains \"m\" if input.element.has_title", bit(&["visible"]), false),
        // Partial definitions add up.
        ("deny contains \"d\" if input.element.visible\n\ndeny contains \"e\" if contains(lower(input.element.subrole), \"x\")", bit(&["visible", "subrole"]), false),
        // The element whole: every field.
        ("deny contains \"d\" if { e := input.element; e.focused }", all, false),
        // A name that is no field reads nothing the key holds.
        ("deny contains \"d\" if input.element.nothing", 0, false),
    ];
    for (body, fields, inside) in cases {
        let files = vec![("p.rego".to_string(), format!("package ctxgate\n\n{body}\n"))];
        let (policy, _) = Policy::unchecked(files).unwrap_or_else(|e| panic!("{body}: {e}"));
        let reads = policy
            .rule_reads()
            .unwrap_or_else(|| panic!("{body}: its reads are not spelled out"));
        let deny = reads.iter().find(|(r, ..)| *r == "deny").unwrap();
        assert_eq!((deny.1, deny.2), (fields, inside), "{body}");
    }
    // The default's, fixed by its bytes (`default_facts`).
    let default = Policy::embedded_default().unwrap();
    let reads = default.rule_reads().unwrap();
    let prune = reads.iter().find(|(r, ..)| *r == "prune").unwrap();
    assert_eq!((prune.1, prune.2), (bit(&["visible"]), false));
    let priority = reads.iter().find(|(r, ..)| *r == "priority").unwrap();
    assert_eq!(
        (priority.1, priority.2),
        (bit(&["role", "selected", "focused", "hovered"]), true)
    );
}

/// Only a policy whose reads are spelled out in its tokens is keyed and
/// memoised by what it reads; every other by the whole projection.
#[test]
fn only_policies_whose_reads_are_spelled_out_are_keyed_by_them() {
    assert!(Policy::embedded_default().unwrap().rule_reads().is_some());
    for (body, spelled_out) in INLINE {
        let files = vec![("p.rego".to_string(), format!("package ctxgate\n\n{body}\n"))];
        // Without the lint, whose probes may already fail some of these.
        let (policy, _) = Policy::unchecked(files).unwrap_or_else(|e| panic!("{body}: {e}"));
        assert_eq!(policy.rule_reads().is_some(), spelled_out, "{body}");
        if !spelled_out {
            assert_eq!(policy.reads(), &Default::default(), "{body}");
        }
    }
}

/// The embedded default's table decides as the default's bytes compiled
/// from a file (interpreted, keyed and memoised alike) do, on generated
/// projections up to twice the table's depth × every action and ones it
/// does not name, with the same evaluations. (Title matches no plan gives,
/// out of its order or unknown, are outside the table: the interpreter
/// decides those.)
#[test]
fn the_table_decides_as_the_defaults_bytes_interpreted() {
    let embedded = load(&[]).unwrap();
    let compiled = load(&[source(&root().join("policies/default.rego"))]).unwrap();
    let values = [serde_json::json!("Ada"), serde_json::json!(3)];
    let mut gen = Gen(0x5DEE_CE66_D1CE_4E5B);
    let mut compared = 0;
    for action in ACTIONS.into_iter().chain(["unknown", ""]) {
        let mut a = embedded.evaluator(&request(action)).unwrap();
        let mut b = compiled.evaluator(&request(action)).unwrap();
        for _ in 0..super::cases(300, 100) {
            let depth = match gen.next() % 4 {
                0 => 60 + gen.next() % 70,
                _ => gen.next() % 5,
            };
            let inside = (0..depth)
                .map(|_| (*gen.pick(&Role::ALL), *gen.pick(&SUBROLES)))
                .collect();
            let p = generated(&mut gen, &values, inside);
            same(
                &format!("{action}: {p:?}"),
                &Decider::decide(&mut a, &p),
                &Decider::decide(&mut b, &p),
            );
            compared += 1;
        }
        assert_eq!(a.evaluations(), b.evaluations(), "{action}");
    }
    assert!(compared >= 100 * (ACTIONS.len() + 2));
}

/// A policy whose evaluation can fail is keyed by the whole projection, and
/// a request sees the interpreter's error, with the rule and its place in
/// the file.
#[test]
fn a_policy_whose_evaluation_fails_gives_the_interpreters_error() {
    let policy = Policy::from_sources(vec![(
        "f.rego".into(),
        "package ctxgate\n\nmask contains \"m\" if input.element.role == \"Text\"\n\npriority := 1 if input.element.focused\n\npriority := 2 if input.element.selected\n".into(),
    )])
    .unwrap();
    assert!(policy.rule_reads().is_none());
    let mut element = ElementInput {
        role: Role::Text,
        subrole: None,
        selected: true,
        focused: true,
        visible: true,
        hovered: false,
        has_title: false,
        has_content: false,
        contains_selection: false,
        attribute_names: vec![],
        attributes: vec![],
        title_matches: vec![],
        inside: Inside::new(),
        secure_elsewhere: false,
    };
    let mut evaluator = policy.evaluator(&request("app")).unwrap();
    let message = Decider::decide(&mut evaluator, &element)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("priority") && message.contains("f.rego:7:1"),
        "{message}"
    );
    element.selected = false;
    let got = Decider::decide(&mut evaluator, &element).unwrap();
    assert_eq!(got.priority, 1.0);
    assert_eq!(got.mask, vec![Arc::<str>::from("m")]);
}

/// The embedded default's plan, from its table, is the interpreter's, for
/// every action (and ones it does not name), with and without a target, and
/// the same as the default's bytes loaded as a file (compiled, planned by
/// the interpreter) give; the plan needs no interpreter.
#[test]
fn the_embedded_defaults_plan_from_its_table_is_the_interpreters() {
    let embedded = Policy::embedded_default().unwrap();
    let file = load(&[source(&root().join("policies/default.rego"))]).unwrap();
    let mut requests = Vec::new();
    for action in ACTIONS.into_iter().chain(["unknown", "", "Focus"]) {
        for target in [None, Some("e1")] {
            let mut input = request(action);
            input.action.target = target.map(str::to_string);
            requests.push(input.clone());
            input.instance = "other".to_string();
            input.protocol = "9.9.9".to_string();
            requests.push(input);
        }
    }
    let plans: Vec<String> = requests
        .iter()
        .map(|input| format!("{:?}", embedded.plan(input).unwrap()))
        .collect();
    assert!(!embedded.interpreter_built());
    for (input, plan) in requests.iter().zip(&plans) {
        let interpreted = format!("{:?}", embedded.plan_through_interpreter(input).unwrap());
        assert_eq!(*plan, interpreted, "{input:?}");
        assert_eq!(
            *plan,
            format!("{:?}", file.plan(input).unwrap()),
            "{input:?}"
        );
        assert_eq!(
            *plan,
            format!("{:?}", file.plan_through_interpreter(input).unwrap()),
            "{input:?}"
        );
    }
    assert!(embedded.interpreter_built());
}

/// Every trim of a fixture tree under the default, each action: the table
/// decides the whole request, elements with attributes too, and nothing is
/// compiled (the tests above compare every decision with the
/// interpreter's).
#[test]
fn a_request_under_the_default_compiles_nothing() {
    use crate::trim::{request_input, trim_with};
    use crate::{Limits, Request};
    let dir = root().join("tests/fixtures/answers");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    let mut with_attributes = 0;
    for path in paths {
        let bytes = std::fs::read(&path).unwrap();
        let answer = crate::read_conforming(&bytes, &Limits::default()).unwrap();
        let mut attributes = false;
        let mut stack = vec![&answer.root];
        while let Some(e) = stack.pop() {
            attributes |= !e.attributes.is_empty();
            stack.extend(e.children.iter());
        }
        for action in ACTIONS {
            let policy = Policy::embedded_default().unwrap();
            let request = Request::new(action);
            let input = request_input(&answer, &request);
            let mut evaluator = policy
                .evaluator_with_title(&input, answer.root.title.as_deref())
                .unwrap();
            let plan = evaluator.plan().clone();
            let out = trim_with(
                &answer,
                &request,
                &plan,
                &mut evaluator,
                policy.hash(),
                &Limits::default(),
            );
            out.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(evaluator.evaluations() > 0);
            assert!(!policy.interpreter_built(), "{} / {action}", path.display());
            with_attributes += usize::from(attributes);
        }
    }
    assert!(with_attributes >= ACTIONS.len(), "{with_attributes}");
}
