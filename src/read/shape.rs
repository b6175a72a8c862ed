//! What the checker reads of a tree, read without the tree: for each
//! element its id, role, parent, place among its siblings, the end of its
//! subtree and whether it is focused, in document order (56 bytes an
//! element, against 176 for an [`Element`] in its parent's list and 32 for
//! its [`crate::model::Node`]), and of the attributes only those a rule
//! finds something in or reads (a state's name, an `author` that is not a
//! string, `related`), and the places of content payloads that are not
//! base64.
//!
//! The fast reader fills it as it reads ([`super::read_shape`]): each
//! element is read whole, as it always is, then its id and role are moved
//! here, those attributes copied, and the rest is dropped, so no element
//! outlives its reading. The rules are checked over it by the same code
//! that checks a [`crate::model::Tree`] (`check.rs`).

use std::borrow::Cow;

use serde_json::Value;

use crate::model::content::{not_base64, Payload};
use crate::model::{Attributes, Element, RoleName, STATES};

/// Positions are `u32`, as the tree's are (`max_elements` is far below).
const NO_PARENT: u32 = u32::MAX;

/// An answer's shape: its elements in document order, as the checker
/// reads them.
#[derive(Default)]
pub(crate) struct Shape<'a> {
    nodes: Vec<ShapeNode<'a>>,
    /// Of each element's attributes those named for a state, an `author`
    /// that is not a string, `related`, by position, in document order
    /// (none for most elements).
    attributes: Vec<(u32, Attributes)>,
    /// The payloads that are not base64 ([`not_base64`]), by
    /// position, in document order (none for most answers).
    payloads: Vec<(u32, Payload)>,
    /// The elements still being read, outermost first: each one's position
    /// and the number of its children opened so far.
    open: Vec<(u32, u32)>,
}

struct ShapeNode<'a> {
    id: Cow<'a, str>,
    role: RoleName,
    parent: u32,
    /// The place among its siblings.
    index: u32,
    /// One past the last position of its subtree.
    end: u32,
    focused: bool,
}

impl<'a> Shape<'a> {
    /// An element starts: it takes the next position, under the element
    /// being read.
    // Not inlined, here or in `close`: the fast reader of a request, which
    // reads no shape, stays as it was (inlined, they cost it ~25
    // instructions an element).
    #[inline(never)]
    pub(super) fn open(&mut self) {
        let at = self.nodes.len() as u32;
        let (parent, index) = match self.open.last_mut() {
            Some((parent, children)) => {
                *children += 1;
                (*parent, *children - 1)
            }
            None => (NO_PARENT, 0),
        };
        self.nodes.push(ShapeNode {
            id: Cow::Borrowed(""),
            role: RoleName::default(),
            parent,
            index,
            end: at + 1,
            focused: false,
        });
        self.open.push((at, 0));
    }

    /// The element opened last was read whole: what the checker reads of
    /// it is moved here (the element keeps the rest, to be dropped).
    #[inline(never)]
    pub(super) fn close(&mut self, element: &mut Element<'a>) {
        let Some((at, _)) = self.open.pop() else {
            return;
        };
        let end = self.nodes.len() as u32;
        let node = &mut self.nodes[at as usize];
        node.id = std::mem::take(&mut element.id);
        node.role = std::mem::take(&mut element.role);
        node.focused = element.focused.unwrap_or(false);
        node.end = end;
        // Only the attributes a rule finds something in or reads, in their
        // order: a state's name, an `author` that is not a string, `related`.
        let read = |(name, value): &(&String, &Value)| match name.as_str() {
            "related" => true,
            "author" => !value.is_string(),
            name => STATES.contains(&name),
        };
        self.payloads
            .extend(not_base64(&element.content).map(|p| (at, p)));
        let count = element.attributes.iter().filter(read).count();
        if count > 0 {
            let mut kept = Vec::with_capacity(count);
            let pairs = element.attributes.iter().filter(read);
            kept.extend(pairs.map(|(name, value)| (name.clone(), value.clone())));
            self.attributes.push((at, Attributes::from_distinct(kept)));
        }
    }

    /// The shape read: the attributes in document order (an element's are
    /// taken at its end, after its descendants').
    pub(super) fn finish(mut self) -> Shape<'a> {
        self.attributes.sort_unstable_by_key(|&(at, _)| at);
        // Stable: an element's payloads stay in their blocks' order.
        self.payloads.sort_by_key(|&(at, _)| at);
        self.open = Vec::new();
        self
    }

    /// The number of elements.
    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }

    pub(crate) fn id(&self, at: u32) -> &str {
        &self.nodes[at as usize].id
    }

    pub(crate) fn role(&self, at: u32) -> &RoleName {
        &self.nodes[at as usize].role
    }

    pub(crate) fn parent(&self, at: u32) -> Option<u32> {
        Some(self.nodes[at as usize].parent).filter(|&p| p != NO_PARENT)
    }

    pub(crate) fn focused(&self, at: u32) -> bool {
        self.nodes[at as usize].focused
    }

    /// The element's attributes a rule finds something in or reads (a
    /// state's name, an `author` that is not a string, `related`), if any.
    pub(crate) fn attributes(&self, at: u32) -> Option<&Attributes> {
        let found = self.attributes.binary_search_by_key(&at, |&(of, _)| of);
        found.ok().map(|i| &self.attributes[i].1)
    }

    /// Every element's attributes the checker reads, in document order.
    pub(crate) fn all_attributes(&self) -> impl Iterator<Item = (u32, &Attributes)> {
        self.attributes
            .iter()
            .map(|(at, attributes)| (*at, attributes))
    }

    /// The element's payloads that are not base64, in its blocks' order.
    pub(crate) fn not_base64(&self, at: u32) -> impl Iterator<Item = Payload> + '_ {
        let from = self.payloads.partition_point(|&(of, _)| of < at);
        self.payloads[from..]
            .iter()
            .take_while(move |&&(of, _)| of == at)
            .map(|&(_, p)| p)
    }

    /// The children of `at`, in order.
    pub(crate) fn children(&self, at: u32) -> impl Iterator<Item = u32> + '_ {
        crate::model::tree::children_by_end(at, |n| self.nodes[n as usize].end)
    }

    /// The JSON pointer of `at`, as [`crate::model::Tree::pointer`] writes it.
    pub(crate) fn pointer(&self, at: u32) -> String {
        crate::model::tree::pointer_by(at, |n| {
            self.parent(n)
                .map(|parent| (parent, self.nodes[n as usize].index))
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_node_is_56_bytes() {
        assert_eq!(std::mem::size_of::<super::ShapeNode<'_>>(), 56);
    }
}
