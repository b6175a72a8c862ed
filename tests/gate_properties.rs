//! The privacy and budget invariants through the real default policy
//! (`Gate::embedded_default()`), over generated trees and over mutations of
//! real trees imported from `tests/fixtures/realworld/raw`:
//!
//! - a canary in every element the default policy masks (secure `Text`,
//!   `Text` titled like a secret) and in everything inside one never
//!   reaches the output, the report or the logs (captured at TRACE);
//! - no redaction match (Luhn-valid card numbers, `ghp_` tokens, `AKIA`
//!   key ids), each unique, reaches them either;
//! - the output fits the budget, in bytes and in o200k tokens (counted
//!   here independently);
//! - it conforms (`ctxgate::check`) and, as JSON, reads back;
//! - trimming is deterministic, and trimming the output again changes
//!   nothing.
//!
//! Invisible subtrees are pruned, not masked: what is pruned may still be
//! sent when something inside is kept (a selection in a hidden pane), so
//! only masked content is forbidden.

mod common;

use common::gate;

use std::sync::OnceLock;

use ctxgate::import::{import, Format as ImportFormat};
use ctxgate::{Answer, Budget, Content, Element, Error, Format, Request, Role, Tree};
use proptest::prelude::*;

/// The default policy's title patterns, as its plan states them (the
/// policy's own regexes, so the oracle cannot go stale): the oracle for
/// `secret-title`.
fn secret_titles() -> &'static [regex::Regex] {
    static PATTERNS: OnceLock<Vec<regex::Regex>> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        let answer = Answer {
            protocol: "0.2.0".into(),
            instance: "i".into(),
            root: Element::new("app", Role::Application),
        };
        let input = ctxgate::internals::request_input(&answer, &Request::new("app"));
        let plan = ctxgate::internals::plan(gate().policy(), &input).expect("the default plan");
        assert!(
            plan.title_patterns.len() >= 4,
            "the default policy names password-like titles"
        );
        plan.title_patterns
            .iter()
            .map(|(_, r)| regex::Regex::new(r.as_str()).unwrap())
            .collect()
    })
}

/// Whether the default policy masks this element (the floor, `secure-text`
/// or `secret-title`).
fn masked(e: &Element) -> bool {
    e.role.read() == Role::Text
        && (e.subrole.as_deref().is_some_and(|s| {
            let s = s.to_lowercase();
            s.contains("secure") || s.contains("password")
        }) || e
            .title
            .as_deref()
            .is_some_and(|t| secret_titles().iter().any(|r| r.is_match(t))))
}

/// The element canary of `n`.
fn canary(n: usize) -> String {
    format!("CANARY{n}Z")
}

/// A Luhn-valid 16-digit card number unique to `n`, grouped in fours.
fn card(n: usize) -> String {
    let body: Vec<u32> = format!("4{:014}", n)
        .chars()
        .map(|c| c.to_digit(10).unwrap())
        .collect();
    // The check digit is the rightmost: from the right, the body's first
    // digit is doubled, then every other one.
    let sum: u32 = body
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| match (i % 2 == 0, d * 2) {
            (true, twice) if twice > 9 => twice - 9,
            (true, twice) => twice,
            (false, _) => d,
        })
        .sum();
    let check = (10 - sum % 10) % 10;
    let digits: String = body
        .iter()
        .chain(std::iter::once(&check))
        .map(|d| char::from_digit(*d, 10).unwrap())
        .collect();
    digits
        .as_bytes()
        .chunks(4)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Letters spelling `n` (base 26), padded with `Q` to `width`.
fn letters(n: usize, width: usize) -> String {
    let mut s = String::new();
    let mut n = n;
    loop {
        s.push((b'A' + (n % 26) as u8) as char);
        n /= 26;
        if n == 0 {
            break;
        }
    }
    format!("{s:Q<width$}")
}

/// The secrets element `n` may carry: every one must be redacted.
fn secrets(n: usize) -> [String; 3] {
    [
        card(n),
        format!("ghp_{}", letters(n, 36)),
        format!("AKIA{}", letters(n, 16)),
    ]
}

/// Gives element `n` (document order) its canary in title and text and, when
/// `secret` says so, one of its secrets in text, title, url or an attribute.
fn plant(e: &mut Element<'static>, n: usize, secret: Option<u8>) {
    let c = canary(n);
    e.title = Some(match e.title.take() {
        Some(t) => format!("{t} {c}").into(),
        None => c.clone().into(),
    });
    e.content.push(Content::text(format!("{c} lorem ipsum")));
    if let Some(which) = secret {
        let s = secrets(n)[usize::from(which % 3)].clone();
        match which / 3 % 4 {
            0 => e.content.push(Content::text(format!("pay {s} now"))),
            1 => e.title = Some(format!("{} {s}", e.title.take().unwrap_or_default()).into()),
            2 => e.url = Some(format!("https://e.example/?k={s}").into()),
            _ => {
                e.attributes
                    .insert("note".into(), serde_json::json!({"deep": [format!("{s}")]}));
            }
        }
    }
}

/// Visits every element in document order, mutably, without recursion.
fn each_mut(root: &mut Element<'static>, mut f: impl FnMut(usize, &mut Element<'static>)) {
    let mut stack: Vec<&mut Element<'static>> = vec![root];
    let mut n = 0;
    while let Some(e) = stack.pop() {
        f(n, e);
        n += 1;
        stack.extend(e.children.iter_mut().rev());
    }
}

/// Canaries of masked elements and everything inside them.
fn forbidden(answer: &Answer) -> Vec<String> {
    let tree = Tree::new(&answer.root);
    let mut hidden = vec![false; tree.len()];
    let mut out = Vec::new();
    for (at, node) in tree.nodes().iter().enumerate() {
        hidden[at] = masked(node.element) || node.parent.is_some_and(|p| hidden[p as usize]);
        if hidden[at] {
            out.push(canary(at));
        }
    }
    out
}

fn trim_logged<'a>(
    answer: &Answer<'a>,
    request: &Request,
) -> (ctxgate::Result<ctxgate::Trimmed<'a>>, String) {
    common::with_logs(|| gate().trim(answer, request))
}

const ACTIONS: [&str; 5] = ["selection", "focus", "window", "app", "copy"];

/// Every invariant, for one answer and request.
fn invariants(answer: &Answer, request: &Request) -> Result<(), TestCaseError> {
    let forbidden = forbidden(answer);
    let all_secrets: Vec<String> = (0..Tree::new(&answer.root).len())
        .flat_map(secrets)
        .collect();
    let (result, logs) = trim_logged(answer, request);
    for c in &forbidden {
        prop_assert!(!logs.contains(c.as_str()), "{c} in the logs");
    }
    prop_assert!(!logs.contains("CANARY"), "element text in the logs");
    let out = match result {
        Ok(out) => out,
        Err(Error::BudgetUnreachable { needed, budget, .. }) => {
            prop_assert!(needed > budget);
            return Ok(());
        }
        Err(other) => return Err(TestCaseError::fail(format!("unexpected error: {other}"))),
    };
    let report = serde_json::to_string(&out.report).unwrap();
    prop_assert!(!report.contains("CANARY"), "element text in the report");
    for c in &forbidden {
        prop_assert!(
            !out.rendered.contains(c.as_str()),
            "{c} (masked) in the output"
        );
    }
    for s in &all_secrets {
        prop_assert!(!out.rendered.contains(s.as_str()), "{s} not redacted");
        prop_assert!(!report.contains(s.as_str()) && !logs.contains(s.as_str()));
    }
    // The budgets: the policy's 8,000 tokens, and the request's.
    let tokens = bpe_openai::o200k_base().count(&out.rendered);
    prop_assert!(tokens <= 8000, "{tokens} tokens");
    match request.budget {
        Some(Budget::Bytes(b)) => prop_assert!(out.rendered.len() <= b),
        Some(Budget::Tokens(t)) => prop_assert!(tokens <= t, "{tokens} > {t} tokens"),
        None => {}
    }
    let findings = ctxgate::check(&out.answer);
    prop_assert!(findings.iter().all(|f| !f.is_error()), "{findings:?}");
    prop_assert_eq!(&out.rendered, &request.format.render(&out.answer));
    if request.format == Format::Json {
        let reread = ctxgate::read_conforming(out.rendered.as_bytes(), gate().limits());
        prop_assert!(reread.is_ok(), "{:?}", reread.err());
    }
    let (again, _) = trim_logged(answer, request);
    prop_assert_eq!(&again.unwrap().rendered, &out.rendered, "not deterministic");
    // Trimmed again: the same elements sent (notices are each trim's own),
    // and trimmed again once more, no change.
    let (twice, _) = trim_logged(&out.answer, request);
    let twice = twice.unwrap();
    prop_assert_eq!(
        common::without_notices(&twice.answer),
        common::without_notices(&out.answer),
        "not sent again"
    );
    let (thrice, _) = trim_logged(&twice.answer, request);
    prop_assert_eq!(&thrice.unwrap().rendered, &twice.rendered, "not idempotent");
    Ok(())
}

fn request(action: usize, budget: (u8, usize), outline: bool) -> Request {
    let mut request = Request::new(ACTIONS[action]);
    match budget.0 {
        0 => {}
        1 => request = request.budget(Budget::Bytes(budget.1)),
        _ => request = request.budget(Budget::Tokens(budget.1 / 4)),
    }
    if outline {
        request = request.format(Format::Outline);
    }
    request
}

fn budget() -> impl Strategy<Value = (u8, usize)> {
    (0..3u8, 300..8000usize)
}

// ---------------------------------------------------------------------------
// Generated trees.

const ROLES: [Role; 6] = [
    Role::Group,
    Role::Text,
    Role::Text,
    Role::List,
    Role::Document,
    Role::Image,
];
const SUBROLES: [Option<&str>; 6] = [
    None,
    Some("AXSecureTextField"),
    Some("secure"),
    Some("PasswordField"),
    Some("pane"),
    None,
];
const TITLES: [Option<&str>; 7] = [
    None,
    Some("Password"),
    Some("Enter PIN"),
    Some("One-time code"),
    Some("Passwortfeld"),
    Some("Notes"),
    Some("Compass words"),
];

#[derive(Debug, Clone)]
struct Spec {
    role: usize,
    subrole: usize,
    title: usize,
    visible: Option<bool>,
    selected: bool,
    secret: Option<u8>,
    children: Vec<Spec>,
}

/// A spec's own fields, as the strategy draws them.
type Fields = (usize, usize, usize, Option<bool>, bool, Option<u8>);

impl Spec {
    fn new((role, subrole, title, visible, selected, secret): Fields, children: Vec<Spec>) -> Spec {
        Spec {
            role,
            subrole,
            title,
            visible,
            selected,
            secret,
            children,
        }
    }
}

fn spec() -> impl Strategy<Value = Spec> {
    let fields = || {
        (
            0..ROLES.len(),
            0..SUBROLES.len(),
            0..TITLES.len(),
            prop::option::weighted(0.2, Just(false)),
            prop::bool::weighted(0.1),
            prop::option::weighted(0.3, 0..12u8),
        )
    };
    let leaf = fields().prop_map(|fields| Spec::new(fields, vec![]));
    leaf.prop_recursive(4, 48, 5, move |inner| {
        (fields(), prop::collection::vec(inner, 0..5))
            .prop_map(|(fields, children)| Spec::new(fields, children))
    })
}

/// A tree of windows; the focus path follows first children `focus` deep.
fn generated(windows: Vec<Spec>, focus: usize) -> Answer<'static> {
    let mut root = Element::new("app", Role::Application);
    root.title = Some("App".into());
    let mut stack: Vec<(Spec, *mut Element, usize, bool)> = Vec::new();
    for (i, w) in windows.into_iter().enumerate().rev() {
        stack.push((w, &mut root, 1, i == 0));
    }
    let mut ids = 0;
    let mut secret_of = Vec::new();
    while let Some((spec, parent, depth, on_path)) = stack.pop() {
        ids += 1;
        let role = if depth == 1 {
            Role::Window
        } else {
            ROLES[spec.role]
        };
        let mut e = Element::new(format!("e{ids}"), role);
        e.subrole = SUBROLES[spec.subrole].map(Into::into);
        e.title = TITLES[spec.title].map(Into::into);
        e.visible = spec.visible;
        e.selected = spec.selected.then_some(true);
        if on_path && depth <= focus {
            e.focused = Some(true);
        }
        secret_of.push(spec.secret);
        // SAFETY: `parent` points into `root`, which outlives the loop; a
        // parent's children vector is only pushed to before its children's
        // own children are built (they are popped after it is complete).
        let parent = unsafe { &mut *parent };
        parent.children.push(e);
        let me: *mut Element = parent.children.last_mut().unwrap();
        for (i, child) in spec.children.into_iter().enumerate().rev() {
            stack.push((child, me, depth + 1, on_path && i == 0));
        }
    }
    let mut answer = Answer {
        protocol: "0.2.0".into(),
        instance: "gen".into(),
        root,
    };
    each_mut(&mut answer.root, |n, e| {
        let secret = if n == 0 { None } else { secret_of[n - 1] };
        plant(e, n, secret)
    });
    answer
}

// ---------------------------------------------------------------------------
// Mutated real trees.

/// Small real trees (SOURCES.md): a macOS page with a password field, a
/// native macOS window, a Playwright ARIA snapshot.
fn real_trees() -> &'static [Answer<'static>] {
    static TREES: OnceLock<Vec<Answer<'static>>> = OnceLock::new();
    TREES.get_or_init(|| {
        let raw =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/realworld/raw");
        [
            (
                ImportFormat::AxDump,
                "chromium-mac/html/input-password-expected-mac.txt",
            ),
            (ImportFormat::AxJson, "screen2ax/system_acc.json"),
            (
                ImportFormat::Aria,
                "playwright-aria/insurance_navigator/58c2dae3b826dc0a70316b4e267125278417f851.md",
            ),
        ]
        .iter()
        .map(|(format, path)| {
            let bytes = std::fs::read(raw.join(path)).unwrap_or_else(|e| {
                panic!("{path}: {e} (the real trees are in tests/fixtures/realworld/raw)")
            });
            import(*format, &bytes).unwrap_or_else(|e| panic!("{path}: {e}"))
        })
        .collect()
    })
}

/// One mutation: which element (modulo the tree's size) and what to do.
#[derive(Debug, Clone)]
struct Mutation {
    at: usize,
    op: u8,
}

fn mutate(
    answer: &Answer<'static>,
    mutations: &[Mutation],
    secrets_at: &[(usize, u8)],
) -> Answer<'static> {
    let mut answer = answer.clone();
    let n = Tree::new(&answer.root).len();
    let mut ops = vec![Vec::new(); n];
    for m in mutations {
        ops[m.at % n].push(m.op);
    }
    let mut secret = vec![None; n];
    for &(at, which) in secrets_at {
        secret[at % n] = Some(which);
    }
    each_mut(&mut answer.root, |i, e| {
        if i > 0 {
            for &op in &ops[i] {
                match op {
                    0 => e.role = Role::Text.into(),
                    1 => e.subrole = Some("AXSecureTextField".into()),
                    2 => e.subrole = Some("password".into()),
                    3 => e.title = Some("Verification code".into()),
                    4 => e.title = Some("Password".into()),
                    5 => e.visible = Some(false),
                    6 => e.visible = Some(true),
                    7 => e.selected = Some(true),
                    8 => e.selected = None,
                    9 => e.subrole = None,
                    _ => e.hovered = Some(true),
                }
            }
        }
        plant(e, i, if i == 0 { None } else { secret[i] });
    });
    answer
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn generated_trees_never_leak_and_fit_the_budget(
        windows in prop::collection::vec(spec(), 1..4),
        focus in 0..4usize,
        action in 0..ACTIONS.len(),
        budget in budget(),
        outline in any::<bool>(),
    ) {
        let answer = generated(windows, focus);
        prop_assert!(ctxgate::check(&answer).iter().all(|f| !f.is_error()));
        invariants(&answer, &request(action, budget, outline))?;
    }

    #[test]
    fn mutated_real_trees_never_leak_and_fit_the_budget(
        tree in 0..3usize,
        mutations in prop::collection::vec((any::<usize>(), 0..11u8).prop_map(|(at, op)| Mutation { at, op }), 0..40),
        secrets_at in prop::collection::vec((any::<usize>(), 0..12u8), 0..12),
        action in 0..ACTIONS.len(),
        budget in budget(),
        outline in any::<bool>(),
    ) {
        let answer = mutate(&real_trees()[tree], &mutations, &secrets_at);
        let findings = ctxgate::check(&answer);
        prop_assert!(findings.iter().all(|f| !f.is_error()), "{findings:?}");
        invariants(&answer, &request(action, budget, outline))?;
    }
}

#[test]
fn the_canaries_and_secrets_are_what_the_oracle_thinks() {
    // The card numbers pass Luhn, so the policy's pattern redacts them.
    for n in [0, 1, 7, 12345] {
        let digits: Vec<u32> = card(n).chars().filter_map(|c| c.to_digit(10)).collect();
        assert_eq!(digits.len(), 16);
        let sum: u32 = digits
            .iter()
            .rev()
            .enumerate()
            .map(|(i, &d)| {
                if i % 2 == 1 {
                    if d * 2 > 9 {
                        d * 2 - 9
                    } else {
                        d * 2
                    }
                } else {
                    d
                }
            })
            .sum();
        assert_eq!(sum % 10, 0, "{}", card(n));
    }
    assert_eq!(letters(0, 16).len(), 16);
    // The oracle masks what the default policy masks.
    let mut pw = Element::new("pw", Role::Text);
    pw.title = Some("Password".into());
    assert!(masked(&pw));
    pw.title = Some("Compass words".into());
    assert!(!masked(&pw));
}
