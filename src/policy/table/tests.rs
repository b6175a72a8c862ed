//! The table is regorus's answers: generated here from the default's
//! interpreter, and checked against what is committed.

use std::fmt::Write;

use super::super::engine::{probe_request, DEFAULT_SOURCE};
use super::super::inside::Inside;
use super::super::load::tests::assert_generated;
use super::super::token::{tokenize, Token, TokenKind};
use super::super::Policy;
use super::*;

/// The action names the table is made for: the scopes' words.
use super::super::probes::ACTIONS;
/// The name the table of every other action is made with.
const OTHER_ACTION: &str = "any-other-action";
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

/// The tokens at `at` spell `path`.
fn spells(tokens: &[Token], at: usize, path: &[&str]) -> bool {
    path.iter().enumerate().all(|(k, w)| {
        tokens
            .get(at + k)
            .is_some_and(|t| t.kind != TokenKind::Str && t.text == *w)
    })
}

/// A string literal's value at `at`, when the token's text is certainly it.
fn literal(tokens: &[Token], at: Option<usize>) -> Option<String> {
    let t = tokens.get(at?)?;
    (t.kind == TokenKind::Str && !t.text.contains('\\')).then(|| t.text.clone())
}

/// Every literal `input.action.name` is compared with, when it is read
/// only as `== "…"`, `!= "…"` (either side) or `in {"…", …}`: then every
/// name that is none of them gives every rule the same value.
fn action_names_compared(source: &str) -> Option<Vec<String>> {
    let tokens = tokenize(source);
    let path = ["input", ".", "action", ".", "name"];
    let word = |at: usize, w: &str| spells(&tokens, at, &[w]);
    let mut names = Vec::new();
    for at in (0..tokens.len()).filter(|&at| spells(&tokens, at, &path)) {
        let after = at + path.len();
        if (word(after, "==") || word(after, "!=")) && !word(after + 2, ".") {
            names.push(literal(&tokens, Some(after + 1))?);
        } else if word(after, "in") && word(after + 1, "{") {
            let mut k = after + 2;
            loop {
                names.push(literal(&tokens, Some(k))?);
                match tokens.get(k + 1).map(|t| t.text.as_str()) {
                    Some(",") => k += 2,
                    Some("}") => break,
                    _ => return None,
                }
            }
        } else if at >= 2 && (word(at - 1, "==") || word(at - 1, "!=")) && !word(after, ".") {
            names.push(literal(&tokens, Some(at - 2))?);
        } else {
            return None;
        }
    }
    names.sort();
    names.dedup();
    Some(names)
}

/// Every name tested for in `input.element.attribute_names`, when it is
/// read only as `"…" in input.element.attribute_names`: then which of them
/// are there is all a rule sees of the names.
fn attribute_names_tested(source: &str) -> Option<Vec<String>> {
    let tokens = tokenize(source);
    let path = ["input", ".", "element", ".", "attribute_names"];
    let mut names = Vec::new();
    for at in (0..tokens.len()).filter(|&at| spells(&tokens, at, &path)) {
        let after = at + path.len();
        let tested = at >= 3
            && spells(&tokens, at - 1, &["in"])
            && !spells(&tokens, at - 3, &["some"])
            && !spells(&tokens, at - 3, &[","])
            && !spells(&tokens, after, &["."])
            && !spells(&tokens, after, &["["]);
        if !tested {
            return None;
        }
        names.push(literal(&tokens, Some(at - 2))?);
    }
    names.sort();
    names.dedup();
    Some(names)
}

/// Whether `count(input.inside)` is only ever compared with a whole number
/// below `limit` (`count(input.inside) > 6`): then every count from `limit`
/// on gives every rule the same value.
fn inside_counted_below(source: &str, limit: usize) -> bool {
    let tokens = tokenize(source);
    let path = ["count", "(", "input", ".", "inside", ")"];
    let below = |at: usize| {
        tokens.get(at).is_some_and(|t| {
            t.kind == TokenKind::Number && t.text.parse::<usize>().is_ok_and(|n| n < limit)
        })
    };
    let compares = |at: usize| {
        ["==", "!=", "<", ">", "<=", ">="]
            .iter()
            .any(|op| spells(&tokens, at, &[op]))
    };
    let uses = (0..tokens.len())
        .filter(|&at| spells(&tokens, at, &["input", ".", "inside"]))
        .count();
    let counted: Vec<usize> = (0..tokens.len())
        .filter(|&at| spells(&tokens, at, &path))
        .collect();
    uses == counted.len()
        && counted.iter().all(|&at| {
            let after = at + path.len();
            (compares(after) && below(after + 1) && !spells(&tokens, after + 2, &["."]))
                || (at >= 2 && compares(at - 1) && below(at - 2))
        })
}

/// A subrole for each outcome of the tests/// A subrole for each outcome of the tests that some subrole has: the
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
    names: Names<'static>,
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
            Some(ATTRIBUTE_NAMES) => {
                element.attribute_names = (0..names.attributes.len())
                    .filter(|k| digit >> k & 1 == 1)
                    .map(|k| names.attributes[k])
                    .collect();
            }
            Some(TITLE_MATCHES) => {
                element.title_matches = (0..names.titles.len())
                    .filter(|k| digit >> k & 1 == 1)
                    .map(|k| names.titles[k])
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
    let actions = action_names_compared(DEFAULT_SOURCE).expect(
        "policies/default.rego reads `input.action.name` other than by comparing it with string literals; the table of every other action name cannot hold its answers",
    );
    assert!(!actions.iter().any(|a| a == OTHER_ACTION));
    let attributes = attribute_names_tested(DEFAULT_SOURCE).expect(
        "policies/default.rego reads `input.element.attribute_names` other than as `\"name\" in input.element.attribute_names`; the table cannot enumerate it",
    );
    assert!(
        inside_counted_below(DEFAULT_SOURCE, MAX_INSIDE),
        "policies/default.rego reads `count(input.inside)` other than by comparing it with a whole number below {MAX_INSIDE}; deeper elements cannot answer as one at {MAX_INSIDE}"
    );
    let policy = Policy::embedded_default().unwrap();
    let reads = policy.reads().clone();
    let rule_reads = policy
        .rule_reads()
        .expect("the default's rules have their reads");
    // The title patterns' names: one list for every action.
    // From the interpreter, not `Policy::plan` (which reads the table).
    let every_action: Vec<&str> = ACTIONS.into_iter().chain([OTHER_ACTION]).collect();
    let plans: Vec<_> = every_action
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
    let names = Names {
        titles: leaked(&titles),
        attributes: leaked(&attributes),
    };
    let subroles: &'static [Option<String>] = match &reads.subrole {
        Some(tests) => Box::leak(subroles(tests).into_boxed_slice()),
        None => &[],
    };

    let mut values: Vec<(Vec<String>, Option<f64>, bool)> = Vec::new();
    let mut bytes: Vec<u8> = Vec::new();
    let mut rules = String::new();
    for &(rule, fields, inside) in &rule_reads {
        let reads_of_rule = RuleReads { fields, inside };
        let Some(digits) = layout(&reads, reads_of_rule, names) else {
            let _ = writeln!(rules, "    ({rule:?}, None),");
            continue;
        };
        let size: usize = digits.iter().map(|(_, radix)| radix).product();
        let mut spans: Vec<(usize, usize)> = Vec::new();
        for &action in &every_action {
            let request = probe_request(action, None);
            let mut table = Vec::with_capacity(size);
            for at in 0..size {
                let byte = match projection(&digits, at, subroles, names) {
                    None => MISSING,
                    Some(element) => {
                        assert_eq!(position(&element, &reads, reads_of_rule, names), Some(at));
                        let value = policy.rule_value_interpreted(&request, &element, rule);
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
    out += "/// The action names there is a table for, in its order; after them, the\n";
    out += "/// table of every other name.\n";
    let _ = writeln!(out, "pub(super) const ACTIONS: &[&str] = &{ACTIONS:?};\n");
    out += "/// The plan's title patterns' names, in its order.\n";
    let _ = writeln!(out, "pub(super) const TITLES: &[&str] = &{titles:?};\n");
    out += "/// The attribute names the default tests for, sorted.\n";
    let _ = writeln!(
        out,
        "pub(super) const ATTRIBUTE_NAMES: &[&str] = &{attributes:?};\n"
    );
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
    for &action in &every_action {
        plans += "    &[\n";
        for (rule, value) in policy.plan_json_interpreted(&probe_request(action, None)) {
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
    out += "/// Per action (and every other), each per-request rule the default defines\n";
    out += "/// with its value (an index into `JSON`).\n";
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

/// What the finite domain stands for is answered from the table too, as
/// the default's bytes compiled from a file (no table) answer it: an
/// element deeper than [`MAX_INSIDE`] (`priority`), one with attributes
/// (`strip`, tested and untested names), an action the table does not name;
/// nothing is compiled.
#[test]
fn the_table_answers_beyond_its_domain_as_the_interpreter_does() {
    let file =
        Policy::from_sources(vec![("copy.rego".to_string(), DEFAULT_SOURCE.to_string())]).unwrap();
    let blank = || projection(&[], 0, &[], NAMES).unwrap();
    let deep = ElementInput {
        inside: inside(MAX_INSIDE + 300),
        ..blank()
    };
    let cell = ElementInput {
        role: Role::Cell,
        ..deep.clone()
    };
    let with = |names: &[&'static str], focused| ElementInput {
        attribute_names: names.to_vec(),
        focused,
        ..blank()
    };
    let projections = [
        deep,
        cell.clone(),
        with(&["author", "lang"], false),
        with(&["lang", "author"], true),
        with(&["lang"], false),
        with(&["author", "author"], false),
    ];
    for action in ["focus", "window", "app", "summarize", "", "Window"] {
        let fresh = Policy::embedded_default().unwrap();
        let mut a = fresh.evaluator(&probe_request(action, None)).unwrap();
        let mut b = file.evaluator(&probe_request(action, None)).unwrap();
        assert_eq!(
            format!("{:?}", a.plan()),
            format!("{:?}", b.plan()),
            "{action}"
        );
        for p in &projections {
            let (x, y) = (a.decide(p).unwrap(), b.decide(p).unwrap());
            assert_eq!(x, y, "{action}: {p:?}");
        }
        assert!(!fresh.interpreter_built(), "{action}");
    }
    // The window's authors are stripped.
    let fresh = Policy::embedded_default().unwrap();
    let mut a = fresh.evaluator(&probe_request("window", None)).unwrap();
    let stripped = a.decide(&projections[2]).unwrap();
    assert_eq!(stripped.strip, vec![std::sync::Arc::<str>::from("author")]);
    // The deep Cell's priority is the else-chain's last branch but one.
    let mut a = fresh.evaluator(&probe_request("focus", None)).unwrap();
    assert_eq!(a.decide(&cell).unwrap().priority, -10.0);
    assert!(!fresh.interpreter_built());
}

/// The generator's checks of how the default reads the action name, the
/// attribute names and the ancestors' count refuse every other read.
#[test]
fn the_table_stands_for_other_names_and_counts_only_where_the_reads_allow() {
    let policy = |body: &str| format!("package ctxgate\n\n{body}\n");
    assert_eq!(
        action_names_compared(DEFAULT_SOURCE),
        Some(vec![
            "app".to_string(),
            "focus".to_string(),
            "selection".to_string(),
            "window".to_string()
        ])
    );
    for (body, compared) in [
        ("scope := \"app\" if input.action.name == \"app\"", true),
        ("scope := \"app\" if \"app\" != input.action.name", true),
        (
            "keep contains \"k\" if input.action.name in {\"a\", \"b\"}",
            true,
        ),
        (
            "keep contains \"k\" if startswith(input.action.name, \"a\")",
            false,
        ),
        ("keep contains \"k\" if input.action.name in x", false),
        ("scope := input.action.name", false),
        ("keep contains \"k\" if input.action.name == x", false),
    ] {
        let found = action_names_compared(&policy(body));
        assert_eq!(found.is_some(), compared, "{body}");
    }
    assert_eq!(
        attribute_names_tested(DEFAULT_SOURCE),
        Some(vec!["author".to_string()])
    );
    for (body, tested) in [
        (
            "strip contains \"a\" if \"a\" in input.element.attribute_names",
            true,
        ),
        (
            "strip contains \"a\" if count(input.element.attribute_names) > 1",
            false,
        ),
        (
            "strip contains n if some n in input.element.attribute_names",
            false,
        ),
        (
            "strip contains \"a\" if input.element.attribute_names[0] == \"a\"",
            false,
        ),
        (
            "strip contains \"a\" if x in input.element.attribute_names",
            false,
        ),
    ] {
        let found = attribute_names_tested(&policy(body));
        assert_eq!(found.is_some(), tested, "{body}");
    }
    assert!(inside_counted_below(DEFAULT_SOURCE, MAX_INSIDE));
    for (body, below) in [
        ("priority := 1 if count(input.inside) > 6", true),
        ("priority := 1 if 6 < count(input.inside)", true),
        ("priority := 1 if count(input.inside) > 64", false),
        ("priority := count(input.inside)", false),
        ("priority := 1 if input.inside[70].role == \"Group\"", false),
        ("priority := 1 if count(input.inside) > 1.5", false),
    ] {
        assert_eq!(
            inside_counted_below(&policy(body), MAX_INSIDE),
            below,
            "{body}"
        );
    }
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
/// once; anything else is outside the table (the interpreter decides).
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
