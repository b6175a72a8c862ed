//! The role language of RFC-0001 section 4.2: thirteen words, and Apple's
//! accessibility roles mapped onto them.
//!
//! A role outside the language is read as [`Role::Group`]; the provider's
//! own word is kept in [`RoleName::Unknown`] for reports and checks.

use std::fmt;

/// One of the thirteen roles of the element model (RFC-0001 4.2).
///
/// `#[non_exhaustive]`: an amendment of the RFC may add a word (as RFC-0003
/// added a state); match with a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Role {
    /// The app; always and only the root.
    Application,
    /// A window, sheet, drawer, popover, tab group; a pane says so in its subrole.
    Window,
    /// A container with no more specific role; also what unknown roles read as.
    Group,
    /// A list or an outline; nesting shows the hierarchy.
    List,
    /// Rows of cells.
    Table,
    /// An entry of a list or a table.
    Row,
    /// An entry of a row.
    Cell,
    /// Text: static, editable, selected.
    Text,
    /// A heading.
    Heading,
    /// A link.
    Link,
    /// A picture.
    Image,
    /// A page.
    Page,
    /// A document (also a web area).
    Document,
}

impl Role {
    /// Every role, in the order of RFC-0001 4.2.
    pub const ALL: [Role; 13] = [
        Role::Application,
        Role::Window,
        Role::Group,
        Role::List,
        Role::Table,
        Role::Row,
        Role::Cell,
        Role::Text,
        Role::Heading,
        Role::Link,
        Role::Image,
        Role::Page,
        Role::Document,
    ];

    /// The role's word, spelled as in the RFC.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Application => "Application",
            Role::Window => "Window",
            Role::Group => "Group",
            Role::List => "List",
            Role::Table => "Table",
            Role::Row => "Row",
            Role::Cell => "Cell",
            Role::Text => "Text",
            Role::Heading => "Heading",
            Role::Link => "Link",
            Role::Image => "Image",
            Role::Page => "Page",
            Role::Document => "Document",
        }
    }

    /// The role spelled exactly `word`, if it is in the language.
    /// Spelling is exact: `text` and `TextField` are not roles.
    pub fn from_word(word: &str) -> Option<Role> {
        // A `match` (by length, then the bytes), not a search of `ALL`: the
        // reader asks it of every element. That it is `as_str`'s inverse
        // for every role is `thirteen_roles_round_trip_their_words`.
        Some(match word {
            "Application" => Role::Application,
            "Window" => Role::Window,
            "Group" => Role::Group,
            "List" => Role::List,
            "Table" => Role::Table,
            "Row" => Role::Row,
            "Cell" => Role::Cell,
            "Text" => Role::Text,
            "Heading" => Role::Heading,
            "Link" => Role::Link,
            "Image" => Role::Image,
            "Page" => Role::Page,
            "Document" => Role::Document,
            _ => return None,
        })
    }

    /// The role nearest to one of Apple's accessibility roles (with or
    /// without the `AX` prefix), per the table in RFC-0001 4.2. `None` for
    /// controls, menus, indicators and window furniture, which a provider
    /// does not report, and for roles the table does not name.
    pub fn from_apple(ax_role: &str) -> Option<Role> {
        let word = ax_role.strip_prefix("AX").unwrap_or(ax_role);
        APPLE_ROLES
            .iter()
            .find(|(apple, _)| *apple == word)
            .map(|(_, role)| *role)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Apple's accessibility roles (without `AX`) and the role each is reported
/// as: RFC-0001 4.2's table, plus the eleven roles Apple and the language
/// share. Importers of OS trees use this table; nothing else maps Apple words.
pub const APPLE_ROLES: &[(&str, Role)] = &[
    ("Application", Role::Application),
    ("Window", Role::Window),
    ("Sheet", Role::Window),
    ("Drawer", Role::Window),
    ("Popover", Role::Window),
    ("TabGroup", Role::Window),
    ("WebArea", Role::Document),
    ("Group", Role::Group),
    ("SplitGroup", Role::Group),
    ("ScrollArea", Role::Group),
    ("LayoutArea", Role::Group),
    ("LayoutItem", Role::Group),
    ("List", Role::List),
    ("Outline", Role::List),
    ("Browser", Role::List),
    ("Table", Role::Table),
    ("Grid", Role::Table),
    ("Row", Role::Row),
    ("Cell", Role::Cell),
    ("Text", Role::Text),
    ("StaticText", Role::Text),
    ("TextField", Role::Text),
    ("TextArea", Role::Text),
    ("Heading", Role::Heading),
    ("Link", Role::Link),
    ("Image", Role::Image),
    ("Page", Role::Page),
    ("Document", Role::Document),
];

/// A role as the provider wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RoleName {
    /// A word of the role language.
    Known(Role),
    /// A word outside the language, kept as written; read as [`Role::Group`].
    Unknown(Box<str>),
}

impl RoleName {
    /// Reads a provider's word.
    pub fn parse(word: &str) -> RoleName {
        match Role::from_word(word) {
            Some(role) => RoleName::Known(role),
            None => RoleName::Unknown(word.into()),
        }
    }

    /// The role as a receiver reads it: unknown words read as `Group` (R3).
    pub fn read(&self) -> Role {
        match self {
            RoleName::Known(role) => *role,
            RoleName::Unknown(_) => Role::Group,
        }
    }

    /// The word as the provider wrote it.
    pub fn as_str(&self) -> &str {
        match self {
            RoleName::Known(role) => role.as_str(),
            RoleName::Unknown(word) => word,
        }
    }

    /// Whether the word is in the role language.
    pub fn is_known(&self) -> bool {
        matches!(self, RoleName::Known(_))
    }
}

impl From<Role> for RoleName {
    fn from(role: Role) -> RoleName {
        RoleName::Known(role)
    }
}

impl fmt::Display for RoleName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a label (an imported field's name) says it holds a secret,
/// read as the floor reads a subrole ([`says_secret`]): `Pass word`,
/// `pass\u{AD}word`, `ＰＡＳＳＷＯＲＤ`, `Раѕѕword`, `Enter your PIN` do.
pub(crate) fn names_password(label: &str) -> bool {
    says_secret(label)
}

/// Words that say a field holds a secret wherever they stand in the text
/// as read (letters and digits only, lowercased): long enough that no
/// common word holds them (`AXSecureTextField`, `current-password`,
/// `one-time-code`, `creditCardSecurityCode`, `passphrase`).
/// With them, the same words of the 20-odd most used UI languages written
/// in ASCII (`Passwort`, `mot de passe`, `contrasena`, `wachtwoord`,
/// `Bestatigungscode`); [`SECRET_SCRIPTS`] has the spellings with other
/// letters.
pub(crate) const SECRET_ANYWHERE: [&[u8]; 39] = [
    b"secure",
    b"password",
    b"passwd",
    b"passcode",
    b"passphrase",
    b"onetimecode",
    b"securitycode",
    b"verificationcode",
    // de, fr, es, pt, it, nl, sv, da, nb, fi, pl, cs, hu, tr, vi, id.
    b"passwort",
    b"kennwort",
    b"sicherheitscode",
    b"bestatigungscode",
    b"motdepasse",
    b"codedeverification",
    b"codedesecurite",
    b"contrasena",
    b"codigodeverificacion",
    b"codigodeseguridad",
    b"codigodeverificacao",
    b"codigodeseguranca",
    b"codicediverifica",
    b"codicedisicurezza",
    b"wachtwoord",
    b"verificatiecode",
    b"beveiligingscode",
    b"losenord",
    b"verifieringskod",
    b"adgangskode",
    b"kodeord",
    b"passord",
    b"salasana",
    b"vahvistuskoodi",
    b"haslo",
    b"heslo",
    b"kodweryfikacyjny",
    b"jelszo",
    b"dogrulamakodu",
    b"matkhau",
    b"katasandi",
];

/// The floor's secret words in other letters, found anywhere in the text
/// as read (lowercased, letters and digits only, so `mot de passe` reads
/// `motdepasse`): password, one-time or verification code and security
/// code in German, French, Spanish, Portuguese, Italian, Dutch, Swedish,
/// Polish, Czech, Hungarian, Turkish, Vietnamese, Russian, Ukrainian,
/// Greek, Arabic, Persian, Hebrew, Hindi, Bengali, Thai, Chinese,
/// Japanese and Korean. Read only in text that is not ASCII.
pub(crate) const SECRET_SCRIPTS: [&str; 52] = [
    "bestätigungscode",
    "prüfcode",
    "codedevérification",
    "codedesécurité",
    "contraseña",
    "códigodeverificación",
    "códigodeseguridad",
    "códigodeverificação",
    "códigodesegurança",
    "lösenord",
    "säkerhetskod",
    "engångskod",
    "hasło",
    "hasła",
    "kodbezpieczeństwa",
    "ověřovacíkód",
    "jelszó",
    "şifre",
    "doğrulamakodu",
    "güvenlikkodu",
    "mậtkhẩu",
    "mãxácminh",
    "mãbảomật",
    "пароль",
    "пароля",
    "кодподтверждения",
    "одноразовыйкод",
    "кодбезопасности",
    "пинкод",
    "кодпідтвердження",
    "одноразовийкод",
    "κωδικόςπρόσβασης",
    "συνθηματικό",
    "كلمةالمرور",
    "كلمةالسر",
    "رمزالتحقق",
    "رمزعبور",
    "گذرواژه",
    "کدتأیید",
    "סיסמה",
    "סיסמא",
    "קודאימות",
    "पासवर्ड",
    "सत्यापनकोड",
    "পাসওয়ার্ড",
    "รหัสผ่าน",
    "รหัสยืนยัน",
    "密码",
    "密碼",
    "验证码",
    "パスワード",
    "비밀번호",
];

/// Apple's role description of a secure text field, in the languages of
/// [`SECRET_SCRIPTS`] and English, as read (lowercased, letters and digits
/// only): what a macOS tree in another language calls the field.
const SECURE_FIELD_DESCRIPTIONS: [&str; 24] = [
    "securetextfield",
    "champdetextesécurisé",
    "sicherestextfeld",
    "campodetextoseguro",
    "campoditestosicuro",
    "beveiligdtekstveld",
    "säkerttextfält",
    "sikkerttekstfelt",
    "suojattutekstikenttä",
    "bezpiecznepoletekstowe",
    "zabezpečenétextovépole",
    "biztonságosszövegmező",
    "güvenlimetinalanı",
    "защищенноетекстовоеполе",
    "защищённоетекстовоеполе",
    "захищенетекстовеполе",
    "ασφαλέςπεδίοκειμένου",
    "حقلنصآمن",
    "שדהטקסטמאובטח",
    "安全文本栏",
    "安全文本字段",
    "安全文字欄位",
    "セキュアテキストフィールド",
    "보안텍스트필드",
];

/// Whether a role description says the element is a secure text field:
/// Apple's words for it in any language of [`SECURE_FIELD_DESCRIPTIONS`],
/// or any description that says a secret ([`says_secret`]: `champ de mot
/// de passe`).
pub(crate) fn describes_secure_field(description: &str) -> bool {
    static WORDS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let words = WORDS.get_or_init(|| SECURE_FIELD_DESCRIPTIONS.map(plain).to_vec());
    let text = plain(description);
    words.iter().any(|d| text.contains(d.as_str())) || says_secret(description)
}

/// `s` as the floor compares words in other letters: decomposed (NFD),
/// then read as [`fold_words`] reads (lowercased, letters and digits only,
/// combining marks and invisible chars dropped), so accents, viramas and
/// vowel signs do not decide a match and `sécurisé` reads `securise`.
fn plain(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let decomposed: String = s.nfd().collect();
    let mut folded = (Vec::with_capacity(decomposed.len()), Vec::new());
    fold_words(&decomposed, &mut folded);
    String::from_utf8(folded.0).unwrap_or_default()
}

/// Words that say it only as a whole word of the text: short words that
/// common words hold (`spinbutton`, `SpinButton`, `footprint`,
/// `secretary`, `typing`). A word ends at anything but a letter or digit,
/// between a lowercase and an uppercase letter (`userPin`), before the
/// last of a run of capitals followed by a lowercase letter (`OTPCode`),
/// and between letters and digits (`cvv2`). The vocabularies of HTML's
/// `autocomplete` (`cc-csc`, `one-time-code`), Android's autofill hints
/// (`smsOTPCode`, `creditCardSecurityCode`), iOS's text content types
/// (`oneTimeCode`) and the password-like roles of the OS trees (`PIN`,
/// `pwd`).
/// Portuguese `senha` is one: `resenha` is a review.
pub(crate) const SECRET_WHOLE: [&[u8]; 10] = [
    b"pwd", b"pin", b"otp", b"totp", b"hotp", b"cvv", b"cvc", b"csc", b"secret", b"senha",
];

/// The floor's vocabulary.
const SECRET: Vocabulary<39, 10> = Vocabulary::new(SECRET_ANYWHERE, SECRET_WHOLE);

/// Words to find in a text ([`reads_words`]), each with the letters it
/// holds, computed once.
pub(crate) struct Vocabulary<const A: usize, const W: usize> {
    anywhere: [&'static [u8]; A],
    whole: [&'static [u8]; W],
    anywhere_letters: [u32; A],
    whole_letters: [u32; W],
}

impl<const A: usize, const W: usize> Vocabulary<A, W> {
    /// Words (lowercase ASCII) found anywhere, and words found whole.
    pub(crate) const fn new(anywhere: [&'static [u8]; A], whole: [&'static [u8]; W]) -> Self {
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

/// The floor's words, for the reviewer's doc: found anywhere, found as
/// whole words, and found in text that is not ASCII.
pub(crate) fn floor_words() -> (
    Vec<&'static str>,
    Vec<&'static str>,
    &'static [&'static str],
) {
    let text = |w: &&'static [u8]| std::str::from_utf8(w).unwrap_or("");
    (
        SECRET_ANYWHERE.iter().map(text).collect(),
        SECRET_WHOLE.iter().map(text).collect(),
        &SECRET_SCRIPTS,
    )
}

/// Whether `s` says it holds a secret: one of [`SECRET_ANYWHERE`] anywhere
/// in it, or one of [`SECRET_WHOLE`] as a whole word, read as
/// [`reads_words`] reads.
pub(crate) fn says_secret(s: &str) -> bool {
    reads_words(s, &SECRET) || (!s.is_ascii() && says_secret_in_script(s))
}

/// Whether `s` holds a word of [`SECRET_SCRIPTS`] or [`SECRET_ANYWHERE`],
/// both read [`plain`] (`contraseña` written with a combining tilde reads
/// as the ASCII `contrasena`).
fn says_secret_in_script(s: &str) -> bool {
    static WORDS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let words = WORDS.get_or_init(|| {
        SECRET_SCRIPTS
            .iter()
            .map(|w| plain(w))
            .chain(
                SECRET_ANYWHERE
                    .iter()
                    .map(|w| String::from_utf8_lossy(w).into_owned()),
            )
            .collect()
    });
    let text = plain(s);
    words.iter().any(|w| text.contains(w.as_str()))
}

/// Whether a flag named `name`, set, says its element is a secure field.
/// The name says a secret ([`says_secret`]) and is that one word
/// (`password`, `secure`), or its last word, read as [`reads_words`]
/// splits words, names a secret ([`SECRET_ANYWHERE`] or [`SECRET_WHOLE`]
/// but `secure` and `secret`: UIA's `IsPassword`, `isPin`) or the field or
/// its text ([`FLAG_FIELD`]: iOS's `isSecureTextEntry`, WinForms'
/// `UseSystemPasswordChar`, `passwordEdit`). A flag that says something
/// else of a secret or of security (`passwordProtected`, `hasSecret`,
/// `isSecure`, `isSecureContext`) does not: a window served over HTTPS is
/// not a password field.
pub(crate) fn flag_says_secret(name: &str) -> bool {
    if !says_secret(name) {
        return false;
    }
    let skeleton = crate::lookalike::skeleton(name);
    let name = skeleton.as_deref().unwrap_or(name);
    let mut folded = (Vec::with_capacity(name.len()), Vec::new());
    fold_words(name, &mut folded);
    let text = folded.bytes();
    let mut words: Vec<&[u8]> = Vec::new();
    let mut start = 0;
    for at in 1..=text.len() {
        if at == text.len() || folded.ends_at(at) {
            words.push(&text[start..at]);
            start = at;
        }
    }
    let [.., last] = words[..] else {
        return false;
    };
    words.len() == 1
        || FLAG_FIELD.contains(&last)
        || SECRET_ANYWHERE
            .iter()
            .chain(&SECRET_WHOLE)
            .any(|&w| w == last && w != b"secure" && w != b"secret")
}

/// Last words of a flag's name that say it is of the field or its text
/// ([`flag_says_secret`]).
const FLAG_FIELD: [&[u8]; 9] = [
    b"text",
    b"entry",
    b"field",
    b"input",
    b"box",
    b"char",
    b"edit",
    b"mode",
    b"textfield",
];

/// Whether `s` holds one of the vocabulary's words anywhere, or one of
/// its whole words as a whole word (see [`SECRET_WHOLE`] for where words
/// end), read so: letters and digits only (other chars end a word;
/// invisible format chars and combining marks are not read at all, so
/// `P\u{AD}IN` is `PIN`), lowercased, fullwidth forms as ASCII, the long s
/// as `s`, the Kelvin sign as `k`, and the words that look Latin read as
/// Latin ([`crate::lookalike::skeleton`]: `Раѕѕword`, not `ПОТРЕБИТЕЛ`).
pub(crate) fn reads_words<const A: usize, const W: usize>(
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
trait Words {
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
fn fold_words(s: &str, out: &mut impl Words) {
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

    #[test]
    fn thirteen_roles_round_trip_their_words() {
        assert_eq!(Role::ALL.len(), 13);
        for role in Role::ALL {
            assert_eq!(Role::from_word(role.as_str()), Some(role));
        }
        assert_eq!(Role::from_word("text"), None);
        assert_eq!(Role::from_word("TextField"), None);
    }

    #[test]
    fn apple_table_maps_as_the_rfc_says() {
        assert_eq!(Role::from_apple("AXStaticText"), Some(Role::Text));
        assert_eq!(Role::from_apple("AXWebArea"), Some(Role::Document));
        assert_eq!(Role::from_apple("AXOutline"), Some(Role::List));
        assert_eq!(Role::from_apple("AXGrid"), Some(Role::Table));
        assert_eq!(Role::from_apple("AXPopover"), Some(Role::Window));
        assert_eq!(Role::from_apple("AXScrollArea"), Some(Role::Group));
        assert_eq!(Role::from_apple("AXButton"), None);
    }

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

    #[test]
    fn the_floor_reads_secret_words_whole_and_long_ones_anywhere() {
        for yes in [
            "pwd",
            "PIN",
            "userPin",
            "pin_code",
            "PinCode",
            "OTPCode",
            "smsOTPCode",
            "cc-csc",
            "cvv2",
            "CVC",
            "clientSecret",
            "one-time-code",
            "oneTimeCode",
            "creditCardSecurityCode",
            "passphrase",
            "Passcode",
            "AXSecureTextField",
            "current-password",
            "P\u{AD}IN",
            "Раѕѕword",
            "ΡΙΝ",
            "ＰＩＮ",
            "Enter your PIN",
            "totp",
            "HOTP",
        ] {
            assert!(says_secret(yes), "{yes:?}");
        }
        for no in [
            "spinbutton",
            "SpinButton",
            "Spinner",
            "Pinned",
            "footprint",
            "secretary",
            "Secretariat",
            "typing",
            "DescriptionTerm",
            "Paragraph",
            "shopping",
            "Opinion",
            "optional",
            "pinyin",
            "",
            "AXTextField",
            "cvs",
            "pwned",
        ] {
            assert!(!says_secret(no), "{no:?}");
        }
    }

    #[test]
    fn unknown_words_read_as_group_and_keep_the_word() {
        let name = RoleName::parse("Toolbar");
        assert_eq!(name.read(), Role::Group);
        assert_eq!(name.as_str(), "Toolbar");
        assert!(!name.is_known());
    }
}
