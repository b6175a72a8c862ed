//! The layout of the precomputed o200k tables, shared by `build.rs`, which
//! writes them, and `tokens::o200k`, which reads them in place: the two
//! sides compute slots with these same functions.
//!
//! - The trie (a double array, XOR-indexed): 8 bytes a slot, the slot's
//!   unit then its value, each a little-endian `u32`. A unit is `base << 9 |
//!   0x100 | label` for the slot of a child reached by the byte `label`
//!   (the root, slot 0, has no flag); the children of a slot with base `b`
//!   are at `b ^ byte`. Bases are unique, so a child's own label is enough
//!   to tell it from another node's child. The value is the token whose
//!   bytes lead from the root to the slot, or [`NONE`].
//! - Per token: its length (`u8`), the next shorter prefix token (`u32`,
//!   [`NONE`] if none) and the pair it was merged from (two `u32`s; a
//!   token's own id twice when it is not a merge).
//! - The pair table: [`PAIR_SLOTS`] `u32` slots, open-addressed, linear
//!   probing from [`pair_slot`]; a slot holds a merged token (whose pair is
//!   in the split table) or [`NONE`].
//! - The pre-tokenizer: [`PATTERNS`] as a dense DFA (regex-automata's
//!   serialized form, little-endian, anchored starts), when it determinizes
//!   within the build's limits.

/// No token (a slot's value, a prefix, a pair slot).
pub const NONE: u32 = u32::MAX;

/// The flag a child slot's unit carries beside its label.
pub const CHILD: u32 = 0x100;

/// Bits of a unit below its base.
pub const BASE_SHIFT: u32 = 9;

/// log2 of the pair table's slots: 2^19 slots for o200k's ~200k merges
/// keeps it under 40% full, so a pair that is not there (most lookups)
/// ends after one or two probes.
pub const PAIR_BITS: u32 = 19;

/// Slots in the pair table.
pub const PAIR_SLOTS: usize = 1 << PAIR_BITS;

/// The first slot probed for the pair `(left, right)`.
pub fn pair_slot(left: u32, right: u32) -> usize {
    let key = (u64::from(left) << 32) | u64::from(right);
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - PAIR_BITS)) as usize
}

/// bpe-openai's o200k_base pre-tokenizer, in its order of priority:
/// tiktoken's pattern, its negative look-ahead `\s+(?!\S)` rewritten as
/// `\s+\s`, whose last character the splitter drops ([`LOOKAHEAD`]), and
/// `\s+`; `\s+$` in the first handles the end of the text. build.rs
/// determinizes them; the library's tests compile them as the DFA's
/// reference.
#[cfg_attr(
    not(test),
    allow(dead_code, reason = "build.rs and the tests read them")
)]
pub const PATTERNS: [&str; 3] = [
    concat!(
        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        "|\\p{N}{1,3}",
        "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*",
        "|\\s*[\\r\\n]+",
        "|\\s+$",
    ),
    "\\s+\\s",
    "\\s+",
];

/// Which of [`PATTERNS`] end with one look-ahead character.
pub const LOOKAHEAD: [bool; 3] = [false, true, false];
