//! The probe set: kinds of element the tools decide, to show what a
//! policy does (`policy check`, `doc`, `plan`).

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
            attribute_names: Vec::new(),
            attributes: Vec::new(),
            title_matches: self.title_matches.iter().map(String::as_str).collect(),
            inside: self.inside.iter().map(|r| (*r, None)).collect(),
        }
    }
}

/// The probe set: each role; common subroles (secure and password text,
/// a secure field of a role ctxgate does not know, read as `Group`; pane,
/// comment); each state; a Text whose title matches each title pattern.
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
    for name in title_patterns {
        let mut p = Probe::new(format!("Text, title matches `{name}`"), Role::Text);
        p.title_matches = vec![name.clone()];
        out.push(p);
    }
    out
}
