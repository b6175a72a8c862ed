//! Building the output answer of a state: each element as sent in its mode
//! (prepared once, redacted), the notices ctxgate writes (every one through
//! [`write`], as a [`Notice`]), and the notices an input carries from an
//! earlier trim, read in ctxgate's exact shapes only.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::{Filler, Mode};
use crate::model::doc::ElementRef;
use crate::model::{Answer, Block, Content, Element, NodeId};
use crate::redact::Redactor;
use crate::render::notice::{self, Notice, Read};
use crate::trim::select::Fate;

/// Notices found on an input element (a re-trimmed output), carried forward
/// so trimming an output again changes nothing. Only the exact shapes
/// ctxgate writes are carried; anything else under `ctxgate:` is dropped.
#[derive(Debug, Clone, Default)]
pub(super) struct Carried {
    pub(super) omitted: BTreeMap<String, u64>,
    /// The omitted notice was compact: the output it came from was cut to
    /// a budget, so is this one (trimming it again changes nothing).
    pub(super) compact: bool,
    /// A cut notice: (blocks, title).
    pub(super) cut: Option<(u64, bool)>,
    /// A placeholder's notice: (rule, empty).
    pub(super) withheld: Option<(String, bool)>,
    /// The bare notice of an output sent as its bare path: (cut, omitted
    /// per reason). Carried on the root only.
    pub(super) bare: Option<(u64, BTreeMap<String, u64>)>,
    /// A count in a carried `ctxgate:omitted` that is not a whole number
    /// from 0 to 2^64 − 1 (`1e3`, `-1`, `2.5`, 2^64): refused, never
    /// dropped or wrapped.
    pub(super) bad_count: bool,
}

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
/// text), no children and no attributes but ctxgate's notices. A title is a
/// label, not a value. In doubt it is not empty: telling an agent a filled
/// field is empty misleads it, the other way round only withholds a fact.
pub(super) fn is_empty(element: ElementRef<'_, '_>) -> bool {
    !element.has_children()
        && element.attributes().keys().all(|k| notice::is_reserved(k))
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

/// The notices an input element carries, in ctxgate's exact shapes
/// ([`Notice::read`]) with reasons of ctxgate's own shape.
pub(super) fn carried_notices(element: ElementRef<'_, '_>) -> Option<Carried> {
    let attributes = element.attributes();
    if !attributes.keys().any(|k| notice::is_reserved(k)) {
        return None;
    }
    let mut carried = Carried::default();
    for (key, value) in attributes.iter() {
        if !notice::is_reserved(key) {
            continue;
        }
        match Notice::read(key, value) {
            Read::Notice(Notice::Omitted { reasons, compact }) => {
                carried.compact = compact;
                carried.omitted = reasons
                    .into_iter()
                    .filter(|(reason, _)| plain_reason(reason))
                    .collect();
            }
            Read::Notice(Notice::Cut {
                reason,
                blocks,
                title,
            }) if reason == "budget" => carried.cut = Some((blocks, title)),
            Read::Notice(Notice::Withheld { rule, empty }) => {
                // A placeholder has nothing of its own; it can have
                // children (a selected or focused descendant is sent under
                // it), so trimming it again keeps it a placeholder.
                let placeholder = element.content().is_empty()
                    && element.title().is_none()
                    && element.url().is_none();
                if placeholder && plain_reason(&rule) {
                    carried.withheld = Some((rule, empty));
                }
            }
            Read::Notice(Notice::Bare { cut, reasons }) => {
                carried.bare = Some((
                    cut,
                    reasons
                        .into_iter()
                        .filter(|(reason, _)| plain_reason(reason))
                        .collect(),
                ));
            }
            Read::BadCount => carried.bad_count = true,
            _ => {}
        }
    }
    Some(carried)
}

/// A reason as ctxgate writes them: `budget`, `scope`, `floor:rule-id` or
/// `kind:rule-id` (kind `deny`, `mask`, `keep`, `prune`), the rule id as
/// policies must write it ([`crate::policy::is_rule_id`]). A provider's word
/// of any other shape is not carried: it could hold any text.
pub(super) fn plain_reason(reason: &str) -> bool {
    if matches!(reason, "budget" | "scope") {
        return true;
    }
    match reason.split_once(':') {
        Some(("deny" | "mask" | "keep" | "prune", id)) => crate::policy::is_rule_id(id),
        Some(("floor", _)) => crate::policy::is_rule_id(reason),
        _ => false,
    }
}

/// Drops carried reason words a redaction pattern matches: a word of rule-id
/// shape can still be a token (`deny:xoxb-…`), and notices are not rewritten.
pub(super) fn redact_carried(carried: &mut Carried, redactor: &mut Redactor<'_>) {
    carried
        .omitted
        .retain(|reason, _| matches!(redactor.text(reason), Cow::Borrowed(_)));
    if let Some((_, reasons)) = &mut carried.bare {
        reasons.retain(|reason, _| matches!(redactor.text(reason), Cow::Borrowed(_)));
    }
    if let Some((rule, _)) = &carried.withheld {
        if matches!(redactor.text(rule), Cow::Owned(_)) {
            carried.withheld = None;
        }
    }
}

impl<'f, 'a> Filler<'f, 'a> {
    pub(super) fn merge_carried(&self, id: NodeId, reasons: &mut BTreeMap<String, u64>) {
        if let Some(carried) = self.carried(id) {
            for (reason, n) in &carried.omitted {
                // Cannot saturate: `check_carried_counts` refused those that could.
                let count = reasons.entry(reason.clone()).or_default();
                *count = count.saturating_add(*n);
            }
        }
    }

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
            redactor.texts(&mut texts);
            let stripped = self.selection.stripped.get(&id);
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
            if let Some((rule, empty)) = self.carried(id).and_then(|c| c.withheld.as_ref()) {
                // A placeholder sent before, trimmed again under a policy
                // that no longer sees why: it stays a placeholder.
                write(
                    &mut out,
                    Notice::Withheld {
                        rule: rule.clone(),
                        empty: *empty,
                    },
                );
            }
            if let Some((blocks, title)) = self.carried(id).and_then(|c| c.cut) {
                write(
                    &mut out,
                    Notice::Cut {
                        reason: "budget".into(),
                        blocks,
                        title,
                    },
                );
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

    pub(super) fn prepared_skeleton(&mut self, id: NodeId) -> &Prepared<'a> {
        if !self.skeleton.contains_key(&id) {
            let element = self.tree.el(id);
            let mut redactor = Redactor::new(&self.plan.redact);
            let mut out = skeleton_of(element, &mut redactor);
            if let Some((0, true)) = self.carried(id).and_then(|c| c.cut) {
                // A title an earlier trim cut: it stays said.
                write(
                    &mut out,
                    Notice::Cut {
                        reason: "budget".into(),
                        blocks: 0,
                        title: true,
                    },
                );
            }
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
                // A placeholder trimmed again keeps what it said: the second
                // pass cannot see the title or content that decided it.
                let carried = self.carried(id).and_then(|c| c.withheld.as_ref());
                let (rule, empty) = match (carried, &self.selection.fates[id as usize]) {
                    (Some((rule, empty)), _) => (rule.clone(), *empty),
                    (None, &Fate::Masked(rule) | &Fate::Denied(rule)) => {
                        (self.selection.label(rule).to_string(), is_empty(source))
                    }
                    // Kept, but the budget could not hold it.
                    (None, Fate::Kept(_)) => ("budget".to_string(), is_empty(source)),
                    (None, _) => ("mask".to_string(), is_empty(source)),
                };
                write(&mut out, Notice::Withheld { rule, empty });
                out
            }
        }
    }

    /// An element in mode [`Mode::Bare`] without notices, and the cut
    /// notice it would carry alone (its title cut, or an earlier trim's
    /// cut title; a kept element's content left out).
    pub(super) fn bare_element(&mut self, id: NodeId, title: u32) -> (Element<'a>, Option<Notice>) {
        let title = title as usize;
        let skeleton = &self.prepared_skeleton(id).element;
        let carried_title = skeleton.attributes.get(notice::CUT).is_some();
        let mut element = Element::new(skeleton.id.clone(), skeleton.role.clone());
        element.subrole = skeleton.subrole.clone();
        element.title = skeleton.title.clone();
        copy_states(skeleton, &mut element);
        let mut cut_title = carried_title;
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
        let carried = self.carried(0).and_then(|c| c.bare.clone());
        let mut write_bare = notices && (bare || carried.is_some());
        let (mut cuts, mut total) = carried.unwrap_or_default();
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
                self.merge_carried(id, &mut reasons);
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
