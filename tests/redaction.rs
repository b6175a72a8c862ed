//! Redaction through the real default policy (`Gate::embedded_default()`):
//!
//! - a table of the secret classes the policy knows and the shapes that hid
//!   them (digits around a card, CJK around a secret,
//!   other-script digits, a key without its END line, one secret after
//!   another, `_` suffixes), each with its exact output, and of the
//!   non-secrets that must stay;
//! - properties: a generated secret (a card of any network in any digit
//!   script and grouping, a key, a token, a PEM block) at a random place in
//!   random text never reaches the output, the report or the logs;
//!   redaction is a fixpoint; the result does not depend on the order of
//!   the patterns;
//! - the strings that leave besides text: nested attribute keys, content
//!   block keys, embedded resource keys; and the exceptions (base64 `data`);
//! - a policy whose replacement a pattern matches is refused.

mod common;

use common::gate;

use std::sync::OnceLock;

use ctxgate::{Answer, Content, Element, Gate, Policy, Request, Role};
use proptest::prelude::*;

/// The default policy with every redaction id renamed so that the patterns
/// sort in the opposite order (`99-card-number` ... `00-private-key`).
fn reversed_gate() -> &'static Gate {
    static GATE: OnceLock<Gate> = OnceLock::new();
    GATE.get_or_init(|| {
        let source = include_str!("../policies/default.rego");
        let mut ids: Vec<&str> = source
            .lines()
            .filter_map(|l| l.trim().strip_prefix("\"id\": \""))
            .map(|l| l.trim_end_matches("\","))
            .collect();
        ids.sort();
        let mut renamed = source.to_string();
        for (i, id) in ids.iter().enumerate() {
            renamed = renamed.replace(
                &format!("\"id\": \"{id}\","),
                &format!("\"id\": \"{:02}-{id}\",", 99 - i),
            );
        }
        let policy = Policy::from_sources(vec![("reversed.rego".into(), renamed)]).unwrap();
        Gate::new(policy)
    })
}

/// An app whose one Text element holds `blocks`, sent whole (`app`).
fn answer(blocks: &[String]) -> Answer<'static> {
    let mut root = Element::new("app", Role::Application);
    root.title = Some("App".into());
    let mut text = Element::new("t", Role::Text);
    text.content = blocks.iter().map(|b| Content::text(b.clone())).collect();
    root.children = vec![text].into();
    Answer {
        protocol: "0.2.0".into(),
        instance: "redaction".into(),
        root,
    }
}

/// Each block as the gate sends it, the report's redaction counts, the
/// rendered output, the report and the logs.
struct Sent {
    blocks: Vec<String>,
    counts: std::collections::BTreeMap<String, usize>,
    rendered: String,
    report: String,
    logs: String,
}

fn send(gate: &Gate, blocks: &[String]) -> Sent {
    let answer = answer(blocks);
    let (out, logs) = common::with_logs(|| gate.trim(&answer, &Request::new("app")));
    let out = out.expect("trimmed");
    let text = &out.answer.root.children[0];
    Sent {
        blocks: text
            .content
            .iter()
            .map(|c| match &c.block {
                ctxgate::Block::Text { text } => text.to_string(),
                other => panic!("not text: {other:?}"),
            })
            .collect(),
        counts: out
            .report
            .redactions
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(k, n)| (k.clone(), *n))
            .collect(),
        rendered: out.rendered.clone(),
        report: serde_json::to_string(&out.report).unwrap(),
        logs,
    }
}

fn redact(text: &str) -> String {
    send(gate(), &[text.to_string()]).blocks.remove(0)
}

/// `n` characters cycling through `alphabet`, starting at `from`.
fn chars(alphabet: &str, from: usize, n: usize) -> String {
    alphabet.chars().cycle().skip(from).take(n).collect()
}
const ALNUM: &str = "aB3dE5gH7jK9mN1pQ2sT4vW6yZ8cF0";
const HEX: &str = "0123456789abcdef";
const UPPER: &str = "IOSFODNN7EXAMPLE";

/// Secrets are assembled at run time, so that no scanner takes this file
/// for a leak.
fn table() -> Vec<(&'static str, String, String)> {
    let ghp = format!("ghp_{}", chars(ALNUM, 0, 36));
    let aws = format!("AKIA{UPPER}");
    let pem_body = "MIIEowIBAAKCAQEA7v1\nb3BlbnNzaC1rZXktdjE";
    vec![
        // Cards next to other digits.
        ("card, expiry after", "Visa 4111 1111 1111 1111 12/26".into(), "Visa [card number] 12/26".into()),
        ("card, CVV after", "4111 1111 1111 1111 123".into(), "[card number] 123".into()),
        ("card, CVV after, the 19 digits pass too", "4111 1111 1111 1111 789".into(), "[card number]".into()),
        ("card, quantity before", "Qty 2 4111 1111 1111 1111".into(), "Qty 2 [card number]".into()),
        ("card, year before", "2026 4111 1111 1111 1111 paid".into(), "2026 [card number] paid".into()),
        ("card, order id before", "#10442 4111-1111-1111-1111".into(), "#10442 [card number]".into()),
        ("card, a group glued to a letter after", "4000000000006 0a, x4111 1111 1111 1111".into(), "[card number] 0a, x4111 1111 1111 1111".into()),
        ("two cards in one run", "4111111111111111 5500000000000004".into(), "[card number] [card number]".into()),
        ("amex 4-6-5", "Amex 3782 822463 10005.".into(), "Amex [card number].".into()),
        ("diners 4-6-4", "3056 930902 5904".into(), "[card number]".into()),
        ("discover, no separators", "6011111111111117".into(), "[card number]".into()),
        ("19 digits", "6212 3456 7890 1234 569 vs 6212 3456 7890 1234 567".into(), "[card number] vs 6212 3456 7890 1234 567".into()),
        ("not luhn", "4111 1111 1111 1112".into(), "4111 1111 1111 1112".into()),
        // Separators people type.
        ("no-break and thin spaces", "4111\u{a0}1111\u{2009}1111\u{202f}1111".into(), "[card number]".into()),
        ("en dash and dots", "4111–1111–1111–1111 / 4111.1111.1111.1111".into(), "[card number] / [card number]".into()),
        ("spaced hyphens", "4111 - 1111 - 1111 - 1111".into(), "[card number]".into()),
        // CJK around secrets.
        ("card between kana", "カード番号4111111111111111です".into(), "カード番号[card number]です".into()),
        ("key before です", format!("キーは{aws}です"), "キーは[aws key]です".into()),
        ("token in CJK punctuation", format!("「{ghp}」。"), "「[github token]」。".into()),
        // Other scripts' digits.
        ("fullwidth digits", "４１１１ １１１１ １１１１ １１１１".into(), "[card number]".into()),
        ("fullwidth digits and ideographic spaces", "番号：４１１１\u{3000}１１１１\u{3000}１１１１\u{3000}１１１１".into(), "番号：[card number]".into()),
        ("arabic-indic digits", "٤١١١ ١١١١ ١١١١ ١١١١".into(), "[card number]".into()),
        ("devanagari digits", "४१११११११११११११११".into(), "[card number]".into()),
        // Boundaries.
        ("`_` suffix on a key", format!("{aws}_old"), "[aws key]_old".into()),
        ("`_` suffix on a token", format!("{ghp}_backup"), "[github token]_backup".into()),
        ("a key inside a word is not one", format!("x{aws} {aws}X"), format!("x{aws} {aws}X")),
        ("emoji delimits", format!("🔑{aws}🔑"), "🔑[aws key]🔑".into()),
        // One pass: order does not matter, the second trim changes nothing.
        ("slack token then a card", "xoxb-1234567890-abcdefghijKL 4111 1111 1111 1111".into(), "[slack token] [card number]".into()),
        ("card then a key", format!("4111 1111 1111 1111,{aws}"), "[card number],[aws key]".into()),
        // Private keys.
        ("pem block", format!("a\n-----BEGIN RSA PRIVATE KEY-----\n{pem_body}\n-----END RSA PRIVATE KEY-----\nb"), "a\n[private key]\nb".into()),
        ("pem header without END", format!("id_ed25519\n-----BEGIN OPENSSH PRIVATE KEY-----\n{pem_body}"), "id_ed25519\n[private key]".into()),
        ("pgp key block", format!("-----BEGIN PGP PRIVATE KEY BLOCK-----\n{pem_body}\n-----END PGP PRIVATE KEY BLOCK-----"), "[private key]".into()),
        ("public key stays", "-----BEGIN PUBLIC KEY-----\nMIIBIjAN".into(), "-----BEGIN PUBLIC KEY-----\nMIIBIjAN".into()),
        // Token formats.
        ("aws temporary key", format!("ASIA{UPPER}"), "[aws key]".into()),
        ("github fine-grained", format!("github_pat_11A{}_{}", chars(ALNUM, 1, 21), chars(ALNUM, 2, 59)), "[github token]".into()),
        ("gitlab", format!("glpat-{}", chars(ALNUM, 3, 20)), "[gitlab token]".into()),
        ("slack app-level", format!("xapp-1-A0123456789-1234567890123-{}", chars(HEX, 0, 64)), "[slack token]".into()),
        ("slack webhook", format!("https://hooks.slack.com/services/T0123ABCD/B0123ABCD/{}", chars(ALNUM, 4, 24)), "[slack token]".into()),
        ("stripe live", format!("sk_live_{}", chars(ALNUM, 5, 24)), "[stripe key]".into()),
        ("stripe restricted", format!("rk_live_{}", chars(ALNUM, 6, 99)), "[stripe key]".into()),
        ("stripe publishable stays", format!("pk_live_{}", chars(ALNUM, 6, 24)), format!("pk_live_{}", chars(ALNUM, 6, 24))),
        ("openai project key", format!("sk-proj-{}", chars(ALNUM, 7, 48)), "[api key]".into()),
        ("anthropic key", format!("sk-ant-api03-{}-{}AA", chars(ALNUM, 8, 40), chars(ALNUM, 9, 40)), "[api key]".into()),
        ("google api key", format!("AIza{}", chars(ALNUM, 10, 35)), "[google api key]".into()),
        ("google oauth secret", format!("GOCSPX-{}", chars(ALNUM, 11, 28)), "[google api key]".into()),
        ("npm", format!("npm_{}", chars(ALNUM, 12, 36)), "[registry token]".into()),
        ("hugging face", format!("hf_{}", chars(ALNUM, 13, 34)), "[registry token]".into()),
        ("sendgrid", format!("SG.{}.{}", chars(ALNUM, 14, 22), chars(ALNUM, 15, 43)), "[api key]".into()),
        ("twilio", format!("SK{}", chars(HEX, 1, 32)), "[api key]".into()),
        ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl".into(), "[jwt]".into()),
        ("bearer", format!("Authorization: Bearer {}", chars(ALNUM, 16, 32)), "Authorization: Bearer [token]".into()),
        ("azure storage key", format!("AccountName=x;AccountKey={}==;EndpointSuffix=core.windows.net", chars(ALNUM, 17, 86)), "AccountName=x;AccountKey=[azure key];EndpointSuffix=core.windows.net".into()),
        // Credentials written as people write them in configs, shells,
        // urls and headers (sent before).
        ("url credentials", "DATABASE_URL is postgres://app:Tr0ub4dor&3@db.internal:5432/x".into(), "DATABASE_URL is postgres:[credentials]@db.internal:5432/x".into()),
        ("url credentials, a token as the password", format!("git clone https://:{}@git.example.com/r", chars(ALNUM, 18, 24)), "git clone https:[credentials]@git.example.com/r".into()),
        ("basic authorization", "curl -H 'Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l' x".into(), "curl -H '[basic credentials]' x".into()),
        ("an assigned password", "export DB_PASSWORD=hunter22 && run".into(), "export DB_[credential] && run".into()),
        ("an assigned secret key in CJK", "鍵はSECRET_KEY=\"s3cr3t-v@lue\"です".into(), "鍵は[credential]です".into()),
        ("a quoted api key", r#"{"api_key": "abc def 123"}"#.into(), r#"{"[credential]}"#.into()),
        ("a query access token", "https://x.example/cb?access_token=abcd1234&state=9".into(), "https://x.example/cb?[credential]".into()),
        // Keys glued to the letters before them, a passcode or PIN, and a
        // token or key of any name (each was sent).
        ("a key glued to letters", "dbPassword=hunter22 MYSQLPWD=hunter22 userPin: 4821".into(), "[credential] [credential] [credential]".into()),
        ("a passcode", "Passcode: 482913".into(), "[credential]".into()),
        ("a PIN", "PIN: 1234 (pin=0000)".into(), "[credential] ([credential])".into()),
        ("a token of any name", "GITHUB_TOKEN=abcd1234efgh SECRET_TOKEN='s3cr3t v4lue'".into(), "GITHUB_[credential] SECRET_[credential]".into()),
        ("a private key assigned", "private_key=abcd1234efgh".into(), "[credential]".into()),
        ("settings that name tokens and pins", "max_token: 4096, Tokens: 1234, spin: 1234, Key: value, Pin: Home, PIN: 37.7749".into(), "max_token: 4096, Tokens: 1234, spin: 1234, Key: value, Pin: Home, PIN: 37.7749".into()),
        ("prose about passwords", "Forgot password? The password must have 8 characters.".into(), "Forgot password? The password must have 8 characters.".into()),
        ("a url with a user and no password", "ssh://git@github.com/x.git".into(), "ssh://git@github.com/x.git".into()),
        // Tabs, line breaks and `+` between groups (a card
        // wrapped in a narrow field, pasted from a table, or a form-encoded
        // query string was sent).
        ("tabs between groups", "card:\t4111\t1111\t1111\t1111".into(), "card:\t[card number]".into()),
        ("a card wrapped over lines", "Card 4111 1111\n1111 1111 on file".into(), "Card [card number] on file".into()),
        ("a card over CRLF lines", "4111\r\n1111\r\n1111\r\n1111".into(), "[card number]".into()),
        ("form-encoded spaces", "?cc=4111+1111+1111+1111&exp=12%2F26".into(), "?cc=[card number]&exp=12%2F26".into()),
        // Hidden by what a reader does not see, or by a url's encoding: the
        // pattern finds the secret as read, and its whole original range
        // is replaced (invisible and percent-encoded).
        ("zero-width spaces between a card's groups", "4111\u{200b}1111\u{200b}1111\u{200b}1111".into(), "[card number]".into()),
        ("soft hyphens between a card's groups", "4111\u{ad}1111\u{ad}1111\u{ad}1111 paid".into(), "[card number] paid".into()),
        ("a combining mark on every digit", "4\u{301}1\u{301}1\u{301}1\u{301}1\u{301}1\u{301}1\u{301}1\u{301}1\u{301}1\u{301}1\u{301}1\u{301}1\u{301}1\u{301}1\u{301}1\u{301}".into(), "[card number]".into()),
        ("keycap digits", "4\u{fe0f}\u{20e3}1\u{fe0f}\u{20e3}1\u{fe0f}\u{20e3}1\u{fe0f}\u{20e3}1\u{fe0f}\u{20e3}1\u{fe0f}\u{20e3}1\u{fe0f}\u{20e3}1\u{fe0f}\u{20e3}1\u{fe0f}\u{20e3}1\u{fe0f}\u{20e3}1\u{fe0f}\u{20e3}1\u{fe0f}\u{20e3}1\u{fe0f}\u{20e3}1\u{fe0f}\u{20e3}1\u{fe0f}\u{20e3}1\u{fe0f}\u{20e3}".into(), "[card number]".into()),
        ("em spaces and a minus sign between groups", "4111\u{2003}1111\u{2212}1111\u{205f}1111".into(), "[card number]".into()),
        ("a word joiner inside a token", format!("t {}\u{2060}{} t", &ghp[..20], &ghp[20..]), "t [github token] t".into()),
        ("a bidi mark inside a key", format!("AKIA\u{200e}{UPPER}"), "[aws key]".into()),
        ("a zero-width space in a PEM header", format!("-----BEGIN\u{200b} RSA PRIVATE KEY-----\n{pem_body}"), "[private key]".into()),
        ("fullwidth token", format!("ｇｈｐ＿{}", chars(ALNUM, 0, 36).chars().map(|c| char::from_u32(c as u32 + 0xFEE0).unwrap()).collect::<String>()), "[github token]".into()),
        ("percent-encoded space before a card", "q=card%204111111111111111&x=1".into(), "q=card%20[card number]&x=1".into()),
        ("percent-encoded `=` before a key", format!("?next=%2F%3Fk%3D{aws}"), "?next=%2F%3Fk%3D[aws key]".into()),
        ("percent-encoded token chars, encoded twice", format!("t=gh%2570_{}", chars(ALNUM, 0, 36)), "t=[github token]".into()),
        ("a zero-width space that delimits still delimits", format!("x\u{200b}{aws}\u{200b}x"), "x\u{200b}[aws key]\u{200b}x".into()),
        // Classes of app text the default redacts beside the token formats:
        // headers of any scheme, cookies, labelled national ids, IBANs by
        // their checksum, a secret key beside its id, bot tokens in urls,
        // url signatures, command-line flags, other languages' keys, PEM
        // with typographic dashes, escaped JSON, wrapped JWTs, encoded
        // card separators; and settings that name a secret.
        ("authorization, token scheme", format!("Authorization: Token {}", chars(ALNUM, 19, 24)), "[auth header]".into()),
        ("authorization, digest", "Authorization: Digest username=\"u\", response=\"6629fae49393a053\"".into(), "[auth header]".into()),
        ("cookie header", "Cookie: sessionid=abc123def456; theme=dark".into(), "[header withheld]".into()),
        ("session id in a url", "?PHPSESSID=9a8b7c6d5e4f3a2b&x=1".into(), "?[login state]&x=1".into()),
        ("ssn", "SSN: 123-45-6789.".into(), "[national id].".into()),
        ("iban", "IBAN DE89 3704 0044 0532 0130 00 EUR".into(), "IBAN [iban] EUR".into()),
        ("not an iban", "DE89 3704 0044 0532 0130 01".into(), "DE89 3704 0044 0532 0130 01".into()),
        ("aws secret beside its id", format!("{aws},{}", chars(ALNUM, 20, 40)), "[aws credentials]".into()),
        ("telegram bot url", format!("https://api.telegram.org/bot123456789:{}/sendMessage", chars(ALNUM, 21, 35)), "https://api.telegram.org/[bot token]/sendMessage".into()),
        ("signed url", "https://b.s3.amazonaws.com/k?X-Amz-Signature=0a1b2c3d4e5f&x=1".into(), "https://b.s3.amazonaws.com/k?[query credential]&x=1".into()),
        ("password flag", "app --password hunter2 --db-password=s3cret".into(), "app [credential] [credential]".into()),
        ("mysql -p", "$ mysql -u root -phunter2 shop".into(), "$ [credential] shop".into()),
        ("german key", "Passwort: geheim123".into(), "[credential]".into()),
        ("chinese key", "密码：hunter22".into(), "[credential]".into()),
        ("DB_PASS", "DB_PASS=hunter22".into(), "[credential]".into()),
        ("pem with em dashes", format!("—————BEGIN RSA PRIVATE KEY—————\n{pem_body}"), "[private key]".into()),
        ("escaped json", r#"{"body": "{\"password\": \"hunter22\"}"}"#.into(), r#"{"body": "{\"[credential]}"}"#.into()),
        ("jwt wrapped at a dot", "eyJhbGciOiJIUzI1NiJ9.\neyJzdWIiOiIxIn0.\nc2lnbmF0dXJl".into(), "[jwt]".into()),
        ("card with encoded no-break spaces", "4111%C2%A01111%C2%A01111%C2%A01111".into(), "[card number]".into()),
        ("card with thin-space references", "4111&#x2009;1111&#x2009;1111&#x2009;1111".into(), "[card number]".into()),
        ("card with katakana middle dots", "4111・1111・1111・1111".into(), "[card number]".into()),
        ("settings that name a secret", "reset_password: true, show_password=false, secretKey: null, require_secret: none".into(), "reset_password: true, show_password=false, secretKey: null, require_secret: none".into()),
        ("a password that starts like a setting", "password: true1234".into(), "[credential]".into()),
        // Non-secrets stay.
        ("phone", "+1 415 555 2671, +44 20 7946 0958".into(), "+1 415 555 2671, +44 20 7946 0958".into()),
        ("isbn", "ISBN 978-3-16-148410-0".into(), "ISBN 978-3-16-148410-0".into()),
        ("date and amount", "2026-12-01 12:30, $1,234,567.89".into(), "2026-12-01 12:30, $1,234,567.89".into()),
        ("version", "v1.2.3.4567 build 20261201".into(), "v1.2.3.4567 build 20261201".into()),
    ]
}

#[test]
fn every_class_is_redacted_to_its_exact_output() {
    let mut failures = Vec::new();
    for (name, input, expected) in table() {
        let out = redact(&input);
        if out != expected {
            failures.push(format!(
                "{name}:\n  input    {input:?}\n  expected {expected:?}\n  got      {out:?}"
            ));
        }
        let again = redact(&out);
        if again != out {
            failures.push(format!("{name}: not a fixpoint: {out:?} -> {again:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_report_counts_each_replacement_once_for_the_pattern_that_replaced_it() {
    let sent = send(
        gate(),
        &["4111 1111 1111 1111 and 5500 0000 0000 0004, xoxb-1234567890-abcdefghijKL".into()],
    );
    let counts: Vec<(&str, usize)> = sent.counts.iter().map(|(k, n)| (k.as_str(), *n)).collect();
    assert_eq!(counts, [("card-number", 2), ("slack-token", 1)]);
}

#[test]
fn keys_of_nested_attributes_content_blocks_and_resources_are_redacted() {
    let aws = format!("AKIA{UPPER}");
    let input = serde_json::json!({
        "protocol": "0.2.0",
        "instance": "t",
        "root": {
            "id": "app", "role": "Application", "title": "App",
            "children": [{
                "id": "t", "role": "Text",
                "attributes": {"note": {aws.clone(): {"inner": [{aws.clone(): 1}]}, "keep": 2}},
                "content": [
                    {"type": "text", "text": "hi", aws.clone(): "x", "_meta": {aws.clone(): true}},
                    {"type": "resource", "resource": {"uri": "file:///k", "text": "t", aws.clone(): "y"}},
                    {"type": "image", "data": aws.clone(), "mimeType": "image/png"},
                ],
            }],
        },
    })
    .to_string();
    let out = gate()
        .trim_bytes(input.as_bytes(), &Request::new("app"))
        .expect("trimmed");
    let sent: serde_json::Value = serde_json::from_str(&out.rendered).unwrap();
    let text = &sent["root"]["children"][0];
    assert_eq!(
        text["attributes"]["note"],
        serde_json::json!({"[aws key]": {"inner": [{"[aws key]": 1}]}, "keep": 2})
    );
    assert_eq!(
        text["content"][0],
        serde_json::json!({"type": "text", "text": "hi", "[aws key]": "x", "_meta": {"[aws key]": true}})
    );
    assert_eq!(
        text["content"][1],
        serde_json::json!({"type": "resource", "resource": {"uri": "file:///k", "text": "t", "[aws key]": "y"}})
    );
    // The exception SECURITY.md lists: base64 payloads are binary, not text.
    assert_eq!(text["content"][2]["data"], serde_json::json!(aws));
    assert_eq!(out.rendered.matches(&aws).count(), 1, "{}", out.rendered);
}

#[test]
fn a_replacement_that_a_pattern_matches_is_refused() {
    let source = r#"package ctxgate
redact contains {"id": "code", "pattern": `[A-Z]{4}-[0-9]{4}`}
redact contains {"id": "tag", "pattern": `\[[a-z]+\]`, "replace": "[tag]"}
"#;
    // Refused at load: loading evaluates every action's plan.
    let err = Policy::from_sources(vec![("p.rego".into(), source.into())]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "policy p.rego:2:1: the `replace` of `code` is matched by the pattern of `tag`, so \
         redacting the output again would change it; choose a replacement no pattern matches \
         (evaluating `redact` for action `selection`)"
    );
    let source = "package ctxgate\nredact contains {\"id\": \"code\", \"pattern\": `KEY-[0-9]+`, \"replace\": \"KEY-$0\"}\n";
    let err = Policy::from_sources(vec![("p.rego".into(), source.into())]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "policy p.rego:2:1: the `replace` of `code` contains `$`; replacements are literal text \
         (a capture would copy the secret into the output): remove the `$` (evaluating `redact` \
         for action `selection`)"
    );
}

// ---------------------------------------------------------------------------
// Properties.

/// Card networks: a prefix and the lengths it comes in.
const NETWORKS: [(&str, &[usize]); 12] = [
    ("4", &[13, 16, 19]),      // Visa
    ("51", &[16]),             // Mastercard
    ("2720", &[16]),           // Mastercard 2-series
    ("34", &[15]),             // Amex
    ("37", &[15]),             // Amex
    ("6011", &[16, 19]),       // Discover
    ("36", &[14]),             // Diners
    ("3528", &[16, 19]),       // JCB
    ("62", &[16, 17, 18, 19]), // UnionPay
    ("6759", &[13, 15, 19]),   // Maestro
    ("2200", &[16]),           // Mir
    ("8171", &[16]),           // RuPay
];
/// Zeros of the digit scripts a card is written in.
const SCRIPTS: [u32; 5] = [0x30, 0xFF10, 0x660, 0x966, 0x6F0];
const SEPARATORS: [&str; 8] = [" ", "-", "\u{a0}", "\u{2009}", "\u{202f}", "–", ".", " - "];

fn card(
    network: usize,
    len: usize,
    body: &[u8],
    script: usize,
    grouping: usize,
    sep: usize,
) -> String {
    let (prefix, lengths) = NETWORKS[network % NETWORKS.len()];
    let len = lengths[len % lengths.len()];
    let mut digits: Vec<u32> = prefix.bytes().map(|b| u32::from(b - b'0')).collect();
    digits.extend(
        body.iter()
            .map(|b| u32::from(b % 10))
            .take(len - 1 - digits.len()),
    );
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| match (i % 2 == 0, d * 2) {
            (true, t) if t > 9 => t - 9,
            (true, t) => t,
            (false, _) => d,
        })
        .sum();
    digits.push((10 - sum % 10) % 10);
    let zero = SCRIPTS[script % SCRIPTS.len()];
    let glyphs: Vec<char> = digits
        .iter()
        .map(|d| char::from_u32(zero + d).unwrap())
        .collect();
    let sizes: &[usize] = match (grouping % 3, len) {
        (0, _) => &[len],
        (1, 15) => &[4, 6, 5],
        (1, 14) => &[4, 6, 4],
        (_, _) => &[4, 4, 4, 4, 4],
    };
    let mut out = String::new();
    let mut at = 0;
    for &size in sizes {
        if at >= len {
            break;
        }
        if at > 0 {
            out.push_str(SEPARATORS[sep % SEPARATORS.len()]);
        }
        let end = (at + size).min(len);
        // A short last group (3 digits of a 19-digit card) is fine; a
        // shorter one is merged into the group before it.
        let end = if len - end < 3 { len } else { end };
        out.extend(&glyphs[at..end]);
        at = end;
    }
    out
}

fn secret() -> impl Strategy<Value = String> {
    let token = (0..17usize, 0..30usize).prop_map(|(kind, from)| {
        let a = |n| chars(ALNUM, from, n);
        match kind {
            0 => format!(
                "AKIA{}",
                chars("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", from, 16)
            ),
            1 => format!("ghp_{}", a(36)),
            2 => format!("github_pat_{}", a(60)),
            3 => format!("glpat-{}", a(20)),
            4 => format!("xoxb-{}-{}", chars(HEX, from, 12), a(24)),
            5 => format!("xapp-1-A{}-{}", chars(HEX, from, 10), a(40)),
            6 => format!("sk_live_{}", a(24)),
            7 => format!("rk_live_{}", a(30)),
            8 => format!("sk-proj-{}", a(40)),
            9 => format!("AIza{}", a(35)),
            10 => format!("npm_{}", a(36)),
            11 => format!("SG.{}.{}", a(22), chars(ALNUM, from + 3, 43)),
            12 => format!("eyJ{}.eyJ{}.{}", a(12), a(20), a(16)),
            13 => format!(
                "-----BEGIN EC PRIVATE KEY-----\n{}\n{}\n-----END EC PRIVATE KEY-----",
                a(64),
                a(20)
            ),
            14 => format!("-----BEGIN PRIVATE KEY-----\n{}", a(64)),
            15 => format!("hf_{}", a(34)),
            _ => format!("SK{}", chars(HEX, from, 32)),
        }
    });
    let card = (
        any::<usize>(),
        any::<usize>(),
        proptest::collection::vec(any::<u8>(), 19),
        any::<usize>(),
        any::<usize>(),
        any::<usize>(),
    )
        .prop_map(|(n, l, body, script, grouping, sep)| card(n, l, &body, script, grouping, sep));
    prop_oneof![card, token]
}

/// Text a secret may sit in. None of it ends or starts in an ASCII letter
/// or digit next to the secret: [`delimiter`] goes between.
fn surrounding() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("カード番号".to_string()),
        Just("です".to_string()),
        Just("支払い".to_string()),
        Just("12/26".to_string()),
        Just("2026".to_string()),
        Just("x 2".to_string()),
        Just("CVV 123".to_string()),
        Just("Qty 3".to_string()),
        Just("lorem ipsum".to_string()),
        Just("\n\n".to_string()),
        Just("💳".to_string()),
        Just("¡!?;:,.()[]{}\"'".to_string()),
        Just("+1 415 555 2671".to_string()),
        Just("978-3-16-148410-0".to_string()),
        "[a-z0-9 ]{0,12}",
        "\\PC{0,6}",
    ];
    proptest::collection::vec(piece, 0..4).prop_map(|p| p.join(" "))
}

/// What goes right next to a secret: never an ASCII letter or digit, nor a
/// digit of any script (a digit glued to a card makes another number).
fn delimiter() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(" ".to_string()),
        Just("\n".to_string()),
        Just("、".to_string()),
        Just("です".to_string()),
        Just("番号".to_string()),
        Just("💳".to_string()),
        Just("_".to_string()),
        Just(": ".to_string()),
        Just("(".to_string()),
        Just(")".to_string()),
        Just("/".to_string()),
        Just("\t".to_string()),
        Just("\u{3000}".to_string()),
        Just("— ".to_string()),
    ]
}

fn embedded() -> impl Strategy<Value = (Vec<String>, Vec<String>)> {
    (
        surrounding(),
        delimiter(),
        proptest::collection::vec(secret(), 1..3),
        delimiter(),
        surrounding(),
        surrounding(),
    )
        .prop_map(|(before, d1, secrets, d2, after, next)| {
            let text = format!("{before}{d1}{}{d2}{after}", secrets.join(&d1));
            (vec![text, next], secrets)
        })
}

/// What a reader sees of text: no format chars, combining marks or
/// variation selectors, printable ASCII percent-escapes decoded (three
/// rounds). The test's own reading, to check the gate's.
fn as_read(text: &str) -> String {
    let mut read: String = text
        .chars()
        .filter(|&c| {
            !matches!(c, '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}'
                | '\u{feff}' | '\u{300}'..='\u{36f}' | '\u{20d0}'..='\u{20ff}' | '\u{fe00}'..='\u{fe0f}'
                | '\u{e0020}'..='\u{e007f}')
        })
        .collect();
    // Escapes of printable ASCII, decoded three rounds: `%HH`, `&#D;`,
    // `&#xH;`, `\uHHHH`, found by regex (an independent decoder).
    let escape = regex::Regex::new(
        r"%([0-9A-Fa-f]{2})|&#([0-9]{1,7});|&#[xX]([0-9A-Fa-f]{1,7});|\\u([0-9A-Fa-f]{4})",
    )
    .unwrap();
    for _ in 0..3 {
        read = escape
            .replace_all(&read, |c: &regex::Captures| {
                let (digits, radix) = match (c.get(1), c.get(2), c.get(3), c.get(4)) {
                    (Some(d), ..) => (d, 16),
                    (_, Some(d), ..) => (d, 10),
                    (_, _, Some(d), _) => (d, 16),
                    (.., Some(d)) => (d, 16),
                    _ => unreachable!(),
                };
                u32::from_str_radix(digits.as_str(), radix)
                    .ok()
                    .filter(|b| (0x20..0x7f).contains(b))
                    .and_then(char::from_u32)
                    .map_or_else(|| c[0].to_string(), String::from)
            })
            .into_owned();
    }
    read
}

/// A secret with invisible chars put between its chars (`hide` picks
/// where and which), or some of its ASCII chars percent-encoded: text that
/// reads as the secret. Never at its ends, which may delimit it.
fn disguised() -> impl Strategy<Value = (String, String)> {
    const INVISIBLE: [&str; 10] = [
        "\u{200b}",
        "\u{ad}",
        "\u{2060}",
        "\u{feff}",
        "\u{200e}",
        "\u{fe0f}",
        "\u{301}",
        "\u{200d}",
        "\u{e0020}",
        "\u{202c}",
    ];
    (
        secret(),
        proptest::collection::vec((any::<u8>(), any::<u8>(), any::<bool>()), 1..6),
    )
        .prop_map(|(secret, hides)| {
            let chars: Vec<char> = secret.chars().collect();
            let mut out = String::new();
            for (i, c) in chars.iter().enumerate() {
                let hide = hides.iter().find(|h| usize::from(h.0) % chars.len() == i);
                match hide {
                    // HTML character references and JSON
                    // `\u` escapes (app text carrying HTML or JSON source)
                    // hid a secret as percent-escapes once did.
                    Some(&(_, which, true))
                        if c.is_ascii_graphic() && i > 0 && i + 1 < chars.len() =>
                    {
                        let code = *c as u32;
                        out.push_str(&match which % 4 {
                            0 => format!("%{code:02X}"),
                            1 => format!("&#{code};"),
                            2 => format!("&#x{code:x};"),
                            _ => format!("\\u{code:04X}"),
                        });
                    }
                    Some(&(_, which, _)) if i > 0 => {
                        out.push_str(INVISIBLE[usize::from(which) % INVISIBLE.len()]);
                        out.push(*c);
                    }
                    _ => out.push(*c),
                }
            }
            (out, secret)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn a_secret_disguised_by_invisible_chars_or_percent_escapes_never_leaves(
        before in surrounding(),
        d1 in delimiter(),
        (disguised, secret) in disguised(),
        d2 in delimiter(),
        after in surrounding(),
    ) {
        let text = format!("{before}{d1}{disguised}{d2}{after}");
        let sent = send(gate(), std::slice::from_ref(&text));
        let read = as_read(&sent.blocks.join("\u{0}"));
        for line in secret.lines().filter(|l| l.chars().count() >= 8) {
            prop_assert!(!read.contains(line), "{secret:?} read in {:?}", sent.blocks);
            prop_assert!(!as_read(&sent.report).contains(line), "{secret:?} in the report");
            prop_assert!(!as_read(&sent.logs).contains(line), "{secret:?} in the logs");
        }
        let again = send(gate(), &sent.blocks);
        prop_assert_eq!(&again.blocks, &sent.blocks);
        let reversed = send(reversed_gate(), &[text]);
        prop_assert_eq!(&reversed.blocks, &sent.blocks);
    }

    #[test]
    fn an_embedded_secret_never_leaves((blocks, secrets) in embedded()) {
        let sent = send(gate(), &blocks);
        let text = sent.blocks.join("\u{0}");
        for s in &secrets {
            // Every line, so that JSON escaping cannot hide a PEM block.
            for line in s.lines().filter(|l| l.chars().count() >= 8) {
                prop_assert!(!text.contains(line), "{s:?} sent: {:?}", sent.blocks);
                prop_assert!(!sent.rendered.contains(line), "{s:?} in the rendering");
                prop_assert!(!sent.report.contains(line), "{s:?} in the report");
                prop_assert!(!sent.logs.contains(line), "{s:?} in the logs");
            }
        }
        // A fixpoint: redacting what was sent changes nothing.
        let again = send(gate(), &sent.blocks);
        prop_assert_eq!(&again.blocks, &sent.blocks);
        prop_assert!(again.counts.is_empty(), "{:?}", again.counts);
        // The order of the patterns does not matter.
        let reversed = send(reversed_gate(), &blocks);
        prop_assert_eq!(&reversed.blocks, &sent.blocks);
    }

    #[test]
    fn redaction_of_any_text_is_a_fixpoint_and_order_independent(text in "\\PC{0,80}|[0-9 \\-a-zA-Z_]{0,80}") {
        let sent = send(gate(), std::slice::from_ref(&text));
        let again = send(gate(), &sent.blocks);
        prop_assert_eq!(&again.blocks, &sent.blocks);
        let reversed = send(reversed_gate(), &[text]);
        prop_assert_eq!(&reversed.blocks, &sent.blocks);
    }
}

#[test]
fn the_digit_table_matches_the_regex_crate() {
    // Every code point `\d` matches is a digit of a block of ten whose zero
    // the table lists, and nothing else is (see `redact::DIGIT_ZEROS`).
    let digit = regex::Regex::new(r"^\d$").unwrap();
    let mut zeros = Vec::new();
    let mut run: Option<(u32, u32)> = None;
    for c in (0..0x11_0000u32).filter_map(char::from_u32) {
        let mut buf = [0u8; 4];
        if digit.is_match(c.encode_utf8(&mut buf)) {
            let c = c as u32;
            let start = match run {
                Some((start, last)) if last + 1 == c => start,
                _ => c,
            };
            if (c - start) % 10 == 0 {
                zeros.push(c);
            }
            run = Some((start, c));
        }
    }
    // The table is private; a card in each block's digits is redacted.
    for zero in zeros {
        let card: String = "4111111111111111"
            .bytes()
            .map(|b| char::from_u32(zero + u32::from(b - b'0')).unwrap())
            .collect();
        assert_eq!(redact(&card), "[card number]", "digits from U+{zero:04X}");
    }
}

#[test]
fn a_secret_split_across_text_blocks_is_redacted_in_each() {
    let body = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw";
    let sent = send(
        gate(),
        &[
            "key file:\n-----BEGIN RSA PRIVATE KEY-----".to_string(),
            format!("{body}\n-----END RSA PRIVATE KEY-----\nafter"),
            "next block".to_string(),
        ],
    );
    assert_eq!(
        sent.blocks,
        [
            "key file:\n[private key]",
            "[private key]\nafter",
            "next block"
        ]
    );
    assert!(!sent.rendered.contains("MIIE") && !sent.report.contains("MIIE"));
    // Redacted again: the same (a fixpoint across blocks too).
    assert_eq!(send(gate(), &sent.blocks).blocks, sent.blocks);
    // A key whose END line never comes withholds every block after it.
    let sent = send(
        gate(),
        &[
            "-----BEGIN PRIVATE KEY-----".to_string(),
            body.to_string(),
            body.to_string(),
        ],
    );
    assert_eq!(
        sent.blocks,
        ["[private key]", "[private key]", "[private key]"]
    );
}

#[test]
fn numbers_in_attributes_are_redacted_as_their_text() {
    let mut root = Element::new("app", Role::Application);
    let mut field = Element::new("f", Role::Text);
    field.attributes.insert(
        "card".into(),
        serde_json::json!({"n": 4111111111111111u64, "f": 4.111111111111111e15, "ok": 42}),
    );
    root.children = vec![field].into();
    let answer = Answer {
        protocol: "0.2.0".into(),
        instance: "i".into(),
        root,
    };
    let out = gate().trim(&answer, &Request::new("app")).unwrap();
    assert_eq!(
        out.answer.root.children[0].attributes["card"],
        serde_json::json!({"n": "[card number]", "f": "[card number].0", "ok": 42})
    );
}

#[test]
fn tokens_glued_to_letters_again_and_again_cost_linear_time() {
    // `xsk-` repeated: every `sk-…` match is glued to the `x` before it and
    // runs to the end of the text. Searching each one to its end made this
    // quadratic (1 MB: 76 s); it must now end well within the request's
    // default deadline, which turns a regression into an error here.
    // (The secret comes first: the default budget cuts the long text.)
    let text = "sk-abcdefghijklmnopqrstuvwxyz0123 ".to_string() + &"xsk-".repeat(50_000);
    let out = redact(&text);
    assert!(out.starts_with("[api key] xsk-xsk-"), "{}", &out[..40]);
}
