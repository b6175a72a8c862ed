//! `ctxgate policy`: check, test, document and preview policies. PATH is a
//! `.rego` file, a directory of them, or `default` (the embedded default
//! policy and, for `test`, its tests); several PATHs are layers, as with
//! `trim --policy`; without PATH, the embedded default.

use std::fmt::Write;

use crate::policy::{self as lib, PolicyFile, TestOutcome};
use clap::{Args, Subcommand};

use super::{write_stdout, Failure, Outcome};

#[derive(Args)]
pub struct PolicyArgs {
    #[command(subcommand)]
    command: PolicyCommand,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum TestFormat {
    Text,
    Json,
}

#[derive(Subcommand)]
enum PolicyCommand {
    /// Parse, compile and lint a policy; run it once on probe elements.
    Check {
        /// `.rego` files, directories or `default`, as layers (default: the embedded default policy).
        paths: Vec<String>,
    },
    /// Print a policy's Rego, each file under a header with its name, and the
    /// set's hash (`policy show default`: the embedded default policy).
    Show {
        /// `.rego` files, directories or `default`, as layers (default: the embedded default policy).
        paths: Vec<String>,
    },
    /// Run every `test_*` rule of the `*_test.rego` files.
    Test {
        /// `.rego` files, directories or `default`, as layers (default: the embedded default policy and its tests).
        paths: Vec<String>,
        /// Also each test's place and how long it ran.
        #[arg(short, long)]
        verbose: bool,
        /// Only the tests whose name matches this regex.
        #[arg(long, value_name = "REGEX")]
        run: Option<String>,
        /// Report which lines of the policy files the tests evaluated: a
        /// percentage per file and the lines no test reached.
        #[arg(long)]
        coverage: bool,
        /// `text` or `json` (one object: tests, totals, coverage).
        #[arg(long, value_enum, default_value_t = TestFormat::Text)]
        format: TestFormat,
        /// Run the tests again whenever a policy or test file under the
        /// PATHs changes, until interrupted (each run's output in turn).
        #[arg(long)]
        watch: bool,
    },
    /// Markdown for a privacy reviewer: rules, floor, patterns, decisions.
    Doc {
        /// `.rego` files, directories or `default`, as layers (default: the embedded default policy).
        paths: Vec<String>,
        /// Also decide the elements of these answers, per action (ids, roles, rules; no content).
        #[arg(long = "tree", value_name = "FILE")]
        trees: Vec<std::path::PathBuf>,
    },
    /// What changes from OLD to NEW: per request and on every input their
    /// rules can tell apart, and on real trees per element (ids, roles and
    /// rules, never content). Exit 1 when NEW sends anything OLD withheld
    /// or a rule cannot be decided.
    Diff {
        /// The old policy: a `.rego` file, a directory or `default` (one layer; `--old` for more).
        old: Option<String>,
        /// The new policy (one layer; `--new` for more).
        new: Option<String>,
        /// A layer of the old policy, in order (instead of OLD).
        #[arg(long = "old", value_name = "PATH", conflicts_with = "old")]
        old_layers: Vec<String>,
        /// A layer of the new policy, in order (instead of NEW).
        #[arg(long = "new", value_name = "PATH", conflicts_with = "new")]
        new_layers: Vec<String>,
        /// Answers to trim under both, for every action.
        #[arg(long = "tree", value_name = "FILE")]
        trees: Vec<std::path::PathBuf>,
        /// `text` or `json` (one object: changes, undecided, explored).
        #[arg(long, value_enum, default_value_t = TestFormat::Text)]
        format: TestFormat,
    },
    /// JSON: the per-request results for an action, and decisions on probe elements.
    Plan {
        /// `.rego` files, directories or `default`, as layers (default: the embedded default policy).
        paths: Vec<String>,
        /// The action (`selection`, `focus`, `window`, `app`, or a host's own word).
        #[arg(long, value_name = "NAME")]
        action: String,
        /// The element id the action names.
        #[arg(long, value_name = "ID")]
        target: Option<String>,
        /// Also decide the elements of these answers (ids, roles, rules; no content).
        #[arg(long = "tree", value_name = "FILE")]
        trees: Vec<std::path::PathBuf>,
    },
}

pub fn run(args: PolicyArgs) -> Result<Outcome, Failure> {
    match args.command {
        PolicyCommand::Check { paths } => check(&paths),
        PolicyCommand::Show { paths } => show(&paths),
        PolicyCommand::Test {
            paths,
            verbose,
            run,
            coverage,
            format,
            watch,
        } => {
            let options = TestArgs {
                verbose,
                run: run.as_deref(),
                coverage,
                format,
            };
            if watch {
                test_watching(&paths, &options)
            } else {
                test(&paths, &options)
            }
        }
        PolicyCommand::Doc { paths, trees } => doc(&paths, &trees),
        PolicyCommand::Diff {
            old,
            new,
            old_layers,
            new_layers,
            trees,
            format,
        } => {
            let side = |one: Option<String>, layers: Vec<String>, name: &str| {
                match (one, layers) {
                (Some(one), _) => Ok(vec![one]),
                (None, layers) if !layers.is_empty() => Ok(layers),
                (None, _) => Err(Failure::usage(format!(
                    "`policy diff` needs the {name} policy: `ctxgate policy diff OLD NEW`, or each layer as `--{name} PATH`"
                ))),
            }
            };
            let old = side(old, old_layers, "old")?;
            let new = side(new, new_layers, "new")?;
            diff(&old, &new, &trees, format)
        }
        PolicyCommand::Plan {
            paths,
            action,
            target,
            trees,
        } => plan(&paths, &action, target.as_deref(), &trees),
    }
}

/// Each layer's files; no PATH is the embedded default.
fn layers(paths: &[String], tests: bool) -> Result<Vec<Vec<PolicyFile>>, Failure> {
    if paths.is_empty() {
        return Ok(vec![lib::default_files(tests)]);
    }
    paths
        .iter()
        .map(|p| Ok(lib::layer_files(p, tests)?))
        .collect()
}

fn load(paths: &[String]) -> Result<crate::policy::Policy, Failure> {
    if paths.is_empty() {
        return Ok(lib::Policy::embedded_default()?);
    }
    layered(paths)
}

/// The gate for `--policy` values: none is the embedded default; each
/// value is a layer ([`lib::layer_files`]).
pub(super) fn gate(layers: &[String]) -> Result<crate::Gate, Failure> {
    if layers.is_empty() {
        return Ok(crate::Gate::embedded_default()?);
    }
    Ok(crate::Gate::new(layered(layers)?))
}

/// The policy of layers given as `--policy` values or paths.
fn layered(layers: &[String]) -> Result<lib::Policy, Failure> {
    Ok(lib::Policy::load(layers)?)
}

/// The policy's files as loaded, each under `# ==> name <==`, after a line
/// with the set's hash.
fn show(paths: &[String]) -> Result<Outcome, Failure> {
    let policy = load(paths)?;
    let mut out = format!("# policy hash: {}\n", policy.hash());
    for file in policy.files() {
        out += &format!("\n# ==> {} <==\n", file.name);
        out += &file.source;
        if !file.source.ends_with('\n') {
            out.push('\n');
        }
    }
    emit(&out, Outcome::Fine)
}

fn emit(text: &str, outcome: Outcome) -> Result<Outcome, Failure> {
    write_stdout(text.as_bytes())?;
    Ok(outcome)
}

fn check(paths: &[String]) -> Result<Outcome, Failure> {
    let layers = layers(paths, true)?;
    let findings = lib::check_layers(&layers);
    let files = layers.concat();
    let mut out = String::new();
    for finding in &findings {
        let _ = writeln!(out, "{finding}");
    }
    let errors = findings.iter().filter(|f| f.is_error()).count();
    let warnings = findings.len() - errors;
    let _ = writeln!(
        out,
        "{} file{}: {errors} error{}, {warnings} warning{}",
        files.len(),
        plural(files.len()),
        plural(errors),
        plural(warnings)
    );
    emit(
        &out,
        if errors > 0 {
            Outcome::Findings(None)
        } else {
            Outcome::Fine
        },
    )
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// How `policy test` runs and reports.
struct TestArgs<'a> {
    verbose: bool,
    run: Option<&'a str>,
    coverage: bool,
    format: TestFormat,
}

/// How long the files must be quiet before a change runs the tests again:
/// an editor's save is a burst of events (write, rename, chmod).
const WATCH_SETTLE: std::time::Duration = std::time::Duration::from_millis(50);

/// `policy test --watch`: runs the tests, then again after every change to
/// the files under `paths` (the watcher `serve --watch` uses), until
/// interrupted. A run that fails (a file that does not parse) is reported
/// like any other and the watch goes on; what ends it is a path that cannot
/// be watched.
fn test_watching(paths: &[String], options: &TestArgs<'_>) -> Result<Outcome, Failure> {
    let watched: Vec<std::path::PathBuf> = paths
        .iter()
        .filter(|p| *p != lib::DEFAULT_LAYER)
        .map(std::path::PathBuf::from)
        .collect();
    if watched.is_empty() {
        return Err(Failure::usage(
            "`--watch` needs a PATH that can change: the embedded default policy cannot; give the files or folders you edit (`ctxgate policy test --watch policies/`)",
        ));
    }
    if let Some(run) = options.run {
        // A bad regex is the same mistake on every run: say it once.
        regex::Regex::new(run)
            .map_err(|e| Failure::usage(format!("`--run` is not a valid regex: {e}")))?;
    }
    let changes = super::watch::Changes::watch(&watched, WATCH_SETTLE)?;
    loop {
        match test(paths, options) {
            Ok(Outcome::Findings(Some(message))) => {
                eprintln!("error: {}", crate::render::visible(&message))
            }
            Ok(_) => {}
            Err(failure) => eprintln!("error: {}", crate::render::visible(&failure.message)),
        }
        eprintln!(
            "watching {} path{} for changes (Ctrl-C to stop)",
            changes.watched(),
            plural(changes.watched())
        );
        if !changes.wait() {
            return Err(Failure::io("the file watcher stopped"));
        }
        eprintln!("a file changed: running the tests again");
    }
}

fn test(paths: &[String], options: &TestArgs<'_>) -> Result<Outcome, Failure> {
    let TestArgs {
        verbose,
        run,
        coverage,
        format,
    } = *options;
    let files = layers(paths, true)?.concat();
    let filtered = run.is_some();
    let run = run
        .map(|r| {
            regex::Regex::new(r)
                .map_err(|e| Failure::usage(format!("`--run` is not a valid regex: {e}")))
        })
        .transpose()?;
    let outcome_of = |results: &[lib::TestResult]| {
        let failed = results
            .iter()
            .filter(|r| r.outcome != TestOutcome::Pass)
            .count();
        if results.is_empty() {
            Outcome::Findings(Some(if filtered {
                "no tests ran: no `test_*` rule of a `*_test.rego` file matches `--run`".to_string()
            } else {
                "no tests ran: no `test_*` rule in a `*_test.rego` file".to_string()
            }))
        } else if failed > 0 {
            Outcome::Findings(None)
        } else {
            Outcome::Fine
        }
    };
    let report = lib::run_tests_with(&files, &lib::TestOptions { run })?;
    let results = &report.results;
    let passed = results
        .iter()
        .filter(|r| r.outcome == TestOutcome::Pass)
        .count();
    let failed = results.len() - passed;
    if format == TestFormat::Json {
        let tests: Vec<serde_json::Value> = results
            .iter()
            .map(|r| {
                let (outcome, message) = match &r.outcome {
                    TestOutcome::Pass => ("pass", None),
                    TestOutcome::Fail => ("fail", None),
                    TestOutcome::Error(m) => ("error", Some(m.clone())),
                };
                let mut test = serde_json::json!({
                    "name": r.name,
                    "file": r.file,
                    "line": r.line,
                    "outcome": outcome,
                    "duration_ms": r.duration.as_secs_f64() * 1000.0,
                    "prints": r.prints,
                });
                if let Some(message) = message {
                    test["message"] = message.into();
                }
                if let Some((line, expression)) = &r.stopped_at {
                    test["stopped_at"] =
                        serde_json::json!({ "line": line, "expression": expression });
                }
                test
            })
            .collect();
        let mut json = serde_json::json!({ "tests": tests, "passed": passed, "failed": failed });
        if coverage {
            json["coverage"] = coverage_json(&report.coverage);
        }
        let mut text = serde_json::to_string_pretty(&json).expect("JSON serializes");
        text.push('\n');
        return emit(&text, outcome_of(results));
    }
    let mut out = String::new();
    for result in results {
        let place = if verbose {
            format!(
                " ({}:{}, {:.1} ms)",
                result.file,
                result.line,
                result.duration.as_secs_f64() * 1000.0
            )
        } else {
            String::new()
        };
        match &result.outcome {
            TestOutcome::Pass => {
                let _ = writeln!(out, "PASS {}{place}", result.name);
            }
            TestOutcome::Fail => {
                let _ = write!(out, "FAIL {}: {}:{}", result.name, result.file, result.line);
                if let Some((line, expression)) = &result.stopped_at {
                    let _ = write!(
                        out,
                        ": false at {}:{line}: `{}`",
                        result.file,
                        one_line(expression)
                    );
                }
                let _ = writeln!(out);
            }
            TestOutcome::Error(message) => {
                let _ = writeln!(out, "ERROR {}: {message}", result.name);
            }
        }
        for print in &result.prints {
            let _ = writeln!(out, "  print {}", one_line(print));
        }
    }
    let _ = writeln!(out, "{passed} passed, {failed} failed");
    if coverage {
        for file in &report.coverage {
            let _ = writeln!(
                out,
                "coverage {}: {:.1}% ({} of {} lines)",
                file.file,
                file.percent(),
                file.covered.len(),
                file.covered.len() + file.not_covered.len()
            );
            if !file.not_covered.is_empty() {
                let _ = writeln!(out, "  not covered: {}", ranges(&file.not_covered));
            }
        }
        let covered: usize = report.coverage.iter().map(|f| f.covered.len()).sum();
        let missed: usize = report.coverage.iter().map(|f| f.not_covered.len()).sum();
        let _ = writeln!(out, "coverage: {:.1}%", lib::percent(covered, missed));
    }
    emit(&out, outcome_of(results))
}

fn coverage_json(files: &[lib::FileCoverage]) -> serde_json::Value {
    let covered: usize = files.iter().map(|f| f.covered.len()).sum();
    let missed: usize = files.iter().map(|f| f.not_covered.len()).sum();
    serde_json::json!({
        "percent": lib::percent(covered, missed),
        "files": files.iter().map(|f| serde_json::json!({
            "file": f.file,
            "percent": f.percent(),
            "covered": f.covered,
            "not_covered": f.not_covered,
        })).collect::<Vec<_>>(),
    })
}

/// `3, 5-7, 10`.
fn ranges(lines: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let mut j = i;
        while j + 1 < lines.len() && lines[j + 1] == lines[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            lines[i].to_string()
        } else {
            format!("{}-{}", lines[i], lines[j])
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// A printed value on one line: controls (newlines, bidi overrides, …)
/// escaped, so that a print cannot pass for a test's result line.
fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control()
            || matches!(c, '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

fn doc(paths: &[String], trees: &[std::path::PathBuf]) -> Result<Outcome, Failure> {
    let policy = load(paths)?;
    let mut out = lib::doc_markdown(&policy)?;
    let gate = crate::Gate::new(policy);
    for tree in trees {
        let _ = writeln!(out, "\n## On `{}`\n", tree.display());
        let _ = writeln!(out, "Every element not sent whole, per action: its id, role and subrole, the outcome and the deciding rule, and the attributes `strip` removed (by name; no title, content or value).\n");
        let _ = writeln!(out, "| action | element | role | outcome | rule |");
        let _ = writeln!(out, "|---|---|---|---|---|");
        for (action, rows) in tree_decisions(&gate, tree, None)? {
            for row in rows {
                let stripped: Vec<&str> = row["stripped"]
                    .as_array()
                    .map(|names| names.iter().filter_map(|n| n.as_str()).collect())
                    .unwrap_or_default();
                if row["outcome"] == "sent" && stripped.is_empty() {
                    continue;
                }
                let role = match row["subrole"].as_str() {
                    Some(s) => format!("{}, subrole {}", row["role"].as_str().unwrap_or(""), s),
                    None => row["role"].as_str().unwrap_or("").to_string(),
                };
                let _ = writeln!(
                    out,
                    "| {action} | `{}` | {} | {} | {} |",
                    row["id"].as_str().unwrap_or("").replace('|', "\\|"),
                    role.replace('|', "\\|"),
                    row["outcome"].as_str().unwrap_or(""),
                    format!(
                        "{}{}",
                        row["rule"].as_str().unwrap_or(""),
                        strips(&stripped)
                    )
                    .trim_start_matches(", ")
                    .replace('|', "\\|")
                );
            }
        }
    }
    emit(&out, Outcome::Fine)
}

/// Per action (or the one given), every element of the answer at `tree`
/// as `{id, role, subrole, outcome, rule, inherited}`: the report's
/// entries with the role and subrole, never content.
fn tree_decisions(
    gate: &crate::Gate,
    tree: &std::path::Path,
    only: Option<(&str, Option<&str>)>,
) -> Result<Vec<(String, Vec<serde_json::Value>)>, Failure> {
    let bytes = super::read_input(Some(tree))?;
    let roles = serde_json::from_slice::<serde_json::Value>(&bytes)
        .map(|v| roles_by_id(&v))
        .unwrap_or_default();
    let actions: Vec<(&str, Option<&str>)> = match only {
        Some(one) => vec![one],
        None => lib::ACTIONS.iter().map(|a| (*a, None)).collect(),
    };
    let mut out = Vec::new();
    for (action, target) in actions {
        let mut request = crate::Request::new(action);
        if let Some(target) = target {
            request = request.target(target.to_string());
        }
        let trimmed = gate.trim_bytes(&bytes, &request)?;
        let rows = trimmed
            .report
            .decisions
            .iter()
            .map(|d| {
                let (role, subrole) = roles.get(&*d.id).cloned().unwrap_or_default();
                serde_json::json!({
                    "id": crate::render::visible(&d.id),
                    "role": role,
                    "subrole": subrole,
                    "outcome": word(d.outcome),
                    "rule": d.rule.as_deref(),
                    "inherited": d.inherited,
                    "stripped": d.stripped.iter().map(|n| crate::render::visible(n)).collect::<Vec<_>>(),
                })
            })
            .collect();
        out.push((action.to_string(), rows));
    }
    Ok(out)
}

fn plan(
    paths: &[String],
    action: &str,
    target: Option<&str>,
    trees: &[std::path::PathBuf],
) -> Result<Outcome, Failure> {
    let policy = load(paths)?;
    let mut json = lib::plan_json(&policy, action, target)?;
    if !trees.is_empty() {
        let gate = crate::Gate::new(policy);
        let mut out = Vec::new();
        for tree in trees {
            let (_, rows) = tree_decisions(&gate, tree, Some((action, target)))?
                .pop()
                .expect("one action");
            out.push(serde_json::json!({ "tree": tree.display().to_string(), "elements": rows }));
        }
        json["trees"] = out.into();
    }
    let mut text = serde_json::to_string_pretty(&json).expect("JSON serializes");
    text.push('\n');
    emit(&text, Outcome::Fine)
}

/// `, strips author, x` for the attributes a `strip` rule removed (names
/// with controls escaped), or nothing.
fn strips<S: AsRef<str>>(names: &[S]) -> String {
    if names.is_empty() {
        return String::new();
    }
    let names: Vec<String> = names
        .iter()
        .map(|n| crate::render::visible(n.as_ref()).into_owned())
        .collect();
    format!(", strips {}", names.join(", "))
}

/// How much of an element an outcome sends.
fn sent_level(outcome: crate::trim::Outcome) -> u8 {
    use crate::trim::Outcome as O;
    match outcome {
        O::Sent => 3,
        O::Cut | O::Skeleton => 2,
        O::Masked => 1,
        _ => 0,
    }
}

fn word(value: impl serde::Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// Each element's id with its role and subrole, from the answer's JSON
/// (walked with a stack, not recursion).
fn roles_by_id(
    answer: &serde_json::Value,
) -> std::collections::HashMap<String, (String, Option<String>)> {
    let mut out = std::collections::HashMap::new();
    let mut stack = vec![&answer["root"]];
    while let Some(e) = stack.pop() {
        if let Some(id) = e["id"].as_str() {
            out.insert(
                id.to_string(),
                (
                    e["role"].as_str().unwrap_or("").to_string(),
                    e["subrole"].as_str().map(str::to_string),
                ),
            );
        }
        if let Some(children) = e["children"].as_array() {
            stack.extend(children.iter().rev());
        }
    }
    out
}

fn diff(
    old: &[String],
    new: &[String],
    trees: &[std::path::PathBuf],
    format: TestFormat,
) -> Result<Outcome, Failure> {
    let old_policy = layered(old)?;
    let new_policy = layered(new)?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "policy diff: {} ({}) -> {} ({})",
        old.join(" + "),
        &old_policy.hash()[..12],
        new.join(" + "),
        &new_policy.hash()[..12]
    );
    let report = lib::diff_policies(&old_policy, &new_policy)?;
    let changes = &report.changes;
    let mut more = report.sends_more();
    let mut count = changes.len();
    let flag = |m: bool| if m { " (sends more)" } else { "" };
    for c in changes {
        match &c.element {
            Some(element) => {
                let _ = writeln!(
                    out,
                    "{}: {element}: {} -> {}{}",
                    c.action,
                    c.old,
                    c.new,
                    flag(c.sends_more)
                );
            }
            None if matches!(c.kind, "redact" | "title_patterns") => {
                let _ = writeln!(
                    out,
                    "{}: {}: {}; {}{}",
                    c.action,
                    c.kind,
                    c.old,
                    c.new,
                    flag(c.sends_more)
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "{}: {}: {} -> {}{}",
                    c.action,
                    c.kind,
                    if c.old.is_empty() { "none" } else { &c.old },
                    if c.new.is_empty() { "none" } else { &c.new },
                    flag(c.sends_more)
                );
            }
        }
    }
    let mut tree_changes = Vec::new();
    let (old_policy_hash, new_policy_hash) =
        (old_policy.hash().to_string(), new_policy.hash().to_string());
    let old_gate = crate::Gate::new(old_policy);
    let new_gate = crate::Gate::new(new_policy);
    for tree in trees {
        let bytes = super::read_input(Some(tree))?;
        let roles = serde_json::from_slice::<serde_json::Value>(&bytes)
            .map(|v| roles_by_id(&v))
            .unwrap_or_default();
        for action in lib::ACTIONS {
            let request = crate::Request::new(action);
            let a = old_gate.trim_bytes(&bytes, &request)?;
            let b = new_gate.trim_bytes(&bytes, &request)?;
            for (x, y) in a.report.decisions.iter().zip(&b.report.decisions) {
                if x.outcome == y.outcome && x.rule == y.rule && x.stripped == y.stripped {
                    continue;
                }
                count += 1;
                // An attribute OLD stripped that NEW sends with the element.
                let unstripped = x.stripped.iter().any(|n| !y.stripped.contains(n))
                    && matches!(
                        y.outcome,
                        crate::trim::Outcome::Sent | crate::trim::Outcome::Cut
                    );
                let sends_more = sent_level(y.outcome) > sent_level(x.outcome) || unstripped;
                more |= sends_more;
                let (role, subrole) = roles.get(&*x.id).cloned().unwrap_or_default();
                let subrole = subrole
                    .map(|s| format!(", subrole {s}"))
                    .unwrap_or_default();
                let by = |d: &crate::ElementReport| {
                    let rule = d.rule.as_deref().map(|r| format!(" ({r})"));
                    format!("{}{}", rule.unwrap_or_default(), strips(&d.stripped))
                };
                tree_changes.push(serde_json::json!({
                    "tree": tree.display().to_string(),
                    "action": action,
                    "id": crate::render::visible(&x.id),
                    "role": role,
                    "subrole": subrole.trim_start_matches(", subrole "),
                    "old": format!("{}{}", word(x.outcome), by(x)),
                    "new": format!("{}{}", word(y.outcome), by(y)),
                    "sends_more": sends_more,
                }));
                let _ = writeln!(
                    out,
                    "{}, {action}: `{}` {role}{subrole}: {}{} -> {}{}{}",
                    tree.display(),
                    crate::render::visible(&x.id),
                    word(x.outcome),
                    by(x),
                    word(y.outcome),
                    by(y),
                    flag(sends_more)
                );
            }
        }
    }
    let e = &report.explored;
    if report.same_sources {
        let _ = writeln!(out, "explored: nothing: both sides have the same sources");
    } else {
        let n = |count: usize, word: &str| format!("{count} {word}{}", plural(count));
        let _ = writeln!(
            out,
            "explored: {}, {}, {}, {}; {}, {}, {}, {}, {}, {}; {} inputs",
            n(e.actions, "action"),
            n(e.instances, "instance"),
            n(e.targets, "target"),
            n(e.app_title_sets, "app title match set"),
            n(e.roles, "role"),
            n(e.subroles, "subrole"),
            n(e.state_combinations, "state combination"),
            n(e.attribute_values, "attribute set"),
            n(e.title_match_sets, "title match set"),
            n(e.ancestor_shapes, "ancestor shape"),
            e.inputs
        );
    }
    let undecided = report.undecided.len();
    if undecided > 0 {
        let _ = writeln!(out, "undecided: {undecided} rule{}", plural(undecided));
        for u in &report.undecided {
            let rule = if u.rule.is_empty() {
                String::new()
            } else {
                format!(" `{}`", u.rule)
            };
            let _ = writeln!(out, "  {}{rule}: {}", u.place, u.why);
        }
    }
    let _ = writeln!(
        out,
        "{count} change{}; NEW sends more than OLD: {}{}",
        plural(count),
        if more { "yes" } else { "no" },
        if undecided > 0 {
            format!("; undecided: {undecided} rule{}", plural(undecided))
        } else {
            String::new()
        }
    );
    let outcome = if more || undecided > 0 {
        Outcome::Findings(None)
    } else {
        Outcome::Fine
    };
    if format == TestFormat::Json {
        let json = serde_json::json!({
            "old": { "layers": old, "policy": old_policy_hash },
            "new": { "layers": new, "policy": new_policy_hash },
            "changes": report.changes,
            "trees": tree_changes,
            "undecided": report.undecided,
            "explored": report.explored,
            "same_sources": report.same_sources,
            "sends_more": more,
        });
        let mut text = serde_json::to_string_pretty(&json).expect("JSON serializes");
        text.push('\n');
        return emit(&text, outcome);
    }
    emit(&out, outcome)
}
