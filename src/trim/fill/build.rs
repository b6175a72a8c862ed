//! Building the output answer of a state: each element as sent in its mode
//! (prepared once, redacted) and the notices ctxgate writes (every one
//! through [`write`], as a [`Notice`], from this trim's own counts). An
//! input's reserved attributes are never copied: an earlier trim's notices
//! are the provider's text to this one.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::{Filler, Mode};
use crate::model::doc::ElementRef;
use crate::model::{Answer, Block, Content, Element, NodeId};
use crate::redact::Redactor;
use crate::render::notice::{self, Notice};
use crate::trim::select::Fate;

/// Text siblings on each side of an element read with it for a secret
/// that crosses from one into the next ([`Filler::beside`]).
const NEIGHBOURS: NodeId = 2;

pub(super) struct Prepared<'a> {
    pub(super) element: Element<'a>,
    pub(super) redactions: Vec<usize>,
}

/// An element's skeleton: id, role, subrole, redacted title and states.
pub(super) fn skeleton_of<'a>(
    element: ElementRef<'_, 'a>,
    redactor: &mut Redactor<'_>,
) -> Element<'a> {
    let mut out = element.bare();
    if let Some(title) = &mut out.title {
        redactor.cow(title);
    }
    out
}

pub(super) fn copy_states(from: &Element<'_>, to: &mut Element<'_>) {
    to.selected = from.selected;
    to.focused = from.focused;
    to.visible = from.visible;
    to.hovered = from.hovered;
}

/// Whether a masked element has nothing in it: no content (or only empty
/// text), no children and no attributes. A title is a label, not a value.
/// In doubt it is not empty: telling an agent a filled field is empty
/// misleads it, the other way round only withholds a fact. So an attribute
/// in the reserved namespace (dropped) counts: an earlier trim's
/// placeholder says it stood for something.
pub(super) fn is_empty(element: ElementRef<'_, '_>) -> bool {
    !element.has_children()
        && element.attributes().is_empty()
        && element.content().iter().all(|c| match &c.block {
            Block::Text { text } => text.is_empty(),
            _ => false,
        })
}

/// Writes `notice` on `element`: every notice ctxgate sends is written here.
pub(super) fn write(element: &mut Element<'_>, notice: Notice) {
    element
        .attributes
        .insert(notice.key().into(), notice.value());
}

/// A content block as sent (text blocks aside: they are redacted together,
/// by [`Redactor::texts`]): every string redacted, and every key of its
/// extra fields and embedded resource, except the base64 payloads (image and
/// audio `data`, a resource's `blob`: binary, not text; SECURITY.md lists
/// them) and the `type` and `mimeType` ctxgate reads.
pub(super) fn redact_content<'a>(
    content: &Content<'a>,
    redactor: &mut Redactor<'_>,
) -> Content<'a> {
    let mut out = content.clone();
    match &mut out.block {
        // All of an element's text blocks at once: `Redactor::texts`.
        Block::Text { .. } => {}
        Block::ResourceLink { uri, name } => {
            redactor.cow(uri);
            redactor.cow(name);
        }
        Block::Resource { resource } => {
            redactor.keys(resource);
            for (key, value) in resource.iter_mut() {
                if key != "blob" {
                    redactor.value(value);
                }
            }
        }
        // The base64 payload is binary; the MIME type is text like any other.
        Block::Image { mime_type, .. } | Block::Audio { mime_type, .. } => redactor.cow(mime_type),
        Block::Other { .. } => {}
    }
    if let Some(extra) = out.extra.as_deref_mut() {
        redactor.keys(extra);
        for value in extra.values_mut() {
            redactor.value(value);
        }
    }
    out
}

/// Keeps at most `cut` bytes of text (at char boundaries) and no other
/// block, and says so in a notice.
pub(super) fn cut_content(element: &mut Element<'_>, cut: usize) {
    let mut room = cut;
    let mut changed = 0u64;
    let mut kept = Vec::new();
    for mut content in std::mem::take(&mut element.content) {
        match &mut content.block {
            Block::Text { text } if room > 0 => {
                if text.len() > room {
                    let mut end = room;
                    while !text.is_char_boundary(end) {
                        end -= 1;
                    }
                    match text {
                        Cow::Borrowed(s) => *s = &s[..end],
                        Cow::Owned(s) => s.truncate(end),
                    }
                    changed += 1;
                }
                room -= text.len().min(room);
                if !text.is_empty() {
                    kept.push(content);
                } else {
                    room = 0;
                }
            }
            _ => changed += 1,
        }
    }
    element.content = kept;
    if changed > 0 {
        write(
            element,
            Notice::Cut {
                reason: "budget".into(),
                blocks: changed,
                title: false,
            },
        );
    }
}

impl<'f, 'a> Filler<'f, 'a> {
    pub(super) fn has_content(&self, id: NodeId) -> bool {
        !self.tree.el(id).content().is_empty()
    }

    pub(super) fn text_len(&mut self, id: NodeId) -> usize {
        let full = &self.prepared_full(id).element;
        full.content
            .iter()
            .map(|c| match &c.block {
                Block::Text { text } => text.len(),
                _ => 0,
            })
            .sum::<usize>()
            + usize::from(!full.content.is_empty())
    }

    pub(super) fn prepared_full(&mut self, id: NodeId) -> &Prepared<'a> {
        if !self.full.contains_key(&id) {
            let element = self.tree.el(id);
            let mut redactor = Redactor::new(&self.plan.redact);
            let mut out = skeleton_of(element, &mut redactor);
            out.url = element.url_cow().map(|mut u| {
                redactor.cow(&mut u);
                u
            });
            out.content = element
                .content()
                .iter()
                .map(|c| redact_content(c, &mut redactor))
                .collect();
            // Text blocks as the one text a reader sees (`redact_content`
            // leaves them): a secret split across blocks is found too.
            let mut texts: Vec<&mut Cow<'a, str>> = out
                .content
                .iter_mut()
                .filter_map(|c| match &mut c.block {
                    Block::Text { text } => Some(text),
                    _ => None,
                })
                .collect();
            let beside = self.beside(id);
            redactor.texts(&mut texts, &beside);
            let stripped = self.selection.stripped(id);
            for (key, value) in element.attributes().iter() {
                if notice::is_reserved(key)
                    || stripped.is_some_and(|s| s.iter().any(|n| **n == **key))
                {
                    continue;
                }
                let mut value = value.clone();
                redactor.value(&mut value);
                out.attributes.insert(key.clone(), value);
            }
            self.full.insert(
                id,
                Prepared {
                    element: out,
                    redactions: redactor.counts,
                },
            );
        }
        &self.full[&id]
    }

    /// The spans of an element's text (its text blocks joined by line
    /// breaks) that a secret crossing into its siblings covers: the text of
    /// the element and of up to [`NEIGHBOURS`] text siblings on each side,
    /// consecutive and without children of their own, glued as a terminal
    /// line or a run of spans reads ([`Redactor::crossing`]). The siblings'
    /// text as provided is read whatever their fate (read, never sent).
    fn beside(&self, id: NodeId) -> Vec<(usize, usize, usize)> {
        let tree = self.tree;
        let text_leaf = |at: NodeId, parent: Option<NodeId>| {
            (at as usize) < tree.len()
                && tree.node(at).end == at + 1
                && tree.node(at).parent() == parent
                && tree
                    .el(at)
                    .content()
                    .iter()
                    .any(|c| matches!(c.block, Block::Text { .. }))
        };
        let parent = tree.node(id).parent();
        if parent.is_none() || !text_leaf(id, parent) {
            return Vec::new();
        }
        let mut first = id;
        while id - first < NEIGHBOURS && first > 0 && text_leaf(first - 1, parent) {
            first -= 1;
        }
        let mut last = id;
        while last - id < NEIGHBOURS && text_leaf(last + 1, parent) {
            last += 1;
        }
        if first == last {
            return Vec::new();
        }
        let texts: Vec<String> = (first..=last)
            .map(|at| {
                let blocks: Vec<&str> = tree
                    .el(at)
                    .content()
                    .iter()
                    .filter_map(|c| match &c.block {
                        Block::Text { text } => Some(&**text),
                        _ => None,
                    })
                    .collect();
                blocks.join("\n")
            })
            .collect();
        let parts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let own = (id - first) as usize;
        Redactor::new(&self.plan.redact)
            .crossing(&parts)
            .into_iter()
            .filter(|&(part, ..)| part == own)
            .map(|(_, start, end, rule)| (start, end, rule))
            .collect()
    }

    pub(super) fn prepared_skeleton(&mut self, id: NodeId) -> &Prepared<'a> {
        if !self.skeleton.contains_key(&id) {
            let element = self.tree.el(id);
            let mut redactor = Redactor::new(&self.plan.redact);
            let out = skeleton_of(element, &mut redactor);
            self.skeleton.insert(
                id,
                Prepared {
                    element: out,
                    redactions: redactor.counts,
                },
            );
        }
        &self.skeleton[&id]
    }

    /// One element as sent in `mode`, without children or omitted notice.
    pub(super) fn element(&mut self, id: NodeId, mode: Mode) -> Element<'a> {
        match mode {
            Mode::Skeleton => self.prepared_skeleton(id).element.clone(),
            Mode::Full { cut: None } => self.prepared_full(id).element.clone(),
            Mode::Full { cut: Some(cut) } => {
                let mut element = self.prepared_full(id).element.clone();
                cut_content(&mut element, cut as usize);
                element
            }
            Mode::Bare { title } => {
                let (mut element, cut) = self.bare_element(id, title);
                // On the bare path the root's notice says it.
                if let (Some(notice), false) = (cut, self.bare) {
                    write(&mut element, notice);
                }
                element
            }
            Mode::Placeholder => {
                let source = self.tree.el(id);
                let mut out = Element::new(source.id_cow(), source.role().clone());
                out.subrole = source.subrole_cow();
                source.copy_states(&mut out);
                let (rule, empty) = match &self.selection.fates[id as usize] {
                    &Fate::Masked(rule) | &Fate::Denied(rule) => {
                        (self.selection.label(rule).to_string(), is_empty(source))
                    }
                    // Kept, but the budget could not hold it.
                    Fate::Kept(_) => ("budget".to_string(), is_empty(source)),
                    _ => ("mask".to_string(), is_empty(source)),
                };
                write(&mut out, Notice::Withheld { rule, empty });
                out
            }
        }
    }

    /// An element in mode [`Mode::Bare`] without notices, and the cut
    /// notice it would carry alone (its title cut; a kept element's content
    /// left out).
    pub(super) fn bare_element(&mut self, id: NodeId, title: u32) -> (Element<'a>, Option<Notice>) {
        let title = title as usize;
        let skeleton = &self.prepared_skeleton(id).element;
        let mut element = Element::new(skeleton.id.clone(), skeleton.role.clone());
        element.subrole = skeleton.subrole.clone();
        element.title = skeleton.title.clone();
        copy_states(skeleton, &mut element);
        let mut cut_title = false;
        if let Some(text) = &mut element.title {
            if text.len() > title {
                let mut end = title;
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                match text {
                    Cow::Borrowed(s) => *s = &s[..end],
                    Cow::Owned(s) => s.truncate(end),
                }
                cut_title = true;
            }
        }
        if element.title.as_deref() == Some("") {
            element.title = None;
        }
        // A kept element would have been sent whole: its content is
        // left out too, and said so.
        let source = self.tree.el(id);
        let blocks = match self.selection.fates[id as usize] {
            Fate::Kept(_) => source.content().len() as u64,
            _ => 0,
        };
        let cut = (cut_title || blocks > 0).then(|| Notice::Cut {
            reason: "budget".into(),
            blocks,
            title: cut_title,
        });
        (element, cut)
    }

    /// The output answer for a state, built bottom-up without recursion;
    /// with omitted notices unless `notices` is false.
    pub(super) fn build(&mut self, state: &[Option<Mode>], notices: bool) -> Answer<'a> {
        let n = self.tree.len();
        // Built elements not yet under their parent, the latest (lowest
        // position) on top: in reverse document order, an element's sent
        // children are the entries on top below the end of its subtree (a
        // list per element, allocated per probe, held 24 MB at a million).
        let mut pending: Vec<(NodeId, Element)> = Vec::new();
        let mut root = None;
        // The bare path: one notice on the root stands for every element's
        // cut and omitted notices. Compact: for every element's omitted
        // notices (a cut element still says so itself).
        let bare = notices && self.bare;
        let fold = notices && (self.bare || self.compact);
        let mut write_bare = bare;
        let (mut cuts, mut total) = (0u64, BTreeMap::<String, u64>::new());
        for at in (0..n).rev() {
            let Some(mode) = state[at] else { continue };
            let id = at as NodeId;
            let mut element = match mode {
                Mode::Bare { title } if bare => {
                    let (element, cut) = self.bare_element(id, title);
                    cuts = cuts.saturating_add(u64::from(cut.is_some()));
                    element
                }
                _ => self.element(id, mode),
            };
            let end = self.tree.node(id).end;
            let mut mine = Vec::new();
            while pending.last().is_some_and(|(below, _)| *below < end) {
                let (below, child) = pending.pop().expect("just seen");
                if self.tree.node(below).parent() == Some(id) {
                    mine.push(child);
                }
            }
            element.children = mine.into();
            if notices && mode != Mode::Placeholder {
                let mut reasons: BTreeMap<String, u64> = BTreeMap::new();
                for child in self.tree.children(id) {
                    if state[child as usize].is_none() {
                        *reasons
                            .entry(self.selection.unsent(child).to_string())
                            .or_default() += 1;
                    }
                }
                if fold {
                    write_bare |= !reasons.is_empty();
                    for (reason, n) in reasons {
                        let count = total.entry(reason).or_default();
                        *count = count.saturating_add(n);
                    }
                } else if !reasons.is_empty() {
                    write(
                        &mut element,
                        Notice::Omitted {
                            reasons,
                            compact: false,
                        },
                    );
                }
            }
            match self.tree.node(id).parent() {
                Some(_) => pending.push((id, element)),
                None => root = Some(element),
            }
        }
        let mut root = root.expect("the root is always sent");
        if write_bare {
            write(
                &mut root,
                Notice::Bare {
                    cut: cuts,
                    reasons: total,
                },
            );
        }
        Answer {
            protocol: self.tree.protocol.clone(),
            instance: self.tree.instance.clone(),
            root,
        }
    }
}
