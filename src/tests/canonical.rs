//! The decision caches' key by what a policy reads (`engine::reads_of`,
//! `ElementInput::key_for`) gives every projection the decision the full
//! key gives: one `Policy` keyed by what it reads against one keyed by the
//! whole projection (`Evaluator::exact`), each its own cache, over the real
//! fixture trees and deep generated chains × every action, and generated
//! projections (subroles that differ only where no test of the policy
//! looks, ancestors that differ only where `count` does not look), for the
//! default policy and every policy set of the test suites.

use super::harness::{fixture_trees, on_projections, on_trees};
use super::policy_rvm::{Gen, MATCHES, NAMES, SUBROLES};
use crate::policy::{ElementInput, Inside, Policy, ACTIONS};
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
    let compared = on_projections(
        &projections,
        &ACTIONS,
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
            .unwrap_or_else(|| panic!("{body}: not on the VM"));
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
