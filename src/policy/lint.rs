//! `ctxgate policy check`, and what every load refuses: every problem in a
//! policy set, each with file:line:col. Parsing and compiling are
//! regorus's (plus the RVM compiler, which names unknown functions); the
//! input's shape, role names, attribute values read but not declared,
//! rule names and the types of decision rules' values are checked on the
//! source text; then every rule runs against the probe set to surface
//! runtime errors. [`check_sources`] is the tool's entry; `refuse`, the
//! loader's, runs the same checks on a policy that compiled and turns the
//! first error into the load's error.
// `ctxgate policy check` and layering use all of this; a build without the
// CLI (the bindings) uses the part every load runs, which is most of it.
#![cfg_attr(not(feature = "cli"), allow(dead_code, unused_imports))]

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt;

use regorus::Engine;

use super::probes::{mentions, policy_probes, ACTIONS};
use crate::error::Error;
use crate::model::Role;
use crate::policy::engine::{compile_with_heads, probe_request, ELEMENT_RULES, REQUEST_RULES};
use crate::policy::projection::{field_shapes, Field};
use crate::policy::recursion::RuleHead;
use crate::policy::source::{split_regorus_error, PolicyFile};
use crate::policy::token::{compared_literals, skip_brackets, tokenize, Token, TokenKind};
use crate::policy::Policy;

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FindingSeverity {
    /// The policy cannot be used as written.
    Error,
    /// Probably a mistake; the policy still loads.
    Warning,
}

/// One problem in a policy file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// The file.
    pub file: String,
    /// 1-based line (0 when the problem is the whole file).
    pub line: usize,
    /// 1-based column (0 when unknown).
    pub col: usize,
    /// Error or warning.
    pub severity: FindingSeverity,
    /// What is wrong, with a hint where there is one.
    pub message: String,
}

impl Finding {
    /// Whether this finding makes the policy unusable.
    pub fn is_error(&self) -> bool {
        self.severity == FindingSeverity::Error
    }

    fn error(location: &str, message: String) -> Finding {
        let (file, line, col) = split_location(location);
        Finding {
            file,
            line,
            col,
            severity: FindingSeverity::Error,
            message,
        }
    }

    /// `file:line:col`, `file:line` or `file`, as in messages.
    pub fn location(&self) -> String {
        match (self.line, self.col) {
            (0, _) => self.file.clone(),
            (line, 0) => format!("{}:{line}", self.file),
            (line, col) => format!("{}:{line}:{col}", self.file),
        }
    }

    fn at(file: &str, token: &Token, severity: FindingSeverity, message: String) -> Finding {
        Finding {
            file: file.to_string(),
            line: token.line,
            col: token.col,
            severity,
            message,
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let severity = match self.severity {
            FindingSeverity::Error => "error",
            FindingSeverity::Warning => "warning",
        };
        match (self.line, self.col) {
            (0, _) => write!(f, "{}: {severity}: {}", self.file, self.message),
            (line, 0) => write!(f, "{}:{line}: {severity}: {}", self.file, self.message),
            (line, col) => write!(
                f,
                "{}:{line}:{col}: {severity}: {}",
                self.file, self.message
            ),
        }
    }
}

/// `file:line:col` (or `file`) into its parts.
fn split_location(location: &str) -> (String, usize, usize) {
    let mut parts = location.rsplitn(3, ':');
    let (c, l, f) = (parts.next(), parts.next(), parts.next());
    match (
        f,
        l.and_then(|l| l.parse().ok()),
        c.and_then(|c| c.parse().ok()),
    ) {
        (Some(f), Some(l), Some(c)) => (f.to_string(), l, c),
        _ => (location.to_string(), 0, 0),
    }
}

/// Every finding for a policy set: policy files and `*_test.rego` files
/// alike (tests are compiled with the policy; only policy files are probed).
/// Findings come in file order, then line order.
pub fn check_sources(files: &[PolicyFile]) -> Vec<Finding> {
    let mut findings = Vec::new();
    // Parse each file alone, so every file's syntax errors are reported.
    let mut parsed = true;
    for file in files {
        if let Err(Error::Policy { location, message }) = file.check_bracket_depth() {
            parsed = false;
            findings.push(Finding::error(&location, message));
            continue;
        }
        let mut engine = Engine::new();
        match engine.add_policy(file.name.clone(), file.source.clone()) {
            Err(e) => {
                parsed = false;
                let (location, message) = split_regorus_error(&e);
                findings.push(Finding::error(
                    &location.unwrap_or_else(|| file.name.clone()),
                    message,
                ));
            }
            Ok(package) if package != "data.ctxgate" && !file.is_test() => {
                parsed = false;
                findings.push(Finding::error(
                    &file.name,
                    format!(
                        "the file is in `package {}`; policy files must be in `package ctxgate`",
                        package.trim_start_matches("data.")
                    ),
                ));
            }
            Ok(_) => {}
        }
    }
    let tokens: Vec<Vec<Token>> = files.iter().map(|f| tokenize(&f.source)).collect();
    let mut reads = Vec::new();
    for (file, tokens) in files.iter().zip(&tokens) {
        reads.extend(check_input_paths(file, tokens, &mut findings));
        check_roles(file, tokens, &mut findings);
    }
    if parsed {
        let policy_files: Vec<(String, String)> = files
            .iter()
            .filter(|f| !f.is_test())
            .map(|f| (f.name.clone(), f.source.clone()))
            .collect();
        // Compile everything together (unsafe variables, unknown functions).
        let heads = match compile_with_heads(files, false) {
            Err(e) => {
                findings.push(policy_finding(&e, &whole(files), &[]));
                None
            }
            Ok((_, _, heads)) => {
                check_heads(files, &tokens, &heads, &mut findings);
                check_builtins(files, &mut findings);
                Some(heads)
            }
        };
        if !policy_files.is_empty() {
            match Policy::unchecked(policy_files) {
                Err(e) => findings.push(policy_finding(&e, &whole(files), &[])),
                Ok((policy, policy_heads)) => {
                    let heads = heads.as_deref().unwrap_or(&policy_heads);
                    check_policy(&policy, heads, &reads, true, &mut findings);
                }
            }
        }
    }
    tidy_findings(files, &mut findings);
    findings
}

/// [`check_sources`] for layers of files (`--policy default --policy
/// extra/`), with what only layers can get wrong: a file given twice, a
/// later layer that changes what an earlier layer's rules mean
/// (`policy::compose`).
pub fn check_layers(layers: &[Vec<PolicyFile>]) -> Vec<Finding> {
    let files: Vec<PolicyFile> = layers.concat();
    let mut findings = check_sources(&files);
    if layers.len() < 2 {
        return findings;
    }
    let mut layer_of: BTreeMap<String, usize> = BTreeMap::new();
    for (index, layer) in layers.iter().enumerate() {
        for file in layer {
            if let Some(first) = layer_of.insert(file.name.clone(), index) {
                findings.push(Finding::error(
                    &file.name,
                    format!(
                        "the file is given twice (layers {} and {}); give each file once",
                        first + 1,
                        index + 1
                    ),
                ));
                return findings;
            }
        }
    }
    if let Err(Error::Policy { location, message }) =
        super::compose::check_layers(&files, &layer_of)
    {
        // A built-in's name is found by `check_sources` already.
        let finding = Finding::error(&location, message);
        if !findings.contains(&finding) {
            findings.push(finding);
            tidy_findings(&files, &mut findings);
        }
    }
    findings
}

/// What loading refuses: every check of [`check_sources`] that needs no
/// parse of its own, on a policy that compiled (`heads`: its rule heads).
/// The first error (in file and line order) is the error; the message
/// says how many more `ctxgate policy check` would list. Warnings are
/// logged (as counts), not refused.
pub(crate) fn refuse(policy: &Policy, heads: &[RuleHead]) -> crate::error::Result<()> {
    let files = policy.files();
    let mut findings = Vec::new();
    let tokens: Vec<Vec<Token>> = files.iter().map(|f| tokenize(&f.source)).collect();
    let mut reads = Vec::new();
    for (file, tokens) in files.iter().zip(&tokens) {
        reads.extend(check_input_paths(file, tokens, &mut findings));
        check_roles(file, tokens, &mut findings);
    }
    check_heads(files, &tokens, heads, &mut findings);
    check_builtins(files, &mut findings);
    if is_embedded_default(policy) {
        // The same bytes as the embedded default: the probes' results are
        // those a test fixes (`policy check` of the default finds nothing,
        // tests/policy_cli.rs), and evaluating them is ~90% of the load's
        // cost (BENCHMARKS.md, "Policy load"). The static checks still run.
        check_attribute_reads(policy, &reads, &mut findings);
    } else {
        check_policy(policy, heads, &reads, false, &mut findings);
    }
    tidy_findings(files, &mut findings);
    let errors: Vec<&Finding> = findings.iter().filter(|f| f.is_error()).collect();
    let warnings = findings.len() - errors.len();
    if warnings > 0 {
        tracing::debug!(
            warnings,
            "policy lint warnings (`ctxgate policy check` lists them)"
        );
    }
    let Some(first) = errors.first() else {
        return Ok(());
    };
    let more = match errors.len() - 1 {
        0 => String::new(),
        1 => " (and 1 more error: `ctxgate policy check` lists every one)".to_string(),
        n => format!(" (and {n} more errors: `ctxgate policy check` lists every one)"),
    };
    Err(Error::Policy {
        location: first.location(),
        message: format!("{}{more}", first.message),
    })
}

/// A definition of a built-in's name, as a finding (`policy::compose`).
fn check_builtins(files: &[PolicyFile], findings: &mut Vec<Finding>) {
    match super::compose::check_builtins(files) {
        Ok(()) => {}
        Err(Error::Policy { location, message }) => {
            findings.push(Finding::error(&location, message))
        }
        Err(other) => findings.push(Finding::error(&whole(files), other.to_string())),
    }
}

/// Whether `policy` is the embedded default policy byte for byte (by its
/// content hash, whatever the files are named).
fn is_embedded_default(policy: &Policy) -> bool {
    policy.hash() == crate::policy::engine::DEFAULT_HASH
}

/// The checks on rule heads: names, value shapes, unused rules, request
/// rules reading the element.
fn check_heads(
    files: &[PolicyFile],
    tokens: &[Vec<Token>],
    heads: &[RuleHead],
    findings: &mut Vec<Finding>,
) {
    check_unused(files, tokens, heads, findings);
    check_request_rules(files, tokens, heads, findings);
    check_head_values(files, tokens, heads, findings);
}

/// The checks that evaluate: the probes (the fixed set and the policy's
/// own; with `combinations`, every combination of the states it reads),
/// then the attribute values read against those the plans declare.
fn check_policy(
    policy: &Policy,
    heads: &[RuleHead],
    reads: &[AttributeRead],
    combinations: bool,
    findings: &mut Vec<Finding>,
) {
    probe(policy, heads, combinations, findings);
    check_attribute_reads(policy, reads, findings);
}

/// One finding per place and message (errors of the same place found
/// twice, alone and together, are the same problem), in file order, then
/// line order.
fn tidy_findings(files: &[PolicyFile], findings: &mut Vec<Finding>) {
    // A value of the wrong shape found on the source is not also reported
    // as the evaluation that stumbled on it.
    let static_lines: HashSet<(String, usize)> = findings
        .iter()
        .filter(|f| f.is_error() && !f.message.contains("(evaluating `"))
        .map(|f| (f.file.clone(), f.line))
        .collect();
    findings.retain(|f| {
        !(f.message.contains("(evaluating `") && static_lines.contains(&(f.file.clone(), f.line)))
    });
    // A reserved name found in a `strip` head is not also reported at the
    // rule's first definition, where its evaluation is placed.
    if findings
        .iter()
        .any(|f| f.message.contains(RESERVED_STRIP_HEAD))
    {
        findings.retain(|f| {
            !(f.message.contains("(evaluating `strip`")
                && f.message.contains("reserved `ctxgate:`"))
        });
    }
    let mut seen = HashSet::new();
    findings.retain(|f| seen.insert((f.file.clone(), f.line, f.col, f.message.clone())));
    let order: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    findings.sort_by_key(|f| {
        (
            order
                .iter()
                .position(|n| *n == f.file)
                .unwrap_or(usize::MAX),
            f.line,
            f.col,
        )
    });
}

/// Where a finding is when regorus names no place: the policy set as a
/// whole, named by its files.
fn whole(files: &[PolicyFile]) -> String {
    files
        .iter()
        .filter(|f| !f.is_test())
        .map(|f| f.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn policy_finding(err: &Error, whole: &str, heads: &[RuleHead]) -> Finding {
    match err {
        Error::Policy { location, message } => Finding::error(location, message.clone()),
        Error::PolicyEval { rule, message } => eval_finding(rule, message, "", whole, heads),
        other => Finding::error(whole, other.to_string()),
    }
}

/// An evaluation error: the place regorus gave, else the first definition
/// of the rule that was evaluated (a value of the wrong shape: `scope :=
/// "everything"`), else `whole`, the policy as a whole.
fn eval_finding(
    rule: &str,
    message: &str,
    context: &str,
    whole: &str,
    heads: &[RuleHead],
) -> Finding {
    // `file:line:col: message` when regorus named the place.
    if let Some((location, rest)) = message.split_once(": ") {
        let (file, line, col) = split_location(location);
        if line > 0 {
            return Finding {
                file,
                line,
                col,
                severity: FindingSeverity::Error,
                message: format!("{rest} (evaluating `{rule}`{context})"),
            };
        }
    }
    let head = heads.iter().find(|h| {
        h.name() == rule
            && h.path.strip_prefix("data.ctxgate.") == Some(rule)
            && !crate::policy::source::is_test_name(&h.file)
    });
    let (file, line, col) = match head {
        Some(h) => (h.file.clone(), h.line, h.col),
        None => (whole.to_string(), 0, 0),
    };
    Finding {
        file,
        line,
        col,
        severity: FindingSeverity::Error,
        message: format!("{message} (evaluating `{rule}`{context})"),
    }
}

/// Evaluates the plan for every action and the decision for every probe;
/// each distinct error is reported once, for the first action and element
/// that shows it.
fn probe(policy: &Policy, heads: &[RuleHead], combinations: bool, findings: &mut Vec<Finding>) {
    let mentioned = mentions(policy.files());
    let files: Vec<&str> = policy.files().iter().map(|f| f.name.as_str()).collect();
    let whole = files.join(", ");
    let mut seen: HashSet<String> = HashSet::new();
    // Returns whether the evaluation ran out of time: each further probe
    // would wait out the time limit again.
    let mut place = |err: Error, context: String, timed_out: bool| -> bool {
        if seen.insert(err.to_string()) {
            findings.push(match &err {
                Error::PolicyEval { rule, message } => {
                    eval_finding(rule, message, &context, &whole, heads)
                }
                other => Finding::error(&whole, other.to_string()),
            });
        }
        timed_out
    };
    for action in ACTIONS {
        let request = probe_request(action, None);
        let timed_out = std::cell::Cell::new(false);
        if let Err(err) = policy.plan_noting(&request, &timed_out) {
            if place(err, format!(" for action `{action}`"), timed_out.get()) {
                return;
            }
            continue;
        }
        let mut evaluator = match policy.evaluator(&request) {
            Ok(e) => e,
            Err(err) => {
                if place(err, format!(" for action `{action}`"), false) {
                    return;
                }
                continue;
            }
        };
        let names: Vec<String> = evaluator
            .plan()
            .title_patterns
            .iter()
            .map(|(n, _)| n.clone())
            .collect();
        for probe in policy_probes(&mentioned, &names, combinations) {
            if let Err(err) = evaluator.decide(&probe.input()) {
                if place(
                    err,
                    format!(" for element {}, action `{action}`", probe.label),
                    evaluator.timed_out(),
                ) {
                    return;
                }
                break;
            }
        }
    }
}

/// The shape of `input`: what a policy may read.
enum Shape {
    Object(&'static [(&'static str, Shape)]),
    Array(&'static Shape),
    Leaf,
    /// Values whose keys are the provider's (attribute values).
    Any,
}

const ANCESTOR: Shape = Shape::Object(&[("role", Shape::Leaf), ("subrole", Shape::Leaf)]);

/// The input's shape; `input.element` is the projection's own field list.
fn input_shape() -> &'static Shape {
    static INPUT: std::sync::OnceLock<Shape> = std::sync::OnceLock::new();
    INPUT.get_or_init(|| {
        let element: Vec<(&'static str, Shape)> = field_shapes()
            .into_iter()
            .map(|(name, field)| {
                let shape = match field {
                    Field::Role(_) | Field::Text(_) | Field::Flag(_) => Shape::Leaf,
                    Field::Names(_) => Shape::Array(&Shape::Leaf),
                    Field::Values(_) => Shape::Any,
                };
                (name, shape)
            })
            .collect();
        let fields: Vec<(&'static str, Shape)> = vec![
            (
                "action",
                Shape::Object(&[("name", Shape::Leaf), ("target", Shape::Leaf)]),
            ),
            (
                "app",
                Shape::Object(&[
                    ("instance", Shape::Leaf),
                    ("protocol", Shape::Leaf),
                    ("title_matches", Shape::Array(&Shape::Leaf)),
                ]),
            ),
            ("element", Shape::Object(element.leak())),
            ("inside", Shape::Array(&ANCESTOR)),
        ];
        Shape::Object(fields.leak())
    })
}

/// A read of one attribute's value by name (`input.element.attributes.x`
/// or `input.element.attributes["x"]`): the token naming it.
struct AttributeRead {
    file: String,
    name: Token,
}

/// `input.a.b[...]…` paths that leave the input's shape; returns the
/// attribute values read by name, to be checked against the declared ones.
fn check_input_paths(
    file: &PolicyFile,
    tokens: &[Token],
    findings: &mut Vec<Finding>,
) -> Vec<AttributeRead> {
    let mut reads = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i];
        let after_dot = i > 0 && tokens[i - 1].text == ".";
        if t.kind != TokenKind::Ident || t.text != "input" || after_dot {
            i += 1;
            continue;
        }
        let mut shape = input_shape();
        let mut path = String::from("input");
        let mut j = i + 1;
        while let Some(next) = tokens.get(j) {
            match (next.text.as_str(), shape) {
                (".", Shape::Any) => {
                    if let Some(name) = tokens.get(j + 1).filter(|t| t.kind == TokenKind::Ident) {
                        reads.push(AttributeRead {
                            file: file.name.clone(),
                            name: name.clone(),
                        });
                    }
                    break;
                }
                ("[", Shape::Any) => {
                    let key = tokens.get(j + 1).filter(|t| t.kind == TokenKind::Str);
                    if let Some(key) =
                        key.filter(|_| tokens.get(j + 2).is_some_and(|t| t.text == "]"))
                    {
                        reads.push(AttributeRead {
                            file: file.name.clone(),
                            name: key.clone(),
                        });
                    }
                    break;
                }
                (".", Shape::Object(fields)) => {
                    let Some(name) = tokens.get(j + 1).filter(|t| t.kind == TokenKind::Ident)
                    else {
                        break;
                    };
                    match fields.iter().find(|(f, _)| *f == name.text) {
                        Some((_, s)) => {
                            path.push('.');
                            path.push_str(&name.text);
                            shape = s;
                            j += 2;
                        }
                        None => {
                            let near =
                                crate::suggest::closest(&name.text, fields.iter().map(|(f, _)| *f));
                            let hint = near
                                .map(|n| format!(" (did you mean `{path}.{n}`?)"))
                                .unwrap_or_default();
                            findings.push(Finding::at(
                                &file.name,
                                name,
                                FindingSeverity::Error,
                                format!("`{path}.{}` is not in the input{hint}", name.text),
                            ));
                            break;
                        }
                    }
                }
                (".", Shape::Leaf | Shape::Array(_)) => {
                    if let Some(name) = tokens.get(j + 1).filter(|t| t.kind == TokenKind::Ident) {
                        findings.push(Finding::at(
                            &file.name,
                            name,
                            FindingSeverity::Error,
                            format!("`{path}` has no field `{}`", name.text),
                        ));
                    }
                    break;
                }
                ("[", Shape::Array(inner)) => {
                    path.push_str("[_]");
                    shape = inner;
                    j = skip_brackets(tokens, j);
                }
                ("[", Shape::Object(fields)) => {
                    // `input.element["role"]`: a literal key is checked like a dot.
                    let key = tokens.get(j + 1).filter(|t| t.kind == TokenKind::Str);
                    let closes = tokens.get(j + 2).is_some_and(|t| t.text == "]");
                    match key {
                        Some(key) if closes => match fields.iter().find(|(f, _)| *f == key.text) {
                            Some((_, s)) => {
                                path.push('.');
                                path.push_str(&key.text);
                                shape = s;
                                j += 3;
                            }
                            None => {
                                findings.push(Finding::at(
                                    &file.name,
                                    key,
                                    FindingSeverity::Error,
                                    format!("`{path}.{}` is not in the input", key.text),
                                ));
                                break;
                            }
                        },
                        _ => break,
                    }
                }
                _ => break,
            }
        }
        i = j.max(i + 1);
    }
    reads
}

/// Attribute values read by name that no action's plan declares in
/// `element_attributes`: such a read is always undefined, so the rule
/// never fires (a mask that never masks). The declared names are those of
/// every probed action's plan.
fn check_attribute_reads(policy: &Policy, reads: &[AttributeRead], findings: &mut Vec<Finding>) {
    if reads.is_empty() {
        return;
    }
    let mut declared: BTreeSet<String> = BTreeSet::new();
    for action in ACTIONS.iter().chain(std::iter::once(&OTHER_ACTION)) {
        // A plan that fails is the probe's finding.
        if let Ok(plan) = policy.plan(&probe_request(action, None)) {
            declared.extend(plan.element_attributes.iter().cloned());
        }
    }
    for read in reads {
        let name = &read.name.text;
        if declared.contains(name) || crate::policy::source::is_test_name(&read.file) {
            continue;
        }
        findings.push(Finding::at(
            &read.file,
            &read.name,
            FindingSeverity::Error,
            format!(
                "`input.element.attributes.{name}` is read, but no action declares `{name}` in `element_attributes`, so it is always undefined and the rule never holds: add `element_attributes contains \"{name}\"`"
            ),
        ));
    }
}

/// An action no policy names: what a host's own word gets.
const OTHER_ACTION: &str = "ctxgate-probe-other-action";

/// String literals used as roles: compared with `….role`, listed after
/// `….role in`, or given as `"role": "…"` in an object (test inputs).
fn check_roles(file: &PolicyFile, tokens: &[Token], findings: &mut Vec<Finding>) {
    // `x.role == "Lit"`, `"Lit" == x.role`, `x.role in {"A", "B"}`
    let mut literals: Vec<&Token> = compared_literals(tokens, &["role"]);
    for (k, t) in tokens.iter().enumerate() {
        // `"role": "Lit"`
        if t.kind == TokenKind::Str
            && t.text == "role"
            && tokens.get(k + 1).is_some_and(|c| c.text == ":")
        {
            if let Some(lit) = tokens.get(k + 2).filter(|t| t.kind == TokenKind::Str) {
                literals.push(lit);
            }
        }
    }
    for lit in literals {
        if Role::from_word(&lit.text).is_none() {
            findings.push(Finding::at(
                &file.name,
                lit,
                FindingSeverity::Error,
                format!(
                    "`{}` is not a role{}",
                    lit.text,
                    crate::suggest::role(&lit.text)
                ),
            ));
        }
    }
}

/// Rules of `package ctxgate` that ctxgate does not read and no rule refers to.
fn check_unused(
    files: &[PolicyFile],
    tokens: &[Vec<Token>],
    heads: &[crate::policy::recursion::RuleHead],
    findings: &mut Vec<Finding>,
) {
    let known: Vec<&str> = ELEMENT_RULES
        .iter()
        .chain(REQUEST_RULES.iter())
        .copied()
        .collect();
    // The identifier naming each head (after `default` if present).
    let mut head_tokens: HashSet<(String, usize, usize)> = HashSet::new();
    let mut head_names: Vec<(String, &crate::policy::recursion::RuleHead, Token)> = Vec::new();
    for head in heads {
        let Some(index) = files.iter().position(|f| f.name == head.file) else {
            continue;
        };
        let Some(mut k) = tokens[index]
            .iter()
            .position(|t| t.line == head.line && t.col >= head.col)
        else {
            continue;
        };
        if tokens[index][k].text == "default" {
            k += 1;
        }
        let Some(token) = tokens[index].get(k) else {
            continue;
        };
        head_tokens.insert((head.file.clone(), token.line, token.col));
        head_names.push((token.text.clone(), head, token.clone()));
    }
    let mut reported = BTreeSet::new();
    for (name, head, token) in head_names {
        let in_package = head
            .path
            .strip_prefix("data.ctxgate.")
            .is_some_and(|rest| rest == name);
        let is_test = name.starts_with("test_") && crate::policy::source::is_test_name(&head.file);
        if !in_package
            || is_test
            || known.contains(&name.as_str())
            || !reported.insert(name.clone())
        {
            continue;
        }
        let used_in = |tests: bool| {
            files.iter().zip(tokens).any(|(f, ts)| {
                (tests || !f.is_test())
                    && ts.iter().any(|t| {
                        t.kind == TokenKind::Ident
                            && t.text == name
                            && !head_tokens.contains(&(f.name.clone(), t.line, t.col))
                    })
            })
        };
        let near = crate::suggest::closest(&name, known.iter().copied());
        match near {
            // `masks`, `denny`: a misspelled decision rule decides nothing,
            // silently; a test that reads it does not make it one ctxgate reads.
            Some(k) if !used_in(false) => findings.push(Finding::at(
                &head.file,
                &token,
                FindingSeverity::Error,
                format!(
                    "rule `{name}` is not one ctxgate reads (did you mean `{k}`?); as written it decides nothing"
                ),
            )),
            None if !used_in(true) => findings.push(Finding::at(
                &head.file,
                &token,
                FindingSeverity::Warning,
                format!("rule `{name}` is not one ctxgate reads, and no rule refers to it"),
            )),
            _ => {}
        }
    }
}

/// What a rule head gives its rule, as far as the source shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HeadValue {
    /// `name contains …`.
    SetMember,
    /// `name if …`: the rule is `true` where its body holds.
    True,
    /// `name := "…"` and the like.
    Str,
    Number,
    Bool,
    Null,
    Array,
    /// `name := {…}`: a set or an object.
    Braces,
    /// Anything else (a reference, a call, a comprehension's variable…).
    Unknown,
}

impl HeadValue {
    fn of(tokens: &[Token], name: usize) -> (HeadValue, Option<&Token>) {
        let Some(next) = tokens.get(name + 1) else {
            return (HeadValue::Unknown, None);
        };
        match (next.kind, next.text.as_str()) {
            (TokenKind::Ident, "contains") => (HeadValue::SetMember, Some(next)),
            (TokenKind::Ident, "if") => (HeadValue::True, Some(&tokens[name])),
            (TokenKind::Punct, ":=" | "=") => {
                let Some(value) = tokens.get(name + 2) else {
                    return (HeadValue::Unknown, None);
                };
                // The value is the literal alone: `x := "a" if …`, not `x := "a" + y`.
                let ends = tokens
                    .get(name + 3)
                    .is_none_or(|t| t.text == "if" || t.line > value.line);
                let kind = match (value.kind, value.text.as_str()) {
                    (TokenKind::Str, _) if ends => HeadValue::Str,
                    (TokenKind::Number, _) if ends => HeadValue::Number,
                    (TokenKind::Ident, "true" | "false") if ends => HeadValue::Bool,
                    (TokenKind::Ident, "null") if ends => HeadValue::Null,
                    (TokenKind::Punct, "[") => HeadValue::Array,
                    (TokenKind::Punct, "{") => HeadValue::Braces,
                    _ => HeadValue::Unknown,
                };
                (kind, Some(value))
            }
            _ => (HeadValue::Unknown, None),
        }
    }

    fn describe(self) -> &'static str {
        match self {
            HeadValue::SetMember => "a partial set (`contains`)",
            HeadValue::True => "the boolean `true` where its body holds (`… if` with no value)",
            HeadValue::Str => "a string",
            HeadValue::Number => "a number",
            HeadValue::Bool => "a boolean",
            HeadValue::Null => "null",
            HeadValue::Array => "an array",
            HeadValue::Braces => "a set or an object",
            HeadValue::Unknown => "a value",
        }
    }
}

/// The scopes `scope` may name.
const SCOPES: [&str; 4] = ["selection", "focus", "window", "app"];

/// Decision rules whose value, as written in the head, is of the wrong
/// type (`scope := "everything"`, `priority := "high"`, `deny if …`):
/// found on the source, at the value, before anything runs.
fn check_head_values(
    files: &[PolicyFile],
    tokens: &[Vec<Token>],
    heads: &[RuleHead],
    findings: &mut Vec<Finding>,
) {
    for head in heads {
        let Some(rule) = head.path.strip_prefix("data.ctxgate.") else {
            continue;
        };
        let Some(index) = files
            .iter()
            .position(|f| f.name == head.file && !f.is_test())
        else {
            continue;
        };
        let tokens = &tokens[index];
        let Some(mut k) = tokens
            .iter()
            .position(|t| t.line == head.line && t.col >= head.col)
        else {
            continue;
        };
        if tokens[k].text == "default" {
            k += 1;
        }
        if tokens.get(k).is_none_or(|t| t.text != rule) {
            continue;
        }
        let (value, at) = HeadValue::of(tokens, k);
        let Some(at) = at else { continue };
        if rule == "strip" {
            check_reserved_strip(&head.file, tokens, k, value, findings);
        }
        use HeadValue as V;
        let expected = match rule {
            "deny" | "mask" | "keep" | "prune" => {
                if matches!(value, V::SetMember | V::Array | V::Braces | V::Unknown) {
                    continue;
                }
                format!("a set of reason strings (`{rule} contains \"reason\" if …`)")
            }
            "redact" | "element_attributes" => {
                if matches!(value, V::SetMember | V::Array | V::Braces | V::Unknown) {
                    continue;
                }
                format!("a set (`{rule} contains … if …`)")
            }
            "strip" => {
                if matches!(value, V::SetMember | V::Array | V::Braces | V::Unknown) {
                    continue;
                }
                "a set of attribute names (`strip contains \"author\" if …`)".to_string()
            }
            "priority" => {
                if matches!(value, V::Number | V::Unknown) {
                    continue;
                }
                "a number (`priority := 50 if …`)".to_string()
            }
            "scope" => {
                if value == V::Str {
                    if SCOPES.contains(&at.text.as_str()) {
                        continue;
                    }
                    let hint = crate::suggest::closest(&at.text, SCOPES)
                        .map(|s| format!(" (did you mean `{s}`?)"))
                        .unwrap_or_default();
                    findings.push(Finding::at(
                        &head.file,
                        at,
                        FindingSeverity::Error,
                        format!(
                            "`scope` must be one of `selection`, `focus`, `window`, `app`; `\"{}\"` is none of them{hint}",
                            at.text
                        ),
                    ));
                    continue;
                }
                if value == V::Unknown {
                    continue;
                }
                "one of the strings `selection`, `focus`, `window`, `app`".to_string()
            }
            "budget" => {
                if matches!(value, V::Braces | V::Unknown) {
                    continue;
                }
                "an object, `{\"tokens\": N}` or `{\"bytes\": N}`".to_string()
            }
            "title_patterns" => {
                if matches!(value, V::Braces | V::Unknown) {
                    continue;
                }
                "an object of name to pattern".to_string()
            }
            _ => continue,
        };
        findings.push(Finding::at(
            &head.file,
            at,
            FindingSeverity::Error,
            format!(
                "`{rule}` is {} here; it must be {expected}",
                value.describe()
            ),
        ));
    }
}

const RESERVED_STRIP_HEAD: &str = "a reserved `ctxgate:` attribute";

/// A `strip` head naming a reserved `ctxgate:` attribute (`strip contains
/// "ctxgate:withheld"`, `strip := {"ctxgate:cut"}`): those are ctxgate's
/// notices, never a provider's to remove, and every request would fail.
/// Names a body computes are refused when the rule runs.
fn check_reserved_strip(
    file: &str,
    tokens: &[Token],
    name: usize,
    value: HeadValue,
    findings: &mut Vec<Finding>,
) {
    let members: Vec<&Token> = match value {
        HeadValue::SetMember => tokens.get(name + 2).into_iter().collect(),
        HeadValue::Braces | HeadValue::Array => tokens
            .iter()
            .skip(name + 3)
            .take_while(|t| t.text != "}" && t.text != "]")
            .collect(),
        _ => Vec::new(),
    };
    for member in members {
        if member.kind == TokenKind::Str && crate::policy::engine::is_reserved(&member.text) {
            findings.push(Finding::at(
                file,
                member,
                FindingSeverity::Error,
                format!(
                    "`strip` names `{}`, {RESERVED_STRIP_HEAD}: those are ctxgate's notices (what was withheld and why), which no policy may remove; strip only the provider's attributes",
                    member.text
                ),
            ));
        }
    }
}

/// Per-request rules run before any element exists: `input.element` and
/// `input.inside` are undefined there, so a rule reading them never holds.
fn check_request_rules(
    files: &[PolicyFile],
    tokens: &[Vec<Token>],
    heads: &[crate::policy::recursion::RuleHead],
    findings: &mut Vec<Finding>,
) {
    for (file, tokens) in files.iter().zip(tokens) {
        if file.is_test() {
            continue;
        }
        let mut starts: Vec<(usize, &str)> = heads
            .iter()
            .filter(|h| h.file == file.name)
            .filter_map(|h| {
                let k = tokens
                    .iter()
                    .position(|t| (t.line, t.col) >= (h.line, h.col))?;
                Some((k, h.name()))
            })
            .collect();
        starts.sort();
        for (n, (start, name)) in starts.iter().enumerate() {
            if !REQUEST_RULES.contains(name) {
                continue;
            }
            let end = starts.get(n + 1).map_or(tokens.len(), |(next, _)| *next);
            for k in *start..end {
                let is_input =
                    tokens[k].text == "input" && tokens.get(k + 1).is_some_and(|t| t.text == ".");
                let reads_element = tokens
                    .get(k + 2)
                    .filter(|t| is_input && (t.text == "element" || t.text == "inside"));
                if let Some(field) = reads_element {
                    findings.push(Finding::at(
                        &file.name,
                        &tokens[k],
                        FindingSeverity::Warning,
                        format!(
                            "`{name}` is evaluated once per request, where `input.{}` is undefined",
                            field.text
                        ),
                    ));
                }
            }
        }
    }
}
