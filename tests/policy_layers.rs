//! The composition rule for policy layers: a later layer may extend the
//! contract's partial sets with `contains`; it may not give a value to a
//! name an earlier layer defines or reads (a complete rule, a `default`, a
//! function, an `else` chain), extend a partial set an earlier layer reads,
//! or define a built-in's name. Each way is refused at load, naming both
//! places, by the library, `trim`, `serve` and `policy check` alike; and a
//! layer that only adds to `deny`, `mask`, `strip`, `redact` or `prune`
//! never sends more than the layers before it.

use std::collections::BTreeSet;

use ctxgate::{Budget, Format, Gate, Policy, Request};
use proptest::prelude::*;

mod common;

const DEFAULT: &str = include_str!("../policies/default.rego");

fn default_layer() -> Vec<(String, String)> {
    vec![("policies/default.rego".to_string(), DEFAULT.to_string())]
}

fn layer(name: &str, body: &str) -> Vec<(String, String)> {
    vec![(name.to_string(), format!("package ctxgate\n\n{body}\n"))]
}

/// The load error of `layers`, as `location: message`.
fn refusal(layers: Vec<Vec<(String, String)>>) -> String {
    match Policy::from_layers(layers) {
        Ok(_) => panic!("the layers loaded"),
        Err(ctxgate::Error::Policy { location, message }) => format!("{location}: {message}"),
        Err(other) => panic!("not a policy error: {other}"),
    }
}

/// A base that denies text inside more than one ancestor, and masks
/// text titled like a secret through a helper.
const BASE: &str = r#"
deny contains "deep" if {
	input.element.role == "Text"
	count(input.inside) > 1
}

mask contains "titled" if titled

titled if input.element.title_matches[_] == "secret"

default wide := false

scope := "app" if wide
else := "focus"
"#;

fn base() -> Vec<(String, String)> {
    layer("base/base.rego", BASE)
}

#[test]
fn a_later_layer_may_not_shadow_a_builtin() {
    for (body, builtin) in [
        ("count(x) := 0", "count"),
        ("lower(x) := \"a\"", "lower"),
        ("regex.match(p, s) := false", "regex"),
        ("object.get(o, k, d) := d", "object"),
        ("sum(x) := 0", "sum"),
        ("startswith(a, b) := false", "startswith"),
    ] {
        let message = refusal(vec![base(), layer("site/site.rego", body)]);
        assert!(
            message.starts_with("site/site.rego:3:1: `")
                && message.contains(&format!("built-in (`{builtin}"))
                && message.contains("rename it"),
            "{body}: {message}"
        );
    }
    // In one layer too: a policy has no reason to replace a built-in.
    let message = refusal(vec![layer(
        "one.rego",
        "count(x) := 0\ndeny contains \"a\" if count(input.inside) > 1",
    )]);
    assert!(message.contains("built-in (`count`)"), "{message}");
}

#[test]
fn a_later_layer_may_not_redefine_an_earlier_layers_name_in_any_form() {
    for (body, name) in [
        // A `default` for an earlier layer's rule or helper.
        ("default titled := false", "titled"),
        ("default wide := true", "wide"),
        // An ordinary rule for a name the earlier layer gave a `default`.
        ("wide if true", "wide"),
        // An `else` chain.
        (
            "wide := true if { input.action.name == \"x\" } else := true",
            "wide",
        ),
        // A function of the same name.
        ("titled(x) := true", "titled"),
        ("default titled(_) := true", "titled"),
        // A complete rule for a single-valued contract rule.
        ("scope := \"app\"", "scope"),
        // A dotted head under the earlier name.
        ("wide.really := true", "wide"),
        // A contract set given a complete value instead of extended.
        ("mask := set()", "mask"),
    ] {
        let message = refusal(vec![base(), layer("site/site.rego", body)]);
        assert!(
            message.starts_with("site/site.rego:3:1: ")
                && message.contains(&format!(
                    "`{name}` is also defined by layer 1 (base/base.rego:"
                ))
                && message.contains("a layer may not change what an earlier layer's rules mean"),
            "{body}: {message}"
        );
    }
}

#[test]
fn a_later_layer_may_not_define_a_name_an_earlier_layer_reads() {
    // The base reads `trusted` and `extra_roles`, which it does not define.
    let reads = r#"
keep contains "trusted" if data.ctxgate.trusted
deny contains "role" if input.element.role in data.ctxgate.extra_roles
prune contains "listed" if input.element.role in data.ctxgate["listed"]
"#;
    for (body, name) in [
        ("trusted := true", "trusted"),
        ("default trusted := true", "trusted"),
        ("extra_roles := set()", "extra_roles"),
        ("listed := set()", "listed"),
    ] {
        let message = refusal(vec![
            layer("base/base.rego", reads),
            layer("site/site.rego", body),
        ]);
        assert!(
            message.starts_with("site/site.rego:3:1: ")
                && message.contains(&format!(
                    "defines `{name}`, which a rule of layer 1 reads (base/base.rego:"
                )),
            "{body}: {message}"
        );
    }
    // Through an import's alias.
    let imported = "import data.ctxgate.helper as h\n\nkeep contains \"h\" if h";
    let message = refusal(vec![
        layer("base/base.rego", imported),
        layer("site/site.rego", "helper := true"),
    ]);
    assert!(
        message.contains("defines `helper`, which a rule of layer 1 reads"),
        "{message}"
    );
    // A read of `data` that names no rule reads every name.
    let dynamic = "keep contains \"any\" if { some name; data.ctxgate[name] == true }";
    let message = refusal(vec![
        layer("base/base.rego", dynamic),
        layer("site/site.rego", "anything := true"),
    ]);
    assert!(
        message.contains("defines `anything`, which a rule of layer 1 reads"),
        "{message}"
    );
}

#[test]
fn a_later_layer_may_not_extend_a_set_an_earlier_layer_reads() {
    let reads = "keep contains \"when-denied\" if count(deny) > 0";
    let message = refusal(vec![
        layer("base/base.rego", reads),
        layer(
            "site/site.rego",
            "deny contains \"x\" if input.element.role == \"Image\"",
        ),
    ]);
    assert!(
        message.starts_with("site/site.rego:3:1: this layer extends `deny`, which a rule of layer 1 reads (base/base.rego:3:"),
        "{message}"
    );
}

#[test]
fn a_later_layer_may_extend_the_partial_sets_and_read_what_is_there() {
    for body in [
        "deny contains \"chat\" if input.element.subrole == \"chat\"",
        "mask contains \"titled-too\" if titled",
        "keep contains \"headings\" if input.element.role == \"Heading\"",
        "prune contains \"images\" if input.element.role == \"Image\"",
        "strip contains \"author\" if wide",
        "redact contains {\"id\": \"ticket\", \"pattern\": `TICKET-[0-9]{6}`, \"replace\": \"[ticket]\"}",
        "element_attributes contains \"kind\"",
        // Its own helpers, under names no earlier layer uses.
        "deny contains \"own\" if own_helper\n\nown_helper if { some a in input.inside; a.role == \"Table\" }",
    ] {
        Policy::from_layers(vec![base(), layer("site/site.rego", body)])
            .unwrap_or_else(|e| panic!("{body}: {e}"));
    }
    // The embedded default with a site layer extending it.
    Policy::from_layers(vec![
        default_layer(),
        layer(
            "site/site.rego",
            "deny contains \"chat\" if input.element.subrole == \"chat\"",
        ),
    ])
    .unwrap();
}

/// The two changes of meaning that loaded: one line un-strips the
/// default's `author`, another widens `focus` to the whole app.
#[test]
fn a_layer_cannot_unstrip_the_defaults_author_or_widen_its_scope() {
    let message = refusal(vec![
        default_layer(),
        layer("site/site.rego", "default on_focus_or_selected := true"),
    ]);
    assert!(
        message
            .contains("`on_focus_or_selected` is also defined by layer 1 (policies/default.rego:"),
        "{message}"
    );
    let message = refusal(vec![
        default_layer(),
        layer("site/site.rego", "default scope := \"app\""),
    ]);
    assert!(
        message.contains("`scope` is also defined by layer 1 (policies/default.rego:40:1)"),
        "{message}"
    );
}

#[test]
fn the_cli_refuses_a_widening_layer_in_trim_and_policy_check() {
    let site = std::env::temp_dir().join(format!("ctxgate-policy-layers-{}", std::process::id()));
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(site.join("site.rego"), "package ctxgate\n\ncount(x) := 0\n").unwrap();
    let site = site.to_str().unwrap();
    let trim = common::ctxgate(
        &[
            "trim",
            "--policy",
            "default",
            "--policy",
            site,
            "examples/notes.json",
        ],
        b"",
    );
    assert_eq!(trim.status.code(), Some(2));
    assert!(trim.stdout.is_empty());
    let err = String::from_utf8_lossy(&trim.stderr);
    assert!(
        err.contains("site.rego:3:1: `count` is the name of a built-in"),
        "{err}"
    );
    let check = common::ctxgate(&["policy", "check", "default", site], b"");
    assert_eq!(check.status.code(), Some(1));
    let out = String::from_utf8_lossy(&check.stdout);
    assert!(
        out.contains("site.rego:3:1: error: `count` is the name of a built-in"),
        "{out}"
    );
}

// The differential property: a layer that only adds to `deny`, `mask`,
// `strip`, `redact` or `prune` sends no element, attribute or string the
// base alone withheld; one that also tries to change the base's meaning
// does not load.

const ROLES: [&str; 6] = ["Text", "List", "Group", "Link", "Heading", "Image"];
const WORDS: [&str; 6] = ["alpha", "bravo", "charlie", "delta", "echo", "fox"];

#[derive(Debug, Clone)]
struct Node {
    role: usize,
    title: usize,
    visible: bool,
    author: bool,
    children: Vec<Node>,
}

fn node() -> impl Strategy<Value = Node> {
    let leaf = (0..ROLES.len(), 0..WORDS.len(), any::<bool>(), any::<bool>()).prop_map(
        |(role, title, visible, author)| Node {
            role,
            title,
            visible: visible || role == 0,
            author,
            children: vec![],
        },
    );
    leaf.prop_recursive(3, 24, 4, |inner| {
        (
            0..ROLES.len(),
            0..WORDS.len(),
            any::<bool>(),
            prop::collection::vec(inner, 0..4),
        )
            .prop_map(|(role, title, author, children)| Node {
                role: if role == 0 { 2 } else { role },
                title,
                visible: true,
                author,
                children,
            })
    })
}

fn json(node: &Node, path: &str, first: bool) -> serde_json::Value {
    let mut el = serde_json::json!({
        "id": path,
        "role": ROLES[node.role],
        "title": format!("{} {path}", WORDS[node.title]),
    });
    if !node.visible {
        el["visible"] = false.into();
    }
    if first {
        el["focused"] = true.into();
    }
    if node.author {
        el["attributes"] = serde_json::json!({"author": format!("author-{path}")});
    }
    if node.role == 0 {
        el["content"] =
            serde_json::json!([{"type": "text", "text": format!("words-{path} code-{path}")}]);
    }
    if !node.children.is_empty() {
        el["children"] = node
            .children
            .iter()
            .enumerate()
            .map(|(i, c)| json(c, &format!("{path}-{i}"), first && i == 0))
            .collect();
    }
    el
}

/// One rule a narrowing layer adds.
fn narrowing() -> impl Strategy<Value = String> {
    let role = 0..ROLES.len();
    let word = 0..WORDS.len();
    prop_oneof![
        role.clone().prop_map(|r| format!(
            "deny contains \"layer-deny\" if input.element.role == \"{}\"",
            ROLES[r]
        )),
        role.clone().prop_map(|r| format!(
            "mask contains \"layer-mask\" if input.element.role == \"{}\"",
            ROLES[r]
        )),
        role.clone().prop_map(|r| format!(
            "prune contains \"layer-prune\" if input.element.role == \"{}\"",
            ROLES[r]
        )),
        role.prop_map(|r| format!(
            "deny contains \"inside\" if {{ some a in input.inside; a.role == \"{}\" }}",
            ROLES[r]
        )),
        Just("strip contains \"author\" if true".to_string()),
        word.prop_map(|w| format!(
            "redact contains {{\"id\": \"layer-{}\", \"pattern\": `{}`, \"replace\": \"[w]\"}}",
            WORDS[w], WORDS[w]
        )),
    ]
}

/// Ways to change an earlier layer's meaning: each refused at load.
fn changing() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "count(x) := 0",
        "default wide := true",
        "default titled := false",
        "default on_focus_or_selected := true",
        "scope := \"app\" if input.action.name == \"summarize\"",
        "lower(x) := \"window\"",
    ])
    .prop_map(str::to_string)
}

/// Every word of every string value: ids, titles, attribute values, text.
fn strings(value: &serde_json::Value, out: &mut BTreeSet<String>) {
    match value {
        serde_json::Value::String(s) => {
            out.extend(s.split(|c: char| c.is_whitespace()).map(str::to_string));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|i| strings(i, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

fn sent(policy: Policy, answer: &[u8], action: &str) -> BTreeSet<String> {
    let gate = Gate::new(policy);
    let request = Request::new(action)
        .budget(Budget::Bytes(1 << 20))
        .format(Format::Json);
    let out = gate.trim_bytes(answer, &request).expect("trims");
    let value: serde_json::Value = serde_json::from_str(&out.rendered).unwrap();
    let mut set = BTreeSet::new();
    strings(&value, &mut set);
    set
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn a_narrowing_layer_never_sends_more_than_the_base(
        root in node(),
        rules in prop::collection::vec(prop_oneof![3 => narrowing(), 1 => changing()], 1..4),
        action in prop::sample::select(vec!["selection", "focus", "window", "app", "summarize"]),
        on_default in any::<bool>(),
    ) {
        let answer = serde_json::json!({
            "protocol": "0.2.0",
            "instance": "i",
            "root": {"id": "app", "role": "Application", "children": [
                {"id": "win", "role": "Window", "focused": true, "children": [
                    json(&root, "n", true),
                    {"id": "side", "role": "Group", "children": [{
                        "id": "deep", "role": "Text", "title": "deep-title",
                        "attributes": {"author": "author-deep"},
                        "content": [{"type": "text", "text": "deep-words"}],
                    }]},
                ]}
            ]},
        });
        let bytes = serde_json::to_vec(&answer).unwrap();
        let mut provided = BTreeSet::new();
        strings(&answer, &mut provided);
        let base = if on_default { default_layer() } else { base() };
        let alone = sent(Policy::from_layers(vec![base.clone()]).unwrap(), &bytes, action);
        let site = layer("site/site.rego", &rules.join("\n\n"));
        // A layer that tries to change the base's meaning is refused.
        let Ok(layered) = Policy::from_layers(vec![base, site]) else {
            return Ok(());
        };
        let layered = sent(layered, &bytes, action);
        // What the provider wrote that only the layered policy sends.
        let more: Vec<&String> = layered
            .difference(&alone)
            .filter(|s| provided.contains(*s))
            .collect();
        prop_assert!(more.is_empty(), "sent only with the layer: {:?}", more);
    }
}
