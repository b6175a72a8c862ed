//! Context quality at small budgets: what ctxgate sends where the
//! user is, beside what agent frameworks do today, a head cut (serialize the
//! whole tree, keep the first N tokens).
//!
//! ```sh
//! cargo run --release --example quality            # the table in BENCHMARKS.md
//! cargo run --release --example quality -- --errors  # also every failed request
//! cargo run --release --example quality -- --by-tree # also per tree
//! cargo run --release --example quality -- --missed  # positions missing headings at 500 tokens
//! cargo run --release --example quality -- --show TREE:ID:BUDGET
//!     # that output, and each sent element's own tokens (stderr)
//! ```
//!
//! Trees: every answer in `tests/fixtures/answers/` (real trees imported by
//! `ctxgate import`; `tests/fixtures/SOURCES.md`). Positions: 40 per tree,
//! evenly spaced in document order among the elements inside a window
//! (depth ≥ 2); for each, every `focused` and `selected` flag of the tree is
//! cleared and the focus path is set from the root's child down to the
//! element (RFC-0001: `focused` on every element of that path). Request: the
//! embedded default policy, `window` action, JSON, budgets of 250, 500,
//! 1,000 and 2,000 o200k tokens. Only the public API is used; what is
//! measured is the output and its report.
//!
//! Metrics, per budget (means over positions):
//! - **element**: the user's element is in the output;
//! - **siblings**: the share of its siblings in the output (positions with
//!   siblings);
//! - **headings**: the share of its window's headings in the output
//!   (positions whose window has headings);
//!
//! both counting only the elements the policy lets through whatever the
//! budget (not pruned, e.g. invisible, nor denied or inside a masked one:
//! see `eligible`), so that 100% is what the budget can reach;
//! - **tokens**: tokens used, as a share of the budget;
//! - **errors**: requests that failed (nothing sent);
//! - **short**: outputs that left something out for the budget while using
//!   under 90% of it.
//!
//! "In the output" means sent whole, cut, or as the skeleton of something
//! sent (id, role, subrole, title, states); a masked element's placeholder
//! counts (it is all the policy allows), a placeholder the budget forced
//! (outcome `placeholder`) does not. For the head cut, an element is in the
//! output when its own part (id, role, subrole, title, content, url and
//! states: what the serialization writes before its children) lies inside
//! the cut.

use std::fmt::Write as _;

use ctxgate::{Answer, Budget, Element, Gate, Outcome, Request, Role};

const BUDGETS: [usize; 4] = [250, 500, 1000, 2000];
const POSITIONS: usize = 40;

/// One element of a flattened tree, in document order.
struct Flat {
    parent: Option<usize>,
    depth: usize,
    id: String,
    heading: bool,
}

fn flatten(root: &Element<'_>) -> Vec<Flat> {
    let mut out = Vec::new();
    let mut stack: Vec<(&Element<'_>, Option<usize>, usize)> = vec![(root, None, 0)];
    while let Some((element, parent, depth)) = stack.pop() {
        let at = out.len();
        out.push(Flat {
            parent,
            depth,
            id: element.id.to_string(),
            heading: element.role.read() == Role::Heading,
        });
        for child in element.children.iter().rev() {
            stack.push((child, Some(at), depth + 1));
        }
    }
    out
}

/// The answer with its focus path set to the `target`-th element in
/// document order, every other `focused` and `selected` cleared.
fn focused_at(answer: &Answer<'static>, flat: &[Flat], target: usize) -> Answer<'static> {
    let mut on_path = vec![false; flat.len()];
    let mut at = Some(target);
    while let Some(i) = at {
        on_path[i] = flat[i].parent.is_some();
        at = flat[i].parent;
    }
    let mut out = answer.clone();
    // Document order again, mutably, with an explicit stack.
    let mut index = 0;
    let mut stack: Vec<&mut Element<'static>> = vec![&mut out.root];
    while let Some(element) = stack.pop() {
        element.focused = on_path[index].then_some(true);
        element.selected = None;
        index += 1;
        for child in element.children.iter_mut().rev() {
            stack.push(child);
        }
    }
    out
}

/// The positions of a tree: `POSITIONS` evenly spaced elements of depth ≥ 2.
fn positions(flat: &[Flat]) -> Vec<usize> {
    let inside: Vec<usize> = (0..flat.len()).filter(|&i| flat[i].depth >= 2).collect();
    let n = POSITIONS.min(inside.len());
    (0..n).map(|k| inside[k * inside.len() / n]).collect()
}

/// The window (the root's child) an element is in.
fn window_of(flat: &[Flat], mut at: usize) -> usize {
    while let Some(p) = flat[at].parent {
        if flat[p].parent.is_none() {
            return at;
        }
        at = p;
    }
    at
}

/// Elements of the subtree at `root` (document order: a contiguous range).
fn subtree(flat: &[Flat], root: usize) -> std::ops::Range<usize> {
    let mut end = root + 1;
    while end < flat.len() && flat[end].depth > flat[root].depth {
        end += 1;
    }
    root..end
}

#[derive(Default)]
struct Tally {
    runs: usize,
    element: usize,
    siblings: (f64, usize),
    headings: (f64, usize),
    used: f64,
    errors: usize,
    short: usize,
}

impl Tally {
    /// `eligible`: the elements the policy lets through (see [`eligible`]).
    fn add(
        &mut self,
        flat: &[Flat],
        eligible: &[bool],
        at: usize,
        kept: &[bool],
        used: usize,
        budget: usize,
    ) {
        self.runs += 1;
        self.element += usize::from(kept[at]);
        let parent = flat[at].parent.expect("depth ≥ 2");
        let siblings: Vec<usize> = subtree(flat, parent)
            .filter(|&i| flat[i].parent == Some(parent) && i != at && eligible[i])
            .collect();
        if !siblings.is_empty() {
            let n = siblings.iter().filter(|&&i| kept[i]).count();
            self.siblings.0 += n as f64 / siblings.len() as f64;
            self.siblings.1 += 1;
        }
        let headings: Vec<usize> = subtree(flat, window_of(flat, at))
            .filter(|&i| flat[i].heading && eligible[i])
            .collect();
        if !headings.is_empty() {
            let n = headings.iter().filter(|&&i| kept[i]).count();
            self.headings.0 += n as f64 / headings.len() as f64;
            self.headings.1 += 1;
        }
        self.used += used as f64 / budget as f64;
    }

    fn row(&self, name: &str, budget: usize) -> String {
        let pct = |(sum, n): (f64, usize)| match n {
            0 => "–".to_string(),
            n => format!("{:.1}%", 100.0 * sum / n as f64),
        };
        let ok = self.runs.max(1) as f64;
        format!(
            "| {budget} | {name} | {:.0}% | {} | {} | {:.0}% | {} | {} |",
            100.0 * self.element as f64 / ok,
            pct(self.siblings),
            pct(self.headings),
            100.0 * self.used / ok,
            self.errors,
            self.short,
        )
    }
}

/// Which elements the policy lets through for the request, whatever the
/// budget: those it neither prunes, denies nor masks (nor hides inside a
/// denied or masked one) and that are in the `window` scope, by the report
/// of the same request at the policy's own budget (8,000 tokens), where an
/// element left out for the budget counts as let through.
fn eligible(gate: &Gate, answer: &Answer<'_>) -> Vec<bool> {
    let out = gate
        .trim(answer, &Request::new("window"))
        .expect("the policy's own budget holds every position");
    out.report
        .decisions
        .iter()
        .map(|d| match d.outcome {
            Outcome::Pruned | Outcome::OutOfScope => false,
            Outcome::Masked | Outcome::Denied => !d.inherited,
            _ => true,
        })
        .collect()
}

/// The largest prefix of `text` (at a char boundary) of at most `limit`
/// o200k tokens, and its count.
fn head_cut(text: &str, limit: usize) -> (usize, usize) {
    let tokenizer = bpe_openai::o200k_base();
    let count = |end: usize| tokenizer.count(&text[..end]);
    let all = count(text.len());
    if all <= limit {
        return (text.len(), all);
    }
    let (mut lo, mut hi) = (0, text.len());
    while lo + 1 < hi {
        let mut mid = lo + (hi - lo) / 2;
        while !text.is_char_boundary(mid) {
            mid -= 1;
        }
        if mid <= lo {
            break;
        }
        if count(mid) <= limit {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo, count(lo))
}

/// Where each element's own part (id to states: what comes before its
/// children and attributes) ends in the compact JSON of `answer`, in
/// document order.
fn own_ends(answer: &Answer<'_>, text: &str, flat: &[Flat]) -> Vec<usize> {
    let mut ends = Vec::with_capacity(flat.len());
    let mut stack: Vec<&Element<'_>> = vec![&answer.root];
    let mut from = 0;
    while let Some(element) = stack.pop() {
        let mut own = element.clone();
        own.children = Default::default();
        own.attributes = Default::default();
        let own = serde_json::to_string(&own).expect("an element serializes");
        let own = own.strip_suffix('}').unwrap_or(&own);
        let start = text[from..].find(own).map(|p| p + from).unwrap_or_else(|| {
            panic!("element {} not found in the serialization", element.id);
        });
        ends.push(start + own.len());
        from = start + 1;
        for child in element.children.iter().rev() {
            stack.push(child);
        }
    }
    ends
}

fn main() {
    let show_errors = std::env::args().any(|a| a == "--errors");
    let by_tree = std::env::args().any(|a| a == "--by-tree");
    let show_missed = std::env::args().any(|a| a == "--missed");
    let args: Vec<String> = std::env::args().collect();
    let show = args
        .iter()
        .position(|a| a == "--show")
        .and_then(|i| args.get(i + 1).cloned());
    let mut trees_table = String::new();
    let gate = Gate::embedded_default().expect("the embedded policy loads");
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/answers");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("the fixtures are there")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();

    let mut ctxgate: Vec<Tally> = BUDGETS.iter().map(|_| Tally::default()).collect();
    let mut headcut: Vec<Tally> = BUDGETS.iter().map(|_| Tally::default()).collect();
    let mut errors = String::new();
    let mut trees = 0;
    for path in &files {
        let bytes = std::fs::read(path).expect("a fixture is readable");
        let answer = ctxgate::read_conforming(&bytes, &ctxgate::Limits::default())
            .expect("a fixture conforms")
            .into_owned();
        let flat = flatten(&answer.root);
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        trees += 1;
        let mut mine: Vec<Tally> = BUDGETS.iter().map(|_| Tally::default()).collect();
        for at in positions(&flat) {
            let answer = focused_at(&answer, &flat, at);
            let eligible = eligible(&gate, &answer);
            // The baseline: the whole tree, cut from the top.
            let text = serde_json::to_string(&answer).expect("an answer serializes");
            let ends = own_ends(&answer, &text, &flat);
            for (b, &budget) in BUDGETS.iter().enumerate() {
                let (cut, used) = head_cut(&text, budget);
                let kept: Vec<bool> = ends.iter().map(|&end| end <= cut).collect();
                headcut[b].add(&flat, &eligible, at, &kept, used, budget);
                if cut < text.len() && used * 10 < budget * 9 {
                    headcut[b].short += 1;
                }
            }
            for (b, &budget) in BUDGETS.iter().enumerate() {
                let request = Request::new("window").budget(Budget::Tokens(budget));
                match gate.trim(&answer, &request) {
                    Ok(out) => {
                        if show.as_deref() == Some(&format!("{name}:{}:{budget}", flat[at].id)) {
                            println!("{}", out.rendered);
                            breakdown(&out.answer);
                        }
                        let report = &out.report;
                        let kept: Vec<bool> = report
                            .decisions
                            .iter()
                            .map(|d| match d.outcome {
                                Outcome::Sent | Outcome::Cut | Outcome::Skeleton => true,
                                Outcome::Masked | Outcome::Denied => !d.inherited,
                                _ => false,
                            })
                            .collect();
                        if show_missed && budget == 500 {
                            missed_headings(&name, &flat, &eligible, at, &kept);
                        }
                        let used = report.budgets[0].used;
                        ctxgate[b].add(&flat, &eligible, at, &kept, used, budget);
                        mine[b].add(&flat, &eligible, at, &kept, used, budget);
                        let left_out = report.outcomes.get(&Outcome::Budget).copied().unwrap_or(0);
                        if left_out > 0 && used * 10 < budget * 9 {
                            ctxgate[b].short += 1;
                        }
                    }
                    Err(err) => {
                        ctxgate[b].errors += 1;
                        mine[b].errors += 1;
                        let _ = writeln!(
                            errors,
                            "- {name} at `{}`, {budget} tokens: {err}{}",
                            flat[at].id,
                            if show_errors {
                                check_needed(&gate, &answer, &err)
                            } else {
                                String::new()
                            }
                        );
                    }
                }
            }
        }
        for (b, &budget) in BUDGETS.iter().enumerate() {
            let _ = writeln!(trees_table, "{}", mine[b].row(&name, budget));
        }
    }

    if by_tree {
        println!(
            "| budget | tree | element | siblings | headings | tokens used | errors | short |"
        );
        println!("|---|---|---|---|---|---|---|---|");
        print!("{trees_table}");
        println!();
    }
    println!(
        "{trees} trees, {} positions, `--action window`, JSON, o200k tokens\n",
        ctxgate[0].runs + ctxgate[0].errors
    );
    println!("| budget | | element | siblings | headings | tokens used | errors | short |");
    println!("|---|---|---|---|---|---|---|---|");
    for (b, &budget) in BUDGETS.iter().enumerate() {
        println!("{}", ctxgate[b].row("ctxgate", budget));
        println!("{}", headcut[b].row("head cut", budget));
    }
    if show_errors && !errors.is_empty() {
        println!("\nErrors:\n{errors}");
    }
}

/// Diagnostic: the window's headings a position's output left out.
fn missed_headings(name: &str, flat: &[Flat], eligible: &[bool], at: usize, kept: &[bool]) {
    let headings: Vec<usize> = subtree(flat, window_of(flat, at))
        .filter(|&i| flat[i].heading && eligible[i])
        .collect();
    let missed: Vec<&str> = headings
        .iter()
        .filter(|&&i| !kept[i])
        .map(|&i| flat[i].id.as_str())
        .collect();
    if !missed.is_empty() {
        eprintln!(
            "{name} at `{}` (depth {}): {} of {} headings missed: {missed:?}",
            flat[at].id,
            flat[at].depth,
            missed.len(),
            headings.len(),
        );
    }
}

/// For an unreachable budget: whether the budget the error names works
/// and one token less fails, and what that least answer is (a bare path:
/// the kept elements alone, no title, one notice on the root).
fn check_needed(gate: &Gate, answer: &Answer<'_>, err: &ctxgate::Error) -> String {
    let Some(needed) = err
        .to_string()
        .rsplit_once("would work is ")
        .and_then(|(_, n)| n.split(' ').next()?.parse::<usize>().ok())
    else {
        return String::new();
    };
    let at = |n: usize| gate.trim(answer, &Request::new("window").budget(Budget::Tokens(n)));
    match (at(needed), at(needed - 1)) {
        (Ok(out), Err(_)) => {
            let bare = out.answer.root.attributes.get("ctxgate:bare").is_some();
            let sent = out
                .report
                .decisions
                .iter()
                .filter(|d| matches!(d.outcome, Outcome::Sent | Outcome::Cut | Outcome::Skeleton))
                .count();
            let titles = out.rendered.matches("\"title\"").count();
            format!(" (checked: {needed} works, {} fails; at {needed}: {sent} elements sent, {titles} titles, root notice `ctxgate:bare`: {bare})", needed - 1)
        }
        (works, fails) => format!(
            " (NOT EXACT: {needed} {}, {} {})",
            if works.is_ok() { "works" } else { "fails" },
            needed - 1,
            if fails.is_ok() { "works" } else { "fails" }
        ),
    }
}

/// Diagnostic: tokens of each sent element's own part (without its
/// children), and of its attributes alone.
fn breakdown(answer: &Answer<'_>) {
    let tokenizer = bpe_openai::o200k_base();
    let mut stack: Vec<(&Element<'_>, usize)> = vec![(&answer.root, 0)];
    let mut total = 0;
    while let Some((element, depth)) = stack.pop() {
        let mut own = element.clone();
        own.children = Default::default();
        let text = serde_json::to_string(&own).expect("an element serializes");
        let attrs = serde_json::to_string(&element.attributes).expect("attributes serialize");
        let n = tokenizer.count(&text);
        total += n;
        eprintln!(
            "{:w$}{} {:?} {n} (attributes {})",
            "",
            element.id,
            element.role.read(),
            if element.attributes.is_empty() {
                0
            } else {
                tokenizer.count(&attrs)
            },
            w = depth * 2
        );
        for child in element.children.iter().rev() {
            stack.push((child, depth + 1));
        }
    }
    eprintln!("total (own parts) {total}");
}
