//! Every signal a provider gives that a field is secure makes the floor
//! mask it (a flag, a role, a class name, a nested `type` or
//! `autocomplete`), and one that only resembles it does not; a card number
//! wrapped by any line break is redacted; trimming again changes nothing
//! when a replacement completes a match with its neighbours. Everything
//! goes through `Gate` with the embedded default policy. SECURITY.md cites
//! these tests by name.

mod common;

use common::{app, assert_never_sent, outcome, trim};
use ctxgate::{Format, Outcome, Request};

const SECRET: &str = "CANARY-r4-hunter2";

/// A Text field `f` with `attributes` (a JSON object) and the secret as
/// its value: in its content and under `value`.
fn field(attributes: &str) -> Vec<u8> {
    let attributes = attributes.strip_suffix('}').expect("an object");
    let comma = if attributes.trim() == "{" { "" } else { "," };
    app(&format!(
        r#"{{"id":"w","role":"Window","focused":true,"children":[{{"id":"f","role":"Text","focused":true,"attributes":{attributes}{comma}"value":"{SECRET}"}},"content":[{{"type":"text","text":"{SECRET}"}}]}}]}}"#
    ))
}

fn masked_by_the_floor(bytes: &[u8]) -> bool {
    let out = trim(bytes, &Request::new("app"));
    let decided = out.report.decisions.iter().any(|d| d.id == "f");
    decided
        && matches!(outcome(&out, "f"), (Outcome::Masked, Some(rule)) if rule == "floor:secure-text")
}

// ---------------------------------------------------------------------------
// The floor reads what the OS trees and the web say of a secure field.

#[test]
fn an_attribute_that_says_secure_as_a_flag_a_role_a_class_or_nested_makes_the_floor_mask_the_field()
{
    // Before: only a string under a name holding `type`, `autocomplete` or
    // `autofill`, at the top of `attributes`, counted; each of these sent
    // the field's value to the agent.
    let saying_secure = [
        // Flags named as a secret, set (UIA, Android, iOS, Qt).
        r#"{"IsPassword":true}"#,
        r#"{"ControlType":"Edit","IsPassword":true}"#,
        r#"{"password":true}"#,
        r#"{"isPassword":"true"}"#,
        r#"{"secure":true}"#,
        r#"{"isSecureTextEntry":true}"#,
        r#"{"UseSystemPasswordChar":"TRUE"}"#,
        r#"{"states":{"passwordEdit":true}}"#,
        // A role, subrole, role description or class that says so.
        r#"{"AXSubrole":"AXSecureTextField"}"#,
        r#"{"AXRoleDescription":"secure text field"}"#,
        r#"{"aria-roledescription":"password"}"#,
        r#"{"role":"password"}"#,
        r#"{"ClassName":"PasswordBox"}"#,
        r#"{"AXDOMClassList":["form-control","pin-input"]}"#,
        // The known names, nested or in a list.
        r#"{"input":{"type":"password"}}"#,
        r#"{"html":{"attrs":{"autocomplete":"current-password"}}}"#,
        r#"{"type":["text","password"]}"#,
        r#"{"ax":[{"AXSubrole":"AXSecureTextField"}]}"#,
    ];
    for attributes in saying_secure {
        let bytes = field(attributes);
        assert!(masked_by_the_floor(&bytes), "{attributes} did not mask");
        for action in ["app", "focus", "selection", "window"] {
            let out = trim(&bytes, &Request::new(action));
            assert_never_sent(&out, SECRET, attributes);
        }
    }
}

#[test]
fn a_flag_that_is_not_set_or_a_word_that_only_resembles_one_does_not_mask() {
    for attributes in [
        r#"{}"#,
        r#"{"IsPassword":false}"#,
        r#"{"secure":"false"}"#,
        r#"{"password":null}"#,
        r#"{"isPinned":true}"#,
        r#"{"spinButton":true}"#,
        r#"{"role":"button"}"#,
        r#"{"ClassName":"Spinner"}"#,
        r#"{"AXDOMClassList":["footprint","secretary"]}"#,
        r#"{"label":"Show password"}"#,
        r#"{"input":{"kind":"password"}}"#,
        // Flags that say something else of a secret or of security: a
        // window served over HTTPS is not a password field.
        r#"{"isSecureContext":true}"#,
        r#"{"isSecure":true}"#,
        r#"{"passwordProtected":true}"#,
        r#"{"secureConnection":"true"}"#,
    ] {
        assert!(
            !masked_by_the_floor(&field(attributes)),
            "{attributes} masked"
        );
    }
}

// ---------------------------------------------------------------------------
// Redaction reads every line break as one.

/// `text` in a Text element, as the agent gets it with the app in scope.
fn sent_text(text: &str) -> String {
    let text = serde_json::to_string(text).unwrap();
    let bytes = app(&format!(
        r#"{{"id":"w","role":"Window","focused":true,"children":[{{"id":"t","role":"Text","content":[{{"type":"text","text":{text}}}]}}]}}"#
    ));
    let out = trim(&bytes, &Request::new("app"));
    out.rendered.to_string()
}

#[test]
fn a_card_number_wrapped_by_any_line_break_is_redacted() {
    // Before: a card wrapped by `\n` or `\r` was redacted, one wrapped by a
    // word processor's manual break (U+000B), a form feed, NEL or the
    // Unicode line and paragraph separators (a text view's soft and hard
    // breaks) was sent whole.
    let cards = [
        ["4111", "1111", "1111", "1111"],
        ["5500", "0000", "0000", "0004"],
        ["3782", "822463", "10005", ""],
        ["6011", "0009", "9013", "9424"],
    ];
    for brk in [
        "\u{0B}",
        "\u{0C}",
        "\u{85}",
        "\u{2028}",
        "\u{2029}",
        "\r\u{2028}",
    ] {
        for groups in cards {
            let groups: Vec<&str> = groups.into_iter().filter(|g| !g.is_empty()).collect();
            // Wrapped after every group, and only once in the middle.
            let every = groups.join(brk);
            let once = format!("{}{brk}{}", groups[..2].join(" "), groups[2..].join(" "));
            for text in [every, format!("Card: {once} exp 12/27")] {
                let sent = sent_text(&text);
                let digits: String = groups.concat();
                assert!(sent.contains("[card number]"), "{text:?}: {sent}");
                for g in &groups[1..] {
                    if g.len() >= 4 {
                        assert!(!sent.contains(&format!("{g}\\")), "{text:?}: {sent}");
                    }
                }
                assert!(!sent.contains(&digits), "{text:?}: {sent}");
            }
        }
    }
    // Lines of numbers that are not cards stay.
    for text in [
        "Order 1234\u{2028}Qty 5678",
        "+1 415 555 0123\u{2029}+1 415 555 0199",
        "2024\u{0B}2025\u{0B}2026",
    ] {
        let sent = sent_text(text);
        assert!(!sent.contains("[card number]"), "{text:?}: {sent}");
    }
}

// ---------------------------------------------------------------------------
// Redaction is a fixpoint, whatever stands next to a replacement.

#[test]
fn trimming_the_output_again_changes_nothing_when_a_replacement_completes_a_match_with_its_neighbours(
) {
    // Before: `http://a.comhttp://u:pw@h` (two urls glued, as pasted) was
    // sent as `http://a.comhttp:[credentials]@h`, in which
    // `://a.comhttp:[credentials]@` reads as a url's credentials: trimming
    // the output again changed it.
    let texts = [
        "see http://example.comhttps://deploy:s3cretpw@db.example.com/x",
        "s://x://u:pw@h",
        "ftp://mirror://anonymous:guest1@host and more",
        "pwd=411 111 111 111 1111 then",
        "[http://a.b]ssh://git://me:tok3n@host",
    ];
    for text in texts {
        let bytes = app(&format!(
            r#"{{"id":"w","role":"Window","focused":true,"children":[{{"id":"t","role":"Text","title":{t},"url":{t},"attributes":{{"note":{t}}},"content":[{{"type":"text","text":{t}}},{{"type":"text","text":{t}}}]}}]}}"#,
            t = serde_json::to_string(text).unwrap()
        ));
        let first = trim(&bytes, &Request::new("app"));
        let once = first.rendered.to_string();
        let second = trim(once.as_bytes(), &Request::new("app"));
        assert_eq!(once, second.rendered.to_string(), "{text:?}");
        for format in [Format::Json, Format::Outline] {
            let mut request = Request::new("app");
            request.format = format;
            let out = trim(&bytes, &request);
            for secret in ["s3cretpw", "pw@", "guest1", "tok3n"] {
                assert!(!out.rendered.contains(secret), "{text:?}: {}", out.rendered);
            }
        }
    }
}
