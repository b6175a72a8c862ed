//! Measuring output against a budget: bytes, or o200k_base tokens counted
//! offline (cargo feature `tokens`, on by default) over tables `build.rs`
//! precomputes from bpe-openai's vocabulary ([`o200k`]).
//!
//! A token count is exact (bpe-openai's, which is tiktoken's). A text cut
//! where [`cut_between`] allows counts as the sum of its parts: the fill
//! counts each element's rendering once and adds.

#[cfg(feature = "tokens")]
mod o200k;

use crate::error::{Error, Result};
use crate::policy::Budget;

/// Whether `text` is within `budget`, and its size in the budget's unit
/// when measured. Tokens are not counted when the bytes alone show the
/// text fits (a token is at least a byte), and the count stops past twice
/// the limit: a probe a little over still says by how much, and a big
/// rendering (a 50 MB image) is not counted to the end.
pub fn fit(text: &str, budget: Budget) -> Result<(bool, Option<usize>)> {
    fit_by(text.len(), budget, |limit| count_till(text, limit))
}

/// The size of `text` in the budget's unit.
pub fn measure(text: &str, budget: Budget) -> Result<usize> {
    match budget {
        Budget::Bytes(_) => Ok(text.len()),
        Budget::Tokens(_) => Ok(count_till(text, usize::MAX)?.expect("a count without a limit")),
    }
}

/// o200k_base tokens in `text`, or `None` past `limit`;
/// [`Error::TokensUnavailable`] when the pre-tokenizer cannot cut it, or
/// without the `tokens` feature. A text cut only at places [`cut_between`]
/// allows counts as the sum of its parts' counts, exactly: a caller that
/// keeps a text's parts (the fitter's per-element renderings) counts it
/// from them.
#[cfg(feature = "tokens")]
pub fn count_till(text: &str, limit: usize) -> Result<Option<usize>> {
    // o200k does not normalize (no NFC), so the text is counted as is.
    let mut total = 0;
    for piece in o200k::split(text) {
        let piece = piece.map_err(|o200k::Unavailable| Error::TokensUnavailable)?;
        // Stops early inside one huge piece, too.
        let Some(n) = o200k::count_till_limit(piece.as_bytes(), limit - total) else {
            return Ok(None);
        };
        total += n;
        if total > limit {
            return Ok(None);
        }
    }
    Ok(Some(total))
}

/// Without the `tokens` feature, token budgets are an error.
#[cfg(not(feature = "tokens"))]
pub fn count_till(_: &str, _: usize) -> Result<Option<usize>> {
    Err(Error::TokensUnavailable)
}

/// [`fit`] for a text of `bytes` bytes whose tokens `count` counts
/// (`None` past the limit it is given): the same measures, for a text kept
/// in parts.
pub fn fit_by(
    bytes: usize,
    budget: Budget,
    count: impl FnOnce(usize) -> Result<Option<usize>>,
) -> Result<(bool, Option<usize>)> {
    let limit = limit(budget);
    match budget {
        Budget::Bytes(_) => Ok((bytes <= limit, Some(bytes))),
        Budget::Tokens(_) if bytes <= limit => Ok((true, None)),
        Budget::Tokens(_) => {
            let size = count(limit.saturating_mul(2))?;
            Ok((size.is_some_and(|n| n <= limit), size))
        }
    }
}

/// Whether a text may be cut between a byte `before` and a byte `after`
/// with its o200k count the sum of both sides': `before` an ASCII letter
/// or digit, `after` an ASCII byte other than a letter, digit or `'`.
///
/// o200k_base's pre-tokenizer (tiktoken's pattern, as bpe-openai runs it:
/// pieces found one after the other, each anchored where the last ended,
/// and counted alone) never puts in one piece an ASCII letter or digit at
/// `p - 1` and, at `p`, a character that is neither a letter (`\p{L}`), a
/// number (`\p{N}`), a mark (`\p{M}`) nor `'`:
/// - the two letter patterns hold at most one leading character that is
///   neither letter nor number, then letters and marks, then an optional
///   contraction (`'s`, `'ll`, ...): no digit, and after a letter comes a
///   letter, a mark or the contraction's `'`;
/// - `\p{N}{1,3}` holds numbers only;
/// - the punctuation pattern (` ?[^\s\p{L}\p{N}]+[\r\n/]*`) and the
///   whitespace ones hold no letter or number.
///
/// So a piece ends at every such `p`. The pieces before `p` are also those
/// of `text[..p]` alone: the only assertion in the pattern is the `$` of
/// `\s+$`, which needs whitespace before the end, and the emulated
/// look-ahead of `\s+\s` looks at whitespace only; each match found in
/// `text` ends by `p`, so it is still the first-priority match of the
/// shorter text. Nothing looks behind, so the pieces from `p` on are those
/// of `text[p..]`. And o200k does not normalize (no NFC). Each side is
/// therefore counted as a text of its own, and the sum is exact. Only
/// bytes are checked: no ASCII byte is a mark.
pub fn cut_between(before: u8, after: u8) -> bool {
    CLASSES[before as usize] == ENDS && CLASSES[after as usize] == BEGINS
}

/// The first and the last place inside `text` (neither end) where it may
/// be cut ([`cut_between`]), if any.
pub fn outer_cuts(text: &str) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let cut = |p: &usize| cut_between(bytes[p - 1], bytes[*p]);
    let first = (1..bytes.len()).find(cut)?;
    let last = (first..bytes.len()).rev().find(cut)?;
    Some((first, last))
}

/// Loads o200k_base's pre-tokenizer now (its DFA validated, ~5 M
/// instructions, once per process; the vocabulary's tables are
/// precomputed and need no loading) rather than on the first token count.
/// A no-op without the `tokens` feature.
pub fn warm_up() {
    #[cfg(feature = "tokens")]
    o200k::warm_up();
}

/// o200k_base tokens in `text` (0 where the pre-tokenizer cannot cut
/// it), for the benches (`internals`).
#[cfg(all(feature = "tokens", feature = "internals"))]
pub fn count_o200k(text: &str) -> usize {
    count_till(text, usize::MAX).ok().flatten().unwrap_or(0)
}

/// The unit's name, for messages.
pub fn unit(budget: Budget) -> &'static str {
    match budget {
        Budget::Bytes(_) => "bytes",
        Budget::Tokens(_) => "tokens",
    }
}

/// The budget's limit.
pub fn limit(budget: Budget) -> usize {
    match budget {
        Budget::Bytes(n) | Budget::Tokens(n) => n,
    }
}

/// Byte classes for [`cut_between`]: a text may be cut after an ASCII
/// letter or digit, before any other ASCII byte but `'`.
const ENDS: u8 = 1;
const BEGINS: u8 = 2;
static CLASSES: [u8; 256] = {
    let mut classes = [0; 256];
    let mut b = 0;
    while b < 128 {
        classes[b] = match b as u8 {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' => ENDS,
            b'\'' => 0,
            _ => BEGINS,
        };
        b += 1;
    }
    classes
};

#[cfg(test)]
mod tests {
    // Token counts need the vocabulary.
    #[cfg(feature = "tokens")]
    pub(super) mod o200k {
        use proptest::prelude::*;

        use super::super::*;
        use crate::{Format, Gate, Request};

        /// Every position where [`cut_between`] allows a cut of `text`.
        fn cuts(text: &str) -> Vec<usize> {
            let bytes = text.as_bytes();
            (1..bytes.len())
                .filter(|&p| {
                    CLASSES[bytes[p - 1] as usize] == ENDS && CLASSES[bytes[p] as usize] == BEGINS
                })
                .collect()
        }

        /// Where o200k's pre-tokenizer ends a piece of `text`.
        fn piece_ends(text: &str) -> Vec<usize> {
            let mut end = 0;
            bpe_openai::o200k_base()
                .split(text)
                .map(|piece| {
                    end += piece.len();
                    end
                })
                .collect()
        }

        fn exact(text: &str) -> usize {
            bpe_openai::o200k_base().count(text)
        }

        /// The argument of [`cut_between`], checked on `text`: o200k ends a
        /// piece at every cut; and [`count_till`] counts as the tokenizer does, with
        /// the early stop at every limit.
        fn assert_exact(text: &str) {
            let ends = piece_ends(text);
            for p in cuts(text) {
                assert!(
                    ends.binary_search(&p).is_ok(),
                    "o200k does not end a piece at {p} in {text:?}: {:?}",
                    bpe_openai::o200k_base().split(text).collect::<Vec<_>>()
                );
            }
            let n = exact(text);
            assert_eq!(count_till(text, usize::MAX).unwrap(), Some(n), "{text:?}");
            for limit in [0, n / 2, n.saturating_sub(1), n, n + 1] {
                let expected = (n <= limit).then_some(n);
                assert_eq!(
                    count_till(text, limit).unwrap(),
                    expected,
                    "{text:?} at {limit}"
                );
            }
        }

        #[test]
        fn o200k_does_not_normalize() {
            // Decomposed and composed é, a compatibility ligature: NFC would
            // change the first, NFKC the last; o200k keeps both as they are.
            for text in ["e\u{301}", "\u{fb01}", "A\u{30a}ngstro\u{308}m"] {
                assert_eq!(bpe_openai::o200k_base().normalize(text).as_str(), text);
            }
        }

        #[test]
        fn cuts_after_an_ascii_letter_or_digit_before_punctuation_space_or_control() {
            for (text, at) in [
                ("word next", vec![4]),
                ("word,next", vec![4]),
                ("word\nnext", vec![4]),
                ("word\r\nnext", vec![4]),
                ("word\tnext", vec![4]),
                ("a/b/c", vec![1, 3]),
                ("x\"", vec![1]),
                ("{\"id\":\"n19\"}", vec![4, 10]),
                ("4111 1111", vec![4]),
                ("12345.678", vec![5]),
                ("9)", vec![1]),
                ("a\u{0}b", vec![1]),
                ("end ", vec![3]),
                ("end  \n", vec![3]),
            ] {
                assert_eq!(cuts(text), at, "{text:?}");
                assert_exact(text);
            }
        }

        #[test]
        fn does_not_cut_inside_words_numbers_contractions_or_before_marks() {
            for text in [
                "words",
                "don't",
                "it's",
                "WE'LL",
                "rock'n'roll",
                "e\u{301}t\u{e9}",
                "a\u{301}",
                "a\u{20dd}",
                "x\u{5bf}",
                "naïve",
                "abc中文",
                "中文abc",
                "a😀",
                "ab\u{a0}cd",
                "ab\u{2019}s",
                "1٣",
                "2²",
                "4x4",
                "x4",
                "é,",
                "٣,",
                "a\u{301},",
                "' ",
                "'s",
            ] {
                assert_eq!(cuts(text), Vec::<usize>::new(), "{text:?}");
                assert_exact(text);
            }
        }

        /// Texts rich in what the argument of [`cut_between`] depends on.
        fn boundary_text() -> impl Strategy<Value = String> {
            const ATOMS: &[&str] = &[
                "a", "Z", "q", "word", "Title", "ALL", "7", "42", "1234567", " ", "  ", "\n",
                "\r\n", "\t", "/", "//", "'", "'s", "'LL", "'d", "\"", ",", ".", ":", "{", "}",
                "[", "]", "-", "_", "$", "é", "É", "ß", "ſ", "\u{301}", "\u{308}", "\u{20dd}",
                "\u{5bf}", "中文", "の", "😀", "👍🏽", "\u{200d}", "\u{a0}", "\u{2019}", "\u{3000}",
                "٣", "²", "Ⅻ", "\u{0}", "\u{7f}", "\u{85}", "\u{2028}",
            ];
            prop::collection::vec(prop::sample::select(ATOMS), 0..48)
                .prop_map(|atoms| atoms.concat())
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2000))]

            /// The count is o200k's, exactly, on any text.
            #[test]
            fn counts_any_text_exactly(texts in prop::collection::vec(boundary_text(), 1..4)) {
                for text in &texts {
                    assert_exact(text);
                }
                assert_exact(&texts.concat());
            }

            /// A text cut at any of the places [`cut_between`] allows counts
            /// as the sum of its parts, exactly; [`outer_cuts`] finds the
            /// first and last of them.
            #[test]
            fn counts_a_text_in_parts_cut_anywhere_allowed(
                texts in prop::collection::vec(boundary_text(), 1..6),
                keep in prop::collection::vec(any::<bool>(), 64),
            ) {
                let text = texts.concat();
                let allowed: Vec<usize> = (1..text.len())
                    .filter(|&p| cut_between(text.as_bytes()[p - 1], text.as_bytes()[p]))
                    .collect();
                assert_eq!(allowed, cuts(&text));
                assert_eq!(
                    outer_cuts(&text),
                    allowed.first().zip(allowed.last()).map(|(&f, &l)| (f, l))
                );
                let mut at = 0;
                let mut sum = 0;
                for (i, &p) in allowed.iter().enumerate() {
                    if keep[i % keep.len()] {
                        sum += count_till(&text[at..p], usize::MAX).unwrap().unwrap();
                        at = p;
                    }
                }
                sum += count_till(&text[at..], usize::MAX).unwrap().unwrap();
                assert_eq!(sum, exact(&text), "{text:?}");
            }
        }

        /// The real trees of `tests/fixtures/answers/`, each rendered whole in
        /// JSON and in outline.
        pub(in crate::tokens) fn renderings() -> Vec<(String, String)> {
            let gate = Gate::embedded_default().unwrap();
            let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/answers");
            let mut files: Vec<_> = std::fs::read_dir(dir)
                .unwrap()
                .map(|entry| entry.unwrap().path())
                .collect();
            files.sort();
            let mut out = Vec::new();
            for file in files {
                let bytes = std::fs::read(&file).unwrap();
                for format in [Format::Json, Format::Outline] {
                    let request = Request::new("app")
                        .format(format)
                        .budget(Budget::Bytes(1 << 30));
                    let trimmed = gate.trim_bytes(&bytes, &request).unwrap();
                    out.push((format!("{} {format:?}", file.display()), trimmed.rendered));
                }
            }
            out
        }

        #[test]
        fn counts_the_real_trees_renderings_and_slices_of_them_exactly() {
            for (name, text) in renderings() {
                assert!(text.len() > 1000, "{name}");
                assert_exact(&text);
                // Slices at every 97th char boundary: texts that begin and end
                // anywhere.
                let bounds: Vec<usize> = (0..=text.len())
                    .filter(|&i| text.is_char_boundary(i))
                    .collect();
                for (i, &from) in bounds.iter().enumerate().step_by(97) {
                    let to = bounds[(i * 7919 + 13) % bounds.len()];
                    let (from, to) = (from.min(to), from.max(to));
                    let slice = &text[from..to];
                    let n = exact(slice);
                    assert_eq!(
                        count_till(slice, usize::MAX).unwrap(),
                        Some(n),
                        "{name} {from}..{to}"
                    );
                }
            }
        }

        #[test]
        fn a_trim_reports_the_exact_tokens_of_its_output() {
            let gate = Gate::embedded_default().unwrap();
            for file in [
                "mac-apg-data-grids",
                "atspi-input-types",
                "screen2ax-chats-window",
            ] {
                let path = format!(
                    "{}/tests/fixtures/answers/{file}.json",
                    env!("CARGO_MANIFEST_DIR")
                );
                let bytes = std::fs::read(path).unwrap();
                for (format, limit) in [
                    (Format::Json, 4000),
                    (Format::Outline, 700),
                    (Format::Json, 300),
                ] {
                    let request = Request::new("app")
                        .format(format)
                        .budget(Budget::Tokens(limit));
                    let trimmed = gate.trim_bytes(&bytes, &request).unwrap();
                    let tokens = exact(&trimmed.rendered);
                    let used: Vec<_> = trimmed
                        .report
                        .budgets
                        .iter()
                        .map(|b| (b.unit, b.used))
                        .collect();
                    assert!(
                        used.contains(&("tokens", tokens)),
                        "{file} {format:?} {limit}: {used:?}, {tokens}"
                    );
                    assert!(tokens <= limit, "{file} {format:?} {limit}: {tokens}");
                }
            }
        }

        #[test]
        fn counts_o200k_tokens_piece_by_piece_and_stops_early() {
            let text = "Hello world, «ünïcödé» \"quoted\"\n\tline 4111 1111 ".repeat(50);
            let exact = bpe_openai::o200k_base().count(text.as_str());
            assert_eq!(measure("Hello world", Budget::Tokens(1)).unwrap(), 2);
            assert_eq!(measure(&text, Budget::Tokens(1)).unwrap(), exact);
            let fit_at = |limit| fit(&text, Budget::Tokens(limit)).unwrap();
            assert_eq!(fit_at(exact), (true, Some(exact)));
            assert_eq!(fit_at(exact - 1), (false, Some(exact)));
            assert_eq!(fit_at(exact / 3), (false, None));
            assert_eq!(fit("short", Budget::Tokens(5)).unwrap(), (true, None));
        }
    }
}
