//! The embedded default policy (`policies/default.rego`) decided without
//! regorus: its plan and its per-element rules written out in Rust, for the
//! bytes of the file they were written for ([`WRITTEN_FOR`], its hash). A
//! `Gate::embedded_default` whose default has those bytes plans and decides
//! here and compiles the policy in regorus only when something needs it
//! (a projection outside [`covers`], `Gate::policy`). Any other policy, a
//! file with the default's bytes, and `--policy default` layers are
//! compiled and evaluated by regorus as before.
//!
//! What makes this the policy's own decision and not a copy that drifts:
//! - the default reads only the fields listed in [`READS`] (a test scans
//!   the file's tokens for every `input.` path and every rule a rule body
//!   names, per rule);
//! - for each rule, every combination of representative values of the
//!   fields it reads (all 13 roles, the action words and others, subroles
//!   that do and do not say secure or password in any case and script,
//!   every title pattern name, attribute names with and without `author`,
//!   ancestor counts around 6) gives the decision regorus gives, and so do
//!   random projections (`tests` below);
//! - a default with other bytes is not decided here ([`is_current`]; a test
//!   fails until this file is brought up to date).
//!
//! The evaluations a decision counts (the report's `evaluations`) are the
//! ones regorus's path counts: one per per-element rule asked (`strip` only
//! of an element with attributes), once per projection the gate has not
//! decided for the same request before.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

use super::engine::{lock, Evaluator, DEFAULT_HASH, DEFAULT_NAME};
use super::projection::{Decider, ElementInput, ProjectionKey};
use super::{Budget, Decision, Policy, Redaction, RequestInput, RequestPlan, Scope};
use crate::deadline::Deadline;
use crate::error::{Error, Result};
use crate::redact::Pattern;

/// The hash of the `policies/default.rego` this file mirrors.
pub(crate) const WRITTEN_FOR: &str =
    "25988a29dbb728617002069636ef19f25501e25f768229df1b330ce175298183";

/// Whether the embedded default is the one this file was written for.
pub(crate) fn is_current() -> bool {
    DEFAULT_HASH == WRITTEN_FOR
}

/// `title_patterns`, in the order regorus gives the object (by name).
const TITLE_PATTERNS: [(&str, &str); 4] = [
    (
        "one-time-code",
        r"(?i:one[\s_-]?time[\s_-]?(?:code|password|passcode|pin)|two[\s_-]?factor|verification[\s_-]?code|security[\s_-]?code|authentication[\s_-]?code)|(?:^|[^A-Za-z0-9])(?:OTP|otp|Otp|2FA|2fa|MFA|mfa|Mfa)s?(?:$|[^a-z])|[a-z](?:Otp|OTP|Mfa|MFA)s?(?:$|[^a-z])",
    ),
    (
        "passcode",
        r"(?:(?:^|[^A-Za-z])(?i:p)|[a-z]P)(?i:ass[\s_-]?codes?)|[A-Z]PASSCODE",
    ),
    (
        "password",
        r"(?:(?:^|[^A-Za-z])(?i:p)|[a-z]P)(?i:ass[\s_-]?words?|asswort|assphrases?)|[A-Z]PASS(?:WORD|PHRASE)|(?i:mot de passe|contraseña|kennwort)",
    ),
    (
        "pin",
        r"(?:^|[^A-Z])PINS?(?:$|[^A-Z])|(?:^|[^A-Za-z])[Pp]in(?:_|[A-Z])|_[Pp]in(?:$|[^a-z])|[a-z]Pin(?:$|[^a-z])|(?:^|[^A-Za-z])(?i:pin)[\s_-]?(?i:codes?|numbers?)",
    ),
];

/// `redact`: (id, pattern, replace, luhn), in id order.
const REDACT: [(&str, &str, &str, bool); 14] = [
    ("ai-api-key", r"sk-[A-Za-z0-9_-]{20,}", "[api key]", false),
    (
        "aws-access-key",
        r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}",
        "[aws key]",
        false,
    ),
    (
        "azure-storage-key",
        r"AccountKey=[A-Za-z0-9+/]{86}==",
        "AccountKey=[azure key]",
        false,
    ),
    (
        "bearer-token",
        r"(?i)bearer\s+[A-Za-z0-9._~+/-]{16,}=*",
        "Bearer [token]",
        false,
    ),
    (
        "card-number",
        r"\d+(?:[-. \x{A0}\x{2007}\x{2009}\x{202F}\x{3000}\x{2010}-\x{2013}\x{FF0D}]{1,3}\d+)*",
        "[card number]",
        true,
    ),
    (
        "github-token",
        r"gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255}",
        "[github token]",
        false,
    ),
    (
        "gitlab-token",
        r"gl(?:pat|ptt|rt|dt|ft|imt|oas|cbt|soat|agent)-[0-9A-Za-z_-]{20,}",
        "[gitlab token]",
        false,
    ),
    (
        "google-api-key",
        r"AIza[0-9A-Za-z_-]{35}|GOCSPX-[0-9A-Za-z_-]{28}|ya29\.[0-9A-Za-z_-]{20,}",
        "[google api key]",
        false,
    ),
    (
        "jwt",
        r"eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}",
        "[jwt]",
        false,
    ),
    (
        "private-key",
        r"(?s)-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|.*)",
        "[private key]",
        false,
    ),
    (
        "registry-token",
        r"npm_[A-Za-z0-9]{36}|pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}|hf_[A-Za-z0-9]{34,}",
        "[registry token]",
        false,
    ),
    (
        "service-api-key",
        r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}|SK[0-9a-fA-F]{32}|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}|do[opr]_v1_[a-f0-9]{64}|dapi[a-f0-9]{32}|AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        "[api key]",
        false,
    ),
    (
        "slack-token",
        r"(?:xox[abeoprs]|xapp)-[A-Za-z0-9-]{10,}|https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9_/+-]{20,}",
        "[slack token]",
        false,
    ),
    (
        "stripe-key",
        r"(?:[sr]k_(?:live|test)|whsec)_[0-9A-Za-z]{16,247}",
        "[stripe key]",
        false,
    ),
];

/// What each rule of the default reads of the input, directly or through
/// the rules it names (the test of the module holds the file to it).
#[cfg(test)]
pub(crate) const READS: [(&str, &[&str]); 11] = [
    ("scope", &["action.name"]),
    ("budget", &[]),
    ("title_patterns", &[]),
    ("redact", &[]),
    (
        "mask",
        &[
            "element.role",
            "element.subrole",
            "element.title_matches",
            "element.has_content",
        ],
    ),
    (
        "secret_title_role",
        &["element.role", "element.has_content"],
    ),
    ("prune", &["element.visible"]),
    (
        "keep",
        &[
            "element.focused",
            "element.selected",
            "element.role",
            "action.name",
            "element.contains_selection",
        ],
    ),
    (
        "on_focus_or_selected",
        &[
            "element.focused",
            "element.selected",
            "element.contains_selection",
        ],
    ),
    (
        "strip",
        &[
            "action.name",
            "element.attribute_names",
            "element.focused",
            "element.selected",
            "element.contains_selection",
        ],
    ),
    (
        "priority",
        &[
            "element.role",
            "element.focused",
            "element.selected",
            "element.hovered",
            "inside",
        ],
    ),
];

/// The plan for a request: the scope follows the action's name; the rest
/// is the same for every request. Titles never reach it.
fn plan_for(action: &str) -> Result<RequestPlan> {
    let scope = match action {
        "selection" => Scope::Selection,
        "window" => Scope::Window,
        "app" => Scope::App,
        _ => Scope::Focus,
    };
    let pattern = |text: &str| {
        Pattern::new(text).map_err(|e| Error::Policy {
            location: DEFAULT_NAME.to_string(),
            message: format!("a pattern of the default does not compile: {e}"),
        })
    };
    let mut redact = Vec::with_capacity(REDACT.len());
    for (id, text, replace, luhn) in REDACT {
        redact.push(Redaction::new(id, pattern(text)?, replace, luhn));
    }
    // What `Policy::plan` checks of every plan: a no-op for these
    // replacements, which no pattern's filters let through to a search.
    crate::redact::check_replacements(&redact)?;
    let mut title_patterns = Vec::with_capacity(TITLE_PATTERNS.len());
    for (name, text) in TITLE_PATTERNS {
        title_patterns.push((name.to_string(), pattern(text)?));
    }
    Ok(RequestPlan {
        scope,
        budget: Some(Budget::Tokens(8000)),
        redact,
        title_patterns,
        element_attributes: Vec::new(),
    })
}

/// The action words the plan and the rules tell apart; any other word is
/// decided as `Other` (as `focus` by `scope`, and by no rule that names
/// an action).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Selection,
    Focus,
    Window,
    App,
    Other,
}

impl Action {
    fn of(name: &str) -> Action {
        match name {
            "selection" => Action::Selection,
            "focus" => Action::Focus,
            "window" => Action::Window,
            "app" => Action::App,
            _ => Action::Other,
        }
    }
}

/// Whether the default is decided here for this projection: always, for
/// the projections the default's plan gives (no declared attributes, title
/// matches among its pattern names). Anything else goes to regorus.
fn covers(element: &ElementInput<'_>) -> bool {
    element.attributes.is_empty()
        && element
            .title_matches
            .iter()
            .all(|name| TITLE_PATTERNS.iter().any(|(n, _)| n == name))
}

/// The per-element rules asked of this element, as regorus's path asks
/// them: `mask`, `keep`, `prune`, `priority` (the default defines no
/// `deny`), and `strip` only of an element with attributes.
fn rules_asked(element: &ElementInput<'_>) -> usize {
    4 + usize::from(!element.attribute_names.is_empty())
}

/// The default's per-element rules, before the floor.
fn decide(action: Action, e: &ElementInput<'_>) -> Decision {
    let role = e.role.as_str();
    let mut decision = Decision::default();
    // mask contains "secret-title": a Text, or a Cell or Group with content,
    // whose title matches a pattern (all four names are in the rule's set).
    let secret_title_role = role == "Text" || (matches!(role, "Cell" | "Group") && e.has_content);
    if secret_title_role && !e.title_matches.is_empty() {
        decision.mask.push(Arc::from("secret-title"));
    }
    // mask contains "secure-text": `lower` is `str::to_lowercase` and
    // `contains` is `str::contains` in regorus; an absent subrole makes the
    // rule undefined.
    if role == "Text" {
        if let Some(subrole) = e.subrole {
            let lower = subrole.to_lowercase();
            if lower.contains("secure") || lower.contains("password") {
                decision.mask.push(Arc::from("secure-text"));
            }
        }
    }
    let on_focus_or_selected = e.focused || e.selected || e.contains_selection;
    if e.focused {
        decision.keep.push(Arc::from("focus-path"));
    }
    if e.selected {
        decision.keep.push(Arc::from("selection"));
    }
    if role == "Document"
        && matches!(action, Action::Selection | Action::Focus)
        && on_focus_or_selected
    {
        decision.keep.push(Arc::from("enclosing-document"));
    }
    if !e.visible {
        decision.prune.push(Arc::from("invisible"));
    }
    decision.priority = if role == "Heading" {
        110.0
    } else if e.focused {
        100.0
    } else if e.selected {
        90.0
    } else if e.hovered {
        80.0
    } else if matches!(role, "Window" | "Document" | "Page") {
        50.0
    } else if role == "Link" {
        40.0
    } else if matches!(role, "Text" | "Image") {
        30.0
    } else if matches!(role, "Row" | "List") {
        20.0
    } else if role == "Cell" && e.inside.len() > 6 {
        -10.0
    } else {
        0.0
    };
    if matches!(action, Action::Window | Action::App)
        && e.attribute_names.contains(&"author")
        && !on_focus_or_selected
    {
        decision.strip.push(Arc::from("author"));
    }
    decision.mask.sort();
    decision.keep.sort();
    decision
}

/// What of a request the decisions are shared by: as regorus's decision
/// cache keys them (the request input and the names of the title patterns
/// the app's title matches).
type RequestKey = (RequestInput, Vec<String>);

/// The embedded default as a gate holds it: plans and decisions here, the
/// regorus policy compiled on first need.
#[derive(Default)]
pub(crate) struct NativeDefault {
    compiled: OnceLock<std::result::Result<Policy, String>>,
    /// Plans by action (five: the four words and any other).
    plans: Mutex<HashMap<RequestInput, Arc<RequestPlan>>>,
    /// Projections decided so far, by request: a later request counts no
    /// evaluation for them, as regorus's cache counts none.
    decided: Mutex<Decided>,
}

#[derive(Default)]
struct Decided {
    len: usize,
    by_request: HashMap<Arc<RequestKey>, HashSet<ProjectionKey>>,
}

/// As many projections as regorus's decision cache holds; then it empties.
const DECIDED_BOUND: usize = 65_536;
/// As many plans as regorus's plan cache holds.
const PLAN_BOUND: usize = 256;

impl NativeDefault {
    /// The default compiled by regorus, once.
    pub(crate) fn compiled(&self) -> Result<&Policy> {
        let compiled = self
            .compiled
            .get_or_init(|| Policy::embedded_default().map_err(|e| e.to_string()));
        compiled.as_ref().map_err(|message| Error::Policy {
            location: DEFAULT_NAME.to_string(),
            message: message.clone(),
        })
    }

    /// The compiled policy, if something needed it yet.
    #[cfg(test)]
    pub(crate) fn compiled_yet(&self) -> Option<&std::result::Result<Policy, String>> {
        self.compiled.get()
    }

    /// The plan for `request`, cached as regorus's plans are.
    fn plan(&self, request: &RequestInput) -> Result<Arc<RequestPlan>> {
        if let Some(plan) = lock(&self.plans).get(request) {
            return Ok(plan.clone());
        }
        let plan = Arc::new(plan_for(&request.action.name)?);
        let mut plans = lock(&self.plans);
        if plans.len() >= PLAN_BOUND {
            plans.clear();
        }
        plans.insert(request.clone(), plan.clone());
        Ok(plan)
    }

    /// A per-request decider, as `Policy::evaluator_within` gives one.
    pub(crate) fn evaluator<'p>(
        &'p self,
        request: &RequestInput,
        title: Option<&str>,
        deadline: Deadline,
    ) -> Result<NativeEvaluator<'p>> {
        let plan = self.plan(request)?;
        let title_matches: Vec<String> = match title {
            Some(title) => plan
                .title_patterns
                .iter()
                .filter(|(_, pattern)| pattern.is_match(title))
                .map(|(name, _)| name.clone())
                .collect(),
            None => Vec::new(),
        };
        Ok(NativeEvaluator {
            default: self,
            plan,
            action: Action::of(&request.action.name),
            key: Arc::new((request.clone(), title_matches)),
            title: title.map(str::to_string),
            deadline,
            memo: HashMap::new(),
            evaluations: 0,
            regorus: None,
        })
    }

    /// Whether a projection was decided for this request before, noting it
    /// when it was not.
    fn first_time(&self, request: &Arc<RequestKey>, key: &ProjectionKey) -> bool {
        let mut decided = lock(&self.decided);
        if decided
            .by_request
            .get(request)
            .is_some_and(|keys| keys.contains(key))
        {
            return false;
        }
        if decided.len >= DECIDED_BOUND {
            *decided = Decided::default();
        }
        decided.len += 1;
        decided
            .by_request
            .entry(request.clone())
            .or_default()
            .insert(key.clone());
        true
    }
}

/// Decides one request's projections: here when [`covers`] says so, else
/// through regorus (compiled on first need).
pub(crate) struct NativeEvaluator<'p> {
    default: &'p NativeDefault,
    plan: Arc<RequestPlan>,
    action: Action,
    key: Arc<RequestKey>,
    title: Option<String>,
    deadline: Deadline,
    memo: HashMap<ProjectionKey, Arc<Decision>>,
    evaluations: usize,
    regorus: Option<Evaluator<'p>>,
}

impl NativeEvaluator<'_> {
    /// The request's plan.
    pub(crate) fn plan(&self) -> &Arc<RequestPlan> {
        &self.plan
    }
}

impl Decider for NativeEvaluator<'_> {
    fn decide(&mut self, element: &ElementInput<'_>) -> Result<Arc<Decision>> {
        if !covers(element) {
            let regorus = match &mut self.regorus {
                Some(regorus) => regorus,
                None => {
                    let policy = self.default.compiled()?;
                    let evaluator = policy.evaluator_within(
                        &self.key.0,
                        self.title.as_deref(),
                        self.deadline,
                    )?;
                    self.regorus.insert(evaluator)
                }
            };
            return Decider::decide(regorus, element);
        }
        let key = element.key();
        if let Some(found) = self.memo.get(&key) {
            return Ok(found.clone());
        }
        if self.default.first_time(&self.key, &key) {
            self.evaluations += rules_asked(element);
        }
        let decision = Arc::new(decide(self.action, element));
        self.memo.insert(key, decision.clone());
        Ok(decision)
    }

    fn evaluations(&self) -> usize {
        self.evaluations + self.regorus.as_ref().map_or(0, Decider::evaluations)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;
    use crate::model::Role;
    use crate::policy::engine::{probe_request, DEFAULT_SOURCE};
    use crate::policy::token::{tokenize, TokenKind};
    use crate::policy::Inside;

    #[test]
    fn the_native_default_is_written_for_this_default() {
        assert!(
            is_current(),
            "policies/default.rego changed (hash {DEFAULT_HASH}): bring src/policy/native.rs up \
             to date with it (its plan, its rules and `READS`), then set `WRITTEN_FOR`; until \
             then the default is compiled and decided by regorus"
        );
    }

    /// Every rule the file defines, and what each reads of the input
    /// (`input.` paths, two words deep) directly or through the rules its
    /// body names, is what `READS` says: the fields the exhaustive test
    /// below varies are all those a rule can see.
    #[test]
    fn the_default_reads_what_reads_says() {
        let tokens = tokenize(DEFAULT_SOURCE);
        // A rule's definition starts with a name in the first column.
        let starts: Vec<usize> = (0..tokens.len())
            .filter(|&k| tokens[k].col == 1 && tokens[k].kind == TokenKind::Ident)
            .filter(|&k| !matches!(tokens[k].text.as_str(), "package" | "import"))
            .collect();
        let names: BTreeSet<&str> = starts.iter().map(|&k| tokens[k].text.as_str()).collect();
        let mut direct: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
        let mut named: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for (n, &start) in starts.iter().enumerate() {
            let end = starts.get(n + 1).copied().unwrap_or(tokens.len());
            let rule = tokens[start].text.as_str();
            let reads = direct.entry(rule).or_default();
            let refs = named.entry(rule).or_default();
            let word = |k: usize| tokens.get(k).map(|t| t.text.as_str());
            for (k, t) in tokens.iter().enumerate().take(end).skip(start + 1) {
                if t.kind != TokenKind::Ident {
                    continue;
                }
                if t.text == "input" {
                    assert_eq!(word(k + 1), Some("."), "`input` alone in `{rule}`");
                    let first = word(k + 2).expect("a field");
                    let path = match first {
                        "element" | "action" | "app" => {
                            assert_eq!(word(k + 3), Some("."), "`input.{first}` in `{rule}`");
                            format!("{first}.{}", word(k + 4).expect("a field"))
                        }
                        other => other.to_string(),
                    };
                    reads.insert(path);
                } else if names.contains(t.text.as_str()) && word(k.wrapping_sub(1)) != Some(".") {
                    refs.insert(t.text.as_str());
                }
            }
        }
        // `data.ctxgate.x` names a rule too.
        for (n, &start) in starts.iter().enumerate() {
            let end = starts.get(n + 1).copied().unwrap_or(tokens.len());
            for k in start..end.saturating_sub(4) {
                if tokens[k].text == "data"
                    && tokens.get(k + 2).is_some_and(|t| t.text == "ctxgate")
                {
                    let target = tokens[k + 4].text.as_str();
                    named
                        .get_mut(tokens[start].text.as_str())
                        .unwrap()
                        .insert(target);
                }
            }
        }
        let expected: BTreeMap<&str, BTreeSet<String>> = READS
            .iter()
            .map(|(rule, reads)| (*rule, reads.iter().map(|s| s.to_string()).collect()))
            .collect();
        assert_eq!(
            names,
            expected.keys().copied().collect::<BTreeSet<_>>(),
            "the rules the file defines"
        );
        for rule in &names {
            // Transitively through the rules it names.
            let mut all = BTreeSet::new();
            let mut stack = vec![*rule];
            let mut seen = BTreeSet::new();
            while let Some(r) = stack.pop() {
                if !seen.insert(r) {
                    continue;
                }
                all.extend(direct[r].iter().cloned());
                stack.extend(named[r].iter().copied().filter(|n| n != &r));
            }
            assert_eq!(all, expected[rule], "what `{rule}` reads");
        }
    }

    #[test]
    fn the_plans_are_regorus_plans() {
        let policy = Policy::embedded_default().unwrap();
        for action in ["selection", "focus", "window", "app", "custom", "", "Focus"] {
            for target in [None, Some("n3")] {
                let request = probe_request(action, target);
                let want = policy.plan(&request).unwrap();
                let got = NativeDefault::default().plan(&request).unwrap();
                assert_eq!(format!("{got:?}"), format!("{want:?}"), "{action}");
            }
        }
    }

    /// Representative values of each field the rules read.
    const ACTIONS: [&str; 7] = ["selection", "focus", "window", "app", "custom", "", "Focus"];
    const SUBROLES: [Option<&str>; 12] = [
        None,
        Some(""),
        Some("AXSecureTextField"),
        Some("secure"),
        Some("PASSWORD"),
        Some("pass_word"),
        Some("AXSearchField"),
        Some("ſecure"),
        Some("ＰＡＳＳＷＯＲＤ"),
        Some("İpassword"),
        Some("insecure-ish"),
        Some("textbox"),
    ];
    const TITLES: [&[&str]; 5] = [
        &[],
        &["pin"],
        &["password"],
        &["one-time-code", "passcode"],
        &["one-time-code", "passcode", "password", "pin"],
    ];
    const ATTRIBUTES: [&[&str]; 5] = [&[], &["author"], &["url"], &["url", "author"], &["Author"]];
    const DEPTHS: [usize; 5] = [0, 1, 6, 7, 12];

    fn inside(depth: usize) -> Inside<'static> {
        (0..depth).fold(Inside::new(), |up, _| up.child(Role::Group, None))
    }

    fn base() -> ElementInput<'static> {
        ElementInput {
            role: Role::Group,
            subrole: None,
            selected: false,
            focused: false,
            visible: true,
            hovered: false,
            has_title: true,
            has_content: false,
            contains_selection: false,
            attribute_names: Vec::new(),
            attributes: Vec::new(),
            title_matches: Vec::new(),
            inside: Inside::new(),
        }
    }

    /// Compares the native decision and evaluation count with regorus's
    /// for each element, per action.
    fn compare(cases: Vec<(&'static str, ElementInput<'static>)>) -> usize {
        let policy = Policy::embedded_default().unwrap();
        let mut regorus: HashMap<&str, Evaluator<'_>> = HashMap::new();
        let mut n = 0;
        for (action, element) in cases {
            assert!(covers(&element));
            let evaluator = regorus
                .entry(action)
                .or_insert_with(|| policy.evaluator(&probe_request(action, None)).unwrap());
            let before = Decider::evaluations(evaluator);
            let want = Decider::decide(evaluator, &element).unwrap();
            let asked = Decider::evaluations(evaluator) - before;
            let got = decide(Action::of(action), &element);
            assert_eq!(got, *want, "{action}: {element:?}");
            if asked > 0 {
                assert_eq!(rules_asked(&element), asked, "{action}: {element:?}");
                n += 1;
            }
        }
        n
    }

    /// For each rule, every combination of the representative values of
    /// the fields it reads (`READS`), the other fields as in `base`.
    #[test]
    fn every_rule_decides_as_regorus_on_every_combination_of_what_it_reads() {
        let mut cases = Vec::new();
        // mask: role, subrole, title_matches, has_content.
        for role in Role::ALL {
            for subrole in SUBROLES {
                for titles in TITLES {
                    for has_content in [false, true] {
                        let mut e = base();
                        (e.role, e.subrole, e.has_content) = (role, subrole, has_content);
                        e.title_matches = titles.to_vec();
                        cases.push(("focus", e));
                    }
                }
            }
        }
        // keep: focused, selected, contains_selection, role, action.
        for action in ACTIONS {
            for role in Role::ALL {
                for bits in 0..8u8 {
                    let mut e = base();
                    e.role = role;
                    (e.focused, e.selected, e.contains_selection) =
                        (bits & 1 != 0, bits & 2 != 0, bits & 4 != 0);
                    cases.push((action, e));
                }
            }
        }
        // prune: visible.
        for visible in [false, true] {
            let mut e = base();
            e.visible = visible;
            cases.push(("focus", e));
        }
        // priority: role, focused, selected, hovered, inside.
        for role in Role::ALL {
            for bits in 0..8u8 {
                for depth in DEPTHS {
                    let mut e = base();
                    e.role = role;
                    (e.focused, e.selected, e.hovered) =
                        (bits & 1 != 0, bits & 2 != 0, bits & 4 != 0);
                    e.inside = inside(depth);
                    cases.push(("focus", e));
                }
            }
        }
        // strip: action, attribute_names, focused, selected,
        // contains_selection.
        for action in ACTIONS {
            for names in ATTRIBUTES {
                for bits in 0..8u8 {
                    let mut e = base();
                    e.attribute_names = names.to_vec();
                    (e.focused, e.selected, e.contains_selection) =
                        (bits & 1 != 0, bits & 2 != 0, bits & 4 != 0);
                    cases.push((action, e));
                }
            }
        }
        let total = cases.len();
        let evaluated = compare(cases);
        assert!(
            evaluated * 10 > total * 9,
            "{evaluated} of {total} evaluated"
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]

        /// Random projections: every field at once, random subroles and
        /// attribute names.
        #[test]
        fn random_projections_decide_as_regorus(
            action in 0..ACTIONS.len(),
            role in 0..13usize,
            subrole in proptest::option::of("[a-zA-Z_ſİＰＡＳ ]{0,12}"),
            bits in 0..128u8,
            titles in 0..TITLES.len(),
            names in proptest::collection::vec("(author|Author|url|[a-z]{1,6})", 0..4),
            depth in 0..10usize,
        ) {
            let subrole: Option<&'static str> = subrole.map(|s| &*Box::leak(s.into_boxed_str()));
            let names: Vec<&'static str> = names.into_iter().map(|s| &*Box::leak(s.into_boxed_str())).collect();
            let e = ElementInput {
                role: Role::ALL[role],
                subrole,
                selected: bits & 1 != 0,
                focused: bits & 2 != 0,
                visible: bits & 4 != 0,
                hovered: bits & 8 != 0,
                has_title: bits & 16 != 0,
                has_content: bits & 32 != 0,
                contains_selection: bits & 64 != 0,
                attribute_names: names,
                attributes: Vec::new(),
                title_matches: TITLES[titles].to_vec(),
                inside: inside(depth),
            };
            compare(vec![(ACTIONS[action], e)]);
        }
    }

    /// A projection outside what is decided here (declared attribute
    /// values, which the default's plan never declares) goes to regorus,
    /// compiled then, and counts its evaluations.
    #[test]
    fn what_is_not_covered_is_decided_by_regorus() {
        let default = NativeDefault::default();
        let request = probe_request("focus", None);
        let deadline = Deadline::after(std::time::Duration::from_secs(600));
        let mut evaluator = default.evaluator(&request, None, deadline).unwrap();
        assert!(
            default.compiled.get().is_none(),
            "compiled before it was needed"
        );
        let value = serde_json::json!("x");
        let mut e = base();
        e.attribute_names = vec!["url"];
        e.attributes = vec![("url", &value)];
        assert!(!covers(&e));
        let got = Decider::decide(&mut evaluator, &e).unwrap();
        assert!(default.compiled.get().is_some());
        let policy = Policy::embedded_default().unwrap();
        let mut regorus = policy.evaluator(&request).unwrap();
        assert_eq!(got, Decider::decide(&mut regorus, &e).unwrap());
        assert_eq!(
            Decider::evaluations(&evaluator),
            Decider::evaluations(&regorus)
        );
    }
}
