//! o200k_base token counts over tables `build.rs` precomputes, read in place.
//!
//! bpe-openai decodes its MessagePack tables on first use (~330 M
//! instructions: token vectors, FNV hash maps, an Aho-Corasick automaton).
//! Counting needs less, and all of it is written by `build.rs` into
//! `OUT_DIR` and embedded here (`include_bytes!`), then read where it lies
//! (`u32::from_le_bytes` at an index; no decoding, no allocation, no
//! `unsafe`): a double-array trie for the longest token a text starts with,
//! each token's length, next shorter prefix token and merge pair, and an
//! open-addressed table from a pair to the token it merges into, and the
//! pre-tokenizer's patterns as one dense DFA. Layout in `o200k/layout.rs`.
//! Only the DFA's validation runs at run time, once, on the first count
//! ([`warm_up`]). The patterns compiled as a regex are the tests' reference
//! for the DFA, not a fallback: a DFA that does not load counts nothing.
//!
//! The counting ([`count_till_limit`]: bpe's backtracking encoder and its
//! pair check) and the pre-tokenizer ([`split`]: bpe-openai's o200k
//! patterns and its emulated look-ahead) are copied from bpe 0.2.3
//! (`backtrack_encoder.rs`, `bitfield.rs`, `byte_pair_encoding.rs`) and
//! bpe-openai 0.3.2 (`lib.rs`), adapted to these tables:
//!
//! > Copyright (c) GitHub, Inc. (github/rust-gems, crates `bpe` and
//! > `bpe-openai`), licensed under the MIT License:
//! >
//! > Permission is hereby granted, free of charge, to any person obtaining a
//! > copy of this software and associated documentation files (the
//! > "Software"), to deal in the Software without restriction, including
//! > without limitation the rights to use, copy, modify, merge, publish,
//! > distribute, sublicense, and/or sell copies of the Software, and to
//! > permit persons to whom the Software is furnished to do so, subject to
//! > the following conditions:
//! >
//! > The above copyright notice and this permission notice shall be included
//! > in all copies or substantial portions of the Software.
//! >
//! > THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS
//! > OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF
//! > MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT.
//! > IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY
//! > CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT,
//! > TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE
//! > SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
//!
//! The count equals `bpe_openai::o200k_base().count` on every text; the
//! tests compare the tables with bpe's own and the counts with bpe-openai's.

use std::sync::LazyLock;

use regex_automata::util::primitives::StateID;
use regex_automata::Anchored;

mod layout;
use layout::{pair_slot, BASE_SHIFT, CHILD, LOOKAHEAD, NONE, PAIR_SLOTS};

/// The double-array trie: 8 bytes a slot (unit, value).
static TRIE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_trie.bin"));
/// Each token's length in bytes.
static LENS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_lens.bin"));
/// Each token's next shorter prefix token, or [`NONE`].
static NEXT_PREFIX: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_next_prefix.bin"));
/// Each token's merge pair (itself twice if it is not a merge).
static SPLIT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_split.bin"));
/// The merged token of a pair, by [`pair_slot`].
static PAIRS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_pairs.bin"));

/// The `u32` at word `index` of `table`. Indices come from the tables
/// themselves (tokens, slots), which the tests check against bpe's.
#[inline]
fn word(table: &[u8], index: usize) -> u32 {
    let at = index * 4;
    u32::from_le_bytes([table[at], table[at + 1], table[at + 2], table[at + 3]])
}

/// Tokens in the vocabulary.
#[cfg(test)]
fn num_tokens() -> usize {
    LENS.len()
}

/// The longest token `text` starts with; `None` only for an empty text
/// (every byte is a token).
#[inline]
fn next_match(text: &[u8]) -> Option<u32> {
    let mut node = 0;
    let mut best = None;
    for &byte in text {
        let slot = (word(TRIE, 2 * node) >> BASE_SHIFT) as usize ^ usize::from(byte);
        // Every base's block of 256 slots is in the array (build.rs).
        if word(TRIE, 2 * slot) & 0x1ff != CHILD | u32::from(byte) {
            break;
        }
        node = slot;
        let value = word(TRIE, 2 * slot + 1);
        if value != NONE {
            best = Some(value);
        }
    }
    best
}

#[inline]
fn token_len(token: u32) -> usize {
    usize::from(LENS[token as usize])
}

#[inline]
fn next_prefix(token: u32) -> Option<u32> {
    let prefix = word(NEXT_PREFIX, token as usize);
    (prefix != NONE).then_some(prefix)
}

#[inline]
fn split_of(token: u32) -> (u32, u32) {
    let at = 2 * token as usize;
    (word(SPLIT, at), word(SPLIT, at + 1))
}

/// The token `left` and `right` merge into, if any.
#[inline]
fn pair_lookup(left: u32, right: u32) -> Option<u32> {
    let mut slot = pair_slot(left, right);
    loop {
        let token = word(PAIRS, slot);
        if token == NONE {
            return None;
        }
        if split_of(token) == (left, right) {
            return Some(token);
        }
        slot = (slot + 1) % PAIR_SLOTS;
    }
}

/// bpe's `is_valid_token_pair`: whether BPE, merging by rank, keeps `left`
/// and `right` apart where they meet.
fn is_valid_token_pair(mut left: u32, mut right: u32) -> bool {
    // The largest token that can still be chosen across the split point.
    let mut limit = u32::MAX;
    loop {
        // Whether BPE would choose another pair across the split point.
        if let Some(combined) = pair_lookup(left, right) {
            if combined < limit {
                return false;
            }
        }
        // Reverse the merge.
        if left > right {
            limit = left;
            left = split_of(left).1;
            if left == limit {
                limit = right + 1;
                right = split_of(right).0;
                if right + 1 == limit {
                    return true;
                }
            }
        } else {
            limit = right + 1;
            right = split_of(right).0;
            if right + 1 == limit {
                limit = left;
                left = split_of(left).1;
                if left == limit {
                    return true;
                }
            }
        }
    }
}

/// o200k tokens in `text` (one pre-tokenized piece, as bytes), or `None`
/// past `limit`: bpe's `BytePairEncoding::count_till_limit`, which stops
/// once the encoding holds more than `limit + 10` tokens (backtracking can
/// pop up to a few of them again).
pub(crate) fn count_till_limit(text: &[u8], limit: usize) -> Option<usize> {
    let first = next_match(text);
    // A piece that is one token (most are) is the encoder's first step and
    // its last: the longest token it starts with covers it.
    if first.is_some_and(|token| token_len(token) == text.len()) {
        return (limit >= 1).then_some(1);
    }
    // A token is at least a byte: `text.len()` slots hold every encoding.
    // Short pieces (nearly all) encode on the stack.
    if text.len() < SHORT {
        let mut tokens = [0; SHORT];
        let mut dead_ends = [u64::MAX; SHORT / 64];
        Backtrack::new(text, first, &mut tokens, &mut dead_ends).count(limit)
    } else {
        let mut tokens = vec![0; text.len()];
        let mut dead_ends = vec![u64::MAX; (text.len() + 1).div_ceil(64)];
        Backtrack::new(text, first, &mut tokens, &mut dead_ends).count(limit)
    }
}

/// Pieces shorter than this are encoded in buffers on the stack.
const SHORT: usize = 64;

/// bpe's `BacktrackEncoder`: the longest token at the current position,
/// then shorter prefixes of it until the pair with the previous token is
/// one BPE keeps and the position after it was not found a dead end;
/// otherwise the previous token is popped. Visited dead ends are cleared
/// bits.
struct Backtrack<'t, 'b> {
    text: &'t [u8],
    /// The encoding so far: `tokens[..len]`.
    tokens: &'b mut [u32],
    len: usize,
    next_token: Option<u32>,
    pos: usize,
    /// One bit a position, set until the position is found a dead end.
    bitfield: &'b mut [u64],
}

impl<'t, 'b> Backtrack<'t, 'b> {
    /// The encoder of `text`, whose longest prefix token is `first`, in
    /// buffers of at least `text.len()` tokens and `text.len() + 1` bits.
    fn new(
        text: &'t [u8],
        first: Option<u32>,
        tokens: &'b mut [u32],
        bitfield: &'b mut [u64],
    ) -> Self {
        Backtrack {
            text,
            tokens,
            len: 0,
            next_token: first,
            pos: 0,
            bitfield,
        }
    }

    /// The encoding's length, or `None` once past `limit + 10` tokens.
    fn count(mut self, limit: usize) -> Option<usize> {
        let limit_with_buffer = limit.saturating_add(10);
        while self.step().is_some() {
            if self.len > limit_with_buffer {
                return None;
            }
        }
        (self.len <= limit).then_some(self.len)
    }

    fn is_set(&self, bit: usize) -> bool {
        self.bitfield[bit / 64] & (1 << (bit % 64)) != 0
    }

    fn step(&mut self) -> Option<u32> {
        let mut token = self.next_token?;
        let last = self.len.checked_sub(1).map(|at| self.tokens[at]);
        loop {
            let end_pos = self.pos + token_len(token);
            if self.is_set(end_pos) && last.is_none_or(|last| is_valid_token_pair(last, token)) {
                self.tokens[self.len] = token;
                self.len += 1;
                self.pos = end_pos;
                self.next_token = next_match(&self.text[end_pos..]);
                break;
            } else if let Some(shorter) = next_prefix(token) {
                token = shorter;
            } else {
                self.bitfield[self.pos / 64] &= !(1 << (self.pos % 64));
                self.len = self.len.saturating_sub(1);
                self.pos -= last.map_or(0, token_len);
                self.next_token = last;
                break;
            }
        }
        self.next_token
    }
}

/// The pre-tokenizer's dense DFA (build.rs, which fails the build if the
/// patterns do not determinize), aligned as its deserializer wants (`u32`).
#[repr(C)]
struct Aligned<B: ?Sized> {
    align: [u32; 0],
    bytes: B,
}
static DFA_BYTES: &[u8] = include!(concat!(env!("OUT_DIR"), "/o200k_dfa.rs"));

type Dfa = regex_automata::dfa::dense::DFA<&'static [u32]>;

/// The pre-tokenizer's DFA, validated once (`DFA::from_bytes` checks every
/// transition; no copy). `None` only for bytes that are not the DFA
/// build.rs wrote: then no text is counted ([`Unavailable`]).
static DFA: LazyLock<Option<Dfa>> = LazyLock::new(|| Some(Dfa::from_bytes(DFA_BYTES).ok()?.0));

/// The pre-tokenizer could not cut a text: its DFA did not load, or a
/// search failed (an anchored search of a DFA built with anchored starts
/// and no quit bytes does not). The caller counts nothing.
#[derive(Debug)]
pub(crate) struct Unavailable;

/// Loads the pre-tokenizer now rather than on the first count.
pub(crate) fn warm_up() {
    LazyLock::force(&START);
}

/// The pieces o200k's pre-tokenizer cuts `text` into, in order.
pub(crate) fn split(text: &str) -> Splits<'_> {
    Splits {
        text,
        last: 0,
        dfa: *START,
        ascii: true,
    }
}

/// The DFA and its anchored start state: each search starts at the start
/// of what is left of the text, with no look-behind, so one start state
/// serves them all.
static START: LazyLock<Option<(&'static Dfa, StateID)>> = LazyLock::new(|| {
    use regex_automata::dfa::Automaton;
    let dfa = DFA.as_ref()?;
    let config = regex_automata::util::start::Config::new().anchored(Anchored::Yes);
    Some((dfa, dfa.start_state(&config).ok()?))
});

/// bpe-openai's `Splits`: each piece the first match anchored where the
/// last ended (leftmost-first, the patterns in order), less its last
/// character for the look-ahead pattern.
pub(crate) struct Splits<'t> {
    text: &'t str,
    last: usize,
    /// The DFA and its anchored start state, if it loaded.
    dfa: Option<(&'static Dfa, StateID)>,
    /// Whether [`ascii_piece`] cuts what it can before the DFA is walked
    /// (the tests turn it off for the DFA's own pieces).
    ascii: bool,
}

/// The end and pattern of the first match of [`layout::PATTERNS`] at the
/// start of `text`, anchored: the DFA walked byte by byte from `start` as
/// regex-automata's forward search walks it (a match is seen one byte
/// late, at the end of the text after the end-of-input transition), until
/// it dies or the text ends.
fn find(dfa: &Dfa, start: StateID, text: &[u8]) -> Result<Option<(usize, usize)>, Unavailable> {
    use regex_automata::dfa::Automaton;
    let mut sid = start;
    // The last match state and where its match ends; its pattern is read
    // once, at the end.
    let mut found = None;
    let mut ended = false;
    for (at, &byte) in text.iter().enumerate() {
        sid = dfa.next_state(sid, byte);
        if dfa.is_special_state(sid) {
            if dfa.is_match_state(sid) {
                found = Some((at, sid));
            } else if dfa.is_dead_state(sid) {
                ended = true;
                break;
            } else if dfa.is_quit_state(sid) {
                return Err(Unavailable);
            }
        }
    }
    if !ended {
        sid = dfa.next_eoi_state(sid);
        if dfa.is_match_state(sid) {
            found = Some((text.len(), sid));
        }
    }
    Ok(found.map(|(end, sid)| (end, dfa.match_pattern(sid, 0).as_usize())))
}

/// Byte classes of [`ascii_piece`]: ASCII letters, digits, whitespace
/// (`\s`'s ASCII members) split by whether they break a line, the rest of
/// ASCII (punctuation, symbols, controls: `[^\s\p{L}\p{N}]`), and bytes
/// of non-ASCII chars.
const UPPER: u8 = 0;
const LOWER: u8 = 1;
const DIGIT: u8 = 2;
/// `' '`, `\t`, `\x0B`, `\x0C`: whitespace that is not `[\r\n]`.
const BLANK: u8 = 3;
/// `\r`, `\n`.
const NEWLINE: u8 = 4;
const OTHER: u8 = 5;
const WIDE: u8 = 6;
static ASCII_CLASS: [u8; 256] = {
    let mut classes = [WIDE; 256];
    let mut b = 0;
    while b < 128 {
        classes[b] = match b as u8 {
            b'A'..=b'Z' => UPPER,
            b'a'..=b'z' => LOWER,
            b'0'..=b'9' => DIGIT,
            b' ' | b'\t' | b'\x0B' | b'\x0C' => BLANK,
            b'\r' | b'\n' => NEWLINE,
            _ => OTHER,
        };
        b += 1;
    }
    classes
};

#[inline]
fn class_at(text: &[u8], at: usize) -> Option<u8> {
    text.get(at).map(|&b| ASCII_CLASS[usize::from(b)])
}

/// The length of the first piece of `text` (not empty), as the DFA and the
/// look-ahead rule of [`Splits`] cut it, when it and the char after it
/// are ASCII shapes whose piece follows from [`layout::PATTERNS`] alone;
/// `None` for anything else (a non-ASCII char where it could change the
/// piece: a mark or letter continuing a word, a number, Unicode
/// whitespace, `ſ` in a contraction), which the DFA then cuts. In the
/// patterns' order of priority:
/// - letters, after at most one char of `[^\r\n\p{L}\p{N}]` (a blank or
///   other ASCII): capitals then small letters (at least one), else
///   capitals alone, then a contraction (`'s`, `'LL`, ...);
/// - one to three digits;
/// - an optional space, a run of other ASCII, then `[\r\n/]*`;
/// - whitespace: up to its last line break if it holds one, all of it at
///   the end of the text, else all but its last char (`\s+\s` less its
///   look-ahead), or the one char.
#[inline]
fn ascii_piece(text: &[u8]) -> Option<usize> {
    let first = class_at(text, 0)?;
    match first {
        UPPER | LOWER => letters(text, 0),
        DIGIT => {
            let mut end = 1;
            while end < 3 {
                match class_at(text, end) {
                    Some(DIGIT) => end += 1,
                    Some(WIDE) => return None,
                    _ => break,
                }
            }
            Some(end)
        }
        OTHER | BLANK => match class_at(text, 1) {
            Some(UPPER | LOWER) => letters(text, 1),
            Some(WIDE) => None,
            Some(OTHER) if first == OTHER || text[0] == b' ' => {
                let from = if first == OTHER { 0 } else { 1 };
                other_run(text, from)
            }
            _ if first == OTHER => other_run(text, 0),
            _ => whitespace(text),
        },
        NEWLINE => whitespace(text),
        _ => None,
    }
}

/// The piece of capitals, small letters and a contraction from `at` on
/// (one of the two letter patterns, `text[..at]` their optional first char).
#[inline]
fn letters(text: &[u8], at: usize) -> Option<usize> {
    let mut end = at;
    while class_at(text, end) == Some(UPPER) {
        end += 1;
    }
    while class_at(text, end) == Some(LOWER) {
        end += 1;
    }
    // A char past the letters that is not ASCII may be a letter or mark
    // that continues them.
    if class_at(text, end) == Some(WIDE) {
        return None;
    }
    if text.get(end) != Some(&b'\'') {
        return Some(end);
    }
    // `(?i:'s|'t|'re|'ve|'m|'ll|'d)`: case-blind, so `'ſ` is one too.
    let lower = |at: usize| match text.get(at) {
        Some(b) if b.is_ascii() => Some(Some(b.to_ascii_lowercase())),
        Some(_) => None,
        None => Some(None),
    };
    let (a, b) = (lower(end + 1)?, lower(end + 2)?);
    Some(
        end + match (a, b) {
            (Some(b's' | b't' | b'm' | b'd'), _) => 2,
            (Some(b'r'), Some(b'e')) | (Some(b'v'), Some(b'e')) | (Some(b'l'), Some(b'l')) => 3,
            _ => 0,
        },
    )
}

/// The punctuation pattern's piece: other ASCII from `at` on (`text[..at]`
/// its optional space), then `[\r\n/]*`.
#[inline]
fn other_run(text: &[u8], at: usize) -> Option<usize> {
    let mut end = at;
    loop {
        match class_at(text, end) {
            Some(OTHER) => end += 1,
            // Other chars than ASCII may belong to the run (`«`).
            Some(WIDE) => return None,
            _ => break,
        }
    }
    while let Some(b'\r' | b'\n' | b'/') = text.get(end) {
        end += 1;
    }
    Some(end)
}

/// The piece of a run of ASCII whitespace that no letter or punctuation
/// pattern takes.
#[inline]
fn whitespace(text: &[u8]) -> Option<usize> {
    let mut end = 0;
    let mut last_break = None;
    loop {
        match class_at(text, end) {
            Some(BLANK) => end += 1,
            Some(NEWLINE) => {
                end += 1;
                last_break = Some(end);
            }
            // Other whitespace than ASCII may continue the run.
            Some(WIDE) => return None,
            _ => break,
        }
    }
    Some(match last_break {
        // `\s*[\r\n]+`.
        Some(after) => after,
        // `\s+$`.
        None if end == text.len() => end,
        // `\s+\s`, its last char dropped.
        None if end >= 2 => end - 1,
        // `\s+`.
        None => end,
    })
}

impl<'t> Iterator for Splits<'t> {
    type Item = Result<&'t str, Unavailable>;

    fn next(&mut self) -> Option<Self::Item> {
        let rest = &self.text.as_bytes()[self.last..];
        if self.dfa.is_some() && self.ascii {
            // No pattern matches an empty text.
            if rest.is_empty() {
                return None;
            }
            if let Some(len) = ascii_piece(rest) {
                let start = self.last;
                self.last += len;
                return Some(Ok(&self.text[start..self.last]));
            }
        }
        let found = match self.dfa {
            Some((dfa, start)) => find(dfa, start, rest),
            None => Err(Unavailable),
        };
        let (len, pattern) = match found {
            Ok(found) => found?,
            Err(unavailable) => {
                // Nothing more is cut: the caller stops at the error.
                self.last = self.text.len();
                return Some(Err(unavailable));
            }
        };
        let start = self.last;
        let mut end = self.last + len;
        if LOOKAHEAD[pattern] {
            // `\s+\s` matches two characters or more, so one is left
            // (bpe-openai asserts it); `end` then moves on.
            if let Some(last) = self.text[start..end].chars().next_back() {
                if end - last.len_utf8() > start {
                    end -= last.len_utf8();
                }
            }
        }
        self.last = end;
        Some(Ok(&self.text[start..end]))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use regex_automata::meta::Regex;
    use regex_automata::Input;
    use serde::de::IgnoredAny;

    use super::layout::PATTERNS;
    use super::*;

    /// The pieces of `text` (the DFA loads: a test says so).
    fn pieces(text: &str) -> Vec<&str> {
        split(text).collect::<Result<_, _>>().unwrap()
    }

    fn bpe() -> &'static bpe_openai::byte_pair_encoding::BytePairEncoding {
        &bpe_openai::o200k_base().bpe
    }

    /// bpe's `BytePairEncoding` as it serializes (MessagePack, its fields
    /// in order): its own derived tables, private otherwise.
    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    struct Derived {
        all_tokens: IgnoredAny,
        token_starts: Vec<u32>,
        bytes_hash_to_token: IgnoredAny,
        split_table: Vec<(u32, u32)>,
        pair_lookup: HashMap<(u32, u32), u32>,
        longest_searcher: IgnoredAny,
        overlapping_searcher: IgnoredAny,
        overlapping_searcher_rev: IgnoredAny,
        next_prefix_match: Vec<u32>,
        hash_factor: IgnoredAny,
    }

    /// What build.rs derived is what bpe derives from the same vocabulary:
    /// a new vocabulary or derivation in bpe fails here.
    #[test]
    fn the_tables_are_what_bpe_derives() {
        let bytes = rmp_serde::to_vec(bpe()).unwrap();
        let derived: Derived = rmp_serde::from_slice(&bytes).unwrap();
        let n = bpe().num_tokens();
        assert_eq!(num_tokens(), n);
        assert_eq!(derived.token_starts.len(), n + 1);
        assert_eq!(derived.split_table.len(), n);
        assert_eq!(derived.next_prefix_match.len(), n);
        for token in 0..n as u32 {
            let (start, end) = (
                derived.token_starts[token as usize],
                derived.token_starts[token as usize + 1],
            );
            assert_eq!(
                token_len(token),
                (end - start) as usize,
                "length of {token}"
            );
            assert_eq!(
                next_prefix(token).unwrap_or(NONE),
                derived.next_prefix_match[token as usize],
                "next prefix of {token}"
            );
            assert_eq!(
                split_of(token),
                derived.split_table[token as usize],
                "split of {token}"
            );
            // The trie: a token's bytes are their own longest prefix token.
            assert_eq!(next_match(bpe().token_bytes(token)), Some(token));
        }
        let merges = (0..n as u32).filter(|&t| split_of(t) != (t, t)).count();
        assert_eq!(merges, derived.pair_lookup.len());
        for (&(left, right), &token) in &derived.pair_lookup {
            assert_eq!(pair_lookup(left, right), Some(token), "{left} {right}");
        }
        // Pairs that merge into nothing: a token with itself, reversed pairs.
        let mut misses = 0;
        for (&(left, right), _) in derived.pair_lookup.iter().take(20_000) {
            for pair in [(right, left), (left, left), (right, right)] {
                if !derived.pair_lookup.contains_key(&pair) {
                    assert_eq!(pair_lookup(pair.0, pair.1), None, "{pair:?}");
                    misses += 1;
                }
            }
        }
        assert!(misses > 10_000, "{misses}");
    }

    #[test]
    fn every_token_alone_counts_one() {
        for token in 0..bpe().num_tokens() as u32 {
            let bytes = bpe().token_bytes(token);
            assert_eq!(count_till_limit(bytes, usize::MAX), Some(1), "{token}");
            assert_eq!(count_till_limit(bytes, 1), Some(1), "{token}");
            assert_eq!(count_till_limit(bytes, 0), None, "{token}");
        }
        assert_eq!(count_till_limit(b"", 0), Some(0));
    }

    /// Every string of the real trees (keys and values), whole.
    fn fixture_strings() -> Vec<String> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/answers");
        let mut out = Vec::new();
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        files.sort();
        for file in files {
            let value: serde_json::Value =
                serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
            let mut stack = vec![value];
            while let Some(value) = stack.pop() {
                match value {
                    serde_json::Value::String(s) => out.push(s),
                    serde_json::Value::Array(values) => stack.extend(values),
                    serde_json::Value::Object(map) => {
                        for (key, value) in map {
                            out.push(key);
                            stack.push(value);
                        }
                    }
                    _ => {}
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// Texts heavy in what o200k's pre-tokenizer and merges tell apart,
    /// from a fixed seed.
    fn generated() -> Vec<String> {
        const ATOMS: &[&str] = &[
            "中文",
            "漢字かな交じり",
            "한국어",
            "の",
            "テスト",
            "😀",
            "👍🏽",
            "👨\u{200d}👩\u{200d}👧",
            "🏳\u{fe0f}\u{200d}🌈",
            "\u{200d}",
            "\u{fe0f}",
            "e\u{301}",
            "a\u{308}\u{301}",
            "\u{301}",
            "\u{20dd}",
            "\u{5bf}",
            "\u{93f}",
            "नमस्ते",
            "ภาษาไทย",
            "مرحبا",
            "שלום",
            "Привет",
            "Ελληνικά",
            "0",
            "42",
            "1234567",
            "٣٤٥",
            "०१२",
            "০৯",
            "๑๒๓",
            "０１２",
            "²³",
            "Ⅻ",
            "½",
            " ",
            "  ",
            "   ",
            "\t",
            "\n",
            "\r\n",
            "\n\n",
            " \n ",
            "\u{a0}",
            "\u{3000}",
            "\u{2009}",
            "'s",
            "'S",
            "'ll",
            "'LL",
            "'d",
            "'re",
            "'ve",
            "'m",
            "'t",
            "\u{2019}s",
            "don't",
            "I'm",
            "\u{0}",
            "\u{7f}",
            "\u{85}",
            "\u{2028}",
            "\u{2029}",
            "word",
            "Title",
            "ALLCAPS",
            "camelCase",
            "snake_case",
            "x",
            "Q",
            ",",
            ".",
            "...",
            "/",
            "//",
            "\\",
            "\"",
            "{",
            "}",
            "[",
            "]",
            "(",
            ")",
            "<",
            ">",
            "-",
            "--",
            "_",
            "$",
            "#",
            "@",
            "&",
            "*",
            "+",
            "=",
            "|",
            "~",
            "`",
            "^",
            "%",
            "!",
            "?",
            ";",
            ":",
            "«",
            "»",
            "—",
            "€",
            "ß",
            "ſ",
            "İ",
            "ǅ",
            "ʰ",
            "ﬁ",
            "\u{1f1fa}\u{1f1f8}",
            "\u{e000}",
        ];
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        (0..3000)
            .map(|_| {
                let len = (next() % 40) as usize;
                (0..len)
                    .map(|_| ATOMS[(next() % ATOMS.len() as u64) as usize])
                    .collect()
            })
            .collect()
    }

    fn corpus() -> Vec<String> {
        let mut texts = fixture_strings();
        texts.extend(
            crate::tokens::tests::o200k::renderings()
                .into_iter()
                .map(|(_, text)| text),
        );
        texts.extend(generated());
        texts
    }

    /// `bytes` counted here and by bpe, alone and at every limit around
    /// the count.
    fn assert_counts(bytes: &[u8]) {
        let n = bpe().count(bytes);
        assert_eq!(count_till_limit(bytes, usize::MAX), Some(n), "{bytes:?}");
        for limit in [0, n.saturating_sub(1), n, n + 1] {
            assert_eq!(
                count_till_limit(bytes, limit),
                bpe().count_till_limit(bytes, limit),
                "{bytes:?} at {limit}"
            );
        }
    }

    /// Every pair of adjacent tokens bpe-openai encodes the corpus into
    /// counts as bpe counts it, and so does every text, pre-tokenized the
    /// same way.
    #[test]
    fn counts_what_bpe_openai_counts_on_the_corpus() {
        let tokenizer = bpe_openai::o200k_base();
        let mut pairs = HashSet::new();
        let mut longest = 0;
        for text in corpus() {
            assert_eq!(
                pieces(&text),
                tokenizer.split(&text).collect::<Vec<_>>(),
                "{text:?}"
            );
            let n = tokenizer.count(text.as_str());
            let count = |limit: usize| {
                let mut total = 0;
                for piece in pieces(&text) {
                    total += count_till_limit(piece.as_bytes(), limit - total)?;
                }
                Some(total)
            };
            for limit in [usize::MAX, 0, n.saturating_sub(1), n, n + 1] {
                let expected = (n <= limit).then_some(n);
                assert_eq!(count(limit), expected, "{text:?} at {limit}");
            }
            let tokens = tokenizer.encode(text.as_str());
            pairs.extend(tokens.windows(2).map(|w| (w[0], w[1])));
            longest = longest.max(tokens.len());
        }
        assert!(pairs.len() > 20_000, "{} pairs", pairs.len());
        for (left, right) in pairs {
            let bytes = [bpe().token_bytes(left), bpe().token_bytes(right)].concat();
            assert_counts(&bytes);
        }
        // The trie against bpe's Aho-Corasick automaton, at every position
        // of the generated texts.
        for text in generated() {
            let bytes = text.as_bytes();
            for at in 0..bytes.len() {
                assert_eq!(
                    next_match(&bytes[at..]),
                    bpe().encode_greedy(&bytes[at..]).first().copied(),
                    "{text:?} at {at}"
                );
            }
        }
        assert!(longest > 1000, "{longest}");
    }

    /// Whole texts without pre-tokenizing (long pieces, much backtracking):
    /// the early stop at every limit around the count.
    #[test]
    fn counts_unsplit_texts_as_bpe_does() {
        for text in generated() {
            assert_counts(text.as_bytes());
        }
        for text in crate::tokens::tests::o200k::renderings() {
            let bytes = &text.1.as_bytes()[..text.1.len().min(3000)];
            assert_counts(bytes);
            // Every length on both sides of the stack buffers' size.
            for len in SHORT - 3..=SHORT + 3 {
                assert_counts(&bytes[..len]);
            }
        }
    }

    /// The DFA build.rs wrote loads and splits as the compiled patterns do
    /// (bpe-openai's `Regex::new_many`, the reference; the corpus test
    /// compares the pieces with bpe-openai's own).
    #[test]
    fn the_pretokenizer_dfa_finds_what_the_regex_finds() {
        assert!(DFA.is_some(), "the DFA loads");
        let (dfa, start) = START.expect("the DFA has an anchored start");
        let compiled = Regex::new_many(&PATTERNS).unwrap();
        let regex = |text: &str| {
            compiled
                .find(Input::new(text).anchored(Anchored::Yes))
                .map(|m| (m.range().end, m.pattern().as_usize()))
        };
        for text in corpus() {
            for (at, _) in text.char_indices().step_by(7) {
                assert_eq!(
                    find(dfa, start, &text.as_bytes()[at..]).unwrap(),
                    regex(&text[at..]),
                    "{text:?} at {at}"
                );
            }
        }
    }

    /// The first piece of `text` as the DFA alone cuts it.
    fn dfa_piece(text: &str) -> Option<usize> {
        let mut splits = split(text);
        splits.ascii = false;
        splits.next().map(|piece| piece.unwrap().len())
    }

    /// The ASCII fast path cuts the piece the DFA cuts wherever it cuts one:
    /// every text of up to two ASCII bytes, and every text of up to four
    /// chars of an alphabet of each byte class, the contractions' letters
    /// and the non-ASCII chars that continue a word, a number, whitespace
    /// or punctuation.
    #[test]
    fn the_ascii_fast_path_cuts_what_the_dfa_cuts() {
        let check = |text: &str, cut: &mut usize| {
            if let Some(len) = ascii_piece(text.as_bytes()) {
                assert_eq!(Some(len), dfa_piece(text), "{text:?}");
                *cut += 1;
            }
        };
        let mut cut = 0;
        for a in 0..128u8 {
            check(&char::from(a).to_string(), &mut cut);
            for b in 0..128u8 {
                check(&String::from_utf8(vec![a, b]).unwrap(), &mut cut);
            }
        }
        const ALPHABET: &[char] = &[
            'a', 'Z', 's', 'S', 't', 'r', 'E', 'v', 'l', 'L', 'd', 'm', 'x', '7', '\'', ' ', '\t',
            '\x0B', '\r', '\n', '/', '.', '\0', '\x1f', '\x7f', 'é', 'É', 'ſ', '\u{301}', '\u{a0}',
            '\u{85}', '\u{2028}', '٣', '²', '中', '«', '😀',
        ];
        let n = ALPHABET.len();
        let mut text = String::new();
        for len in 1..=4u32 {
            for mut i in 0..n.pow(len) {
                text.clear();
                for _ in 0..len {
                    text.push(ALPHABET[i % n]);
                    i /= n;
                }
                check(&text, &mut cut);
            }
        }
        assert!(cut > 500_000, "{cut} texts cut by the fast path");
    }

    #[test]
    fn warm_up_builds_the_pretokenizer() {
        warm_up();
        assert_eq!(pieces("Hello world  x"), ["Hello", " world", " ", " x"]);
    }
}
