//! The policy engine through the library: load errors with file:line:col,
//! runtime errors, memoisation and the cross-request cache, the floor,
//! runaway policies, the default policy's plan and patterns. Load, plan
//! and decision cases that need no code are folders of
//! `tests/cases/policy/` (see `policy_cases.rs`).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::floor::FLOOR_SECURE_TEXT;
use crate::policy::{Action, Budget, ElementInput, Policy, RequestInput, Scope};
use crate::Role;

fn request(action: &str) -> RequestInput {
    RequestInput {
        action: Action {
            name: action.to_string(),
            target: None,
        },
        instance: "test".to_string(),
        protocol: "0.2.0".to_string(),
    }
}

fn element(role: Role) -> ElementInput<'static> {
    ElementInput {
        role,
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
        inside: vec![(Role::Window, None), (Role::Application, None)].into(),
        secure_elsewhere: false,
    }
}

/// regorus's parser is exponential in bracket nesting: before the bound,
/// 16 levels of `[` took ~7 s to load, 16 of `{` 4 s, 24 of `{` did not end
/// in 15 s. Each kind, and any mix, is refused past 10 levels, at the
/// bracket too deep, by the loader and by `policy check`, at once.
#[test]
fn brackets_of_every_kind_nested_deeper_than_10_are_refused_before_regorus_parses_them() {
    let source = |y: &str| {
        format!("package ctxgate\n\n# [[[[[[[[[[[{{{{{{{{{{{{((((((((((((\nx := \"[[[[[[[[[[[{{{{{{{{{{{{(((((((((((\"\ny := {y}\n")
    };
    let repeat =
        |open: &str, close: &str, n: usize| format!("{}1{}", open.repeat(n), close.repeat(n));
    for (y, kind, col) in [
        (repeat("[", "]", 11), '[', 16),
        (repeat("{", "}", 24), '{', 16),
        (repeat("(", ")", 11), '(', 16),
        (repeat("{\"a\": ", "}", 11), '{', 66),
        (repeat("[{", "}]", 6), '[', 16),
        (repeat("({[", "]})", 4), '{', 16),
    ] {
        let start = Instant::now();
        let err =
            Policy::from_sources(vec![("deep.rego".into(), source(&y))]).expect_err("refused");
        assert!(
            start.elapsed() < Duration::from_secs(1),
            "{y}: {:?}",
            start.elapsed()
        );
        assert_eq!(
            err.to_string(),
            format!("policy deep.rego:5:{col}: `{kind}` nests deeper than 10 levels of brackets (`[`, `{{` and `(` counted together); regorus parses nested brackets in time exponential in their depth, so ctxgate refuses them: flatten the expression (into helper rules, say)"),
        );
        let findings = crate::policy::check_sources(&[crate::policy::PolicyFile {
            name: "deep.rego".into(),
            source: source(&y),
        }]);
        assert_eq!(findings.len(), 1, "{y}: {findings:?}");
        assert_eq!((findings[0].line, findings[0].col), (5, col), "{y}");
    }
    for y in [
        repeat("[", "]", 10),
        repeat("{", "}", 10),
        repeat("(", ")", 10),
        repeat("[{", "}]", 5),
    ] {
        Policy::from_sources(vec![("ok.rego".into(), source(&y))])
            .unwrap_or_else(|e| panic!("{y}: {e}"));
    }
}

#[test]
fn runaway_policy_ends_within_the_time_limit() {
    let policy = Policy::from_path(Path::new("tests/policies/runaway.rego"))
        .unwrap()
        .with_time_limit(Duration::from_millis(200));
    let mut evaluator = policy.evaluator(&request("focus")).unwrap();
    let start = Instant::now();
    let err = evaluator.decide(&element(Role::Text)).expect_err("fails");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "took {:?}",
        start.elapsed()
    );
    assert_eq!(
        err.to_string(),
        "policy evaluation failed (priority): the evaluation ran longer than the limit of 200 ms (a runaway rule?)"
    );
}

#[test]
fn floor_masks_secure_text_of_every_role_whatever_the_policy_says() {
    let policy = Policy::from_path(Path::new("tests/policies/keeps_secure")).unwrap();
    let mut evaluator = policy.evaluator(&request("app")).unwrap();
    for role in Role::ALL {
        for subrole in ["AXSecureTextField", "password", "NewPassword", "SECURE"] {
            let mut secure = element(role);
            secure.subrole = Some(subrole);
            let decision = evaluator.decide(&secure).unwrap();
            assert_eq!(
                decision.mask,
                vec![Arc::from(FLOOR_SECURE_TEXT)],
                "{role} {subrole}"
            );
            assert_eq!(decision.keep, vec![Arc::from("everything")]);
            assert_eq!(decision.outcome().0, "mask");
        }
        // Not secure: the floor stays out.
        for subrole in [None, Some("pass"), Some("AXTextField")] {
            let mut plain = element(role);
            plain.subrole = subrole;
            assert!(
                evaluator.decide(&plain).unwrap().mask.is_empty(),
                "{role} {subrole:?}"
            );
        }
    }
}

/// A rule that holds for the test's Text (two ancestors) and for no probe
/// element (a probe's Text has three): the policy loads, and the request
/// meets the error. Loading evaluates every rule on the probes and refuses
/// a policy that fails there (tests/policy_tools.rs).
const REAL: &str =
    "\n\nreal if {\n\tinput.element.role == \"Text\"\n\tcount(input.inside) == 2\n}\n";

fn decide_error(source: &str, element: &ElementInput<'_>) -> String {
    let source = format!("{source}{REAL}");
    let policy = Policy::from_sources(vec![("p.rego".into(), source)]).unwrap();
    let mut evaluator = policy.evaluator(&request("app")).unwrap();
    match evaluator.decide(element) {
        Ok(d) => panic!("decided {d:?}"),
        Err(e) => e.to_string(),
    }
}

/// Reasons reach `ctxgate:withheld`, `ctxgate:omitted` and the report: one
/// that is not a rule id fails the request, and the message names the rule
/// and the length, never the reason.
#[test]
fn a_reason_that_is_not_a_rule_id_fails_the_request_without_showing_it() {
    let value = serde_json::json!("hunter2 is my password");
    let mut e = element(Role::Text);
    e.attribute_names = vec!["value"];
    e.attributes = vec![("value", &value)];
    let not_an_id = |rule: &str, len: usize| {
        format!("policy evaluation failed ({rule}): `{rule}` holds a reason of {len} bytes that is not a rule id; reasons are written into notices and the report, so each must match `[a-z0-9][a-z0-9._:-]{{0,63}}` (a constant such as `\"secure-text\"`, never a value read from the input)")
    };
    for rule in ["deny", "mask", "keep", "prune"] {
        let source = format!("package ctxgate\n\nelement_attributes := {{\"value\"}}\n\n{rule} contains input.element.attributes.value if {{\n\treal\n\tinput.element.attributes.value\n}}\n");
        let err = decide_error(&source, &e);
        assert_eq!(err, not_an_id(rule, 22));
        assert!(!err.contains("hunter2"), "{err}");
    }
    for (reason, len) in [
        ("Secure-Text", 11),
        ("-text", 5),
        ("", 0),
        ("a b", 3),
        ("x\\ny", 3),
        (&*"a".repeat(65), 65),
        ("pässword", 9),
    ] {
        let source = format!("package ctxgate\n\nmask contains \"{reason}\" if real\n");
        assert_eq!(
            decide_error(&source, &e),
            not_an_id("mask", len),
            "{reason}"
        );
    }
    // 64 bytes, digits, `.`, `_`, `:` and `-` are rule ids.
    let source = format!(
        "package ctxgate\n\nmask contains \"{}\"\nmask contains \"0.a_b:c-d\"\n",
        "a".repeat(64)
    );
    let policy = Policy::from_sources(vec![("p.rego".into(), source)]).unwrap();
    let decision = policy
        .evaluator(&request("app"))
        .unwrap()
        .decide(&e)
        .unwrap();
    assert_eq!(decision.mask.len(), 2);
}

#[test]
fn a_reason_of_the_wrong_kind_is_named_by_its_kind_not_its_value() {
    let e = element(Role::Text);
    for (body, message) in [
        (
            "mask contains 4111111111111111 if real",
            "`mask` must hold reason strings; it holds a number",
        ),
        (
            "mask contains {\"secret\": true} if real",
            "`mask` must hold reason strings; it holds an object",
        ),
        (
            "mask contains [\"secret\"] if real",
            "`mask` must hold reason strings; it holds an array",
        ),
        (
            "mask := {\"secret\": 1} if real",
            "`mask` must be a set of reason strings; it is an object",
        ),
    ] {
        let err = decide_error(&format!("package ctxgate\n\n{body}\n"), &e);
        assert_eq!(
            err,
            format!("policy evaluation failed (mask): {message}"),
            "{body}"
        );
        assert!(!err.contains("secret") && !err.contains("4111"), "{err}");
    }
}

/// The plan's errors do not show values either: the per-request rules
/// read `input.app.instance`, the provider's text (the app's title never
/// reaches the plan).
#[test]
fn plan_errors_name_kinds_and_lengths_not_values() {
    let plan_error = |body: &str| {
        let policy = Policy::from_sources(vec![(
            "p.rego".into(),
            format!("package ctxgate\n\n{body}\n"),
        )])
        .unwrap();
        // The load's probes use the instance `probe`; each rule below
        // misbehaves only for another app, so the request meets the error.
        let mut request = request("app");
        request.instance = "Secret Bank".to_string();
        policy.plan(&request).expect_err("fails").to_string()
    };
    for (body, message) in [
        ("scope := input.app.instance if input.app.instance != \"probe\"", "policy evaluation failed (scope): `scope` is a string of 11 bytes that is none of `selection`, `focus`, `window`, `app`; it must be one of them"),
        ("as_set := {input.app.instance}\n\nscope := as_set if input.app.instance != \"probe\"", "policy evaluation failed (scope): `scope` must be one of `selection`, `focus`, `window`, `app`; it is an array"),
        ("budget := {input.app.instance: 10} if input.app.instance != \"probe\"", "policy evaluation failed (budget): `budget` has a key of 11 bytes that is neither `tokens` nor `bytes`; it must be `{\"tokens\": N}` or `{\"bytes\": N}`"),
        ("budget := {\"tokens\": input.app.instance} if input.app.instance != \"probe\"", "policy evaluation failed (budget): `budget.tokens` must be a positive whole number"),
        ("element_attributes := {1} if input.app.instance != \"probe\"", "policy evaluation failed (element_attributes): `element_attributes` must hold attribute names (strings); it holds a number"),
        ("element_attributes := input.app.instance if input.app.instance != \"probe\"", "policy evaluation failed (element_attributes): `element_attributes` must be a set; it is a string"),
        ("title_patterns := {input.app.instance: \"x\"} if input.app.instance != \"probe\"", "policy evaluation failed (title_patterns): `title_patterns` has a name of 11 bytes that is not a rule id; names reach the policy in `title_matches` and the reviewer's doc, so each must match `[a-z0-9][a-z0-9._:-]{0,63}`"),
    ] {
        let err = plan_error(body);
        assert_eq!(err, message, "{body}");
        assert!(!err.contains("Secret"), "{err}");
    }
}

/// A tree's worth of elements over a few distinct projections.
fn elements(n: usize) -> Vec<ElementInput<'static>> {
    let roles = [
        Role::Text,
        Role::Row,
        Role::Cell,
        Role::Group,
        Role::Heading,
    ];
    (0..n)
        .map(|i| {
            let mut e = element(roles[i % roles.len()]);
            e.visible = i % 7 != 0;
            e
        })
        .collect()
}

#[test]
fn decisions_are_memoised_per_projection_and_cached_across_requests() {
    let policy = Policy::embedded_default().unwrap();
    let tree = elements(1000);
    let distinct = {
        let mut seen: Vec<&ElementInput<'_>> = Vec::new();
        for e in &tree {
            if !seen.contains(&e) {
                seen.push(e);
            }
        }
        seen.len()
    };
    assert_eq!(distinct, 10);
    let mut first = policy.evaluator(&request("window")).unwrap();
    let decisions: Vec<_> = tree.iter().map(|e| first.decide(e).unwrap()).collect();
    // The default policy defines mask, keep, prune and priority, each run
    // once per distinct value of what it reads (`engine::rule_reads`):
    // mask, keep and priority tell the 5 roles apart, prune the 2
    // visibilities; none runs again for a repeat. Without the per-rule
    // memo, four per distinct projection (40).
    assert_eq!(first.evaluations(), 5 + 5 + 2 + 5);
    // A later request finds them in the shared cache and copies each for
    // itself (`Decision::request_local`): equal, but no reference count
    // is one the first request's thread also writes; within the request,
    // one copy per projection.
    let mut second = policy.evaluator(&request("window")).unwrap();
    let again: Vec<_> = tree.iter().map(|e| second.decide(e).unwrap()).collect();
    for (k, (a, d)) in again.iter().zip(&decisions).enumerate() {
        assert_eq!(a, d);
        assert!(!Arc::ptr_eq(a, d));
        let twin = tree.iter().position(|e| *e == tree[k]).unwrap();
        assert!(Arc::ptr_eq(a, &again[twin]));
    }
    assert_eq!(second.evaluations(), 0);
    // Another action is another request input: evaluated afresh.
    let mut other = policy.evaluator(&request("focus")).unwrap();
    other.decide(&tree[0]).unwrap();
    assert_eq!(other.evaluations(), 4);
    assert!(Arc::ptr_eq(first.plan(), second.plan()));
}

#[test]
fn policy_is_shared_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Policy>();
    let policy = Arc::new(Policy::embedded_default().unwrap());
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let policy = policy.clone();
            std::thread::spawn(move || {
                let mut evaluator = policy.evaluator(&request("app")).unwrap();
                elements(50)
                    .iter()
                    .map(|e| evaluator.decide(e).unwrap().priority)
                    .sum::<f64>()
            })
        })
        .collect();
    let sums: Vec<f64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(sums[0], sums[1]);
}

#[test]
fn default_plan_per_action() {
    let policy = Policy::embedded_default().unwrap();
    for (action, scope) in [
        ("selection", Scope::Selection),
        ("focus", Scope::Focus),
        ("window", Scope::Window),
        ("app", Scope::App),
        ("summarize", Scope::Focus),
    ] {
        let plan = policy.plan(&request(action)).unwrap();
        assert_eq!(plan.scope, scope, "{action}");
        assert_eq!(plan.budget, Some(Budget::Tokens(8000)));
    }
    let plan = policy.plan(&request("focus")).unwrap();
    let ids: Vec<&str> = plan.redact.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "ai-api-key",
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
            "github-token",
            "gitlab-token",
            "google-api-key",
            "iban",
            "jwt",
            "national-id",
            "national-id-script",
            "password-assignment",
            "password-assignment-script",
            "platform-token",
            "private-key",
            "registry-token",
            "service-api-key",
            "session-id",
            "signed-url",
            "slack-token",
            "stripe-key",
            "token-assignment",
            "url-credentials",
        ]
    );
    assert!(plan
        .redact
        .iter()
        .all(|r| r.luhn == (r.id == "card-number")));
    let names: Vec<&str> = plan
        .title_patterns
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(names, ["one-time-code", "passcode", "password", "pin"]);
    assert!(plan.element_attributes.is_empty());
    assert_eq!(policy.hash().len(), 64);
}

#[test]
fn default_redactions_catch_secrets_and_spare_prose() {
    let policy = Policy::embedded_default().unwrap();
    let plan = policy.plan(&request("app")).unwrap();
    let pattern = |id: &str| &plan.redact.iter().find(|r| r.id == id).unwrap().regex;
    let fake_jwt = format!(
        "{}.{}.{}",
        "eyJhbGciOiJIUzI1NiJ9", "eyJzdWIiOiIxMjM0In0", "c2lnbmF0dXJlX2hlcmU"
    );
    let samples = [
        (
            "card-number",
            "pay with 4111 1111 1111 1111 today".to_string(),
        ),
        (
            "aws-access-key",
            format!("key {}{}", "AKIA", "IOSFODNN7EXAMPLE"),
        ),
        ("github-token", format!("{}{}", "ghp_", "a".repeat(36))),
        (
            "github-token",
            format!("{}{}", "github_pat_", "B".repeat(40)),
        ),
        (
            "slack-token",
            format!("{}-{}", "xoxb", "123456789012-abcdefghij"),
        ),
        (
            "ai-api-key",
            format!("{}-{}", "sk-proj", "abcdefghijklmnopqrstuvwxyz"),
        ),
        (
            "ai-api-key",
            format!("{}-{}", "sk-ant-api03", "abcdefghijklmnopqrstuv"),
        ),
        ("google-api-key", format!("{}{}", "AIza", "S".repeat(35))),
        ("jwt", fake_jwt),
        (
            "bearer-token",
            "Authorization: Bearer abcdefghijklmnop1234".to_string(),
        ),
        (
            "private-key",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----".to_string(),
        ),
        (
            "private-key",
            "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----".to_string(),
        ),
        (
            "basic-auth",
            "curl -H 'Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l'".to_string(),
        ),
        (
            "url-credentials",
            "psql postgres://app:hunter22@db.internal/x".to_string(),
        ),
        (
            "url-credentials",
            "https://:ghtoken1@example.com".to_string(),
        ),
        ("credential-assignment", "DB_PASSWORD=hunter22".to_string()),
        (
            "credential-assignment",
            r#"{"api_key": "abc def"}"#.to_string(),
        ),
        (
            "credential-assignment",
            "password = 'p4ss w0rd'".to_string(),
        ),
        (
            "credential-assignment",
            "?access_token=abcd1234&x=1".to_string(),
        ),
        (
            "credential-assignment",
            "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI".to_string(),
        ),
    ];
    for (id, text) in &samples {
        assert!(pattern(id).is_match(text), "{id} misses {text}");
    }
    let prose = [
        "Meeting at 10:30 about the task list; call 555-0100; skip the AI skit; the key is under the mat.",
        "Forgot password? Reset it at https://example.com/reset?user=me",
        "Basic settings: Secret Santa list, ssh://git@github.com/x and http://localhost:8080/a@b",
        "Change your password. The password must be at least 8 characters.",
    ];
    // A `luhn` pattern only finds digit runs; the Luhn windows decide
    // (tests/redaction.rs).
    for r in plan.redact.iter().filter(|r| !r.luhn) {
        for prose in prose {
            assert!(!r.regex.is_match(prose), "{} matches {prose:?}", r.id);
        }
    }
    let title = |name: &str| {
        &plan
            .title_patterns
            .iter()
            .find(|(n, _)| n == name)
            .unwrap()
            .1
    };
    assert!(title("password").is_match("Password"));
    assert!(title("passcode").is_match("Enter passcode"));
    assert!(title("pin").is_match("PIN"));
    assert!(!title("pin").is_match("Pin this note"));
    assert!(title("one-time-code").is_match("Verification code"));
}

/// Prints the cost of one cold projection (run with `--nocapture`).
#[test]
fn cost_per_projection() {
    let policy = Policy::embedded_default().unwrap();
    let mut evaluator = policy.evaluator(&request("focus")).unwrap();
    let mut inputs = Vec::new();
    // 200 distinct projections of realistic depth (2 to 21 ancestors).
    for depth in 0..20 {
        for (i, role) in [
            Role::Text,
            Role::Row,
            Role::Cell,
            Role::Group,
            Role::Heading,
        ]
        .into_iter()
        .enumerate()
        {
            for focused in [false, true] {
                let mut e = element(role);
                e.focused = focused;
                e.visible = i != 3 || depth % 2 == 0;
                e.inside = std::iter::repeat_n((Role::Group, None), depth)
                    .chain(e.inside.iter())
                    .collect();
                inputs.push(e);
            }
        }
    }
    let start = Instant::now();
    for e in &inputs {
        evaluator.decide(e).unwrap();
    }
    let cold = start.elapsed() / inputs.len() as u32;
    let start = Instant::now();
    for _ in 0..200 {
        for e in &inputs {
            evaluator.decide(e).unwrap();
        }
    }
    let warm = start.elapsed() / (inputs.len() as u32 * 200);
    println!(
        "{} projections, {} evaluations: {cold:?} per cold projection, {warm:?} per memoised decide",
        inputs.len(),
        evaluator.evaluations()
    );
    assert!(evaluator.evaluations() <= inputs.len() * 4);
}

/// Loading the embedded default compiles nothing (its table answers); it
/// must stay cheap enough to do at start-up.
#[test]
fn loading_the_default_policy_is_quick() {
    let start = Instant::now();
    Policy::embedded_default().unwrap();
    let took = start.elapsed();
    println!("embedded_default() took {took:?}");
    assert!(took < Duration::from_secs(2), "{took:?}");
}

/// A host's own decider that keeps everything and names no mask.
struct KeepAll(Vec<Arc<str>>);

impl crate::trim::Decider for KeepAll {
    fn decide(&mut self, _: &ElementInput<'_>) -> crate::Result<Arc<crate::policy::Decision>> {
        Ok(Arc::new(crate::policy::Decision {
            keep: self.0.clone(),
            ..Default::default()
        }))
    }
    fn evaluations(&self) -> usize {
        0
    }
}

fn plan(scope: Scope) -> crate::policy::RequestPlan {
    crate::policy::RequestPlan {
        scope,
        budget: None,
        redact: vec![],
        title_patterns: vec![],
        element_attributes: vec![],
    }
}

/// The floor is the trimmer's, not only the policy engine's: a host's own
/// decider that keeps everything still gets every secure field masked,
/// whatever its role, unknown roles (read as `Group`) included.
#[test]
fn the_floor_holds_under_a_hosts_own_decider_for_every_role() {
    let roles = Role::ALL
        .iter()
        .map(|r| r.as_str())
        .filter(|r| *r != "Application")
        .chain(["TextField", "AXSecureTextField"]);
    for (i, role) in roles.enumerate() {
        for subrole in ["AXSecureTextField", "NewPassword"] {
            let bytes = format!(
                r#"{{"protocol":"0.2.0","instance":"i","root":{{"id":"app","role":"Application","children":[{{"id":"w","role":"Window","focused":true,"children":[{{"id":"f{i}","role":"{role}","subrole":"{subrole}","title":"hunter2","content":[{{"type":"text","text":"hunter2"}}],"attributes":{{"AXValue":"hunter2"}},"children":[{{"id":"in","role":"Text","title":"hunter2"}}]}}]}}]}}}}"#
            );
            let answer = crate::read_conforming(bytes.as_bytes(), &crate::Limits::default())
                .unwrap_or_else(|e| panic!("{role}: {e}"));
            let out = crate::trim::trim_with(
                &answer,
                &crate::Request::new("app"),
                &plan(Scope::App),
                &mut KeepAll(vec![Arc::from("everything")]),
                "h",
                &crate::Limits::default(),
            )
            .unwrap();
            assert_eq!(
                out.rendered,
                format!(
                    r#"{{"protocol":"0.2.0","instance":"i","root":{{"id":"app","role":"Application","children":[{{"id":"w","role":"Window","focused":true,"children":[{{"id":"f{i}","role":"{role}","subrole":"{subrole}","attributes":{{"ctxgate:withheld":{{"rule":"floor:secure-text","empty":false}}}}}}]}}]}}}}"#
                ),
                "{role} {subrole}"
            );
            let report = serde_json::to_string(&out.report).unwrap();
            assert!(!report.contains("hunter2"), "{report}");
        }
    }
}

/// Reasons from a host's own decider are checked too: they are written into
/// notices and the report.
#[test]
fn a_hosts_decider_cannot_put_text_into_reasons() {
    let bytes = std::fs::read("examples/notes.json").unwrap();
    let answer = crate::read_conforming(&bytes, &crate::Limits::default()).unwrap();
    let err = crate::trim::trim_with(
        &answer,
        &crate::Request::new("app"),
        &plan(Scope::App),
        &mut KeepAll(vec![Arc::from("Comment by Ada")]),
        "h",
        &crate::Limits::default(),
    )
    .expect_err("refused");
    assert_eq!(
        err.to_string(),
        "policy evaluation failed (keep): `keep` holds a reason of 14 bytes that is not a rule id; reasons are written into notices and the report, so each must match `[a-z0-9][a-z0-9._:-]{0,63}` (a constant such as `\"secure-text\"`, never a value read from the input)"
    );
}

/// `chains` chains of `depth` nested Groups under one window, each Group
/// with its own subrole: every element is a distinct projection.
fn chains_answer(chains: usize, depth: usize) -> String {
    let mut json = String::from(
        r#"{"protocol":"0.2.0","instance":"i","root":{"id":"app","role":"Application","children":[{"id":"w","role":"Window","focused":true,"children":["#,
    );
    for c in 0..chains {
        if c > 0 {
            json.push(',');
        }
        for level in 0..depth {
            json.push_str(&format!(
                r#"{{"id":"c{c}-{level}","role":"Group","subrole":"sub-{c}-{level}","children":["#
            ));
        }
        json.push_str(&"]}".repeat(depth));
    }
    json.push_str("]}]}}");
    json
}

/// Counts what it is asked and checks each projection's ancestors.
struct Counting {
    calls: usize,
    ancestors: usize,
}

impl crate::trim::Decider for Counting {
    fn decide(&mut self, e: &ElementInput<'_>) -> crate::Result<Arc<crate::policy::Decision>> {
        self.calls += 1;
        self.ancestors += e.inside.len();
        // The chain is the real one: nearest first, up to the root.
        let roles: Vec<Role> = e.inside.iter().map(|(r, _)| r).collect();
        if let Some(Role::Group) = roles.first() {
            let (_, subrole) = e.inside.iter().next().unwrap();
            let (mine, theirs) = (e.subrole.unwrap(), subrole.unwrap());
            let level = |s: &str| s.rsplit('-').next().unwrap().parse::<usize>().unwrap();
            assert_eq!(level(mine), level(theirs) + 1);
        }
        if !roles.is_empty() {
            assert_eq!(roles.last(), Some(&Role::Application));
        }
        Ok(Arc::new(crate::policy::Decision::default()))
    }
    fn evaluations(&self) -> usize {
        self.calls
    }
}

/// 12.4: 19 chains of 1,000 nested Groups with distinct subroles (1.1 MB,
/// within every default limit) took 6.4 s, as each of the 19,002
/// projections rebuilt, hashed and digested its up to 1,001 ancestors. Now
/// each context's chain is one link built from its parent's: the links
/// built are fewer than the elements, not the 9.5 million ancestor entries
/// the projections hold, and each projection is decided once.
#[test]
fn a_projections_ancestors_are_built_once_per_context_not_once_per_projection() {
    let json = chains_answer(19, 1000);
    let answer = crate::read_conforming(json.as_bytes(), &crate::Limits::default()).unwrap();
    let mut decider = Counting {
        calls: 0,
        ancestors: 0,
    };
    let (out, logs) = super::with_logs(|| {
        crate::trim::trim_with(
            &answer,
            // 19,002 projections, each built and decided in a debug build on a
            // loaded machine: the default 5 s deadline is the test's flake.
            &crate::Request::new("app").timeout(std::time::Duration::from_secs(300)),
            &plan(Scope::App),
            &mut decider,
            "h",
            &crate::Limits::default(),
        )
    });
    out.unwrap();
    let elements = 2 + 19 * 1000;
    assert_eq!(decider.calls, elements);
    // Each chain's k-th Group has k + 1 ancestors.
    assert_eq!(decider.ancestors, 1 + 19 * (1000 * 1001 / 2 + 1000));
    // Built links: the app, the window and every Group but the 19 leaves.
    let links = 2 + 19 * 999;
    assert!(
        logs.contains(&format!(
            "projections projections=19002 contexts=19002 links={links}\n"
        )),
        "{}",
        logs.lines()
            .find(|l| l.contains("links="))
            .unwrap_or(&logs[..0])
    );
}

/// The same shape through a real policy that reads `input.inside`: one
/// evaluation per distinct projection, and the policy sees every ancestor.
#[test]
fn a_policy_sees_every_ancestor_of_a_deep_chain() {
    let policy = Policy::from_sources(vec![(
        "deep.rego".into(),
        "package ctxgate\n\nscope := \"app\"\n\nprune contains \"deep\" if {\n\tcount(input.inside) > 400\n\tinput.inside[count(input.inside) - 1].role == \"Application\"\n\tinput.inside[0].subrole != input.element.subrole\n}\n".into(),
    )])
    .unwrap();
    let json = chains_answer(2, 500);
    let gate = crate::Gate::new(policy);
    let out = gate
        .trim_bytes(json.as_bytes(), &crate::Request::new("app"))
        .unwrap();
    assert_eq!(out.report.evaluations, 2 + 2 * 500);
    // Groups at level 399 and deeper have more than 400 ancestors.
    assert_eq!(
        out.report.rules,
        [("prune:deep".to_string(), 2 * 101)].into()
    );
}

/// A reason must be a constant of the policy, not only look like one: a
/// value that is itself a plain word (`hunter2`) is refused too.
#[test]
fn a_reason_must_be_a_string_constant_of_the_policy() {
    let value = serde_json::json!("hunter2");
    let mut e = element(Role::Text);
    e.attribute_names = vec!["value"];
    e.attributes = vec![("value", &value)];
    let not_a_constant = |rule: &str, len: usize| {
        format!("policy evaluation failed ({rule}): `{rule}` holds a reason of {len} bytes that is not a string constant of the policy; reasons are rule ids written into notices and the report, so each must be written in the policy as a constant (`{rule} contains \"secure-text\"`), never computed or read from the input")
    };
    for (body, rule, len) in [
        (
            "deny contains input.element.attributes.value if {\n\treal\n\tinput.element.attributes.value\n}",
            "deny",
            7,
        ),
        ("mask contains lower(input.element.role) if real", "mask", 4),
        (
            "keep contains sprintf(\"pinned-%d\", [1]) if real",
            "keep",
            8,
        ),
        (
            "prune contains concat(\"-\", [\"a\", \"b\"]) if real",
            "prune",
            3,
        ),
    ] {
        let source = format!("package ctxgate\n\nelement_attributes := {{\"value\"}}\n\n{body}\n");
        let err = decide_error(&source, &e);
        assert_eq!(err, not_a_constant(rule, len), "{body}");
        assert!(!err.contains("hunter2"), "{err}");
    }
    // Constants pass however they reach the set: raw strings, through a
    // variable or another rule; escapes and comments do not make one.
    let policy = Policy::from_sources(vec![(
        "p.rego".into(),
        "package ctxgate\n\n# \"from-a-comment\" is a constant too (harmless)\nreasons := {`raw-one`, \"quoted-two\"}\n\nkeep contains r if some r in reasons\n\nmask contains r if {\n\tr := \"via-variable\"\n}\n\ndeny contains \"from-a-comment\" if input.element.focused\n".into(),
    )])
    .unwrap();
    let decision = policy
        .evaluator(&request("app"))
        .unwrap()
        .decide(&e)
        .unwrap();
    assert_eq!(
        decision.keep,
        vec![Arc::from("quoted-two"), Arc::from("raw-one")]
    );
    assert_eq!(decision.mask, vec![Arc::from("via-variable")]);
    assert!(decision.deny.is_empty());
}

/// A secure field's attribute values never reach the policy, declared or
/// not: through the trimmer and through `Evaluator::decide` alike.
#[test]
fn a_secure_fields_attribute_values_never_reach_the_policy() {
    let source = "package ctxgate\n\nscope := \"app\"\n\nelement_attributes := {\"AXValue\"}\n\ndeny contains \"saw-value\" if input.element.attributes.AXValue\n";
    let policy = Policy::from_sources(vec![("p.rego".into(), source.into())]).unwrap();
    let value = serde_json::json!("hunter2");
    let mut e = element(Role::Group);
    e.attribute_names = vec!["AXValue"];
    e.attributes = vec![("AXValue", &value)];
    let mut evaluator = policy.evaluator(&request("app")).unwrap();
    assert_eq!(
        evaluator.decide(&e).unwrap().deny,
        vec![Arc::from("saw-value")]
    );
    e.subrole = Some("AXSecureTextField");
    let decision = evaluator.decide(&e).unwrap();
    assert!(decision.deny.is_empty(), "{decision:?}");
    assert_eq!(decision.mask, vec![Arc::from(FLOOR_SECURE_TEXT)]);

    let answer = r#"{"protocol":"0.2.0","instance":"i","root":{"id":"app","role":"Application","children":[{"id":"w","role":"Window","focused":true,"children":[{"id":"plain","role":"TextField","attributes":{"AXValue":"hunter2"}},{"id":"secure","role":"TextField","subrole":"AXSecureTextField","attributes":{"AXValue":"hunter2"}}]}]}}"#;
    let out = crate::Gate::new(policy)
        .trim_bytes(answer.as_bytes(), &crate::Request::new("app"))
        .unwrap();
    assert_eq!(
        out.rendered,
        r#"{"protocol":"0.2.0","instance":"i","root":{"id":"app","role":"Application","children":[{"id":"w","role":"Window","focused":true,"children":[{"id":"secure","role":"TextField","subrole":"AXSecureTextField","attributes":{"ctxgate:withheld":{"rule":"floor:secure-text","empty":false}}}],"attributes":{"ctxgate:omitted":{"children":1,"reasons":{"deny:saw-value":1}}}}]}}"#
    );
}

/// Found by `gate_properties` once the floor covered every role: a
/// selection inside a secure field made the default policy keep the
/// field and its enclosing Document (`contains_selection`), and trimming
/// that output again (the field now an empty placeholder) sent less. A
/// selection inside a secure field now counts for neither. Trimmed again,
/// the same elements are sent; the root's notice is not (what it counted is
/// not in that input, and an input's notices are not carried), and trimmed
/// once more nothing changes.
#[test]
fn a_selection_inside_a_secure_field_keeps_nothing_and_trimming_again_sends_the_same() {
    let gate = crate::Gate::embedded_default().unwrap();
    let expected = r#"{"protocol":"0.2.0","instance":"gen","root":{"id":"app","role":"Application","title":"App","children":[{"id":"e1","role":"Window","focused":true}],"attributes":{"ctxgate:omitted":{"children":1,"reasons":{"scope":1}}}}}"#;
    for (document, field) in [
        ("Document", "Group"),
        ("Document", "Text"),
        ("Group", "Document"),
    ] {
        let answer = format!(
            r#"{{"protocol":"0.2.0","instance":"gen","root":{{"id":"app","role":"Application","title":"App","children":[{{"id":"e1","role":"Window","focused":true}},{{"id":"e2","role":"Window","title":"W","children":[{{"id":"e3","role":"{document}","title":"D","children":[{{"id":"e4","role":"{field}","subrole":"AXSecureTextField","children":[{{"id":"e5","role":"Group","title":"hunter2","selected":true}}]}}]}}]}}]}}}}"#
        );
        let request = crate::Request::new("selection");
        let once = gate.trim_bytes(answer.as_bytes(), &request).unwrap();
        assert_eq!(once.rendered, expected, "{document} {field}");
        let twice = gate.trim_bytes(once.rendered.as_bytes(), &request).unwrap();
        assert_eq!(
            twice.rendered,
            r#"{"protocol":"0.2.0","instance":"gen","root":{"id":"app","role":"Application","title":"App","children":[{"id":"e1","role":"Window","focused":true}]}}"#,
            "{document} {field}"
        );
        assert_eq!(twice.report.reserved_attributes_dropped, 1);
        let thrice = gate
            .trim_bytes(twice.rendered.as_bytes(), &request)
            .unwrap();
        assert_eq!(thrice.rendered, twice.rendered, "{document} {field}");
    }
}

/// Many threads on one `Gate` (so on one policy's shared decision cache,
/// filled and read concurrently) send exactly what one thread sends.
#[test]
fn many_threads_on_one_gate_send_what_one_thread_sends() {
    use crate::{Gate, Request};
    let answers: Vec<Vec<u8>> = (0..3)
        .map(|seed| crate::render::json(&crate::synth::synth(400, seed)).into_bytes())
        .collect();
    let requests: Vec<Request> = ["selection", "focus", "window", "app"]
        .into_iter()
        // The deadline counts the wait for a core: 8 threads of a debug
        // build on a loaded 2-core machine passed the default 5 s (this
        // test is about the shared cache, not deadlines).
        .map(|action| {
            Request::new(action)
                .budget(Budget::Tokens(4_000))
                .timeout(Duration::from_secs(300))
        })
        .collect();
    let outcome = |gate: &Gate, a: usize, r: usize| -> String {
        let out = gate.trim_bytes(&answers[a], &requests[r]).unwrap();
        let decisions = serde_json::to_string(&out.report.decisions).unwrap();
        format!("{}\n{decisions}", out.rendered)
    };
    let alone = Gate::embedded_default().unwrap();
    let mut expected = Vec::new();
    for a in 0..answers.len() {
        for r in 0..requests.len() {
            expected.push(((a, r), outcome(&alone, a, r)));
        }
    }
    let shared = Gate::embedded_default().unwrap();
    std::thread::scope(|scope| {
        for t in 0..8usize {
            let (shared, expected, outcome) = (&shared, &expected, &outcome);
            scope.spawn(move || {
                // Each thread its own order, so misses and hits interleave.
                for i in 0..expected.len() {
                    let ((a, r), want) = &expected[(i * (t + 1) + t) % expected.len()];
                    assert_eq!(
                        &outcome(shared, *a, *r),
                        want,
                        "thread {t}, answer {a}, request {r}"
                    );
                }
            });
        }
    });
}

/// The app's title never enters Rego: per-element rules see the names of
/// the title patterns it matches, and the plan sees neither.
#[test]
fn the_app_title_reaches_the_policy_only_as_pattern_names() {
    let policy = Policy::from_sources(vec![(
        "p.rego".into(),
        r#"package ctxgate

title_patterns := {"bank": "(?i)bank", "mail": "(?i)mail"}

deny contains "bank-app" if "bank" in input.app.title_matches

keep contains "no-title" if object.get(input.app, "title", null) == null
"#
        .into(),
    )])
    .unwrap();
    let decide = |title: Option<&str>| {
        let mut evaluator = policy.evaluator_with_title(&request("app"), title).unwrap();
        let d = evaluator.decide(&element(Role::Text)).unwrap();
        (
            d.deny.iter().map(|r| r.to_string()).collect::<Vec<_>>(),
            d.keep.iter().map(|r| r.to_string()).collect::<Vec<_>>(),
        )
    };
    assert_eq!(
        decide(Some("My Bank")),
        (vec!["bank-app".to_string()], vec!["no-title".to_string()])
    );
    assert_eq!(
        decide(Some("Notes")),
        (vec![], vec!["no-title".to_string()])
    );
    assert_eq!(decide(None), (vec![], vec!["no-title".to_string()]));
}

/// A host's own decider that strips some names.
struct Strips(Vec<Arc<str>>);

impl crate::trim::Decider for Strips {
    fn decide(&mut self, _: &ElementInput<'_>) -> crate::Result<Arc<crate::policy::Decision>> {
        Ok(Arc::new(crate::policy::Decision {
            strip: self.0.clone(),
            ..Default::default()
        }))
    }
    fn evaluations(&self) -> usize {
        0
    }
}

/// `strip` from any decider cannot name ctxgate's notices: the request
/// fails (fail closed), naming the rule, not the name.
#[test]
fn no_decider_can_strip_ctxgates_notices() {
    let bytes = std::fs::read("examples/thread.json").unwrap();
    let answer = crate::read_conforming(&bytes, &crate::Limits::default()).unwrap();
    let trim = |names: &[&str]| {
        crate::trim::trim_with(
            &answer,
            &crate::Request::new("app"),
            &plan(Scope::App),
            &mut Strips(names.iter().map(|n| Arc::from(*n)).collect()),
            "h",
            &crate::Limits::default(),
        )
    };
    let err = trim(&["author", "ctxgate:omitted"]).expect_err("refused");
    assert_eq!(
        err.to_string(),
        "policy evaluation failed (strip): `strip` holds a reserved `ctxgate:` name; those attributes are ctxgate's notices (what was withheld and why), which no policy may remove: strip only the provider's attributes"
    );
    // A host's strip is applied like a policy's.
    let out = trim(&["author", "likes"]).unwrap();
    assert!(!out.rendered.contains("Ada Lovelace") && !out.rendered.contains("likes"));
    assert!(out.rendered.contains("reply-to"));
    assert_eq!(out.report.stripped.get("author"), Some(&3));
    assert_eq!(out.report.stripped.get("likes"), Some(&1));
}

/// What `strip` holds must be names: another kind fails the request by its
/// kind, never its value; a computed reserved name fails it too.
#[test]
fn a_strip_of_the_wrong_kind_is_named_by_its_kind_not_its_value() {
    let value = serde_json::json!("Ada Lovelace");
    let mut e = element(Role::Text);
    e.attribute_names = vec!["author"];
    e.attributes = vec![("author", &value)];
    for (body, message) in [
        (
            "strip contains 4111111111111111 if real",
            "`strip` must hold attribute names (strings); it holds a number",
        ),
        (
            "strip contains {\"name\": input.element.attributes.author} if real",
            "`strip` must hold attribute names (strings); it holds an object",
        ),
        (
            "strip := {\"a\": input.element.attributes.author} if real",
            "`strip` must be a set of attribute names (`strip contains \"author\" if …`); it is an object",
        ),
        (
            "strip contains concat(\"\", [\"ctxgate\", \":cut\"]) if real",
            "`strip` holds a reserved `ctxgate:` name; those attributes are ctxgate's notices (what was withheld and why), which no policy may remove: strip only the provider's attributes",
        ),
    ] {
        let source = format!("package ctxgate\n\nelement_attributes := {{\"author\"}}\n\n{body}\n");
        let err = decide_error(&source, &e);
        assert_eq!(
            err,
            format!("policy evaluation failed (strip): {message}"),
            "{body}"
        );
        assert!(!err.contains("Ada") && !err.contains("4111"), "{err}");
    }
}

/// `strip` is asked only about an element with attributes: with none there
/// is nothing to remove, and one evaluation fewer.
#[test]
fn strip_is_evaluated_only_for_elements_with_attributes() {
    let policy = Policy::from_sources(vec![(
        "p.rego".into(),
        "package ctxgate\n\nstrip contains \"author\"\n\nprune contains \"never\" if false\n"
            .into(),
    )])
    .unwrap();
    let mut evaluator = policy.evaluator(&request("app")).unwrap();
    let bare = element(Role::Row);
    assert!(evaluator.decide(&bare).unwrap().strip.is_empty());
    assert_eq!(evaluator.evaluations(), 1);
    let mut with = element(Role::Row);
    with.attribute_names = vec!["likes"];
    assert_eq!(
        evaluator.decide(&with).unwrap().strip,
        vec![Arc::<str>::from("author")]
    );
    // `prune` reads nothing of either: its value is the request's memo's.
    assert_eq!(evaluator.evaluations(), 2);
}
