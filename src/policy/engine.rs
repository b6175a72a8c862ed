//! Loading a policy set into regorus and evaluating it: per request (the
//! plan) and per distinct element projection (the decision), with the
//! secure-text floor and the caches. Only the small projection of an
//! element is ever turned into a regorus value, never the tree.
//!
//! Cost model (BENCHMARKS.md, "Policy decisions"): one interpreter
//! `eval_rule` per per-element rule the policy defines (at most six: deny,
//! mask, keep, prune, priority, strip; `strip` only for an element with
//! attributes), once per distinct projection per request, then never again
//! for the same request input while the decision stays in the cache. For a
//! policy whose reads of the input are spelled out in its tokens
//! ([`spelled_out`]) a projection's key is what the policy reads of it
//! ([`reads_of`]) and each rule's value is memoised per request by what that
//! rule reads ([`rule_reads`]). The embedded default answers from its table
//! (`policy::table`, regorus's answers over the finite domain it reads) and
//! compiles nothing. Five separate `eval_rule` calls measured faster than
//! one rule gathering the five or one query.

use std::cell::Cell;
use std::collections::hash_map::RandomState;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::hash::BuildHasher;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use regorus::utils::limits::ExecutionTimerConfig;
use regorus::{Engine, Value};
use sha2::{Digest, Sha256};

use super::default_facts;
use super::projection::{Decider, ElementInput, ProjectionKey, Reads, RuleReads};
use super::recursion::RuleHead;
use super::source::{eval_error, is_time_limit, policy_error, PolicyFile};
use super::{Action, Budget, Decision, Redaction, RequestInput, RequestPlan, Scope};
use crate::deadline::{Deadline, Stage};
use crate::error::{Error, Result};
use crate::floor::Floor;

/// How long one regorus evaluation may run before the request fails. The
/// limit is cooperative: regorus checks it between steps, so one long
/// builtin call (e.g. `numbers.range` over a billion) can overrun it.
pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(1);

/// The per-element rules, in the order they are evaluated.
pub(crate) const ELEMENT_RULES: [&str; 6] = ["deny", "mask", "keep", "prune", "priority", "strip"];
/// The per-request rules.
pub(crate) const REQUEST_RULES: [&str; 5] = [
    "scope",
    "budget",
    "redact",
    "title_patterns",
    "element_attributes",
];

/// The embedded default policy and its tests.
pub(crate) use super::source::{DEFAULT_NAME, DEFAULT_TEST_NAME};
pub(crate) const DEFAULT_SOURCE: &str = include_str!("../../policies/default.rego");
/// [`hash_files`] of the embedded default, computed by build.rs.
pub(crate) const DEFAULT_HASH: &str = include!(concat!(env!("OUT_DIR"), "/default_hash.rs"));
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
pub(crate) const DEFAULT_TEST_SOURCE: &str = include_str!("../../policies/default_test.rego");

/// A module of ours, so that the set compiles even when the policy defines
/// no rule regorus could use as an entry point.
const INTERNAL_NAME: &str = "<ctxgate>";
const INTERNAL_SOURCE: &str = "package ctxgate_internal\n\nready := true\n";
const INTERNAL_ENTRY: &str = "data.ctxgate_internal.ready";

/// Bounds of the caches shared across requests; a full cache (or shard)
/// is emptied.
const PLAN_CACHE: usize = 256;
const DECISION_CACHE: usize = 65_536;
/// Shards of the decision cache: a miss locks one, chosen by the
/// projection's key, so threads deciding at once rarely wait on each other.
const DECISION_SHARDS: usize = 32;

/// A loaded, compiled policy set. `Send + Sync`; share it through an `Arc`.
/// It caches request plans and element decisions across requests.
pub struct Policy {
    files: Vec<PolicyFile>,
    hash: String,
    /// The prepared interpreter; each evaluator that needs it clones it
    /// (~0.5 µs). Built at load for every policy but the embedded default,
    /// which answers from its table: for it, built on first need (a test's
    /// reference) by [`Policy::interpreter`]. Once built, read without
    /// waiting on a `OnceLock`.
    engine: OnceLock<Mutex<Engine>>,
    /// Rule names defined in `package ctxgate`.
    rules: BTreeSet<String>,
    plans: Mutex<HashMap<RequestInput, Arc<RequestPlan>>>,
    decisions: DecisionCache,
    /// Every string constant of the policy files that is a rule id: the
    /// only reasons a rule may give.
    constants: Constants,
    /// How long one evaluation may run ([`Policy::with_time_limit`]).
    time_limit: Duration,
    /// The per-element rules defined, in [`ELEMENT_RULES`] order, and what
    /// each reads of a projection ([`rule_reads`]) when that is known: a
    /// rule's value is then memoised per request by that alone
    /// (`Evaluator::rule_memo`), shared by projections that differ only
    /// where it does not read; for the embedded default it is also where
    /// the rule's value sits in the table.
    element_rules: Vec<&'static str>,
    rule_reads: Option<Vec<RuleReads>>,
    /// Whether this is the embedded default, whose rule values and plans
    /// the table gives where it has them (`policy::table`).
    embedded: bool,
    /// What of a projection the policy can read: the decision caches' key
    /// leaves out the rest ([`ElementInput::key_for`]).
    reads: Reads,
}

impl std::fmt::Debug for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let files: Vec<&str> = self.files.iter().map(|f| f.name.as_str()).collect();
        f.debug_struct("Policy")
            .field("files", &files)
            .field("hash", &self.hash)
            .field("rules", &self.rules)
            .finish_non_exhaustive()
    }
}

/// The decision cache shared across requests and threads: shards chosen by
/// the projection key's hash, each its own lock. The key is owned and
/// compared exactly; the hasher is randomly keyed (SipHash), as the cache
/// lives as long as the policy and fills from many providers' input.
struct DecisionCache {
    hasher: RandomState,
    shards: Box<[Mutex<Shard>]>,
}

#[derive(Default)]
struct Shard {
    len: usize,
    by_request: HashMap<Arc<RequestKey>, Table>,
}

/// Decisions by projection key.
type Table = HashMap<ProjectionKey, Arc<Decision>>;

/// What of a request the element decisions depend on: the request input
/// and the names of the title patterns the app's title matches (never the
/// title itself).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct RequestKey {
    request: RequestInput,
    title_matches: Vec<String>,
}

impl Default for DecisionCache {
    fn default() -> Self {
        DecisionCache {
            hasher: RandomState::new(),
            shards: (0..DECISION_SHARDS).map(|_| Mutex::default()).collect(),
        }
    }
}

impl DecisionCache {
    fn shard(&self, key: &ProjectionKey) -> &Mutex<Shard> {
        &self.shards[self.hasher.hash_one(key) as usize % DECISION_SHARDS]
    }

    fn get(&self, request: &RequestKey, key: &ProjectionKey) -> Option<Arc<Decision>> {
        lock(self.shard(key))
            .by_request
            .get(request)?
            .get(key)
            .cloned()
    }

    fn insert(&self, request: &Arc<RequestKey>, key: ProjectionKey, decision: Arc<Decision>) {
        let mut shard = lock(self.shard(&key));
        if shard.len >= DECISION_CACHE / DECISION_SHARDS {
            *shard = Shard::default();
        }
        shard.len += 1;
        shard
            .by_request
            .entry(request.clone())
            .or_default()
            .insert(key, decision);
    }
}

/// The string constants of a policy that are rule ids ([`string_constants`]):
/// found in its sources at load, or, for the embedded default, fixed by its
/// bytes (`default_facts::CONSTANTS`, sorted; `policy::load::tests`
/// recomputes them).
pub(crate) enum Constants {
    Fixed(&'static [&'static str]),
    Found(HashSet<Box<str>>),
}

impl Constants {
    fn contains(&self, text: &str) -> bool {
        match self {
            Constants::Fixed(sorted) => sorted.binary_search(&text).is_ok(),
            Constants::Found(set) => set.contains(text),
        }
    }
}

/// The embedded default's [`Reads`], as `default_facts` fixes them.
pub(crate) fn default_reads() -> Reads {
    let subrole = default_facts::SUBROLE_TESTS.map(|tests| {
        tests
            .iter()
            .map(|&(op, case, needle)| super::projection::SubroleTest {
                op,
                case,
                needle: needle.to_string(),
            })
            .collect()
    });
    Reads {
        inside_count_only: default_facts::INSIDE_COUNT_ONLY,
        subrole,
    }
}

/// Whether every file of the policy is in the part of Rego where every read
/// of the input is spelled out in its tokens, and no evaluation can fail:
/// only there may [`reads_of`] and [`rule_reads`] find what the policy
/// reads (no `with`, `input` never bound whole nor passed to a function,
/// no call that could read it some other way), and a rule's value memoised
/// for one projection is the value it has for every projection that reads
/// the same (no error that depends on more). Judged from the tokens alone,
/// refusing whatever it does not know:
/// - no arithmetic or set operators, comprehensions, `with`, `every`,
///   `default`, imports other than `rego.v1`, or `=` (only `:=`);
/// - calls only to `count` of `input.inside`, `input.element.attribute_names`
///   or `input.element.title_matches` (always arrays), to `lower`/`upper`
///   of `input.element.role` or `.subrole` (strings or absent), and to
///   `contains`/`startswith`/`endswith` of one of those (or a string) and a
///   string or a variable bound only by `some v in {"…", …}`;
/// - `some v in` only a literal of strings, or one of the arrays above;
/// - a complete rule's value, in its head and its `else`s, a constant; a
///   rule defined more than once only with `if` heads (the value `true`) or
///   as a partial set (`contains`); no functions, no object rules.
///
/// `tokens` are each file's ([`tokenize`](super::token::tokenize)), in order.
pub(crate) fn spelled_out(
    files: &[PolicyFile],
    tokens: &[Vec<super::token::Token>],
    heads: &[RuleHead],
    rules: &BTreeSet<String>,
) -> bool {
    use super::token::{Token, TokenKind};
    const ARRAYS: [&[&str]; 3] = [
        &["input", ".", "inside"],
        &["input", ".", "element", ".", "attribute_names"],
        &["input", ".", "element", ".", "title_matches"],
    ];
    const STRINGS: [&[&str]; 2] = [
        &["input", ".", "element", ".", "role"],
        &["input", ".", "element", ".", "subrole"],
    ];
    fn text(t: &Token) -> &str {
        &t.text
    }
    let is = |tokens: &[Token], at: usize, kind: TokenKind, word: &str| {
        tokens
            .get(at)
            .is_some_and(|t| t.kind == kind && t.text == word)
    };
    let punct = |tokens: &[Token], at: usize, word: &str| is(tokens, at, TokenKind::Punct, word);
    // The length of `path` at `at`, if the tokens there spell it.
    let spells = |tokens: &[Token], at: usize, path: &[&str]| {
        let found = path.iter().enumerate().all(|(k, word)| {
            tokens
                .get(at + k)
                .is_some_and(|t| t.kind != TokenKind::Str && t.text == *word)
        });
        found.then_some(path.len())
    };
    let any_of = |tokens: &[Token], at: usize, paths: &[&[&str]]| {
        paths.iter().find_map(|p| spells(tokens, at, p))
    };
    // A constant at `at` (a literal, a negative number, or a bracketed
    // composite of literals): the index after it.
    let constant = |tokens: &[Token], at: usize| -> Option<usize> {
        let t = tokens.get(at)?;
        match t.kind {
            TokenKind::Str | TokenKind::Number => Some(at + 1),
            TokenKind::Ident if matches!(text(t), "true" | "false" | "null") => Some(at + 1),
            TokenKind::Punct if text(t) == "-" => {
                (tokens.get(at + 1)?.kind == TokenKind::Number).then_some(at + 2)
            }
            TokenKind::Punct if matches!(text(t), "{" | "[") => {
                let mut depth = 0usize;
                for (k, t) in tokens.iter().enumerate().skip(at) {
                    match (t.kind, text(t)) {
                        (TokenKind::Punct, "{" | "[") => depth += 1,
                        (TokenKind::Punct, "}" | "]") => {
                            depth -= 1;
                            if depth == 0 {
                                return Some(k + 1);
                            }
                        }
                        (TokenKind::Punct, "," | ":" | "-") => {}
                        (TokenKind::Str | TokenKind::Number, _) => {}
                        (TokenKind::Ident, "true" | "false" | "null") => {}
                        _ => return None,
                    }
                }
                None
            }
            _ => None,
        }
    };
    // A set or array literal of strings at `at`: the index after it.
    let strings_literal = |tokens: &[Token], at: usize| -> Option<usize> {
        let close = match text(tokens.get(at)?) {
            "{" => "}",
            "[" => "]",
            _ => return None,
        };
        let mut k = at + 1;
        loop {
            let t = tokens.get(k)?;
            match t.kind {
                TokenKind::Str => k += 1,
                _ => return None,
            }
            match text(tokens.get(k)?) {
                "," => k += 1,
                c if c == close => return Some(k + 1),
                _ => return None,
            }
        }
    };
    let files: Vec<(&PolicyFile, &Vec<Token>)> = files.iter().zip(tokens).collect();
    // Variables bound by `some v in {"…", …}`: usable as string arguments
    // when that is their only binding anywhere.
    let mut string_vars: BTreeSet<&str> = BTreeSet::new();
    for (_, tokens) in &files {
        for k in 0..tokens.len() {
            if is(tokens, k, TokenKind::Ident, "some")
                && tokens
                    .get(k + 1)
                    .is_some_and(|t| t.kind == TokenKind::Ident)
                && is(tokens, k + 2, TokenKind::Ident, "in")
                && strings_literal(tokens, k + 3).is_some()
            {
                string_vars.insert(text(&tokens[k + 1]));
            }
        }
    }
    string_vars.retain(|v| !rules.contains(*v) && *v != "_");
    if rules.contains("input") {
        return false;
    }
    let mut argument_uses: HashMap<&str, usize> = HashMap::new();
    let mut bindings: HashMap<&str, usize> = HashMap::new();
    // Each head: what follows the rule's name.
    let mut definitions: HashMap<&str, Vec<&str>> = HashMap::new();
    for head in heads {
        let Some((_, tokens)) = files.iter().find(|(f, _)| f.name == head.file) else {
            return false;
        };
        let Some(at) = tokens
            .iter()
            .position(|t| t.line == head.line && t.col == head.col)
        else {
            return false;
        };
        let Some(next) = tokens.get(at + 1) else {
            return false;
        };
        definitions
            .entry(head.path.as_str())
            .or_default()
            .push(next.text.as_str());
        match (next.kind, text(next)) {
            (TokenKind::Ident, "if" | "contains") | (TokenKind::Punct, "{") => {}
            (TokenKind::Punct, ":=") if constant(tokens, at + 2).is_some() => {}
            // A body-less rule (`x := 1` at the end of the file is above).
            _ => return false,
        }
    }
    if definitions
        .values()
        .any(|defs| defs.len() > 1 && defs.iter().any(|d| !matches!(*d, "if" | "{" | "contains")))
    {
        return false;
    }
    for (_, tokens) in &files {
        let mut k = 0;
        while k < tokens.len() {
            let t = &tokens[k];
            match (t.kind, text(t)) {
                // An index, only a small whole number (`inside[0]`).
                (TokenKind::Number, n) if punct(tokens, k.wrapping_sub(1), "[") => {
                    if n.len() > 6 || !n.bytes().all(|b| b.is_ascii_digit()) {
                        return false;
                    }
                }
                (TokenKind::Str | TokenKind::Number, _) => {}
                // `input` only as the root of a path (never bound, never
                // replaced, never indexed by a computed key).
                (TokenKind::Ident, "input") if !punct(tokens, k + 1, ".") => return false,
                (TokenKind::Punct, "." | "," | ":" | ";" | "[" | "]" | "{" | "}" | "(" | ")") => {}
                (TokenKind::Punct, "==" | "!=" | "<" | ">" | "<=" | ">=") => {}
                (TokenKind::Punct, "-")
                    if tokens
                        .get(k + 1)
                        .is_some_and(|n| n.kind == TokenKind::Number)
                        && (punct(tokens, k.wrapping_sub(1), ":=")) => {}
                (TokenKind::Punct, ":=") => {
                    // `else := v`: a constant.
                    if is(tokens, k.wrapping_sub(1), TokenKind::Ident, "else")
                        && constant(tokens, k + 1).is_none()
                    {
                        return false;
                    }
                }
                (TokenKind::Punct, _) => return false,
                (TokenKind::Ident, "with" | "every" | "default" | "print") => return false,
                (TokenKind::Ident, "import") => {
                    if spells(tokens, k, &["import", "rego", ".", "v1"]).is_none() {
                        return false;
                    }
                    k += 4;
                    continue;
                }
                (TokenKind::Ident, "some") => {
                    let var = tokens.get(k + 1);
                    let source = k + 3;
                    let ok = var.is_some_and(|v| v.kind == TokenKind::Ident)
                        && is(tokens, k + 2, TokenKind::Ident, "in")
                        && (strings_literal(tokens, source).is_some()
                            || any_of(tokens, source, &ARRAYS).is_some_and(|n| {
                                !punct(tokens, source + n, ".") && !punct(tokens, source + n, "[")
                            }));
                    if !ok {
                        return false;
                    }
                    *bindings.entry(text(&tokens[k + 1])).or_default() += 1;
                    k += 3;
                    continue;
                }
                (TokenKind::Ident, name) if punct(tokens, k + 1, "(") => {
                    if punct(tokens, k.wrapping_sub(1), ".") {
                        return false;
                    }
                    let args = k + 2;
                    let string_arg = |at: usize| -> Option<usize> {
                        if let Some(n) = any_of(tokens, at, &STRINGS) {
                            return Some(at + n);
                        }
                        let t = tokens.get(at)?;
                        if matches!(text(t), "lower" | "upper")
                            && t.kind == TokenKind::Ident
                            && punct(tokens, at + 1, "(")
                        {
                            let n = any_of(tokens, at + 2, &STRINGS)?;
                            return punct(tokens, at + 2 + n, ")").then_some(at + 3 + n);
                        }
                        (t.kind == TokenKind::Str).then_some(at + 1)
                    };
                    let end = match name {
                        "count" => any_of(tokens, args, &ARRAYS).map(|n| args + n),
                        "lower" | "upper" => any_of(tokens, args, &STRINGS).map(|n| args + n),
                        "contains" | "startswith" | "endswith" => {
                            string_arg(args).and_then(|after| {
                                if !punct(tokens, after, ",") {
                                    return None;
                                }
                                let second = tokens.get(after + 1)?;
                                if second.kind == TokenKind::Ident
                                    && string_vars.contains(text(second))
                                {
                                    *argument_uses.entry(text(second)).or_default() += 1;
                                    return Some(after + 2);
                                }
                                (second.kind == TokenKind::Str).then_some(after + 2)
                            })
                        }
                        _ => None,
                    };
                    match end {
                        Some(end) if punct(tokens, end, ")") => {
                            k = end + 1;
                            continue;
                        }
                        _ => return false,
                    }
                }
                (TokenKind::Ident, _) => {}
            }
            k += 1;
        }
    }
    // A string variable used anywhere but its binding and its arguments
    // might hold something else there.
    for var in &string_vars {
        let mut seen = 0;
        for (_, tokens) in &files {
            seen += tokens
                .iter()
                .filter(|t| t.kind == TokenKind::Ident && t.text == *var)
                .count();
        }
        let expected =
            bindings.get(var).copied().unwrap_or(0) + argument_uses.get(var).copied().unwrap_or(0);
        if seen != expected {
            return false;
        }
    }
    true
}

/// What each of `names` (per-element rules of a policy in [`spelled_out`])
/// reads of a projection, through every rule it refers to
/// ([`RuleReads`]); `None` when that cannot be told (a head not found
/// among the tokens). Found as [`super::recursion::find_recursion`] finds
/// rules' bodies: a definition runs from its head to the next head of its
/// file. In it, `input.element.FIELD` reads that field, `input.element`
/// otherwise every field, `input.inside` the ancestors (as [`Reads`]
/// says); `input.action` and `input.app` are the request's, the same for
/// every projection of it; an identifier naming a rule reads what that rule
/// reads; `data` other than as `data.ctxgate.NAME` reads everything.
/// `tests::canonical` decides every projection with these and with the
/// whole key and compares.
pub(crate) fn rule_reads(
    files: &[(&PolicyFile, &[super::token::Token])],
    heads: &[RuleHead],
    rules: &BTreeSet<String>,
    names: &[&str],
) -> Option<Vec<RuleReads>> {
    use super::token::{Token, TokenKind};
    let word = |tokens: &[Token], at: usize, w: &str| {
        tokens
            .get(at)
            .is_some_and(|t| t.kind != TokenKind::Str && t.text == w)
    };
    // Each rule's own reads (`None`: everything) and the rules it names.
    let mut own: HashMap<&str, Option<RuleReads>> = HashMap::new();
    let mut refers: HashMap<&str, BTreeSet<&str>> = HashMap::new();
    for (file, tokens) in files {
        let mut starts: Vec<(usize, &str)> = Vec::new();
        for head in heads.iter().filter(|h| h.file == file.name) {
            let at = tokens
                .iter()
                .position(|t| t.line == head.line && t.col == head.col)?;
            // Only rules named in one part (`data.ctxgate.NAME`).
            let name = head.path.strip_prefix("data.ctxgate.")?;
            if name.contains('.') {
                return None;
            }
            starts.push((at, name));
        }
        starts.sort();
        // Two heads at one token (`a.b contains …`): not told apart.
        if starts.windows(2).any(|w| w[0].0 == w[1].0) {
            return None;
        }
        for (n, &(start, name)) in starts.iter().enumerate() {
            let end = starts.get(n + 1).map_or(tokens.len(), |(next, _)| *next);
            let body = &tokens[start..end];
            let reads = own.entry(name).or_insert(Some(RuleReads {
                fields: 0,
                inside: false,
            }));
            let named = refers.entry(name).or_default();
            for (k, t) in body.iter().enumerate() {
                if t.kind != TokenKind::Ident {
                    continue;
                }
                match t.text.as_str() {
                    "input" if word(body, k + 1, ".") => {
                        let Some(r) = reads.as_mut() else { continue };
                        if word(body, k + 2, "inside") {
                            r.inside = true;
                        } else if word(body, k + 2, "element") {
                            let field = (word(body, k + 3, "."))
                                .then(|| body.get(k + 4))
                                .flatten()
                                .filter(|f| f.kind == TokenKind::Ident);
                            match field {
                                // A name that is no field reads nothing.
                                Some(f) => r.fields |= RuleReads::field(&f.text).unwrap_or(0),
                                None => r.fields = RuleReads::ALL.fields,
                            }
                        }
                    }
                    "input" => *reads = None,
                    "data"
                        if word(body, k + 1, ".")
                            && word(body, k + 2, "ctxgate")
                            && word(body, k + 3, ".")
                            && body.get(k + 4).is_some_and(|n| n.kind == TokenKind::Ident) => {}
                    "data" => *reads = None,
                    other if rules.contains(other) && other != name => {
                        named.insert(rules.get(other).expect("contained").as_str());
                    }
                    _ => {}
                }
            }
        }
    }
    // Each name's reads through what it names, depth-first without
    // recursion (the policy has none: its load refused it).
    let through = |name: &str| -> Option<RuleReads> {
        let mut all = RuleReads {
            fields: 0,
            inside: false,
        };
        let mut seen: HashSet<&str> = HashSet::new();
        let mut todo = vec![name];
        while let Some(next) = todo.pop() {
            if !seen.insert(next) {
                continue;
            }
            // A rule with no body found: everything.
            let reads = (*own.get(next)?)?;
            all.fields |= reads.fields;
            all.inside |= reads.inside;
            todo.extend(refers.get(next).into_iter().flatten().copied());
        }
        Some(all)
    };
    Some(
        names
            .iter()
            .map(|name| through(name).unwrap_or(RuleReads::ALL))
            .collect(),
    )
}

/// What of a projection a policy in [`spelled_out`] can read, from its
/// tokens, refusing whatever it does not know ([`Reads`]): only there is
/// every read of the input spelled out (no calls but the subset's, no
/// `with`, `input` never bound whole). Two parts:
/// - `input.inside` only ever as `count(input.inside)`: its length;
/// - `input.element` only ever as `input.element.FIELD`, and its subrole
///   only as `OP(input.element.subrole, N)` or `OP(lower(…), N)` /
///   `OP(upper(…), N)`, with `OP` one of `contains`, `startswith`,
///   `endswith` and `N` a string literal without escapes or a variable
///   bound only by `some v in {"…", …}` (its needles are every literal of
///   every such binding), or as `S == "…"` / `S != "…"` (either side, `S`
///   the subrole or its `lower`/`upper`): the outcomes of those tests.
///
/// `tests::canonical` decides every projection both ways (this key and the
/// full one) for every policy set of the tests and compares.
/// `files` are each policy file's tokens.
pub(crate) fn reads_of(files: &[Vec<super::token::Token>], rules: &BTreeSet<String>) -> Reads {
    use super::projection::{Case, Op, SubroleTest};
    use super::token::{Token, TokenKind};
    let word = |tokens: &[Token], at: Option<usize>, w: &str| {
        at.and_then(|at| tokens.get(at))
            .is_some_and(|t| t.kind != TokenKind::Str && t.text == w)
    };
    let spells = |tokens: &[Token], at: usize, path: &[&str]| {
        path.iter()
            .enumerate()
            .all(|(k, w)| word(tokens, Some(at + k), w))
    };
    // A string literal's value, when the token's text is certainly it.
    let literal =
        |t: &Token| (t.kind == TokenKind::Str && !t.text.contains('\\')).then(|| t.text.clone());
    // Each variable's needles: every literal of every `some v in {…}`;
    // `None` once any binding of it is not a literal of plain strings.
    let mut needles: HashMap<&str, Option<Vec<String>>> = HashMap::new();
    // How often each name appears at all, and in a `some … in` binding:
    // a needle's name must appear nowhere else than there and as needles
    // (no other binding, no field of that name), or its values are not
    // only the literals.
    let mut named: HashMap<&str, usize> = HashMap::new();
    let mut bound: HashMap<&str, usize> = HashMap::new();
    for tokens in files {
        for t in tokens.iter().filter(|t| t.kind == TokenKind::Ident) {
            *named.entry(t.text.as_str()).or_default() += 1;
        }
        for k in 0..tokens.len() {
            if !(word(tokens, Some(k), "some") && word(tokens, Some(k + 2), "in")) {
                continue;
            }
            let Some(var) = tokens.get(k + 1).filter(|t| t.kind == TokenKind::Ident) else {
                continue;
            };
            let mut values = Some(Vec::new());
            let close = match tokens.get(k + 3).map(|t| (t.kind, t.text.as_str())) {
                Some((TokenKind::Punct, "{")) => "}",
                Some((TokenKind::Punct, "[")) => "]",
                _ => "",
            };
            let mut at = k + 4;
            loop {
                match (close, tokens.get(at).and_then(literal)) {
                    ("", _) | (_, None) => {
                        values = None;
                        break;
                    }
                    (_, Some(v)) => values.as_mut().expect("still a literal").push(v),
                }
                match tokens.get(at + 1).map(|t| t.text.as_str()) {
                    Some(",") => at += 2,
                    Some(c) if c == close => break,
                    _ => {
                        values = None;
                        break;
                    }
                }
            }
            *bound.entry(var.text.as_str()).or_default() += 1;
            let entry = needles.entry(var.text.as_str()).or_insert(Some(Vec::new()));
            match (entry.as_mut(), values) {
                (Some(all), Some(values)) => all.extend(values),
                _ => *entry = None,
            }
        }
    }
    let mut inside_count_only = true;
    let mut tests: Option<Vec<SubroleTest>> = Some(Vec::new());
    let mut used: HashMap<&str, usize> = HashMap::new();
    for tokens in files {
        for k in 0..tokens.len() {
            if !word(tokens, Some(k), "input") || !word(tokens, Some(k + 1), ".") {
                continue;
            }
            let before = |n: usize| k.checked_sub(n);
            if spells(tokens, k, &["input", ".", "inside"]) {
                let counted = word(tokens, before(2), "count")
                    && word(tokens, before(1), "(")
                    && word(tokens, Some(k + 3), ")")
                    && !word(tokens, before(3), ".");
                inside_count_only &= counted;
                continue;
            }
            if !spells(tokens, k, &["input", ".", "element"]) {
                continue;
            }
            let field = tokens.get(k + 4).filter(|t| t.kind == TokenKind::Ident);
            if !word(tokens, Some(k + 3), ".") || field.is_none() {
                // `input.element` whole, or indexed: it may be read
                // through another name.
                tests = None;
                continue;
            }
            if !word(tokens, Some(k + 4), "subrole") {
                continue;
            }
            // `OP(` at `at`, the subrole's test, and where its needle is.
            let call = |at: Option<usize>| -> Option<Op> {
                let at = at?;
                if !word(tokens, Some(at + 1), "(") || word(tokens, at.checked_sub(1), ".") {
                    return None;
                }
                match tokens.get(at)?.text.as_str() {
                    "contains" => Some(Op::Contains),
                    "startswith" => Some(Op::StartsWith),
                    "endswith" => Some(Op::EndsWith),
                    _ => None,
                }
            };
            let cased = |at: Option<usize>| -> Option<Case> {
                let at = at?;
                if !word(tokens, Some(at + 1), "(") || word(tokens, at.checked_sub(1), ".") {
                    return None;
                }
                match tokens.get(at)?.text.as_str() {
                    "lower" => Some(Case::Lower),
                    "upper" => Some(Case::Upper),
                    _ => None,
                }
            };
            let found = match (call(before(2)), cased(before(2)), call(before(4))) {
                (Some(op), _, _) => Some((op, Case::AsIs, k + 5)),
                (None, Some(case), Some(op)) if word(tokens, Some(k + 5), ")") => {
                    Some((op, case, k + 6))
                }
                _ => None,
            };
            // `S == "…"` or `"…" != S`, `S` the subrole or its `lower`/`upper`:
            // no operator of the subset binds `S` or the literal tighter
            // than the comparison, and whatever takes the comparison's
            // result, or compares `S` with a comparison's result (a
            // boolean, never a string), depends on `S` only through it.
            let compared = || -> Option<(Case, String)> {
                let equality = |at: Option<usize>| word(tokens, at, "==") || word(tokens, at, "!=");
                let plain = |at: Option<usize>| at.and_then(|at| tokens.get(at)).and_then(literal);
                // `S` spans `first..after`.
                let (case, first, after) = match cased(before(2)) {
                    Some(case) if word(tokens, Some(k + 5), ")") => (case, k - 2, k + 6),
                    Some(_) => return None,
                    None => (Case::AsIs, k, k + 5),
                };
                let continues = [".", "[", "("].iter().any(|w| word(tokens, Some(after), w));
                if equality(Some(after)) {
                    return plain(Some(after + 1)).map(|lit| (case, lit));
                }
                if !continues && equality(first.checked_sub(1)) {
                    return plain(first.checked_sub(2)).map(|lit| (case, lit));
                }
                None
            };
            if found.is_none() {
                let read = compared().map(|(case, needle)| SubroleTest {
                    op: Op::Equals,
                    case,
                    needle,
                });
                match (tests.as_mut(), read) {
                    (Some(all), Some(read)) => all.push(read),
                    _ => tests = None,
                }
                continue;
            }
            let read: Option<Vec<SubroleTest>> = found.and_then(|(op, case, comma)| {
                if !word(tokens, Some(comma), ",") || !word(tokens, Some(comma + 2), ")") {
                    return None;
                }
                let needle = tokens.get(comma + 1)?;
                let values = match needle.kind {
                    TokenKind::Str => vec![literal(needle)?],
                    TokenKind::Ident if !rules.contains(&needle.text) => {
                        let values = needles.get(needle.text.as_str())?.clone()?;
                        *used.entry(needle.text.as_str()).or_default() += 1;
                        values
                    }
                    _ => return None,
                };
                Some(
                    values
                        .into_iter()
                        .map(|needle| SubroleTest { op, case, needle })
                        .collect(),
                )
            });
            match (tests.as_mut(), read) {
                (Some(all), Some(read)) => all.extend(read),
                _ => tests = None,
            }
        }
    }
    let only_there = used
        .iter()
        .all(|(name, n)| named.get(name) == Some(&(bound.get(name).copied().unwrap_or(0) + n)));
    if !only_there {
        tests = None;
    }
    if let Some(tests) = tests.as_mut() {
        tests.sort();
        tests.dedup();
    }
    Reads {
        inside_count_only,
        subrole: tests,
    }
}

impl Policy {
    /// [`Policy::from_sources`] without the lint: parsed, compiled and
    /// free of recursion, nothing more (the linter's own load), with every
    /// rule definition's head.
    pub(crate) fn unchecked(files: Vec<(String, String)>) -> Result<(Policy, Vec<RuleHead>)> {
        let mut files: Vec<PolicyFile> = files
            .into_iter()
            .map(|(name, source)| PolicyFile { name, source })
            .filter(|f| !f.is_test())
            .collect();
        files.sort_by(|a, b| a.name.cmp(&b.name));
        if files.is_empty() {
            return Err(Error::Policy {
                location: "(none)".to_string(),
                message: "no policy files were given".to_string(),
            });
        }
        // The default's bytes as one file (the embedded default loads
        // through `Policy::embedded` instead): their recursion, function
        // and subset checks have a result fixed when ctxgate is built, a
        // test runs them (`policy::load::tests`), this load does not; it
        // still compiles, and the lint runs after it.
        let checked = !matches!(files.as_slice(), [only] if only.source == DEFAULT_SOURCE);
        let (engine, rules, heads) = compile(&files, checked, checked)?;
        tracing::debug!(files = files.len(), rules = rules.len(), "policy compiled");
        let tokens: Vec<_> = files
            .iter()
            .map(|f| super::token::tokenize(&f.source))
            .collect();
        let subset = !checked || spelled_out(&files, &tokens, &heads, &rules);
        let reads = match subset {
            true => reads_of(&tokens, &rules),
            false => Reads::default(),
        };
        let element_rules: Vec<&str> = ELEMENT_RULES
            .into_iter()
            .filter(|r| rules.contains(*r))
            .collect();
        // One per rule of `element_rules`, in its order; otherwise not used.
        let rule_reads = subset
            .then(|| {
                let files: Vec<_> = files
                    .iter()
                    .zip(&tokens)
                    .map(|(f, t)| (f, t.as_slice()))
                    .collect();
                rule_reads(&files, &heads, &rules, &element_rules)
            })
            .flatten()
            .filter(|reads| reads.len() == element_rules.len());
        let constants = Constants::Found(
            files
                .iter()
                .flat_map(|f| string_constants(&f.source))
                .collect(),
        );
        let policy = Policy {
            hash: hash_files(&files),
            files,
            engine: OnceLock::from(Mutex::new(engine)),
            time_limit: DEFAULT_TIME_LIMIT,
            rules,
            plans: Mutex::default(),
            decisions: DecisionCache::default(),
            constants,
            element_rules,
            rule_reads,
            embedded: false,
            reads,
        };
        Ok((policy, heads))
    }

    /// The embedded default ([`Policy::embedded_default`]): what its bytes
    /// fix is not computed at load but taken from `default_facts`, which
    /// `policy::load::tests` recomputes from the same bytes (its rules, its
    /// `Reads`, its string constants), like its lint, recursion and subset
    /// checks. It answers from its table (`policy::table`), which holds
    /// every rule's value and every plan; nothing is compiled until the
    /// interpreter is needed.
    pub(crate) fn embedded() -> Result<Policy> {
        let files = vec![PolicyFile {
            name: DEFAULT_NAME.to_string(),
            source: DEFAULT_SOURCE.to_string(),
        }];
        let rules: BTreeSet<String> = default_facts::RULES.iter().map(|r| r.to_string()).collect();
        let element_rules: Vec<&'static str> = ELEMENT_RULES
            .into_iter()
            .filter(|r| rules.contains(*r))
            .collect();
        // In `element_rules` order, as `the_default_facts_are_its_bytes`
        // writes them; any other order is not used.
        let rule_reads = default_facts::RULE_READS
            .filter(|reads| {
                reads
                    .iter()
                    .map(|(rule, ..)| *rule)
                    .eq(element_rules.iter().copied())
            })
            .map(|reads| {
                reads
                    .iter()
                    .map(|&(_, fields, inside)| RuleReads { fields, inside })
                    .collect()
            });
        tracing::debug!("embedded default loaded");
        Ok(Policy {
            hash: hash_files(&files),
            files,
            engine: OnceLock::new(),
            time_limit: DEFAULT_TIME_LIMIT,
            rules,
            plans: Mutex::default(),
            decisions: DecisionCache::default(),
            constants: Constants::Fixed(default_facts::CONSTANTS),
            element_rules,
            rule_reads,
            embedded: true,
            reads: default_reads(),
        })
    }

    /// The embedded default's table's action for `request`'s
    /// (`policy::table`); `None` for every other policy.
    fn table_action(&self, request: &RequestInput) -> Option<usize> {
        self.embedded
            .then(|| super::table::action(&request.action.name))
    }

    /// Sets how long one regorus evaluation may run (default 1 s).
    pub fn with_time_limit(mut self, limit: Duration) -> Policy {
        if let Some(engine) = self.engine.get_mut() {
            let engine = engine.get_mut().unwrap_or_else(|e| e.into_inner());
            engine.set_execution_timer_config(timer(limit));
        }
        self.time_limit = limit;
        self
    }

    /// The interpreter's engine, compiled on first need for the embedded
    /// default (every other policy has it from its load). Two threads
    /// needing it at once may both compile; one engine is kept.
    fn interpreter(&self) -> Result<MutexGuard<'_, Engine>> {
        if let Some(engine) = self.engine.get() {
            return Ok(lock(engine));
        }
        // The embedded default's bytes: their recursion check is fixed by
        // a test, as at its load.
        let (mut engine, _, _) = compile(&self.files, false, false)?;
        engine.set_execution_timer_config(timer(self.time_limit));
        tracing::debug!("interpreter compiled on first need");
        Ok(lock(self.engine.get_or_init(|| Mutex::new(engine))))
    }

    /// Whether the interpreter's engine is built (tests of the embedded
    /// default's warm path, which needs none).
    #[cfg(test)]
    pub(crate) fn interpreter_built(&self) -> bool {
        self.engine.get().is_some()
    }

    /// The policy's content hash: hex SHA-256 of its sources alone, sorted
    /// by their bytes (see `policies/README.md`): the same bytes give the
    /// same hash whatever the files' names, folders or order.
    pub fn hash(&self) -> &str {
        &self.hash
    }

    /// The files of the set, sorted by name.
    pub(crate) fn files(&self) -> &[PolicyFile] {
        &self.files
    }

    /// What each per-element rule reads, when known ([`rule_reads`]):
    /// (rule, `RuleReads::fields`, inside).
    #[cfg(test)]
    pub(crate) fn rule_reads(&self) -> Option<Vec<(&'static str, u16, bool)>> {
        let reads = self.rule_reads.as_ref()?;
        Some(
            self.element_rules
                .iter()
                .zip(reads)
                .map(|(rule, r)| (*rule, r.fields, r.inside))
                .collect(),
        )
    }

    /// What of a projection the decisions are keyed by.
    #[cfg(test)]
    pub(crate) fn reads(&self) -> &Reads {
        &self.reads
    }

    /// Whether `package ctxgate` defines a rule of this name.
    pub fn defines(&self, rule: &str) -> bool {
        self.rules.contains(rule)
    }

    /// The rule names `package ctxgate` defines.
    pub fn rule_names(&self) -> impl Iterator<Item = &str> {
        self.rules.iter().map(String::as_str)
    }

    /// The per-request results (scope, budget, redaction, title patterns,
    /// attributes to read), cached across requests by `request`.
    pub(crate) fn plan(&self, request: &RequestInput) -> Result<Arc<RequestPlan>> {
        self.plan_noting(request, &Cell::new(false))
    }

    /// [`Policy::plan`], setting `timed_out` when an evaluation ran out of
    /// time (for the tools, which stop probing then).
    pub(crate) fn plan_noting(
        &self,
        request: &RequestInput,
        timed_out: &Cell<bool>,
    ) -> Result<Arc<RequestPlan>> {
        if let Some(plan) = lock(&self.plans).get(request) {
            return Ok(plan.clone());
        }
        let span = tracing::debug_span!("policy_plan", action = %request.action.name);
        let _entered = span.enter();
        let tabled = self.table_action(request).and_then(super::table::plan);
        let plan = match tabled {
            // The table's replacements were checked when it was generated
            // (its plans are the interpreter's, which check them).
            Some(values) => self.evaluate_plan_json(Replacements::Checked, &mut |rule| {
                let Some((_, json)) = values.clone().find(|(r, _)| *r == rule) else {
                    return Ok(serde_json::Value::Null);
                };
                serde_json::from_str(json).map_err(|e| {
                    shape(
                        rule,
                        format!("the default's table holds no JSON for it: {e}"),
                    )
                })
            })?,
            None => self.plan_interpreted(Value::from(request_json(request)), timed_out)?,
        };
        let plan = Arc::new(plan);
        tracing::debug!(scope = ?plan.scope, redactions = plan.redact.len(), "plan evaluated");
        let mut plans = lock(&self.plans);
        if plans.len() >= PLAN_CACHE {
            plans.clear();
        }
        plans.insert(request.clone(), plan.clone());
        Ok(plan)
    }

    /// A per-request handle for element decisions, for an app without a
    /// title (`input.app.title_matches` is empty).
    pub(crate) fn evaluator(&self, request: &RequestInput) -> Result<Evaluator<'_>> {
        self.evaluator_with_title(request, None)
    }

    /// A per-request handle for element decisions in an app whose root has
    /// this title. The title never enters Rego: the policy sees the names
    /// of the plan's title patterns it matches, in `input.app.title_matches`.
    pub(crate) fn evaluator_with_title(
        &self,
        request: &RequestInput,
        title: Option<&str>,
    ) -> Result<Evaluator<'_>> {
        let plan = self.plan(request)?;
        let title_matches: Vec<String> = match title {
            Some(title) => {
                let title = crate::redact::AsRead::title(title);
                plan.title_patterns
                    .iter()
                    .filter(|(_, regex)| title.is_match(regex))
                    .map(|(name, _)| name.clone())
                    .collect()
            }
            None => Vec::new(),
        };
        self.evaluator_with_matches(request, title_matches)
    }

    /// A per-request handle for element decisions in an app whose root's
    /// title matches the patterns named `title_matches` (the tools, which
    /// explore the matches without a title).
    pub(crate) fn evaluator_with_matches(
        &self,
        request: &RequestInput,
        title_matches: Vec<String>,
    ) -> Result<Evaluator<'_>> {
        let plan = self.plan(request)?;
        let mut value = request_json(request);
        value["app"]["title_matches"] = title_matches.clone().into();
        Ok(Evaluator {
            policy: self,
            plan,
            request: Arc::new(RequestKey {
                request: request.clone(),
                title_matches,
            }),
            request_value: Value::from(value),
            engine: None,
            exact_keys: false,
            table: self.table_action(request),
            memo: Table::new(),
            rule_memo: Vec::new(),
            evaluations: 0,
            deadline: None,
            timed_out: Cell::new(false),
        })
    }

    /// [`Policy::evaluator_with_title`] whose evaluations each stop by
    /// `deadline`.
    pub(crate) fn evaluator_within(
        &self,
        request: &RequestInput,
        title: Option<&str>,
        deadline: Deadline,
    ) -> Result<Evaluator<'_>> {
        let mut evaluator = self.evaluator_with_title(request, title)?;
        evaluator.deadline = Some(deadline);
        Ok(evaluator)
    }

    /// The plan through the interpreter (the reference, and every policy's
    /// but the embedded default's).
    fn plan_interpreted(&self, input: Value, timed_out: &Cell<bool>) -> Result<RequestPlan> {
        let mut engine = self.interpreter()?.clone();
        engine.set_input(input);
        self.evaluate_plan(&mut |rule| eval_silently(&mut engine, rule, timed_out))
    }

    /// The plan as the interpreter gives it, whatever the policy (tests of
    /// the two paths).
    #[cfg(test)]
    pub(crate) fn plan_through_interpreter(&self, request: &RequestInput) -> Result<RequestPlan> {
        self.plan_interpreted(Value::from(request_json(request)), &Cell::new(false))
    }

    /// One per-element rule's value as the interpreter gives it, for
    /// `element` under `request` in an app without a title: what the table
    /// holds (`policy::table::tests`).
    #[cfg(test)]
    pub(crate) fn rule_value_interpreted(
        &self,
        request: &RequestInput,
        element: &ElementInput<'_>,
        rule: &str,
    ) -> Value {
        let evaluator = self.evaluator(request).unwrap();
        let mut engine = self.interpreter().unwrap().clone();
        engine.set_input(element.rego_input(&evaluator.request_value));
        eval_silently(&mut engine, rule, &Cell::new(false)).unwrap()
    }

    /// Each defined per-request rule's value as the interpreter gives it
    /// (JSON, as the plan reads it), under `request`: what the table holds.
    #[cfg(test)]
    pub(crate) fn plan_json_interpreted(
        &self,
        request: &RequestInput,
    ) -> Vec<(&'static str, serde_json::Value)> {
        let mut engine = self.interpreter().unwrap().clone();
        engine.set_input(Value::from(request_json(request)));
        REQUEST_RULES
            .into_iter()
            .filter(|rule| self.defines(rule))
            .map(|rule| {
                let value = eval_silently(&mut engine, rule, &Cell::new(false)).unwrap();
                (rule, to_json(&value, rule).unwrap())
            })
            .collect()
    }

    /// What `apply` makes of a per-element rule's value: a decision, or
    /// the error a request would see.
    #[cfg(test)]
    pub(crate) fn applied(
        &self,
        rule: &str,
        value: &Value,
    ) -> std::result::Result<Decision, String> {
        let mut decision = Decision::default();
        apply(&mut decision, rule, value, &self.constants).map_err(|e| e.to_string())?;
        Ok(decision)
    }

    /// The plan from each defined per-request rule's value (`eval_rule`).
    fn evaluate_plan(
        &self,
        eval_rule: &mut dyn FnMut(&str) -> Result<Value>,
    ) -> Result<RequestPlan> {
        self.evaluate_plan_json(Replacements::Check, &mut |rule| {
            to_json(&eval_rule(rule)?, rule)
        })
    }

    /// The plan from each defined per-request rule's value as JSON.
    fn evaluate_plan_json(
        &self,
        replacements: Replacements,
        eval_rule: &mut dyn FnMut(&str) -> Result<serde_json::Value>,
    ) -> Result<RequestPlan> {
        let mut eval = |rule: &str| -> Result<serde_json::Value> {
            if !self.defines(rule) {
                return Ok(serde_json::Value::Null);
            }
            eval_rule(rule)
        };
        let scope = match eval("scope")? {
            serde_json::Value::Null => Scope::Focus,
            serde_json::Value::String(s) => match s.as_str() {
                "selection" => Scope::Selection,
                "focus" => Scope::Focus,
                "window" => Scope::Window,
                "app" => Scope::App,
                _ => {
                    return Err(shape(
                        "scope",
                        format!(
                        "`scope` is a string of {} bytes that is none of `selection`, `focus`, `window`, `app`; it must be one of them",
                        s.len()
                    ),
                    ))
                }
            },
            other => {
                return Err(shape(
                    "scope",
                    format!(
                        "`scope` must be one of `selection`, `focus`, `window`, `app`; it is {}",
                        json_kind(&other)
                    ),
                ))
            }
        };
        let budget = match eval("budget")? {
            serde_json::Value::Null => None,
            serde_json::Value::Object(map) if map.len() == 1 => {
                let (unit, n) = map.iter().next().expect("one entry");
                let unit: &'static str = match unit.as_str() {
                    "tokens" => "tokens",
                    "bytes" => "bytes",
                    _ => return Err(shape("budget", format!("`budget` has a key of {} bytes that is neither `tokens` nor `bytes`; it must be `{{\"tokens\": N}}` or `{{\"bytes\": N}}`", unit.len()))),
                };
                let n = n.as_u64().filter(|&n| n > 0).ok_or_else(|| {
                    shape(
                        "budget",
                        format!("`budget.{unit}` must be a positive whole number"),
                    )
                })? as usize;
                if unit == "tokens" {
                    Some(Budget::Tokens(n))
                } else {
                    Some(Budget::Bytes(n))
                }
            }
            _ => {
                return Err(shape(
                    "budget",
                    "`budget` must be `{\"tokens\": N}` or `{\"bytes\": N}`".to_string(),
                ))
            }
        };
        let mut redact = Vec::new();
        for item in collection(eval("redact")?, "redact")? {
            redact.push(redaction(&item)?);
        }
        redact.sort_by(|a: &Redaction, b| a.id.cmp(&b.id));
        if let Some(pair) = redact.windows(2).find(|w| w[0].id == w[1].id) {
            return Err(shape(
                "redact",
                format!("the id `{}` is used twice", pair[0].id),
            ));
        }
        if replacements == Replacements::Check {
            crate::redact::check_replacements(&redact)?;
        }
        let mut title_patterns = Vec::new();
        match eval("title_patterns")? {
            serde_json::Value::Null => {}
            serde_json::Value::Object(map) => {
                for (name, pattern) in map {
                    if !is_rule_id(&name) {
                        return Err(shape(
                            "title_patterns",
                            format!("`title_patterns` has a name of {} bytes that is not a rule id; names reach the policy in `title_matches` and the reviewer's doc, so each must match `[a-z0-9][a-z0-9._:-]{{0,63}}`", name.len()),
                        ));
                    }
                    let Some(pattern) = pattern.as_str() else {
                        return Err(shape(
                            "title_patterns",
                            format!("the pattern of `{name}` must be a string"),
                        ));
                    };
                    let regex = crate::redact::Pattern::new(pattern).map_err(|e| {
                        shape(
                            "title_patterns",
                            format!(
                                "the pattern of `{name}` is not a valid regex: {}",
                                one_line(&e.to_string())
                            ),
                        )
                    })?;
                    title_patterns.push((name, regex));
                }
            }
            _ => {
                return Err(shape(
                    "title_patterns",
                    "`title_patterns` must be an object of name to pattern".to_string(),
                ))
            }
        }
        let mut element_attributes = Vec::new();
        for item in collection(eval("element_attributes")?, "element_attributes")? {
            match item {
                serde_json::Value::String(s) => element_attributes.push(s),
                other => {
                    return Err(shape(
                        "element_attributes",
                        format!(
                            "`element_attributes` must hold attribute names (strings); it holds {}",
                            json_kind(&other)
                        ),
                    ))
                }
            }
        }
        Ok(RequestPlan {
            scope,
            budget,
            redact,
            title_patterns,
            element_attributes,
        })
    }
}

/// A per-request handle: decides elements, memoising each distinct
/// projection and sharing decisions with later requests through the policy.
pub struct Evaluator<'p> {
    policy: &'p Policy,
    plan: Arc<RequestPlan>,
    /// The shared cache's request part.
    request: Arc<RequestKey>,
    /// `input.action` and `input.app`, built once per request.
    request_value: Value,
    /// Cloned from the policy on the first evaluation.
    engine: Option<Engine>,
    /// Whether to key decisions by the whole projection, not by what the
    /// policy reads of it, and read neither the per-rule memo nor the table
    /// (on only in tests of the two keys).
    exact_keys: bool,
    /// For the embedded default, the table's action this request's is
    /// (`policy::table`): where it holds a rule's value, the rule is not run.
    table: Option<usize>,
    memo: Table,
    /// Per rule of the policy's `element_rules`, the rule's values by the
    /// key of what it reads ([`ElementInput::key_of`]), when that is known:
    /// a projection not decided yet runs only the rules whose value no
    /// other projection of the request has given.
    rule_memo: Vec<HashMap<ProjectionKey, Value>>,
    evaluations: usize,
    /// The request's deadline: no evaluation runs past it.
    deadline: Option<Deadline>,
    /// Whether an evaluation ran out of time.
    timed_out: Cell<bool>,
}

impl Evaluator<'_> {
    /// The request's plan.
    pub fn plan(&self) -> &Arc<RequestPlan> {
        &self.plan
    }

    /// The decision for one element, floor applied. Evaluated once per
    /// distinct projection; later requests with the same request input get
    /// it from the policy's cache.
    pub fn decide(&mut self, element: &ElementInput<'_>) -> Result<Arc<Decision>> {
        enforce(element, self.policy_decision(element)?)
    }

    /// The policy's own decision, before the floor: from this request's
    /// memo (no lock), else the shared cache (one shard's lock), else
    /// evaluated.
    fn policy_decision(&mut self, element: &ElementInput<'_>) -> Result<Arc<Decision>> {
        let key = match self.exact_keys {
            false => element.key_for(&self.policy.reads),
            true => element.key(),
        };
        if let Some(found) = self.memo.get(&key) {
            return Ok(found.clone());
        }
        if let Some(found) = self.policy.decisions.get(&self.request, &key) {
            let found = Arc::new(found.request_local());
            self.memo.insert(key, found.clone());
            return Ok(found);
        }
        let decision = Arc::new(self.evaluate(element)?);
        self.memo.insert(key.clone(), decision.clone());
        self.policy
            .decisions
            .insert(&self.request, key, decision.clone());
        Ok(decision)
    }

    /// Regorus evaluations run for this request so far (one per
    /// per-element rule the policy defines, per projection not found in a
    /// cache); 0 when every decision came from a cache.
    #[cfg(any(test, feature = "internals"))]
    pub fn evaluations(&self) -> usize {
        self.evaluations
    }

    /// Whether an evaluation of this request ran out of time.
    pub(crate) fn timed_out(&self) -> bool {
        self.timed_out.get()
    }

    /// The same evaluator keying its decisions by the whole projection
    /// (the reference the policy's [`Reads`] key is compared with).
    #[cfg(test)]
    pub(crate) fn exact(mut self) -> Self {
        self.exact_keys = true;
        self
    }

    /// How long the next evaluation may run: the policy's limit, cut to
    /// what is left of the request.
    fn limit(&self) -> Duration {
        match &self.deadline {
            Some(deadline) => {
                let left = deadline.remaining().max(Duration::from_millis(1));
                left.min(self.policy.time_limit)
            }
            None => self.policy.time_limit,
        }
    }

    /// The decision: each rule asked of the projection from the request's
    /// per-rule memo (what a projection that reads the same gave), else,
    /// for the embedded default, from its table, else from the interpreter
    /// (one `eval_rule`; the input is built only if one runs). With
    /// [`Evaluator::exact`], the reference of the keys, every rule runs on
    /// the interpreter.
    fn evaluate(&mut self, element: &ElementInput<'_>) -> Result<Decision> {
        let policy = self.policy;
        let memo = policy.rule_reads.as_ref().filter(|_| !self.exact_keys);
        if memo.is_some() && self.rule_memo.is_empty() {
            self.rule_memo = vec![HashMap::new(); policy.element_rules.len()];
        }
        let mut input_set = false;
        let mut decision = Decision::default();
        for (at, &rule) in policy.element_rules.iter().enumerate() {
            if !asked(policy, rule, element) {
                continue;
            }
            let key = memo.map(|reads| element.key_of(&policy.reads, reads[at]));
            if let Some(value) = key.as_ref().and_then(|key| self.rule_memo[at].get(key)) {
                apply(&mut decision, rule, value, &policy.constants)?;
                continue;
            }
            self.evaluations += 1;
            let tabled = match (self.table, memo) {
                (Some(action), Some(reads)) => {
                    super::table::value(action, at, rule, element, &policy.reads, reads[at])
                }
                _ => None,
            };
            let value = match tabled {
                Some(value) => value,
                None => {
                    if !input_set {
                        self.set_input(element)?;
                        input_set = true;
                    }
                    let engine = self.engine.as_mut().expect("set with the input");
                    match eval_silently(engine, rule, &self.timed_out) {
                        Ok(value) => value,
                        // Stopped by the request's deadline rather than its
                        // own limit.
                        Err(err) => match &self.deadline {
                            Some(deadline) => {
                                deadline.check(Stage::Decide)?;
                                return Err(err);
                            }
                            None => return Err(err),
                        },
                    }
                }
            };
            apply(&mut decision, rule, &value, &policy.constants)?;
            if let Some(key) = key {
                self.rule_memo[at].insert(key, value);
            }
        }
        Ok(decision)
    }

    /// The interpreter's engine for this request (cloned from the policy's
    /// on first need), given `element` as its input; no evaluation may run
    /// past what is left of the request.
    fn set_input(&mut self, element: &ElementInput<'_>) -> Result<()> {
        let input = element.rego_input(&self.request_value);
        let limit = self.limit();
        let engine = match &mut self.engine {
            Some(engine) => engine,
            None => self.engine.insert(self.policy.interpreter()?.clone()),
        };
        if self.deadline.is_some() {
            engine.set_execution_timer_config(timer(limit));
        }
        engine.set_input(input);
        Ok(())
    }
}

/// Whether `rule` is asked about this element: it is defined, and `strip`
/// only of an element with attributes (ctxgate's notices aside, which it
/// may not strip, there is nothing to remove without).
fn asked(policy: &Policy, rule: &str, element: &ElementInput<'_>) -> bool {
    policy.defines(rule) && !(rule == "strip" && element.attribute_names.is_empty())
}

/// Reads one per-element rule's value into the decision.
fn apply(decision: &mut Decision, rule: &str, value: &Value, constants: &Constants) -> Result<()> {
    match rule {
        "priority" => decision.priority = priority(value)?,
        "deny" => decision.deny = reasons(value, rule, constants)?,
        "mask" => decision.mask = reasons(value, rule, constants)?,
        "keep" => decision.keep = reasons(value, rule, constants)?,
        "strip" => decision.strip = strip_names(value)?,
        _ => decision.prune = reasons(value, rule, constants)?,
    }
    Ok(())
}

/// The trimmer's view: the policy's decision, to which the trimmer applies
/// the floor (as it does to any decider's).
impl Decider for Evaluator<'_> {
    fn decide(&mut self, element: &ElementInput<'_>) -> Result<Arc<Decision>> {
        self.policy_decision(element)
    }
    fn evaluations(&self) -> usize {
        self.evaluations
    }
}

/// What holds whatever made a decision: its reasons are rule ids, and the
/// floor masks secure text. The one place the floor is applied.
pub(crate) fn enforce<A>(
    element: &ElementInput<'_, A>,
    mut decision: Arc<Decision>,
) -> Result<Arc<Decision>> {
    check_reasons(&decision)?;
    let floor = Floor::SecureText;
    if element.floor_masks() && !decision.mask.iter().any(|r| &**r == floor.reason()) {
        let decision = Arc::make_mut(&mut decision);
        decision.mask.push(Arc::from(floor.reason()));
        decision.mask.sort();
    }
    Ok(decision)
}

/// A decision for `element` from `decider`, floor enforced: the only way
/// the trimmer obtains one.
pub(crate) fn decide(
    decider: &mut dyn Decider,
    element: &ElementInput<'_>,
) -> Result<Arc<Decision>> {
    enforce(element, decider.decide(element)?)
}

/// Refuses a decision with a reason that is not a rule id, from whatever
/// decider: reasons are written into notices and the report. The error
/// names the class and the reason's length, never the reason.
pub(crate) fn check_reasons(decision: &Decision) -> Result<()> {
    for (rule, reasons) in [
        ("deny", &decision.deny),
        ("mask", &decision.mask),
        ("keep", &decision.keep),
        ("prune", &decision.prune),
    ] {
        if let Some(bad) = reasons.iter().find(|r| !is_rule_id(r)) {
            return Err(not_a_rule_id(rule, bad.len()));
        }
    }
    if decision.strip.iter().any(|name| is_reserved(name)) {
        return Err(reserved_strip());
    }
    Ok(())
}

/// Whether an attribute name is in ctxgate's reserved `ctxgate:` namespace
/// ([`crate::render::notice::is_reserved`]).
pub(crate) fn is_reserved(name: &str) -> bool {
    crate::render::notice::is_reserved(name)
}

fn reserved_strip() -> Error {
    shape(
        "strip",
        "`strip` holds a reserved `ctxgate:` name; those attributes are ctxgate's notices (what was withheld and why), which no policy may remove: strip only the provider's attributes".to_string(),
    )
}

/// `strip`'s attribute names, sorted. Errors name the kind of what is
/// wrong, never its content: a name may have been read from the input.
fn strip_names(value: &Value) -> Result<Vec<Arc<str>>> {
    let items = members(
        value,
        "strip",
        "attribute names (`strip contains \"author\" if …`)",
    )?;
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        match item {
            Value::String(s) if is_reserved(s) => return Err(reserved_strip()),
            Value::String(s) => out.push(Arc::from(&**s)),
            other => {
                return Err(shape(
                    "strip",
                    format!(
                        "`strip` must hold attribute names (strings); it holds {}",
                        kind(other)
                    ),
                ))
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn not_a_rule_id(rule: &str, len: usize) -> Error {
    shape(
        rule,
        format!(
            "`{rule}` holds a reason of {len} bytes that is not a rule id; reasons are written into notices and the report, so each must match `[a-z0-9][a-z0-9._:-]{{0,63}}` (a constant such as `\"secure-text\"`, never a value read from the input)"
        ),
    )
}

/// Loads and compiles `files` (all of them; the caller filters tests),
/// returning every rule definition's head. `functions` also compiles the
/// rules with regorus's RVM compiler, for its report of an unknown
/// function, which the interpreter gives only when the rule runs.
pub(crate) fn compile_with_heads(
    files: &[PolicyFile],
    functions: bool,
) -> Result<(Engine, BTreeSet<String>, Vec<RuleHead>)> {
    compile(files, functions, true)
}

/// [`compile_with_heads`], with the recursion check only when `recursion`.
fn compile(
    files: &[PolicyFile],
    functions: bool,
    recursion: bool,
) -> Result<(Engine, BTreeSet<String>, Vec<RuleHead>)> {
    let mut engine = Engine::new();
    engine.set_execution_timer_config(timer(DEFAULT_TIME_LIMIT));
    let mut engine = Engine::new();
    engine.set_execution_timer_config(timer(DEFAULT_TIME_LIMIT));
    // `print()` may show a declared attribute value or the app title:
    // gathered, never written to stderr (see `eval_silently`).
    engine.set_gather_prints(true);
    for file in files {
        // Fixed, with the recursion check, for the embedded default.
        if recursion {
            file.check_bracket_depth()?;
        }
        let package = engine
            .add_policy(file.name.clone(), file.source.clone())
            .map_err(|e| policy_error(&e, &file.name))?;
        if package != "data.ctxgate" && !file.is_test() {
            return Err(Error::Policy {
                location: file.name.clone(),
                message: format!(
                    "the file is in `package {}`; policy files must be in `package ctxgate`",
                    package.trim_start_matches("data.")
                ),
            });
        }
    }
    engine
        .add_policy(INTERNAL_NAME.to_string(), INTERNAL_SOURCE.to_string())
        .map_err(|e| policy_error(&e, INTERNAL_NAME))?;
    let compiled = engine
        .compile_with_entrypoint(&INTERNAL_ENTRY.into())
        .map_err(|e| policy_error(&e, &files[0].name))?;
    let rules: BTreeSet<String> = compiled
        .get_rules()
        .keys()
        .filter_map(|path| path.strip_prefix("data.ctxgate."))
        .map(|rest| rest.split(['.', '[']).next().unwrap_or(rest).to_string())
        .collect();
    let mut heads: Vec<RuleHead> = compiled
        .get_rules()
        .iter()
        .flat_map(|(path, defs)| {
            defs.iter().map(move |def| {
                let span = def.span();
                RuleHead {
                    path: path.clone(),
                    file: span.source.file().clone(),
                    line: span.line as usize,
                    col: span.col as usize,
                }
            })
        })
        .filter(|h| h.file != INTERNAL_NAME)
        .collect();
    heads.sort_by(|a, b| (&a.file, a.line, a.col).cmp(&(&b.file, b.line, b.col)));
    heads.dedup();
    if let Some((file, line, col, message)) = recursion
        .then(|| super::recursion::find_recursion(files, &heads))
        .flatten()
    {
        return Err(Error::Policy {
            location: format!("{file}:{line}:{col}"),
            message,
        });
    }
    if functions {
        let entries: Vec<String> = rules.iter().map(|r| format!("data.ctxgate.{r}")).collect();
        let entries: Vec<&str> = entries.iter().map(String::as_str).collect();
        if let Err(e) =
            regorus::languages::rego::compiler::Compiler::compile_from_policy(&compiled, &entries)
        {
            // The compiler lacks some of the language (`with`, `walk`): only
            // its report of an unknown function is a finding about the policy.
            let e = anyhow::Error::from(e);
            if format!("{e:#}").contains("Unknown function") {
                return Err(policy_error(&e, &files[0].name));
            }
        }
    }
    Ok((engine, rules, heads))
}

/// Evaluates `data.ctxgate.{rule}` and drops what the policy printed:
/// during a request, `print()` output reaches neither stderr nor the logs
/// (only its count, at TRACE), as it can carry what the policy reads
/// (declared attribute values, the app title). `policy test` shows it.
/// A failure that was regorus's time limit sets `timed_out`.
fn eval_silently(engine: &mut Engine, rule: &str, timed_out: &Cell<bool>) -> Result<Value> {
    let result = engine.eval_rule(format!("data.ctxgate.{rule}"));
    let printed = engine.take_prints().map(|p| p.len()).unwrap_or(0);
    if printed > 0 {
        tracing::trace!(rule, printed, "policy prints dropped");
    }
    result.map_err(|e| {
        if is_time_limit(&e) {
            timed_out.set(true);
        }
        eval_error(&e, rule)
    })
}

pub(crate) fn timer(limit: Duration) -> ExecutionTimerConfig {
    ExecutionTimerConfig {
        limit,
        check_interval: NonZeroU32::new(64).expect("non-zero"),
    }
}

/// The policy's content hash ([`Policy::hash`]): SHA-256 over the tag
/// [`HASH_TAG`], then each policy file's source as its length (u64,
/// little-endian) and bytes, the sources sorted by their bytes. File
/// names and folders are not part of it: Rego gives them no meaning (the
/// package is in the source), so the same sources hash the same whether
/// embedded or loaded from `policies`, `./policies` or an absolute path.
pub(crate) fn hash_files(files: &[PolicyFile]) -> String {
    // The embedded default's, computed by build.rs (a test compares).
    if let [only] = files {
        if only.source == DEFAULT_SOURCE {
            return DEFAULT_HASH.to_string();
        }
    }
    hash_sources(files)
}

/// [`hash_files`], computed.
pub(crate) fn hash_sources(files: &[PolicyFile]) -> String {
    let mut sources: Vec<&[u8]> = files.iter().map(|f| f.source.as_bytes()).collect();
    sources.sort_unstable();
    let mut hasher = Sha256::new();
    hasher.update(HASH_TAG);
    for source in sources {
        hasher.update((source.len() as u64).to_le_bytes());
        hasher.update(source);
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What the policy hash starts with: names the scheme, so a later one
/// cannot give the same hash for other input.
pub(crate) const HASH_TAG: &[u8] = b"ctxgate-policy-sources-v1\0";

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere leaves caches that are still consistent (each
    // insert is one step), so a poisoned lock is used as is.
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// `input.action` and `input.app`.
pub(crate) fn request_json(request: &RequestInput) -> serde_json::Value {
    let mut action = serde_json::Map::new();
    action.insert("name".into(), request.action.name.clone().into());
    if let Some(target) = &request.action.target {
        action.insert("target".into(), target.clone().into());
    }
    let mut app = serde_json::Map::new();
    app.insert("instance".into(), request.instance.clone().into());
    app.insert("protocol".into(), request.protocol.clone().into());
    serde_json::json!({ "action": action, "app": app })
}

/// A per-request rule's value as JSON: what printing it as regorus does
/// (`to_json_str`) and parsing that back gives. Built directly
/// (`serde_json::to_value`, over the same `Serialize`: the same keys,
/// order, integers and errors), ~5× cheaper than the round trip, for any
/// value nested less deeply than [`DIRECT_DEPTH`] that holds no float; any
/// other takes the round trip (a deep one fails where serde_json's parser
/// does, 128 levels; a float comes back as that parser reads it).
/// Whether a plan's replacements are checked against its patterns
/// ([`crate::redact::check_replacements`]): always, but for a plan read
/// from the embedded default's table, whose plans the generator took from
/// the interpreter, which checked them (loading a pattern to search a
/// replacement costs more than the rest of a small request).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Replacements {
    Check,
    Checked,
}

fn to_json(value: &Value, rule: &str) -> Result<serde_json::Value> {
    if *value == Value::Undefined {
        return Ok(serde_json::Value::Null);
    }
    if nested_less_than(value, DIRECT_DEPTH) {
        let direct = serde_json::to_value(value)
            .map_err(|e| shape(rule, format!("the value of `{rule}` cannot be read: {e}")))?;
        // A float printed and parsed again may come back another float
        // (serde_json's parser rounds): those keep the round trip.
        if !holds_float(&direct) {
            return Ok(direct);
        }
    }
    let text = value
        .to_json_str()
        .map_err(|e| shape(rule, format!("the value of `{rule}` cannot be read: {e}")))?;
    serde_json::from_str(&text)
        .map_err(|e| shape(rule, format!("the value of `{rule}` cannot be read: {e}")))
}

/// Whether a JSON value holds a number that is not an integer.
fn holds_float(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::Number(n) => n.is_f64(),
        serde_json::Value::Array(items) => items.iter().any(holds_float),
        serde_json::Value::Object(map) => map.values().any(holds_float),
        _ => false,
    }
}

/// How deeply a value [`to_json`] builds directly may nest.
const DIRECT_DEPTH: usize = 64;

/// Whether `value` nests arrays, sets and objects less than `depth` deep
/// (a scalar: 0). Recurses at most `depth` levels.
fn nested_less_than(value: &Value, depth: usize) -> bool {
    let Some(inner) = depth.checked_sub(1) else {
        return false;
    };
    match value {
        Value::Array(items) => items.iter().all(|v| nested_less_than(v, inner)),
        Value::Set(items) => items.iter().all(|v| nested_less_than(v, inner)),
        Value::Object(fields) => fields
            .iter()
            .all(|(k, v)| nested_less_than(k, inner) && nested_less_than(v, inner)),
        _ => true,
    }
}

fn shape(rule: &str, message: String) -> Error {
    Error::PolicyEval {
        rule: rule.to_string(),
        message,
    }
}

/// What a value is, for messages that must not show it.
fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A set or array (sets arrive as arrays), or nothing.
fn collection(value: serde_json::Value, rule: &str) -> Result<Vec<serde_json::Value>> {
    match value {
        serde_json::Value::Null => Ok(Vec::new()),
        serde_json::Value::Array(items) => Ok(items),
        other => Err(shape(
            rule,
            format!("`{rule}` must be a set; it is {}", json_kind(&other)),
        )),
    }
}

fn redaction(item: &serde_json::Value) -> Result<Redaction> {
    let field = |name: &str| item.get(name).and_then(serde_json::Value::as_str);
    let Some(id) = field("id") else {
        return Err(shape(
            "redact",
            format!("every `redact` entry needs a string `id`; `{item}` has none"),
        ));
    };
    let Some(pattern) = field("pattern") else {
        return Err(shape(
            "redact",
            format!("the redaction `{id}` needs a string `pattern`"),
        ));
    };
    let replace = match item.get("replace") {
        None => format!("[{id}]"),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(_) => {
            return Err(shape(
                "redact",
                format!("the `replace` of `{id}` must be a string"),
            ))
        }
    };
    let flag = |name: &str| match item.get(name) {
        None => Ok(false),
        Some(serde_json::Value::Bool(b)) => Ok(*b),
        Some(_) => Err(shape(
            "redact",
            format!("the `{name}` of `{id}` must be true or false"),
        )),
    };
    let (luhn, mod97, assigned) = (flag("luhn")?, flag("mod97")?, flag("assigned")?);
    let regex = crate::redact::Pattern::new(pattern).map_err(|e| {
        shape(
            "redact",
            format!(
                "the pattern of `{id}` is not a valid regex: {}",
                one_line(&e.to_string())
            ),
        )
    })?;
    Ok(Redaction::new(id, regex, replace, luhn)
        .with_mod97(mod97)
        .with_assigned(assigned))
}

/// The longest reason a rule may give.
pub const MAX_REASON_BYTES: usize = 64;

/// Whether `reason` is a rule id: `[a-z0-9][a-z0-9._:-]{0,63}`. Reasons are
/// written into notices and the report, so a reason that could carry app
/// text (a value the policy read, the app title) is refused.
pub fn is_rule_id(reason: &str) -> bool {
    let bytes = reason.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= MAX_REASON_BYTES
        && matches!(bytes[0], b'a'..=b'z' | b'0'..=b'9')
        && bytes
            .iter()
            .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'.' | b'_' | b':' | b'-'))
}

/// The string constants of a Rego source (quoted or raw, outside comments)
/// that are rule ids: the reasons its rules may give. A constant with an
/// escape is not a rule id, so escapes need no decoding.
pub(crate) fn string_constants(source: &str) -> Vec<Box<str>> {
    let mut out = Vec::new();
    let mut chars = source.char_indices();
    while let Some((at, c)) = chars.next() {
        let end = match c {
            '#' => {
                chars.by_ref().find(|&(_, c)| c == '\n');
                continue;
            }
            '`' => chars.by_ref().find(|&(_, c)| c == '`'),
            '"' => {
                let mut escaped = false;
                chars.by_ref().find(|&(_, c)| {
                    let end = c == '"' && !escaped;
                    escaped = c == '\\' && !escaped;
                    end
                })
            }
            _ => continue,
        };
        let Some((end, _)) = end else { break };
        let text = &source[at + 1..end];
        if is_rule_id(text) {
            out.push(Box::from(text));
        }
    }
    out
}

/// What a value is, for messages that must not show it.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Set(_) => "a set",
        Value::Object(_) => "an object",
        Value::Undefined => "undefined",
    }
}

/// The members of a per-element set (sets may arrive as arrays); none
/// when it is undefined. Anything else is an error naming its kind.
fn members<'v>(value: &'v Value, rule: &str, of: &str) -> Result<Vec<&'v Value>> {
    match value {
        Value::Undefined => Ok(Vec::new()),
        Value::Set(set) => Ok(set.iter().collect()),
        Value::Array(items) => Ok(items.iter().collect()),
        other => Err(shape(
            rule,
            format!("`{rule}` must be a set of {of}; it is {}", kind(other)),
        )),
    }
}

/// A per-element rule's reasons. Errors name the rule, the kind and the
/// length of what is wrong, never its content: it may come from the input.
fn reasons(value: &Value, rule: &str, constants: &Constants) -> Result<Vec<Arc<str>>> {
    let items = members(value, rule, "reason strings")?;
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        match item {
            Value::String(s) if is_rule_id(s) && constants.contains(s) => {
                out.push(Arc::from(&**s))
            }
            Value::String(s) if is_rule_id(s) => {
                return Err(shape(
                    rule,
                    format!(
                        "`{rule}` holds a reason of {} bytes that is not a string constant of the policy; reasons are rule ids written into notices and the report, so each must be written in the policy as a constant (`{rule} contains \"secure-text\"`), never computed or read from the input",
                        s.len()
                    ),
                ))
            }
            Value::String(s) => return Err(not_a_rule_id(rule, s.len())),
            other => {
                return Err(shape(
                    rule,
                    format!(
                        "`{rule}` must hold reason strings; it holds {}",
                        kind(other)
                    ),
                ));
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn priority(value: &Value) -> Result<f64> {
    match value {
        Value::Undefined => Ok(0.0),
        Value::Number(n) => n
            .as_f64()
            .ok_or_else(|| shape("priority", "`priority` must be a number".to_string())),
        _ => Err(shape("priority", "`priority` must be a number".to_string())),
    }
}

/// A request input for tools: the given action, a probe app.
pub(crate) fn probe_request(action: &str, target: Option<&str>) -> RequestInput {
    RequestInput {
        action: Action {
            name: action.to_string(),
            target: target.map(str::to_string),
        },
        instance: "probe".to_string(),
        protocol: "0.2.0".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    /// [`to_json`]'s direct path gives what printing and parsing gave, for
    /// every kind of value a rule can give, and the round trip's error past
    /// serde_json's nesting limit.
    #[test]
    fn a_rule_value_reads_as_its_printed_json_parses() {
        let printed = |v: &Value| -> std::result::Result<serde_json::Value, String> {
            serde_json::from_str(&v.to_json_str().unwrap()).map_err(|e| e.to_string())
        };
        let mut values: Vec<Value> = [
            r#"null"#,
            r#"true"#,
            r#"0"#,
            r#"-7"#,
            r#"0.1"#,
            r#"1e300"#,
            r#"-2.5e-300"#,
            r#"18446744073709551615"#,
            r#"18446744073709551616"#,
            r#"123456789012345678901234567890123"#,
            r#"5.0"#,
            r#""x\u0000 é 東京 \ud83d\ude00 \"q\"""#,
            r#"[1, [2, {"b": [3.25, null], "a": "z"}], {}]"#,
            r#"{"tokens": 8000}"#,
            r#"{"id": "x", "pattern": "\\d+", "luhn": true}"#,
        ]
        .iter()
        .map(|json| Value::from_json_str(json).unwrap())
        .collect();
        // A set, an object with keys that are not strings (one printing as
        // a string key does), undefined inside.
        let mut set = Value::new_set();
        for v in [Value::from("b"), Value::from(2i64), Value::from("a")] {
            set.as_set_mut().unwrap().insert(v);
        }
        let mut object = Value::new_object();
        for (k, v) in [
            (Value::from(1i64), Value::from("one")),
            (Value::from("1"), Value::from("string one")),
            (Value::from(true), Value::Undefined),
            (set.clone(), Value::from(0.5f64)),
        ] {
            object.as_object_mut().unwrap().insert(k, v);
        }
        values.extend([set, object]);
        // Nested to either side of the direct path's bound and past the
        // parser's.
        for depth in [
            DIRECT_DEPTH - 1,
            DIRECT_DEPTH,
            DIRECT_DEPTH + 1,
            127,
            128,
            129,
            300,
        ] {
            let mut v = Value::from("leaf");
            for _ in 0..depth {
                v = Value::from(vec![v]);
            }
            values.push(v);
        }
        for value in &values {
            let direct = to_json(value, "budget").map_err(|e| e.to_string());
            match printed(value) {
                Ok(json) => assert_eq!(direct, Ok(json), "{value}"),
                Err(e) => assert!(direct.unwrap_err().contains(&e), "{e}"),
            }
        }
        assert!(values.iter().any(|v| printed(v).is_err()));
    }

    #[test]
    fn policy_is_send_and_sync() {
        assert_send_sync::<Policy>();
        assert_send_sync::<Arc<Policy>>();
    }

    #[test]
    fn hash_is_stable_and_order_free() {
        let a = Policy::from_sources(vec![
            ("a.rego".into(), "package ctxgate\nx := 1\n".into()),
            ("b.rego".into(), "package ctxgate\ny := 1\n".into()),
        ])
        .unwrap();
        let b = Policy::from_sources(vec![
            ("b.rego".into(), "package ctxgate\ny := 1\n".into()),
            ("a.rego".into(), "package ctxgate\nx := 1\n".into()),
        ])
        .unwrap();
        assert_eq!(a.hash(), b.hash());
        assert_eq!(a.hash().len(), 64);
    }

    #[test]
    fn the_default_hash_is_computed_right() {
        let files = [PolicyFile {
            name: DEFAULT_NAME.to_string(),
            source: DEFAULT_SOURCE.to_string(),
        }];
        assert_eq!(hash_sources(&files), DEFAULT_HASH);
        assert_eq!(hash_files(&files), DEFAULT_HASH);
        assert_eq!(
            HASH_TAG, b"ctxgate-policy-sources-v1\0",
            "build.rs's HASH_TAG too"
        );
    }

    #[test]
    fn hash_ignores_names_and_folders() {
        let source = "package ctxgate\nx := 1\n";
        let a = Policy::from_sources(vec![("a.rego".into(), source.into())]).unwrap();
        let b = Policy::from_sources(vec![("/elsewhere/b/c.rego".into(), source.into())]).unwrap();
        assert_eq!(a.hash(), b.hash());
        let c = Policy::from_sources(vec![("a.rego".into(), format!("{source}\n"))]).unwrap();
        assert_ne!(a.hash(), c.hash());
    }
}

#[cfg(test)]
mod reads_tests {
    use super::super::token::tokenize;
    use super::reads_of;

    /// A needle's name bound otherwise in another rule (`:=`, or read as a
    /// field of that name) keeps the whole subrole in the key, below the
    /// subset's own refusal of a body's `:=` (what the key reads does not
    /// lean on it).
    #[test]
    fn a_needle_named_anywhere_else_keeps_the_whole_subrole() {
        let exact = "some v in {\"b\"}; endswith(input.element.subrole, v)";
        for (other, tested) in [
            ("v := \"zz\"; contains(input.element.subrole, v)", false),
            (
                "v := input.element.role; contains(input.element.subrole, v)",
                false,
            ),
            (
                "contains(input.element.subrole, \"q\"); input.element.v",
                false,
            ),
            (exact, true),
        ] {
            let source = format!(
                "package ctxgate\n\nmask contains \"m\" if {{ some v in {{\"a\"}}; contains(input.element.subrole, v) }}\n\ndeny contains \"d\" if {{ {other} }}\n"
            );
            let rules = ["mask", "deny"].map(String::from).into_iter().collect();
            let reads = reads_of(&[tokenize(&source)], &rules);
            assert_eq!(reads.subrole.is_some(), tested, "{other}");
        }
    }
}
