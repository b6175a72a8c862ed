//! The floor reads a secret word however it is spelled: in any case,
//! split, run together, in look-alike letters, inside camelCase and
//! snake_case names, wherever a field says it (subrole, role word,
//! attribute); words that only hold a short secret word are not masked.
//! Each test builds many members of its class through `Gate` with the
//! embedded default policy, as a host's request would. SECURITY.md cites
//! these tests by name.

mod common;

use common::{app, assert_never_sent, outcome, trim};
use ctxgate::{Outcome, Request};

const SECRET: &str = "CANARY-hunter2";

/// Field `f`, of `role` and `subrole` (JSON, or `null` for none), with `attributes`
/// (JSON members, each followed by a comma) before its value, the value
/// in its content and a selected child holding it too.
fn field(role: &str, subrole: &str, attributes: &str) -> Vec<u8> {
    let subrole = match subrole {
        "null" => String::new(),
        s => format!(r#""subrole":{s},"#),
    };
    app(&format!(
        r#"{{"id":"w","role":"Window","focused":true,"children":[{{"id":"f","role":{role},{subrole}"title":"Field","attributes":{{{attributes}"value":"{SECRET}"}},"content":[{{"type":"text","text":"{SECRET}"}}],"children":[{{"id":"sel","role":"Text","selected":true,"content":[{{"type":"text","text":"{SECRET}"}}]}}]}}]}}"#
    ))
}

fn json(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// Whether field `f` is masked (by the floor, or first by the default
/// policy's own `secure-text` rule, which the report names before the
/// floor) and nothing of its value leaves, for the app and for the
/// selection inside it.
fn floor_masks(bytes: &[u8], what: &str) -> bool {
    let out = trim(bytes, &Request::new("app"));
    let masked = matches!(
        outcome(&out, "f"),
        (Outcome::Masked, Some(rule)) if rule == "floor:secure-text" || rule == "mask:secure-text"
    );
    if masked {
        assert_never_sent(&out, SECRET, what);
        assert_never_sent(&trim(bytes, &Request::new("selection")), SECRET, what);
    }
    masked
}

/// The ways a provider writes a word: as is, capitalised, upper case,
/// inside camelCase, snake_case and kebab-case names, after a digit-free
/// prefix, with a soft hyphen inside, and in Cyrillic or Greek lookalikes.
fn spellings(word: &str) -> Vec<String> {
    let capital = word[..1].to_uppercase() + &word[1..];
    let mut out = vec![
        word.to_string(),
        capital.clone(),
        word.to_uppercase(),
        format!("user{capital}"),
        format!("{word}Field"),
        format!("user_{word}_input"),
        format!("new-{word}"),
        format!("{}Input", word.to_uppercase()),
        format!("{}\u{ad}{}", &word[..1], &word[1..]),
    ];
    let lookalike: String = word
        .chars()
        .map(|c| match c {
            'a' => 'а',
            'c' => 'с',
            'e' => 'е',
            'o' => 'о',
            'p' => 'р',
            's' => 'ѕ',
            'i' => 'і',
            'x' => 'х',
            'y' => 'у',
            c => c,
        })
        .collect();
    if lookalike != word {
        out.push(lookalike);
    }
    let greek: String = word
        .to_uppercase()
        .chars()
        .map(|c| match c {
            'P' => 'Ρ',
            'I' => 'Ι',
            'N' => 'Ν',
            'O' => 'Ο',
            'T' => 'Τ',
            'E' => 'Ε',
            'C' => 'Ϲ',
            c => c,
        })
        .collect();
    if greek != word.to_uppercase() {
        out.push(greek);
    }
    out
}

/// Words that say a field holds a secret, from the vocabularies providers
/// use: HTML `type` and `autocomplete`, Android autofill hints, iOS text
/// content types, widget class names.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "secure",
    "pin",
    "passcode",
    "passphrase",
    "secret",
    "otp",
    "totp",
    "cvv",
    "cvc",
    "csc",
];

#[test]
fn every_word_that_says_secret_makes_the_floor_mask_the_field_wherever_it_is_said() {
    // The floor read `secure`, `password` and `passwd`
    // only, so a subrole `pwd` or `pin`, a widget class `PinField`, an
    // `autocomplete` of `one-time-code` or `cc-csc`, and any of the words
    // in Cyrillic or Greek letters (`Раѕѕword`) left the field's value,
    // attributes and the selection inside it to be sent.
    let mut missed = Vec::new();
    for word in SECRET_WORDS {
        for spelling in spellings(word) {
            let s = json(&spelling);
            let places = [
                ("subrole", field(r#""Text""#, &s, "")),
                ("subrole of a Group", field(r#""Group""#, &s, "")),
                ("role word", field(&s, "null", "")),
                (
                    "type",
                    field(r#""Text""#, "null", &format!(r#""type":{s},"#)),
                ),
                (
                    "autocomplete",
                    field(r#""Text""#, "null", &format!(r#""autocomplete":{s},"#)),
                ),
            ];
            for (place, bytes) in places {
                if !floor_masks(&bytes, &format!("{place} {spelling:?}")) {
                    missed.push(format!("{place} {spelling:?}"));
                }
            }
        }
    }
    for value in [
        "one-time-code",
        "cc-csc",
        "smsOTPCode",
        "creditCardSecurityCode",
        "oneTimeCode",
        "newPassword",
        "cvv2",
    ] {
        let bytes = field(
            r#""Text""#,
            "null",
            &format!(r#""autocomplete":{},"#, json(value)),
        );
        if !floor_masks(&bytes, value) {
            missed.push(format!("autocomplete {value:?}"));
        }
    }
    assert!(missed.is_empty(), "not masked by the floor: {missed:#?}");
}

#[test]
fn words_that_only_hold_a_short_secret_word_are_not_masked_by_the_floor() {
    // The short words are read whole: the roles and subroles of the real
    // trees (`spinbutton`, `SpinButton`) and common words that hold them
    // stay what they are, and their text is sent.
    for word in [
        "spinbutton",
        "SpinButton",
        "Spinner",
        "Pinned",
        "pinyin",
        "footprint",
        "secretary",
        "Opinion",
        "shopping",
        "typing",
        "DescriptionTerm",
        "AXTextField",
        "PassportField",
        "ПОТРЕБИТЕЛ",
        "СЕКРЕТАР",
    ] {
        let s = json(word);
        for (place, bytes) in [
            ("subrole", field(r#""Text""#, &s, "")),
            ("role word", field(&s, "null", "")),
            (
                "type",
                field(r#""Text""#, "null", &format!(r#""type":{s},"#)),
            ),
        ] {
            let out = trim(&bytes, &Request::new("app"));
            assert!(out.rendered.contains(SECRET), "{place} {word:?} was masked");
        }
    }
}

#[test]
fn a_title_in_lookalike_letters_is_masked_as_the_latin_title_is() {
    // A title written with Cyrillic or Greek letters that
    // look like Latin ones (`Раѕѕword`, `ΡΙΝ`) matched no title pattern,
    // and the field's value was sent.
    for title in [
        "Раѕѕword",
        "Рassword",
        "Ρassword",
        "Your РIN",
        "ΡΙΝ",
        "Оne-time code",
        "Раѕѕсоdе",
        "Verification сode",
        "Раѕѕ\u{ad}word",
        "Сonfirm раssword",
    ] {
        let bytes = app(&format!(
            r#"{{"id":"w","role":"Window","focused":true,"children":[{{"id":"f","role":"Text","title":{},"content":[{{"type":"text","text":"{SECRET}"}}]}}]}}"#,
            json(title)
        ));
        let out = trim(&bytes, &Request::new("app"));
        assert_never_sent(&out, SECRET, title);
        assert_eq!(
            outcome(&out, "f"),
            (Outcome::Masked, Some("mask:secret-title".into())),
            "{title:?}"
        );
    }
    // Cyrillic and Greek words that are not lookalikes of a secret's title
    // are sent.
    for title in ["Рассказ", "Настройки", "Όνομα", "Ρυθμίσεις", "ΡΙΝΑΚΑΣ"]
    {
        let bytes = app(&format!(
            r#"{{"id":"w","role":"Window","focused":true,"children":[{{"id":"f","role":"Text","title":{},"content":[{{"type":"text","text":"{SECRET}"}}]}}]}}"#,
            json(title)
        ));
        assert!(
            trim(&bytes, &Request::new("app")).rendered.contains(SECRET),
            "{title:?}"
        );
    }
}

/// SECURITY.md's section on the floor is the text the code gives
/// (`ctxgate policy doc` prints it): what the floor reads cannot drift from
/// what reviewers are told. `UPDATE_EXPECT=1` rewrites the section.
#[test]
fn security_md_states_the_floor_the_code_reads() {
    let output = common::ctxgate(&["policy", "doc"], b"");
    assert!(output.status.success());
    let doc = String::from_utf8(output.stdout).unwrap();
    let floor = doc
        .split_once("## The floor\n\n")
        .and_then(|(_, rest)| rest.split_once("\n## "))
        .map(|(floor, _)| floor.trim_end())
        .expect("policy doc has a floor section");
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/SECURITY.md");
    let security = std::fs::read_to_string(path).unwrap();
    let start = "-->\n";
    let end = "\n<!-- end of the floor -->";
    let head = security
        .find("## The secure-text floor\n\n<!--")
        .expect("SECURITY.md has the floor's section");
    let from = head + security[head..].find(start).unwrap() + start.len();
    let to = from + security[from..].find(end).unwrap();
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        let updated = format!("{}{floor}{}", &security[..from], &security[to..]);
        std::fs::write(path, updated).unwrap();
        return;
    }
    assert_eq!(
        &security[from..to],
        floor,
        "SECURITY.md's floor section is not what `ctxgate policy doc` prints; UPDATE_EXPECT=1 rewrites it"
    );
}
