//! `ctxgate explain`: what a trim does to every element of one answer, for
//! a policy author or a privacy reviewer (what `opa eval --explain` is to
//! OPA). It runs the real trim (`Gate::trim`, with the same policy layers,
//! action, target, budget and format as `trim`) and joins, per element in
//! document order: the input's structure (id, role, subrole, effective
//! states: names and flags, never text), the report's line (outcome, the
//! deciding rule, every reason), the element's redaction counts, and what
//! the trimmed output holds of it.
//!
//! **Invariant:** every piece of text `explain` shows (a title, a url,
//! content, an attribute value) is read from the trimmed output, never from
//! the input: it shows what `trim` sends, redacted and cut as sent, and
//! nothing of a denied, masked, pruned or redacted text can appear. Ids,
//! roles, subroles and rule ids are the report's.
//!
//! **Invariant:** no provider text can start a line, end a quote or read
//! as a verdict. Every name (id, role, subrole, rule) is a plain word or a
//! string literal and every title or text a string literal, all written
//! by the one escaper ([`crate::escape`], the outline's): quotes,
//! backslashes, line breaks and hidden chars escaped. The JSON is written
//! through the same escaper; the HTML escapes what that escaper writes.
//!
//! Three writers: `text` (an indented tree, one line per element), `json`
//! (stable keys: every key is always present, `null` when it has no value)
//! and `html` (one self-contained page: inline CSS and JS, allowed by hash
//! in its Content-Security-Policy, which also refuses every fetch; every
//! string HTML-escaped; the tree collapsible with `<details>`; a legend
//! whose counts are the report's, which the page's script cross-checks
//! against the elements it shows).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::sync::Arc;

use clap::{Args, ValueEnum};
use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

use crate::escape;
use crate::model::{Content, Element, Tree};
use crate::policy::Scope;
use crate::render::notice;
use crate::trim::{BudgetReport, Outcome, Trimmed};

use super::{read_input, write_stdout, Failure, FormatArg, RequestArgs};

#[derive(Args)]
pub struct ExplainArgs {
    #[command(flatten)]
    request: RequestArgs,
    /// The format the trim sends (and measures the budget in): `trim`'s `--format`.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = FormatArg::Json)]
    sent_format: FormatArg,
    /// How to write the explanation: an indented tree, JSON, or one self-contained HTML page.
    #[arg(long, value_enum, default_value_t = ExplainFormat::Text)]
    format: ExplainFormat,
}

#[derive(Clone, Copy, ValueEnum)]
enum ExplainFormat {
    Text,
    Json,
    Html,
}

pub fn run(args: ExplainArgs) -> Result<super::Outcome, Failure> {
    let warm = std::thread::spawn(crate::Gate::warm_up_tokens);
    let gate = args.request.gate()?;
    let bytes = read_input(args.request.file.as_deref())?;
    let request = args.request.request(args.sent_format)?;
    let answer = crate::read_conforming(&bytes, gate.limits())?;
    let _ = warm.join();
    let trimmed = gate.trim(&answer, &request)?;
    for warning in &trimmed.report.warnings {
        eprintln!("warning: {warning}");
    }
    let tree = Tree::new(&answer.root);
    let explanation = explain(&tree, &trimmed)?;
    let out = match args.format {
        ExplainFormat::Text => text(&explanation),
        ExplainFormat::Json => {
            let mut json = escape::json_pretty(&explanation);
            json.push('\n');
            json
        }
        ExplainFormat::Html => html(&explanation),
    };
    write_stdout(out.as_bytes())?;
    Ok(super::Outcome::Fine)
}

/// One trim, explained.
#[derive(Serialize)]
pub(crate) struct Explanation<'r> {
    policy_hash: &'r str,
    action: &'r str,
    target: Option<&'r str>,
    scope: Scope,
    /// The format sent (`json` or `outline`).
    format: &'static str,
    budgets: &'r [BudgetReport],
    warnings: &'r [String],
    output_bytes: usize,
    /// The report's totals, as it has them.
    totals: Totals<'r>,
    /// Every input element, in document order.
    elements: Vec<Explained<'r>>,
}

#[derive(Serialize)]
struct Totals<'r> {
    elements: usize,
    outcomes: &'r BTreeMap<Outcome, usize>,
    rules: &'r BTreeMap<String, usize>,
    redactions: &'r BTreeMap<String, usize>,
    /// Elements a `strip` rule removed each attribute name from.
    stripped: &'r BTreeMap<String, usize>,
    reserved_attributes_dropped: usize,
}

/// One element.
#[derive(Serialize)]
struct Explained<'r> {
    id: &'r str,
    /// The parent's id; `null` for the root.
    parent: Option<&'r str>,
    /// 0 for the root.
    depth: u32,
    role: &'r str,
    subrole: Option<&'r str>,
    /// The effective states (R2: `visible` inherited, the rest as written).
    states: States,
    outcome: Outcome,
    rule: Option<&'r str>,
    inherited: bool,
    reasons: &'r [Arc<str>],
    /// Replacements per redaction pattern in what was sent of it.
    redactions: BTreeMap<&'r str, usize>,
    /// The attribute names a `strip` rule removed from it as sent (names,
    /// never values), as the report's line has them.
    stripped: &'r [Arc<str>],
    /// What the output holds of it; `null` when it is not in the output.
    sent: Option<Sent<'r>>,
    /// One past the last element of its subtree (its position in document
    /// order is its index).
    #[serde(skip)]
    end: usize,
}

#[derive(Serialize)]
struct States {
    selected: bool,
    focused: bool,
    hovered: bool,
    visible: bool,
}

/// An element as sent: its text as the output holds it (redacted, cut);
/// every field present, empty when the element was sent without it (a
/// placeholder has none).
#[derive(Serialize)]
struct Sent<'r> {
    title: Option<&'r str>,
    url: Option<&'r str>,
    content: &'r [Content<'r>],
    /// The provider's attributes as sent (ctxgate's own notices left out).
    attributes: IndexMap<&'r str, &'r Value>,
}

/// Joins the input's structure, the report and the output, per element.
pub(crate) fn explain<'r>(
    tree: &'r Tree<'r, '_>,
    trimmed: &'r Trimmed<'_>,
) -> Result<Explanation<'r>, Failure> {
    let report = &trimmed.report;
    if report.decisions.len() != tree.len() {
        // The report lists every input element; anything else is a bug,
        // and nothing is explained from a mismatch.
        return Err(Failure {
            kind: crate::ErrorKind::Internal,
            message: format!(
                "the report lists {} elements and the answer has {}; nothing is explained",
                report.decisions.len(),
                tree.len()
            ),
            error: None,
            printed: false,
            closed_pipe: false,
        });
    }
    let output = Tree::new(&trimmed.answer.root);
    let sent: HashMap<&str, &Element<'_>> = output
        .nodes()
        .iter()
        .map(|n| {
            let element: &'r Element<'_> = n.element;
            (&*element.id, element)
        })
        .collect();
    let mut redacted: HashMap<usize, &[(Arc<str>, usize)]> = HashMap::new();
    for (at, counts) in &trimmed.redacted {
        redacted.insert(*at as usize, counts);
    }
    let nodes = tree.nodes();
    let elements = nodes
        .iter()
        .zip(&report.decisions)
        .enumerate()
        .map(|(at, (node, line))| Explained {
            id: &node.element.id,
            parent: node.parent.map(|p| &*nodes[p as usize].element.id),
            depth: node.depth,
            role: node.element.role.as_str(),
            subrole: node.element.subrole.as_deref(),
            states: States {
                selected: node.selected,
                focused: node.focused,
                hovered: node.hovered,
                visible: node.visible,
            },
            outcome: line.outcome,
            rule: line.rule.as_deref(),
            inherited: line.inherited,
            reasons: &line.reasons,
            stripped: &line.stripped,
            redactions: redacted
                .get(&at)
                .map(|counts| counts.iter().map(|(id, n)| (&**id, *n)).collect())
                .unwrap_or_default(),
            sent: sent.get(&*node.element.id).map(|e| Sent {
                title: e.title.as_deref(),
                url: e.url.as_deref(),
                content: &e.content,
                attributes: e
                    .attributes
                    .iter()
                    .filter(|(k, _)| !notice::is_reserved(k))
                    .map(|(k, v)| (k.as_str(), v))
                    .collect(),
            }),
            end: node.end as usize,
        })
        .collect();
    Ok(Explanation {
        policy_hash: &report.policy_hash,
        action: &report.action,
        target: report.target.as_deref(),
        scope: report.scope,
        format: report.format,
        budgets: &report.budgets,
        warnings: &report.warnings,
        output_bytes: report.output_bytes,
        totals: Totals {
            elements: report.elements,
            outcomes: &report.outcomes,
            rules: &report.rules,
            redactions: &report.redactions,
            stripped: &report.stripped,
            reserved_attributes_dropped: report.reserved_attributes_dropped,
        },
        elements,
    })
}

/// Every outcome, in the legend's order, with its word and meaning.
const OUTCOMES: [(Outcome, &str, &str); 9] = [
    (Outcome::Sent, "sent", "Sent whole."),
    (
        Outcome::Cut,
        "cut",
        "Sent with its text (or, degraded to fit, its title) cut to fit the budget.",
    ),
    (
        Outcome::Skeleton,
        "skeleton",
        "Sent as a skeleton (id, role, subrole, title, states) because something inside it was sent.",
    ),
    (
        Outcome::Placeholder,
        "placeholder",
        "Kept by a rule, but sent as a placeholder: the budget could not hold more of it.",
    ),
    (
        Outcome::Masked,
        "masked",
        "Sent as a placeholder (id, role, subrole, states), or, inside a masked element, not at all.",
    ),
    (
        Outcome::Denied,
        "denied",
        "Not sent: a deny rule, here or above.",
    ),
    (
        Outcome::Pruned,
        "pruned",
        "Not sent: a prune rule, here or above.",
    ),
    (
        Outcome::OutOfScope,
        "out_of_scope",
        "Not sent: outside the action's scope.",
    ),
    (
        Outcome::Budget,
        "budget",
        "Not sent: no room in the budget.",
    ),
];

fn word(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Sent => "sent",
        Outcome::Cut => "cut",
        Outcome::Skeleton => "skeleton",
        Outcome::Masked => "masked",
        Outcome::Denied => "denied",
        Outcome::Pruned => "pruned",
        Outcome::OutOfScope => "out_of_scope",
        Outcome::Budget => "budget",
        Outcome::Placeholder => "placeholder",
    }
}

fn scope_word(scope: Scope) -> String {
    serde_json::to_value(scope)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The states that hold, as words (`hidden` for not visible).
fn state_words(states: &States) -> Vec<&'static str> {
    let mut out = Vec::new();
    if states.focused {
        out.push("focused");
    }
    if states.selected {
        out.push("selected");
    }
    if states.hovered {
        out.push("hovered");
    }
    if !states.visible {
        out.push("hidden");
    }
    out
}

/// The reasons other than the deciding rule.
fn others<'r>(e: &Explained<'r>) -> impl Iterator<Item = &'r str> + 'r {
    let rule = e.rule;
    e.reasons
        .iter()
        .map(|r| &**r)
        .filter(move |r| Some(*r) != rule)
}

/// The text blocks of what was sent, as one string.
fn sent_text(sent: &Sent<'_>) -> String {
    let mut text = String::new();
    for block in sent.content {
        if let crate::model::Block::Text { text: t } = &block.block {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(t);
        }
    }
    text
}

/// The kinds of the non-text blocks sent (`image image/png`, `resource_link`).
fn block_kinds(sent: &Sent<'_>) -> Vec<String> {
    use crate::model::Block;
    sent.content
        .iter()
        .filter_map(|c| match &c.block {
            Block::Text { .. } => None,
            Block::Image { mime_type, .. } => Some(format!("image {mime_type}")),
            Block::Audio { mime_type, .. } => Some(format!("audio {mime_type}")),
            Block::ResourceLink { uri, .. } => Some(format!("resource_link {uri}")),
            Block::Resource { .. } => Some("resource".to_string()),
            Block::Other { kind } => Some(kind.clone()),
        })
        .collect()
}

/// A name (an id, a role, a rule) as the text writer shows it: a plain
/// word as is, anything else as a string literal ([`escape::word`]), so it
/// holds no space and cannot say a verdict.
fn name(text: &str) -> String {
    let mut out = Vec::with_capacity(text.len() + 2);
    let _ = escape::word(&mut out, text);
    String::from_utf8(out).expect("the escaper writes UTF-8")
}

/// A role as the text writer shows it, before `:` and its subrole: a
/// [`name`], quoted when it holds a `:` of its own, so where the role ends
/// is never in doubt.
fn role_name(role: &str) -> String {
    if role.contains(':') {
        let mut out = Vec::with_capacity(role.len() + 2);
        let _ = escape::quoted(&mut out, role);
        String::from_utf8(out).expect("the escaper writes UTF-8")
    } else {
        name(role)
    }
}

/// At most `chars` characters of `text` as one string literal
/// ([`escape::quoted`]: quotes, backslashes, line breaks and every hidden
/// char escaped), with `…` after it if cut.
fn short(text: &str, chars: usize) -> String {
    let cut = text.char_indices().nth(chars).map(|(at, _)| at);
    let mut out = Vec::with_capacity(text.len().min(4 * chars) + 8);
    let _ = escape::quoted(&mut out, &text[..cut.unwrap_or(text.len())]);
    let mut out = String::from_utf8(out).expect("the escaper writes UTF-8");
    if cut.is_some() {
        out.push('…');
    }
    out
}

/// The totals line shared by the text writer's head.
fn outcome_counts(x: &Explanation<'_>) -> String {
    OUTCOMES
        .iter()
        .filter_map(|(o, w, _)| {
            x.totals
                .outcomes
                .get(o)
                .filter(|n| **n > 0)
                .map(|n| format!("{n} {w}"))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn budget_words(b: &BudgetReport) -> String {
    format!("{} of {} {} ({})", b.used, b.limit, b.unit, b.source)
}

/// The indented tree: a head, then one line per element.
pub(crate) fn text(x: &Explanation<'_>) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "action {}, scope {}, policy {}",
        crate::render::visible(x.action),
        scope_word(x.scope),
        &x.policy_hash[..x.policy_hash.len().min(12)]
    );
    if let Some(target) = x.target {
        let _ = write!(out, ", target {}", crate::render::visible(target));
    }
    let _ = writeln!(
        out,
        "\n{} elements: {}; {} bytes sent as {}{}",
        x.totals.elements,
        outcome_counts(x),
        x.output_bytes,
        x.format,
        x.budgets
            .iter()
            .map(|b| format!(", budget {}", budget_words(b)))
            .collect::<String>()
    );
    let redactions: Vec<String> = x
        .totals
        .redactions
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(id, n)| format!("{id} ×{n}"))
        .collect();
    if !redactions.is_empty() {
        let _ = writeln!(out, "redacted: {}", redactions.join(", "));
    }
    if !x.totals.stripped.is_empty() {
        let stripped: Vec<String> = x
            .totals
            .stripped
            .iter()
            .map(|(name, n)| format!("{} ×{n}", crate::render::visible(name)))
            .collect();
        let _ = writeln!(out, "stripped: {}", stripped.join(", "));
    }
    for warning in x.warnings {
        let _ = writeln!(out, "warning: {warning}");
    }
    for e in &x.elements {
        for _ in 0..e.depth {
            out.push_str("  ");
        }
        let _ = write!(out, "{} {}", name(e.id), role_name(e.role));
        if let Some(subrole) = e.subrole {
            let _ = write!(out, ":{}", name(subrole));
        }
        let states = state_words(&e.states);
        if !states.is_empty() {
            let _ = write!(out, " [{}]", states.join(" "));
        }
        let _ = write!(out, " → {}", word(e.outcome));
        // `budget by budget`, `out_of_scope by scope`: the outcome says it.
        let said = matches!(
            (e.outcome, e.rule),
            (Outcome::Budget, Some("budget")) | (Outcome::OutOfScope, Some("scope"))
        );
        if let Some(rule) = e.rule.filter(|_| !said) {
            let _ = write!(out, " by {}", name(rule));
            if e.inherited {
                out.push_str(" (inherited)");
            }
        }
        let others: Vec<_> = others(e).map(name).collect();
        if !others.is_empty() {
            let _ = write!(out, "; also {}", others.join(", "));
        }
        if !e.redactions.is_empty() {
            let counts: Vec<String> = e
                .redactions
                .iter()
                .map(|(id, n)| format!("{} ×{n}", name(id)))
                .collect();
            let _ = write!(out, "; redacted {}", counts.join(", "));
        }
        if !e.stripped.is_empty() {
            let names: Vec<_> = e.stripped.iter().map(|n| name(n)).collect();
            let _ = write!(out, "; stripped {}", names.join(", "));
        }
        if let Some(sent) = &e.sent {
            if let Some(title) = sent.title {
                let _ = write!(out, " — {}", short(title, 60));
            }
            let text = sent_text(sent);
            if !text.is_empty() {
                let _ = write!(out, " text {}", short(&text, 60));
            }
        }
        out.push('\n');
    }
    out
}

/// Escapes text for HTML (element content and quoted attribute values),
/// after making hidden characters visible as the other writers do.
fn esc(out: &mut String, text: &str) {
    for c in crate::render::visible(text).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    esc(&mut out, text);
    out
}

/// Element levels nested as `<details>`; deeper elements are listed flat
/// under their deepest nested ancestor, each with its depth (browsers cap
/// the nesting their parsers build, at 512 elements in Chromium).
const MAX_NESTED: usize = 100;

const CSS: &str = r#"
:root { --sent: #1b7f3b; --cut: #6a8f1f; --skeleton: #4a6fa5; --placeholder: #b7791f; --masked: #c05621;
  --denied: #c53030; --pruned: #6b46c1; --out_of_scope: #718096; --budget: #975a16; }
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5rem; color: #1a202c; background: #fff; }
h1 { font-size: 1.4rem; margin: 0 0 .5rem; } h2 { font-size: 1.15rem; margin: 1.5rem 0 .5rem; }
h3 { font-size: 1rem; margin: 1rem 0 .3rem; }
code { font-family: ui-monospace, monospace; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: 0; }
dl.facts dt { color: #4a5568; } dl.facts dd { margin: 0; }
table { border-collapse: collapse; } th, td { text-align: left; padding: .2rem .6rem; border-bottom: 1px solid #e2e8f0; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
td.mismatch { background: #fed7d7; }
.swatch { display: inline-block; width: .9em; height: .9em; border-radius: 2px; vertical-align: -0.1em; margin-right: .3em; }
#check[data-check="ok"] { color: var(--sent); } #check[data-check="mismatch"] { color: var(--denied); font-weight: bold; }
.warnings { color: var(--budget); }
ul.tree, ul.tree ul { list-style: none; margin: 0; padding-left: 1.1rem; }
ul.tree { padding-left: 0; }
ul.tree li { margin: .1rem 0; }
summary { cursor: pointer; }
.line { display: inline; }
.badge { display: inline-block; min-width: 6.5em; padding: 0 .35em; border-radius: 3px; color: #fff; font-size: .85em; text-align: center; }
.id { color: #2d3748; } .role { font-weight: 600; } .subrole { color: #4a5568; }
.states { color: #2b6cb0; font-size: .9em; } .rule { color: #2d3748; } .inherited { color: #718096; }
.reasons, .redacted, .stripped, .depth { color: #718096; font-size: .9em; }
.sent { margin: .15rem 0 .25rem 1.2rem; padding: .2rem .5rem; border-left: 3px solid #cbd5e0; background: #f7fafc; }
.sent pre { margin: 0; white-space: pre-wrap; max-height: 12em; overflow: auto; font: 12px/1.4 ui-monospace, monospace; }
.b-sent { background: var(--sent); }
.b-cut { background: var(--cut); }
.b-skeleton { background: var(--skeleton); }
.b-placeholder { background: var(--placeholder); }
.b-masked { background: var(--masked); }
.b-denied { background: var(--denied); }
.b-pruned { background: var(--pruned); }
.b-out_of_scope { background: var(--out_of_scope); }
.b-budget { background: var(--budget); }
q.title { font-weight: 600; } .sent .url { color: #2b6cb0; word-break: break-all; }
"#;

const JS: &str = r#"
(function () {
  var counts = {}, all = 0;
  document.querySelectorAll('#tree li[data-outcome]').forEach(function (li) {
    var o = li.getAttribute('data-outcome');
    counts[o] = (counts[o] || 0) + 1;
    all += 1;
  });
  var ok = true;
  document.querySelectorAll('#legend td[data-shown]').forEach(function (td) {
    var o = td.getAttribute('data-shown');
    var n = o === 'all' ? all : (counts[o] || 0);
    td.textContent = String(n);
    var want = document.querySelector('#legend td[data-report="' + o + '"]');
    if (!want || want.textContent !== String(n)) {
      ok = false;
      td.classList.add('mismatch');
    }
  });
  var check = document.getElementById('check');
  check.setAttribute('data-check', ok ? 'ok' : 'mismatch');
  check.textContent = ok
    ? 'The tree below shows exactly the elements the report counts.'
    : 'The tree below does not match the report\u2019s counts.';
  function setAll(open) {
    document.querySelectorAll('#tree details').forEach(function (d) { d.open = open; });
  }
  document.getElementById('expand').addEventListener('click', function () { setAll(true); });
  document.getElementById('collapse').addEventListener('click', function () { setAll(false); });
})();
"#;

/// Standard base64 (the CSP's hash sources).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> shift) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn csp_hash(source: &str) -> String {
    use sha2::{Digest, Sha256};
    format!("'sha256-{}'", base64(&Sha256::digest(source.as_bytes())))
}

/// One of the totals' tables: a name (escaped, as code) and its count a row.
fn count_table<'a>(
    out: &mut String,
    id: &str,
    name: &str,
    count: &str,
    rows: impl Iterator<Item = (&'a String, &'a usize)>,
) {
    let _ = writeln!(
        out,
        "<table id=\"{id}\">\n<thead><tr><th>{name}</th><th>{count}</th></tr></thead>\n<tbody>"
    );
    for (key, n) in rows {
        out.push_str("<tr><td><code>");
        esc(out, key);
        let _ = writeln!(out, "</code></td><td class=\"n\">{n}</td></tr>");
    }
    out.push_str("</tbody>\n</table>\n");
}

/// One element's line: outcome, id, role, subrole, states, rule, reasons,
/// redactions (names and counts only).
fn html_line(out: &mut String, e: &Explained<'_>, flat: bool) {
    let w = word(e.outcome);
    let _ = write!(out, "<span class=\"badge b-{w}\">{w}</span> ");
    out.push_str("<code class=\"id\">");
    esc(out, &name(e.id));
    out.push_str("</code> <span class=\"role\">");
    esc(out, &name(e.role));
    out.push_str("</span>");
    if let Some(subrole) = e.subrole {
        out.push_str(" <span class=\"subrole\">");
        esc(out, &name(subrole));
        out.push_str("</span>");
    }
    let states = state_words(&e.states);
    if !states.is_empty() {
        let _ = write!(out, " <span class=\"states\">{}</span>", states.join(" "));
    }
    if let Some(rule) = e.rule {
        out.push_str(" <span class=\"rule\">by <code>");
        esc(out, rule);
        out.push_str("</code></span>");
        if e.inherited {
            out.push_str("<span class=\"inherited\"> (inherited)</span>");
        }
    }
    let others: Vec<String> = others(e).map(escaped).collect();
    if !others.is_empty() {
        let _ = write!(
            out,
            " <span class=\"reasons\">also <code>{}</code></span>",
            others.join("</code>, <code>")
        );
    }
    if !e.redactions.is_empty() {
        let counts: Vec<String> = e
            .redactions
            .iter()
            .map(|(id, n)| format!("{} ×{n}", escaped(id)))
            .collect();
        let _ = write!(
            out,
            " <span class=\"redacted\">redacted {}</span>",
            counts.join(", ")
        );
    }
    if !e.stripped.is_empty() {
        let names: Vec<String> = e.stripped.iter().map(|n| escaped(n)).collect();
        let _ = write!(
            out,
            " <span class=\"stripped\">stripped <code>{}</code></span>",
            names.join("</code>, <code>")
        );
    }
    if flat {
        let _ = write!(out, " <span class=\"depth\">(depth {})</span>", e.depth);
    }
    if let Some(title) = e.sent.as_ref().and_then(|s| s.title) {
        // Quotes inside escaped as the text writer's are: none of the
        // title's own can read as the end of it.
        out.push_str(" <q class=\"title\">");
        let mut body = Vec::with_capacity(title.len());
        let _ = escape::escape(&mut body, title, true);
        esc(out, &String::from_utf8_lossy(&body));
        out.push_str("</q>");
    }
}

/// What was sent of an element besides its title (on its line), when there
/// is any.
fn html_sent(out: &mut String, e: &Explained<'_>) {
    let Some(sent) = &e.sent else { return };
    let text = sent_text(sent);
    let kinds = block_kinds(sent);
    if sent.url.is_none() && text.is_empty() && kinds.is_empty() && sent.attributes.is_empty() {
        return;
    }
    out.push_str("<div class=\"sent\">");
    if let Some(url) = sent.url {
        out.push_str("<div class=\"url\">");
        esc(out, url);
        out.push_str("</div>");
    }
    if !text.is_empty() {
        out.push_str("<pre class=\"text\">");
        // Line breaks are kept here (`pre`); other hidden characters shown.
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 {
                out.push('\n');
            }
            esc(out, line);
        }
        out.push_str("</pre>");
    }
    if !kinds.is_empty() {
        out.push_str("<div class=\"blocks\">");
        esc(out, &kinds.join(", "));
        out.push_str("</div>");
    }
    if !sent.attributes.is_empty() {
        out.push_str("<pre class=\"attributes\">");
        esc(
            out,
            &serde_json::to_string(&sent.attributes).expect("attributes serialize"),
        );
        out.push_str("</pre>");
    }
    out.push_str("</div>");
}

/// The page: facts, totals with the legend, the tree.
pub(crate) fn html(x: &Explanation<'_>) -> String {
    let mut out = String::with_capacity(4096 + x.elements.len() * 256);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src {}; script-src {}; base-uri 'none'; form-action 'none'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>ctxgate explain: ",
        csp_hash(CSS),
        csp_hash(JS)
    );
    esc(&mut out, x.action);
    let _ = write!(out, "</title>\n<style>{CSS}</style>\n</head>\n<body>\n<header>\n<h1>What ctxgate sends for <code>");
    esc(&mut out, x.action);
    out.push_str(
        "</code></h1>\n<dl class=\"facts\">\n<dt>policy</dt><dd><code id=\"policy-hash\">",
    );
    esc(&mut out, x.policy_hash);
    let _ = write!(
        out,
        "</code></dd>\n<dt>scope</dt><dd>{}</dd>\n",
        scope_word(x.scope)
    );
    if let Some(target) = x.target {
        out.push_str("<dt>target</dt><dd><code>");
        esc(&mut out, target);
        out.push_str("</code></dd>\n");
    }
    let _ = writeln!(
        out,
        "<dt>sent</dt><dd><span id=\"output-bytes\">{}</span> bytes as {}</dd>",
        x.output_bytes, x.format
    );
    for b in x.budgets {
        let _ = writeln!(out, "<dt>budget</dt><dd>{}</dd>", budget_words(b));
    }
    out.push_str("</dl>\n");
    if !x.warnings.is_empty() {
        out.push_str("<ul class=\"warnings\">\n");
        for w in x.warnings {
            out.push_str("<li>");
            esc(&mut out, w);
            out.push_str("</li>\n");
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</header>\n<section id=\"totals\">\n<h2>Totals</h2>\n<table id=\"legend\">\n\
        <thead><tr><th>outcome</th><th>meaning</th><th>report</th><th>in the tree</th></tr></thead>\n<tbody>\n");
    for (outcome, w, meaning) in OUTCOMES {
        let n = x.totals.outcomes.get(&outcome).copied().unwrap_or(0);
        let _ = writeln!(
            out,
            "<tr class=\"o-{w}\" data-outcome-total=\"{w}\"><td><span class=\"swatch b-{w}\"></span>{w}</td><td>{meaning}</td>\
             <td class=\"n\" data-report=\"{w}\">{n}</td><td class=\"n\" data-shown=\"{w}\"></td></tr>"
        );
    }
    let _ = writeln!(
        out,
        "</tbody>\n<tfoot><tr><th colspan=\"2\">elements</th><td class=\"n\" data-report=\"all\">{}</td>\
         <td class=\"n\" data-shown=\"all\"></td></tr></tfoot>\n</table>\n\
         <p id=\"check\" data-check=\"pending\">The page's script counts the tree's elements against these totals.</p>",
        x.totals.elements
    );
    out.push_str("<h3>Deciding rules</h3>\n");
    count_table(&mut out, "rules", "rule", "elements", x.totals.rules.iter());
    out.push_str("<h3>Redactions</h3>\n");
    let redacted: Vec<_> = x
        .totals
        .redactions
        .iter()
        .filter(|(_, n)| **n > 0)
        .collect();
    if x.totals.redactions.is_empty() {
        out.push_str("<p id=\"redactions\">None: the policy has no redaction patterns.</p>\n");
    } else if redacted.is_empty() {
        let _ = writeln!(
            out,
            "<p id=\"redactions\">None: no pattern of the policy's {} matched what was sent.</p>",
            x.totals.redactions.len()
        );
    } else {
        count_table(
            &mut out,
            "redactions",
            "pattern",
            "replacements",
            redacted.into_iter(),
        );
    }
    if !x.totals.stripped.is_empty() {
        out.push_str("<h3>Stripped attributes</h3>\n");
        count_table(
            &mut out,
            "stripped",
            "attribute",
            "elements",
            x.totals.stripped.iter(),
        );
    }
    out.push_str(
        "</section>\n<section id=\"tree\">\n<h2>Tree</h2>\n\
         <p><button type=\"button\" id=\"expand\">Expand all</button> <button type=\"button\" id=\"collapse\">Collapse all</button></p>\n\
         <ul class=\"tree\">\n",
    );
    // Open elements' subtree ends, innermost last: an explicit stack, as
    // every walk of a tree in this crate.
    let mut open: Vec<usize> = Vec::new();
    for (at, e) in x.elements.iter().enumerate() {
        while open.last().is_some_and(|&end| end <= at) {
            open.pop();
            out.push_str("</ul></details></li>\n");
        }
        let w = word(e.outcome);
        let _ = write!(out, "<li class=\"o-{w}\" data-outcome=\"{w}\" data-id=\"");
        esc(&mut out, e.id);
        out.push_str("\">");
        let has_children = e.end > at + 1;
        if has_children && open.len() < MAX_NESTED {
            out.push_str("<details open><summary><span class=\"line\">");
            html_line(&mut out, e, false);
            out.push_str("</span></summary>");
            html_sent(&mut out, e);
            out.push_str("<ul>\n");
            open.push(e.end);
        } else {
            out.push_str("<div class=\"line\">");
            html_line(&mut out, e, open.len() >= MAX_NESTED);
            out.push_str("</div>");
            html_sent(&mut out, e);
            out.push_str("</li>\n");
        }
    }
    while open.pop().is_some() {
        out.push_str("</ul></details></li>\n");
    }
    let _ = write!(
        out,
        "</ul>\n</section>\n<script>{JS}</script>\n</body>\n</html>\n"
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_the_standard_alphabet_with_padding() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64(&[0xfb, 0xff]), "+/8=");
    }

    #[test]
    fn html_escaping_leaves_no_markup_and_shows_hidden_characters() {
        assert_eq!(
            escaped("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
        assert!(!escaped("a\u{202e}b").contains('\u{202e}'));
    }
}
