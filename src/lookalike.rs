//! Letters of other scripts that look like Latin ones, read as the Latin
//! letter they look like: `Раѕѕword` (Cyrillic `Р`, `а`, `ѕ`) reads
//! `Password`, `ΡΙΝ` (Greek) reads `PIN`.
//!
//! Used only where reading more text as Latin can only withhold more: the
//! secure-text floor's words (subroles, role words, type attributes,
//! imported field names), the title patterns, and attribute keys read for
//! the reserved `ctxgate:` namespace ([`name_skeleton`], with look-alike
//! colons, compatibility forms and chars that do not show: a key read as
//! reserved is dropped). Never in the secret
//! patterns of redaction, which replace text rather than mask a field: a
//! Cyrillic word read as Latin letters there would be a false replacement.
//!
//! The set is small and named, not all of Unicode's confusables: the
//! prototypes of UTS #39 (`confusables.txt`, Unicode 16.0) that are one
//! Latin letter, taken from the Cyrillic, Greek and Armenian blocks and the
//! Latin letters that read as another (dotless `ı`, script `ɑ` and `ɡ`),
//! in both cases where the script has them. Case is kept (Cyrillic `Р` is
//! `P`, `р` is `p`), so case-sensitive patterns (`PIN`) read it too.

/// The Latin letter `c` looks like, if it is one of the set.
pub(crate) fn latin(c: char) -> Option<char> {
    if c.is_ascii() {
        return None;
    }
    Some(match c {
        // Cyrillic.
        'А' => 'A',
        'а' => 'a',
        'В' => 'B',
        'С' => 'C',
        'с' => 'c',
        'ԁ' => 'd',
        'Е' => 'E',
        'е' => 'e',
        'Н' => 'H',
        'һ' => 'h',
        'І' | 'Ӏ' => 'I',
        'і' => 'i',
        'Ј' => 'J',
        'ј' => 'j',
        'К' => 'K',
        'ӏ' => 'l',
        'М' => 'M',
        'О' => 'O',
        'о' => 'o',
        'Р' => 'P',
        'р' => 'p',
        'Ԛ' => 'Q',
        'ԛ' => 'q',
        'Ѕ' => 'S',
        'ѕ' => 's',
        'Т' => 'T',
        'Ԝ' => 'W',
        'ԝ' => 'w',
        'Х' => 'X',
        'х' => 'x',
        'У' | 'Ү' => 'Y',
        'у' => 'y',
        // Greek.
        'Α' => 'A',
        'α' => 'a',
        'Β' => 'B',
        'Ϲ' => 'C',
        'ϲ' => 'c',
        'Ε' => 'E',
        'Η' => 'H',
        'Ι' => 'I',
        'ι' => 'i',
        'Κ' => 'K',
        'Μ' => 'M',
        'Ν' => 'N',
        'ν' => 'v',
        'Ο' => 'O',
        'ο' => 'o',
        'Ρ' => 'P',
        'ρ' => 'p',
        'Τ' => 'T',
        'υ' => 'u',
        'Υ' => 'Y',
        'Χ' => 'X',
        'Ζ' => 'Z',
        // Armenian.
        'հ' => 'h',
        'ո' => 'n',
        'օ' => 'o',
        'ս' => 'u',
        // Latin letters read as another.
        'ı' => 'i',
        'ɑ' => 'a',
        'ɡ' => 'g',
        _ => return None,
    })
}

/// `text` with the letters of the set read as their Latin letters in every
/// word that would then read as Latin (a run of letters, each ASCII or in
/// the set: `Раѕѕword`, `ΡΙΝ`), or `None` when no word would (the common
/// case, decided without building anything). A word of its own script
/// that happens to hold lookalikes is left as it is: in `ПОТРЕБИТЕЛ`
/// (Bulgarian, "user") `П`, `Б`, `И` and `Л` are not Latin, so its `ОТР`
/// is not read as `OTP`. A spoof of a Latin word must look Latin whole.
pub(crate) fn skeleton(text: &str) -> Option<String> {
    if text.is_ascii() || !text.chars().any(|c| latin(c).is_some()) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if !c.is_alphabetic() {
            out.push(c);
            rest = &rest[c.len_utf8()..];
            continue;
        }
        let end = rest
            .char_indices()
            .find(|(_, c)| !c.is_alphabetic())
            .map_or(rest.len(), |(at, _)| at);
        let word = &rest[..end];
        // Fullwidth Latin letters are Latin (the readers fold them too).
        let latin_whole = word.chars().all(|c| {
            c.is_ascii()
                || latin(c).is_some()
                || matches!(c, '\u{FF21}'..='\u{FF3A}' | '\u{FF41}'..='\u{FF5A}')
        });
        if latin_whole && !word.is_ascii() {
            out.extend(word.chars().map(|c| latin(c).unwrap_or(c)));
            changed = true;
        } else {
            out.push_str(word);
        }
        rest = &rest[end..];
    }
    changed.then_some(out)
}

/// Whether `c` is a look-alike of `:` (UTS #39 `confusables.txt`, prototype
/// U+003A, with the vertical and small presentation forms): read as `:`
/// where a name's namespace is decided.
pub(crate) fn colon(c: char) -> bool {
    matches!(
        c,
        ':' | '\u{02D0}' // modifier letter triangular colon
            | '\u{02F8}' // modifier letter raised colon
            | '\u{0589}' // Armenian full stop
            | '\u{05C3}' // Hebrew punctuation sof pasuq
            | '\u{0703}' // Syriac supralinear colon
            | '\u{0704}' // Syriac sublinear colon
            | '\u{0903}' // Devanagari sign visarga
            | '\u{0A83}' // Gujarati sign visarga
            | '\u{1361}' // Ethiopic wordspace
            | '\u{16EC}' // runic multiple punctuation
            | '\u{17C7}' // Khmer sign reahmuk
            | '\u{1803}' // Mongolian full stop
            | '\u{1804}' // Mongolian colon
            | '\u{1809}' // Mongolian Manchu full stop
            | '\u{205A}' // two dot punctuation
            | '\u{2236}' // ratio
            | '\u{A4FD}' // Lisu letter tone mya jeu
            | '\u{A789}' // modifier letter colon
            | '\u{FE13}' // presentation form for vertical colon
            | '\u{FE30}' // presentation form for vertical two dot leader
            | '\u{FE55}' // small colon
            | '\u{FF1A}' // fullwidth colon
    )
}

/// Whether `c` does not show: a char [`crate::escape::hidden`] (controls,
/// format chars, separators) or of Unicode's Default_Ignorable_Code_Point
/// (DerivedCoreProperties.txt, 16.0): the combining grapheme joiner,
/// Hangul fillers, Khmer inherent vowels, variation selectors, tags.
pub(crate) fn ignorable(c: char) -> bool {
    crate::escape::hidden(c)
        || matches!(c,
            '\u{034F}'
            | '\u{115F}'..='\u{1160}'
            | '\u{17B4}'..='\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FFA0}'
            | '\u{FFF0}'..='\u{FFF8}'
            | '\u{E0000}'..='\u{E0FFF}')
}

/// `text` as a reader of names reads it, char by char: without the chars
/// that do not show ([`ignorable`]), in Unicode compatibility form (NFKC:
/// full-width, mathematical and circled letters as plain ones), letters of
/// the set ([`latin`]) as Latin, lowercase, and look-alike colons as `:`.
/// Lazy, so a caller comparing a prefix reads no more than it needs.
pub(crate) fn name_skeleton(text: &str) -> impl Iterator<Item = char> + '_ {
    use unicode_normalization::UnicodeNormalization;
    text.chars()
        .filter(|&c| !ignorable(c))
        .nfkc()
        .filter(|&c| !ignorable(c))
        .flat_map(|c| latin(c).unwrap_or(c).to_lowercase())
        .map(|c| match c {
            c if colon(c) => ':',
            c => latin(c).map_or(c, |l| l.to_ascii_lowercase()),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_skeleton_reads_case_scripts_compatibility_forms_and_colons_alike() {
        let read = |text: &str| name_skeleton(text).collect::<String>();
        for text in [
            "ctxgate:omitted",
            "CtxGate:omitted",
            "CTXGATE:OMITTED",
            "\u{441}txgate:omitted",             // Cyrillic с
            "ctx\u{261}\u{3b1}t\u{435}:omitted", // script ɡ, Greek α, Cyrillic е
            "\u{421}TXGATE:omitted",             // Cyrillic С
            "ctxgate\u{ff1a}omitted",
            "ctxgate\u{a789}omitted",
            "ctxgate\u{2236}omitted",
            "\u{ff43}\u{ff54}\u{ff58}\u{ff47}\u{ff41}\u{ff54}\u{ff45}:omitted",
            "\u{1d41c}txgate:omitted", // mathematical bold c
            "c\u{200b}tx\u{200d}gate\u{feff}:\u{2060}omitted",
            "ctx\u{ad}gate\u{34f}:omitted",
        ] {
            assert_eq!(read(text), "ctxgate:omitted", "{text:?}");
        }
        assert_eq!(read("author"), "author");
        assert_eq!(read("Zürich"), "zürich");
    }

    #[test]
    fn the_set_reads_cyrillic_greek_and_armenian_lookalikes_as_latin_keeping_case() {
        assert_eq!(skeleton("Раѕѕword").as_deref(), Some("Password"));
        assert_eq!(skeleton("ΡΙΝ").as_deref(), Some("PIN"));
        assert_eq!(skeleton("рin").as_deref(), Some("pin"));
        assert_eq!(skeleton("Password"), None);
        assert_eq!(skeleton("ПОТРЕБИТЕЛ"), None);
        assert_eq!(
            skeleton("ПОТРЕБИТЕЛ ОТР").as_deref(),
            Some("ПОТРЕБИТЕЛ OTP")
        );
        assert_eq!(skeleton("東京 Zürich"), None);
        // Every letter of the set is a letter, read as an ASCII letter.
        for c in ('\u{80}'..='\u{2FFF}').filter(|c| latin(*c).is_some()) {
            let to = latin(c).unwrap();
            assert!(c.is_alphabetic() && to.is_ascii_alphabetic(), "{c:?}");
            assert_eq!(c.is_uppercase(), to.is_ascii_uppercase(), "{c:?}");
        }
    }
}
