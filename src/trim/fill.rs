//! Fitting the selection to the budget: the strategy. The numeric search
//! (measuring, guessing, the largest fitting x) is in `search`, building a
//! state's answer and every notice it carries in `build`; the notices'
//! shapes are [`crate::render::notice::Notice`].
//!
//! The kept elements (and the root, and every sent element's ancestors as a
//! skeleton) are sent first; candidates follow in fill order (`select`:
//! priority and nearness to the user), as the largest prefix that fits;
//! filling then goes on past the first candidate that does not fit, adding
//! each later one that still fits (bounded: [`PAST_PROBES`] measures), and
//! that first one has its text cut to the room left. Each element carries
//! its own omitted notice only when the whole selection fits with them;
//! else (compact) the root's one bare notice counts them all. Sizes are the
//! exact bytes or tokens of the rendered output: per-element estimates and
//! the sizes measured so far place each probe, and every size that decides
//! anything is measured on the real rendering. The output never exceeds any
//! budget. When no prefix fits, the kept elements' text is cut, then the
//! state degrades (titles cut, kept elements off the focus path as
//! placeholders, the bare path); when even the bare path does not fit, the
//! error names the least budget with which the same request works. A denied
//! or masked root is sent as a placeholder (an answer needs a root).

use foldhash::{HashMap, HashMapExt};

use super::select::{Fate, Selection};
use crate::deadline::{Deadline, Stage};
use crate::error::{Error, Result};
use crate::model::doc::{Doc, ElementRef};
use crate::model::{Answer, Element, NodeId};
use crate::policy::{Budget, RequestPlan};
use crate::render::{json_fragment, outline_fragment, Format};
use crate::tokens;

mod build;
mod pieces;
mod search;

use build::Prepared;
use search::{Point, Probe, States, BYTES_PER_TOKEN};

/// How an element is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Id, role, subrole, title and states: the ancestor of something sent.
    Skeleton,
    /// Everything, its content cut to `cut` bytes of text when `Some`.
    Full {
        /// Bytes of text kept, when cut (`u32`, so that a state is 8 bytes
        /// a slot: [`Mode::cut`] saturates, which only keeps less).
        cut: Option<u32>,
    },
    /// Id, role, subrole, states and the withheld notice: a masked
    /// element, or a kept one off the focus path the budget cannot hold.
    Placeholder,
    /// A skeleton whose title is cut to `title` bytes (none at 0), and, for
    /// a kept element, without its content: degraded to fit (a cut notice
    /// says so).
    Bare {
        /// Bytes of title kept.
        title: u32,
    },
}

impl Mode {
    /// Everything, the text cut to `bytes` (at most `u32::MAX`: a larger
    /// cut keeps that much, less, never more).
    pub fn cut(bytes: usize) -> Mode {
        Mode::Full {
            cut: Some(u32::try_from(bytes).unwrap_or(u32::MAX)),
        }
    }
}

// A state is one of these per element: at 1M elements, each byte of it is
// 1 MB per state alive.
const _: () = assert!(std::mem::size_of::<Option<Mode>>() == 8);

/// Bytes of title an ancestor keeps at the first step of degrading.
const SHORT_TITLE: u32 = 32;

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
    /// The same per sent element, for the elements with any (`explain`).
    pub redacted: Vec<(NodeId, Vec<usize>)>,
    /// Rendered-and-measured probes taken to fit.
    pub probes: usize,
    /// How many candidates of the fill order were sent whole, when a
    /// budget applied and a prefix of them fit (the fill's properties read
    /// it).
    #[cfg_attr(not(test), allow(dead_code))]
    pub prefix: Option<usize>,
}

/// At most this many candidates past the prefix are measured
/// ([`Filler::fill_past`]).
const PAST_PROBES: usize = 32;

/// A candidate past the prefix is measured only if its guessed size is at
/// most this many times the room left (plus [`PAST_MIN_ROOM`]); once half
/// of [`PAST_PROBES`] are spent, at most the room left (plus that).
const PAST_SLACK: f64 = 1.5;

/// Units (bytes or tokens) of room under which filling past the prefix
/// stops: no element fits in fewer.
const PAST_MIN_ROOM: f64 = 4.0;

/// Bytes per token above which a whole selection's guessed bytes put it
/// past a token budget ([`Filler::whole_guessed_over`]): more than the
/// ~3.5 o200k gives JSON trees, so that a selection that may fit with its
/// notices is searched with them first, as before.
const WHOLE_BYTES_PER_TOKEN: f64 = 4.0;

/// The most candidates whose whole selection [`Filler::prefixes`] tries to
/// prove over a budget from the pieces built ([`Filler::known_over`] lists
/// every one of them: at 1M elements that list alone was ~100 MB more at
/// the peak). A larger selection is searched in the first order, full
/// notices then compact ones, which keeps no compact state alive across
/// the full search (~15 MB at 1M).
const WHOLE_PROOF_MAX: usize = 16_384;

/// The last state that fit, and its measures.
struct Fitted {
    /// The state's sent elements ([`sent_modes`]): a few hundred entries
    /// where the state has one per element of the tree (copying that, 1.6
    /// MB at 100k elements, on every probe that fit was ~50 M instructions
    /// of a `window` request).
    state: Vec<(NodeId, Mode)>,
    sizes: Vec<Option<usize>>,
}

/// The candidates in fill order, for [`Filler::fill`].
pub enum Order<F> {
    /// Made.
    Made(Vec<NodeId>),
    /// Made by this, when a budget binds.
    Later(F),
}

/// Fills one request.
///
/// `'f` borrows the request's stages; `'a` is the input, which the output
/// answer keeps borrowing.
pub struct Filler<'f, 'a> {
    tree: &'f Doc<'a>,
    selection: &'f Selection,
    plan: &'f RequestPlan,
    format: Format,
    budgets: Vec<Budget>,
    /// The elements prepared whole and as skeletons, by id: only those a
    /// probe rendered (a slot per element was 16 MB at 1M).
    full: HashMap<NodeId, Prepared<'a>>,
    skeleton: HashMap<NodeId, Prepared<'a>>,
    /// Each element's renderings, one per mode, kept for every probe
    /// ([`pieces`]): the first of each element's, linked through the rest.
    first_piece: Vec<u32>,
    pieces: Vec<pieces::Piece>,
    /// The text between two pieces' cuts, with its tokens ([`pieces`]).
    gaps: HashMap<Box<str>, usize>,
    /// Guessed bytes of elements' renderings, by id and whether whole
    /// ([`Filler::fragment_bytes`]).
    fragments: HashMap<(NodeId, bool), usize>,
    /// Elements rendered with the notices of a probe ([`pieces`]).
    noticed: pieces::Noticed,
    fitted: Option<Fitted>,
    probes: usize,
    deadline: Option<Deadline>,
    /// Omitted notices compact: none on the elements, their counts in the
    /// root's one bare notice ([`Notice::Bare`]), as the whole selection
    /// does not fit the budget with each element's own (or the input is an
    /// output an earlier ctxgate cut with compact notices).
    ///
    /// [`Notice::Bare`]: crate::render::notice::Notice::Bare
    compact: bool,
    /// The bare path: one notice on the root ([`Notice::Bare`]) instead of
    /// each element's cut and omitted notices.
    ///
    /// [`Notice::Bare`]: crate::render::notice::Notice::Bare
    bare: bool,
    /// Whether [`Filler::finish`] counts a token budget the output cannot
    /// exceed (no more bytes than the limit: a token is at least a byte).
    /// Off only where the report is never shown (`ctxgate trim` without
    /// `--report` or `--json`), so that no vocabulary is loaded for it.
    count_unbound: bool,
}

impl<'f, 'a> Filler<'f, 'a> {
    /// A filler for one request.
    pub fn new(
        tree: &'f Doc<'a>,
        selection: &'f Selection,
        plan: &'f RequestPlan,
        format: Format,
        budgets: Vec<Budget>,
    ) -> Filler<'f, 'a> {
        let n = tree.len();
        Filler {
            tree,
            selection,
            plan,
            format,
            budgets,
            full: HashMap::new(),
            skeleton: HashMap::new(),
            first_piece: vec![pieces::NONE; n],
            pieces: Vec::new(),
            gaps: HashMap::new(),
            fragments: HashMap::new(),
            noticed: pieces::Noticed::default(),
            fitted: None,
            probes: 0,
            deadline: None,
            compact: false,
            bare: false,
            count_unbound: true,
        }
    }

    /// Leaves a token budget the output cannot exceed uncounted: its
    /// `used` is then the output's bytes, an upper bound of its tokens.
    pub fn without_unbound_counts(mut self) -> Filler<'f, 'a> {
        self.count_unbound = false;
        self
    }

    /// Checks `deadline` before every rendering it measures.
    pub fn within(mut self, deadline: Deadline) -> Filler<'f, 'a> {
        self.deadline = Some(deadline);
        self
    }

    fn check_deadline(&self) -> Result<()> {
        match &self.deadline {
            Some(deadline) => deadline.check(Stage::Fill),
            None => Ok(()),
        }
    }

    /// What is sent whatever the budget: the root and the mandatory
    /// elements with their ancestors.
    fn base(&mut self) -> Vec<Option<Mode>> {
        let mut base: Vec<Option<Mode>> = vec![None; self.tree.len()];
        base[0] = Some(self.root_mode());
        let mandatory = self.selection.mandatory.clone();
        for &id in &mandatory {
            let mode = self.mode_for(id);
            add(self.tree, &mut base, id, mode);
        }
        base
    }

    /// Fits the selection to the budgets, with the candidates in fill
    /// order as `order` gives them: made, or made only when a budget binds
    /// (the whole selection, in any order, is one state).
    pub fn fill(mut self, order: Order<impl FnOnce() -> Vec<NodeId>>) -> Result<Filled<'a>> {
        let base = self.base();
        let mandatory = self.selection.mandatory.clone();
        let (all, later) = match order {
            Order::Made(order) => (order, None),
            Order::Later(make) => (self.selection.candidates.clone(), Some(make)),
        };

        if self.budgets.is_empty() {
            let mut state = base;
            for &id in &all {
                let mode = self.mode_for(id);
                add(self.tree, &mut state, id, mode);
            }
            return self.finish(state, None);
        }

        // The estimates are anchored on the base's bytes with the notices
        // the search starts with (full ones, unless the input's are compact).
        let base_parts = self.parts(&base, true);
        // A budget the whole selection fits in sends it whole (what the
        // search would find): one rendering and one count.
        let guess = self.estimates(&base, base_parts.bytes, &all);
        if !self.whole_guessed_over(&guess, all.len()) {
            if let Some(whole) = self.whole_if_it_fits(&base, &all)? {
                let (state, answer, rendered, sizes) = whole;
                let prefix = Some(all.len());
                return self.finish_rendered(state, prefix, answer, rendered, sizes);
            }
        }
        let (candidates, estimates) = match later {
            None => (all, guess),
            Some(make) => {
                drop(all);
                let candidates = make();
                let estimates = self.estimates(&base, base_parts.bytes, &candidates);
                (candidates, estimates)
            }
        };
        let found = self.prefixes(&base, &candidates, &estimates, base_parts)?;
        let Some((best, over)) = found else {
            return self.fit_kept_text(base, &mandatory, &candidates);
        };
        let (best, at_best) = (best.x, best.probe);
        let mut state = self.prefix_state(&base, &candidates, best);
        // Past the first candidate that does not fit, the later ones that do.
        let added = self.fill_past(&mut state, &candidates, best + 1, Some(at_best))?;
        let over = if added { None } else { over };

        // The first candidate that did not fit: its text, cut to the room left.
        if let Some(&next) = candidates.get(best) {
            if self.mode_for(next) == (Mode::Full { cut: None }) {
                let len = self.text_len(next);
                if len > 0 {
                    let mut trial = state.clone();
                    add(self.tree, &mut trial, next, Mode::Full { cut: Some(0) });
                    let at_zero = self.probe(&trial, true)?;
                    if at_zero.over.is_none() {
                        let whole = over.map(|p| p.probe);
                        let cut = self.largest_cut(&trial, next, len, at_zero, whole)?;
                        // No text left: not worth its notice.
                        if cut.x > 0 {
                            add(self.tree, &mut state, next, Mode::cut(cut.x));
                        }
                    }
                }
            }
        }
        self.finish(state, Some(best))
    }

    /// The whole selection (the base and every candidate), its answer,
    /// rendering and sizes per budget, when it fits every budget with the
    /// notices the search starts with: the largest prefix the search would
    /// find is then all of them ([`Filler::prefixes`]). Tried when the
    /// estimates put it within the budget ([`Filler::whole_guessed_over`]);
    /// one that does not fit costs one rendering (of about the budget) and
    /// a count that stops at the limit, and leaves its prepared elements
    /// to the search.
    #[allow(clippy::type_complexity)]
    fn whole_if_it_fits(
        &mut self,
        base: &[Option<Mode>],
        candidates: &[NodeId],
    ) -> Result<Option<(Vec<Option<Mode>>, Answer<'a>, String, Vec<Option<usize>>)>> {
        let state = self.prefix_state(base, candidates, candidates.len());
        self.probes += 1;
        self.check_deadline()?;
        let answer = self.build(&state, true);
        let rendered = self.format.render(&answer);
        let mut sizes = Vec::with_capacity(self.budgets.len());
        for i in 0..self.budgets.len() {
            let budget = self.budgets[i];
            let limit = tokens::limit(budget);
            let size = match budget {
                Budget::Bytes(_) => Some(rendered.len()),
                // Not counted: the bytes alone fit, and `finish` counts
                // them if the report shows them.
                Budget::Tokens(_) if rendered.len() <= limit => None,
                Budget::Tokens(_) => match tokens::count_till(&rendered, limit)? {
                    Some(n) => Some(n),
                    None => return Ok(None),
                },
            };
            if size.is_some_and(|n| n > limit) {
                return Ok(None);
            }
            sizes.push(size);
        }
        Ok(Some((state, answer, rendered, sizes)))
    }

    /// Adds to `state` (which fits) each candidate from `from` on, in fill
    /// order, that still fits whole with it, measured: filling goes on past
    /// a candidate that does not fit. Bounded work: a candidate is measured
    /// only when the added bytes its fragments are guessed at (with the
    /// ancestors it brings in) are predicted, at the state's own bytes per
    /// unit, to take at most [`PAST_SLACK`] times the room left (once half
    /// the measures are spent, the room left itself; plus a
    /// few units), and at most [`PAST_PROBES`] are measured; the scan
    /// stops when the room left is under [`PAST_MIN_ROOM`] units. Whether
    /// anything was added.
    fn fill_past(
        &mut self,
        state: &mut [Option<Mode>],
        candidates: &[NodeId],
        from: usize,
        measured: Option<Probe>,
    ) -> Result<bool> {
        if from >= candidates.len() {
            return Ok(false);
        }
        let mut at = match measured {
            // `state` as the search measured it (it fits): kept for finish
            // as `probe` keeps it.
            Some(probe) => {
                self.fitted = Some(Fitted {
                    state: sent_modes(self.tree, state),
                    sizes: probe.sizes.clone(),
                });
                probe
            }
            None => self.probe(state, true)?,
        };
        if at.over.is_some() {
            return Ok(false);
        }
        let separator = usize::from(self.format == Format::Json);
        let mut probes = 0;
        let mut added = false;
        let mut skeleton_bytes: HashMap<NodeId, usize> = HashMap::new();
        let mut undo = Vec::new();
        for &id in &candidates[from..] {
            // Units left per budget, and units per byte of this state.
            let rooms: Vec<(f64, f64)> = self
                .budgets
                .iter()
                .zip(&at.sizes)
                .map(|(&budget, size)| {
                    let limit = tokens::limit(budget) as f64;
                    let bytes = at.bytes.max(1) as f64;
                    match (budget, size) {
                        (Budget::Bytes(_), _) => (limit - bytes, 1.0),
                        (Budget::Tokens(_), Some(n)) => (limit - *n as f64, *n as f64 / bytes),
                        // Not counted: the bytes alone fit, so do the tokens.
                        (Budget::Tokens(_), None) => {
                            (limit - bytes / BYTES_PER_TOKEN, 1.0 / BYTES_PER_TOKEN)
                        }
                    }
                })
                .collect();
            if rooms.iter().any(|&(room, _)| room < PAST_MIN_ROOM) || probes >= PAST_PROBES {
                break;
            }
            let mode = self.mode_for(id);
            if state[id as usize] == Some(mode) {
                continue;
            }
            // The guessed bytes it adds, its new ancestors with it; the walk
            // stops once past what any budget could hold. Once half the
            // measures are spent on candidates that did not fit, only those
            // guessed within the room itself are measured, so that the rest
            // go to a later, smaller one.
            let slack = match probes >= PAST_PROBES / 2 {
                true => 1.0,
                false => PAST_SLACK,
            };
            let cap = rooms
                .iter()
                .map(|&(room, per_byte)| (room * slack + PAST_MIN_ROOM) / per_byte)
                .fold(f64::INFINITY, f64::min);
            // The raw strings first: a big element is skipped unserialized.
            if raw_bytes(self.tree.el(id), mode) as f64 > cap {
                continue;
            }
            let mut bytes = match state[id as usize] {
                Some(_) => self
                    .fragment_bytes(id, mode)
                    .saturating_sub(self.fragment_bytes(id, Mode::Skeleton)),
                None => self.fragment_bytes(id, mode) + separator,
            } as f64;
            if state[id as usize].is_none() {
                for a in self.tree.ancestors(id) {
                    if state[a as usize].is_some() || bytes > cap {
                        break;
                    }
                    // Each ancestor's bytes once, however many candidates
                    // below it are guessed (a 1 MB subrole above 200 of them).
                    let skeleton = *skeleton_bytes.entry(a).or_insert_with(|| {
                        let element = self.tree.el(a);
                        match raw_bytes(element, Mode::Skeleton) as f64 > cap {
                            true => usize::MAX / 2,
                            false => self.fragment_bytes(a, Mode::Skeleton),
                        }
                    });
                    bytes += (skeleton + separator) as f64;
                }
            }
            if bytes > cap {
                continue;
            }
            // Tried in place, and undone if it does not fit: a copy of the
            // state per measure was ~50 M instructions of a `window` request.
            undo.clear();
            add_undoable(self.tree, state, id, mode, &mut undo);
            probes += 1;
            let probe = self.probe(state, true)?;
            if probe.over.is_none() {
                at = probe;
                added = true;
            } else {
                for &(at, old) in undo.iter().rev() {
                    state[at as usize] = old;
                }
            }
        }
        Ok(added)
    }

    /// The largest prefix of the candidates that fits: with full notices
    /// when the whole selection fits with them (a budget the whole answer
    /// fits in sends exactly the unbudgeted output), else with compact ones
    /// ([`Filler::largest_prefix`] once per kind, the compact search from
    /// the start: a state measured with full notices is not reused).
    ///
    /// When the estimates put the whole selection past the budget, the
    /// compact search goes first, and the full one is left out if the
    /// pieces that search built prove the whole selection over with full
    /// notices ([`Filler::known_over`]): its answer would not be used, as
    /// it is used only when it is the whole selection, which it only is
    /// measured to fit. So the answer is the same in either order, and
    /// only the measures taken differ.
    fn prefixes(
        &mut self,
        base: &[Option<Mode>],
        candidates: &[NodeId],
        estimates: &[usize],
        base_parts: pieces::Parts,
    ) -> Result<Option<(Point, Option<Point>)>> {
        let m = candidates.len();
        let whole = |found: &Option<(Point, Option<Point>)>| {
            found.as_ref().is_some_and(|(best, _)| best.x == m)
        };
        if self.compact {
            // The input's notices are compact: so are the output's.
            let at_base = self.probe_parts(base, true, Some(base_parts))?;
            return self.largest_prefix(base, candidates, at_base, estimates);
        }
        // A selection past `WHOLE_PROOF_MAX` is not proved over: the first
        // order, as for one the estimates put within the budget.
        if m > WHOLE_PROOF_MAX || !self.whole_guessed_over(estimates, m) {
            let at_base = self.probe_parts(base, true, Some(base_parts))?;
            let found = self.largest_prefix(base, candidates, at_base, estimates)?;
            if whole(&found) {
                return Ok(found);
            }
            self.compact = true;
            self.fitted = None;
            let at_base = self.probe(base, true)?;
            return self.largest_prefix(base, candidates, at_base, estimates);
        }
        self.compact = true;
        self.fitted = None;
        let at_base = self.probe(base, true)?;
        let compact = self.largest_prefix(base, candidates, at_base, estimates)?;
        let compact_fitted = self.fitted.take();
        self.compact = false;
        let all = self.prefix_state(base, candidates, m);
        if !self.whole_known_over(&all, candidates)? {
            let at_base = self.probe(base, true)?;
            let full = self.largest_prefix(base, candidates, at_base, estimates)?;
            if whole(&full) {
                return Ok(full);
            }
        }
        self.compact = true;
        self.fitted = compact_fitted;
        Ok(compact)
    }

    /// Whether the whole selection (`all`, the state of every candidate) is
    /// over a budget with full notices, as far as the pieces built show
    /// it ([`Filler::known_over`]), once the longest prefix of the fill
    /// order whose pieces the compact search built has its ancestors'
    /// pieces too, in their modes in `all` (an ancestor that is a later
    /// candidate is sent whole there, a skeleton in the prefix): their
    /// text is most of what a probe past the budget counted.
    fn whole_known_over(&mut self, all: &[Option<Mode>], candidates: &[NodeId]) -> Result<bool> {
        let mut seen = vec![false; all.len()];
        for &id in candidates {
            let Some(mode) = all[id as usize] else {
                continue;
            };
            if !self.has_piece(id, mode) {
                break;
            }
            for a in self.tree.ancestors(id) {
                if std::mem::replace(&mut seen[a as usize], true) {
                    break;
                }
                if let Some(mode) = all[a as usize] {
                    self.build_piece(a, mode);
                }
            }
        }
        self.known_over(all)
    }

    /// Whether the estimates put the whole selection (`m` candidates) past
    /// a budget: its guessed bytes (without notices) past a byte budget,
    /// or past [`WHOLE_BYTES_PER_TOKEN`] bytes per token of a token budget;
    /// or the estimates stop before it. Only a guess: it orders the
    /// searches of [`Filler::prefixes`], not what they find.
    fn whole_guessed_over(&self, estimates: &[usize], m: usize) -> bool {
        let Some(&bytes) = estimates.get(m) else {
            return true;
        };
        self.budgets.iter().any(|&budget| match budget {
            Budget::Bytes(n) => bytes > n,
            Budget::Tokens(n) => bytes as f64 > n as f64 * WHOLE_BYTES_PER_TOKEN,
        })
    }

    /// The largest k such that the base and the first k candidates fit,
    /// with its measure and the measure of k + 1 when it was taken; `None`
    /// if no k fits. `at_base` is the base's measure.
    ///
    /// Sizes are not monotone in k: adding the last unsent child of an
    /// element removes its `ctxgate:omitted` notice (or a reason from it),
    /// which can weigh more than the child. So the search as if they were
    /// only gives a floor, a k that fits. Without omitted notices sizes are
    /// monotone (an element only adds bytes), and that lower bound puts a
    /// `top` on the k that can fit. Between two *drop points* (the k whose
    /// candidate empties one of a sent element's reason counts) sizes with
    /// notices grow too (an element outweighs a count losing a digit or a
    /// plural). So a k above the floor fits only in a segment that starts
    /// above it and whose first state fits: the segments up to `top` are
    /// tried from the top down, and the first that fits is searched.
    fn largest_prefix(
        &mut self,
        base: &[Option<Mode>],
        candidates: &[NodeId],
        at_base: Probe,
        estimates: &[usize],
    ) -> Result<Option<(Point, Option<Point>)>> {
        let prefixes = &mut Prefixes::new(base, candidates);
        let estimate = |k: usize| estimates.get(k).copied();
        let m = candidates.len();
        let (floor, top) = if at_base.over.is_none() {
            let (good, over) =
                self.largest_fitting(Point::new(0, at_base), None, m, prefixes, estimate, true)?;
            if good.x == m {
                return Ok(Some((good, None)));
            }
            // The floor fits with its notices, so without them too.
            let from = Point::new(good.x, good.probe.clone());
            let floor = (good, over);
            let (top, _) = self.largest_fitting(from, None, m, prefixes, estimate, false)?;
            (Some(floor), top.x)
        } else {
            let bare = self.probe(base, false)?;
            if bare.over.is_some() {
                return Ok(None);
            }
            let (top, _) =
                self.largest_fitting(Point::new(0, bare), None, m, prefixes, estimate, false)?;
            (None, top.x)
        };
        // The floor's next state was measured over: segments from there on.
        let lowest = floor.as_ref().map_or(0, |(good, _)| good.x + 2);
        let starts = self.segment_starts(base, candidates, top);
        for (i, &start) in starts.iter().enumerate().rev() {
            if start < lowest {
                break;
            }
            let end = starts.get(i + 1).map_or(top, |&next| next - 1);
            let state = prefixes.at(self, start);
            let probe = self.probe(state, true)?;
            if probe.over.is_none() {
                let (best, over) = self.largest_fitting(
                    Point::new(start, probe),
                    None,
                    end,
                    prefixes,
                    estimate,
                    true,
                )?;
                let over = over.filter(|o| o.x == best.x + 1);
                return Ok(Some((best, over)));
            }
        }
        Ok(floor.map(|(good, over)| {
            let over = over.filter(|o| o.x == good.x + 1);
            (good, over)
        }))
    }

    /// The size in `budget`'s unit of the base with the first k
    /// `candidates` (in fill order), for every k from 0 to all of them, with compact notices;
    /// and the size of all of them with the notices sent when they all fit
    /// (full ones, unless the input carries compact ones).
    #[cfg(test)]
    pub fn prefix_sizes(
        mut self,
        budget: Budget,
        candidates: Vec<NodeId>,
    ) -> Result<(Vec<usize>, usize)> {
        let base = self.base();
        let all = self.prefix_state(&base, &candidates, candidates.len());
        let whole = self.measure(&all, true, budget)?;
        self.compact = true;
        let sizes = (0..=candidates.len())
            .map(|k| {
                let state = self.prefix_state(&base, &candidates, k);
                self.measure(&state, true, budget)
            })
            .collect::<Result<Vec<usize>>>()?;
        Ok((sizes, whole))
    }

    /// The base with the first k candidates.
    fn prefix_state(
        &self,
        base: &[Option<Mode>],
        candidates: &[NodeId],
        k: usize,
    ) -> Vec<Option<Mode>> {
        let mut state = base.to_vec();
        for &id in &candidates[..k] {
            let mode = self.mode_for(id);
            add(self.tree, &mut state, id, mode);
        }
        state
    }

    /// 0 and the drop points up to `upto`, ascending: each k whose
    /// candidate (or its topmost new ancestor) is the last child of a sent
    /// element left unsent for its reason, so that adding it removes that
    /// reason from the element's omitted notice.
    fn segment_starts(
        &self,
        base: &[Option<Mode>],
        candidates: &[NodeId],
        upto: usize,
    ) -> Vec<usize> {
        let tree = self.tree;
        let selection = self.selection;
        // Only whether each element is sent: a byte each, not a mode.
        let mut sent: Vec<bool> = base.iter().map(Option::is_some).collect();
        // Per sent element: its unsent children per reason (a map, as few
        // elements are sent).
        let mut left: HashMap<NodeId, Vec<(&str, usize)>> = HashMap::new();
        let count = |sent: &[bool], id: NodeId| {
            let mut counts: Vec<(&str, usize)> = Vec::new();
            for child in tree.children(id) {
                if !sent[child as usize] {
                    let reason: &str = selection.unsent(child);
                    match counts.iter_mut().find(|(r, _)| *r == reason) {
                        Some((_, n)) => *n += 1,
                        None => counts.push((reason, 1)),
                    }
                }
            }
            counts
        };
        for (at, mode) in base.iter().enumerate() {
            if mode.is_some() {
                left.insert(at as NodeId, count(&sent, at as NodeId));
            }
        }
        let mut starts = vec![0];
        for (i, &id) in candidates[..upto].iter().enumerate() {
            if sent[id as usize] {
                continue;
            }
            let mut top = id;
            let mut chain = vec![id];
            for a in tree.ancestors(id) {
                if sent[a as usize] {
                    break;
                }
                chain.push(a);
                top = a;
            }
            // What `add` sends: the candidate and its unsent ancestors.
            for &node in &chain {
                sent[node as usize] = true;
            }
            let parent = tree.node(top).parent().and_then(|p| left.get_mut(&p));
            if let Some(counts) = parent {
                let reason: &str = selection.unsent(top);
                if let Some(at) = counts.iter().position(|(r, _)| *r == reason) {
                    counts[at].1 -= 1;
                    if counts[at].1 == 0 {
                        counts.swap_remove(at);
                        starts.push(i + 1);
                    }
                }
            }
            for node in chain {
                left.insert(node, count(&sent, node));
            }
        }
        starts
    }

    /// No prefix of the candidates fits: send the kept elements alone,
    /// their text cut. Each starts at whichever is smaller, whole or cut to
    /// nothing (a cut writes a notice, which can outweigh a short text),
    /// then the cut ones grow, in fill order. If that does not fit, it
    /// degrades before failing, a step at a time until one fits: titles of
    /// the skeletons (and of kept elements without content) cut to
    /// [`SHORT_TITLE`] bytes; kept elements off the
    /// focus path sent as placeholders (rule `budget`); then the bare path:
    /// no title anywhere and the kept elements on the path without content
    /// (ids, roles, subroles, states and cut notices). Each element changes
    /// only where that makes its own rendering smaller. If even the bare
    /// path does not fit, the error names the smallest budget with which
    /// this request works.
    fn fit_kept_text(
        mut self,
        base: Vec<Option<Mode>>,
        mandatory: &[NodeId],
        candidates: &[NodeId],
    ) -> Result<Filled<'a>> {
        let mut state = base.clone();
        let mut cut = Vec::new();
        for &id in mandatory {
            if state[id as usize] == Some(Mode::Full { cut: None })
                && self.has_content(id)
                && self.cut_is_smaller(id, Mode::Full { cut: None }, Mode::Full { cut: Some(0) })
            {
                state[id as usize] = Some(Mode::Full { cut: Some(0) });
                cut.push(id);
            }
        }
        let mut at = self.probe(&state, true)?;
        let mut tried = vec![(state.clone(), false)];
        let on_path = self.on_path();
        for step in 0..3 {
            if at.over.is_none() {
                break;
            }
            if step == 2 {
                // The bare path: its one notice on the root, so an
                // element's own notices no longer weigh on its choice.
                self.bare = true;
                self.fitted = None;
            }
            for at in 0..state.len() {
                let id = at as NodeId;
                let Some(from) = state[at] else { continue };
                let to = match (step, from) {
                    (0, Mode::Skeleton) => Mode::Bare { title: SHORT_TITLE },
                    // A kept element without content: only its title is cut.
                    (0, Mode::Full { .. }) if !self.has_content(id) => {
                        Mode::Bare { title: SHORT_TITLE }
                    }
                    (1, Mode::Full { .. }) if !on_path[at] => Mode::Placeholder,
                    (2, Mode::Skeleton | Mode::Bare { .. }) => Mode::Bare { title: 0 },
                    (2, Mode::Full { .. }) if on_path[at] => Mode::Bare { title: 0 },
                    _ => continue,
                };
                if self.cut_is_smaller(id, from, to) {
                    state[at] = Some(to);
                }
            }
            at = self.probe(&state, true)?;
            tried.push((state.clone(), self.bare));
        }
        if let Some(budget) = at.over {
            return Err(self.unreachable(budget, &base, candidates, &tried)?);
        }
        if self.bare {
            // The bare path fits: what it cut grows back while it fits,
            // the titles nearest the user first, then the candidates in
            // fill order (their notices stay in the root's one).
            let before = &tried[tried.len() - 2].0;
            let mut path = vec![super::select::position(self.tree)];
            path.extend(self.tree.ancestors(path[0]));
            for &id in path.iter().take(PAST_PROBES) {
                let (Some(now), Some(was)) = (state[id as usize], before[id as usize]) else {
                    continue;
                };
                if now == was || !matches!(was, Mode::Skeleton | Mode::Bare { .. }) {
                    continue;
                }
                let mut trial = state.clone();
                trial[id as usize] = Some(was);
                let probe = self.probe(&trial, true)?;
                if probe.over.is_none() {
                    state = trial;
                    at = probe;
                }
            }
            if self.fill_past(&mut state, candidates, 0, None)? {
                at = self.probe(&state, true)?;
            }
        }
        for id in cut {
            if state[id as usize] != Some(Mode::Full { cut: Some(0) }) {
                continue;
            }
            let len = self.text_len(id);
            let grown = self.largest_cut(&state, id, len, at, None)?;
            state[id as usize] = Some(Mode::cut(grown.x));
            at = grown.probe;
        }
        self.finish(state, None)
    }

    /// Whether each element is on the focus path: the user's position and
    /// its ancestors.
    fn on_path(&self) -> Vec<bool> {
        let mut on_path = vec![false; self.tree.len()];
        let at = super::select::position(self.tree);
        on_path[at as usize] = true;
        for a in self.tree.ancestors(at) {
            on_path[a as usize] = true;
        }
        on_path
    }

    /// Whether `id`'s own rendering is smaller in mode `to` (its text cut
    /// to nothing, a title cut, a placeholder: with its notice) than in
    /// mode `from`.
    fn cut_is_smaller(&mut self, id: NodeId, from: Mode, to: Mode) -> bool {
        let whole = self.element(id, from);
        let cut = self.element(id, to);
        let depth = self.tree.node(id).depth as usize;
        let size = |e: &Element| match self.format {
            Format::Json => json_fragment(e),
            Format::Outline => outline_fragment(e, depth),
        };
        size(&cut) < size(&whole)
    }

    /// The error for a request no state fits in `budget`: the smallest
    /// limit of that budget with which it works, the least size of the
    /// states the fill tries, that is of the kept elements cut and each
    /// step of degrading them (`kept`) and of every prefix of the
    /// candidates. Within a segment between
    /// drop points sizes grow, so only each segment's first state counts,
    /// and the segments stop where the size without notices (a lower
    /// bound) reaches the least size found.
    fn unreachable(
        &mut self,
        budget: Budget,
        base: &[Option<Mode>],
        candidates: &[NodeId],
        kept: &[(Vec<Option<Mode>>, bool)],
    ) -> Result<Error> {
        let mut best = usize::MAX;
        for (state, bare) in kept {
            self.bare = *bare;
            best = best.min(self.measure(state, true, budget)?);
        }
        self.bare = false;
        for start in self.segment_starts(base, candidates, candidates.len()) {
            let state = self.prefix_state(base, candidates, start);
            if self.measure(&state, false, budget)? >= best {
                break;
            }
            best = best.min(self.measure(&state, true, budget)?);
        }
        Ok(Error::BudgetUnreachable {
            budget: tokens::limit(budget),
            needed: best,
            unit: tokens::unit(budget),
        })
    }

    /// How the root is sent: a placeholder when it is denied or masked,
    /// else a skeleton.
    fn root_mode(&self) -> Mode {
        match self.selection.fates[0] {
            Fate::Denied(_) | Fate::Masked(_) => Mode::Placeholder,
            _ => Mode::Skeleton,
        }
    }

    /// How a sent element is sent: masked ones, and placeholders of an
    /// earlier trim (whose notice must survive a second one), as
    /// placeholders; the rest whole.
    fn mode_for(&self, id: NodeId) -> Mode {
        match self.selection.fates[id as usize] {
            Fate::Masked(_) => Mode::Placeholder,
            _ => Mode::Full { cut: None },
        }
    }

    fn finish(mut self, state: Vec<Option<Mode>>, prefix: Option<usize>) -> Result<Filled<'a>> {
        // The last probe that fit is usually the final state: its exact
        // sizes are reused, not counted again.
        let answer = self.build(&state, true);
        let rendered = self.format.render(&answer);
        let sizes = match self.fitted.take() {
            Some(fitted) if fitted.state == sent_modes(self.tree, &state) => fitted.sizes,
            _ => vec![None; self.budgets.len()],
        };
        self.finish_rendered(state, prefix, answer, rendered, sizes)
    }

    /// [`Filler::finish`] of a state already built and rendered, with its
    /// sizes per budget where measured.
    fn finish_rendered(
        self,
        state: Vec<Option<Mode>>,
        prefix: Option<usize>,
        answer: Answer<'a>,
        rendered: String,
        sizes: Vec<Option<usize>>,
    ) -> Result<Filled<'a>> {
        let mut used = Vec::with_capacity(self.budgets.len());
        for (&budget, size) in self.budgets.iter().zip(sizes) {
            let size = match size {
                Some(size) => size,
                None if !self.count_unbound && rendered.len() <= tokens::limit(budget) => {
                    rendered.len()
                }
                None => tokens::measure(&rendered, budget)?,
            };
            if size > tokens::limit(budget) {
                // The search only accepts measured states; this cannot happen.
                return Err(Error::OverBudget {
                    size,
                    limit: tokens::limit(budget),
                    unit: tokens::unit(budget),
                });
            }
            used.push(size);
        }
        let mut redactions = vec![0; self.plan.redact.len()];
        let mut redacted = Vec::new();
        for (at, mode) in state.iter().enumerate() {
            let prepared = match mode {
                Some(Mode::Full { .. }) => self.full.get(&(at as NodeId)),
                Some(Mode::Skeleton | Mode::Bare { .. }) => self.skeleton.get(&(at as NodeId)),
                _ => None,
            };
            if let Some(prepared) = prepared {
                for (total, n) in redactions.iter_mut().zip(&prepared.redactions) {
                    *total += n;
                }
                if prepared.redactions.iter().any(|&n| n > 0) {
                    redacted.push((at as NodeId, prepared.redactions.clone()));
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
            redacted,
            probes,
            prefix,
        })
    }
}

/// The bytes of an element's own strings in `mode` (id, subrole, title;
/// whole, its text too): what its rendering holds at least, before
/// redaction. Cheap: nothing is serialized.
fn raw_bytes(element: ElementRef<'_, '_>, mode: Mode) -> usize {
    let own = element.id().len() + element.subrole().map_or(0, str::len);
    match mode {
        // Title, url and content.
        Mode::Full { .. } => own + element.text_bytes(),
        _ => own + element.title().map_or(0, str::len),
    }
}

/// The base with the first k candidates, for each k a search asks for
/// ([`Filler::prefix_state`]), kept as one state: from one k to a larger
/// one the candidates between are added, to a smaller one the changes they
/// made are undone (the log holds each change with its value before, and
/// where each candidate's changes begin), so a probe costs the changes
/// between two prefixes, not a copy of the base.
struct Prefixes<'c> {
    base: &'c [Option<Mode>],
    candidates: &'c [NodeId],
    state: Vec<Option<Mode>>,
    k: usize,
    undo: Vec<(NodeId, Option<Mode>)>,
    /// Per candidate added, where its changes begin in `undo`.
    marks: Vec<usize>,
}

impl<'c> Prefixes<'c> {
    fn new(base: &'c [Option<Mode>], candidates: &'c [NodeId]) -> Prefixes<'c> {
        Prefixes {
            base,
            candidates,
            state: base.to_vec(),
            k: 0,
            undo: Vec::new(),
            marks: Vec::new(),
        }
    }
}

impl States for Prefixes<'_> {
    fn at(&mut self, filler: &Filler<'_, '_>, k: usize) -> &[Option<Mode>] {
        while self.k < k {
            let id = self.candidates[self.k];
            self.marks.push(self.undo.len());
            add_undoable(
                filler.tree,
                &mut self.state,
                id,
                filler.mode_for(id),
                &mut self.undo,
            );
            self.k += 1;
        }
        if self.k > k {
            let mark = self.marks[k];
            for &(at, before) in self.undo[mark..].iter().rev() {
                self.state[at as usize] = before;
            }
            self.undo.truncate(mark);
            self.marks.truncate(k);
            self.k = k;
        }
        debug_assert!(
            self.state == filler.prefix_state(self.base, self.candidates, k),
            "a prefix changed in place is the prefix built from the base"
        );
        &self.state
    }
}

/// Adds `id` in `mode` (never downgrading) and its ancestors as skeletons.
fn add(tree: &Doc<'_>, state: &mut [Option<Mode>], id: NodeId, mode: Mode) {
    add_with(tree, state, id, mode, |_, _| {});
}

/// [`add`], pushing on `undo` each position it changes with its value
/// before, in the order changed.
fn add_undoable(
    tree: &Doc<'_>,
    state: &mut [Option<Mode>],
    id: NodeId,
    mode: Mode,
    undo: &mut Vec<(NodeId, Option<Mode>)>,
) {
    add_with(tree, state, id, mode, |at, before| undo.push((at, before)));
}

/// [`add`], calling `changed` with each position it changes and its value
/// before.
#[inline(always)]
fn add_with(
    tree: &Doc<'_>,
    state: &mut [Option<Mode>],
    id: NodeId,
    mode: Mode,
    mut changed: impl FnMut(NodeId, Option<Mode>),
) {
    let before = state[id as usize];
    let upgrade = match before {
        None | Some(Mode::Skeleton) => true,
        Some(Mode::Full { cut: Some(_) }) => mode == (Mode::Full { cut: None }),
        _ => false,
    };
    if upgrade {
        changed(id, before);
        state[id as usize] = Some(mode);
    }
    for a in tree.ancestors(id) {
        if state[a as usize].is_some() {
            break;
        }
        changed(a, None);
        state[a as usize] = Some(Mode::Skeleton);
    }
}

/// `state`'s sent elements in document order, with their modes: the
/// state, in as many entries as it sends. A sent element's ancestors are
/// sent ([`add`]), so an unsent element's subtree is skipped unread.
fn sent_modes(tree: &Doc<'_>, state: &[Option<Mode>]) -> Vec<(NodeId, Mode)> {
    let mut sent = Vec::new();
    let mut at = 0;
    while at < state.len() {
        match state[at] {
            Some(mode) => {
                sent.push((at as NodeId, mode));
                at += 1;
            }
            None => at = tree.node(at as NodeId).end as usize,
        }
    }
    debug_assert_eq!(
        sent.len(),
        state.iter().flatten().count(),
        "every sent element's ancestors are sent"
    );
    sent
}

#[cfg(test)]
mod tests {
    use super::Mode;

    #[test]
    fn a_cut_past_u32_keeps_less_never_more() {
        assert_eq!(Mode::cut(7), Mode::Full { cut: Some(7) });
        let max = u32::MAX as usize;
        assert_eq!(
            Mode::cut(max),
            Mode::Full {
                cut: Some(u32::MAX)
            }
        );
        assert_eq!(
            Mode::cut(max + 1),
            Mode::Full {
                cut: Some(u32::MAX)
            }
        );
        assert_eq!(
            Mode::cut(usize::MAX),
            Mode::Full {
                cut: Some(u32::MAX)
            }
        );
    }
}
