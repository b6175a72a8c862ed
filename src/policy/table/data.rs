//! The embedded default's rule values and plans, as regorus gives them
//! (`policy::table`). Generated; `policy::table::tests` recomputes it and
//! `policies/default.table` from `policies/default.rego` and fails when they
//! differ. Regenerate with
//! `UPDATE_EXPECT=1 cargo test --lib the_default_table_is_regorus_answers`.

use super::{Entry, Spans};

/// The action names there is a table for, in its order.
pub(super) const ACTIONS: &[&str] = &["selection", "focus", "window", "app"];

/// The plan's title patterns' names, in its order.
pub(super) const TITLES: &[&str] = &["one-time-code", "passcode", "password", "pin"];

/// The distinct rule values.
pub(super) const VALUES: &[Entry] = &[
    Entry::Strings(&[]),
    Entry::Strings(&["secret-title"]),
    Entry::Strings(&["secure-text"]),
    Entry::Strings(&["secret-title", "secure-text"]),
    Entry::Strings(&["focus-path"]),
    Entry::Strings(&["selection"]),
    Entry::Strings(&["focus-path", "selection"]),
    Entry::Strings(&["enclosing-document"]),
    Entry::Strings(&["enclosing-document", "focus-path"]),
    Entry::Strings(&["enclosing-document", "selection"]),
    Entry::Strings(&["enclosing-document", "focus-path", "selection"]),
    Entry::Strings(&["invisible"]),
    Entry::Number(0.0),
    Entry::Number(80.0),
    Entry::Number(100.0),
    Entry::Number(90.0),
    Entry::Number(50.0),
    Entry::Number(20.0),
    Entry::Number(-10.0),
    Entry::Number(30.0),
    Entry::Number(110.0),
    Entry::Number(40.0),
];

/// Per per-element rule defined, in evaluation order: per action, where its
/// table is in `BYTES` (start, length), each byte an index into `VALUES` or
/// `MISSING`; `None` when what it reads cannot be enumerated.
pub(super) const RULES: &[(&str, Option<Spans>)] = &[
    ("mask", Some(&[(0, 2080), (0, 2080), (0, 2080), (0, 2080)])),
    ("keep", Some(&[(2080, 104), (2080, 104), (2184, 104), (2184, 104)])),
    ("prune", Some(&[(2288, 2), (2288, 2), (2288, 2), (2288, 2)])),
    ("priority", Some(&[(2290, 6760), (2290, 6760), (2290, 6760), (2290, 6760)])),
    ("strip", None),
];

pub(super) const BYTES: &[u8] = include_bytes!("../../../policies/default.table");

/// The distinct values of the per-request rules, as the plan reads them (JSON).
pub(super) const JSON: &[&str] = &[
    "\"selection\"",
    "{\"tokens\":8000}",
    "[{\"id\":\"ai-api-key\",\"pattern\":\"sk-[A-Za-z0-9_-]{20,}\",\"replace\":\"[api key]\"},{\"id\":\"aws-access-key\",\"pattern\":\"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\",\"replace\":\"[aws key]\"},{\"id\":\"azure-storage-key\",\"pattern\":\"AccountKey=[A-Za-z0-9+/]{86}==\",\"replace\":\"AccountKey=[azure key]\"},{\"id\":\"basic-auth\",\"pattern\":\"(?i)authorization[\\\"']?[ \\\\t]*[:=]?[ \\\\t]*[\\\"']?basic[ \\\\t]+[A-Za-z0-9+/]{4,}={0,2}\",\"replace\":\"[basic credentials]\"},{\"id\":\"bearer-token\",\"pattern\":\"(?i)bearer\\\\s+[A-Za-z0-9._~+/-]{16,}=*\",\"replace\":\"Bearer [token]\"},{\"id\":\"card-number\",\"luhn\":true,\"pattern\":\"\\\\d+(?:[-.+ \\\\t\\\\r\\\\n\\\\x{A0}\\\\x{2007}\\\\x{2009}\\\\x{202F}\\\\x{3000}\\\\x{2010}-\\\\x{2013}\\\\x{FF0D}]{1,3}\\\\d+)*\",\"replace\":\"[card number]\"},{\"id\":\"credential-assignment\",\"pattern\":\"(?-u:[A-Za-z0-9]*(?i:passw(?:or)?d|passphrase|passcode|secret(?:[_-]?access)?[_-]?key|client[_-]?secret|secret|api_?key|api-key|(?:auth|access|refresh)[_-]?token|api_?token|api-token)|(?:[A-Za-z0-9]*[a-z0-9])?Pwd|[A-Z0-9]*PWD|(?i:pwd))[\\\"']?[ \\\\t]*(?::=|=>|:|=)[ \\\\t]*(?:\\\"[^\\\"\\\\r\\\\n]{4,}\\\"|'[^'\\\\r\\\\n]{4,}'|[^\\\\s\\\"'<>]{4,})|(?-u:(?:[A-Za-z0-9]*[a-z0-9])?Pin|[A-Z0-9]*PIN|(?i:pin))[\\\"']?[ \\\\t]*(?::=|=>|:|=)[ \\\\t]*(?:\\\"[0-9]{4,}\\\"|'[0-9]{4,}'|[0-9]{4,})\",\"replace\":\"[credential]\"},{\"id\":\"github-token\",\"pattern\":\"gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255}\",\"replace\":\"[github token]\"},{\"id\":\"gitlab-token\",\"pattern\":\"gl(?:pat|ptt|rt|dt|ft|imt|oas|cbt|soat|agent)-[0-9A-Za-z_-]{20,}\",\"replace\":\"[gitlab token]\"},{\"id\":\"google-api-key\",\"pattern\":\"AIza[0-9A-Za-z_-]{35}|GOCSPX-[0-9A-Za-z_-]{28}|ya29\\\\.[0-9A-Za-z_-]{20,}\",\"replace\":\"[google api key]\"},{\"id\":\"jwt\",\"pattern\":\"eyJ[A-Za-z0-9_-]{5,}\\\\.[A-Za-z0-9_-]{5,}\\\\.[A-Za-z0-9_-]{5,}\",\"replace\":\"[jwt]\"},{\"id\":\"private-key\",\"pattern\":\"(?s)-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|.*)\",\"replace\":\"[private key]\"},{\"id\":\"registry-token\",\"pattern\":\"npm_[A-Za-z0-9]{36}|pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}|hf_[A-Za-z0-9]{34,}\",\"replace\":\"[registry token]\"},{\"id\":\"service-api-key\",\"pattern\":\"SG\\\\.[A-Za-z0-9_-]{22}\\\\.[A-Za-z0-9_-]{43}|SK[0-9a-fA-F]{32}|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}|do[opr]_v1_[a-f0-9]{64}|dapi[a-f0-9]{32}|AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\",\"replace\":\"[api key]\"},{\"id\":\"slack-token\",\"pattern\":\"(?:xox[abeoprs]|xapp)-[A-Za-z0-9-]{10,}|https://hooks\\\\.slack\\\\.com/(?:services|workflows)/[A-Za-z0-9_/+-]{20,}\",\"replace\":\"[slack token]\"},{\"id\":\"stripe-key\",\"pattern\":\"(?:[sr]k_(?:live|test)|whsec)_[0-9A-Za-z]{16,247}\",\"replace\":\"[stripe key]\"},{\"id\":\"token-assignment\",\"pattern\":\"(?-u:[A-Za-z0-9]*(?i:token|credentials?|private[_-]?key))[\\\"']?[ \\\\t]*(?::=|=>|:|=)[ \\\\t]*(?:\\\"[^\\\"\\\\r\\\\n]{8,}\\\"|'[^'\\\\r\\\\n]{8,}'|[^\\\\s\\\"'<>]{8,})\",\"replace\":\"[credential]\"},{\"id\":\"url-credentials\",\"pattern\":\"://[^\\\\s/?#@:]*:[^\\\\s/?#@]+@\",\"replace\":\":[credentials]@\"}]",
    "{\"one-time-code\":\"(?i:one[\\\\s_-]?time[\\\\s_-]?(?:code|password|passcode|pin)|two[\\\\s_-]?factor|verification[\\\\s_-]?code|security[\\\\s_-]?code|authentication[\\\\s_-]?code)|(?:^|[^A-Za-z0-9])(?:OTP|otp|Otp|2FA|2fa|MFA|mfa|Mfa)s?(?:$|[^a-z])|[a-z](?:Otp|OTP|Mfa|MFA)s?(?:$|[^a-z])\",\"passcode\":\"(?:(?:^|[^A-Za-z])(?i:p)|[a-z]P)(?i:ass[\\\\s_-]?codes?)|[A-Z]PASSCODE\",\"password\":\"(?:(?:^|[^A-Za-z])(?i:p)|[a-z]P)(?i:ass[\\\\s_-]?words?|asswort|assphrases?)|[A-Z]PASS(?:WORD|PHRASE)|(?i:mot de passe|contraseña|kennwort)\",\"pin\":\"(?:^|[^A-Z])PINS?(?:$|[^A-Z])|(?:^|[^A-Za-z])[Pp]in(?:_|[A-Z])|_[Pp]in(?:$|[^a-z])|[a-z]Pin(?:$|[^a-z])|(?:^|[^A-Za-z])(?i:pin)[\\\\s_-]?(?i:codes?|numbers?)\"}",
    "\"focus\"",
    "\"window\"",
    "\"app\"",
];

/// Per action, each per-request rule the default defines with its value
/// (an index into `JSON`).
pub(super) const PLANS: &[&[(&str, usize)]] = &[
    &[
        ("scope", 0),
        ("budget", 1),
        ("redact", 2),
        ("title_patterns", 3),
    ],
    &[
        ("scope", 4),
        ("budget", 1),
        ("redact", 2),
        ("title_patterns", 3),
    ],
    &[
        ("scope", 5),
        ("budget", 1),
        ("redact", 2),
        ("title_patterns", 3),
    ],
    &[
        ("scope", 6),
        ("budget", 1),
        ("redact", 2),
        ("title_patterns", 3),
    ],
];
