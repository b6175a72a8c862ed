//! Redaction: the policy's text patterns, applied natively to every string
//! that leaves (titles, text content, urls, attribute values and the keys of
//! objects inside them, content block fields and keys). Ids, roles and
//! subroles are never rewritten; SECURITY.md lists every exception.
//!
//! One pass, not a chain of replacements: every pattern is run over the
//! *original* string, the spans it finds are merged (overlapping spans become
//! one, replaced by the text of the span that starts first, then the longest,
//! then the lowest rule id), and the string is rebuilt once. So the result
//! does not depend on the order of the patterns, and since no replacement may
//! match any pattern (checked when the plan is built, [`check_replacements`])
//! redacting a redacted string changes nothing.
//!
//! Boundaries are what a reader sees, not regex `\b` (which is Unicode-aware,
//! so kana next to a digit is no boundary): a match is a secret only when it
//! is delimited by anything that is not an ASCII letter or digit. A match that
//! starts with an ASCII letter or digit right after another, or ends with one
//! right before another, is rejected and the search goes on after it.
//!
//! A `luhn` pattern finds digit runs (any Unicode decimal digits, with the
//! separators its pattern allows); inside a run every window of whole digit
//! groups holding 13 to 19 digits is a candidate (a window of several groups
//! only if each group has at least 3 digits, as people group card numbers),
//! and every candidate that is delimited as above, starts like a card of a
//! network in use ([`card_prefix`]) and whose digit values pass the Luhn
//! check is replaced;
//! the rest of the run stays.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// A regex of the policy (a redaction's or a title pattern): the text it
/// was written as, and how it searches. A pattern of the embedded default
/// policy is not compiled when the plan is built: build.rs determinized it
/// into a pair of dense DFAs (forward, then reverse for the start), loaded
/// from the binary the first time the pattern searches; a pattern whose
/// DFAs would be too large is compiled then. Until then, a pattern whose
/// matches all start with (or, for one without such prefixes, hold) one of
/// a few literals (build.rs's needles) finds nothing, without loading, in
/// a text that holds none of them; so does one in a text shorter than its
/// shortest match, or without a byte a match can start with
/// (`card-number`: a digit). Any other
/// pattern is a `regex::Regex` compiled at once. All find the same
/// leftmost-first matches (`src/tests/patterns.rs` compares them on
/// adversarial strings).
#[derive(Clone)]
pub struct Pattern {
    inner: Inner,
}

#[derive(Clone)]
enum Inner {
    Compiled(regex::Regex),
    Precompiled(&'static Precompiled),
}

impl std::fmt::Debug for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Pattern").field(&self.as_str()).finish()
    }
}

impl From<regex::Regex> for Pattern {
    fn from(regex: regex::Regex) -> Pattern {
        Pattern {
            inner: Inner::Compiled(regex),
        }
    }
}

/// A dense DFA's serialized bytes, aligned as its deserializer wants
/// (`u32`). Built by build.rs.
#[repr(C)]
struct Aligned<B: ?Sized> {
    align: [u32; 0],
    bytes: B,
}

/// A pattern of the embedded default policy, prepared by build.rs.
struct Precompiled {
    /// Its place in [`PRECOMPILED`].
    slot: usize,
    pattern: &'static str,
    /// The serialized forward and reverse DFAs, unless determinizing the
    /// pattern blew up.
    dfa: Option<(&'static [u8], &'static [u8])>,
    /// What every match starts with, or (`inner`) holds: needles, each
    /// with whether it stands for all its ASCII case variants; `None` when
    /// that is not a few literals.
    prefixes: Option<&'static [(&'static [u8], bool)]>,
    /// Whether the needles are not the pattern's own prefixes: literals
    /// inside every match, many for the title patterns. They are looked
    /// for only in the first [`INNER_BUDGET`] bytes of text the pattern is
    /// asked to search; past that it loads (on a large tree, searching for
    /// a dozen needles in every title costs more than the DFA).
    inner: bool,
    /// The fewest bytes a match has (regex-syntax's `minimum_len`).
    min_len: usize,
    /// The bytes a match can start with (bit `b % 64` of word `b / 64`),
    /// from the forward DFA; `None` when it has none or a match may be
    /// empty.
    first: Option<[u64; 4]>,
}

/// A prefix needle of [`Precompiled::prefixes`] (build.rs writes calls).
const fn needle(bytes: &'static [u8], fold: bool) -> (&'static [u8], bool) {
    (bytes, fold)
}

type Dfa = regex_automata::dfa::dense::DFA<&'static [u32]>;

/// How a precompiled pattern searches once loaded.
// One per slot of a static, built in place and never moved: the size of the
// DFA variant costs nothing.
#[allow(clippy::large_enum_variant)]
enum Engine {
    /// The forward DFA, and the reverse one once a search matched.
    Dfa {
        forward: Dfa,
        reverse: std::sync::OnceLock<Option<Dfa>>,
    },
    Compiled(regex::Regex),
    /// Neither loads nor compiles: unreachable (build.rs compiled it, and
    /// `src/tests/patterns.rs` loads every one). Failing closed, the rest
    /// of any text it searches is taken for a match: withheld, not sent.
    Broken,
}

/// The embedded default policy's patterns (every raw string of
/// `policies/default.rego` that is a regex), in the order of the file.
static PRECOMPILED: &[Precompiled] = include!(concat!(env!("OUT_DIR"), "/patterns.rs"));
/// [`PRECOMPILED`]'s length.
const PRECOMPILED_SLOTS: usize = include!(concat!(env!("OUT_DIR"), "/pattern_count.rs"));

/// The loaded engines of [`PRECOMPILED`], one slot each.
static LOADED: [std::sync::OnceLock<Engine>; PRECOMPILED_SLOTS] =
    [const { std::sync::OnceLock::new() }; PRECOMPILED_SLOTS];

/// The same patterns compiled, for a DFA search that gave up (which the
/// DFAs build.rs writes never do: no quit bytes, no Unicode word boundary).
static FALLBACK: [std::sync::OnceLock<Option<regex::Regex>>; PRECOMPILED_SLOTS] =
    [const { std::sync::OnceLock::new() }; PRECOMPILED_SLOTS];

impl Pattern {
    /// The pattern `text`: the embedded default's precompiled form when it
    /// is one of its patterns, else compiled (with `regex::Regex::new`'s
    /// errors).
    pub fn new(text: &str) -> std::result::Result<Pattern, regex::Error> {
        if let Some(p) = PRECOMPILED.iter().find(|p| p.pattern == text) {
            return Ok(Pattern {
                inner: Inner::Precompiled(p),
            });
        }
        regex::Regex::new(text).map(Pattern::from)
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        match &self.inner {
            Inner::Compiled(regex) => regex.as_str(),
            Inner::Precompiled(p) => p.pattern,
        }
    }

    /// Whether this pattern searches with build.rs's work: `Some(true)`
    /// with its DFAs, `Some(false)` compiled when first needed; a test
    /// failure if it can do neither.
    #[cfg(test)]
    pub(crate) fn precompiled(&self) -> Option<bool> {
        match self.inner {
            Inner::Precompiled(p) => match load(p) {
                Engine::Dfa { .. } => Some(true),
                Engine::Compiled(_) => Some(false),
                Engine::Broken => panic!("`{}` neither loads nor compiles", p.pattern),
            },
            Inner::Compiled(_) => None,
        }
    }

    /// Whether the pattern has needles: literals one of which every match
    /// holds, looked for before it loads (`true` for a compiled pattern).
    #[cfg(test)]
    pub(crate) fn has_needles(&self) -> bool {
        match self.inner {
            Inner::Precompiled(p) => p.prefixes.is_some(),
            Inner::Compiled(_) => true,
        }
    }

    /// Whether [`Pattern::find_at`] would look for a match before the
    /// pattern is loaded (`true` for a compiled pattern).
    #[cfg(test)]
    pub(crate) fn may_match(&self, text: &str, start: usize) -> bool {
        match self.inner {
            Inner::Precompiled(p) => may_match(p, text, start),
            Inner::Compiled(_) => true,
        }
    }

    /// The pattern's slot among the precompiled ones and its shortest
    /// match, when it finds nothing in a text that holds none of its
    /// needles ([`NeedleIndex`]) or is shorter than that.
    fn filter(&self) -> Option<(usize, usize)> {
        match self.inner {
            Inner::Precompiled(p) if NeedleIndex::get().filterable >> p.slot & 1 == 1 => {
                Some((p.slot, p.min_len))
            }
            _ => None,
        }
    }

    /// Whether the pattern matches anywhere in `text`.
    pub fn is_match(&self, text: &str) -> bool {
        let p = match &self.inner {
            Inner::Compiled(regex) => return regex.is_match(text),
            Inner::Precompiled(p) => p,
        };
        match engine(p, text, 0) {
            None => false,
            Some(Engine::Dfa { forward, .. }) => {
                use regex_automata::dfa::Automaton;
                let input = regex_automata::Input::new(text).earliest(true);
                match forward.try_search_fwd(&input) {
                    Ok(found) => found.is_some(),
                    Err(_) => self.find_at(text, 0).is_some(),
                }
            }
            Some(Engine::Compiled(regex)) => regex.is_match(text),
            Some(Engine::Broken) => broken(p, text, 0).is_some(),
        }
    }

    /// The leftmost-first match in `text` starting at or after `start`
    /// (what `regex::Regex::find_at` finds: the text before `start` is
    /// context for `^`), as a byte range.
    pub fn find_at(&self, text: &str, start: usize) -> Option<std::ops::Range<usize>> {
        let p = match &self.inner {
            Inner::Compiled(regex) => return regex.find_at(text, start).map(|m| m.range()),
            Inner::Precompiled(p) => p,
        };
        match engine(p, text, start)? {
            Engine::Dfa { forward, reverse } => match dfa_find(p, forward, reverse, text, start) {
                Some(found) => found,
                None => match fallback(p) {
                    Some(regex) => regex.find_at(text, start).map(|m| m.range()),
                    None => broken(p, text, start),
                },
            },
            Engine::Compiled(regex) => regex.find_at(text, start).map(|m| m.range()),
            Engine::Broken => broken(p, text, start),
        }
    }
}

/// A precompiled pattern's engine, loaded now if it is not yet; `None`
/// when it is not loaded and its prefixes say `text[start..]` holds no
/// match.
fn engine(p: &'static Precompiled, text: &str, start: usize) -> Option<&'static Engine> {
    use std::sync::atomic::Ordering::Relaxed;
    if let Some(engine) = LOADED[p.slot].get() {
        return Some(engine);
    }
    let filtered = &FILTERED[p.slot];
    // Inner needles are looked for until the pattern has skipped its
    // budget of text.
    let filtering = !p.inner || filtered.load(Relaxed) < INNER_BUDGET;
    if filtering && !may_match(p, text, start) {
        if p.inner {
            filtered.fetch_add(text.len().saturating_sub(start), Relaxed);
        }
        return None;
    }
    Some(LOADED[p.slot].get_or_init(|| load(p)))
}

/// Slots of [`PRECOMPILED`], one bit each.
type Slots = u128;
const _: () = assert!(PRECOMPILED_SLOTS <= Slots::BITS as usize);

/// Every precompiled pattern's needles, found in one pass over a text: a
/// redaction searches a text only with the patterns whose needles it holds
/// (and those without needles), so a text holding none searches nothing,
/// loaded or not. Needles of two bytes or more are indexed by their first
/// two bytes lowercased and checked where a pair matches; one-byte needles
/// are a byte's slots.
struct NeedleIndex {
    /// Bit `key` set where some needle's first two bytes lowercased are
    /// `key` (the first byte's in the high eight bits).
    pairs: Box<[u64]>,
    /// The needles of two bytes or more, by key.
    needles: Box<[Indexed]>,
    /// Per first byte lowercased, where its needles begin in `needles`
    /// (they end where the next byte's begin).
    firsts: Box<[u16; 257]>,
    /// Bytes with a one-byte needle.
    single: [bool; 256],
    /// Per byte, the slots with a one-byte needle it matches.
    singles: Box<[Slots; 256]>,
    /// The slots with a case-blind needle (which `ſ` and `K` defeat).
    folded: Slots,
    /// The slots [`filterable`].
    filterable: Slots,
}

#[derive(Clone, Copy)]
struct Indexed {
    key: u16,
    bytes: &'static [u8],
    fold: bool,
    slot: u8,
}

static NEEDLES: std::sync::OnceLock<NeedleIndex> = std::sync::OnceLock::new();

/// The index key of the pair `a`, `b` ([`NeedleIndex::pairs`]).
fn pair_key(a: u8, b: u8) -> u16 {
    u16::from(a.to_ascii_lowercase()) << 8 | u16::from(b.to_ascii_lowercase())
}

impl NeedleIndex {
    fn get() -> &'static NeedleIndex {
        NEEDLES.get_or_init(NeedleIndex::build)
    }

    fn build() -> NeedleIndex {
        let mut needles = Vec::new();
        let mut single = [false; 256];
        let mut singles = Box::new([0; 256]);
        let mut folded = 0;
        let mut filterable_slots = 0;
        for p in PRECOMPILED.iter().filter(|p| filterable(p)) {
            let bit: Slots = 1 << p.slot;
            filterable_slots |= bit;
            for &(bytes, fold) in p.prefixes.unwrap_or_default() {
                if fold {
                    folded |= bit;
                }
                match *bytes {
                    [b] => {
                        let mut set = |b: u8| {
                            single[usize::from(b)] = true;
                            singles[usize::from(b)] |= bit;
                        };
                        set(b);
                        if fold && b.is_ascii_lowercase() {
                            set(b.to_ascii_uppercase());
                        }
                    }
                    [a, b, ..] => needles.push(Indexed {
                        key: pair_key(a, b),
                        bytes,
                        fold,
                        slot: p.slot as u8,
                    }),
                    // Not filterable: never here.
                    [] => {}
                }
            }
        }
        let needles = by_key(needles);
        let mut pairs = vec![0u64; (1 << 16) / 64].into_boxed_slice();
        // Per first byte, how many needles start with a smaller one.
        let mut firsts = Box::new([0u16; 257]);
        for n in &needles {
            pairs[usize::from(n.key) / 64] |= 1 << (n.key % 64);
            firsts[usize::from(n.key >> 8) + 1] += 1;
        }
        for b in 1..firsts.len() {
            firsts[b] += firsts[b - 1];
        }
        NeedleIndex {
            pairs,
            needles: needles.into_boxed_slice(),
            firsts,
            single,
            singles,
            folded,
            filterable: filterable_slots,
        }
    }

    /// The slots of `wanted` some needle of which `text` holds, as
    /// [`holds_a_needle`] reads a needle (a case-blind slot whenever the
    /// text holds `ſ` or `K`).
    fn held(&self, text: &[u8], wanted: Slots) -> Slots {
        let mut found: Slots = 0;
        if wanted & self.folded != 0
            && !text.is_ascii()
            && (memchr::memmem::find(text, "\u{17F}".as_bytes()).is_some()
                || memchr::memmem::find(text, "\u{212A}".as_bytes()).is_some())
        {
            found |= self.folded;
        }
        let Some((&last, _)) = text.split_last() else {
            return 0;
        };
        if self.single[usize::from(last)] {
            found |= self.singles[usize::from(last)];
        }
        for (at, pair) in text.windows(2).enumerate() {
            let (a, b) = (pair[0], pair[1]);
            if self.single[usize::from(a)] {
                found |= self.singles[usize::from(a)];
            }
            let key = pair_key(a, b);
            if self.pairs[usize::from(key) / 64] >> (key % 64) & 1 == 0 {
                continue;
            }
            let first = usize::from(key >> 8);
            let bucket =
                &self.needles[usize::from(self.firsts[first])..usize::from(self.firsts[first + 1])];
            let from = bucket.partition_point(|n| n.key < key);
            for n in bucket[from..].iter().take_while(|n| n.key == key) {
                let bit: Slots = 1 << n.slot;
                if (found | !wanted) & bit == 0 && starts_with(&text[at..], n.bytes, n.fold) {
                    found |= bit;
                    if found & wanted == wanted {
                        return wanted;
                    }
                }
            }
        }
        found & wanted
    }
}

/// `needles` in the order of their keys: sorted by the low byte, then
/// stably by the high one (two counting passes, linear, for a
/// process's start-up).
fn by_key(needles: Vec<Indexed>) -> Vec<Indexed> {
    let mut order: Vec<usize> = (0..needles.len()).collect();
    for shift in [0, 8] {
        let byte = |i: usize| usize::from(needles[i].key >> shift & 0xff);
        let mut starts = [0usize; 257];
        for &i in &order {
            starts[byte(i) + 1] += 1;
        }
        for b in 1..starts.len() {
            starts[b] += starts[b - 1];
        }
        let mut next = vec![0; order.len()];
        for &i in &order {
            next[starts[byte(i)]] = i;
            starts[byte(i)] += 1;
        }
        order = next;
    }
    order.into_iter().map(|i| needles[i]).collect()
}

/// Whether a precompiled pattern finds nothing in a text that holds none
/// of its needles: it has some, none of them empty.
fn filterable(p: &Precompiled) -> bool {
    p.prefixes
        .is_some_and(|needles| needles.iter().all(|(bytes, _)| !bytes.is_empty()))
}

/// Bytes of text a pattern with inner needles skips before it loads.
const INNER_BUDGET: usize = 4 << 10;

/// Bytes of text each precompiled pattern has skipped unloaded.
static FILTERED: [std::sync::atomic::AtomicUsize; PRECOMPILED_SLOTS] =
    [const { std::sync::atomic::AtomicUsize::new(0) }; PRECOMPILED_SLOTS];

/// `regex_automata::dfa::regex::Regex::try_search` with the reverse DFA
/// loaded on the first match (a search that finds nothing needs only the
/// forward one): the end from the forward DFA, the start from the reverse
/// one searching back, anchored, from the end. `None` if a search gave up
/// or the reverse DFA does not load (never, for build.rs's DFAs: the
/// caller compiles the pattern then).
fn dfa_find(
    p: &Precompiled,
    forward: &Dfa,
    reverse: &std::sync::OnceLock<Option<Dfa>>,
    text: &str,
    start: usize,
) -> Option<Option<std::ops::Range<usize>>> {
    use regex_automata::dfa::Automaton;
    let input = regex_automata::Input::new(text).span(start..text.len());
    let Some(end) = forward.try_search_fwd(&input).ok()? else {
        return Some(None);
    };
    let end = end.offset();
    if end == start || forward.is_always_start_anchored() {
        return Some(Some(start..end));
    }
    let reverse = reverse
        .get_or_init(|| {
            let (_, bytes) = p.dfa?;
            Some(Dfa::from_bytes(bytes).ok()?.0)
        })
        .as_ref()?;
    let back = input
        .span(start..end)
        .anchored(regex_automata::Anchored::Yes)
        .earliest(false);
    let found = reverse.try_search_rev(&back).ok()??.offset();
    (found <= end).then_some(Some(found..end))
}

/// Whether `text[start..]` may hold a match: it is at least the pattern's
/// shortest match long, holds one of its prefixes (if it has some) and a
/// byte a match can start with (if that is known). Else it holds none.
fn may_match(p: &Precompiled, text: &str, start: usize) -> bool {
    let rest = text.as_bytes().get(start..).unwrap_or_default();
    // A match lies in `rest` (the text before `start` is only context).
    if rest.len() < p.min_len {
        return false;
    }
    if let Some(needles) = p.prefixes {
        if !holds_a_needle(rest, needles) {
            return false;
        }
    }
    match &p.first {
        Some(set) => rest
            .iter()
            .any(|&b| set[usize::from(b / 64)] >> (b % 64) & 1 == 1),
        None => true,
    }
}

/// Needles [`holds_a_needle`] looks for one by one; more are looked for
/// in one pass.
const FEW_NEEDLES: usize = 4;

/// Whether `haystack` holds one of `needles`, each with whether it is
/// case-blind: its lowercase ASCII letters stand for themselves and their
/// capitals (build.rs writes such a needle for a case-insensitive literal,
/// and for a pattern's case-folded form). A case-blind needle also stands
/// for `ſ` (U+017F) and `K` (U+212A), which a case-insensitive class holds
/// beside `s` and `k` and the folded form leaves out: text holding either
/// is not filtered.
fn holds_a_needle(haystack: &[u8], needles: &[(&[u8], bool)]) -> bool {
    if !haystack.is_ascii()
        && needles.iter().any(|&(_, fold)| fold)
        && (memchr::memmem::find(haystack, "\u{17F}".as_bytes()).is_some()
            || memchr::memmem::find(haystack, "\u{212A}".as_bytes()).is_some())
    {
        return true;
    }
    if needles.len() <= FEW_NEEDLES {
        return needles
            .iter()
            .any(|&(needle, fold)| contains(haystack, needle, fold));
    }
    // The bytes a needle starts with, in every case it stands for.
    let mut first = [false; 256];
    for &(needle, fold) in needles {
        let Some(&b) = needle.first() else {
            return true;
        };
        first[usize::from(b)] = true;
        if fold && b.is_ascii_lowercase() {
            first[usize::from(b.to_ascii_uppercase())] = true;
        }
    }
    haystack.iter().enumerate().any(|(at, &b)| {
        first[usize::from(b)]
            && needles
                .iter()
                .any(|&(needle, fold)| starts_with(&haystack[at..], needle, fold))
    })
}

/// Whether `haystack` starts with `needle` (case-blind: see
/// [`holds_a_needle`]).
fn starts_with(haystack: &[u8], needle: &[u8], fold: bool) -> bool {
    let Some(h) = haystack.get(..needle.len()) else {
        return false;
    };
    if !fold {
        return h == needle;
    }
    h.iter()
        .zip(needle)
        .all(|(&h, &n)| h == n || (n.is_ascii_lowercase() && h == n.to_ascii_uppercase()))
}

/// Whether `haystack` holds `needle` (case-blind: see [`holds_a_needle`]).
fn contains(haystack: &[u8], needle: &[u8], fold: bool) -> bool {
    if !fold {
        return memchr::memmem::find(haystack, needle).is_some();
    }
    let Some(&first) = needle.first() else {
        return true;
    };
    let mut at = 0;
    while let Some(i) = memchr::memchr2(first, first.to_ascii_uppercase(), &haystack[at..]) {
        let i = at + i;
        if starts_with(&haystack[i..], needle, true) {
            return true;
        }
        at = i + 1;
    }
    false
}

/// A precompiled pattern's engine: its DFAs, deserialized in place
/// (validated, not copied), or compiled when it has none or they do not
/// load (another endianness, another regex-automata format).
fn load(p: &Precompiled) -> Engine {
    let forward = p
        .dfa
        .and_then(|(forward, _)| Some(Dfa::from_bytes(forward).ok()?.0));
    match forward {
        Some(forward) => Engine::Dfa {
            forward,
            reverse: std::sync::OnceLock::new(),
        },
        None => match regex::Regex::new(p.pattern) {
            Ok(regex) => Engine::Compiled(regex),
            Err(_) => Engine::Broken,
        },
    }
}

/// A precompiled pattern compiled after all (see [`FALLBACK`]).
fn fallback(p: &Precompiled) -> Option<&'static regex::Regex> {
    FALLBACK[p.slot]
        .get_or_init(|| regex::Regex::new(p.pattern).ok())
        .as_ref()
}

/// [`Engine::Broken`]'s match: the rest of the text.
fn broken(p: &Precompiled, text: &str, start: usize) -> Option<std::ops::Range<usize>> {
    tracing::error!(slot = p.slot, "a precompiled pattern cannot search");
    (start < text.len()).then_some(start..text.len())
}

/// Text as a person reads it, for the patterns to search a second time:
/// what a reader does not see is dropped and what reads as one character
/// is that character, each char of the reading remembering the bytes of
/// the original it stands for. A secret written with invisible or
/// lookalike characters between its own (`4111\u{200B}1111…`,
/// `Pass\u{AD}wort`, `ghp_…\u{FE0F}…`) or percent-encoded in a url
/// (`%3DAKIA…`, `card%204111…`) is found in the reading, and the whole
/// original range it came from is replaced. The reading is searched as
/// well as, never instead of, the original (an invisible char that
/// delimits a secret in the original glues it to a letter in the reading).
///
/// Read so:
/// - dropped: format characters (general category Cf: zero-width chars,
///   the soft hyphen, bidi controls, U+FEFF, tags, [`crate::escape`]'s
///   table) and the blank Hangul fillers (U+115F, U+1160, U+3164,
///   U+FFA0); combining marks that attach to any letter or digit (U+0300–
///   U+036F, U+1AB0–U+1AFF, U+1DC0–U+1DFF, U+20D0–U+20FF, U+FE20–U+FE2F)
///   and variation selectors (U+FE00–U+FE0F, U+E0100–U+E01EF), which are
///   part of the char before them (replaced with it);
/// - a space: every space separator (Zs) but the ASCII space;
/// - `\n`: every other line break (U+000B, U+000C, U+0085, U+2028,
///   U+2029), so a number wrapped by any of them is one number as it is
///   when wrapped by `\n`;
/// - `-`: the hyphens and dashes U+2010–U+2013, U+2212, U+FE58 and U+FE63;
/// - ASCII: the fullwidth forms U+FF01–U+FF5E;
/// - the char it encodes: an escape of printable ASCII, read again up to
///   three times (`%2541`, a url inside a url's query; `&amp;#52;`): a
///   percent-escape (`%41`), an HTML numeric character reference (`&#52;`,
///   `&#x34;`), HTML's named references for ASCII (`&amp;`, `&lt;`, `&gt;`,
///   `&quot;`, `&apos;`; `&nbsp;` as a space) and a JSON or JavaScript
///   `\u` escape (`\u0034`): app text that carries HTML or JSON source.
pub(crate) struct Reading {
    /// The text as read.
    pub text: String,
    /// Per byte of `text`: the original byte range of the char it is part
    /// of (a percent-escape's three bytes, say).
    from: Vec<(u32, u32)>,
}

/// Rounds of decoding escapes a reading does (`%253D` is `%3D`, then `=`).
const PERCENT_ROUNDS: usize = 3;

impl Reading {
    /// `text` as read, or `None` when it reads as written (no char to drop
    /// or fold, no percent-escape): the common case, decided without
    /// building anything. Texts over 4 GiB are not read (their offsets
    /// would not fit; no limit lets one in).
    pub fn of(text: &str) -> Option<Reading> {
        let needed = has_escape(text.as_bytes())
            || memchr::memchr2(b'\x0B', b'\x0C', text.as_bytes()).is_some()
            || (!text.is_ascii() && text.chars().any(|c| fold(c) != Fold::Keep));
        if !needed || u32::try_from(text.len()).is_err() {
            return None;
        }
        let mut chars: Vec<(char, u32, u32)> = Vec::with_capacity(text.len());
        for (at, c) in text.char_indices() {
            let span = (at as u32, (at + c.len_utf8()) as u32);
            match fold(c) {
                Fold::Drop => {}
                // A mark belongs to the char it follows: replaced with it.
                Fold::Mark => {
                    if let Some(last) = chars.last_mut().filter(|last| last.2 == span.0) {
                        last.2 = span.1;
                    }
                }
                Fold::Keep => chars.push((c, span.0, span.1)),
                Fold::To(to) => chars.push((to, span.0, span.1)),
            }
        }
        for _ in 0..PERCENT_ROUNDS {
            if !decode_escapes(&mut chars) {
                break;
            }
        }
        let mut text = String::with_capacity(chars.len());
        let mut from = Vec::with_capacity(chars.len());
        for &(c, start, end) in &chars {
            text.push(c);
            from.extend(std::iter::repeat_n((start, end), c.len_utf8()));
        }
        Some(Reading { text, from })
    }

    /// The original byte range a non-empty range of the reading stands for.
    fn original(&self, start: usize, end: usize) -> (usize, usize) {
        (self.from[start].0 as usize, self.from[end - 1].1 as usize)
    }
}

/// What the reading does with one char.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fold {
    Keep,
    /// Not read (a format char).
    Drop,
    /// Not read, and part of the char before it (a combining mark, a
    /// variation selector).
    Mark,
    To(char),
}

fn fold(c: char) -> Fold {
    if c.is_ascii() {
        // The vertical tab (a word processor's manual line break) and the
        // form feed break a line as `\n` does.
        return match c {
            '\x0B' | '\x0C' => Fold::To('\n'),
            _ => Fold::Keep,
        };
    }
    match c {
        // A line break of another kind: the next line, the line and
        // paragraph separators (a text view's soft and hard breaks).
        '\u{85}' | '\u{2028}' | '\u{2029}' => Fold::To('\n'),
        c if crate::escape::combining_mark(c) => Fold::Mark,
        '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}' => Fold::Drop,
        '\u{A0}' | '\u{1680}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => {
            Fold::To(' ')
        }
        // Not the em dash and the horizontal bar: no secret is grouped by
        // them, and prose is full of them (each would cost a second search).
        '\u{2010}'..='\u{2013}' | '\u{2212}' | '\u{FE58}' | '\u{FE63}' => Fold::To('-'),
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).map_or(Fold::Keep, Fold::To),
        // Cf: hidden, not breaking a line.
        c if crate::escape::unseen_format(c) => Fold::Drop,
        _ => Fold::Keep,
    }
}

/// Whether text holds an escape [`decode_escapes`] may decode: a `%` and
/// two hex digits, a `&` and a `#` or a letter, a `\u` and a hex digit.
fn has_escape(bytes: &[u8]) -> bool {
    memchr::memchr3_iter(b'%', b'&', b'\\', bytes).any(|at| match bytes[at] {
        b'%' => bytes
            .get(at + 1..at + 3)
            .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)),
        b'&' => {
            bytes
                .get(at + 1)
                .is_some_and(|b| *b == b'#' || b.is_ascii_alphabetic())
                && memchr::memchr(b';', &bytes[at..bytes.len().min(at + 12)]).is_some()
        }
        _ => match bytes.get(at + 1) {
            Some(b'u') => bytes.get(at + 2).is_some_and(u8::is_ascii_hexdigit),
            Some(b'"' | b'\\' | b'/' | b'\'') => true,
            _ => false,
        },
    })
}

/// The char an escape at the start of `chars` encodes and how many chars
/// it takes, if it encodes printable ASCII (or, `&nbsp;`, a space): a
/// percent-escape (`%34`), an HTML numeric character reference (`&#52;`,
/// `&#x34;`) or one of HTML's named references for ASCII (`&amp;`,
/// `&lt;`, `&gt;`, `&quot;`, `&apos;`, `&nbsp;`), or a JSON (or
/// JavaScript) `\u` escape of four hex digits (`\u0034`).
fn escape_at(chars: &[(char, u32, u32)]) -> Option<(char, usize)> {
    let at = |i: usize| chars.get(i).map(|c| c.0);
    let printable = |code: u32| (0x20..0x7F).contains(&code).then(|| char::from(code as u8));
    // A char a numeric reference may stand for: printable ASCII or any
    // char past the C1 controls (a no-break or thin space, a dash), which
    // the reading then folds as it folds the char written.
    let any = |code: u32| match code {
        0x20..=0x7E => printable(code),
        0xA0.. => char::from_u32(code),
        _ => None,
    };
    let byte = |i: usize| -> Option<u8> {
        (at(i)? == '%').then_some(())?;
        Some((at(i + 1)?.to_digit(16)? * 16 + at(i + 2)?.to_digit(16)?) as u8)
    };
    match at(0)? {
        '%' => {
            let lead = byte(0)?;
            if lead < 0x80 {
                return Some((printable(u32::from(lead))?, 3));
            }
            // A percent-encoded UTF-8 sequence (`%C2%A0`) is one char.
            let len = match lead {
                0xC2..=0xDF => 2,
                0xE0..=0xEF => 3,
                0xF0..=0xF4 => 4,
                _ => return None,
            };
            let mut bytes = [0u8; 4];
            for (i, b) in bytes.iter_mut().enumerate().take(len) {
                *b = byte(3 * i)?;
            }
            let c = std::str::from_utf8(&bytes[..len]).ok()?.chars().next()?;
            Some((any(c as u32)?, 3 * len))
        }
        // A JSON string's escaped quote, backslash or slash: JSON kept as
        // text inside another JSON string (`\"password\": \"…\"`).
        '\\' if matches!(at(1), Some('"' | '\\' | '/' | '\'')) => Some((at(1)?, 2)),
        '\\' if at(1) == Some('u') => {
            let mut code = 0;
            for i in 2..6 {
                code = code * 16 + at(i)?.to_digit(16)?;
            }
            Some((printable(code)?, 6))
        }
        '&' if at(1) == Some('#') => {
            let (radix, first) = match at(2)? {
                'x' | 'X' => (16, 3),
                _ => (10, 2),
            };
            let mut code: u32 = 0;
            let mut i = first;
            // Seven digits at most: leading zeros allowed, no overflow.
            while let Some(d) = at(i).and_then(|c| c.to_digit(radix)) {
                if i - first == 7 {
                    return None;
                }
                code = code * radix + d;
                i += 1;
            }
            (i > first && at(i) == Some(';')).then_some(())?;
            Some((any(code)?, i + 1))
        }
        '&' => {
            const NAMED: &[(&str, char)] = &[
                ("amp;", '&'),
                ("lt;", '<'),
                ("gt;", '>'),
                ("quot;", '"'),
                ("apos;", '\''),
                ("nbsp;", ' '),
            ];
            NAMED.iter().find_map(|(name, to)| {
                name.chars()
                    .enumerate()
                    .all(|(i, c)| at(1 + i) == Some(c))
                    .then_some((*to, 1 + name.len()))
            })
        }
        _ => None,
    }
}

/// Decodes every escape of [`escape_at`] in `chars` once, each decoded
/// char standing for the original range of its escape; whether any was.
fn decode_escapes(chars: &mut Vec<(char, u32, u32)>) -> bool {
    let mut out = Vec::with_capacity(chars.len());
    let mut changed = false;
    let mut i = 0;
    while i < chars.len() {
        if let Some((c, len)) = escape_at(&chars[i..]) {
            let span = (chars[i].1, chars[i + len - 1].2);
            // The decoded char is read as the char written would be.
            match fold(c) {
                Fold::Keep => out.push((c, span.0, span.1)),
                Fold::To(to) => out.push((to, span.0, span.1)),
                Fold::Drop => {}
                Fold::Mark => {
                    if let Some(last) = out.last_mut() {
                        last.2 = span.1;
                    }
                }
            }
            changed = true;
            i += len;
            continue;
        }
        out.push(chars[i]);
        i += 1;
    }
    *chars = out;
    changed
}

/// Whether `pattern` matches `text` or the way a person reads it
/// ([`Reading`]): how title patterns are matched, so a title that reads
/// `Password` is one whatever invisible chars it holds.
pub fn reads_as(pattern: &Pattern, text: &str) -> bool {
    AsRead::new(text).is_match(pattern)
}

/// A text and the way a person reads it ([`Reading`]), read once for all
/// the patterns matched against it (a title against every title pattern).
pub struct AsRead<'t> {
    text: &'t str,
    reading: Option<Reading>,
    /// For a title: the text (as read, when it reads otherwise) with
    /// [`crate::lookalike`]'s letters as Latin ones, when it holds one.
    skeleton: Option<String>,
}

impl<'t> AsRead<'t> {
    pub fn new(text: &'t str) -> AsRead<'t> {
        AsRead {
            text,
            reading: Reading::of(text),
            skeleton: None,
        }
    }

    /// A title, read as [`AsRead::new`] reads a text and also with the
    /// letters of other scripts that look like Latin ones read as those
    /// (`Раѕѕword` is `Password`): a title pattern only masks, so reading
    /// more titles as a secret's is the safe error. Not for redaction,
    /// which would replace a Cyrillic word that reads as a secret's.
    pub fn title(text: &'t str) -> AsRead<'t> {
        let reading = Reading::of(text);
        let skeleton = crate::lookalike::skeleton(reading.as_ref().map_or(text, |r| &r.text));
        AsRead {
            text,
            reading,
            skeleton,
        }
    }

    /// Whether `pattern` matches the text as written or as read.
    pub fn is_match(&self, pattern: &Pattern) -> bool {
        pattern.is_match(self.text)
            || self
                .reading
                .as_ref()
                .is_some_and(|r| pattern.is_match(&r.text))
            || self
                .skeleton
                .as_deref()
                .is_some_and(|s| pattern.is_match(s))
    }
}

/// A text pattern the policy declares; applied natively to every string
/// that leaves, all patterns in one pass over the original text (see
/// this module's doc for the boundary rule and how overlaps merge).
#[derive(Debug, Clone)]
pub struct Redaction {
    /// The rule's id, named in reports.
    pub id: String,
    /// The pattern.
    pub regex: Pattern,
    /// The replacement, literal text (no `$` captures). No pattern of the
    /// plan may match it, so redaction is a fixpoint; the plan is refused
    /// otherwise.
    pub replace: String,
    /// The pattern finds digit runs, and only windows of 13 to 19 digits of
    /// whole groups that pass the Luhn check are replaced (`"luhn": true` in
    /// the policy; payment cards).
    pub luhn: bool,
    /// Only matches whose letters and digits pass the ISO 7064 mod-97
    /// check of an IBAN are replaced: the longest prefix of the match, of 15
    /// to 34 letters and digits, that passes (`"mod97": true`; bank
    /// account numbers).
    pub mod97: bool,
    /// The match is a key, a separator and a value: one whose value is a
    /// setting word (`true`, `false`, `yes`, `no`, `on`, `off`, `null`,
    /// `none`, `nil`, `undefined`, quoted or not) is not a secret
    /// (`"assigned": true`; `reset_password: true`).
    pub assigned: bool,
    /// The pattern with the delimiter before it made part of the search
    /// (`(?:^|[^A-Za-z0-9])(pattern)`), compiled the first time a string
    /// needs it: after a few matches glued to a preceding letter or digit,
    /// searching for the next delimited one directly keeps the work linear.
    delimited: std::sync::OnceLock<Option<regex::Regex>>,
    /// [`Pattern::filter`] of `regex`, with the slot as its bit among
    /// [`Slots`]: read for every text a redactor searches.
    filter: std::sync::OnceLock<Option<(Slots, usize)>>,
}

impl Redaction {
    /// A redaction rule.
    pub fn new(
        id: impl Into<String>,
        regex: impl Into<Pattern>,
        replace: impl Into<String>,
        luhn: bool,
    ) -> Redaction {
        Redaction {
            id: id.into(),
            regex: regex.into(),
            replace: replace.into(),
            luhn,
            mod97: false,
            assigned: false,
            delimited: std::sync::OnceLock::new(),
            filter: std::sync::OnceLock::new(),
        }
    }

    /// This rule, replacing only what passes the IBAN check
    /// ([`Redaction::mod97`]).
    pub fn with_mod97(mut self, mod97: bool) -> Redaction {
        self.mod97 = mod97;
        self
    }

    /// This rule, keeping assignments of a setting word
    /// ([`Redaction::assigned`]).
    pub fn with_assigned(mut self, assigned: bool) -> Redaction {
        self.assigned = assigned;
        self
    }

    /// The bit of the pattern's slot and its shortest match, when it
    /// finds nothing in a text that holds none of its needles or is
    /// shorter than that ([`Pattern::filter`]).
    fn filter(&self) -> Option<(Slots, usize)> {
        *self.filter.get_or_init(|| {
            self.regex
                .filter()
                .map(|(slot, min_len)| (1 << slot, min_len))
        })
    }

    /// [`Redaction::delimited`]'s regex; `None` if it cannot be compiled
    /// (the search then goes on the slow way, still bounded by the deadline).
    pub(crate) fn delimited(&self) -> Option<&regex::Regex> {
        self.delimited
            .get_or_init(|| {
                regex::Regex::new(&format!("(?:^|[^A-Za-z0-9])({})", self.regex.as_str())).ok()
            })
            .as_ref()
    }
}

/// Applies every pattern in one pass, counting replacements per pattern.
pub struct Redactor<'p> {
    patterns: &'p [Redaction],
    /// Replacements made, per pattern (same order as the patterns). A span
    /// found by several patterns counts once, for the one whose text
    /// replaced it.
    pub counts: Vec<usize>,
    /// The precompiled patterns' slots a text is searched with only when
    /// it holds one of their needles ([`NeedleIndex`]).
    filtered: Slots,
    /// The patterns that are not, in order: all that a text holding no
    /// needle is searched with.
    unfiltered: Vec<usize>,

    /// Scratch space reused across strings.
    spans: Vec<Span>,
    groups: Vec<Group>,
    digits: Vec<u8>,
}

/// A byte range of the original string one pattern wants replaced.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    rule: usize,
}

/// One group of digits inside a digit run: byte range and where its digit
/// values start and end in the scratch digit buffer.
#[derive(Debug, Clone, Copy)]
struct Group {
    start: usize,
    end: usize,
    first: usize,
    last: usize,
}

/// Digits a card number has, at least and at most (ISO/IEC 7812).
const CARD_DIGITS: std::ops::RangeInclusive<usize> = 13..=19;
/// Digits each group of a card number grouped by separators has, at least.
const MIN_GROUP_DIGITS: usize = 3;

impl<'p> Redactor<'p> {
    /// A redactor for these patterns.
    pub fn new(patterns: &'p [Redaction]) -> Redactor<'p> {
        let mut filtered = 0;
        let mut unfiltered = Vec::new();
        for (rule, p) in patterns.iter().enumerate() {
            match p.filter() {
                Some((bit, _)) => filtered |= bit,
                None => unfiltered.push(rule),
            }
        }
        Redactor {
            patterns,
            counts: vec![0; patterns.len()],
            filtered,
            unfiltered,
            spans: Vec::new(),
            groups: Vec::new(),
            digits: Vec::new(),
        }
    }

    /// `text` with every secret replaced; borrowed when nothing matched.
    ///
    /// Redacted again until nothing more matches ([`ROUNDS`] passes at
    /// most): a replacement, though no pattern matches it alone, can
    /// complete a match with the text around it (`http://a.comhttp://u:p@h`
    /// gives `http://a.comhttp:[credentials]@h`, in which `://a.comhttp:
    /// [credentials]@` reads as a url's credentials), and the output must
    /// be what redacting it again gives.
    pub fn text<'t>(&mut self, text: &'t str) -> Cow<'t, str> {
        let Cow::Owned(mut out) = self.once(text) else {
            return Cow::Borrowed(text);
        };
        for _ in 1..ROUNDS {
            match self.once(&out) {
                Cow::Owned(again) => out = again,
                Cow::Borrowed(_) => break,
            }
        }
        Cow::Owned(out)
    }

    /// One pass of [`Redactor::text`], leaving the spans it replaced in
    /// `self.spans`.
    fn once<'t>(&mut self, text: &'t str) -> Cow<'t, str> {
        if self.patterns.is_empty() || text.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut spans = std::mem::take(&mut self.spans);
        spans.clear();
        self.collect(text, &mut spans);
        if spans.is_empty() {
            self.spans = spans;
            return Cow::Borrowed(text);
        }
        let patterns = self.patterns;
        spans.sort_unstable_by(|a, b| {
            a.start
                .cmp(&b.start)
                .then(b.end.cmp(&a.end))
                .then_with(|| patterns[a.rule].id.cmp(&patterns[b.rule].id))
        });
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        let mut i = 0;
        while i < spans.len() {
            let winner = spans[i];
            let mut end = winner.end;
            i += 1;
            while i < spans.len() && spans[i].start < end {
                end = end.max(spans[i].end);
                i += 1;
            }
            out.push_str(&text[at..winner.start]);
            out.push_str(&patterns[winner.rule].replace);
            self.counts[winner.rule] += 1;
            at = end;
        }
        out.push_str(&text[at..]);
        self.spans = spans;
        Cow::Owned(out)
    }

    /// Every span of `text` any pattern wants replaced, in the text as
    /// written and as read ([`Reading`]; its spans mapped back to the
    /// original bytes they stand for).
    fn collect(&mut self, text: &str, spans: &mut Vec<Span>) {
        self.find_all(text, spans);
        let Some(reading) = Reading::of(text) else {
            return;
        };
        let mut read = Vec::new();
        self.find_all(&reading.text, &mut read);
        spans.extend(read.into_iter().map(|span| {
            let (start, end) = reading.original(span.start, span.end);
            Span {
                start,
                end,
                rule: span.rule,
            }
        }));
    }

    /// Every span of `text` as written that any pattern wants replaced:
    /// each pattern with needles searches only if `text` holds one of them
    /// and is as long as its shortest match (else it finds nothing).
    fn find_all(&mut self, text: &str, spans: &mut Vec<Span>) {
        let held = match self.filtered {
            0 => 0,
            filtered => NeedleIndex::get().held(text.as_bytes(), filtered),
        };
        let patterns = self.patterns;
        if held == 0 {
            // What the loop below would search: the unfiltered, in order.
            for i in 0..self.unfiltered.len() {
                let rule = self.unfiltered[i];
                self.find(&patterns[rule], rule, text, spans);
            }
            return;
        }
        for (rule, pattern) in patterns.iter().enumerate() {
            if let Some((bit, min_len)) = pattern.filter() {
                if held & bit == 0 || text.len() < min_len {
                    continue;
                }
            }
            self.find(pattern, rule, text, spans);
        }
    }

    /// Every span of `text` that `pattern` wants replaced, delimited by
    /// anything but ASCII letters and digits.
    fn find(&mut self, pattern: &Redaction, rule: usize, text: &str, spans: &mut Vec<Span>) {
        // A card window holds 13 digits or more: text with fewer holds
        // none, and the pattern need not load to say so.
        if pattern.luhn && !holds_digits(text, *CARD_DIGITS.start()) {
            return;
        }
        let mut from = 0;
        let mut glued = 0;
        while from <= text.len() {
            let Some(m) = pattern.regex.find_at(text, from) else {
                break;
            };
            let (start, end) = (m.start, m.end);
            if start == end {
                from = next_char(text, start);
            } else if pattern.luhn {
                // Delimited per window: a group glued to a letter is not a
                // number, the groups before it may be.
                self.cards(text, start, end, rule, spans);
                from = end;
            } else if pattern.mod97 {
                from = match iban_end(text, start, end) {
                    Some(end) => {
                        spans.push(Span { start, end, rule });
                        end
                    }
                    None => next_char(text, start),
                };
            } else if starts_inside_word(text, start) {
                // Any match starting later in this run of letters and digits
                // starts inside it too: skip the run.
                from = end_of_word(text, start);
                glued += 1;
                // Each such search may scan to the end of a long match before
                // it is rejected (`xsk-xsk-…`): after a few, look for a
                // delimited match directly, in one linear pass.
                if glued == GLUED_BEFORE_DELIMITED_SEARCH {
                    if let Some(delimited) = pattern.delimited() {
                        find_delimited(delimited, rule, text, from, spans);
                        return;
                    }
                }
            } else if ends_inside_word(text, end)
                || (pattern.assigned && assigns_a_setting(&text[start..end]))
            {
                from = next_char(text, start);
            } else {
                spans.push(Span { start, end, rule });
                from = end;
            }
        }
    }

    /// The windows of the digit run `text[start..end]` that are card numbers.
    fn cards(&mut self, text: &str, start: usize, end: usize, rule: usize, spans: &mut Vec<Span>) {
        self.groups.clear();
        self.digits.clear();
        let mut open: Option<Group> = None;
        for (i, c) in text[start..end].char_indices() {
            let at = start + i;
            match digit_value(c) {
                Some(d) => {
                    let group = open.get_or_insert(Group {
                        start: at,
                        end: at,
                        first: self.digits.len(),
                        last: self.digits.len(),
                    });
                    self.digits.push(d);
                    group.end = at + c.len_utf8();
                    group.last = self.digits.len();
                }
                None => self.groups.extend(open.take()),
            }
        }
        self.groups.extend(open.take());
        for a in 0..self.groups.len() {
            let first = self.groups[a];
            for b in a..self.groups.len() {
                let last = self.groups[b];
                let size = |g: &Group| g.last - g.first;
                if b > a && (size(&first) < MIN_GROUP_DIGITS || size(&last) < MIN_GROUP_DIGITS) {
                    break;
                }
                let count = last.last - first.first;
                if count > *CARD_DIGITS.end() {
                    break;
                }
                if CARD_DIGITS.contains(&count)
                    && !starts_inside_word(text, first.start)
                    && !ends_inside_word(text, last.end)
                    && card_prefix(&self.digits[first.first..last.last])
                    && luhn(&self.digits[first.first..last.last])
                {
                    spans.push(Span {
                        start: first.start,
                        end: last.end,
                        rule,
                    });
                }
            }
        }
    }

    /// Redacts an element's text blocks as the one text a reader sees,
    /// read two ways: joined by line breaks (a private key's BEGIN line in
    /// one block, its body in the next) and glued with nothing between
    /// (runs of one line: `ghp_abcd` + `EFGH…`), the second only for the
    /// matches that cross a block's edge. Each block keeps its own text
    /// outside the secrets; a secret's part in a block is replaced by the
    /// secret's replacement (once per block). `beside` are spans of the
    /// line-joined text a search over the element's neighbours found
    /// ([`Redactor::crossing`]), replaced as the first pass's own.
    pub fn texts(&mut self, texts: &mut [&mut Cow<'_, str>], beside: &[(usize, usize, usize)]) {
        match texts {
            [] => return,
            [one] if beside.is_empty() => return self.cow(one),
            _ => {}
        }
        // Again until nothing more matches, as [`Redactor::text`] does.
        for round in 0..ROUNDS {
            let beside = if round == 0 { beside } else { &[] };
            if !self.texts_once(texts, beside) {
                break;
            }
        }
    }

    /// The spans of `parts` glued with nothing between them that cross
    /// from one part into another, each cut to the parts it covers: (part,
    /// start, end, rule), offsets in the part. Nothing is counted.
    pub fn crossing(&mut self, parts: &[&str]) -> Vec<(usize, usize, usize, usize)> {
        let mut out = Vec::new();
        if parts.len() < 2 || self.patterns.is_empty() {
            return out;
        }
        let glued: String = parts.concat();
        let mut bounds = Vec::with_capacity(parts.len());
        let mut at = 0;
        for part in parts {
            bounds.push((at, at + part.len()));
            at += part.len();
        }
        let mut spans = Vec::new();
        self.collect(&glued, &mut spans);
        for span in spans {
            let inside = bounds
                .iter()
                .any(|&(s, e)| s <= span.start && span.end <= e && s < e);
            // An assignment's value is free text: one whose first edge
            // falls inside its value continues into the next text only if
            // the part before the edge is a secret already (`password:
            // hunt` + `er22`), else the next text is another
            // (`max_token: 4096` + `Forgot password?`).
            let edge = bounds
                .iter()
                .map(|&(_, e)| e)
                .find(|&e| span.start < e && e < span.end);
            let unrelated = self.patterns[span.rule].assigned
                && edge.is_some_and(|e| {
                    let before = &glued[span.start..e];
                    let mut alone = Vec::new();
                    value_started(before) && {
                        self.collect(before, &mut alone);
                        !alone.iter().any(|s| s.rule == span.rule)
                    }
                });
            if inside || unrelated {
                continue;
            }
            for (i, &(s, e)) in bounds.iter().enumerate() {
                let (start, end) = (span.start.max(s), span.end.min(e));
                if start < end {
                    out.push((i, start - s, end - s, span.rule));
                }
            }
        }
        out
    }

    /// One pass of [`Redactor::texts`]; whether anything was replaced.
    fn texts_once(
        &mut self,
        texts: &mut [&mut Cow<'_, str>],
        beside: &[(usize, usize, usize)],
    ) -> bool {
        let mut joined = String::with_capacity(texts.iter().map(|t| t.len() + 1).sum());
        let mut bounds = Vec::with_capacity(texts.len());
        for (i, text) in texts.iter().enumerate() {
            if i > 0 {
                joined.push('\n');
            }
            let start = joined.len();
            joined.push_str(text);
            bounds.push((start, joined.len()));
        }
        let mut spans = std::mem::take(&mut self.spans);
        spans.clear();
        self.collect(&joined, &mut spans);
        let parts: Vec<&str> = texts.iter().map(|t| &***t).collect();
        for (part, start, end, rule) in self.crossing(&parts) {
            let at = bounds[part].0;
            spans.push(Span {
                start: at + start,
                end: at + end,
                rule,
            });
        }
        spans.extend(
            beside
                .iter()
                .map(|&(start, end, rule)| Span { start, end, rule }),
        );
        spans.retain(|s| s.start < s.end && s.end <= joined.len());
        if spans.is_empty() {
            self.spans = spans;
            return false;
        }
        self.spans = spans;
        self.count_spans();
        let merged = self.merged();
        for (text, &(start, end)) in texts.iter_mut().zip(&bounds) {
            let mut out = String::new();
            let mut at = start;
            let mut changed = false;
            for &(s, e, rule) in &merged {
                let (s, e) = (s.max(start), e.min(end));
                if s >= e {
                    continue;
                }
                out.push_str(&joined[at..s]);
                out.push_str(&self.patterns[rule].replace);
                at = e;
                changed = true;
            }
            if changed {
                out.push_str(&joined[at..end]);
                **text = Cow::Owned(out);
            }
        }
        true
    }

    /// Sorts `self.spans` as [`Redactor::once`] does and counts each merged
    /// span once, for the rule whose replacement it gets.
    fn count_spans(&mut self) {
        let patterns = self.patterns;
        self.spans.sort_unstable_by(|a, b| {
            a.start
                .cmp(&b.start)
                .then(b.end.cmp(&a.end))
                .then_with(|| patterns[a.rule].id.cmp(&patterns[b.rule].id))
        });
        let mut i = 0;
        while i < self.spans.len() {
            let winner = self.spans[i];
            let mut end = winner.end;
            i += 1;
            while i < self.spans.len() && self.spans[i].start < end {
                end = end.max(self.spans[i].end);
                i += 1;
            }
            self.counts[winner.rule] += 1;
        }
    }

    /// The spans the last pass ([`Redactor::once`]) replaced, merged: (start, end,
    /// rule of the replacement).
    fn merged(&self) -> Vec<(usize, usize, usize)> {
        let mut out: Vec<(usize, usize, usize)> = Vec::new();
        for span in &self.spans {
            match out.last_mut() {
                Some(last) if span.start < last.1 => last.1 = last.1.max(span.end),
                _ => out.push((span.start, span.end, span.rule)),
            }
        }
        out
    }

    /// Redacts a string in place.
    pub fn string(&mut self, s: &mut String) {
        if let Cow::Owned(new) = self.text(s) {
            *s = new;
        }
    }

    /// Redacts a string of the model in place: a borrowed one is replaced
    /// by an owned copy only when a pattern matched.
    pub fn cow(&mut self, s: &mut Cow<'_, str>) {
        if let Cow::Owned(new) = self.text(s) {
            *s = Cow::Owned(new);
        }
    }

    /// Redacts the keys of an object in place, keeping their order. Two keys
    /// that redact to the same text keep the first one's value (the other is
    /// dropped: withholding a value is safe, sending a key that held a
    /// secret is not).
    pub fn keys(&mut self, map: &mut Map<String, Value>) {
        if !map.keys().any(|key| self.matches(key)) {
            return;
        }
        let old = std::mem::take(map);
        for (mut key, value) in old {
            self.string(&mut key);
            map.entry(key).or_insert(value);
        }
    }

    /// Whether any pattern finds a secret in `text` (nothing is counted).
    fn matches(&mut self, text: &str) -> bool {
        let mut spans = std::mem::take(&mut self.spans);
        spans.clear();
        self.collect(text, &mut spans);
        let found = !spans.is_empty();
        self.spans = spans;
        found
    }

    /// Redacts every string inside a JSON value, and every key of the
    /// objects inside it, iteratively.
    pub fn value(&mut self, value: &mut Value) {
        let mut stack = vec![value];
        while let Some(value) = stack.pop() {
            match value {
                Value::String(s) => self.string(s),
                // A number is text to the agent too (a card number written
                // as a JSON number): redacted as its JSON text, and sent as
                // a string when something in it was replaced.
                Value::Number(n) => {
                    let text = n.to_string();
                    if let Cow::Owned(redacted) = self.text(&text) {
                        *value = Value::String(redacted);
                    }
                }
                Value::Array(items) => stack.extend(items.iter_mut()),
                Value::Object(map) => {
                    self.keys(map);
                    stack.extend(map.values_mut());
                }
                _ => {}
            }
        }
    }
}

/// Passes [`Redactor::text`] makes at most. Each pass after the first
/// replaces a match that holds an earlier replacement and text beside it,
/// so the text shrinks to its replacements; two are all any text of the
/// tests and the real trees needs.
const ROUNDS: usize = 8;

/// Matches of one pattern glued to a preceding letter or digit after which
/// the rest of a string is searched with the pattern's delimited form.
const GLUED_BEFORE_DELIMITED_SEARCH: usize = 4;

/// The spans of `text[from..]` that `delimited` (a pattern preceded by the
/// start or a delimiter, the pattern in group 1) finds, ending delimited.
/// Each search starts past the last: linear in the text for patterns whose
/// matches end where the delimiter rule wants them to. It finds no match
/// that starts with a delimiter glued to a letter (`x-----BEGIN`), which
/// [`Redactor::find`] alone would.
fn find_delimited(
    delimited: &regex::Regex,
    rule: usize,
    text: &str,
    mut from: usize,
    spans: &mut Vec<Span>,
) {
    while from <= text.len() {
        let Some(found) = delimited.captures_at(text, from).and_then(|c| c.get(1)) else {
            break;
        };
        let (start, end) = (found.start(), found.end());
        if start == end || ends_inside_word(text, end) {
            from = next_char(text, start);
        } else {
            spans.push(Span { start, end, rule });
            from = end;
        }
    }
}

/// Refuses a set of patterns in which some replacement is matched by some
/// pattern: redaction would not be a fixpoint (redacting the output again
/// would change it) and a count would be off. Also refuses `$` in a
/// replacement: replacements are literal text, and a capture would copy the
/// matched secret into the output.
pub fn check_replacements(patterns: &[Redaction]) -> Result<()> {
    for r in patterns {
        if r.replace.contains('$') {
            return Err(Error::PolicyEval {
                rule: "redact".to_string(),
                message: format!(
                    "the `replace` of `{}` contains `$`; replacements are literal text (a capture \
                     would copy the secret into the output): remove the `$`",
                    r.id
                ),
            });
        }
        for other in patterns {
            if reads_as(&other.regex, &r.replace) {
                return Err(Error::PolicyEval {
                    rule: "redact".to_string(),
                    message: format!(
                        "the `replace` of `{}` is matched by the pattern of `{}`, so redacting \
                         the output again would change it; choose a replacement no pattern matches",
                        r.id, other.id
                    ),
                });
            }
        }
    }
    Ok(())
}

/// Whether the start of an assignment (`key: va`) has reached its value:
/// a char past the separator and the blanks and quotes after it.
fn value_started(assignment: &str) -> bool {
    let Some(sep) = assignment.find([':', '=', '>', '：']) else {
        return false;
    };
    assignment[sep..]
        .trim_start_matches([':', '=', '>', '：'])
        .trim_start_matches([' ', '\t', '"', '\'', '\\', '`'])
        .chars()
        .next()
        .is_some()
}

/// Whether `text` holds at least `n` Unicode decimal digits.
fn holds_digits(text: &str, n: usize) -> bool {
    if text.is_ascii() {
        return text.bytes().filter(u8::is_ascii_digit).take(n).count() == n;
    }
    text.chars().filter_map(digit_value).take(n).count() == n
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

/// Whether a match starting at `start` begins with an ASCII letter or digit
/// right after another.
fn starts_inside_word(text: &str, start: usize) -> bool {
    let bytes = text.as_bytes();
    start > 0 && is_word_byte(bytes[start]) && is_word_byte(bytes[start - 1])
}

/// Whether a match ending at `end` ends with an ASCII letter or digit right
/// before another.
fn ends_inside_word(text: &str, end: usize) -> bool {
    let bytes = text.as_bytes();
    end < bytes.len() && is_word_byte(bytes[end]) && is_word_byte(bytes[end - 1])
}

fn end_of_word(text: &str, from: usize) -> usize {
    let bytes = text.as_bytes();
    let mut at = from;
    while at < bytes.len() && is_word_byte(bytes[at]) {
        at += 1;
    }
    at
}

fn next_char(text: &str, at: usize) -> usize {
    at + text[at..].chars().next().map_or(1, char::len_utf8)
}

/// The zero of every block of ten Unicode decimal digits (general category
/// Nd) that the regex crate's `\d` matches (Unicode 16), ascending. Each
/// block runs from its zero to zero + 9. Generated by testing every code
/// point against `\d`; `tests/redaction.rs` checks the table against it.
pub const DIGIT_ZEROS: [u32; 76] = [
    0x30, 0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66,
    0xDE6, 0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90,
    0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
    0x104A0, 0x10D30, 0x10D40, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0,
    0x11650, 0x116C0, 0x116D0, 0x116DA, 0x11730, 0x118E0, 0x11950, 0x11BF0, 0x11C50, 0x11D50,
    0x11DA0, 0x11F50, 0x16130, 0x16A60, 0x16AC0, 0x16B50, 0x16D70, 0x1CCF0, 0x1D7CE, 0x1D7D8,
    0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E4F0, 0x1E5F1, 0x1E950, 0x1FBF0,
];

/// The value of a Unicode decimal digit (`٣`, `３` and `3` are all 3).
pub fn digit_value(c: char) -> Option<u8> {
    if c.is_ascii() {
        return c.is_ascii_digit().then(|| c as u8 - b'0');
    }
    let c = c as u32;
    let block = DIGIT_ZEROS
        .partition_point(|&zero| zero <= c)
        .checked_sub(1)?;
    let value = c - DIGIT_ZEROS[block];
    (value < 10).then_some(value as u8)
}

/// Whether digits start like a card of a network in use (ISO/IEC 7812
/// issuer numbers): 3 (American Express, JCB, Diners Club), 4 (Visa), 5
/// (Mastercard, Maestro), 6 (Discover, UnionPay, Maestro, RuPay), 2200-2204
/// (Mir), 2221-2720 (Mastercard), 81-82 (RuPay, UnionPay) and 9792 (Troy).
/// Left out: UATP airline cards (1), and what starts like a year (19.., 20..)
/// or an ISBN (978, 979): most of the false positives measured.
fn card_prefix(digits: &[u8]) -> bool {
    let head = |n: usize| {
        digits
            .iter()
            .take(n)
            .fold(0u32, |acc, &d| acc * 10 + u32::from(d))
    };
    match digits.first() {
        Some(3..=6) => true,
        Some(2) => (2200..=2204).contains(&head(4)) || (2221..=2720).contains(&head(4)),
        Some(8) => matches!(head(2), 81 | 82),
        Some(9) => head(4) == 9792,
        _ => false,
    }
}

/// Words that make an assignment a setting, not a secret.
const SETTING_WORDS: [&str; 10] = [
    "true",
    "false",
    "yes",
    "no",
    "on",
    "off",
    "null",
    "none",
    "nil",
    "undefined",
];

/// Whether an assignment (`key: value`, `"key": "value",`) gives its key a
/// setting word: the value, quotes and a trailing `,` or `;` aside, is one
/// of [`SETTING_WORDS`] in any case, right after the separator.
fn assigns_a_setting(assignment: &str) -> bool {
    let quotes = ['"', '\'', '\\', '`'];
    let s = assignment.trim_end_matches([',', ';']);
    let s = s.trim_end_matches(quotes);
    let word_at = s
        .char_indices()
        .rev()
        .find(|(_, c)| !c.is_ascii_alphabetic())
        .map_or(0, |(i, c)| i + c.len_utf8());
    let (before, word) = s.split_at(word_at);
    let before = before
        .trim_end_matches(quotes)
        .trim_end_matches([' ', '\t']);
    before.ends_with([':', '=', '>']) && SETTING_WORDS.iter().any(|w| w.eq_ignore_ascii_case(word))
}

/// The end of the longest prefix of `text[start..end]` that is an IBAN:
/// 15 to 34 letters and digits (spaces between them dropped), two letters
/// and two digits first, passing ISO 7064 mod 97 (the check digits make
/// the number, letters read as 10–35 and the first four moved to the end,
/// 1 modulo 97), delimited on both sides.
fn iban_end(text: &str, start: usize, end: usize) -> Option<usize> {
    if starts_inside_word(text, start) {
        return None;
    }
    let mut chars: Vec<u8> = Vec::with_capacity(34);
    let mut ends: Vec<usize> = Vec::with_capacity(34);
    for (i, c) in text[start..end].char_indices() {
        if c.is_ascii_alphanumeric() {
            chars.push(c.to_ascii_uppercase() as u8);
            ends.push(start + i + 1);
            if chars.len() > 34 {
                break;
            }
        }
    }
    if chars.len() < 4
        || !chars[..2].iter().all(u8::is_ascii_uppercase)
        || !chars[2..4].iter().all(u8::is_ascii_digit)
    {
        return None;
    }
    (15..=chars.len().min(34)).rev().find_map(|n| {
        let at = ends[n - 1];
        (!ends_inside_word(text, at) && mod97(&chars[..n])).then_some(at)
    })
}

/// ISO 7064 mod 97-10 over an IBAN's upper-case letters and digits.
fn mod97(iban: &[u8]) -> bool {
    let mut rest: u32 = 0;
    for &b in iban[4..].iter().chain(&iban[..4]) {
        rest = match b {
            b'0'..=b'9' => (rest * 10 + u32::from(b - b'0')) % 97,
            b'A'..=b'Z' => (rest * 100 + u32::from(b - b'A' + 10)) % 97,
            _ => return false,
        };
    }
    rest == 1
}

/// Luhn's check over digit values (0–9), the last the check digit.
pub(crate) fn luhn(digits: &[u8]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            let d = u32::from(d);
            if i % 2 == 1 {
                let twice = d * 2;
                if twice > 9 {
                    twice - 9
                } else {
                    twice
                }
            } else {
                d
            }
        })
        .sum();
    sum % 10 == 0
}

#[cfg(test)]
/// Whether the digits in `candidate` (any Unicode decimal digits; every
/// other character is ignored) are at least 12 and pass the Luhn check.
pub(crate) fn luhn_valid(candidate: &str) -> bool {
    let digits: Vec<u8> = candidate.chars().filter_map(digit_value).collect();
    digits.len() >= 12 && luhn(&digits)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(id: &str, pattern: &str, replace: &str, luhn: bool) -> Redaction {
        Redaction::new(id, regex::Regex::new(pattern).unwrap(), replace, luhn)
    }

    #[test]
    fn the_needle_index_finds_every_needle_in_any_case_it_stands_for() {
        let index = NeedleIndex::get();
        let all: Slots = PRECOMPILED
            .iter()
            .filter(|p| filterable(p))
            .fold(0, |slots, p| slots | 1 << p.slot);
        assert_eq!(index.filterable, all);
        for p in PRECOMPILED.iter().filter(|p| filterable(p)) {
            let bit: Slots = 1 << p.slot;
            for &(needle, fold) in p.prefixes.unwrap() {
                let mut texts = vec![needle.to_vec()];
                if fold {
                    texts.push(needle.to_ascii_uppercase());
                }
                for text in texts {
                    // Alone, and inside other text at both ends.
                    let inside = [b"x ".as_slice(), &text, b" y"].concat();
                    for text in [text.clone(), inside] {
                        assert!(holds_a_needle(&text, p.prefixes.unwrap()));
                        assert_eq!(
                            index.held(&text, bit),
                            bit,
                            "{:?} in {:?}",
                            p.pattern,
                            String::from_utf8_lossy(&text)
                        );
                    }
                }
            }
            // What the one pass finds is what the per-pattern search finds.
            for text in [
                "",
                "plain words, 12 of them",
                "Straße ſecret \u{212A}ey",
                "PASSWORD: x",
            ] {
                assert_eq!(
                    index.held(text.as_bytes(), bit) == bit,
                    holds_a_needle(text.as_bytes(), p.prefixes.unwrap()),
                    "{:?} in {text:?}",
                    p.pattern
                );
            }
        }
    }

    #[test]
    fn luhn() {
        assert!(luhn_valid("4111 1111 1111 1111"));
        assert!(luhn_valid("5500-0000-0000-0004"));
        assert!(luhn_valid("４１１１ １１１１ １１１１ １１１１"));
        assert!(!luhn_valid("4111 1111 1111 1112"));
        assert!(!luhn_valid("1234"));
    }

    #[test]
    fn digit_values_cover_other_scripts() {
        assert_eq!(digit_value('7'), Some(7));
        assert_eq!(digit_value('٣'), Some(3));
        assert_eq!(digit_value('９'), Some(9));
        assert_eq!(digit_value('𝟘'), Some(0));
        assert_eq!(digit_value('a'), None);
        assert_eq!(digit_value('Ⅻ'), None);
        assert_eq!(digit_value('²'), None);
    }

    #[test]
    fn replaces_and_counts_luhn_valid_windows_only() {
        let patterns = vec![rule("card-number", r"\d+(?:[ -]\d+)*", "[card]", true)];
        let mut r = Redactor::new(&patterns);
        let out = r.text("pay 4111 1111 1111 1111 not 4111 1111 1111 1112");
        assert_eq!(out, "pay [card] not 4111 1111 1111 1112");
        assert_eq!(r.counts, [1]);
    }

    #[test]
    fn a_match_inside_a_word_is_not_a_secret() {
        let patterns = vec![rule("k", r"KEY[0-9]{4}", "[k]", false)];
        let mut r = Redactor::new(&patterns);
        assert_eq!(
            r.text("xKEY1234 KEY12345 KEY1234_a KEY1234です"),
            "xKEY1234 KEY12345 [k]_a [k]です"
        );
        assert_eq!(r.counts, [2]);
    }

    #[test]
    fn overlapping_spans_are_replaced_once_whatever_the_order() {
        let a = rule("a", r"aaa-[a-z]+", "[a]", false);
        let b = rule("b", r"[a-z]+-bbb", "[b]", false);
        for patterns in [vec![a.clone(), b.clone()], vec![b, a]] {
            let mut r = Redactor::new(&patterns);
            // Both spans overlap: one replacement, the earliest start's.
            assert_eq!(r.text("x aaa-xbbb-bbb y"), "x [a] y");
        }
    }

    #[test]
    fn a_replacement_matched_by_a_pattern_is_refused() {
        let patterns = vec![
            rule("a", r"secret", "[a]", false),
            rule("b", r"\[a\]", "[b]", false),
        ];
        let err = check_replacements(&patterns).unwrap_err().to_string();
        assert!(
            err.contains("the `replace` of `a` is matched by the pattern of `b`"),
            "{err}"
        );
        let dollar = vec![rule("a", r"secret", "$0", false)];
        let err = check_replacements(&dollar).unwrap_err().to_string();
        assert!(err.contains("the `replace` of `a` contains `$`"), "{err}");
    }
}
