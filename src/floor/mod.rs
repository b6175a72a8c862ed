//! The secure-text floor: what says an element holds a secret, so that it
//! is masked whatever a policy decides. Everything the floor reads lives
//! here: its vocabulary (the words for password, PIN, one-time code … in
//! the most used UI languages), the per-format signals the importers ask
//! (labels, role descriptions, flags), what an element's subrole, role word
//! and attributes say ([`Floor`]), and the text that documents it
//! ([`description`]: `ctxgate policy doc` and SECURITY.md).
//!
//! `policy::engine::enforce` adds [`Floor::reason`] to every decision that
//! leaves `policy::decide` for an element the floor masks, and
//! `policy::projection` keeps such an element's attribute values out of
//! the policy's input; both ask [`Floor`], nothing else decides it.

mod words;

use words::{fold_words, plain, reads_words, Vocabulary, Words};

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

/// Attribute names whose string value says a secure field when the value
/// says a secret ([`Floor::attribute_says_secure`]): found anywhere in the
/// name, and found as whole words.
const ATTRIBUTE_NAMES: Vocabulary<5, 2> = Vocabulary::new(
    [
        b"type",
        b"autocomplete",
        b"autofill",
        b"subrole",
        b"roledescription",
    ],
    [b"role", b"class"],
);

/// What the floor does, in Markdown, from the words it reads: the one text
/// `ctxgate policy doc` prints and SECURITY.md carries (a test compares).
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
pub(crate) fn description() -> String {
    let list = |words: &mut dyn Iterator<Item = &str>| {
        words
            .map(|w| format!("`{w}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let ascii = |words: &[&'static [u8]]| -> Vec<&'static str> {
        words
            .iter()
            .map(|w| std::str::from_utf8(w).unwrap_or(""))
            .collect()
    };
    let (anywhere, whole) = (ascii(&SECRET_ANYWHERE), ascii(&SECRET_WHOLE));
    let (names, name_words) = (
        ascii(&ATTRIBUTE_NAMES.anywhere),
        ascii(&ATTRIBUTE_NAMES.whole),
    );
    let flag_ends = ascii(&FLAG_FIELD);
    format!(
        "No policy can lower it: an element of any role (a provider's unknown role, read as `Group`, \
         included) is masked with reason `{FLOOR_SECURE_TEXT}`, whatever the rules say, and its \
         attribute values never reach the policy, when\n\
         - its subrole says it holds a secret;\n\
         - its role is outside the language and the provider's word for it says so \
         (`SecureTextField`, `PasswordBox`);\n\
         - an attribute says so, at any depth of its value (inside objects and lists): a name that \
         holds {} anywhere or {} as a word, with a string value that says a secret \
         (`{{\"type\": \"password\"}}`, `{{\"autocomplete\": \"one-time-code\"}}`, \
         `{{\"ClassName\": \"PasswordBox\"}}`); or a flag set to `true` or `\"true\"` whose name \
         says a secret and is that one word, or whose last word names a secret (but `secure` and \
         `secret`) or the field or its text ({}): `IsPassword`, `isSecureTextEntry`, \
         `UseSystemPasswordChar`; not `isSecureContext`, `isSecure` or `passwordProtected`.\n\n\
         The importers write a field their format marks as secure (macOS `AXSecureTextField` or \
         Apple's role description of one in {} languages, UIA `IsPassword` or a class name that \
         says a secret, AT-SPI `password text`, an ARIA textbox whose name says a secret) as `Text` \
         with subrole `secure`, without its value.\n\n\
         A text says a secret when, read as a person reads it (letters and digits only, \
         lowercased, invisible characters dropped, fullwidth forms as ASCII, letters of other \
         scripts that look Latin as Latin: `Pass word`, `P\\u{{AD}}IN`, `Раѕѕword`), it holds one \
         of these anywhere: {}; or one of these as a whole word (a word ends at anything but a \
         letter or digit, at a lowercase-to-uppercase change, before the last of a run of \
         capitals followed by a lowercase letter, and between letters and digits: `userPin`, \
         `OTPCode`, `cvv2`; not `spinner`, `footprint`): {}; or, in text that is not ASCII, one of \
         these (accents and vowel signs aside): {}.\n",
        list(&mut names.into_iter()),
        list(&mut name_words.into_iter()),
        list(&mut flag_ends.into_iter()),
        SECURE_FIELD_DESCRIPTIONS.len(),
        list(&mut anywhere.into_iter()),
        list(&mut whole.into_iter()),
        list(&mut SECRET_SCRIPTS.iter().copied()),
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

/// A floor no policy can lower.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Floor {
    /// Secure text: any role whose subrole says it holds a secret
    /// ([`Floor::applies`]) is masked, with the reason [`Floor::reason`].
    SecureText,
}

/// The mask reason the floor adds to secure text, whatever the policy says.
pub const FLOOR_SECURE_TEXT: &str = "floor:secure-text";

impl Floor {
    /// Every floor.
    pub const ALL: [Floor; 1] = [Floor::SecureText];

    /// The mask reason it gives.
    pub fn reason(self) -> &'static str {
        match self {
            Floor::SecureText => FLOOR_SECURE_TEXT,
        }
    }

    /// The floor a reason names, if it is one of the floors' reasons.
    pub fn of_reason(reason: &str) -> Option<Floor> {
        Floor::ALL.into_iter().find(|f| f.reason() == reason)
    }

    /// Whether the secure-text floor masks an element with this subrole:
    /// one that says it holds a secret, whatever the element's role (a
    /// provider's unknown role, read as `Group`, included): `secure`,
    /// `password`, `passwd`, `passcode`, `passphrase`, `onetimecode` or
    /// `securitycode` anywhere in its letters and digits, or `pwd`, `pin`,
    /// `otp`, `totp`, `hotp`, `cvv`, `cvc`, `csc` or `secret` as a whole
    /// word (`userPin`, `OTPCode`, `cvv2`; not `spinbutton`, `footprint`).
    ///
    /// The subrole is read as a person reads it: any case, separators
    /// ending words, invisible chars not read, fullwidth forms as ASCII,
    /// the long s as `s`, words that look Latin in Cyrillic, Greek or
    /// Armenian letters as Latin — so `pass_word`, `ＰＡＳＳＷＯＲＤ`, `ſecure`
    /// and `Раѕѕword` count.
    pub fn applies(subrole: Option<&str>) -> bool {
        Floor::says_secure(subrole)
    }

    /// Whether the floor masks an element: its subrole says secure or
    /// password, or its role is outside the language and the provider's
    /// word for it does (`SecureTextField`, `PasswordBox`: a provider that
    /// names its widget classes as roles), read as [`Floor::applies`] reads
    /// a subrole.
    ///
    /// `unknown_role` is the provider's word when it is outside the language
    /// (`RoleName::unknown_word`).
    pub fn applies_to(unknown_role: Option<&str>, subrole: Option<&str>) -> bool {
        Floor::says_secure(subrole) || Floor::says_secure(unknown_role)
    }

    /// Whether the floor masks an element for a word other than its
    /// subrole: its role is outside the language and the provider's word
    /// says secure ([`Floor::applies_to`]), or an attribute does
    /// ([`Floor::attribute_says_secure`]).
    pub fn applies_elsewhere<'v>(
        unknown_role: Option<&str>,
        mut attributes: impl Iterator<Item = (&'v str, &'v serde_json::Value)>,
    ) -> bool {
        Floor::applies_to(unknown_role, None)
            || attributes.any(|(name, value)| Floor::attribute_says_secure(name, value))
    }

    /// Whether an attribute says the element is a secure field, as the
    /// providers of the OS trees and the web say it (each name and string
    /// read as [`Floor::applies`] reads a subrole):
    /// - a name that holds `type`, `autocomplete` or `autofill` (`type`,
    ///   `inputType`, `text-input-type`, HTML's `autocomplete`), or that
    ///   names a role or a class (`role`, `subrole`, `roledescription`,
    ///   `class`: macOS's `AXSubrole` and `AXRoleDescription`, UIA's
    ///   `ClassName`, a DOM class list), with a string value that says
    ///   secure or password: `{"type": "password"}`, `{"autocomplete":
    ///   "current-password"}`, `{"AXSubrole": "AXSecureTextField"}`,
    ///   `{"ClassName": "PasswordBox"}`;
    /// - a flag whose name says the element is one
    ///   ([`flag_says_secret`]: UIA's `IsPassword`, Android's
    ///   `password`, iOS's `isSecureTextEntry`; not `passwordProtected` or
    ///   `isSecureContext`), set: `true` or the string `true`, in any case;
    /// - either of these anywhere inside the value: in an object
    ///   (`{"input": {"type": "password"}}`) or a list (`{"type":
    ///   ["password"]}`, a class list), at any depth.
    ///
    /// A provider that says it only there gives no secure subrole, and the
    /// value beside it would otherwise be sent.
    pub fn attribute_says_secure(name: &str, value: &serde_json::Value) -> bool {
        use serde_json::Value;
        let says = |name: &str, value: &Value| match value {
            Value::String(text) => {
                (reads_words(name, &ATTRIBUTE_NAMES) && Floor::says_secure(Some(text)))
                    || (text.eq_ignore_ascii_case("true") && flag_says_secret(name))
            }
            Value::Bool(true) => flag_says_secret(name),
            _ => false,
        };
        // A scalar (most attributes) is read without a stack; it is asked
        // of every element with attributes.
        if !matches!(value, Value::Array(_) | Value::Object(_)) {
            return says(name, value);
        }
        // Iterative: a value can be nested as deep as the reader allows.
        let mut stack: Vec<(&str, &Value)> = vec![(name, value)];
        while let Some((name, value)) = stack.pop() {
            match value {
                Value::Array(items) => stack.extend(items.iter().map(|item| (name, item))),
                Value::Object(map) => stack.extend(map.iter().map(|(k, v)| (k.as_str(), v))),
                scalar if says(name, scalar) => return true,
                _ => {}
            }
        }
        false
    }

    fn says_secure(subrole: Option<&str>) -> bool {
        subrole.is_some_and(says_secret)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
