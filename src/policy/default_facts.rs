//! What the embedded default's bytes fix, taken at load instead of computed
//! (`Policy::embedded_default`). Generated; `policy::load::tests` recomputes
//! it from `policies/default.rego` and fails when it differs. Regenerate with
//! `UPDATE_EXPECT=1 cargo test --lib the_default_facts_are_its_bytes`.

use super::projection::{Case, Op};

/// The rules `package ctxgate` defines (the compile's).
pub(super) const RULES: &[&str] = &[
    "budget",
    "keep",
    "mask",
    "on_focus_or_selected",
    "priority",
    "prune",
    "redact",
    "scope",
    "secret_title_role",
    "strip",
    "title_patterns",
];

/// `reads_of`: `input.inside` is read only as its count.
pub(super) const INSIDE_COUNT_ONLY: bool = true;

/// `reads_of`: the subrole's tests, sorted (`None`: read whole).
pub(super) const SUBROLE_TESTS: Option<&[(Op, Case, &str)]> = Some(&[
    (Op::Contains, Case::Lower, "password"),
    (Op::Contains, Case::Lower, "secure"),
]);

/// `rule_reads`: what each per-element rule defined reads, in `ELEMENT_RULES`
/// order: (rule, fields as `RuleReads::fields`, whether `input.inside`).
pub(super) const RULE_READS: Option<&[(&str, u16, bool)]> = Some(&[
    ("mask", 0x0883, false),
    ("keep", 0x010d, false),
    ("prune", 0x0010, false),
    ("priority", 0x002d, true),
    ("strip", 0x030c, false),
]);

/// `string_constants`: the rule ids the policy writes, sorted, each once.
pub(super) const CONSTANTS: &[&str] = &[
    "ai-api-key",
    "app",
    "assigned",
    "author",
    "authorization-header",
    "aws-access-key",
    "aws-secret-key",
    "azure-storage-key",
    "basic-auth",
    "bearer-token",
    "card-number",
    "chat-bot-token",
    "cli-credential",
    "cli-password",
    "cloud-service-token",
    "cookie-header",
    "credential-assignment",
    "enclosing-document",
    "focus",
    "focus-path",
    "github-token",
    "gitlab-token",
    "google-api-key",
    "iban",
    "id",
    "invisible",
    "jwt",
    "luhn",
    "mod97",
    "national-id",
    "national-id-script",
    "one-time-code",
    "passcode",
    "password",
    "password-assignment",
    "password-assignment-script",
    "pattern",
    "pin",
    "platform-token",
    "private-key",
    "registry-token",
    "replace",
    "secret-title",
    "secure",
    "secure-text",
    "selection",
    "service-api-key",
    "session-id",
    "signed-url",
    "slack-token",
    "stripe-key",
    "token-assignment",
    "tokens",
    "url-credentials",
    "window",
];
