//! The fitter's numeric search: measuring a state against every budget,
//! guessing where the edge is from per-element estimates and the sizes
//! measured so far, and the largest fitting x of a monotone family of
//! states (a prefix of the fill order, a cut of one text).

use super::build::skeleton_of;
use super::pieces::Parts;
use super::{add, Filler, Fitted, Mode};
use crate::error::Result;
use crate::model::NodeId;
use crate::policy::Budget;
use crate::redact::Redactor;
use crate::render::{json_fragment, outline_fragment, Format};
use crate::tokens;

/// A rendering measured against every budget.
#[derive(Clone)]
pub(super) struct Probe {
    /// Its bytes.
    pub(super) bytes: usize,
    /// Its size per budget, where measured (see [`crate::tokens::fit`]).
    pub(super) sizes: Vec<Option<usize>>,
    /// The first budget it exceeds.
    pub(super) over: Option<Budget>,
}

/// The states of a search, by their position `x`: one state at a time,
/// changed in place from one x to the next (a copy of a state has an entry
/// per element of the tree: 1.6 MB at 100k elements, per probe).
pub(super) trait States {
    /// The state at `x`, valid until the next call.
    fn at(&mut self, filler: &Filler<'_, '_>, x: usize) -> &[Option<Mode>];
}

/// A state with one element's text cut to `x` bytes.
struct Cuts {
    state: Vec<Option<Mode>>,
    id: NodeId,
}

impl States for Cuts {
    fn at(&mut self, _: &Filler<'_, '_>, cut: usize) -> &[Option<Mode>] {
        self.state[self.id as usize] = Some(Mode::cut(cut));
        &self.state
    }
}

/// A measured state of a search, at position `x`.
pub(super) struct Point {
    pub(super) x: usize,
    pub(super) probe: Probe,
}

impl Point {
    pub(super) fn new(x: usize, probe: Probe) -> Point {
        Point { x, probe }
    }
}

/// Bytes per token assumed before any token is counted; it only places the
/// first probe. o200k gives ~3.5 on synthetic trees; guessing low puts the
/// first probe under the budget, where its count anchors the next guess.
pub(super) const BYTES_PER_TOKEN: f64 = 3.0;

/// The size in budget `i` that the measures predict for a state whose
/// rendering `estimate` puts at `e` bytes. Bytes: `e`, corrected by the
/// measured points (between them by their slope). Tokens: those bytes at
/// the measured tokens per byte (between two counted points by their
/// slope), or at [`BYTES_PER_TOKEN`] before any count. `good` and `bad`
/// carry their estimated bytes.
pub(super) fn predict(i: usize, e: f64, good: (&Point, f64), bad: Option<(&Point, f64)>) -> f64 {
    let (g, eg) = good;
    let bytes_of = |p: &Point| p.probe.bytes as f64;
    let bytes = match bad {
        Some((b, eb)) if eb > eg => {
            bytes_of(g) + (e - eg) * (bytes_of(b) - bytes_of(g)) / (eb - eg)
        }
        _ => bytes_of(g) + (e - eg),
    };
    let counted = |p: &Point| p.probe.sizes[i].map(|s| (bytes_of(p), s as f64));
    match (counted(g), bad.and_then(|(b, _)| counted(b))) {
        (Some((bg, sg)), Some((bb, sb))) if bb > bg => sg + (bytes - bg) * (sb - sg) / (bb - bg),
        (Some((bp, sp)), _) | (None, Some((bp, sp))) => bytes * sp / bp,
        (None, None) => bytes / BYTES_PER_TOKEN,
    }
}

impl<'f, 'a> Filler<'f, 'a> {
    /// The size of `state`'s rendering in `budget`'s unit.
    pub(super) fn measure(
        &mut self,
        state: &[Option<Mode>],
        notices: bool,
        budget: Budget,
    ) -> Result<usize> {
        self.probes += 1;
        self.check_deadline()?;
        let parts = self.parts(state, notices);
        match budget {
            Budget::Bytes(_) => Ok(parts.bytes),
            Budget::Tokens(_) => Ok(self
                .count_parts(&parts, usize::MAX)?
                .expect("a count without a limit")),
        }
    }

    /// The largest cut in `[0, len)` of `id`'s text that fits, with its
    /// measure, given that 0 fits (`at_zero`, the measure of `state`) and,
    /// when measured, how far the whole text is over (`whole`).
    pub(super) fn largest_cut(
        &mut self,
        state: &[Option<Mode>],
        id: NodeId,
        len: usize,
        at_zero: Probe,
        whole: Option<Probe>,
    ) -> Result<Point> {
        let mut cuts = Cuts {
            state: state.to_vec(),
            id,
        };
        // Kept bytes of text stand in for the rendering's bytes.
        let (good, _) = self.largest_fitting(
            Point::new(0, at_zero),
            whole.map(|probe| Point::new(len, probe)),
            len - 1,
            &mut cuts,
            Some,
            true,
        )?;
        Ok(good)
    }

    /// The largest x in `[good.x, end]` whose state fits, given that good's
    /// does and bad's (if measured, with `bad.x == end + 1`) does not; with
    /// the lowest x measured not to fit. Assumes fit is monotone in x;
    /// every answer is measured, so a wrong assumption costs size, never
    /// safety. Each probe goes where the measures so far and `estimate` (a
    /// guess at the bytes of x's rendering) put the edge, so a search
    /// usually ends with one probe each side of it. After three probes in a
    /// row that leave more than half the bracket, it bisects (or, with
    /// nothing over yet, doubles): at worst four probes per halving.
    pub(super) fn largest_fitting(
        &mut self,
        mut good: Point,
        mut bad: Option<Point>,
        end: usize,
        states: &mut impl States,
        estimate: impl Fn(usize) -> Option<usize>,
        notices: bool,
    ) -> Result<(Point, Option<Point>)> {
        let top = |bad: &Option<Point>| bad.as_ref().map_or(end, |b| b.x - 1);
        let mut slow = 0;
        while good.x < top(&bad) {
            let width = top(&bad) - good.x;
            let x = match self.guess(&good, bad.as_ref(), top(&bad), &estimate) {
                Some(x) if slow < 3 => x,
                _ if bad.is_some() => good.x + width.div_ceil(2),
                _ => good.x * 2,
            }
            .clamp(good.x + 1, top(&bad));
            let state = states.at(self, x);
            let probe = self.probe(state, notices)?;
            if probe.over.is_none() {
                good = Point::new(x, probe);
            } else {
                bad = Some(Point::new(x, probe));
            }
            slow = if (top(&bad) - good.x) * 2 > width {
                slow + 1
            } else {
                0
            };
        }
        Ok((good, bad))
    }

    /// The largest x in `(good.x, top]` that the measures predict fits
    /// every budget, or `good.x + 1` if none; `None` past the estimates.
    pub(super) fn guess(
        &self,
        good: &Point,
        bad: Option<&Point>,
        top: usize,
        estimate: &impl Fn(usize) -> Option<usize>,
    ) -> Option<usize> {
        estimate(good.x + 1)?;
        let from = estimate(good.x)? as f64;
        let bad = bad.and_then(|b| Some((b, estimate(b.x)? as f64)));
        let fits = |x: usize| {
            estimate(x).is_some_and(|e| {
                self.budgets.iter().enumerate().all(|(i, &budget)| {
                    predict(i, e as f64, (good, from), bad) <= tokens::limit(budget) as f64
                })
            })
        };
        // The last x that fits, in (lo, hi); predictions grow with x.
        let (mut lo, mut hi) = (good.x, top + 1);
        while lo + 1 < hi {
            let mid = lo + (hi - lo) / 2;
            if fits(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Some(lo.max(good.x + 1))
    }

    /// Renders `state` (without omitted notices unless `notices`: a lower
    /// bound) and measures it against every budget; keeps it if it fits and
    /// is the real rendering, for [`Filler::finish`].
    pub(super) fn probe(&mut self, state: &[Option<Mode>], notices: bool) -> Result<Probe> {
        self.probe_parts(state, notices, None)
    }

    /// [`Filler::probe`], with `state`'s parts when they are at hand.
    pub(super) fn probe_parts(
        &mut self,
        state: &[Option<Mode>],
        notices: bool,
        parts: Option<Parts>,
    ) -> Result<Probe> {
        self.probes += 1;
        self.check_deadline()?;
        let parts = match parts {
            Some(parts) => parts,
            None => self.parts(state, notices),
        };
        let mut sizes = Vec::with_capacity(self.budgets.len());
        let mut over = None;
        for i in 0..self.budgets.len() {
            let budget = self.budgets[i];
            let (fits, size) = self.fit_parts(&parts, budget)?;
            if !fits && over.is_none() {
                over = Some(budget);
            }
            sizes.push(size);
        }
        let probe = Probe {
            bytes: parts.bytes,
            sizes,
            over,
        };
        if over.is_none() && notices {
            self.fitted = Some(Fitted {
                state: super::sent_modes(self.tree, state),
                sizes: probe.sizes.clone(),
            });
        }
        Ok(probe)
    }

    /// Guessed bytes of the rendering with the first k candidates: the
    /// base's, plus each added element's fragment without notices, for k
    /// up to the first whose added fragments alone pass every budget (for
    /// tokens, at a rarely-exceeded 8 bytes a token).
    pub(super) fn estimates(
        &mut self,
        base: &[Option<Mode>],
        base_bytes: usize,
        candidates: &[NodeId],
    ) -> Vec<usize> {
        let cap = self
            .budgets
            .iter()
            .map(|b| match b {
                Budget::Bytes(n) => *n,
                Budget::Tokens(n) => n.saturating_mul(8),
            })
            .min()
            .unwrap_or(usize::MAX);
        // A comma between siblings; the first child's `"children":[]` is
        // left to the measures the estimates are anchored on.
        let separator = usize::from(self.format == Format::Json);
        let mut state = base.to_vec();
        let mut added = 0;
        let mut estimates = vec![base_bytes];
        for &id in candidates {
            if added > cap {
                break;
            }
            let mode = self.mode_for(id);
            let mut chain = vec![(id, mode)];
            for a in self.tree.ancestors(id) {
                if state[a as usize].is_some() {
                    break;
                }
                chain.push((a, Mode::Skeleton));
            }
            for (node, mode) in chain {
                added += match state[node as usize] {
                    Some(now) if now == mode => 0,
                    Some(_) => self
                        .fragment_bytes(node, mode)
                        .saturating_sub(self.fragment_bytes(node, Mode::Skeleton)),
                    None => self.fragment_bytes(node, mode) + separator,
                };
            }
            add(self.tree, &mut state, id, mode);
            estimates.push(base_bytes + added);
        }
        estimates
    }

    /// Bytes of one element's rendering in `mode`, unredacted and without
    /// children or notices: a guess, that costs no redaction for elements
    /// the search never sends. Kept per element and kind of mode: the
    /// estimates run once for the whole selection and once in fill order.
    pub(super) fn fragment_bytes(&mut self, id: NodeId, mode: Mode) -> usize {
        let full = matches!(mode, Mode::Full { .. });
        if let Some(&bytes) = self.fragments.get(&(id, full)) {
            return bytes;
        }
        let source = self.tree.el(id);
        let depth = self.tree.node(id).depth as usize;
        let bytes = match mode {
            Mode::Full { .. } => match self.format {
                Format::Json => json_fragment(&source),
                Format::Outline => outline_fragment(&source, depth),
            },
            Mode::Skeleton | Mode::Placeholder | Mode::Bare { .. } => {
                let skeleton = skeleton_of(source, &mut Redactor::new(&[]));
                match self.format {
                    Format::Json => json_fragment(&skeleton),
                    Format::Outline => outline_fragment(&skeleton, depth),
                }
            }
        };
        self.fragments.insert((id, full), bytes);
        bytes
    }
}
