//! Precomputes what start-up would otherwise compute on every run for the
//! embedded default policy (`policies/default.rego`, fixed at compile time):
//!
//! - its content hash, the same scheme as `policy::engine::hash_files` (a
//!   test compares the two);
//! - a dense DFA pair (forward and reverse, regex-automata's serialized
//!   form) for every raw string (`` `...` ``) of the file that is a regex:
//!   its redaction and title patterns. `redact::Pattern::new` looks a pattern
//!   up by its exact text and deserializes the DFAs instead of compiling
//!   it; any other text, or DFAs that do not load, is compiled as before.
//!   The DFAs find the same matches as `regex::Regex` (leftmost-first, the
//!   same syntax defaults): `src/tests/patterns.rs` compares them.
//!
//! - with feature `tokens`, the o200k_base tables `tokens::o200k` counts
//!   over, derived from bpe-openai's vocabulary (see [`o200k_tables`]) and
//!   read in place at run time instead of decoding bpe-openai's own.
//!
//! BENCHMARKS.md, "Start-up" and "Token counting", has the figures.

use std::fmt::Write as _;
use std::path::Path;

use regex_automata::dfa::{dense, regex::Regex, StartKind};
use sha2::{Digest, Sha256};

/// The policy hash's tag: `policy::engine::HASH_TAG` (a test compares them).
const HASH_TAG: &[u8] = b"ctxgate-policy-sources-v1\0";
/// A DFA larger than this, or whose determinization needs more, is left to
/// be compiled at run time. The limit is on the DFA as determinized, before
/// minimizing: `credential-assignment` and `token-assignment` determinize
/// to 1–3 MB and minimize to 0.6 and 0.9 MB (compiled at run time, either
/// one cost a request ~4.4 M instructions).
const MAX_DFA_BYTES: usize = 3 << 20;
const DETERMINIZE_LIMIT: usize = 4 << 20;
/// A pattern whose prefixes need more searches than this has none.
const MAX_NEEDLES: usize = 16;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=policies/default.rego");
    println!("cargo:rerun-if-changed=src/tokens/o200k/layout.rs");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let out = Path::new(&out);
    #[cfg(feature = "tokens")]
    o200k::tables(out);
    let source = std::fs::read_to_string("policies/default.rego").expect("policies/default.rego");

    let mut hasher = Sha256::new();
    hasher.update(HASH_TAG);
    hasher.update((source.len() as u64).to_le_bytes());
    hasher.update(source.as_bytes());
    let hash: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    std::fs::write(out.join("default_hash.rs"), format!("{hash:?}\n"))
        .expect("write default_hash.rs");

    let mut table = String::from("&[\n");
    let mut seen = Vec::new();
    for pattern in raw_strings(&source) {
        // Some raw strings are not patterns: they are compiled at run time
        // if they are used as one, and fail there.
        let Ok(hir) = regex_syntax::parse(&pattern) else {
            continue;
        };
        if seen.contains(&pattern) || regex_automata::meta::Regex::new(&pattern).is_err() {
            continue;
        }
        let n = seen.len();
        seen.push(pattern.clone());
        // The DFAs, unless determinizing blows up (counted repetitions
        // whose classes hold another alternative's start: the service
        // keys, jwt, ...): those are compiled at run time, when needed.
        let config = dense::Config::new()
            .minimize(true)
            .determinize_size_limit(Some(DETERMINIZE_LIMIT))
            .dfa_size_limit(Some(MAX_DFA_BYTES));
        let build = |config: dense::Config| Regex::builder().dense(config).build(&pattern).ok();
        // The bytes a match can start with: those on which the anchored
        // start state (for any byte before it, or none) does not die.
        let first = build(config.clone())
            .filter(|_| hir.properties().minimum_len().unwrap_or(0) > 0)
            .and_then(|regex| first_bytes(regex.forward()));
        // What is embedded: `redact::Pattern` only ever searches forward
        // unanchored (the reverse DFA, anchored, finds a match's start), so
        // the forward DFA has no anchored start states, and none of the
        // states only they reach: a third to two fifths smaller, and as
        // much less to validate when it loads (BENCHMARKS.md, "Start-up").
        // An anchored search of it would fail, and the pattern be compiled.
        let dfa = build(config.start_kind(StartKind::Unanchored));
        let dfa = match dfa {
            Some(regex) => {
                let (forward, pad_f) = regex.forward().to_bytes_little_endian();
                let (reverse, pad_r) = regex.reverse().to_bytes_little_endian();
                let mut names = Vec::new();
                for (suffix, bytes) in [("f", &forward[pad_f..]), ("r", &reverse[pad_r..])] {
                    let name = format!("pattern{n}{suffix}.dfa");
                    std::fs::write(out.join(&name), bytes).expect("write DFA");
                    names.push(format!(
                        "{{ static A: Aligned<[u8; {}]> = Aligned {{ align: [], bytes: *include_bytes!(concat!(env!(\"OUT_DIR\"), \"/{name}\")) }}; &A.bytes }}",
                        bytes.len()
                    ));
                }
                format!("Some(({}, {}))", names[0], names[1])
            }
            None => "None".to_string(),
        };
        // Case-blind needles where they are better than those of the
        // literals as written (a case-blind alternation of many words,
        // literals the extractor cut short); like needles that are not
        // the pattern's own prefixes, searched for only in the first texts.
        let exact = needles(&hir);
        let (needles, inner) = match (exact, folded_needles(&hir)) {
            (exact, Some(folded))
                if exact.as_ref().is_none_or(|e| {
                    let e: Vec<Vec<u8>> = e.iter().map(|(n, _)| n.clone()).collect();
                    better_needles(&folded, &e)
                }) =>
            {
                (folded.into_iter().map(|n| (n, true)).collect(), true)
            }
            (exact, _) => (
                exact.unwrap_or_default(),
                whole_prefixes(&hir).is_none() && held(&hir).is_some(),
            ),
        };
        let needles = if needles.is_empty() {
            "None".to_string()
        } else {
            let needles: Vec<String> = needles
                .iter()
                .map(|(bytes, ignore_case)| format!("needle(&{bytes:?}, {ignore_case})"))
                .collect();
            format!("Some(&[{}])", needles.join(", "))
        };
        writeln!(
            table,
            "    Precompiled {{ slot: {n}, pattern: {pattern:?}, dfa: {dfa}, prefixes: {}, inner: {}, min_len: {}, first: {} }},",
            needles,
            inner,
            // Every match is at least this long, in bytes.
            hir.properties().minimum_len().unwrap_or(0),
            match first {
                Some(set) => format!("Some({set:?})"),
                None => "None".to_string(),
            }
        )
        .expect("write to a String");
    }
    table.push_str("]\n");
    std::fs::write(out.join("patterns.rs"), table).expect("write patterns.rs");
    std::fs::write(out.join("pattern_count.rs"), format!("{}\n", seen.len()))
        .expect("write pattern_count.rs");
}

/// Literals one of which every match of the pattern holds, as needles:
/// `(bytes, ignore ASCII case)`, one needle with `true` standing for all
/// the ASCII case variants of a literal when all of them are literals.
/// `None` when the literals say nothing (an infinite set, an empty literal,
/// too many needles): the pattern is then loaded on its first search.
/// The literals are regex-syntax's prefixes of the whole pattern or, when
/// it has none, those of a part every match goes through ([`held`]).
fn needles(hir: &regex_syntax::hir::Hir) -> Option<Vec<(Vec<u8>, bool)>> {
    let literals = whole_prefixes(hir).or_else(|| held(hir))?;
    let literals: Vec<&[u8]> = literals.iter().map(|l| l.as_slice()).collect();
    let mut needles: Vec<(Vec<u8>, bool)> = Vec::new();
    let mut groups: Vec<(Vec<u8>, Vec<&[u8]>)> = Vec::new();
    for literal in &literals {
        let lower = literal.to_ascii_lowercase();
        match groups.iter_mut().find(|(l, _)| *l == lower) {
            Some((_, members)) => {
                if !members.contains(literal) {
                    members.push(literal)
                }
            }
            None => groups.push((lower, vec![literal])),
        }
    }
    for (lower, members) in groups {
        let letters = lower.iter().filter(|b| b.is_ascii_alphabetic()).count() as u32;
        if letters > 0 && letters < 16 && members.len() == 1usize << letters {
            needles.push((lower, true));
        } else {
            needles.extend(members.into_iter().map(|m| (m.to_vec(), false)));
        }
    }
    (needles.len() <= MAX_NEEDLES).then_some(needles)
}

/// Needles of the pattern read case-blind, or `None`: literals one of which
/// every match holds, chosen as [`held`] chooses, with the longest cut
/// first while there are more than [`MAX_FOLDED_NEEDLES`] of them. A
/// lowercase ASCII letter of a needle stands for itself and its capital
/// (`redact::holds_a_needle`), any other byte for itself. Derived from the
/// pattern as [`fold`] rewrites it, which leaves out `ſ` (U+017F) and `K`
/// (U+212A): the needles hold only for text without those two, which
/// `redact::holds_a_needle` does not filter.
fn folded_needles(hir: &regex_syntax::hir::Hir) -> Option<Vec<Vec<u8>>> {
    let folded = fold(hir);
    let literals = held_with(&folded, &|h| Some(fitted(whole_prefixes(h)?)))?;
    let needles = fitted(literals);
    (!needles.is_empty() && needles.len() <= MAX_FOLDED_NEEDLES).then_some(needles)
}

/// Case-blind needles a pattern may have at most: `redact::holds_a_needle`
/// looks for all of them in one pass over the text.
const MAX_FOLDED_NEEDLES: usize = 48;

/// Whether every text holding `haystack` holds the case-blind needle
/// `needle` (see [`folded_needles`]).
fn folded_contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| {
        w.iter()
            .zip(needle)
            .all(|(&h, &n)| h == n || (n.is_ascii_lowercase() && h == n.to_ascii_uppercase()))
    })
}

/// Case-blind needles without repeats and without one that holds another
/// (a text holding it holds the other), cut while there are more than
/// [`MAX_FOLDED_NEEDLES`]: the needles that start with the longest prefix
/// two of them share become that prefix (a text holding a needle holds its
/// prefix), so a needle with few variants keeps its length.
fn fitted(mut literals: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    loop {
        literals.sort();
        literals.dedup();
        let all = literals.clone();
        literals.retain(|n| !all.iter().any(|o| o != n && folded_contains(n, o)));
        if literals.len() <= MAX_FOLDED_NEEDLES {
            return literals;
        }
        let shared = literals
            .windows(2)
            .map(|w| w[0].iter().zip(&w[1]).take_while(|(a, b)| a == b).count())
            .max()
            .unwrap_or(0);
        if shared == 0 {
            // No two share a byte: the longest are cut by one.
            let longest = literals.iter().map(Vec::len).max().unwrap_or(0);
            if longest <= 1 {
                return literals;
            }
            literals
                .iter_mut()
                .filter(|l| l.len() == longest)
                .for_each(|l| {
                    l.pop();
                });
            continue;
        }
        let prefix = literals
            .windows(2)
            .find(|w| w[0].iter().zip(&w[1]).take_while(|(a, b)| a == b).count() == shared)
            .map(|w| w[0][..shared].to_vec())
            .unwrap_or_default();
        for l in &mut literals {
            if l.starts_with(&prefix) {
                l.truncate(shared);
            }
        }
    }
}

/// Whether needles `a` are better than `b`, as [`held`] scores them: the
/// shortest needle longest, then the fewest.
fn better_needles(a: &[Vec<u8>], b: &[Vec<u8>]) -> bool {
    let score = |n: &[Vec<u8>]| {
        let shortest = n.iter().map(Vec::len).min().unwrap_or(0);
        (shortest, std::cmp::Reverse(n.len()))
    };
    score(a) > score(b)
}

/// `hir` read case-blind, for [`folded_needles`]: in each class of at most
/// 16 chars (or bytes) `ſ` and `K` dropped and a letter with its capital
/// read as the lowercase letter (a needle's lowercase letter stands for
/// both), a class left with one char a literal; a larger class closed
/// under case; a repetition `x{n,m}` (`n` ≥ 1) as `x{n-1,m-1}x`, so a
/// literal that ends one `x` and starts what follows is seen. Every text
/// without `ſ` and `K` that holds a match of `hir` holds one of the result
/// (a lowercase letter matching its capital too).
fn fold(hir: &regex_syntax::hir::Hir) -> regex_syntax::hir::Hir {
    use regex_syntax::hir::{
        Capture, Class, ClassBytes, ClassBytesRange, ClassUnicode, ClassUnicodeRange, Hir, HirKind,
        Repetition,
    };
    match hir.kind() {
        HirKind::Literal(_) | HirKind::Empty | HirKind::Look(_) => hir.clone(),
        HirKind::Class(Class::Unicode(class)) => {
            let size: u32 = class
                .ranges()
                .iter()
                .map(|r| r.end() as u32 - r.start() as u32 + 1)
                .sum();
            if size > 16 {
                // Closed under case: holds the lowercase of each of its
                // chars.
                let mut closed = class.clone();
                closed.case_fold_simple();
                return Hir::class(Class::Unicode(closed));
            }
            let all: Vec<char> = class
                .ranges()
                .iter()
                .flat_map(|r| r.start()..=r.end())
                .filter(|&c| c != '\u{17F}' && c != '\u{212A}')
                .collect();
            let mut chars: Vec<char> = all
                .iter()
                .map(|&c| match c.to_ascii_lowercase() {
                    lower if lower != c && all.contains(&lower) => lower,
                    _ => c,
                })
                .collect();
            chars.sort();
            chars.dedup();
            match chars.as_slice() {
                [] => hir.clone(),
                [one] => Hir::literal(one.to_string().into_bytes()),
                _ => Hir::class(Class::Unicode(ClassUnicode::new(
                    chars.iter().map(|&c| ClassUnicodeRange::new(c, c)),
                ))),
            }
        }
        HirKind::Class(Class::Bytes(class)) => {
            let size: u32 = class
                .ranges()
                .iter()
                .map(|r| u32::from(r.end()) - u32::from(r.start()) + 1)
                .sum();
            if size > 16 {
                let mut closed = class.clone();
                closed.case_fold_simple();
                return Hir::class(Class::Bytes(closed));
            }
            let all: Vec<u8> = class
                .ranges()
                .iter()
                .flat_map(|r| r.start()..=r.end())
                .collect();
            let mut bytes: Vec<u8> = all
                .iter()
                .map(|&b| match b.to_ascii_lowercase() {
                    lower if lower != b && all.contains(&lower) => lower,
                    _ => b,
                })
                .collect();
            bytes.sort();
            bytes.dedup();
            match bytes.as_slice() {
                [one] => Hir::literal(vec![*one]),
                _ => Hir::class(Class::Bytes(ClassBytes::new(
                    bytes.iter().map(|&b| ClassBytesRange::new(b, b)),
                ))),
            }
        }
        HirKind::Repetition(rep) => {
            let sub = fold(&rep.sub);
            if rep.min == 0 || rep.max == Some(1) {
                return Hir::repetition(Repetition {
                    sub: Box::new(sub),
                    ..rep.clone()
                });
            }
            let rest = Hir::repetition(Repetition {
                min: rep.min - 1,
                max: rep.max.map(|m| m - 1),
                greedy: rep.greedy,
                sub: Box::new(sub.clone()),
            });
            Hir::concat(vec![rest, sub])
        }
        HirKind::Capture(capture) => Hir::capture(Capture {
            sub: Box::new(fold(&capture.sub)),
            ..capture.clone()
        }),
        HirKind::Concat(parts) => Hir::concat(parts.iter().map(fold).collect()),
        HirKind::Alternation(branches) => Hir::alternation(branches.iter().map(fold).collect()),
    }
}

/// The bytes a match of the forward DFA can start with, as a 256-bit set
/// (`[u64; 4]`, bit `b % 64` of word `b / 64`): every byte on which the
/// anchored start state, whatever byte precedes (or none), does not go to
/// the dead state. A match of at least one byte starts with one of them.
/// `None` when a start state cannot be computed.
fn first_bytes(dfa: &dense::DFA<Vec<u32>>) -> Option<[u64; 4]> {
    use regex_automata::dfa::Automaton;
    use regex_automata::util::start;
    let mut set = [0u64; 4];
    let behind = std::iter::once(None).chain((0..=255u8).map(Some));
    for look_behind in behind {
        let config = start::Config::new()
            .anchored(regex_automata::Anchored::Yes)
            .look_behind(look_behind);
        let start = dfa.start_state(&config).ok()?;
        for b in 0..=255u8 {
            if !dfa.is_dead_state(dfa.next_state(start, b)) {
                set[usize::from(b / 64)] |= 1 << (b % 64);
            }
        }
    }
    Some(set)
}

/// The prefix literals of the whole pattern, as [`reduce`] leaves them;
/// `None` unless they are a finite set of non-empty literals.
fn whole_prefixes(hir: &regex_syntax::hir::Hir) -> Option<Vec<Vec<u8>>> {
    let seq = regex_syntax::hir::literal::Extractor::new().extract(hir);
    let literals: Vec<Vec<u8>> = seq
        .literals()?
        .iter()
        .map(|l| l.as_bytes().to_vec())
        .collect();
    if literals.is_empty() || literals.iter().any(|l| l.is_empty()) {
        return None;
    }
    Some(reduce(literals))
}

/// Literals sorted, without repeats, and without one that another starts
/// (a text holding it holds the shorter one).
fn reduce(mut literals: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    literals.sort();
    literals.dedup();
    let all = literals.clone();
    literals.retain(|l| !all.iter().any(|o| o != l && l.starts_with(o)));
    literals
}

/// Literals one of which every match of `hir` holds (somewhere, not only at
/// its start): the prefix literals of `hir`; of an alternation, the union
/// of its branches' (each must have some); of a concatenation, the best of
/// its tails' prefixes (a match of `a b c` holds a match of `b c`, which
/// starts with one of that tail's prefixes) and its parts' own. Best: the
/// shortest literal longest, then the fewest; each set as [`reduce`]
/// leaves it.
fn held(hir: &regex_syntax::hir::Hir) -> Option<Vec<Vec<u8>>> {
    held_with(hir, &whole_prefixes)
}

/// [`held`], with `prefixes` giving the prefix literals of a part.
fn held_with(
    hir: &regex_syntax::hir::Hir,
    prefixes: &dyn Fn(&regex_syntax::hir::Hir) -> Option<Vec<Vec<u8>>>,
) -> Option<Vec<Vec<u8>>> {
    use regex_syntax::hir::{Hir, HirKind};
    let held = |hir: &Hir| held_with(hir, prefixes);
    let whole_prefixes = prefixes;
    fn score(literals: &[Vec<u8>]) -> (usize, std::cmp::Reverse<usize>) {
        let shortest = literals.iter().map(Vec::len).min().unwrap_or(0);
        (shortest, std::cmp::Reverse(literals.len()))
    }
    let better = |a: Option<Vec<Vec<u8>>>, b: Option<Vec<Vec<u8>>>| match (a, b) {
        (Some(a), Some(b)) => Some(if score(&b) > score(&a) { b } else { a }),
        (a, b) => a.or(b),
    };
    let mut best = whole_prefixes(hir);
    match hir.kind() {
        HirKind::Capture(capture) => best = better(best, held(&capture.sub)),
        HirKind::Alternation(branches) => {
            let mut union = Vec::new();
            for branch in branches {
                match held(branch) {
                    Some(literals) => union.extend(literals),
                    None => return best,
                }
            }
            best = better(best, Some(reduce(union)));
        }
        HirKind::Concat(parts) => {
            for at in 1..parts.len() {
                best = better(best, whole_prefixes(&Hir::concat(parts[at..].to_vec())));
            }
            for part in parts {
                best = better(best, held(part));
            }
        }
        HirKind::Repetition(rep) if rep.min > 0 => best = better(best, held(&rep.sub)),
        _ => {}
    }
    best
}

/// The raw strings (`` `...` ``) of a Rego source, outside comments and
/// quoted strings.
fn raw_strings(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = source.chars();
    while let Some(c) = chars.next() {
        match c {
            '#' => {
                chars.by_ref().find(|&c| c == '\n');
            }
            '"' => {
                let mut escaped = false;
                chars.by_ref().find(|&c| {
                    let end = c == '"' && !escaped;
                    escaped = c == '\\' && !escaped;
                    end
                });
            }
            '`' => out.push(chars.by_ref().take_while(|&c| c != '`').collect()),
            _ => {}
        }
    }
    out
}

#[cfg(feature = "tokens")]
#[path = "src/tokens/o200k/layout.rs"]
#[allow(dead_code, reason = "LOOKAHEAD is the splitter's, at run time")]
mod layout;

/// The o200k_base tables of `src/tokens/o200k.rs`, in the layout of
/// `src/tokens/o200k/layout.rs`.
#[cfg(feature = "tokens")]
mod o200k {
    use std::collections::{HashMap, VecDeque};
    use std::path::Path;

    use super::layout::{pair_slot, BASE_SHIFT, CHILD, NONE, PAIR_SLOTS};

    /// Writes the tables to `out`. The vocabulary is bpe-openai's (its
    /// public `token_bytes`); what `bpe::BytePairEncoding::from_dictionary`
    /// derives from it (each token's next prefix token, the pair it was
    /// merged from) is derived here the same way, and
    /// `tokens::o200k`'s tests compare the result with bpe's own tables.
    pub fn tables(out: &Path) {
        let bpe = &bpe_openai::o200k_base().bpe;
        let tokens: Vec<&[u8]> = (0..bpe.num_tokens() as u32)
            .map(|id| bpe.token_bytes(id))
            .collect();
        let trie = Trie::new(&tokens);
        for byte in 0..=255u8 {
            assert!(trie.exact(&[byte]).is_some(), "byte {byte} is a token");
        }
        let lens: Vec<u8> = tokens
            .iter()
            .map(|t| u8::try_from(t.len()).expect("a token of at most 255 bytes"))
            .collect();
        // from_dictionary: the longest token that is a proper prefix.
        let next_prefix: Vec<u32> = tokens
            .iter()
            .map(|t| trie.longest(&t[..t.len() - 1]))
            .collect();
        // from_dictionary: the first split, longest left part first, into
        // two earlier tokens that BPE would itself keep apart.
        let mut split: Vec<(u32, u32)> = Vec::with_capacity(tokens.len());
        let mut pairs: HashMap<(u32, u32), u32> = HashMap::new();
        for (id, token) in tokens.iter().enumerate() {
            let id = id as u32;
            let mut left = next_prefix[id as usize];
            while left != NONE {
                let rest = &token[tokens[left as usize].len()..];
                if let Some(right) = trie.exact(rest) {
                    if left < id && right < id && valid_pair(&pairs, &split, left, right) {
                        pairs.insert((left, right), id);
                        split.push((left, right));
                        break;
                    }
                }
                left = next_prefix[left as usize];
            }
            if left == NONE {
                split.push((id, id));
            }
        }
        let mut slots = vec![NONE; PAIR_SLOTS];
        for (id, &(left, right)) in split.iter().enumerate() {
            if left == id as u32 {
                continue;
            }
            let mut slot = pair_slot(left, right);
            while slots[slot] != NONE {
                slot = (slot + 1) % PAIR_SLOTS;
            }
            slots[slot] = id as u32;
        }
        let words = |words: &mut dyn Iterator<Item = u32>| -> Vec<u8> {
            words.flat_map(u32::to_le_bytes).collect()
        };
        let write = |name: &str, bytes: &[u8]| {
            std::fs::write(out.join(name), bytes).expect("write an o200k table")
        };
        write("o200k_trie.bin", &trie.double_array());
        write("o200k_lens.bin", &lens);
        write(
            "o200k_next_prefix.bin",
            &words(&mut next_prefix.iter().copied()),
        );
        write(
            "o200k_split.bin",
            &words(&mut split.iter().flat_map(|&(l, r)| [l, r])),
        );
        write("o200k_pairs.bin", &words(&mut slots.into_iter()));
        pretokenizer(out);
    }

    /// The pre-tokenizer's patterns as one dense DFA (anchored starts only:
    /// each piece is matched where the last ended), and `o200k_dfa.rs`,
    /// the expression of its aligned bytes. The build fails if they do not
    /// determinize within the limits: the DFA is the only pre-tokenizer.
    fn pretokenizer(out: &Path) {
        use regex_automata::dfa::{dense, StartKind};
        let dfa = dense::Builder::new()
            .configure(
                dense::Config::new()
                    .start_kind(StartKind::Anchored)
                    .minimize(true)
                    .determinize_size_limit(Some(256 << 20))
                    .dfa_size_limit(Some(16 << 20)),
            )
            .build_many(&super::layout::PATTERNS);
        let dfa = dfa.expect("the o200k pre-tokenizer determinizes");
        let (bytes, pad) = dfa.to_bytes_little_endian();
        let bytes = &bytes[pad..];
        std::fs::write(out.join("o200k_pretokenizer.dfa"), bytes).expect("write the DFA");
        let expression = format!(
            "{{ static A: Aligned<[u8; {}]> = Aligned {{ align: [], bytes: *include_bytes!(concat!(env!(\"OUT_DIR\"), \"/o200k_pretokenizer.dfa\")) }}; &A.bytes }}",
            bytes.len()
        );
        std::fs::write(out.join("o200k_dfa.rs"), expression).expect("write o200k_dfa.rs");
    }

    /// bpe's `is_valid_token_pair`: whether BPE, merging by rank, keeps
    /// `left` and `right` apart where they meet.
    fn valid_pair(
        pairs: &HashMap<(u32, u32), u32>,
        split: &[(u32, u32)],
        mut left: u32,
        mut right: u32,
    ) -> bool {
        let mut limit = u32::MAX;
        loop {
            if let Some(&combined) = pairs.get(&(left, right)) {
                if combined < limit {
                    return false;
                }
            }
            if left > right {
                limit = left;
                left = split[left as usize].1;
                if left == limit {
                    limit = right + 1;
                    right = split[right as usize].0;
                    if right + 1 == limit {
                        return true;
                    }
                }
            } else {
                limit = right + 1;
                right = split[right as usize].0;
                if right + 1 == limit {
                    limit = left;
                    left = split[left as usize].1;
                    if left == limit {
                        return true;
                    }
                }
            }
        }
    }

    /// A byte trie of the tokens, one node a distinct prefix.
    struct Trie {
        /// Each node's children (by byte, ascending) and token.
        nodes: Vec<(Vec<(u8, u32)>, u32)>,
    }

    impl Trie {
        fn new(tokens: &[&[u8]]) -> Self {
            let mut nodes = vec![(Vec::new(), NONE)];
            for (id, token) in tokens.iter().enumerate() {
                let mut node = 0;
                for &byte in *token {
                    node = match nodes[node].0.iter().find(|&&(b, _)| b == byte) {
                        Some(&(_, child)) => child as usize,
                        None => {
                            let child = nodes.len();
                            nodes.push((Vec::new(), NONE));
                            nodes[node].0.push((byte, child as u32));
                            child
                        }
                    };
                }
                assert_eq!(nodes[node].1, NONE, "token {id} is unique");
                nodes[node].1 = id as u32;
            }
            for node in &mut nodes {
                node.0.sort_unstable();
            }
            Trie { nodes }
        }

        fn child(&self, node: usize, byte: u8) -> Option<usize> {
            let children = &self.nodes[node].0;
            let at = children.binary_search_by_key(&byte, |&(b, _)| b).ok()?;
            Some(children[at].1 as usize)
        }

        /// The token `bytes` are, if any.
        fn exact(&self, bytes: &[u8]) -> Option<u32> {
            let mut node = 0;
            for &byte in bytes {
                node = self.child(node, byte)?;
            }
            Some(self.nodes[node].1).filter(|&t| t != NONE)
        }

        /// The longest token that is a prefix of `bytes`, or [`NONE`].
        fn longest(&self, bytes: &[u8]) -> u32 {
            let (mut node, mut best) = (0, NONE);
            for &byte in bytes {
                let Some(child) = self.child(node, byte) else {
                    break;
                };
                node = child;
                if self.nodes[node].1 != NONE {
                    best = self.nodes[node].1;
                }
            }
            best
        }

        /// The trie as a double array (layout.rs), breadth first: each
        /// node's children placed at the first free slots (a linked list
        /// of them) that fit them under a base no other node has, else in
        /// a fresh block of 256 past the end.
        fn double_array(&self) -> Vec<u8> {
            const END: usize = usize::MAX;
            /// Free slots tried before a fresh block.
            const TRIES: usize = 4096;
            // Slots 1..256 stay empty: a leaf's base is 0, so a step from a
            // leaf lands there (or on the root, which has no flag) and stops.
            let mut units = vec![0u32; 256];
            let mut values = vec![NONE; 256];
            let mut taken = vec![true; 256];
            let mut bases = vec![false; 256];
            // The free slots, a doubly linked list in slot order.
            let (mut next, mut prev) = (vec![END; 256], vec![END; 256]);
            let (mut head, mut tail) = (END, END);
            let mut block_bases: Vec<u16> = Vec::new();
            let mut slot_of = vec![0u32; self.nodes.len()];
            let mut queue = VecDeque::from([0usize]);
            while let Some(node) = queue.pop_front() {
                let children = &self.nodes[node].0;
                let Some(&(first, _)) = children.first() else {
                    continue;
                };
                let fits = |base: usize, taken: &[bool], bases: &[bool]| {
                    !bases.get(base).copied().unwrap_or(false)
                        && children.iter().all(|&(b, _)| {
                            !taken.get(base ^ usize::from(b)).copied().unwrap_or(false)
                        })
                };
                let mut base = None;
                let mut slot = head;
                for _ in 0..TRIES {
                    if slot == END {
                        break;
                    }
                    let candidate = slot ^ usize::from(first);
                    if fits(candidate, &taken, &bases) {
                        base = Some(candidate);
                        break;
                    }
                    slot = next[slot];
                }
                let base = base.unwrap_or(taken.len());
                let end = (base | 255) + 1;
                for fresh in taken.len()..end {
                    taken.push(false);
                    units.push(0);
                    values.push(NONE);
                    bases.push(false);
                    next.push(END);
                    prev.push(tail);
                    match tail {
                        END => head = fresh,
                        t => next[t] = fresh,
                    }
                    tail = fresh;
                }
                bases[base] = true;
                assert!(base < 1 << (32 - BASE_SHIFT), "the double array fits");
                let at = slot_of[node] as usize;
                units[at] |= (base as u32) << BASE_SHIFT;
                let mut take = |slot: usize, taken: &mut Vec<bool>| {
                    taken[slot] = true;
                    match prev[slot] {
                        END => head = next[slot],
                        p => next[p] = next[slot],
                    }
                    match next[slot] {
                        END => tail = prev[slot],
                        n => prev[n] = prev[slot],
                    }
                };
                // A block whose 256 bases are all used can take no child in
                // its free slots: they leave the list (and stay empty).
                let block = base / 256;
                if block_bases.len() <= block {
                    block_bases.resize(block + 1, 0);
                }
                block_bases[block] += 1;
                if block_bases[block] == 256 {
                    for slot in block * 256..(block + 1) * 256 {
                        if !taken[slot] {
                            take(slot, &mut taken);
                        }
                    }
                }
                for &(byte, child) in children {
                    let slot = base ^ usize::from(byte);
                    take(slot, &mut taken);
                    units[slot] = CHILD | u32::from(byte);
                    values[slot] = self.nodes[child as usize].1;
                    slot_of[child as usize] = slot as u32;
                    queue.push_back(child as usize);
                }
            }
            units
                .iter()
                .zip(&values)
                .flat_map(|(unit, value)| {
                    let mut record = [0; 8];
                    record[..4].copy_from_slice(&unit.to_le_bytes());
                    record[4..].copy_from_slice(&value.to_le_bytes());
                    record
                })
                .collect()
        }
    }
}
