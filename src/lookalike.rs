//! Letters of other scripts that look like Latin ones, read as the Latin
//! letter they look like: `Раѕѕword` (Cyrillic `Р`, `а`, `ѕ`) reads
//! `Password`, `ΡΙΝ` (Greek) reads `PIN`.
//!
//! Used only where reading more text as Latin can only mask more: the
//! secure-text floor's words (subroles, role words, type attributes,
//! imported field names) and the title patterns. Never in the secret
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

#[cfg(test)]
mod tests {
    use super::*;

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
