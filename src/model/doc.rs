//! The request's copy of an answer: every element flat, in document order,
//! in 64 bytes (an [`Element`] in its parent's list is 176, its [`Node`] 32
//! more), its strings as byte ranges into the input (or into the doc's own
//! text, for a string the reader unescaped), its content blocks and
//! attributes in two shared lists. The trim reads an answer only through
//! it; public [`Element`]s are built only for what is sent
//! ([`ElementRef::bare`], then the fill's redacted fields).
//!
//! It is filled as an answer is read (`read::read_doc`: each element is
//! read whole, its content blocks placed here as they are read, then its
//! other fields moved here and the rest of it dropped), or
//! from an answer a host holds ([`Doc::from_answer`], which borrows what
//! the answer borrows and copies what it owns; [`Doc::from_owned`] moves
//! the fields of an answer read whole for the request). Positions, parents, ends
//! and effective states are the [`Tree`]'s (R2), element for element.
//!
//! [`Node`]: super::Node
//! [`Tree`]: super::Tree

use std::borrow::Cow;

use super::{Answer, Attributes, Content, Element, NodeId, Role, RoleName};

/// A string of an element: `len`'s top two bits say where it is (the
/// input, the doc's own text, the list of strings that are neither), the
/// rest its length in bytes; `at` its offset there (or its index in the
/// list). [`Str::NONE`] is an absent field.
#[derive(Clone, Copy, Debug)]
struct Str {
    at: u32,
    len: u32,
}

const KIND: u32 = 0b11 << 30;
const INPUT: u32 = 0;
const SIDE: u32 = 0b01 << 30;
const HELD: u32 = 0b10 << 30;
const MAX_LEN: usize = (1 << 30) - 1;

impl Str {
    const NONE: Str = Str {
        at: u32::MAX,
        len: u32::MAX,
    };

    fn is_none(self) -> bool {
        self.len == u32::MAX
    }
}

/// No attributes, no parent, no role word: the `u32` fields' absence.
const NONE: u32 = u32::MAX;

/// The role words of the language, one per [`Role::ALL`] entry, so that a
/// known role's name can be lent without storing it per element.
static KNOWN: [RoleName; 13] = [
    RoleName::Known(Role::Application),
    RoleName::Known(Role::Window),
    RoleName::Known(Role::Group),
    RoleName::Known(Role::List),
    RoleName::Known(Role::Table),
    RoleName::Known(Role::Row),
    RoleName::Known(Role::Cell),
    RoleName::Known(Role::Text),
    RoleName::Known(Role::Heading),
    RoleName::Known(Role::Link),
    RoleName::Known(Role::Image),
    RoleName::Known(Role::Page),
    RoleName::Known(Role::Document),
];

/// One element: its place in the tree and R2's effective states (what a
/// [`super::Node`] says, by the same names), and its own fields.
#[derive(Clone, Debug)]
pub(crate) struct DocNode {
    /// The parent's position; [`NONE`] for the root.
    parent: u32,
    /// The element's index among its parent's children.
    pub(crate) index: u32,
    /// 0 for the root.
    pub(crate) depth: u32,
    /// One past the position of the last element of this subtree.
    pub(crate) end: NodeId,
    id: Str,
    subrole: Str,
    title: Str,
    url: Str,
    /// The first of its blocks in [`Doc::content`], and how many.
    content: u32,
    blocks: u32,
    /// Its attributes' index in [`Doc::attributes`], or [`NONE`].
    attributes: u32,
    /// The role as read; a word outside the language is in `Doc::words`.
    role: Role,
    unknown: bool,
    /// The states as written: two bits each (0 absent, 2 false, 3 true),
    /// selected, focused, visible, hovered from the low bits up.
    raw: u8,
    /// The effective states (R2), one bit each ([`SELECTED`] ...).
    effective: u8,
}

const _: () = assert!(std::mem::size_of::<DocNode>() == 64);

/// [`DocNode`]'s effective states, one bit each, as
/// [`effective_states`](super::tree::effective_states) computes them.
const SELECTED: u8 = 1;
const FOCUSED: u8 = 1 << 1;
const VISIBLE: u8 = 1 << 2;
const HOVERED: u8 = 1 << 3;

impl DocNode {
    /// The role as read (unknown words read as `Group`).
    pub(crate) fn role(&self) -> Role {
        self.role
    }

    /// The parent's position; `None` for the root.
    pub(crate) fn parent(&self) -> Option<NodeId> {
        (self.parent != NONE).then_some(self.parent)
    }

    /// `selected`, absent read as false.
    pub(crate) fn selected(&self) -> bool {
        self.effective & SELECTED != 0
    }

    /// `focused`, absent read as false.
    pub(crate) fn focused(&self) -> bool {
        self.effective & FOCUSED != 0
    }

    /// `hovered`, absent read as false.
    pub(crate) fn hovered(&self) -> bool {
        self.effective & HOVERED != 0
    }

    /// `visible`, absent read as the parent's value; the root is visible.
    pub(crate) fn visible(&self) -> bool {
        self.effective & VISIBLE != 0
    }

    fn state(&self, shift: u8) -> Option<bool> {
        match (self.raw >> shift) & 0b11 {
            0 => None,
            2 => Some(false),
            _ => Some(true),
        }
    }
}

fn raw_states(element: &Element<'_>) -> u8 {
    // 0 absent, 2 false, 3 true: the set bit, then the value.
    let bits = |state: Option<bool>, shift: u8| {
        (u8::from(state.is_some()) << 1 | u8::from(state == Some(true))) << shift
    };
    bits(element.selected, 0)
        | bits(element.focused, 2)
        | bits(element.visible, 4)
        | bits(element.hovered, 6)
}

/// An answer as the trim reads it (module doc).
pub(crate) struct Doc<'a> {
    /// The protocol version, as the answer says.
    pub(crate) protocol: String,
    /// The provider instance.
    pub(crate) instance: String,
    nodes: Vec<DocNode>,
    /// The input the strings borrow (empty for a held answer).
    input: &'a str,
    /// Strings the reader unescaped, one after another.
    side: String,
    /// Strings neither in the input nor in `side` (a held answer's, or one
    /// past what a range can say).
    held: Vec<Cow<'a, str>>,
    content: Vec<Content<'a>>,
    attributes: Vec<Attributes>,
    /// Role words outside the language, by position.
    words: Vec<(NodeId, RoleName)>,
    empty: Attributes,
    /// The elements still being read, outermost first: each one's position
    /// and the number of its children opened so far.
    open: Vec<(u32, u32)>,
}

impl<'a> Doc<'a> {
    /// An empty doc whose strings may borrow `input`.
    pub(crate) fn new(input: &'a str) -> Doc<'a> {
        Doc {
            protocol: String::new(),
            instance: String::new(),
            nodes: Vec::new(),
            input,
            side: String::new(),
            held: Vec::new(),
            content: Vec::new(),
            attributes: Vec::new(),
            words: Vec::new(),
            empty: Attributes::default(),
            open: Vec::new(),
        }
    }

    /// The doc of an answer a host holds (or one read whole): what the
    /// answer borrows of `input` is borrowed, the rest copied.
    pub(crate) fn from_answer(answer: &Answer<'a>, input: &'a str) -> Doc<'a> {
        let mut doc = Doc::new(input);
        doc.protocol = answer.protocol.clone();
        doc.instance = answer.instance.clone();
        // Document order without recursion: (element, children left).
        let mut stack: Vec<(&Element<'a>, usize)> = vec![(&answer.root, 0)];
        doc.open();
        while let Some((element, next)) = stack.last_mut() {
            let element: &Element<'a> = element;
            if let Some(child) = element.children.get(*next) {
                *next += 1;
                doc.open();
                stack.push((child, 0));
                continue;
            }
            doc.close_with(element, |e| Parts {
                raw: raw_states(e),
                id: e.id.clone(),
                subrole: e.subrole.clone(),
                title: e.title.clone(),
                url: e.url.clone(),
                content: e.content.clone(),
                placed: None,
                attributes: e.attributes.clone(),
                role: e.role.clone(),
            });
            stack.pop();
        }
        doc.finish();
        doc
    }

    /// [`Doc::from_answer`] of an answer given up to it: each element's
    /// fields are moved here (its content blocks and attributes are not
    /// copied), and the answer is dropped as it is walked.
    pub(crate) fn from_owned(answer: Answer<'a>, input: &'a str) -> Doc<'a> {
        let mut doc = Doc::new(input);
        let Answer {
            protocol,
            instance,
            mut root,
        } = answer;
        doc.protocol = protocol;
        doc.instance = instance;
        // Document order without recursion: (element, its children left).
        let children = std::mem::take(&mut root.children.0).into_iter();
        let mut stack = vec![(root, children)];
        doc.open();
        while let Some((_, children)) = stack.last_mut() {
            if let Some(mut child) = children.next() {
                doc.open();
                let below = std::mem::take(&mut child.children.0).into_iter();
                stack.push((child, below));
                continue;
            }
            if let Some((element, _)) = stack.pop() {
                doc.close(element, None);
            }
        }
        doc.finish();
        doc
    }

    /// An element starts: it takes the next position, under the element
    /// being read.
    #[inline]
    pub(crate) fn open(&mut self) {
        let at = self.nodes.len() as u32;
        let (parent, index, depth) = match self.open.last_mut() {
            Some((parent, children)) => {
                *children += 1;
                let depth = self.nodes[*parent as usize].depth + 1;
                (Some(*parent), *children - 1, depth)
            }
            None => (None, 0, 0),
        };
        self.nodes.push(DocNode {
            parent: parent.unwrap_or(NONE),
            index,
            depth,
            end: at + 1,
            id: Str::NONE,
            subrole: Str::NONE,
            title: Str::NONE,
            url: Str::NONE,
            content: 0,
            blocks: 0,
            attributes: NONE,
            role: Role::Group,
            unknown: false,
            raw: 0,
            effective: VISIBLE,
        });
        self.open.push((at, 0));
    }

    /// The element opened last was read whole (its children closed before
    /// it), given up to the doc: its fields are moved here. `placed`: its
    /// blocks, when the reader put them here already ([`Doc::place_blocks`];
    /// the element's own list is then empty).
    #[inline(never)]
    pub(crate) fn close(&mut self, element: Element<'a>, placed: Option<(u32, u32)>) {
        self.close_with(element, |e| {
            let raw = raw_states(&e);
            let Element {
                id,
                role,
                subrole,
                title,
                content,
                url,
                attributes,
                ..
            } = e;
            Parts {
                raw,
                id,
                subrole,
                title,
                url,
                content,
                placed,
                attributes,
                role,
            }
        });
    }

    /// The content blocks of the element being read, put in the doc's
    /// list as they are read (no list of the element's own to move them
    /// from): where they start and how many. An element's blocks are
    /// placed at once, so they are contiguous whatever its children place.
    pub(crate) fn place_blocks(
        &mut self,
        blocks: impl ExactSizeIterator<Item = Content<'a>>,
    ) -> (u32, u32) {
        let first = self.content.len() as u32;
        let count = blocks.len() as u32;
        self.content.extend(blocks);
        (first, count)
    }

    /// The blocks [`Doc::place_blocks`] placed.
    pub(crate) fn blocks(&self, (first, count): (u32, u32)) -> &[Content<'a>] {
        &self.content[first as usize..(first + count) as usize]
    }

    fn close_with<E>(&mut self, element: E, parts: impl FnOnce(E) -> Parts<'a>) {
        let Some((at, _)) = self.open.pop() else {
            return;
        };
        let end = self.nodes.len() as u32;
        let Parts {
            raw,
            id,
            subrole,
            title,
            url,
            content,
            placed,
            attributes,
            role,
        } = parts(element);
        let id = self.put(id);
        let subrole = subrole.map_or(Str::NONE, |s| self.put(s));
        let title = title.map_or(Str::NONE, |s| self.put(s));
        let url = url.map_or(Str::NONE, |s| self.put(s));
        let (first, blocks) = match placed {
            Some(placed) if content.is_empty() => placed,
            _ => self.place_blocks(content.into_iter()),
        };
        let attributes = if attributes.is_empty() {
            NONE
        } else {
            self.attributes.push(attributes);
            self.attributes.len() as u32 - 1
        };
        let (role, unknown) = match role {
            RoleName::Known(role) => (role, false),
            word @ RoleName::Unknown(_) => {
                self.words.push((at, word));
                (Role::Group, true)
            }
        };
        let node = &mut self.nodes[at as usize];
        node.end = end;
        node.id = id;
        node.subrole = subrole;
        node.title = title;
        node.url = url;
        node.content = first;
        node.blocks = blocks;
        node.attributes = attributes;
        node.role = role;
        node.unknown = unknown;
        node.raw = raw;
    }

    /// The doc read: the effective states (R2), parents before children.
    pub(crate) fn finish(&mut self) {
        self.open = Vec::new();
        self.words.sort_unstable_by_key(|&(at, _)| at);
        for at in 0..self.nodes.len() {
            let parent_visible = self.nodes[at]
                .parent()
                .map(|p| self.nodes[p as usize].visible());
            let node = &mut self.nodes[at];
            let written = [node.state(0), node.state(2), node.state(4), node.state(6)];
            let [selected, focused, visible, hovered] =
                super::tree::effective_states(written, parent_visible);
            let bit = |on: bool, bit: u8| if on { bit } else { 0 };
            node.effective = bit(selected, SELECTED)
                | bit(focused, FOCUSED)
                | bit(visible, VISIBLE)
                | bit(hovered, HOVERED);
        }
    }

    /// Where a string goes: a range of the input when it borrows it, the
    /// doc's own text when it was unescaped, else the list.
    fn put(&mut self, s: Cow<'a, str>) -> Str {
        match s {
            Cow::Borrowed(b) => {
                let base = self.input.as_ptr() as usize;
                let off = (b.as_ptr() as usize).wrapping_sub(base);
                if off <= self.input.len()
                    && b.len() <= self.input.len() - off
                    && b.len() <= MAX_LEN
                    && u32::try_from(off).is_ok()
                {
                    return Str {
                        at: off as u32,
                        len: b.len() as u32 | INPUT,
                    };
                }
                self.hold(Cow::Borrowed(b))
            }
            Cow::Owned(o) => {
                let off = self.side.len();
                if o.len() <= MAX_LEN && u32::try_from(off + o.len()).is_ok() {
                    self.side.push_str(&o);
                    return Str {
                        at: off as u32,
                        len: o.len() as u32 | SIDE,
                    };
                }
                self.hold(Cow::Owned(o))
            }
        }
    }

    fn hold(&mut self, s: Cow<'a, str>) -> Str {
        self.held.push(s);
        Str {
            at: (self.held.len() - 1) as u32,
            len: HELD,
        }
    }

    fn get(&self, s: Str) -> &str {
        let len = (s.len & !KIND) as usize;
        let at = s.at as usize;
        match s.len & KIND {
            INPUT => &self.input[at..at + len],
            SIDE => &self.side[at..at + len],
            _ => &self.held[at],
        }
    }

    fn cow(&self, s: Str) -> Cow<'a, str> {
        let len = (s.len & !KIND) as usize;
        let at = s.at as usize;
        match s.len & KIND {
            INPUT => {
                let input: &'a str = self.input;
                Cow::Borrowed(&input[at..at + len])
            }
            SIDE => Cow::Owned(self.side[at..at + len].to_owned()),
            _ => self.held[at].clone(),
        }
    }

    fn opt(&self, s: Str) -> Option<&str> {
        (!s.is_none()).then(|| self.get(s))
    }

    fn opt_cow(&self, s: Str) -> Option<Cow<'a, str>> {
        (!s.is_none()).then(|| self.cow(s))
    }

    /// All nodes, in document order.
    pub(crate) fn nodes(&self) -> &[DocNode] {
        &self.nodes
    }

    /// One node.
    pub(crate) fn node(&self, id: NodeId) -> &DocNode {
        &self.nodes[id as usize]
    }

    /// One element's fields.
    pub(crate) fn el(&self, id: NodeId) -> ElementRef<'_, 'a> {
        ElementRef {
            doc: self,
            node: &self.nodes[id as usize],
            at: id,
        }
    }

    /// The number of elements.
    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// The children of `id`, in order.
    pub(crate) fn children(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        super::tree::children_by_end(id, |at| self.nodes[at as usize].end)
    }

    /// The ancestors of `id`, nearest first.
    pub(crate) fn ancestors(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        super::tree::ancestors_by(id, |at| self.nodes[at as usize].parent())
    }

    /// The JSON pointer of `id` within its answer, as [`super::Tree::pointer`].
    pub(crate) fn pointer(&self, id: NodeId) -> String {
        super::tree::pointer_by(id, |at| {
            let node = &self.nodes[at as usize];
            node.parent().map(|parent| (parent, node.index))
        })
    }

    /// The deepest element of the focus path, as [`super::Tree::focus`].
    pub(crate) fn focus(&self) -> Option<NodeId> {
        super::tree::focus_by(
            |at| self.nodes[at as usize].end,
            |at| self.nodes[at as usize].focused(),
        )
    }

    /// Every element that has attributes, with them, in document order.
    pub(crate) fn all_attributes(&self) -> impl Iterator<Item = (u32, &Attributes)> {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.attributes != NONE)
            .map(|(at, n)| (at as u32, &self.attributes[n.attributes as usize]))
    }
}

/// What an element gives the doc.
struct Parts<'a> {
    raw: u8,
    id: Cow<'a, str>,
    subrole: Option<Cow<'a, str>>,
    title: Option<Cow<'a, str>>,
    url: Option<Cow<'a, str>>,
    content: Vec<Content<'a>>,
    /// Blocks the reader placed in the doc already.
    placed: Option<(u32, u32)>,
    attributes: Attributes,
    role: RoleName,
}

/// One element of a [`Doc`], read field by field: the fields of an
/// [`Element`] but its children (the doc's structure says them).
#[derive(Clone, Copy)]
pub(crate) struct ElementRef<'d, 'a> {
    doc: &'d Doc<'a>,
    node: &'d DocNode,
    at: NodeId,
}

impl<'d, 'a> ElementRef<'d, 'a> {
    /// The id.
    pub(crate) fn id(&self) -> &'d str {
        self.doc.get(self.node.id)
    }

    /// The id, for the output (borrowed from the input when it is there).
    pub(crate) fn id_cow(&self) -> Cow<'a, str> {
        self.doc.cow(self.node.id)
    }

    /// The role as written.
    pub(crate) fn role(&self) -> &'d RoleName {
        if self.node.unknown {
            let words = &self.doc.words;
            let found = words.binary_search_by_key(&self.at, |&(at, _)| at);
            if let Ok(i) = found {
                return &words[i].1;
            }
        }
        &KNOWN[self.node.role as usize]
    }

    pub(crate) fn subrole(&self) -> Option<&'d str> {
        self.doc.opt(self.node.subrole)
    }

    pub(crate) fn subrole_cow(&self) -> Option<Cow<'a, str>> {
        self.doc.opt_cow(self.node.subrole)
    }

    pub(crate) fn title(&self) -> Option<&'d str> {
        self.doc.opt(self.node.title)
    }

    pub(crate) fn title_cow(&self) -> Option<Cow<'a, str>> {
        self.doc.opt_cow(self.node.title)
    }

    pub(crate) fn url(&self) -> Option<&'d str> {
        self.doc.opt(self.node.url)
    }

    pub(crate) fn url_cow(&self) -> Option<Cow<'a, str>> {
        self.doc.opt_cow(self.node.url)
    }

    pub(crate) fn content(&self) -> &'d [Content<'a>] {
        let first = self.node.content as usize;
        &self.doc.content[first..first + self.node.blocks as usize]
    }

    pub(crate) fn attributes(&self) -> &'d Attributes {
        match self.node.attributes {
            NONE => &self.doc.empty,
            i => &self.doc.attributes[i as usize],
        }
    }

    /// `selected` as written.
    pub(crate) fn selected(&self) -> Option<bool> {
        self.node.state(0)
    }

    /// `focused` as written.
    pub(crate) fn focused(&self) -> Option<bool> {
        self.node.state(2)
    }

    /// `visible` as written.
    pub(crate) fn visible(&self) -> Option<bool> {
        self.node.state(4)
    }

    /// `hovered` as written.
    pub(crate) fn hovered(&self) -> Option<bool> {
        self.node.state(6)
    }

    /// Bytes of its own text: title, url and content strings
    /// ([`super::text_bytes`]).
    pub(crate) fn text_bytes(&self) -> usize {
        super::text_bytes_of(self.title(), self.url(), self.content())
    }

    /// Whether it has children.
    pub(crate) fn has_children(&self) -> bool {
        self.node.end > self.at + 1
    }

    /// Id, role, subrole, title and the states as written: an element with
    /// no content, attributes or children.
    pub(crate) fn bare(&self) -> Element<'a> {
        let mut out = Element::new(self.id_cow(), self.role().clone());
        out.subrole = self.subrole_cow();
        out.title = self.title_cow();
        self.copy_states(&mut out);
        out
    }

    /// Copies the states as written onto `to`.
    pub(crate) fn copy_states(&self, to: &mut Element<'_>) {
        to.selected = self.selected();
        to.focused = self.focused();
        to.visible = self.visible();
        to.hovered = self.hovered();
    }
}

/// An element's own fields, as the renderers read them: an [`Element`]'s,
/// or a [`Doc`]'s element (rendered for its size without being built).
pub(crate) trait Fields {
    fn id(&self) -> &str;
    fn role_word(&self) -> &str;
    fn subrole(&self) -> Option<&str>;
    fn title(&self) -> Option<&str>;
    fn url(&self) -> Option<&str>;
    fn content(&self) -> &[Content<'_>];
    fn attributes(&self) -> &Attributes;
    /// Selected, focused, visible, hovered, as written.
    fn states(&self) -> [Option<bool>; 4];
}

impl Fields for Element<'_> {
    fn id(&self) -> &str {
        &self.id
    }
    fn role_word(&self) -> &str {
        self.role.as_str()
    }
    fn subrole(&self) -> Option<&str> {
        self.subrole.as_deref()
    }
    fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }
    fn url(&self) -> Option<&str> {
        self.url.as_deref()
    }
    fn content(&self) -> &[Content<'_>] {
        &self.content
    }
    fn attributes(&self) -> &Attributes {
        &self.attributes
    }
    fn states(&self) -> [Option<bool>; 4] {
        [self.selected, self.focused, self.visible, self.hovered]
    }
}

impl Fields for ElementRef<'_, '_> {
    fn id(&self) -> &str {
        ElementRef::id(self)
    }
    fn role_word(&self) -> &str {
        ElementRef::role(self).as_str()
    }
    fn subrole(&self) -> Option<&str> {
        ElementRef::subrole(self)
    }
    fn title(&self) -> Option<&str> {
        ElementRef::title(self)
    }
    fn url(&self) -> Option<&str> {
        ElementRef::url(self)
    }
    fn content(&self) -> &[Content<'_>] {
        ElementRef::content(self)
    }
    fn attributes(&self) -> &Attributes {
        ElementRef::attributes(self)
    }
    fn states(&self) -> [Option<bool>; 4] {
        [
            self.selected(),
            self.focused(),
            self.visible(),
            self.hovered(),
        ]
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::{Doc, KNOWN};
    use crate::limits::Limits;
    use crate::model::{Answer, NodeId, Role, Tree};
    use crate::read::differential::{fixtures, odd};

    /// Whether a string borrows (`true`) or owns its text.
    fn borrows(s: Option<&Cow<'_, str>>) -> Option<bool> {
        s.map(|s| matches!(s, Cow::Borrowed(_)))
    }

    /// `doc` says of every element what `answer`'s [`Tree`] says, field by
    /// field, and lends a string exactly when the answer's borrows it
    /// (when `borrowing`: the doc was read from the answer's input).
    fn assert_same(doc: &Doc<'_>, answer: &Answer<'_>, borrowing: bool, what: &str) {
        let tree = Tree::new(&answer.root);
        assert_eq!(doc.protocol, answer.protocol, "{what}");
        assert_eq!(doc.instance, answer.instance, "{what}");
        assert_eq!(doc.len(), tree.len(), "{what}");
        for (at, node) in tree.nodes().iter().enumerate() {
            let at = at as NodeId;
            let (d, e, el) = (doc.node(at), doc.el(at), node.element);
            let place = (d.parent(), d.index, d.depth, d.end);
            assert_eq!(
                place,
                (node.parent, node.index, node.depth, node.end),
                "{what} {at}"
            );
            let effective = [d.selected(), d.focused(), d.visible(), d.hovered()];
            let states = [node.selected, node.focused, node.visible, node.hovered];
            assert_eq!(effective, states, "{what} {at}");
            let written = [e.selected(), e.focused(), e.visible(), e.hovered()];
            assert_eq!(
                written,
                [el.selected, el.focused, el.visible, el.hovered],
                "{what} {at}"
            );
            assert_eq!((d.role(), e.role()), (node.role(), &el.role), "{what} {at}");
            assert_eq!(e.id(), el.id, "{what} {at}");
            assert_eq!(e.subrole(), el.subrole.as_deref(), "{what} {at}");
            assert_eq!(e.title(), el.title.as_deref(), "{what} {at}");
            assert_eq!(e.url(), el.url.as_deref(), "{what} {at}");
            assert_eq!(e.content(), &el.content[..], "{what} {at}");
            let pairs = |a: &crate::model::Attributes| {
                a.iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(pairs(e.attributes()), pairs(&el.attributes), "{what} {at}");
            assert_eq!(e.has_children(), !el.children.is_empty(), "{what} {at}");
            assert_eq!(e.text_bytes(), crate::model::text_bytes(el), "{what} {at}");
            assert_eq!(doc.pointer(at), tree.pointer(at), "{what} {at}");
            let ancestors: Vec<NodeId> = doc.ancestors(at).collect();
            assert_eq!(ancestors, tree.ancestors(at).collect::<Vec<_>>());
            let children: Vec<NodeId> = doc.children(at).collect();
            assert_eq!(children, tree.children(at).collect::<Vec<_>>());
            if borrowing {
                let cows = [
                    (Some(e.id_cow()), Some(&el.id)),
                    (e.subrole_cow(), el.subrole.as_ref()),
                    (e.title_cow(), el.title.as_ref()),
                    (e.url_cow(), el.url.as_ref()),
                ];
                for (mine, theirs) in cows {
                    let kinds = (borrows(mine.as_ref()), borrows(theirs));
                    assert_eq!(kinds.0, kinds.1, "{what} {at}: borrowed or owned");
                }
            }
        }
        assert_eq!(doc.focus(), tree.focus(), "{what}");
    }

    fn inputs() -> Vec<(String, Vec<u8>)> {
        let mut out = fixtures();
        for (n, seed) in [(1, 1), (60, 4), (500, 9)] {
            let answer = serde_json::to_value(crate::synth::synth(n, seed)).unwrap();
            for s in 0..4 {
                out.push((format!("odd synth {n} {seed} {s}"), odd(&answer, s)));
            }
        }
        out
    }

    /// A doc read from the bytes, one copied or moved from the answer read
    /// whole (borrowing its input), and one of an answer a host holds, each
    /// say what the answer's tree says.
    #[test]
    fn a_doc_says_what_the_tree_says() {
        let limits = Limits::default();
        let mut fast = 0;
        for (name, bytes) in inputs() {
            let Ok(answer) = crate::read_conforming(&bytes, &limits) else {
                continue;
            };
            if let Some(doc) = crate::read::read_doc(&bytes, &limits, None).unwrap() {
                assert_same(&doc, &answer, true, &format!("read: {name}"));
                fast += 1;
            }
            let text = std::str::from_utf8(&bytes).unwrap();
            let doc = Doc::from_answer(&answer, text);
            assert_same(&doc, &answer, true, &format!("copied: {name}"));
            let doc = Doc::from_owned(answer.clone(), text);
            assert_same(&doc, &answer, true, &format!("moved: {name}"));
            let doc = Doc::from_answer(&answer, "");
            assert_same(&doc, &answer, false, &format!("held: {name}"));
            let owned = answer.clone().into_owned();
            let doc = Doc::from_answer(&owned, "");
            assert_same(&doc, &owned, false, &format!("owned: {name}"));
        }
        assert!(
            fast > 12,
            "only {fast} inputs were read straight into a doc"
        );
    }

    /// A known role's word is lent from the table in [`Role::ALL`]'s order.
    #[test]
    fn known_words_are_in_role_order() {
        for (word, role) in KNOWN.iter().zip(Role::ALL) {
            assert_eq!(word.read(), role);
            assert_eq!(KNOWN[role as usize].read(), role);
        }
    }
}
