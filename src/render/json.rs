//! Compact JSON: a conforming 0.2.0 answer, fields in the RFC's order.
//!
//! Strings are written by [`super::escape`]: as serde_json writes them,
//! except that NEL and the other C1 controls, U+2028, U+2029 and format
//! chars (bidi controls, zero-width chars, U+FEFF, tags) are `\uXXXX`
//! escapes too, so an agent or a person shown the JSON sees every char
//! that could break a line or reorder text. The JSON reads back to the same
//! strings.

use std::io::Write;

use super::escape::{json_value, quoted};
use crate::model::doc::Fields;
use crate::model::{Answer, Element};

/// The answer as compact JSON.
pub fn json(answer: &Answer) -> String {
    let mut out = Vec::with_capacity(4096);
    json_start(&mut out, &answer.protocol, &answer.instance);
    tree(&mut out, &answer.root);
    out.extend_from_slice(JSON_END.as_bytes());
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

// The pieces `json` writes an answer from, for a writer that keeps each
// element's rendering (the fitter's probes, `trim::fill`): the start, then
// the root as `json_head`, its children (`JSON_FIRST_CHILD` before the
// first, `JSON_NEXT_CHILD` before each later one, `JSON_LAST_CHILD` after
// the last; each child the same way), `json_tail`, then `JSON_END`.

/// What [`json`] writes before the root.
pub(crate) fn json_start(out: &mut Vec<u8>, protocol: &str, instance: &str) {
    out.extend_from_slice(b"{\"protocol\":");
    string(out, protocol);
    out.extend_from_slice(b",\"instance\":");
    string(out, instance);
    out.extend_from_slice(b",\"root\":");
}

/// What [`json`] writes after the root.
pub(crate) const JSON_END: &str = "}";
/// Before an element's first child.
pub(crate) const JSON_FIRST_CHILD: &str = ",\"children\":[";
/// Before each later child.
pub(crate) const JSON_NEXT_CHILD: &str = ",";
/// After the last child.
pub(crate) const JSON_LAST_CHILD: &str = "]";

/// An element's own bytes before its children, as [`json`] writes them.
pub(crate) fn json_head(out: &mut Vec<u8>, element: &Element) {
    head(out, element);
}

/// An element's own bytes after its children, as [`json`] writes them.
pub(crate) fn json_tail(out: &mut Vec<u8>, element: &Element) {
    tail(out, element);
}

/// The bytes one element adds on its own (no children), as `json` writes it.
#[cfg(any(test, feature = "internals"))]
pub fn json_element_fragment(element: &Element) -> usize {
    json_fragment(element)
}

/// [`json_element_fragment`] of an element or a doc's element.
pub(crate) fn json_fragment(element: &impl Fields) -> usize {
    let mut out = Vec::with_capacity(256);
    head(&mut out, element);
    tail(&mut out, element);
    out.len()
}

fn tree(out: &mut Vec<u8>, root: &Element) {
    // (element, next child to write)
    let mut stack: Vec<(&Element, usize)> = vec![(root, 0)];
    head(out, root);
    while let Some((element, next)) = stack.last_mut() {
        let element: &Element = element;
        if *next < element.children.len() {
            let child = &element.children[*next];
            out.extend_from_slice(match *next {
                0 => JSON_FIRST_CHILD.as_bytes(),
                _ => JSON_NEXT_CHILD.as_bytes(),
            });
            *next += 1;
            head(out, child);
            stack.push((child, 0));
        } else {
            if !element.children.is_empty() {
                out.extend_from_slice(JSON_LAST_CHILD.as_bytes());
            }
            tail(out, element);
            stack.pop();
        }
    }
}

/// Everything before `children`.
fn head(out: &mut Vec<u8>, element: &impl Fields) {
    out.extend_from_slice(b"{\"id\":");
    string(out, element.id());
    out.extend_from_slice(b",\"role\":");
    string(out, element.role_word());
    if let Some(subrole) = element.subrole() {
        out.extend_from_slice(b",\"subrole\":");
        string(out, subrole);
    }
    if let Some(title) = element.title() {
        out.extend_from_slice(b",\"title\":");
        string(out, title);
    }
    if !element.content().is_empty() {
        out.extend_from_slice(b",\"content\":");
        json_value(out, element.content());
    }
    if let Some(url) = element.url() {
        out.extend_from_slice(b",\"url\":");
        string(out, url);
    }
    let [selected, focused, visible, hovered] = element.states();
    for (name, state) in [
        ("selected", selected),
        ("focused", focused),
        ("visible", visible),
        ("hovered", hovered),
    ] {
        if let Some(state) = state {
            let _ = write!(out, ",\"{name}\":{state}");
        }
    }
}

/// Everything after `children`.
fn tail(out: &mut Vec<u8>, element: &impl Fields) {
    if !element.attributes().is_empty() {
        out.extend_from_slice(b",\"attributes\":");
        json_value(out, element.attributes());
    }
    out.push(b'}');
}

fn string(out: &mut Vec<u8>, s: &str) {
    // Writing to memory cannot fail.
    let _ = quoted(out, s);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Role;

    #[test]
    fn matches_serde_and_fragments_add_up() {
        let bytes =
            std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/notes.json")).unwrap();
        let answer = crate::read_conforming(&bytes, &crate::Limits::default()).unwrap();
        let ours = json(&answer);
        assert_eq!(ours, serde_json::to_string(&answer).unwrap());
        let tree = crate::Tree::new(&answer.root);
        // Fragments + `,"children":[` + `]` per parent + `,` per later sibling + the envelope.
        let mut total = 0;
        for node in tree.nodes() {
            total += json_element_fragment(node.element);
            let n = node.element.children.len();
            if n > 0 {
                total += 14 + (n - 1);
            }
        }
        let envelope = ours.len() - serde_json::to_string(&answer.root).unwrap().len();
        assert_eq!(total + envelope, ours.len());
        let _ = Role::Text;
    }
}
