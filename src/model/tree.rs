//! A flat, read-only view of an answer's tree in document order, with the
//! effective states of R2 computed once: what a host reads, and what the
//! checker reads of an answer read whole. A request reads the same
//! positions and states from its own flat copy (`doc`); both take the
//! states from [`effective_states`], and `doc::tests` holds the two equal,
//! element for element.
//!
//! Built without recursion: depth is bounded only by the reader's limits.

use super::{Element, Role};

/// An element's position in [`Tree::nodes`] (document order, root = 0).
pub type NodeId = u32;

/// One element with what R2 derives for it.
///
/// `'t` borrows the answer; `'a` is the input the answer's strings borrow.
/// `Debug` names the element by its id (printing it whole would print its
/// subtree once per ancestor: quadratic in the depth).
#[derive(Clone, Copy)]
pub struct Node<'t, 'a> {
    /// The element.
    pub element: &'t Element<'a>,
    /// The parent's position; `None` for the root.
    pub parent: Option<NodeId>,
    /// The element's index among its parent's children.
    pub index: u32,
    /// 0 for the root.
    pub depth: u32,
    /// One past the position of the last element of this subtree.
    pub end: NodeId,
    /// `selected`, absent read as false.
    pub selected: bool,
    /// `focused`, absent read as false.
    pub focused: bool,
    /// `hovered`, absent read as false.
    pub hovered: bool,
    /// `visible`, absent read as the parent's value; the root is visible.
    pub visible: bool,
}

impl std::fmt::Debug for Node<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("id", &self.element.id)
            .field("parent", &self.parent)
            .field("index", &self.index)
            .field("depth", &self.depth)
            .field("end", &self.end)
            .field("selected", &self.selected)
            .field("focused", &self.focused)
            .field("hovered", &self.hovered)
            .field("visible", &self.visible)
            .finish()
    }
}

impl Node<'_, '_> {
    /// The role as read (unknown words read as `Group`).
    pub fn role(&self) -> Role {
        self.element.role.read()
    }
}

/// The tree in document order.
#[derive(Debug, Clone)]
pub struct Tree<'t, 'a> {
    nodes: Vec<Node<'t, 'a>>,
}

impl<'t, 'a> Tree<'t, 'a> {
    /// Indexes the tree under `root`.
    pub fn new(root: &'t Element<'a>) -> Tree<'t, 'a> {
        let mut nodes: Vec<Node<'t, 'a>> = Vec::new();
        // (element, parent, index among siblings)
        let mut stack: Vec<(&'t Element<'a>, Option<NodeId>, u32)> = vec![(root, None, 0)];
        // Positions whose subtree is still open, to fill in `end`.
        let mut open: Vec<NodeId> = Vec::new();
        while let Some((element, parent, index)) = stack.pop() {
            let id = nodes.len() as NodeId;
            while let Some(&top) = open.last() {
                if Some(top) == parent {
                    break;
                }
                nodes[top as usize].end = id;
                open.pop();
            }
            let (depth, parent_visible) = match parent {
                Some(p) => {
                    let p = &nodes[p as usize];
                    (p.depth + 1, Some(p.visible))
                }
                None => (0, None),
            };
            let written = [
                element.selected,
                element.focused,
                element.visible,
                element.hovered,
            ];
            let [selected, focused, visible, hovered] = effective_states(written, parent_visible);
            nodes.push(Node {
                element,
                parent,
                index,
                depth,
                end: id + 1,
                selected,
                focused,
                hovered,
                visible,
            });
            open.push(id);
            for (i, child) in element.children.iter().enumerate().rev() {
                stack.push((child, Some(id), i as u32));
            }
        }
        let total = nodes.len() as NodeId;
        for top in open {
            nodes[top as usize].end = total;
        }
        Tree { nodes }
    }

    /// All nodes, in document order.
    pub fn nodes(&self) -> &[Node<'t, 'a>] {
        &self.nodes
    }

    /// One node.
    pub fn node(&self, id: NodeId) -> &Node<'t, 'a> {
        &self.nodes[id as usize]
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Never true: a tree has its root.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The children of `id`, in order.
    pub fn children(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        children_by_end(id, |at| self.nodes[at as usize].end)
    }

    /// The ancestors of `id`, nearest first.
    pub fn ancestors(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        ancestors_by(id, |at| self.nodes[at as usize].parent)
    }

    /// The JSON pointer of `id` within its answer: `/root/children/0/children/2`.
    pub fn pointer(&self, id: NodeId) -> String {
        pointer_by(id, |at| {
            let node = &self.nodes[at as usize];
            node.parent.map(|parent| (parent, node.index))
        })
    }

    /// The deepest element of the focus path, if anything is focused.
    /// Follows focused children down from the root (RFC-0001 4.1).
    pub fn focus(&self) -> Option<NodeId> {
        focus_by(
            |at| self.nodes[at as usize].end,
            |at| self.nodes[at as usize].focused,
        )
    }
}

/// R2, the one place it is computed: an element's effective states
/// (`[selected, focused, visible, hovered]`) from the states as written
/// and its parent's effective `visible` (`None` for the root). Absent is
/// read as false, but `visible`, absent, is the parent's value, and the
/// root is visible. [`Tree`] and the request's doc (`model::doc`) both
/// take their states from here.
pub(crate) fn effective_states(
    written: [Option<bool>; 4],
    parent_visible: Option<bool>,
) -> [bool; 4] {
    let [selected, focused, visible, hovered] = written;
    [
        selected.unwrap_or(false),
        focused.unwrap_or(false),
        visible.unwrap_or(parent_visible.unwrap_or(true)),
        hovered.unwrap_or(false),
    ]
}

/// The children of `at` in a tree laid out in document order, where
/// `end(n)` is one past the last node of `n`'s subtree: the walk both
/// [`Tree`] and the request's doc (`model::doc`) make.
pub(crate) fn children_by_end(
    at: NodeId,
    end: impl Fn(NodeId) -> NodeId,
) -> impl Iterator<Item = NodeId> {
    let last = end(at);
    let mut next = at + 1;
    std::iter::from_fn(move || {
        if next >= last {
            return None;
        }
        let child = next;
        next = end(child);
        Some(child)
    })
}

/// The ancestors of `at`, nearest first, where `parent(n)` is `n`'s
/// parent (`None` at the root): [`Tree`]'s and the request's doc's.
pub(crate) fn ancestors_by(
    at: NodeId,
    parent: impl Fn(NodeId) -> Option<NodeId>,
) -> impl Iterator<Item = NodeId> {
    let mut next = parent(at);
    std::iter::from_fn(move || {
        let current = next?;
        next = parent(current);
        Some(current)
    })
}

/// The deepest element of the focus path (RFC-0001 4.1), following focused
/// children down from the root, in a tree laid out as for
/// [`children_by_end`]; `focused(n)` is `n`'s effective `focused`.
pub(crate) fn focus_by(
    end: impl Fn(NodeId) -> NodeId,
    focused: impl Fn(NodeId) -> bool,
) -> Option<NodeId> {
    let mut at: NodeId = 0;
    let mut found = None;
    loop {
        let Some(next) = children_by_end(at, &end).find(|&c| focused(c)) else {
            return found;
        };
        found = Some(next);
        at = next;
    }
}

/// The JSON pointer of `at` (`/root/children/0/children/2`), where
/// `up(n)` is `n`'s parent and `n`'s place among its siblings, or `None`
/// at the root.
pub(crate) fn pointer_by(at: NodeId, up: impl Fn(NodeId) -> Option<(NodeId, u32)>) -> String {
    let mut indices: Vec<u32> = Vec::new();
    let mut current = at;
    while let Some((parent, index)) = up(current) {
        indices.push(index);
        current = parent;
    }
    let mut pointer = String::from("/root");
    for index in indices.iter().rev() {
        pointer.push_str("/children/");
        pointer.push_str(&index.to_string());
    }
    pointer
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Element;

    fn el<'a>(id: &'a str, role: Role, children: Vec<Element<'a>>) -> Element<'a> {
        Element {
            children: children.into(),
            ..Element::new(id, role)
        }
    }

    #[test]
    fn states_follow_r2() {
        let mut hidden = el("pane", Role::Window, vec![el("t", Role::Text, vec![])]);
        hidden.visible = Some(false);
        let mut shown = el("t2", Role::Text, vec![]);
        shown.visible = Some(true);
        hidden.children.push(shown);
        let root = el("app", Role::Application, vec![hidden]);
        let tree = Tree::new(&root);
        let vis: Vec<bool> = tree.nodes().iter().map(|n| n.visible).collect();
        assert_eq!(vis, [true, false, false, true]);
        assert!(tree
            .nodes()
            .iter()
            .all(|n| !n.selected && !n.focused && !n.hovered));
    }

    #[test]
    fn ends_children_and_pointers() {
        let root = el(
            "a",
            Role::Application,
            vec![
                el("b", Role::Window, vec![el("c", Role::Text, vec![])]),
                el("d", Role::Window, vec![]),
            ],
        );
        let tree = Tree::new(&root);
        let ends: Vec<u32> = tree.nodes().iter().map(|n| n.end).collect();
        assert_eq!(ends, [4, 3, 3, 4]);
        assert_eq!(tree.children(0).collect::<Vec<_>>(), [1, 3]);
        assert_eq!(tree.pointer(2), "/root/children/0/children/0");
        assert_eq!(tree.pointer(3), "/root/children/1");
        assert_eq!(tree.ancestors(2).collect::<Vec<_>>(), [1, 0]);
    }
}
