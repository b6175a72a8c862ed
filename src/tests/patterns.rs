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

/// Every pattern of the default's plans, as written.
fn default_patterns() -> Vec<String> {
    let mut out = Vec::new();
    for plan in plans() {
        let redact = plan.redact.iter().map(|r| &r.regex);
        for pattern in redact.chain(plan.title_patterns.iter().map(|(_, p)| p)) {
            assert!(
                pattern.precompiled().is_some(),
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

#[test]
fn every_pattern_of_the_default_is_precompiled() {
    let patterns = default_patterns();
    // 14 redactions and 4 title patterns (issue 18); more is fine.
    assert!(patterns.len() >= 18, "{patterns:?}");
}

#[test]
fn another_pattern_is_compiled_and_errors_are_regex_errors() {
    assert_eq!(Pattern::new("secret-[0-9]+").unwrap().precompiled(), None);
    let err = Pattern::new("(unclosed").unwrap_err().to_string();
    assert_eq!(err, regex::Regex::new("(unclosed").unwrap_err().to_string());
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

/// Deterministic pseudo-random strings (xorshift), from 0 to ~60 pieces,
/// some with a piece repeated into a long run.
fn strings(count: usize) -> Vec<String> {
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
            let pieces = next() % 60;
            for _ in 0..pieces {
                let piece = PIECES[(next() % PIECES.len() as u64) as usize];
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
    let texts = strings(1500);
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
