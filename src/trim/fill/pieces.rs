//! A probe measured from each element's own rendering, kept: an element is
//! built (redacted, cut, its notices written) and rendered once per mode,
//! and a probe is the list of those renderings in document order, with the
//! renderer's own separators between them ([`crate::render::json_head`]
//! and the rest). Only what changes from probe to probe is built again: an
//! element's own omitted notice (its unsent children's reasons) and the
//! root's bare notice.
//!
//! A probe's bytes are the sum of its parts'. Its tokens too, exactly: the
//! text is cut only where o200k's count is the sum of both sides'
//! ([`tokens::cut_between`]), at the first and the last such place inside
//! each kept rendering; what lies between those two is counted once per
//! rendering and kept, and only the short text from one rendering's last
//! cut to the next one's first (a few bytes of JSON punctuation around an
//! id) is counted per probe, or found among the short gaps counted before. So a
//! probe costs a walk over the sent elements and a lookup per part, not a
//! rendering and a scan of its bytes. Debug builds check, on every probe,
//! that the parts are the rendering of the state's answer
//! ([`Filler::build`]) and that the count is the count of it whole.

use std::collections::BTreeMap;

use foldhash::HashMap;

use super::build::write;
use super::{Filler, Mode};
use crate::error::Result;
use crate::model::{Element, NodeId};
use crate::policy::Budget;
use crate::render::notice::Notice;
use crate::render::{self, Format};
use crate::tokens;

/// No piece (an index into [`Filler::pieces`]).
pub(super) const NONE: u32 = u32::MAX;

/// One element's rendering in one mode, without children or omitted
/// notice: JSON in two halves (before its children, after them), the
/// outline in one.
pub(super) struct Piece {
    mode: Mode,
    /// On the bare path (its cut notice then moves to the root's).
    bare: bool,
    /// The next piece of the same element.
    next: u32,
    text: Box<str>,
    /// JSON: where the half after its children begins; outline: the end.
    head: usize,
    /// On the bare path, whether it has something cut (the root's notice
    /// counts it).
    cut: bool,
    /// Per half: the first and last place it may be cut, and the tokens
    /// between them once counted.
    halves: [Half; 2],
}

#[derive(Clone, Copy)]
struct Half {
    cuts: Option<(u32, u32)>,
    tokens: Option<usize>,
}

/// One part of a probe's rendering.
enum Part {
    /// A kept piece's half: 0 before its children (JSON) or whole
    /// (outline), 1 after them.
    Piece(u32, u8),
    Static(&'static str),
    /// An element's half with this probe's notices, or the answer's start
    /// (an index into [`Noticed::texts`]).
    Noticed(u32),
    /// Not rendered ([`Filler::known_over`]): a piece not built yet, or an
    /// element's half with its notices. Its text, and the text from the
    /// last cut before it to the first cut after it, are not counted.
    Unknown,
}

/// The renderings of elements with the notices of some probe, each written
/// once: from one probe to the next most notices stay as they were (an
/// element whose children are still left out for the same counts), and
/// cloning, writing and rendering such an element on every probe costs
/// about a tenth of a binding `window` request. Keyed by element, mode, half and the notices
/// themselves, compared whole, so a text is reused only for the same
/// element with the same notices.
#[derive(Default)]
pub(super) struct Noticed {
    /// Per text: its element, mode, half (0 before its children or whole,
    /// 1 after them), omitted reasons and bare notice.
    keys: Vec<NoticedKey>,
    texts: Vec<Box<str>>,
    table: hashbrown::HashTable<u32>,
    hasher: foldhash::fast::RandomState,
    /// The answer's start, `{"protocol":…,"root":`, once written.
    start: Option<u32>,
}

/// Omitted reasons a text of [`Noticed`] was written with, in order.
type Reasons = Box<[(Box<str>, u64)]>;

struct NoticedKey {
    id: NodeId,
    mode: Mode,
    half: u8,
    omitted: Option<Reasons>,
    bare: Option<Notice>,
}

impl Noticed {
    fn hash(&self, id: NodeId, mode: Mode, half: u8, entry: &Sent) -> u64 {
        use std::hash::BuildHasher;
        // The same fields, in the same order, as `insert` hashes a key.
        self.hasher
            .hash_one((id, mode, half, entry.omitted.as_deref(), &entry.bare))
    }

    fn find(&self, hash: u64, id: NodeId, mode: Mode, half: u8, entry: &Sent) -> Option<u32> {
        self.table
            .find(hash, |&at| {
                let key = &self.keys[at as usize];
                key.id == id
                    && key.mode == mode
                    && key.half == half
                    && same_reasons(key.omitted.as_deref(), entry.omitted.as_deref())
                    && key.bare == entry.bare
            })
            .copied()
    }

    fn insert(&mut self, hash: u64, key: NoticedKey, text: String) -> u32 {
        let at = self.texts.len() as u32;
        self.keys.push(key);
        self.texts.push(text.into_boxed_str());
        let (keys, hasher) = (&self.keys, &self.hasher);
        self.table.insert_unique(hash, at, |&k| {
            let key = &keys[k as usize];
            use std::hash::BuildHasher;
            hasher.hash_one((
                key.id,
                key.mode,
                key.half,
                key.omitted.as_deref(),
                &key.bare,
            ))
        });
        at
    }
}

/// Whether a key's omitted reasons are a probe's (both in order).
fn same_reasons(key: Option<&[(Box<str>, u64)]>, entry: Option<&[(&str, u64)]>) -> bool {
    match (key, entry) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((ra, na), (rb, nb))| **ra == **rb && na == nb)
        }
        _ => false,
    }
}

/// A sent element of a probe, in document order, with the notices written
/// on it for this probe alone: its omitted reasons borrowed from the
/// selection, in order, so that a probe owns no text for them.
struct Sent<'s> {
    id: NodeId,
    mode: Mode,
    omitted: Option<Vec<(&'s str, u64)>>,
    bare: Option<Notice>,
}

/// A probe's rendering, in parts, and its bytes.
pub(super) struct Parts {
    parts: Vec<Part>,
    pub(super) bytes: usize,
}

impl<'f, 'a> Filler<'f, 'a> {
    /// The element as [`Filler::build`] sends it in `mode`, before the
    /// omitted and bare notices.
    fn sent_element(&mut self, id: NodeId, mode: Mode) -> Element<'a> {
        match mode {
            // `build` on the bare path, and `element` there, leave the cut
            // notice to the root's.
            Mode::Bare { title } if self.bare => self.bare_element(id, title).0,
            _ => self.element(id, mode),
        }
    }

    /// The index of `id`'s piece in `mode`, rendered the first time.
    fn piece(&mut self, id: NodeId, mode: Mode) -> u32 {
        if let Some(at) = self.find_piece(id, mode) {
            return at;
        }
        let bare = self.bare && matches!(mode, Mode::Bare { .. });
        let element = self.sent_element(id, mode);
        let cut = match mode {
            Mode::Bare { title } => self.bare_element(id, title).1.is_some(),
            _ => false,
        };
        let mut bytes = Vec::with_capacity(128);
        let head = match self.format {
            Format::Json => {
                render::json_head(&mut bytes, &element);
                let head = bytes.len();
                render::json_tail(&mut bytes, &element);
                head
            }
            Format::Outline => {
                let depth = self.tree.node(id).depth as usize;
                render::outline_lines(&mut bytes, &element, depth);
                bytes.len()
            }
        };
        let text = String::from_utf8(bytes).expect("the renderers write UTF-8");
        let half = |text: &str| Half {
            cuts: tokens::outer_cuts(text).map(|(f, l)| (f as u32, l as u32)),
            tokens: None,
        };
        let halves = [half(&text[..head]), half(&text[head..])];
        let at = self.pieces.len() as u32;
        self.pieces.push(Piece {
            mode,
            bare,
            next: self.first_piece[id as usize],
            text: text.into_boxed_str(),
            head,
            cut,
            halves,
        });
        self.first_piece[id as usize] = at;
        at
    }

    fn part_text<'p>(&'p self, part: &'p Part) -> &'p str {
        match part {
            Part::Piece(at, half) => {
                let piece = &self.pieces[*at as usize];
                match half {
                    0 => &piece.text[..piece.head],
                    _ => &piece.text[piece.head..],
                }
            }
            Part::Static(text) => text,
            Part::Noticed(at) => &self.noticed.texts[*at as usize],
            Part::Unknown => "",
        }
    }

    fn concat(&self, parts: &Parts) -> String {
        let mut out = String::with_capacity(parts.bytes);
        for part in &parts.parts {
            out.push_str(self.part_text(part));
        }
        out
    }

    /// `state`'s rendering in parts (with omitted notices unless `notices`
    /// is false).
    pub(super) fn parts(&mut self, state: &[Option<Mode>], notices: bool) -> Parts {
        let sent = self.sent(state, notices);
        let mut parts = Vec::with_capacity(sent.len() * 3 + 2);
        match self.format {
            Format::Json => self.json_parts(&mut parts, &sent, false),
            Format::Outline => {
                for entry in &sent {
                    let part = match self.noticed_part(entry, 0) {
                        Some(part) => part,
                        None => Part::Piece(self.piece(entry.id, entry.mode), 0),
                    };
                    parts.push(part);
                }
            }
        }
        let bytes = parts.iter().map(|p| self.part_text(p).len()).sum();
        let parts = Parts { parts, bytes };
        debug_assert_eq!(
            self.concat(&parts),
            self.format.render(&self.build(state, notices)),
            "a probe's parts are the rendering of its answer"
        );
        parts
    }

    /// `parts` measured against `budget`, as [`tokens::fit`]
    /// measures their text.
    pub(super) fn fit_parts(
        &mut self,
        parts: &Parts,
        budget: Budget,
    ) -> Result<(bool, Option<usize>)> {
        let fit = tokens::fit_by(parts.bytes, budget, |limit| self.count_parts(parts, limit))?;
        if cfg!(debug_assertions) {
            let text = self.concat(parts);
            let whole = tokens::fit(&text, budget)?;
            assert_eq!(fit, whole, "a probe counted in parts as whole");
        }
        Ok(fit)
    }

    /// o200k tokens of `parts`' text, or `None` past `limit`: cut at the
    /// first and last place each kept half may be cut, the text between
    /// them counted once per half.
    pub(super) fn count_parts(&mut self, parts: &Parts, limit: usize) -> Result<Option<usize>> {
        let mut gap = String::new();
        let mut total = 0usize;
        // Past an unknown part, until the next cut: text not counted.
        let mut unknown = false;
        for part in &parts.parts {
            let Part::Piece(at, half) = part else {
                if let Part::Unknown = part {
                    unknown = true;
                    gap.clear();
                }
                gap.push_str(self.part_text(part));
                continue;
            };
            let piece = &mut self.pieces[*at as usize];
            let (from, to) = match half {
                0 => (0, piece.head),
                _ => (piece.head, piece.text.len()),
            };
            let slot = &mut piece.halves[usize::from(*half)];
            let Some((first, last)) = slot.cuts else {
                gap.push_str(&piece.text[from..to]);
                continue;
            };
            let (first, last) = (from + first as usize, from + last as usize);
            if !std::mem::take(&mut unknown) {
                gap.push_str(&piece.text[from..first]);
                let Some(n) = count_gap(&mut self.gaps, &gap, limit - total)? else {
                    return Ok(None);
                };
                total += n;
            }
            gap.clear();
            let inner = match slot.tokens {
                Some(n) => n,
                None => {
                    let Some(n) = tokens::count_till(&piece.text[first..last], limit - total)?
                    else {
                        return Ok(None);
                    };
                    slot.tokens = Some(n);
                    n
                }
            };
            if inner > limit - total {
                return Ok(None);
            }
            total += inner;
            gap.push_str(&piece.text[last..to]);
        }
        if unknown {
            return Ok(Some(total));
        }
        let Some(n) = count_gap(&mut self.gaps, &gap, limit - total)? else {
            return Ok(None);
        };
        Ok(Some(total + n))
    }

    /// Whether `state`'s rendering (with its notices) is over some budget,
    /// as far as the pieces built so far show it: its parts whose pieces
    /// are built and carry no notice of this state are summed (bytes), and
    /// counted with the text between their cuts (tokens); the rest counts
    /// nothing. Each part of a text cut at those places counts at least 0,
    /// so that sum is at most the state's size: over it, the state is over.
    /// Off the bare path. Builds nothing; counts the inner text of a built piece not counted
    /// yet. `false` is no proof that it fits.
    pub(super) fn known_over(&mut self, state: &[Option<Mode>]) -> Result<bool> {
        // Off the bare path `sent` builds nothing.
        debug_assert!(!self.bare, "not on the bare path");
        let sent = self.sent(state, true);
        let mut parts = Vec::with_capacity(sent.len() * 3 + 2);
        match self.format {
            Format::Json => self.json_parts(&mut parts, &sent, true),
            Format::Outline => {
                for entry in &sent {
                    parts.push(match (&entry.omitted, &entry.bare) {
                        (None, None) => self
                            .find_piece(entry.id, entry.mode)
                            .map_or(Part::Unknown, |at| Part::Piece(at, 0)),
                        _ => Part::Unknown,
                    });
                }
            }
        }
        let bytes = parts.iter().map(|p| self.part_text(p).len()).sum();
        let parts = Parts { parts, bytes };
        for i in 0..self.budgets.len() {
            let budget = self.budgets[i];
            let over = match budget {
                Budget::Bytes(n) => parts.bytes > n,
                // Counted past `n`: its tokens alone are, so are its bytes.
                Budget::Tokens(n) => self.count_parts(&parts, n)?.is_none(),
            };
            if over {
                if cfg!(debug_assertions) {
                    // The whole rendering, built apart from the pieces (so
                    // that debug builds take the same measures).
                    let text = self.format.render(&self.build(state, true));
                    let (fits, _) = tokens::fit(&text, budget)?;
                    assert!(!fits, "a state known over is over");
                }
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether `id`'s piece in `mode` is built.
    pub(super) fn has_piece(&self, id: NodeId, mode: Mode) -> bool {
        self.find_piece(id, mode).is_some()
    }

    /// Builds `id`'s piece in `mode` if it is not yet.
    pub(super) fn build_piece(&mut self, id: NodeId, mode: Mode) {
        self.piece(id, mode);
    }

    /// The index of `id`'s piece in `mode`, if it is built.
    fn find_piece(&self, id: NodeId, mode: Mode) -> Option<u32> {
        let bare = self.bare && matches!(mode, Mode::Bare { .. });
        let mut at = self.first_piece[id as usize];
        while at != NONE {
            let piece = &self.pieces[at as usize];
            if piece.mode == mode && piece.bare == bare {
                return Some(at);
            }
            at = piece.next;
        }
        None
    }

    /// The sent elements of `state` in document order, and the notices
    /// `build` writes on them: the same counts, in the same maps.
    fn sent(&mut self, state: &[Option<Mode>], notices: bool) -> Vec<Sent<'f>> {
        let tree = self.tree;
        let selection = self.selection;
        let bare = notices && self.bare;
        let fold = notices && (self.bare || self.compact);
        let mut write_bare = bare;
        let (cuts, mut total) = (0u64, BTreeMap::<String, u64>::new());
        // Folded counts, summed per reason before they are owned (each
        // addition saturates, as `build`'s do: the sum is the same in any
        // order, all of them being positive).
        let mut folded: Vec<(&str, u64)> = Vec::new();
        let mut reasons: Vec<(&str, u64)> = Vec::new();
        let mut sent = Vec::new();
        let mut at = 0;
        while at < state.len() {
            let Some(mode) = state[at] else {
                // Its subtree is unsent: a sent element's ancestors are.
                at = tree.node(at as NodeId).end as usize;
                continue;
            };
            let id = at as NodeId;
            at += 1;
            let mut omitted = None;
            if notices && mode != Mode::Placeholder {
                reasons.clear();
                for child in tree.children(id) {
                    if state[child as usize].is_none() {
                        add_count(&mut reasons, selection.unsent(child), 1);
                    }
                }
                if fold {
                    write_bare |= !reasons.is_empty();
                    for &(reason, n) in &reasons {
                        add_count(&mut folded, reason, n);
                    }
                } else if !reasons.is_empty() {
                    omitted = Some(reasons.clone());
                }
            }
            sent.push(Sent {
                id,
                mode,
                omitted,
                bare: None,
            });
        }
        for (reason, n) in folded {
            let count = total.entry(reason.to_string()).or_default();
            *count = count.saturating_add(n);
        }
        if write_bare {
            let mut cuts = cuts;
            if bare {
                for entry in &sent {
                    if matches!(entry.mode, Mode::Bare { .. }) {
                        let at = self.piece(entry.id, entry.mode);
                        if self.pieces[at as usize].cut {
                            cuts = cuts.saturating_add(1);
                        }
                    }
                }
            }
            sent[0].bare = Some(Notice::Bare {
                cut: cuts,
                reasons: total,
            });
        }
        sent
    }

    /// `entry`'s `half` with its notices for this probe (JSON: 1, after its
    /// children; the outline: 0, its lines), when it has any: rendered the
    /// first time an element carries those notices ([`Noticed`]).
    fn noticed_part(&mut self, entry: &Sent, half: u8) -> Option<Part> {
        if entry.omitted.is_none() && entry.bare.is_none() {
            return None;
        }
        let hash = self.noticed.hash(entry.id, entry.mode, half, entry);
        if let Some(at) = self.noticed.find(hash, entry.id, entry.mode, half, entry) {
            return Some(Part::Noticed(at));
        }
        let element = self.with_notices(entry)?;
        let mut out = Vec::new();
        match self.format {
            Format::Json => render::json_tail(&mut out, &element),
            Format::Outline => {
                let depth = self.tree.node(entry.id).depth as usize;
                render::outline_lines(&mut out, &element, depth);
            }
        }
        let text = String::from_utf8(out).expect("the renderers write UTF-8");
        let key = NoticedKey {
            id: entry.id,
            mode: entry.mode,
            half,
            omitted: entry.omitted.as_ref().map(|reasons| {
                reasons
                    .iter()
                    .map(|&(reason, n)| (Box::from(reason), n))
                    .collect()
            }),
            bare: entry.bare.clone(),
        };
        Some(Part::Noticed(self.noticed.insert(hash, key, text)))
    }

    /// `entry` with its notices for this probe, when it has any.
    fn with_notices(&mut self, entry: &Sent) -> Option<Element<'a>> {
        if entry.omitted.is_none() && entry.bare.is_none() {
            return None;
        }
        let mut element = self.sent_element(entry.id, entry.mode);
        if let Some(reasons) = &entry.omitted {
            write(
                &mut element,
                Notice::Omitted {
                    reasons: reasons
                        .iter()
                        .map(|&(reason, n)| (reason.to_string(), n))
                        .collect(),
                    compact: false,
                },
            );
        }
        if let Some(notice) = &entry.bare {
            write(&mut element, notice.clone());
        }
        Some(element)
    }

    /// `sent`'s JSON parts; with `known`, a piece not built yet, and an
    /// element's half with its notices, as [`Part::Unknown`].
    fn json_parts(&mut self, parts: &mut Vec<Part>, sent: &[Sent], known: bool) {
        let start = match self.noticed.start {
            Some(at) => at,
            None => {
                let mut start = Vec::new();
                render::json_start(&mut start, &self.tree.protocol, &self.tree.instance);
                let at = self.noticed.texts.len() as u32;
                // Found by `start`, never through the table.
                self.noticed.keys.push(NoticedKey {
                    id: NodeId::MAX,
                    mode: Mode::Placeholder,
                    half: u8::MAX,
                    omitted: None,
                    bare: None,
                });
                self.noticed.texts.push(
                    String::from_utf8(start)
                        .expect("the renderers write UTF-8")
                        .into_boxed_str(),
                );
                self.noticed.start = Some(at);
                at
            }
        };
        parts.push(Part::Noticed(start));
        // Open elements: (index in `sent`, whether a child was written).
        let mut open: Vec<(usize, bool)> = Vec::new();
        for (i, entry) in sent.iter().enumerate() {
            let parent = self.tree.node(entry.id).parent();
            while let Some(&(top, children)) = open.last() {
                if Some(sent[top].id) == parent {
                    break;
                }
                open.pop();
                self.close_json(parts, &sent[top], children, known);
            }
            if let Some((_, children)) = open.last_mut() {
                parts.push(Part::Static(match children {
                    true => render::JSON_NEXT_CHILD,
                    false => render::JSON_FIRST_CHILD,
                }));
                *children = true;
            }
            parts.push(match known {
                true => self
                    .find_piece(entry.id, entry.mode)
                    .map_or(Part::Unknown, |at| Part::Piece(at, 0)),
                false => Part::Piece(self.piece(entry.id, entry.mode), 0),
            });
            open.push((i, false));
        }
        while let Some((top, children)) = open.pop() {
            self.close_json(parts, &sent[top], children, known);
        }
        parts.push(Part::Static(render::JSON_END));
    }

    fn close_json(&mut self, parts: &mut Vec<Part>, entry: &Sent, children: bool, known: bool) {
        if children {
            parts.push(Part::Static(render::JSON_LAST_CHILD));
        }
        if known {
            parts.push(match (&entry.omitted, &entry.bare) {
                (None, None) => self
                    .find_piece(entry.id, entry.mode)
                    .map_or(Part::Unknown, |at| Part::Piece(at, 1)),
                _ => Part::Unknown,
            });
            return;
        }
        let part = match self.noticed_part(entry, 1) {
            Some(part) => part,
            None => Part::Piece(self.piece(entry.id, entry.mode), 1),
        };
        parts.push(part);
    }
}

/// Texts between two pieces' cuts of at most this many bytes are kept
/// with their count ([`count_gap`]).
const GAP_KEPT: usize = 256;

/// The tokens of `gap`, the text from one piece's last cut to the next
/// one's first, or `None` past `limit`: the same few bytes of punctuation
/// around ids recur in every probe, so short ones are kept with their
/// count.
fn count_gap(
    gaps: &mut HashMap<Box<str>, usize>,
    gap: &str,
    limit: usize,
) -> Result<Option<usize>> {
    if let Some(&n) = gaps.get(gap) {
        return Ok((n <= limit).then_some(n));
    }
    let n = tokens::count_till(gap, limit)?;
    if let (Some(n), true) = (n, gap.len() <= GAP_KEPT) {
        gaps.insert(gap.into(), n);
    }
    Ok(n)
}

/// Adds `n` to `reason`'s count (saturating, as `build`'s maps do), the
/// reasons in order.
fn add_count<'r>(counts: &mut Vec<(&'r str, u64)>, reason: &'r str, n: u64) {
    match counts.binary_search_by(|(r, _)| (*r).cmp(reason)) {
        Ok(at) => counts[at].1 = counts[at].1.saturating_add(n),
        Err(at) => counts.insert(at, (reason, n)),
    }
}
