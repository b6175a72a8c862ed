//! From a neutral source tree to a conforming answer: controls hoisted,
//! secure fields emptied, furniture dropped, the root synthesized, focus
//! settled on one path, visibility stated only where it changes, ids made
//! unique. Every importer ends here, so these rules hold for all formats.

use serde_json::Value;

use super::{error, Format};
use crate::error::Result;
use crate::model::{Answer, Content, Element, Role, PROTOCOL};

/// The text a filled secure field carries instead of its value.
pub const SECURE_MARKER: &str = "[secure value not imported]";

/// What the answer does with one source node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Reported with this role.
    Report(Role),
    /// A password field: `Text`, subrole `secure`, no value, no children.
    Secure,
    /// Not reported; its children are hoisted, its label kept as `Text`.
    Control,
    /// Not reported, nor anything inside it.
    Furniture,
}

/// One source node, in the source's own words, after its importer read it.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    /// The source's id, if it has one.
    pub id: Option<String>,
    /// The source's role word (`AXButton`, `PageTab`, `button`).
    pub word: String,
    /// What the answer does with it.
    pub kind: Kind,
    /// The subrole to report.
    pub subrole: Option<String>,
    /// Its name: one line a person could read.
    pub title: Option<String>,
    /// Text a person reads in it (a text's value), as a content block.
    pub text: Option<String>,
    /// For a secure field: whether the source showed a value. The value
    /// itself is never read; this only lets a masked field say it is filled.
    pub filled: bool,
    /// An address.
    pub url: Option<String>,
    /// The source marks it selected.
    pub selected: bool,
    /// The source marks it focused.
    pub focused: bool,
    /// Drawn on screen, when the source says.
    pub visible: Option<bool>,
    /// Anything else worth keeping, by name.
    pub attributes: Vec<(String, Value)>,
    /// Its children, in the source's order.
    pub children: Vec<Node>,
    /// Made up by the importer (an ARIA snapshot's `Document`), not read
    /// from the source: it does not count as something the import kept.
    pub synthetic: bool,
}

impl Node {
    /// A node of `kind` with the source's word and nothing else.
    pub fn new(word: impl Into<String>, kind: Kind) -> Node {
        Node {
            id: None,
            word: word.into(),
            kind,
            subrole: None,
            title: None,
            text: None,
            filled: false,
            url: None,
            selected: false,
            focused: false,
            visible: None,
            attributes: Vec::new(),
            children: Vec::new(),
            synthetic: false,
        }
    }
}

/// Builds the answer from the importer's top-level nodes. An answer that
/// would keep nothing the source said (every node a control without a
/// label, furniture or an empty group) is an error, never an empty shell:
/// it is a sign the input is not what the importer understood it to be.
pub(crate) fn answer(format: Format, top: Vec<Node>) -> Result<Answer<'static>> {
    let sources = top.iter().map(count).sum::<usize>();
    let mut elements = Vec::new();
    let mut kept = 0usize;
    for node in top {
        convert(node, &mut elements, &mut kept);
    }
    if kept == 0 {
        return Err(error(
            format,
            None,
            format!(
                "nothing in it could be kept: its {sources} {} only controls without a label, window furniture or empty groups; check that `--from {format}` is the input's format",
                if sources == 1 { "node is" } else { "nodes are" }
            ),
        ));
    }
    let mut root = wrap(elements);
    settle_focus(&mut root);
    // The root is visible (R2); what the source said of it does not carry.
    root.visible = None;
    settle_visible(&mut root, true);
    settle_ids(&mut root);
    Ok(Answer {
        protocol: PROTOCOL.to_string(),
        instance: format!("import:{}", format.name()),
        root,
    })
}

/// The source nodes in `node`'s subtree that the importer read (not made up).
fn count(node: &Node) -> usize {
    usize::from(!node.synthetic) + node.children.iter().map(count).sum::<usize>()
}

/// Appends what `node` becomes (nothing, one element, or its hoisted
/// children) to `out`; `kept` counts the elements made from source nodes.
fn convert(node: Node, out: &mut Vec<Element<'static>>, kept: &mut usize) {
    match node.kind {
        Kind::Furniture => {}
        Kind::Secure => {
            *kept += 1;
            out.push(Element {
                id: node.id.unwrap_or_default().into(),
                subrole: Some("secure".into()),
                title: node.title.map(Into::into),
                // A fixed marker, not the value: says the field is filled, so an
                // agent does not retype it; carries no length and no text of it.
                content: if node.filled {
                    vec![Content::text(SECURE_MARKER)]
                } else {
                    Vec::new()
                },
                selected: node.selected.then_some(true),
                focused: node.focused.then_some(true),
                visible: node.visible,
                ..Element::new("", Role::Text)
            })
        }
        Kind::Report(role) => {
            let mut children = Vec::new();
            for child in node.children {
                convert(child, &mut children, kept);
            }
            // A container holding only words is text.
            let role = if role == Role::Group && node.text.is_some() && children.is_empty() {
                Role::Text
            } else {
                role
            };
            let element = Element {
                id: node.id.unwrap_or_default().into(),
                subrole: node.subrole.map(Into::into),
                title: node.title.map(Into::into),
                content: node.text.into_iter().map(Content::text).collect(),
                url: node.url.map(Into::into),
                selected: node.selected.then_some(true),
                focused: node.focused.then_some(true),
                visible: node.visible,
                children: children.into(),
                attributes: node.attributes.into_iter().collect(),
                ..Element::new("", role)
            };
            if !is_empty(&element) {
                *kept += usize::from(!node.synthetic);
                out.push(element);
            }
        }
        Kind::Control => {
            let start = out.len();
            for child in node.children {
                convert(child, out, kept);
            }
            let hoisted_text = out[start..].iter().any(carries_text);
            let label = node.title.or(node.text);
            match label {
                Some(label) if !hoisted_text || node.selected || node.focused => {
                    let element = Element {
                        id: node.id.unwrap_or_default().into(),
                        subrole: Some(node.subrole.unwrap_or(node.word).into()),
                        content: vec![Content::text(label)],
                        // A control's states (an ARIA checkbox's `checked`).
                        attributes: node.attributes.into_iter().collect(),
                        selected: node.selected.then_some(true),
                        focused: node.focused.then_some(true),
                        visible: node.visible,
                        ..Element::new("", Role::Text)
                    };
                    *kept += 1;
                    out.insert(start, element);
                }
                _ => {
                    // No label to carry the focus: the first hoisted element does.
                    if node.focused {
                        if let Some(first) = out.get_mut(start) {
                            first.focused = Some(true);
                        }
                    }
                }
            }
        }
    }
}

/// A `Group` or `Image` with nothing a person reads and no state.
fn is_empty(element: &Element) -> bool {
    matches!(element.role.read(), Role::Group | Role::Image)
        && element.title.is_none()
        && element.content.is_empty()
        && element.url.is_none()
        && element.children.is_empty()
        && element.selected.is_none()
        && element.focused.is_none()
}

fn carries_text(element: &Element) -> bool {
    element.title.is_some()
        || !element.content.is_empty()
        || element.children.iter().any(carries_text)
}

/// Puts the elements under an `Application` (and a `Window` where none is).
fn wrap(mut elements: Vec<Element>) -> Element {
    if elements.len() == 1 && elements[0].role.read() == Role::Application {
        return elements.remove(0);
    }
    let is_window = |e: &Element| e.role.read() == Role::Window;
    let title = elements
        .iter()
        .find(|e| matches!(e.role.read(), Role::Window | Role::Document))
        .and_then(|e| e.title.clone());
    let children = if !elements.is_empty() && elements.iter().all(is_window) {
        elements
    } else {
        vec![Element {
            title: title.clone(),
            children: elements.into(),
            ..Element::new("window", Role::Window)
        }]
    };
    Element {
        title,
        children: children.into(),
        ..Element::new("app", Role::Application)
    }
}

/// Keeps one focus path: to the deepest element marked focused (the first
/// in document order among equals), marking its ancestors below the root.
fn settle_focus(root: &mut Element) {
    fn deepest(element: &Element, path: &mut Vec<usize>, best: &mut Option<Vec<usize>>) {
        if element.focused == Some(true) && best.as_ref().is_none_or(|b| path.len() > b.len()) {
            *best = Some(path.clone());
        }
        for (i, child) in element.children.iter().enumerate() {
            path.push(i);
            deepest(child, path, best);
            path.pop();
        }
    }
    fn clear(element: &mut Element) {
        element.focused = None;
        for child in element.children.iter_mut() {
            clear(child);
        }
    }
    let mut best = None;
    deepest(root, &mut Vec::new(), &mut best);
    clear(root);
    let Some(path) = best else { return };
    let mut at = root;
    for i in path {
        at = &mut at.children[i];
        at.focused = Some(true);
    }
}

/// States `visible` only where it differs from the parent's (R2).
fn settle_visible(element: &mut Element, parent: bool) {
    let own = element.visible.unwrap_or(parent);
    element.visible = (own != parent).then_some(own);
    for child in element.children.iter_mut() {
        settle_visible(child, own);
    }
}

/// Fills missing ids with `n<position>` and makes repeats unique.
fn settle_ids(root: &mut Element) {
    let mut seen = std::collections::HashSet::new();
    let mut position = 0usize;
    let mut stack: Vec<&mut Element> = vec![root];
    while let Some(element) = stack.pop() {
        position += 1;
        if element.id.is_empty() {
            element.id = format!("n{position}").into();
        }
        if !seen.insert(element.id.to_string()) {
            let base = element.id.to_string();
            let mut n = 2;
            while !seen.insert(format!("{base}-{n}")) {
                n += 1;
            }
            element.id = format!("{base}-{n}").into();
        }
        stack.extend(element.children.iter_mut().rev());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(word: &str, kind: Kind, children: Vec<Node>) -> Node {
        Node {
            children,
            ..Node::new(word, kind)
        }
    }

    #[test]
    fn a_control_keeps_its_label_or_its_text_once() {
        let mut labelled = node("AXButton", Kind::Control, vec![]);
        labelled.title = Some("Send".into());
        let mut inner = node("AXStaticText", Kind::Report(Role::Text), vec![]);
        inner.text = Some("Font".into());
        let mut item = node("AXMenuItem", Kind::Control, vec![inner]);
        item.title = Some("Font".into());
        let doc = node(
            "AXWebArea",
            Kind::Report(Role::Document),
            vec![labelled, item],
        );
        let answer = answer(Format::AxDump, vec![doc]).unwrap();
        let doc = &answer.root.children[0].children[0];
        let words: Vec<_> = doc
            .children
            .iter()
            .map(|e| (e.role.as_str(), e.subrole.as_deref()))
            .collect();
        assert_eq!(words, [("Text", Some("AXButton")), ("Text", None)]);
        assert!(crate::check::check(&answer).iter().all(|f| !f.is_error()));
    }

    #[test]
    fn a_leaf_focus_marks_its_ancestors_and_other_marks_go() {
        let mut leaf = node("AXStaticText", Kind::Report(Role::Text), vec![]);
        leaf.text = Some("x".into());
        leaf.focused = true;
        let mut stray = node("AXStaticText", Kind::Report(Role::Text), vec![]);
        stray.text = Some("y".into());
        stray.focused = true;
        let group = node("AXGroup", Kind::Report(Role::Group), vec![leaf]);
        let doc = node(
            "AXWebArea",
            Kind::Report(Role::Document),
            vec![stray, group],
        );
        let answer = answer(Format::AxDump, vec![doc]).unwrap();
        let tree = crate::Tree::new(&answer.root);
        let focused: Vec<&str> = tree
            .nodes()
            .iter()
            .filter(|n| n.focused)
            .map(|n| &*n.element.id)
            .collect();
        assert_eq!(focused, ["window", "n3", "n5", "n6"]);
        assert!(crate::check::check(&answer).is_empty());
    }

    #[test]
    fn furniture_goes_whole_secure_keeps_only_its_title_and_ids_stay_unique() {
        let mut inside = node("AXStaticText", Kind::Report(Role::Text), vec![]);
        inside.text = Some("50%".into());
        let bar = node("AXScrollBar", Kind::Furniture, vec![inside]);
        let mut secret = node("AXStaticText", Kind::Report(Role::Text), vec![]);
        secret.text = Some("hunter2".into());
        let mut field = node("AXTextField", Kind::Secure, vec![secret]);
        field.title = Some("PIN".into());
        field.id = Some("a".into());
        let mut words = node("AXGroup", Kind::Report(Role::Group), vec![]);
        words.text = Some("plain words".into());
        words.id = Some("a".into());
        let window = node(
            "AXWindow",
            Kind::Report(Role::Window),
            vec![bar, field, words],
        );
        let answer = answer(Format::AxJson, vec![window]).unwrap();
        let window = &answer.root.children[0];
        let kids: Vec<_> = window
            .children
            .iter()
            .map(|e| (&*e.id, e.role.as_str(), e.subrole.as_deref()))
            .collect();
        assert_eq!(kids, [("a", "Text", Some("secure")), ("a-2", "Text", None)]);
        assert_eq!(window.children[0].title.as_deref(), Some("PIN"));
        assert!(window.children[0].content.is_empty() && window.children[0].children.is_empty());
        assert!(!serde_json::to_string(&answer).unwrap().contains("hunter2"));
    }
}
