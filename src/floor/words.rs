//! How the floor reads a word in a text: as a person reads it, whatever the
//! case, the separators, invisible characters, fullwidth forms and letters
//! of other scripts that look Latin.

/// `s` as the floor compares words in other letters: decomposed (NFD),
/// then read as [`fold_words`] reads (lowercased, letters and digits only,
/// combining marks and invisible chars dropped), so accents, viramas and
/// vowel signs do not decide a match and `sécurisé` reads `securise`.
pub(super) fn plain(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let decomposed: String = s.nfd().collect();
    let mut folded = (Vec::with_capacity(decomposed.len()), Vec::new());
    fold_words(&decomposed, &mut folded);
    String::from_utf8(folded.0).unwrap_or_default()
}

/// Words to find in a text ([`reads_words`]), each with the letters it
/// holds, computed once.
pub(super) struct Vocabulary<const A: usize, const W: usize> {
    pub(super) anywhere: [&'static [u8]; A],
    pub(super) whole: [&'static [u8]; W],
    anywhere_letters: [u32; A],
    whole_letters: [u32; W],
}

impl<const A: usize, const W: usize> Vocabulary<A, W> {
    /// Words (lowercase ASCII) found anywhere, and words found whole.
    pub(super) const fn new(anywhere: [&'static [u8]; A], whole: [&'static [u8]; W]) -> Self {
        let mut anywhere_letters = [0; A];
        let mut whole_letters = [0; W];
        let mut i = 0;
        while i < A {
            anywhere_letters[i] = letters(anywhere[i]);
            i += 1;
        }
        let mut i = 0;
        while i < W {
            whole_letters[i] = letters(whole[i]);
            i += 1;
        }
        Vocabulary {
            anywhere,
            whole,
            anywhere_letters,
            whole_letters,
        }
    }
}

/// The ASCII letters `text` holds, in any case, as bits.
const fn letters(text: &[u8]) -> u32 {
    let mut seen = 0;
    let mut i = 0;
    while i < text.len() {
        let b = (text[i] | 0x20).wrapping_sub(b'a');
        if b < 26 {
            seen |= 1 << b;
        }
        i += 1;
    }
    seen
}

/// Whether `s` holds one of the vocabulary's words anywhere, or one of
/// its whole words as a whole word (see [`SECRET_WHOLE`] for where words
/// end), read so: letters and digits only (other chars end a word;
/// invisible format chars and combining marks are not read at all, so
/// `P\u{AD}IN` is `PIN`), lowercased, fullwidth forms as ASCII, the long s
/// as `s`, the Kelvin sign as `k`, and the words that look Latin read as
/// Latin ([`crate::lookalike::skeleton`]: `Раѕѕword`, not `ПОТРЕБИТЕЛ`).
pub(super) fn reads_words<const A: usize, const W: usize>(
    s: &str,
    words: &Vocabulary<A, W>,
) -> bool {
    // Asked for every element: a short ASCII subrole (nearly all of them)
    // folds on the stack; the same folding as below.
    if s.len() <= 64 && s.is_ascii() {
        // A text that reads with a word holds each of its letters, in some
        // case: most (`pane`, `value`) are turned away by the letters they
        // hold, without folding.
        let held = letters(s.as_bytes());
        if !words
            .anywhere_letters
            .iter()
            .chain(&words.whole_letters)
            .any(|w| w & !held == 0)
        {
            return false;
        }
        let mut folded = Folded {
            bytes: [0u8; 64],
            len: 0,
            ends: 0,
        };
        fold_words(s, &mut folded);
        return folded.holds(words, held);
    }
    let skeleton = crate::lookalike::skeleton(s);
    let s = skeleton.as_deref().unwrap_or(s);
    let mut folded = (Vec::with_capacity(s.len()), Vec::with_capacity(s.len() + 1));
    fold_words(s, &mut folded);
    let held = letters(folded.bytes());
    folded.holds(words, held)
}

/// The words of `list` whose letters (`masks`) are all `held`.
fn candidates<'a>(
    list: &'a [&'static [u8]],
    masks: &'a [u32],
    held: u32,
) -> impl Iterator<Item = &'static [u8]> + 'a {
    list.iter()
        .zip(masks)
        .filter(move |(_, mask)| *mask & !held == 0)
        .map(|(w, _)| *w)
}

/// Where [`fold_words`] writes: the folded bytes and where words end.
pub(super) trait Words {
    fn push(&mut self, byte: u8);
    fn len(&self) -> usize;
    /// Marks a word's end at byte `at` of the folded text.
    fn end_at(&mut self, at: usize);
    fn bytes(&self) -> &[u8];
    fn ends_at(&self, at: usize) -> bool;

    /// Whether the folded text holds a word of `words` (only those whose
    /// letters are all `held` can be in it).
    fn holds<const A: usize, const W: usize>(&self, words: &Vocabulary<A, W>, held: u32) -> bool {
        let text = self.bytes();
        let word_at = |at: usize, w: &[u8]| {
            text[at..].starts_with(w)
                && (at + w.len() == text.len() || self.ends_at(at + w.len()))
                && !(at + 1..at + w.len()).any(|inside| self.ends_at(inside))
        };
        candidates(&words.anywhere, &words.anywhere_letters, held)
            .any(|w| text.windows(w.len()).any(|window| window == w))
            || candidates(&words.whole, &words.whole_letters, held)
                .any(|w| (0..text.len()).any(|at| (at == 0 || self.ends_at(at)) && word_at(at, w)))
    }
}

/// The short ASCII path's words, on the stack: 64 bytes, word ends as bits.
struct Folded {
    bytes: [u8; 64],
    len: usize,
    ends: u128,
}

impl Words for Folded {
    fn push(&mut self, byte: u8) {
        self.bytes[self.len] = byte;
        self.len += 1;
    }
    fn len(&self) -> usize {
        self.len
    }
    fn end_at(&mut self, at: usize) {
        self.ends |= 1 << at;
    }
    fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
    fn ends_at(&self, at: usize) -> bool {
        self.ends & (1 << at) != 0
    }
}

impl Words for (Vec<u8>, Vec<bool>) {
    fn push(&mut self, byte: u8) {
        self.0.push(byte);
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn end_at(&mut self, at: usize) {
        if self.1.len() <= at {
            self.1.resize(at + 1, false);
        }
        self.1[at] = true;
    }
    fn bytes(&self) -> &[u8] {
        &self.0
    }
    fn ends_at(&self, at: usize) -> bool {
        self.1.get(at).copied().unwrap_or(false)
    }
}

/// What a char is to [`fold_words`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Lower,
    Upper,
    Digit,
    /// A letter with no case (CJK).
    Other,
}

/// Folds `s` into `out` ([`reads_words`] says how), marking word ends.
pub(super) fn fold_words(s: &str, out: &mut impl Words) {
    // The class and folded start of the last letter or digit read, whether
    // a separator came after it, and whether it and the one before it are
    // capitals with no separator between.
    let mut last: Option<(Class, usize)> = None;
    let mut separated = false;
    let mut capitals = false;
    for c in s.chars() {
        let c = match c {
            '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            '\u{017F}' => 's',
            '\u{212A}' => 'k',
            c => c,
        };
        if !c.is_alphanumeric() {
            if !invisible(c) {
                separated = true;
            }
            continue;
        }
        let class = if c.is_uppercase() {
            Class::Upper
        } else if c.is_lowercase() {
            Class::Lower
        } else if c.is_numeric() {
            Class::Digit
        } else {
            Class::Other
        };
        let at = out.len();
        if let Some((before, before_at)) = last {
            let letter = |k: Class| matches!(k, Class::Lower | Class::Upper);
            if separated
                || (before == Class::Lower && class == Class::Upper)
                || (letter(before) && class == Class::Digit)
                || (before == Class::Digit && letter(class))
            {
                out.end_at(at);
            } else if before == Class::Upper && class == Class::Lower && capitals {
                // `OTPCode`: the `C` begins a word.
                out.end_at(before_at);
            }
        }
        // Whether `c` is the second or later of a run of capitals.
        capitals = !separated && class == Class::Upper && matches!(last, Some((Class::Upper, _)));
        separated = false;
        last = Some((class, at));
        for lower in c.to_lowercase() {
            let mut utf8 = [0u8; 4];
            for &b in lower.encode_utf8(&mut utf8).as_bytes() {
                out.push(b);
            }
        }
    }
}

/// Chars not read at all, neither letters nor word ends: format chars
/// (the soft hyphen, zero-width and bidi controls) and combining marks.
fn invisible(c: char) -> bool {
    crate::escape::combining_mark(c) || crate::escape::unseen_format(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::floor::{says_secret, SECRET, SECRET_WHOLE};

    proptest::proptest! {
        /// The short ASCII path (letters held, then folded on the stack)
        /// answers as the general fold does, on texts built from the
        /// words' pieces, other letters, digits and separators.
        #[test]
        fn the_short_ascii_path_reads_as_the_general_fold(s in "(pass|PASS|word|Word|wd|se|secure|SeCure|cure|type|Ty|pe|auto|complete|fill|pin|PIN|Pin|otp|OTP|cvv|secret|[a-zA-Z]|[0-9]|[ _.:/-]){0,12}") {
            let words = Vocabulary::new([b"secure", b"password", b"passwd", b"type", b"autocomplete", b"autofill"], SECRET_WHOLE);
            let mut general = (Vec::new(), Vec::new());
            fold_words(&s, &mut general);
            // Every word a candidate: the letters held filter nothing out.
            proptest::prop_assert_eq!(reads_words(&s, &words), general.holds(&words, u32::MAX));
            proptest::prop_assert_eq!(says_secret(&s), general.holds(&SECRET, u32::MAX));
        }

        /// A whole word is found as the words a plain split finds: at
        /// separators, lowercase-to-uppercase and letter-to-digit changes,
        /// and before the last capital of a run followed by a lowercase
        /// letter.
        #[test]
        fn whole_words_are_the_words_a_plain_split_finds(s in "(pin|PIN|Pin|pIN|otp|OTP|Otp|code|Code|CODE|spin|user|User|s|S|[0-9]|[ _-]){0,8}") {
            let chars: Vec<char> = s.chars().collect();
            let mut words = vec![String::new()];
            for (i, &c) in chars.iter().enumerate() {
                let before = i.checked_sub(1).map(|j| chars[j]);
                let after = chars.get(i + 1).copied();
                if !c.is_ascii_alphanumeric() {
                    words.push(String::new());
                    continue;
                }
                if let Some(b) = before.filter(char::is_ascii_alphanumeric) {
                    let split = (b.is_ascii_lowercase() && c.is_ascii_uppercase())
                        || (b.is_ascii_alphabetic() != c.is_ascii_alphabetic())
                        || (b.is_ascii_uppercase()
                            && c.is_ascii_uppercase()
                            && after.is_some_and(|a| a.is_ascii_lowercase()));
                    if split {
                        words.push(String::new());
                    }
                }
                words.last_mut().unwrap().push(c.to_ascii_lowercase());
            }
            let expected = words.iter().any(|w| w == "pin" || w == "otp");
            proptest::prop_assert_eq!(reads_words(&s, &Vocabulary::new([], [b"pin", b"otp"])), expected, "{:?}", words);
        }
    }
}
