//! Fitting the selection to the budget, and building the output answer.
//!
//! The kept elements (and the root, and every sent element's ancestors as a
//! skeleton) are sent first; candidates follow in fill order, as a prefix:
//! the first candidate that does not fit ends the filling, after its text is
//! cut to the room left. Sizes are the exact bytes or tokens of the rendered
//! output: per-element bounds narrow the search, and every size that decides
//! anything is measured on the real rendering. The output never exceeds any
//! budget.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::select::{Fate, Selection};
use crate::error::{Error, Result};
use crate::model::{Answer, Block, Content, Element, NodeId, Tree};
use crate::policy::{Budget, RequestPlan};
use crate::redact::Redactor;
use crate::render::{json_element_fragment, notice, outline_element_fragment, Format};
use crate::tokens;

/// How an element is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Id, role, subrole, title and states: the ancestor of something sent.
    Skeleton,
    /// Everything, its content cut to `cut` bytes of text when `Some`.
    Full {
        /// Bytes of text kept, when cut.
        cut: Option<usize>,
    },
    /// Id, role, subrole, states and the withheld notice.
    Placeholder,
}

/// What the filling produced.
pub struct Filled<'a> {
    /// The output answer.
    pub answer: Answer<'a>,
    /// Its rendering.
    pub rendered: String,
    /// Size of the rendering per budget.
    pub used: Vec<usize>,
    /// How each input element was sent, if it was.
    pub modes: Vec<Option<Mode>>,
    /// Replacements per redaction pattern, in the output.
    pub redactions: Vec<usize>,
    /// Rendered-and-measured probes taken to fit.
    pub probes: usize,
}

/// Notices found on an input element (a re-trimmed output), carried forward
/// so trimming an output again changes nothing. Only the exact shapes
/// ctxgate writes are carried; anything else under `ctxgate:` is dropped.
#[derive(Debug, Clone, Default)]
struct Carried {
    omitted: BTreeMap<String, u64>,
    cut: Option<u64>,
    /// A placeholder's notice: (rule, empty).
    withheld: Option<(String, bool)>,
}

struct Prepared<'a> {
    element: Element<'a>,
    redactions: Vec<usize>,
}

/// Fills one request.
///
/// `'f` borrows the request's stages; `'a` is the input, which the output
/// answer keeps borrowing.
pub struct Filler<'f, 'a> {
    answer: &'f Answer<'a>,
    tree: &'f Tree<'f, 'a>,
    selection: &'f Selection,
    plan: &'f RequestPlan,
    format: Format,
    budgets: Vec<Budget>,
    full: Vec<Option<Box<Prepared<'a>>>>,
    skeleton: Vec<Option<Box<Prepared<'a>>>>,
    carried: Vec<Option<Box<Carried>>>,
    probes: usize,
}

impl<'f, 'a> Filler<'f, 'a> {
    /// A filler for one request.
    pub fn new(
        answer: &'f Answer<'a>,
        tree: &'f Tree<'f, 'a>,
        selection: &'f Selection,
        plan: &'f RequestPlan,
        format: Format,
        budgets: Vec<Budget>,
    ) -> Filler<'f, 'a> {
        let n = tree.len();
        let carried = tree
            .nodes()
            .iter()
            .map(|node| carried_notices(node.element).map(Box::new))
            .collect();
        Filler {
            answer,
            tree,
            selection,
            plan,
            format,
            budgets,
            full: (0..n).map(|_| None).collect(),
            skeleton: (0..n).map(|_| None).collect(),
            carried,
            probes: 0,
        }
    }

    /// Fits the selection to the budgets.
    pub fn fill(mut self) -> Result<Filled<'a>> {
        let mut base: Vec<Option<Mode>> = vec![None; self.tree.len()];
        base[0] = Some(Mode::Skeleton);
        let mandatory = self.selection.mandatory.clone();
        for &id in &mandatory {
            let mode = self.mode_for(id);
            add(self.tree, &mut base, id, mode);
        }
        let candidates = self.selection.candidates.clone();

        if self.budgets.is_empty() {
            let mut state = base;
            for &id in &candidates {
                let mode = self.mode_for(id);
                add(self.tree, &mut state, id, mode);
            }
            return self.finish(state);
        }

        if !self.fits(&base)?.0 {
            return self.fit_kept_text(base, &mandatory);
        }

        // Bounds on how many candidates fit: `lo` surely fits by bytes, past
        // `hi` surely nothing fits (by bytes; a heuristic for tokens).
        let (lo, hi) = self.bounds(&base, &candidates);
        let state_at = |filler: &mut Filler, k: usize| -> Vec<Option<Mode>> {
            let mut state = base.clone();
            for &id in &candidates[..k] {
                let mode = filler.mode_for(id);
                add(filler.tree, &mut state, id, mode);
            }
            state
        };
        // The largest k that fits, assuming fit is monotone in k; every
        // answer is measured, so a wrong assumption costs size, never safety.
        let mut good = 0;
        let mut bad = None;
        for k in [lo, hi] {
            if bad.is_none() && k > good {
                let probe = state_at(&mut self, k);
                if self.fits(&probe)?.0 {
                    good = k;
                } else {
                    bad = Some(k);
                }
            }
        }
        while bad.is_none() && good < candidates.len() {
            let next = (good * 2).clamp(good + 1, candidates.len());
            let probe = state_at(&mut self, next);
            if self.fits(&probe)?.0 {
                good = next;
            } else {
                bad = Some(next);
            }
        }
        if let Some(mut bad) = bad {
            while good + 1 < bad {
                let mid = good + (bad - good) / 2;
                let probe = state_at(&mut self, mid);
                if self.fits(&probe)?.0 {
                    good = mid;
                } else {
                    bad = mid;
                }
            }
        }
        let best = good;
        let mut state = state_at(&mut self, best);

        // The first candidate that did not fit: its text, cut to the room left.
        if let Some(&next) = candidates.get(best) {
            if self.mode_for(next) == (Mode::Full { cut: None }) {
                let len = self.text_len(next);
                if len > 0 {
                    let mut trial = state.clone();
                    add(self.tree, &mut trial, next, Mode::Full { cut: Some(0) });
                    if self.fits(&trial)?.0 {
                        let cut = self.largest_cut(&trial, next, len)?;
                        add(self.tree, &mut state, next, Mode::Full { cut: Some(cut) });
                    }
                }
            }
        }
        self.finish(state)
    }

    /// The base does not fit: cut the kept elements' text, in fill order;
    /// if even no text does not fit, say the smallest budget that works.
    fn fit_kept_text(
        mut self,
        base: Vec<Option<Mode>>,
        mandatory: &[NodeId],
    ) -> Result<Filled<'a>> {
        let mut state = base;
        let with_text: Vec<NodeId> = mandatory
            .iter()
            .copied()
            .filter(|&id| {
                state[id as usize] == Some(Mode::Full { cut: None }) && self.has_content(id)
            })
            .collect();
        for &id in &with_text {
            state[id as usize] = Some(Mode::Full { cut: Some(0) });
        }
        let (fits, sizes) = self.fits(&state)?;
        if !fits {
            let budget = *self
                .budgets
                .iter()
                .zip(&sizes)
                .find(|(b, size)| **size > tokens::limit(**b))
                .expect("some budget failed")
                .0;
            let answer = self.build(&state);
            let text = self.format.render(&answer);
            return Err(Error::BudgetUnreachable {
                budget: tokens::limit(budget),
                needed: tokens::measure(&text, budget)?,
                unit: tokens::unit(budget),
            });
        }
        for &id in &with_text {
            let len = self.text_len(id);
            let cut = self.largest_cut(&state, id, len)?;
            state[id as usize] = Some(Mode::Full { cut: Some(cut) });
        }
        self.finish(state)
    }

    /// The largest cut in `[0, len)` of `id`'s text that fits, given that 0 fits.
    fn largest_cut(&mut self, state: &[Option<Mode>], id: NodeId, len: usize) -> Result<usize> {
        let mut trial = state.to_vec();
        let (mut good, mut bad) = (0usize, len);
        while good + 1 < bad {
            let mid = good + (bad - good) / 2;
            trial[id as usize] = Some(Mode::Full { cut: Some(mid) });
            if self.fits(&trial)?.0 {
                good = mid;
            } else {
                bad = mid;
            }
        }
        Ok(good)
    }

    fn mode_for(&self, id: NodeId) -> Mode {
        match self.selection.fates[id as usize] {
            Fate::Masked(_) => Mode::Placeholder,
            _ => Mode::Full { cut: None },
        }
    }

    /// Bounds on the number of candidates that fit, from per-element sizes:
    /// up to `lo` the output surely fits in bytes (bytes bound tokens too);
    /// past `hi` the added elements alone pass the budget (for tokens, at a
    /// rarely-exceeded 8 bytes a token).
    fn bounds(&mut self, base: &[Option<Mode>], candidates: &[NodeId]) -> (usize, usize) {
        let base_answer = self.build(base);
        let base_bytes = self.format.render(&base_answer).len();
        let bytes_budget = self
            .budgets
            .iter()
            .map(|b| tokens::limit(*b))
            .min()
            .unwrap_or(usize::MAX);
        let cap = self
            .budgets
            .iter()
            .map(|b| match b {
                Budget::Bytes(n) => *n,
                Budget::Tokens(n) => n.saturating_mul(8),
            })
            .min()
            .unwrap_or(usize::MAX);
        let wrapper = if self.format == Format::Json { 14 } else { 0 };
        let mut state = base.to_vec();
        let (mut upper, mut lower) = (base_bytes, 0usize);
        let (mut lo, mut hi) = (0, candidates.len());
        for (k, &id) in candidates.iter().enumerate() {
            let mode = self.mode_for(id);
            let mut chain = vec![(id, mode)];
            for a in self.tree.ancestors(id) {
                if state[a as usize].is_some() {
                    break;
                }
                chain.push((a, Mode::Skeleton));
            }
            for &(node, mode) in &chain {
                if state[node as usize] == Some(mode) {
                    continue;
                }
                let (with_notice, bare) = self.fragment_bounds(node, mode);
                match state[node as usize] {
                    Some(_) => {
                        let (_, was) = self.fragment_bounds(node, Mode::Skeleton);
                        upper += with_notice.saturating_sub(was);
                        lower += bare.saturating_sub(was);
                    }
                    None => {
                        upper += with_notice + wrapper;
                        lower += bare;
                    }
                }
            }
            add(self.tree, &mut state, id, mode);
            if upper <= bytes_budget {
                lo = k + 1;
            }
            if lower > cap {
                hi = k + 1;
                break;
            }
        }
        (lo.min(hi), hi)
    }

    /// (bytes with a worst-case omitted notice, bytes without any notice).
    fn fragment_bounds(&mut self, id: NodeId, mode: Mode) -> (usize, usize) {
        let mut element = self.element(id, mode);
        let depth = self.tree.node(id).depth as usize;
        let measure = |e: &Element, format: Format| match format {
            Format::Json => json_element_fragment(e),
            Format::Outline => outline_element_fragment(e, depth),
        };
        let bare = measure(&element, self.format);
        if mode != Mode::Placeholder {
            let mut reasons: BTreeMap<String, u64> = BTreeMap::new();
            let mut count = 0;
            for child in self.tree.children(id) {
                *reasons
                    .entry(self.selection.unsent[child as usize].to_string())
                    .or_default() += 1;
                count += 1;
            }
            if count > 0 {
                self.merge_carried(id, &mut reasons);
                element
                    .attributes
                    .insert(notice::OMITTED.into(), omitted_notice(&reasons));
            }
        }
        (measure(&element, self.format), bare)
    }

    fn merge_carried(&self, id: NodeId, reasons: &mut BTreeMap<String, u64>) {
        if let Some(carried) = &self.carried[id as usize] {
            for (reason, n) in &carried.omitted {
                *reasons.entry(reason.clone()).or_default() += n;
            }
        }
    }

    /// Whether `state` fits every budget, and its size per budget (for a
    /// budget it passes, only a lower bound: the limit plus one).
    fn fits(&mut self, state: &[Option<Mode>]) -> Result<(bool, Vec<usize>)> {
        self.probes += 1;
        let answer = self.build(state);
        let text = self.format.render(&answer);
        let mut sizes = Vec::with_capacity(self.budgets.len());
        let mut fits = true;
        for &budget in &self.budgets {
            let limit = tokens::limit(budget);
            match tokens::measure_within(&text, budget, limit)? {
                Some(size) => sizes.push(size),
                None => {
                    // Over: counting every token of a big rendering (a 50 MB
                    // image) costs seconds, and only an error reports it.
                    fits = false;
                    sizes.push(limit.saturating_add(1));
                }
            }
        }
        Ok((fits, sizes))
    }

    fn finish(mut self, state: Vec<Option<Mode>>) -> Result<Filled<'a>> {
        let answer = self.build(&state);
        let rendered = self.format.render(&answer);
        let mut used = Vec::with_capacity(self.budgets.len());
        for &budget in &self.budgets {
            let size = tokens::measure(&rendered, budget)?;
            if size > tokens::limit(budget) {
                // The search only accepts measured states; this cannot happen.
                return Err(Error::Request(format!(
                    "internal error: output of {size} {} over the budget of {}; nothing is sent",
                    tokens::unit(budget),
                    tokens::limit(budget)
                )));
            }
            used.push(size);
        }
        let mut redactions = vec![0; self.plan.redact.len()];
        for (at, mode) in state.iter().enumerate() {
            let prepared = match mode {
                Some(Mode::Full { .. }) => self.full[at].as_ref(),
                Some(Mode::Skeleton) => self.skeleton[at].as_ref(),
                _ => None,
            };
            if let Some(prepared) = prepared {
                for (total, n) in redactions.iter_mut().zip(&prepared.redactions) {
                    *total += n;
                }
            }
        }
        let probes = self.probes;
        Ok(Filled {
            answer,
            rendered,
            used,
            modes: state,
            redactions,
            probes,
        })
    }

    fn has_content(&self, id: NodeId) -> bool {
        !self.tree.node(id).element.content.is_empty()
    }

    fn text_len(&mut self, id: NodeId) -> usize {
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

    fn prepared_full(&mut self, id: NodeId) -> &Prepared<'a> {
        if self.full[id as usize].is_none() {
            let element = self.tree.node(id).element;
            let mut redactor = Redactor::new(&self.plan.redact);
            let mut out = skeleton_of(element, &mut redactor);
            out.url = element.url.clone().map(|mut u| {
                redactor.cow(&mut u);
                u
            });
            out.content = element
                .content
                .iter()
                .map(|c| redact_content(c, &mut redactor))
                .collect();
            for (key, value) in element.attributes.iter() {
                if key.starts_with(notice::PREFIX) {
                    continue;
                }
                let mut value = value.clone();
                redactor.value(&mut value);
                out.attributes.insert(key.clone(), value);
            }
            if let Some((rule, empty)) = self.carried[id as usize]
                .as_ref()
                .and_then(|c| c.withheld.as_ref())
            {
                // A placeholder sent before, trimmed again under a policy
                // that no longer sees why: it stays a placeholder.
                out.attributes.insert(
                    notice::WITHHELD.into(),
                    json!({"rule": rule, "empty": empty}),
                );
            }
            if let Some(blocks) = self.carried[id as usize].as_ref().and_then(|c| c.cut) {
                out.attributes.insert(
                    notice::CUT.into(),
                    json!({"reason": "budget", "blocks": blocks}),
                );
            }
            self.full[id as usize] = Some(Box::new(Prepared {
                element: out,
                redactions: redactor.counts,
            }));
        }
        self.full[id as usize].as_ref().expect("prepared")
    }

    fn prepared_skeleton(&mut self, id: NodeId) -> &Prepared<'a> {
        if self.skeleton[id as usize].is_none() {
            let element = self.tree.node(id).element;
            let mut redactor = Redactor::new(&self.plan.redact);
            let out = skeleton_of(element, &mut redactor);
            self.skeleton[id as usize] = Some(Box::new(Prepared {
                element: out,
                redactions: redactor.counts,
            }));
        }
        self.skeleton[id as usize].as_ref().expect("prepared")
    }

    /// One element as sent in `mode`, without children or omitted notice.
    fn element(&mut self, id: NodeId, mode: Mode) -> Element<'a> {
        match mode {
            Mode::Skeleton => self.prepared_skeleton(id).element.clone(),
            Mode::Full { cut: None } => self.prepared_full(id).element.clone(),
            Mode::Full { cut: Some(cut) } => {
                let mut element = self.prepared_full(id).element.clone();
                cut_content(&mut element, cut);
                element
            }
            Mode::Placeholder => {
                let source = self.tree.node(id).element;
                let mut out = Element::new(source.id.clone(), source.role.clone());
                out.subrole = source.subrole.clone();
                copy_states(source, &mut out);
                // A placeholder trimmed again keeps what it said: the second
                // pass cannot see the title or content that decided it.
                let carried = self.carried[id as usize]
                    .as_ref()
                    .and_then(|c| c.withheld.as_ref());
                let (rule, empty) = match (carried, &self.selection.fates[id as usize]) {
                    (Some((rule, empty)), _) => (rule.clone(), *empty),
                    (None, Fate::Masked(rule)) => (rule.to_string(), is_empty(source)),
                    (None, _) => ("mask".to_string(), is_empty(source)),
                };
                out.attributes.insert(
                    notice::WITHHELD.into(),
                    json!({"rule": rule, "empty": empty}),
                );
                out
            }
        }
    }

    /// The output answer for a state, built bottom-up without recursion.
    fn build(&mut self, state: &[Option<Mode>]) -> Answer<'a> {
        let n = self.tree.len();
        let mut children: Vec<Vec<Element>> = (0..n).map(|_| Vec::new()).collect();
        let mut root = None;
        for at in (0..n).rev() {
            let Some(mode) = state[at] else { continue };
            let id = at as NodeId;
            let mut element = self.element(id, mode);
            let mut mine = std::mem::take(&mut children[at]);
            mine.reverse();
            element.children = mine.into();
            if mode != Mode::Placeholder {
                let mut reasons: BTreeMap<String, u64> = BTreeMap::new();
                for child in self.tree.children(id) {
                    if state[child as usize].is_none() {
                        *reasons
                            .entry(self.selection.unsent[child as usize].to_string())
                            .or_default() += 1;
                    }
                }
                self.merge_carried(id, &mut reasons);
                if !reasons.is_empty() {
                    element
                        .attributes
                        .insert(notice::OMITTED.into(), omitted_notice(&reasons));
                }
            }
            match self.tree.node(id).parent {
                Some(parent) => children[parent as usize].push(element),
                None => root = Some(element),
            }
        }
        Answer {
            protocol: self.answer.protocol.clone(),
            instance: self.answer.instance.clone(),
            root: root.expect("the root is always sent"),
        }
    }
}

/// Adds `id` in `mode` (never downgrading) and its ancestors as skeletons.
fn add(tree: &Tree<'_, '_>, state: &mut [Option<Mode>], id: NodeId, mode: Mode) {
    match state[id as usize] {
        None | Some(Mode::Skeleton) => state[id as usize] = Some(mode),
        Some(Mode::Full { cut: Some(_) }) if mode == (Mode::Full { cut: None }) => {
            state[id as usize] = Some(mode)
        }
        _ => {}
    }
    for a in tree.ancestors(id) {
        if state[a as usize].is_some() {
            break;
        }
        state[a as usize] = Some(Mode::Skeleton);
    }
}

/// An element's skeleton: id, role, subrole, redacted title and states.
fn skeleton_of<'a>(element: &Element<'a>, redactor: &mut Redactor<'_>) -> Element<'a> {
    let mut out = Element::new(element.id.clone(), element.role.clone());
    out.subrole = element.subrole.clone();
    out.title = element.title.clone().map(|mut t| {
        redactor.cow(&mut t);
        t
    });
    copy_states(element, &mut out);
    out
}

fn copy_states(from: &Element<'_>, to: &mut Element<'_>) {
    to.selected = from.selected;
    to.focused = from.focused;
    to.visible = from.visible;
    to.hovered = from.hovered;
}

/// Whether a masked element has nothing in it: no content, or only empty text.
fn is_empty(element: &Element<'_>) -> bool {
    element.content.iter().all(|c| match &c.block {
        Block::Text { text } => text.is_empty(),
        _ => false,
    })
}

fn omitted_notice(reasons: &BTreeMap<String, u64>) -> Value {
    let count: u64 = reasons.values().sum();
    let reasons: Map<String, Value> = reasons
        .iter()
        .map(|(k, v)| (k.clone(), Value::from(*v)))
        .collect();
    json!({"children": count, "reasons": reasons})
}

fn redact_content<'a>(content: &Content<'a>, redactor: &mut Redactor<'_>) -> Content<'a> {
    let mut out = content.clone();
    match &mut out.block {
        Block::Text { text } => redactor.cow(text),
        Block::ResourceLink { uri, name } => {
            redactor.cow(uri);
            redactor.cow(name);
        }
        Block::Resource { resource } => {
            for (key, value) in resource.iter_mut() {
                if key != "blob" {
                    redactor.value(value);
                }
            }
        }
        Block::Image { .. } | Block::Audio { .. } | Block::Other { .. } => {}
    }
    for value in out.extra.iter_mut().flat_map(|extra| extra.values_mut()) {
        redactor.value(value);
    }
    out
}

/// Keeps at most `cut` bytes of text (at char boundaries) and no other
/// block, and says so in a notice.
fn cut_content(element: &mut Element<'_>, cut: usize) {
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
        element.attributes.insert(
            notice::CUT.into(),
            json!({"reason": "budget", "blocks": changed}),
        );
    }
}

/// The notices an input element carries, in ctxgate's exact shapes.
fn carried_notices(element: &Element) -> Option<Carried> {
    let attributes = &element.attributes;
    if !attributes.keys().any(|k| k.starts_with(notice::PREFIX)) {
        return None;
    }
    let mut carried = Carried::default();
    if let Some(Value::Object(omitted)) = attributes.get(notice::OMITTED) {
        if let (Some(Value::Number(_)), Some(Value::Object(reasons)), 2) = (
            omitted.get("children"),
            omitted.get("reasons"),
            omitted.len(),
        ) {
            for (reason, n) in reasons {
                if let Some(n) = n.as_u64() {
                    if plain_reason(reason) {
                        carried.omitted.insert(reason.clone(), n);
                    }
                }
            }
        }
    }
    if let Some(Value::Object(cut)) = attributes.get(notice::CUT) {
        if cut.len() == 2 && cut.get("reason").and_then(Value::as_str) == Some("budget") {
            carried.cut = cut.get("blocks").and_then(Value::as_u64);
        }
    }
    if let Some(Value::Object(withheld)) = attributes.get(notice::WITHHELD) {
        let placeholder = element.content.is_empty()
            && element.children.is_empty()
            && element.title.is_none()
            && element.url.is_none();
        if let (true, 2, Some(Value::String(rule)), Some(Value::Bool(empty))) = (
            placeholder,
            withheld.len(),
            withheld.get("rule"),
            withheld.get("empty"),
        ) {
            if plain_reason(rule) {
                carried.withheld = Some((rule.clone(), *empty));
            }
        }
    }
    Some(carried)
}

/// A reason as ctxgate writes them: `budget`, `scope`, or `kind:rule-id`.
fn plain_reason(reason: &str) -> bool {
    !reason.is_empty()
        && reason.len() <= 128
        && reason
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ':' | '-' | '_' | '.'))
}
