//! The embedded default policy's patterns as build.rs precompiles them
//! (`redact::Pattern`): every pattern its plans use is precompiled, and
//! the DFAs find what `regex::Regex` finds, match for match, on strings
//! built to sit at the patterns' edges.

use crate::policy::{Action, Policy, RequestInput};
use crate::redact::Pattern;

fn plans() -> Vec<std::sync::Arc<crate::policy::RequestPlan>> {
    let policy = Policy::embedded_default().unwrap();
    ["selection", "focus", "window", "app", "some-host-action"]
        .iter()
        .map(|action| {
            policy
                .plan(&RequestInput {
                    action: Action {
                        name: action.to_string(),
                        target: None,
                    },
                    instance: "test".to_string(),
                    protocol: crate::PROTOCOL.to_string(),
                })
                .unwrap()
        })
        .collect()
}

/// A plan read from the default's table does not check its replacements
/// (`engine::Replacements::Checked`): the same plans, evaluated by the
/// interpreter, do, and pass.
#[test]
fn the_defaults_replacements_pass_the_check_its_table_skips() {
    let policy = Policy::embedded_default().unwrap();
    for (plan, action) in plans()
        .iter()
        .zip(["selection", "focus", "window", "app", "x"])
    {
        crate::redact::check_replacements(&plan.redact).unwrap();
        let request = RequestInput {
            action: Action {
                name: action.to_string(),
                target: None,
            },
            instance: "test".to_string(),
            protocol: crate::PROTOCOL.to_string(),
        };
        let interpreted = policy.plan_through_interpreter(&request).unwrap();
        let ids = |p: &crate::policy::RequestPlan| -> Vec<(String, String)> {
            p.redact
                .iter()
                .map(|r| (r.id.clone(), r.replace.clone()))
                .collect()
        };
        assert_eq!(ids(&interpreted), ids(plan), "{action}");
    }
}

/// Every pattern of the default's plans, as written.
fn default_patterns() -> Vec<String> {
    let mut out = Vec::new();
    for plan in plans() {
        let redact = plan.redact.iter().map(|r| &r.regex);
        for pattern in redact.chain(plan.title_patterns.iter().map(|(_, p)| p)) {
            assert!(
                pattern.precompiled().is_some(), // and not broken: it loads
                "`{}` of the default policy is compiled at run time: build.rs did not precompile it",
                pattern.as_str()
            );
            if !out.iter().any(|p| p == pattern.as_str()) {
                out.push(pattern.as_str().to_string());
            }
        }
    }
    out
}

/// What the filters are for (BENCHMARKS.md, "Start-up"): the
/// titles of the real tree the start-up is measured on (all but
/// `Password:`) are searched with no title pattern, and a replacement with
/// no pattern but `token-assignment` (and `credential-assignment`), whose
/// needle `token` the replacement `Bearer [token]` holds, and
/// `national-id`, whose label needle `nati` its own `[national id]` holds. A plan from the
/// default's table does not check its replacements at all (the
/// interpreter's plans do:
/// `the_defaults_replacements_pass_the_check_its_table_skips`), so it loads
/// only once text holds one. The filters' soundness is
/// `the_dfas_find_what_regex_finds`'s.
#[test]
fn the_filters_skip_the_replacements_and_plain_titles() {
    let plan = &plans()[0];
    for r in &plan.redact {
        for other in &plan.redact {
            assert!(
                !crate::redact::reads_as(&other.regex, &r.replace),
                "`{}` matches the replacement of `{}`",
                other.id,
                r.id
            );
            assert!(
                other.id.contains("-assignment")
                    || other.id == "national-id"
                    || !other.regex.has_needles()
                    || !other.regex.may_match(&r.replace, 0),
                "`{}` would load to search the replacement of `{}`",
                other.id,
                r.id
            );
        }
    }
    let titles = [
        "Default:", "Color:", "Email:", "Search:", "Tel:", "Text:", "Url:", "Phone",
    ];
    for (name, pattern) in &plan.title_patterns {
        for title in titles {
            assert!(
                !pattern.may_match(title, 0),
                "`{name}` would load for {title:?}"
            );
        }
    }
    let password = &plan
        .title_patterns
        .iter()
        .find(|(n, _)| n == "password")
        .unwrap()
        .1;
    assert!(password.may_match("Password:", 0) && password.is_match("Password:"));
    let card = &plan
        .redact
        .iter()
        .find(|r| r.id == "card-number")
        .unwrap()
        .regex;
    assert!(!card.may_match("no digits here", 0));
    assert!(card.may_match("digit \u{0664} here", 0) && card.may_match("4111", 0));
}

#[test]
fn every_pattern_of_the_default_is_precompiled() {
    let patterns = default_patterns();
    // The plans were read (14 redactions and 4 title patterns).
    assert!(!patterns.is_empty());
}

#[test]
fn another_pattern_is_compiled_and_errors_are_regex_errors() {
    assert_eq!(Pattern::new("secret-[0-9]+").unwrap().precompiled(), None);
    // Not a literal, which clippy would check.
    let unclosed = String::from("(unclosed");
    let err = Pattern::new(&unclosed).unwrap_err().to_string();
    assert_eq!(err, regex::Regex::new(&unclosed).unwrap_err().to_string());
}

/// Pieces the test strings are made of: each pattern's literals and
/// classes, the characters Unicode case folding and `\d`/`\s` reach, and
/// delimiters.
const PIECES: &[&str] = &[
    "4111",
    "1111",
    "5500",
    "0000",
    "0004",
    "378282246310005",
    "٣",
    "４",
    "𝟘",
    "1",
    "9",
    " ",
    "-",
    ".",
    "\u{A0}",
    "\u{2007}",
    "\u{2009}",
    "\u{202F}",
    "\u{3000}",
    "\u{2010}",
    "\u{2013}",
    "\u{FF0D}",
    "--",
    "AKIA",
    "ASIA",
    "ABIA",
    "ACCA",
    "ABCDEFGHIJKLMNOP",
    "AccountKey=",
    "==",
    "ghp_",
    "gho_",
    "ghs_",
    "github_pat_",
    "glpat-",
    "glagent-",
    "glsoat-",
    "xoxb-",
    "xapp-",
    "https://hooks.slack.com/services/",
    "https://hooks.slack.com/workflows/",
    "sk_live_",
    "rk_test_",
    "whsec_",
    "sk-",
    "sk-proj-",
    "AIza",
    "GOCSPX-",
    "ya29.",
    "npm_",
    "pypi-AgEIcHlwaS5vcmc",
    "hf_",
    "SG.",
    "SK",
    "shpat_",
    "dop_v1_",
    "dapi",
    "AGE-SECRET-KEY-1",
    "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
    "eyJ",
    "abcDEF",
    "0123456789abcdef",
    "Bearer ",
    "bearer\t",
    "BEARER  ",
    "-----BEGIN ",
    "RSA ",
    "OPENSSH ",
    "PRIVATE KEY",
    " BLOCK",
    "-----",
    "-----END ",
    "\n",
    "Authorization: Basic ",
    "authorization=basic\t",
    "://",
    ":",
    "@",
    "https://",
    "user:",
    "?",
    "=>",
    ":=",
    "\"",
    "'",
    "DB_PASSWORD=",
    "pwd",
    "api_key",
    "client-secret",
    "SECRET_ACCESS_KEY",
    "access_token",
    "password",
    "Pass word",
    "PASSWORD",
    "passphrase",
    "Passwort",
    "mot de passe",
    "contraseña",
    "KENNWORT",
    "passcode",
    "xPASSCODE",
    "PIN",
    "PINS",
    "pin",
    "Pin_",
    "_pin",
    "aPin",
    "pinCode",
    "PIN number",
    "spinner",
    "one time code",
    "one-time-password",
    "two_factor",
    "verification code",
    "security-code",
    "OTP",
    "otp",
    "Mfa",
    "2FA",
    "aOtp",
    "s",
    "ſ",
    "K",
    "k",
    "é",
    "日本",
    "😀",
    "_",
    "/",
    "+",
    "~",
    "=",
    "a",
    "Z",
    "x",
    "0",
];

/// A secret of each shape the default redacts, whole; the test strings hold
/// them whole and one character short.
fn examples() -> Vec<String> {
    let alnum = |n: usize| "aB3dE5gH7j".chars().cycle().take(n).collect::<String>();
    let hex = |n: usize| {
        "0a1b2c3d4e5f6789"
            .chars()
            .cycle()
            .take(n)
            .collect::<String>()
    };
    vec![
        format!("AccountKey={}==", alnum(86)),
        "AKIAABCDEFGHIJKLMNOP".to_string(),
        format!("GITHUB_TOKEN={}", alnum(20)),
        format!("ghp_{}", alnum(36)),
        format!("github_pat_{}", alnum(22)),
        format!("glpat-{}", alnum(20)),
        format!("xoxb-{}", alnum(10)),
        format!("https://hooks.slack.com/services/{}", alnum(20)),
        format!("sk_live_{}", alnum(16)),
        format!("sk-{}", alnum(20)),
        format!("AIza{}", alnum(35)),
        format!("GOCSPX-{}", alnum(28)),
        format!("ya29.{}", alnum(20)),
        format!("npm_{}", alnum(36)),
        format!("hf_{}", alnum(34)),
        format!("pypi-AgEIcHlwaS5vcmc{}", alnum(50)),
        format!("SG.{}.{}", alnum(22), alnum(43)),
        format!("SK{}", hex(32)),
        format!("shpat_{}", hex(32)),
        format!("dop_v1_{}", hex(64)),
        format!("dapi{}", hex(32)),
        format!(
            "AGE-SECRET-KEY-1{}",
            "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L".repeat(2)[..58].to_string()
        ),
        "eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl".to_string(),
        "Bearer abcdefghijklmnop1234==".to_string(),
        "-----BEGIN RSA PRIVATE KEY-----\nMIIabc\n-----END RSA PRIVATE KEY-----".to_string(),
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1r".to_string(),
        "4111 1111 1111 1111".to_string(),
        "Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l".to_string(),
        "https://user:hunter22@db.example.com".to_string(),
        "DB_PASSWORD=hunter22".to_string(),
        "\"api_key\": \"abc def\"".to_string(),
        "Authorization: Token abcdef123456".to_string(),
        "Cookie: sessionid=abcdef123456".to_string(),
        "PHPSESSID=abcdef123456".to_string(),
        "SSN: 123-45-6789".to_string(),
        "身份证号：11010519491231002X".to_string(),
        "DE89 3704 0044 0532 0130 00".to_string(),
        format!("AKIAABCDEFGHIJKLMNOP,{}", alnum(40)),
        format!("https://api.telegram.org/bot123456789:{}", alnum(35)),
        "?X-Amz-Signature=abcdef0123".to_string(),
        "--password hunter2".to_string(),
        "mysql -u root -phunter2".to_string(),
        "Passwort: hunter2".to_string(),
        "пароль: hunter2".to_string(),
        format!("lin_api_{}", alnum(40)),
        format!("sbp_{}", hex(40)),
        "Password".to_string(),
        "Passcode".to_string(),
        "PIN code".to_string(),
        "One-time code".to_string(),
    ]
}

/// Deterministic pseudo-random strings (xorshift), from 0 to ~60 pieces
/// ([`PIECES`] and [`examples`]), some with a piece repeated into a long
/// run.
fn strings(count: usize) -> Vec<String> {
    let mut pieces: Vec<String> = PIECES.iter().map(|p| p.to_string()).collect();
    for example in examples() {
        let mut short = example.clone();
        short.pop();
        pieces.push(short);
        pieces.push(example);
    }
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..count)
        .map(|_| {
            let mut s = String::new();
            let length = next() % 60;
            for _ in 0..length {
                let piece = &pieces[(next() % pieces.len() as u64) as usize];
                let times = if next() % 8 == 0 { next() % 90 } else { 1 };
                for _ in 0..times {
                    s.push_str(piece);
                }
            }
            s
        })
        .collect()
}

/// Every match `regex` finds from `start`, stepping as the redactor does
/// (past a match, or one character past an empty one).
fn walk(
    mut find: impl FnMut(usize) -> Option<std::ops::Range<usize>>,
    text: &str,
    mut at: usize,
) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    while at <= text.len() {
        let Some(m) = find(at) else { break };
        at = if m.is_empty() {
            m.start + text[m.start..].chars().next().map_or(1, char::len_utf8)
        } else {
            m.end
        };
        out.push(m);
    }
    out
}

#[test]
fn the_dfas_find_what_regex_finds() {
    let patterns = default_patterns();
    // Each example alone, then generated strings of pieces and examples.
    let mut texts = examples();
    texts.extend(strings(super::cases(1500, 300)));
    let mut matched = vec![0usize; patterns.len()];
    for (i, text) in patterns.iter().enumerate() {
        let pattern = Pattern::new(text).unwrap();
        let regex = regex::Regex::new(text).unwrap();
        for s in &texts {
            // From the start, and from a character boundary inside (the
            // text before it is context for `^`).
            let inside = s
                .char_indices()
                .map(|(at, _)| at)
                .nth(s.len() % 7)
                .unwrap_or(0);
            for start in [0, inside] {
                let want = walk(|at| regex.find_at(s, at).map(|m| m.range()), s, start);
                // The prefixes, which keep a pattern unloaded, pass every
                // text holding a match (once loaded, a pattern skips them).
                for m in &want {
                    assert!(
                        pattern.may_match(s, start),
                        "`{text}` on {s:?} from {start}"
                    );
                    assert!(
                        pattern.may_match(s, m.start),
                        "`{text}` on {s:?} from {}",
                        m.start
                    );
                }
                let got = walk(|at| pattern.find_at(s, at), s, start);
                assert_eq!(got, want, "`{text}` on {s:?} from {start}");
                matched[i] += want.len();
            }
            assert_eq!(pattern.is_match(s), regex.is_match(s), "`{text}` on {s:?}");
        }
    }
    // The strings reach every pattern (a test that matched nothing would
    // compare nothing).
    for (text, n) in patterns.iter().zip(&matched) {
        assert!(*n > 0, "no test string matches `{text}`");
    }
}
