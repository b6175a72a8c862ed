//! The probe set: kinds of element the tools decide, to show what a
//! policy does (`policy check`, `doc`, `plan`, and every load). The fixed
//! set ([`probes`]) has each role, common subroles and each state; the
//! policy's own ([`policy_probes`]) adds what its rules mention — roles with
//! the subroles they name, attribute names (read or stripped) and the
//! values they are compared with, and every combination of the states they read — so a policy that
//! denies chat windows or masks private rows shows it.

use std::collections::{BTreeMap, BTreeSet};

use crate::policy::source::PolicyFile;
use crate::policy::token::{compared_literals, tokenize, TokenKind};
use crate::policy::{ElementInput, Role};

/// The actions the tools probe, narrowest first.
pub const ACTIONS: [&str; 4] = ["selection", "focus", "window", "app"];

/// One kind of element the tools decide, to show what a policy does.
#[derive(Debug, Clone)]
pub struct Probe {
    /// What it is, for a reader (`Text, subrole AXSecureTextField`).
    pub label: String,
    role: Role,
    subrole: Option<String>,
    focused: bool,
    selected: bool,
    hovered: bool,
    visible: bool,
    title_matches: Vec<String>,
    contains_selection: bool,
    inside: Vec<Role>,
    attribute_names: Vec<String>,
    attributes: Vec<(String, serde_json::Value)>,
    /// For a combination of states: the role it is a combination on.
    pub combination_of: Option<Role>,
}

impl Probe {
    fn new(label: impl Into<String>, role: Role) -> Probe {
        let inside = match role {
            Role::Application => vec![],
            Role::Window => vec![Role::Application],
            Role::Document => vec![Role::Window, Role::Application],
            _ => vec![Role::Group, Role::Window, Role::Application],
        };
        Probe {
            label: label.into(),
            role,
            subrole: None,
            focused: false,
            selected: false,
            hovered: false,
            visible: true,
            title_matches: Vec::new(),
            contains_selection: false,
            inside,
            attribute_names: Vec::new(),
            attributes: Vec::new(),
            combination_of: None,
        }
    }

    /// The projection the policy sees.
    pub fn input(&self) -> ElementInput<'_> {
        ElementInput {
            role: self.role,
            subrole: self.subrole.as_deref(),
            selected: self.selected,
            focused: self.focused,
            visible: self.visible,
            hovered: self.hovered,
            has_title: true,
            has_content: self.role == Role::Text,
            contains_selection: self.contains_selection,
            attribute_names: self.attribute_names.iter().map(String::as_str).collect(),
            attributes: self
                .attributes
                .iter()
                .map(|(n, v)| (n.as_str(), v))
                .collect(),
            title_matches: self.title_matches.iter().map(String::as_str).collect(),
            inside: self.inside.iter().map(|r| (*r, None)).collect(),
            secure_elsewhere: false,
        }
    }
}

/// The probe set: each role; common subroles (secure and password text,
/// a secure field of a role ctxgate does not know, read as `Group`; pane,
/// comment); each state; a Text with an `author`; a Text whose title
/// matches each title pattern.
pub fn probes(title_patterns: &[String]) -> Vec<Probe> {
    let mut out: Vec<Probe> = Role::ALL
        .iter()
        .map(|r| Probe::new(r.as_str(), *r))
        .collect();
    for (role, subrole) in [
        (Role::Text, "AXSecureTextField"),
        (Role::Text, "password"),
        (Role::Group, "AXSecureTextField"),
        (Role::Window, "pane"),
        (Role::Row, "comment"),
    ] {
        let mut p = Probe::new(format!("{role}, subrole {subrole}"), role);
        p.subrole = Some(subrole.to_string());
        out.push(p);
    }
    for role in [Role::Text, Role::Document] {
        let mut p = Probe::new(format!("{role}, focused"), role);
        p.focused = true;
        out.push(p);
        let mut p = Probe::new(format!("{role}, selected"), role);
        p.selected = true;
        out.push(p);
    }
    let mut p = Probe::new("Document, with the selection inside", Role::Document);
    p.contains_selection = true;
    out.push(p);
    let mut p = Probe::new("Text, hovered", Role::Text);
    p.hovered = true;
    out.push(p);
    for role in [Role::Group, Role::Text] {
        let mut p = Probe::new(format!("{role}, invisible"), role);
        p.visible = false;
        out.push(p);
    }
    // `strip` is asked only about an element with attributes: `author`, a
    // reserved attribute (RFC-0001 4.3), on Text.
    let mut p = Probe::new("Text, attribute `author`", Role::Text);
    p.attribute_names = vec!["author".to_string()];
    out.push(p);
    for name in title_patterns {
        let mut p = Probe::new(format!("Text, title matches `{name}`"), Role::Text);
        p.title_matches = vec![name.clone()];
        out.push(p);
    }
    out
}

/// The states a rule may read, as `input.element` names them.
const STATES: [&str; 5] = [
    "focused",
    "selected",
    "hovered",
    "visible",
    "contains_selection",
];

/// What a policy's rules mention: found on the source tokens, for probes.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Mentions {
    /// Role words compared with a `.role`.
    pub roles: BTreeSet<&'static str>,
    /// Subrole literals compared with a `.subrole`.
    pub subroles: BTreeSet<String>,
    /// Attribute names read (`attributes.x`, `"x" in ….attribute_names`)
    /// or stripped (`strip contains "x"`), each with the string values it
    /// is compared with.
    pub attributes: BTreeMap<String, BTreeSet<String>>,
    /// The states read (`.focused`, …), in [`STATES`] order.
    pub states: Vec<&'static str>,
}

/// What the policy files (tests excepted) mention.
pub fn mentions(files: &[PolicyFile]) -> Mentions {
    let mut m = Mentions::default();
    let mut states = BTreeSet::new();
    for file in files.iter().filter(|f| !f.is_test()) {
        let tokens = tokenize(&file.source);
        for word in compared_literals(&tokens, &["role"]) {
            if let Some(role) = Role::from_word(&word.text) {
                m.roles.insert(role.as_str());
            }
        }
        m.subroles.extend(
            compared_literals(&tokens, &["subrole"])
                .into_iter()
                .map(|t| t.text.clone()),
        );
        let mut names = BTreeSet::new();
        for (k, t) in tokens.iter().enumerate() {
            let after_dot = k > 0 && tokens[k - 1].text == ".";
            if after_dot && t.kind == TokenKind::Ident && STATES.contains(&t.text.as_str()) {
                states.insert(t.text.clone());
            }
            // `attributes.x`, `attributes["x"]`
            if after_dot && t.text == "attributes" {
                match (tokens.get(k + 1), tokens.get(k + 2), tokens.get(k + 3)) {
                    (Some(d), Some(n), _) if d.text == "." && n.kind == TokenKind::Ident => {
                        names.insert(n.text.clone());
                    }
                    (Some(b), Some(n), Some(c))
                        if b.text == "[" && n.kind == TokenKind::Str && c.text == "]" =>
                    {
                        names.insert(n.text.clone());
                    }
                    _ => {}
                }
            }
            // `strip contains "x"`: probed on elements that have it
            if !after_dot
                && t.kind == TokenKind::Ident
                && t.text == "strip"
                && tokens.get(k + 1).is_some_and(|c| c.text == "contains")
            {
                if let Some(n) = tokens.get(k + 2).filter(|n| n.kind == TokenKind::Str) {
                    names.insert(n.text.clone());
                }
            }
            // `"x" in input.element.attribute_names`
            if t.kind == TokenKind::Str
                && tokens.get(k + 1).is_some_and(|n| n.text == "in")
                && tokens
                    .iter()
                    .skip(k + 2)
                    .take(8)
                    .take_while(|n| n.text == "." || n.kind == TokenKind::Ident)
                    .any(|n| n.text == "attribute_names")
            {
                names.insert(t.text.clone());
            }
        }
        for name in names {
            let values = compared_literals(&tokens, &["attributes", &name]);
            m.attributes
                .entry(name)
                .or_default()
                .extend(values.into_iter().map(|t| t.text.clone()));
        }
    }
    m.states = STATES
        .iter()
        .copied()
        .filter(|s| states.contains(*s))
        .collect();
    m
}

/// How many states' combinations [`policy_probes`] tries at most: 2^5.
const MAX_STATES: usize = STATES.len();

/// The fixed probes and the policy's own: each mentioned role (and `Text`)
/// with each mentioned subrole; with each mentioned attribute, alone and
/// with each value it is compared with; and, with `combinations`, in every
/// combination of the states the policy reads (a state it does not read
/// cannot change a decision, so these are all the combinations that can).
pub fn policy_probes(m: &Mentions, title_patterns: &[String], combinations: bool) -> Vec<Probe> {
    let mut out = probes(title_patterns);
    let mut roles: Vec<Role> = m.roles.iter().filter_map(|w| Role::from_word(w)).collect();
    if !roles.contains(&Role::Text) {
        roles.push(Role::Text);
    }
    for role in &roles {
        for subrole in &m.subroles {
            let mut p = Probe::new(format!("{role}, subrole {subrole}"), *role);
            p.subrole = Some(subrole.clone());
            out.push(p);
        }
        for (name, values) in &m.attributes {
            let mut p = Probe::new(format!("{role}, attribute `{name}`"), *role);
            p.attribute_names = vec![name.clone()];
            out.push(p);
            for value in values {
                let mut p = Probe::new(format!("{role}, attribute `{name}` = `{value}`"), *role);
                p.attribute_names = vec![name.clone()];
                p.attributes = vec![(name.clone(), serde_json::Value::String(value.clone()))];
                out.push(p);
            }
        }
    }
    if combinations {
        let states = &m.states[..m.states.len().min(MAX_STATES)];
        let mut state_roles = roles.clone();
        if !state_roles.contains(&Role::Document) {
            state_roles.push(Role::Document);
        }
        for role in &state_roles {
            for bits in 1u32..(1 << states.len()) {
                let on: Vec<&str> = (0..states.len())
                    .filter(|i| bits & (1 << i) != 0)
                    .map(|i| states[i])
                    .collect();
                // One state alone is in the fixed set for Text and Document.
                let label = on
                    .iter()
                    .map(|s| if *s == "visible" { "invisible" } else { s })
                    .collect::<Vec<_>>()
                    .join(", ");
                let mut p = Probe::new(format!("{role}, {label}"), *role);
                p.combination_of = Some(*role);
                for s in &on {
                    match *s {
                        "focused" => p.focused = true,
                        "selected" => p.selected = true,
                        "hovered" => p.hovered = true,
                        "visible" => p.visible = false,
                        _ => p.contains_selection = true,
                    }
                }
                out.push(p);
            }
        }
    }
    // One probe per label: the fixed set already has some.
    let mut seen = BTreeSet::new();
    out.retain(|p| seen.insert(p.label.clone()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(source: &str) -> Vec<PolicyFile> {
        vec![PolicyFile {
            name: "p.rego".into(),
            source: source.into(),
        }]
    }

    #[test]
    fn mentions_are_found_on_the_source() {
        let m = mentions(&file(
            r#"package ctxgate
element_attributes := {"privacy"}
deny contains "chat" if {
	input.element.role == "Window"
	input.element.subrole == "chat"
}
mask contains "private" if {
	input.element.role in {"Row", "Cell"}
	input.element.attributes.privacy == "private"
	"AXValue" in input.element.attribute_names
}
priority := 10 if input.element.focused
priority := 20 if { "comment" == input.inside[0].subrole; input.element.selected }
strip contains "x-email" if input.action.name == "app"
"#,
        ));
        assert_eq!(
            m.roles.iter().copied().collect::<Vec<_>>(),
            ["Cell", "Row", "Window"]
        );
        assert_eq!(
            m.subroles.iter().cloned().collect::<Vec<_>>(),
            ["chat", "comment"]
        );
        assert_eq!(
            m.attributes["privacy"].iter().cloned().collect::<Vec<_>>(),
            ["private"]
        );
        assert!(m.attributes["AXValue"].is_empty());
        // A stripped name is probed on an element that has it.
        assert!(m.attributes["x-email"].is_empty());
        assert_eq!(m.states, ["focused", "selected"]);
        let probes = policy_probes(&m, &[], true);
        let labels: Vec<&str> = probes.iter().map(|p| p.label.as_str()).collect();
        for want in [
            "Window, subrole chat",
            "Row, attribute `privacy` = `private`",
            "Cell, attribute `AXValue`",
            "Row, attribute `x-email`",
            "Text, attribute `author`",
            "Row, focused, selected",
            "Document, focused, selected",
        ] {
            assert!(labels.contains(&want), "{want}: {labels:?}");
        }
        // Without combinations, no probe has two states.
        let probes = policy_probes(&m, &[], false);
        assert!(!probes.iter().any(|p| p.focused && p.selected));
    }
}
