//! The table is regorus's answers: generated here from the default's VM,
//! and checked against what is committed.

use std::fmt::Write;

use super::super::engine::{probe_request, DEFAULT_SOURCE};
use super::super::inside::Inside;
use super::super::load::tests::assert_generated;
use super::super::token::{tokenize, TokenKind};
use super::super::Policy;
use super::*;

/// The action names the table is made for: the scopes' words.
use super::super::probes::ACTIONS;
/// Where the table's bytes live in the repository.
const BYTES_PATH: &str = "policies/default.table";
const DATA_PATH: &str = "src/policy/table/data.rs";

/// Whether every read of `input` in `source` is of `input.element`,
/// `input.inside` or `input.action.name`: then a rule's value depends on
/// the request through the action's name alone, and one table per name
/// holds it whatever the target, the app or its title.
fn reads_only_the_action_name(source: &str) -> bool {
    let tokens = tokenize(source);
    let word = |at: usize| {
        tokens
            .get(at)
            .filter(|t| t.kind != TokenKind::Str)
            .map(|t| t.text.as_str())
    };
    (0..tokens.len())
        .filter(|&at| tokens[at].kind == TokenKind::Ident && tokens[at].text == "input")
        .all(|at| {
            matches!(
                (word(at + 1), word(at + 2), word(at + 3), word(at + 4)),
                (Some("."), Some("element" | "inside"), ..)
                    | (Some("."), Some("action"), Some("."), Some("name"))
            )
        })
}

/// A subrole for each outcome of the tests that some subrole has: the
/// needles, each set of them joined (`None` for an outcome none gives; the
/// table holds no value there).
fn subroles(tests: &[SubroleTest]) -> Vec<Option<String>> {
    let mut found: Vec<Option<String>> = vec![None; 1 << tests.len()];
    let cased = |t: &SubroleTest| match t.case {
        super::super::projection::Case::Upper => t.needle.to_uppercase(),
        _ => t.needle.clone(),
    };
    for set in 0..1usize << tests.len() {
        for joint in ["", " "] {
            let s: Vec<String> = (0..tests.len())
                .filter(|k| set >> k & 1 == 1)
                .map(|k| cased(&tests[k]))
                .collect();
            let s = s.join(joint);
            let bits = SubroleTest::outcome_bits(tests, &s).unwrap() as usize;
            found[bits].get_or_insert(s);
        }
    }
    found
}

/// An ancestor chain of `n` Groups.
fn inside(n: usize) -> Inside<'static> {
    (0..n).fold(Inside::new(), |up, _| up.child(Role::Group, None))
}

/// The projection at position `at` of a rule's table (`digits` from
/// [`layout`]); the fields the rule does not read are left at their
/// defaults. `None` where no projection has it.
fn projection(
    digits: &[(Option<usize>, usize)],
    at: usize,
    subroles: &'static [Option<String>],
    titles: &'static [&'static str],
) -> Option<ElementInput<'static>> {
    let mut element = ElementInput::blank(Inside::new());
    let mut rest = at;
    for &(field, radix) in digits.iter().rev() {
        let digit = rest % radix;
        rest /= radix;
        let flag = digit == 1;
        match field {
            None => element.inside = inside(digit),
            Some(0) => element.role = Role::ALL[digit],
            Some(SUBROLE) => {
                element.subrole = match digit {
                    0 => None,
                    d => Some(subroles[d - 1].as_deref()?),
                }
            }
            Some(2) => element.selected = flag,
            Some(3) => element.focused = flag,
            Some(4) => element.visible = flag,
            Some(5) => element.hovered = flag,
            Some(6) => element.has_title = flag,
            Some(7) => element.has_content = flag,
            Some(8) => element.contains_selection = flag,
            Some(TITLE_MATCHES) => {
                element.title_matches = (0..titles.len())
                    .filter(|k| digit >> k & 1 == 1)
                    .map(|k| titles[k])
                    .collect();
            }
            Some(k) => panic!("field {k} is not enumerated"),
        }
    }
    // A title that matches is a title.
    if !element.title_matches.is_empty() {
        let reads_has_title = digits.iter().any(|&(field, _)| field == Some(6));
        match reads_has_title {
            true if !element.has_title => return None,
            _ => element.has_title = true,
        }
    }
    Some(element)
}

/// `strings` for as long as the test runs, as the table's entries hold them.
fn leaked(strings: &[impl AsRef<str>]) -> &'static [&'static str] {
    let strings: Vec<&'static str> = strings
        .iter()
        .map(|s| &*Box::leak(s.as_ref().into()))
        .collect();
    Box::leak(strings.into_boxed_slice())
}

/// An entry for a value regorus gave, if the table can hold it.
fn entry(value: &Value) -> Option<(Vec<String>, Option<f64>, bool)> {
    match value {
        Value::Undefined => Some((Vec::new(), None, true)),
        Value::Number(n) => n
            .as_f64()
            .filter(|n| n.is_finite())
            .map(|n| (Vec::new(), Some(n), false)),
        Value::Set(_) | Value::Array(_) => {
            let items: Vec<&Value> = match value {
                Value::Set(set) => set.iter().collect(),
                Value::Array(items) => items.iter().collect(),
                _ => unreachable!(),
            };
            let mut strings = Vec::new();
            for item in items {
                match item {
                    Value::String(s) => strings.push(s.to_string()),
                    _ => return None,
                }
            }
            strings.sort();
            strings.dedup();
            Some((strings, None, false))
        }
        _ => None,
    }
}

/// The table's two files as the default's bytes and regorus give them.
fn generate() -> (String, Vec<u8>) {
    assert!(
        reads_only_the_action_name(DEFAULT_SOURCE),
        "policies/default.rego reads more of the request than `input.action.name`; the table (one per action name) cannot hold its answers: make it key by what is read, or leave the default untabled"
    );
    let policy = Policy::embedded_default().unwrap();
    let reads = policy.reads().clone();
    let rule_reads = policy
        .rule_reads()
        .expect("the default's rules run on the VM, with their reads");
    // The title patterns' names: one list for every action.
    // From the interpreter, not `Policy::plan` (which reads the table).
    let plans: Vec<_> = ACTIONS
        .iter()
        .map(|a| {
            policy
                .plan_through_interpreter(&probe_request(a, None))
                .unwrap()
        })
        .collect();
    let titles: Vec<&str> = plans[0]
        .title_patterns
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    for plan in &plans {
        let these: Vec<&str> = plan
            .title_patterns
            .iter()
            .map(|(n, _)| n.as_str())
            .collect();
        assert_eq!(these, titles, "the title patterns differ by action");
    }
    let titles = leaked(&titles);
    let subroles: &'static [Option<String>] = match &reads.subrole {
        Some(tests) => Box::leak(subroles(tests).into_boxed_slice()),
        None => &[],
    };

    let mut values: Vec<(Vec<String>, Option<f64>, bool)> = Vec::new();
    let mut bytes: Vec<u8> = Vec::new();
    let mut rules = String::new();
    for &(rule, fields, inside) in &rule_reads {
        let reads_of_rule = RuleReads { fields, inside };
        let Some(digits) = layout(&reads, reads_of_rule, titles) else {
            let _ = writeln!(rules, "    ({rule:?}, None),");
            continue;
        };
        let size: usize = digits.iter().map(|(_, radix)| radix).product();
        let mut spans: Vec<(usize, usize)> = Vec::new();
        for action in ACTIONS {
            let request = probe_request(action, None);
            let mut table = Vec::with_capacity(size);
            for at in 0..size {
                let byte = match projection(&digits, at, subroles, titles) {
                    None => MISSING,
                    Some(element) => {
                        assert_eq!(position(&element, &reads, reads_of_rule, titles), Some(at));
                        let value = policy.rule_value_on_vm(&request, &element, rule);
                        match entry(&value) {
                            None => MISSING,
                            Some(e) => {
                                // The rule's reader makes of the table's value
                                // what it makes of regorus's.
                                let (strings, number, undefined) = &e;
                                let held = match (undefined, number) {
                                    (true, _) => Entry::Undefined,
                                    (false, Some(n)) => Entry::Number(*n),
                                    (false, None) => Entry::Strings(leaked(strings)),
                                };
                                assert_eq!(
                                    policy.applied(rule, &held.value()),
                                    policy.applied(rule, &value),
                                    "{rule} at {at} under {action}"
                                );
                                let k = match values.iter().position(|v| *v == e) {
                                    Some(k) => k,
                                    None => {
                                        values.push(e);
                                        values.len() - 1
                                    }
                                };
                                assert!(k < MISSING as usize, "too many distinct values");
                                k as u8
                            }
                        }
                    }
                };
                table.push(byte);
            }
            // One copy of a table two actions share.
            let start = match spans
                .iter()
                .find(|&&(start, len)| len == size && bytes[start..start + len] == table[..])
            {
                Some(&(start, _)) => start,
                None => {
                    bytes.extend_from_slice(&table);
                    bytes.len() - size
                }
            };
            spans.push((start, size));
        }
        let spans: Vec<String> = spans.iter().map(|(s, l)| format!("({s}, {l})")).collect();
        let _ = writeln!(rules, "    ({rule:?}, Some(&[{}])),", spans.join(", "));
    }

    let mut out = String::from(
        "//! The embedded default's rule values and plans, as regorus gives them\n\
         //! (`policy::table`). Generated; `policy::table::tests` recomputes it and\n\
         //! `policies/default.table` from `policies/default.rego` and fails when they\n\
         //! differ. Regenerate with\n\
         //! `UPDATE_EXPECT=1 cargo test --lib the_default_table_is_regorus_answers`.\n\n\
         use super::{Entry, Spans};\n\n",
    );
    out += "/// The action names there is a table for, in its order.\n";
    let _ = writeln!(out, "pub(super) const ACTIONS: &[&str] = &{ACTIONS:?};\n");
    out += "/// The plan's title patterns' names, in its order.\n";
    let _ = writeln!(out, "pub(super) const TITLES: &[&str] = &{titles:?};\n");
    out += "/// The distinct rule values.\n";
    out += "pub(super) const VALUES: &[Entry] = &[\n";
    for (strings, number, undefined) in &values {
        let _ = match (undefined, number) {
            (true, _) => writeln!(out, "    Entry::Undefined,"),
            (false, Some(n)) => writeln!(out, "    Entry::Number({n:?}),"),
            (false, None) => writeln!(out, "    Entry::Strings(&{strings:?}),"),
        };
    }
    out += "];\n\n";
    out += "/// Per per-element rule defined, in evaluation order: per action, where its\n";
    out += "/// table is in `BYTES` (start, length), each byte an index into `VALUES` or\n";
    out += "/// `MISSING`; `None` when what it reads cannot be enumerated.\n";
    out += "pub(super) const RULES: &[(&str, Option<Spans>)] = &[\n";
    out += &rules;
    out += "];\n\n";
    let _ = writeln!(
        out,
        "pub(super) const BYTES: &[u8] = include_bytes!(\"../../../{BYTES_PATH}\");\n"
    );
    let mut json: Vec<String> = Vec::new();
    let mut plans = String::new();
    for action in ACTIONS {
        plans += "    &[\n";
        for (rule, value) in policy.plan_json_on_vm(&probe_request(action, None)) {
            let value = serde_json::to_string(&value).unwrap();
            let k = json.iter().position(|j| *j == value).unwrap_or_else(|| {
                json.push(value);
                json.len() - 1
            });
            let _ = writeln!(plans, "        ({rule:?}, {k}),");
        }
        plans += "    ],\n";
    }
    out += "/// The distinct values of the per-request rules, as the plan reads them (JSON).\n";
    out += "pub(super) const JSON: &[&str] = &[\n";
    for j in &json {
        let _ = writeln!(out, "    {j:?},");
    }
    out += "];\n\n";
    out += "/// Per action, each per-request rule the default defines with its value\n";
    out += "/// (an index into `JSON`).\n";
    out += "pub(super) const PLANS: &[&[(&str, usize)]] = &[\n";
    out += &plans;
    out += "];\n";
    (out, bytes)
}

#[test]
fn the_default_table_is_regorus_answers() {
    let (data, bytes) = generate();
    let test = "the_default_table_is_regorus_answers";
    assert_generated(BYTES_PATH, &bytes, test);
    assert_generated(DATA_PATH, data.as_bytes(), test);
}

/// What the table does not hold is evaluated on the VM, as before: an
/// element deeper than [`MAX_INSIDE`] (`priority`), one with attributes
/// (`strip`), an action the table does not name; each decided as the
/// default's bytes compiled from a file decide it (no table).
#[test]
fn what_the_table_does_not_hold_is_evaluated() {
    let embedded = Policy::embedded_default().unwrap();
    let file =
        Policy::from_sources(vec![("copy.rego".to_string(), DEFAULT_SOURCE.to_string())]).unwrap();
    let deep = ElementInput {
        inside: inside(MAX_INSIDE + 1),
        ..projection(&[], 0, &[], &[]).unwrap()
    };
    let cell = ElementInput {
        role: Role::Cell,
        ..deep.clone()
    };
    let names = ["author", "lang"];
    let with_attributes = ElementInput {
        attribute_names: names.to_vec(),
        ..projection(&[], 0, &[], &[]).unwrap()
    };
    for (action, p) in [
        ("focus", &deep),
        ("focus", &cell),
        ("window", &with_attributes),
        ("summarize", &projection(&[], 0, &[], &[]).unwrap()),
    ] {
        let fresh = Policy::embedded_default().unwrap();
        let mut a = fresh.evaluator(&probe_request(action, None)).unwrap();
        // An action the table names plans without the program; a host's
        // own word plans on it (and the decision runs there too).
        assert_eq!(fresh.program_in_memory(), action == "summarize", "{action}");
        let mut b = file.evaluator(&probe_request(action, None)).unwrap();
        let (x, y) = (a.decide(p).unwrap(), b.decide(p).unwrap());
        assert_eq!(x, y, "{action}: {p:?}");
        assert!(fresh.program_in_memory(), "{action}: {p:?}");
        assert!(!fresh.interpreter_built(), "{action}: {p:?}");
        assert_eq!(a.evaluations(), b.evaluations());
    }
    // The deep Cell's priority is the else-chain's last branch but one.
    let mut a = embedded.evaluator(&probe_request("focus", None)).unwrap();
    assert_eq!(a.decide(&cell).unwrap().priority, -10.0);
    // And a shallow one the table holds loads nothing.
    let shallow = ElementInput {
        inside: inside(MAX_INSIDE),
        ..cell.clone()
    };
    let fresh = Policy::embedded_default().unwrap();
    let mut a = fresh.evaluator(&probe_request("focus", None)).unwrap();
    assert_eq!(a.decide(&shallow).unwrap().priority, -10.0);
    assert!(!fresh.program_in_memory());
}

/// The generator's check of what the default reads of the request refuses
/// every other read of `input`: the table would then hold the answers of
/// one request for every request with that action name.
#[test]
fn the_table_is_made_only_for_a_policy_reading_the_action_name_alone() {
    assert!(reads_only_the_action_name(DEFAULT_SOURCE));
    for (body, only) in [
        ("scope := \"app\" if input.action.name == \"app\"", true),
        ("keep contains \"k\" if input.element.focused", true),
        ("priority := 1 if count(input.inside) > 2", true),
        (
            "keep contains \"k\" if input.action.target == \"e1\"",
            false,
        ),
        (
            "keep contains \"k\" if \"x\" in input.app.title_matches",
            false,
        ),
        ("keep contains \"k\" if input.instance == \"a\"", false),
        (
            "keep contains \"k\" if { a := input.action; a.name == \"x\" }",
            false,
        ),
        (
            "keep contains \"k\" if { x := input; x.action.name == \"x\" }",
            false,
        ),
        (
            "keep contains \"k\" if input[\"action\"].name == \"x\"",
            false,
        ),
        // A comment or a string naming `input` is no read.
        (
            "# input.app\nkeep contains \"input.app\" if input.element.focused",
            true,
        ),
    ] {
        let source = format!("package ctxgate\n\n{body}\n");
        assert_eq!(reads_only_the_action_name(&source), only, "{body}");
    }
}

/// The title patterns' names are a position only in the plan's order, each
/// once; anything else is outside the table (the VM decides).
#[test]
fn title_matches_are_held_only_in_the_plans_order() {
    let titles = ["one-time-code", "passcode", "password", "pin"];
    assert_eq!(title_bits(&[], &titles), Some(0));
    assert_eq!(title_bits(&["passcode", "pin"], &titles), Some(0b1010));
    assert_eq!(title_bits(&["pin", "passcode"], &titles), None);
    assert_eq!(title_bits(&["pin", "pin"], &titles), None);
    assert_eq!(title_bits(&["other"], &titles), None);
    assert_eq!(title_bits(&["pin"], &[]), None);
}
