//! o200k_base token counts over tables `build.rs` precomputes, read in place.
//!
//! bpe-openai decodes its MessagePack tables on first use (~330 M
//! instructions: token vectors, FNV hash maps, an Aho-Corasick automaton).
//! Counting needs less, and all of it is written by `build.rs` into
//! `OUT_DIR` and embedded here (`include_bytes!`), then read where it lies
//! (`u32::from_le_bytes` at an index; no decoding, no allocation, no
//! `unsafe`): a double-array trie for the longest token a text starts with,
//! each token's length, next shorter prefix token and merge pair, and an
//! open-addressed table from a pair to the token it merges into. Layout in
//! `o200k/layout.rs`. Only the pre-tokenizer's regex is built at run time,
//! once, on the first count ([`warm_up`]).
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

use regex_automata::meta::Regex;
use regex_automata::{Anchored, Input};

mod layout;
use layout::{pair_slot, BASE_SHIFT, CHILD, NONE, PAIR_SLOTS};

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
pub(crate) fn num_tokens() -> usize {
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
    let mut encoder = Backtrack::new(text);
    let limit_with_buffer = limit.saturating_add(10);
    while encoder.step().is_some() {
        if encoder.tokens.len() > limit_with_buffer {
            return None;
        }
    }
    (encoder.tokens.len() <= limit).then_some(encoder.tokens.len())
}

/// bpe's `BacktrackEncoder`: the longest token at the current position,
/// then shorter prefixes of it until the pair with the previous token is
/// one BPE keeps and the position after it was not found a dead end;
/// otherwise the previous token is popped. Visited dead ends are cleared
/// bits.
struct Backtrack<'t> {
    text: &'t [u8],
    tokens: Vec<u32>,
    next_token: Option<u32>,
    pos: usize,
    /// One bit a position, set until the position is found a dead end.
    bitfield: Vec<u64>,
}

impl<'t> Backtrack<'t> {
    fn new(text: &'t [u8]) -> Self {
        Backtrack {
            text,
            tokens: Vec::with_capacity(text.len() / 3),
            next_token: next_match(text),
            pos: 0,
            bitfield: vec![u64::MAX; (text.len() + 1).div_ceil(64)],
        }
    }

    fn is_set(&self, bit: usize) -> bool {
        self.bitfield[bit / 64] & (1 << (bit % 64)) != 0
    }

    fn step(&mut self) -> Option<u32> {
        let mut token = self.next_token?;
        let last = self.tokens.last().copied();
        loop {
            let end_pos = self.pos + token_len(token);
            if self.is_set(end_pos) && last.is_none_or(|last| is_valid_token_pair(last, token)) {
                self.tokens.push(token);
                self.pos = end_pos;
                self.next_token = next_match(&self.text[end_pos..]);
                break;
            } else if let Some(shorter) = next_prefix(token) {
                token = shorter;
            } else {
                self.bitfield[self.pos / 64] &= !(1 << (self.pos % 64));
                self.tokens.pop();
                self.pos -= last.map_or(0, token_len);
                self.next_token = last;
                break;
            }
        }
        self.next_token
    }
}

/// bpe-openai's o200k_base pre-tokenizer: tiktoken's pattern, its negative
/// look-ahead `\s+(?!\S)` rewritten as a second pattern `\s+\s` whose last
/// character [`Splits`] drops (and `\s+$` for the end of the text).
static PRETOKENIZER: LazyLock<Regex> = LazyLock::new(|| {
    let pat1 = [
        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        "\\p{N}{1,3}",
        " ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*",
        "\\s*[\\r\\n]+",
        "\\s+$",
    ]
    .join("|");
    // Fixed patterns: a test builds them.
    Regex::new_many(&[pat1.as_str(), "\\s+\\s", "\\s+"]).expect("the o200k patterns compile")
});

/// Which of [`PRETOKENIZER`]'s patterns end with one look-ahead character.
const LOOKAHEAD: [bool; 3] = [false, true, false];

/// Builds the pre-tokenizer now rather than on the first count.
pub(crate) fn warm_up() {
    LazyLock::force(&PRETOKENIZER);
}

/// The pieces o200k's pre-tokenizer cuts `text` into, in order.
pub(crate) fn split(text: &str) -> Splits<'_> {
    Splits {
        pat: &PRETOKENIZER,
        text,
        last: 0,
    }
}

/// bpe-openai's `Splits`: each piece the first match anchored where the
/// last ended, less its last character for the look-ahead pattern.
pub(crate) struct Splits<'t> {
    pat: &'t Regex,
    text: &'t str,
    last: usize,
}

impl<'t> Iterator for Splits<'t> {
    type Item = &'t str;

    fn next(&mut self) -> Option<&'t str> {
        let input = Input::new(&self.text[self.last..]).anchored(Anchored::Yes);
        let m = self.pat.find(input)?;
        let start = self.last;
        let mut end = self.last + m.range().end;
        if LOOKAHEAD[m.pattern().as_usize()] {
            // `\s+\s` matches two characters or more, so one is left
            // (bpe-openai asserts it); `end` then moves on.
            if let Some(last) = self.text[start..end].chars().next_back() {
                if end - last.len_utf8() > start {
                    end -= last.len_utf8();
                }
            }
        }
        self.last = end;
        Some(&self.text[start..end])
    }
}
