//! Loading a policy set into regorus and evaluating it: per request (the
//! plan) and per distinct element projection (the decision), with the
//! secure-text floor and the caches. Only the small projection of an
//! element is ever turned into a regorus value, never the tree.
//!
//! Cost model (see MEASURED.md): one regorus `eval_rule` per per-element
//! rule the policy defines (at most six: deny, mask, keep, prune,
//! priority, strip; `strip` only for an element with attributes), once per
//! distinct projection per request, then never again
//! for the same request input while the decision stays in the cache.
//! Five separate `eval_rule` calls measured faster (55 µs) than one rule
//! gathering the five (66 µs) or one query (125 µs).

use std::cell::Cell;
use std::collections::hash_map::RandomState;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::hash::BuildHasher;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use regorus::utils::limits::ExecutionTimerConfig;
use regorus::{Engine, Value};
use sha2::{Digest, Sha256};

use super::projection::{Decider, ElementInput, Floor, ProjectionKey};
use super::recursion::RuleHead;
use super::source::{eval_error, is_time_limit, policy_error, PolicyFile};
use super::{Action, Budget, Decision, Redaction, RequestInput, RequestPlan, Scope};
use crate::deadline::{Deadline, Stage};
use crate::error::{Error, Result};

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
pub(crate) const DEFAULT_NAME: &str = "policies/default.rego";
pub(crate) const DEFAULT_SOURCE: &str = include_str!("../../policies/default.rego");
/// [`hash_files`] of the embedded default, computed by build.rs.
pub(crate) const DEFAULT_HASH: &str = include!(concat!(env!("OUT_DIR"), "/default_hash.rs"));
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
pub(crate) const DEFAULT_TEST_NAME: &str = "policies/default_test.rego";
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
    /// The prepared engine; each evaluator clones it (~0.5 µs).
    engine: Mutex<Engine>,
    /// Rule names defined in `package ctxgate`.
    rules: BTreeSet<String>,
    plans: Mutex<HashMap<RequestInput, Arc<RequestPlan>>>,
    decisions: DecisionCache,
    /// Every string constant of the policy files that is a rule id: the
    /// only reasons a rule may give.
    constants: HashSet<Box<str>>,
    /// How long one evaluation may run ([`Policy::with_time_limit`]).
    time_limit: Duration,
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
        // The embedded default's recursion and RVM checks have a result
        // fixed when ctxgate is built: a test runs them
        // (`policy::load::tests`), a load does not.
        let checked = !matches!(files.as_slice(), [only] if only.source == DEFAULT_SOURCE);
        let (engine, rules, heads) = compile_checked(&files, checked)?;
        tracing::debug!(files = files.len(), rules = rules.len(), "policy compiled");
        let constants = files
            .iter()
            .flat_map(|f| string_constants(&f.source))
            .collect();
        let policy = Policy {
            hash: hash_files(&files),
            files,
            engine: Mutex::new(engine),
            time_limit: DEFAULT_TIME_LIMIT,
            rules,
            plans: Mutex::default(),
            decisions: DecisionCache::default(),
            constants,
        };
        Ok((policy, heads))
    }

    /// Sets how long one regorus evaluation may run (default 1 s).
    pub fn with_time_limit(mut self, limit: Duration) -> Policy {
        let engine = self.engine.get_mut().unwrap_or_else(|e| e.into_inner());
        engine.set_execution_timer_config(timer(limit));
        self.time_limit = limit;
        self
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
        let mut engine = lock(&self.engine).clone();
        engine.set_input(Value::from(request_json(request)));
        let plan = Arc::new(self.evaluate_plan(&mut engine, timed_out)?);
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
            Some(title) => plan
                .title_patterns
                .iter()
                .filter(|(_, regex)| regex.is_match(title))
                .map(|(name, _)| name.clone())
                .collect(),
            None => Vec::new(),
        };
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
            memo: Table::new(),
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

    fn evaluate_plan(&self, engine: &mut Engine, timed_out: &Cell<bool>) -> Result<RequestPlan> {
        let mut eval = |rule: &str| -> Result<serde_json::Value> {
            if !self.defines(rule) {
                return Ok(serde_json::Value::Null);
            }
            let value = eval_silently(engine, rule, timed_out)?;
            to_json(&value, rule)
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
        crate::redact::check_replacements(&redact)?;
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
    memo: Table,
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
        enforce(element.subrole, self.policy_decision(element)?)
    }

    /// The policy's own decision, before the floor: from this request's
    /// memo (no lock), else the shared cache (one shard's lock), else
    /// evaluated.
    fn policy_decision(&mut self, element: &ElementInput<'_>) -> Result<Arc<Decision>> {
        let key = element.key();
        if let Some(found) = self.memo.get(&key) {
            return Ok(found.clone());
        }
        if let Some(found) = self.policy.decisions.get(&self.request, &key) {
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

    fn evaluate(&mut self, element: &ElementInput<'_>) -> Result<Decision> {
        let input = element.rego_input(&self.request_value);
        let policy = self.policy;
        let deadline = self.deadline;
        let engine = self
            .engine
            .get_or_insert_with(|| lock(&policy.engine).clone());
        // No evaluation may run past what is left of the request.
        if let Some(deadline) = &deadline {
            let left = deadline.remaining().max(Duration::from_millis(1));
            engine.set_execution_timer_config(timer(left.min(policy.time_limit)));
        }
        engine.set_input(input);
        let mut decision = Decision::default();
        for rule in ELEMENT_RULES {
            // `strip` removes attributes the element has: with none (ctxgate's
            // notices aside, which it may not strip) there is nothing to ask.
            if !policy.defines(rule) || (rule == "strip" && element.attribute_names.is_empty()) {
                continue;
            }
            self.evaluations += 1;
            let value = match eval_silently(engine, rule, &self.timed_out) {
                Ok(value) => value,
                // Stopped by the request's deadline rather than its own limit.
                Err(err) => match &deadline {
                    Some(deadline) => {
                        deadline.check(Stage::Decide)?;
                        return Err(err);
                    }
                    None => return Err(err),
                },
            };
            match rule {
                "priority" => decision.priority = priority(&value)?,
                "deny" => decision.deny = reasons(&value, rule, &policy.constants)?,
                "mask" => decision.mask = reasons(&value, rule, &policy.constants)?,
                "keep" => decision.keep = reasons(&value, rule, &policy.constants)?,
                "strip" => decision.strip = strip_names(&value)?,
                _ => decision.prune = reasons(&value, rule, &policy.constants)?,
            }
        }
        Ok(decision)
    }
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
pub(crate) fn enforce(subrole: Option<&str>, mut decision: Arc<Decision>) -> Result<Arc<Decision>> {
    check_reasons(&decision)?;
    let floor = Floor::SecureText;
    if Floor::applies(subrole) && !decision.mask.iter().any(|r| &**r == floor.reason()) {
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
    enforce(element.subrole, decider.decide(element)?)
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

/// Whether an attribute name is in ctxgate's reserved `ctxgate:` namespace.
pub(crate) fn is_reserved(name: &str) -> bool {
    name.starts_with(crate::render::notice::PREFIX)
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
/// returning every rule definition's head. `rvm` also compiles for the
/// RVM, which reports unknown functions that the interpreter would only
/// report when the rule runs.
pub(crate) fn compile_with_heads(
    files: &[PolicyFile],
    rvm: bool,
) -> Result<(Engine, BTreeSet<String>, Vec<RuleHead>)> {
    compile_inner(files, rvm, true)
}

/// [`compile_with_heads`] with the RVM, and with the recursion and RVM
/// checks only when `checked`.
fn compile_checked(
    files: &[PolicyFile],
    checked: bool,
) -> Result<(Engine, BTreeSet<String>, Vec<RuleHead>)> {
    compile_inner(files, checked, checked)
}

fn compile_inner(
    files: &[PolicyFile],
    rvm: bool,
    recursion: bool,
) -> Result<(Engine, BTreeSet<String>, Vec<RuleHead>)> {
    let mut engine = Engine::new();
    engine.set_execution_timer_config(timer(DEFAULT_TIME_LIMIT));
    // `print()` may show a declared attribute value or the app title:
    // gathered, never written to stderr (see `eval_silently`).
    engine.set_gather_prints(true);
    for file in files {
        file.check_bracket_depth()?;
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
    if rvm {
        let entries: Vec<String> = rules.iter().map(|r| format!("data.ctxgate.{r}")).collect();
        let entries: Vec<&str> = entries.iter().map(String::as_str).collect();
        if let Err(e) =
            regorus::languages::rego::compiler::Compiler::compile_from_policy(&compiled, &entries)
        {
            // The RVM lacks some of the language (`with`, `walk`): only its
            // report of an unknown function is a finding about the policy.
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

fn to_json(value: &Value, rule: &str) -> Result<serde_json::Value> {
    if *value == Value::Undefined {
        return Ok(serde_json::Value::Null);
    }
    let text = value
        .to_json_str()
        .map_err(|e| shape(rule, format!("the value of `{rule}` cannot be read: {e}")))?;
    serde_json::from_str(&text)
        .map_err(|e| shape(rule, format!("the value of `{rule}` cannot be read: {e}")))
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
    let luhn = match item.get("luhn") {
        None => false,
        Some(serde_json::Value::Bool(b)) => *b,
        Some(_) => {
            return Err(shape(
                "redact",
                format!("the `luhn` of `{id}` must be true or false"),
            ))
        }
    };
    let regex = crate::redact::Pattern::new(pattern).map_err(|e| {
        shape(
            "redact",
            format!(
                "the pattern of `{id}` is not a valid regex: {}",
                one_line(&e.to_string())
            ),
        )
    })?;
    Ok(Redaction::new(id, regex, replace, luhn))
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
fn string_constants(source: &str) -> Vec<Box<str>> {
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
fn reasons(value: &Value, rule: &str, constants: &HashSet<Box<str>>) -> Result<Vec<Arc<str>>> {
    let items = members(value, rule, "reason strings")?;
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        match item {
            Value::String(s) if is_rule_id(s) && constants.contains(&**s) => {
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
