//! Loading refuses recursion and long rule chains: regorus evaluates a
//! chain on the thread's stack, and detects recursion only between rules.
//! Part of the runtime (every load runs it), found on the source text.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::source::PolicyFile;
use super::token::{tokenize, TokenKind};

/// Where a rule definition starts: its full path, file, line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RuleHead {
    pub path: String,
    pub file: String,
    pub line: usize,
    pub col: usize,
}

impl RuleHead {
    /// The rule's own name: the last part of its path (`deny` for `data.ctxgate.deny`).
    pub fn name(&self) -> &str {
        self.path.rsplit('.').next().unwrap_or(&self.path)
    }
}

/// Rego forbids recursion, but regorus detects it only between rules, not
/// through functions, and a recursive function overflows the stack. So the
/// call graph is built from the source text: a definition's body runs from
/// its head to the next head of the same file; an identifier in it that
/// names a rule or function of the set is an edge. The first cycle found is
/// reported at the head of the rule that starts it.
pub(crate) fn find_recursion(
    files: &[PolicyFile],
    heads: &[RuleHead],
) -> Option<(String, usize, usize, String)> {
    // Each name's first head (file, line, col), and its bodies' identifiers.
    let mut names: BTreeMap<String, (String, usize, usize)> = BTreeMap::new();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let tokens = tokenize(&file.source);
        let mut starts: Vec<(usize, String)> = Vec::new();
        for head in heads.iter().filter(|h| h.file == file.name) {
            let Some(mut k) = tokens
                .iter()
                .position(|t| (t.line, t.col) >= (head.line, head.col))
            else {
                continue;
            };
            if tokens[k].text == "default" {
                k += 1;
            }
            let Some(token) = tokens.get(k) else { continue };
            let name = head.name().to_string();
            names
                .entry(name.clone())
                .or_insert((file.name.clone(), token.line, token.col));
            starts.push((k, name));
        }
        starts.sort();
        for (n, (start, name)) in starts.iter().enumerate() {
            let end = starts.get(n + 1).map_or(tokens.len(), |(next, _)| *next);
            let body = edges.entry(name.clone()).or_default();
            // Two heads can start at one token (`de.y contains r` gives the
            // heads `de` and `de.y`): the first then has an empty body.
            for t in tokens.get(start + 1..end).unwrap_or_default() {
                if t.kind == TokenKind::Ident {
                    body.insert(t.text.clone());
                }
            }
        }
    }
    for set in edges.values_mut() {
        set.retain(|n| names.contains_key(n));
    }
    // Depth-first without recursion: a policy of thousands of chained
    // rules must not overflow the stack of the check meant to protect it.
    // Also measures each name's longest chain of dependencies: regorus
    // evaluates one rule inside another on its stack.
    fn visit(
        start: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        done: &mut HashMap<String, usize>,
    ) -> Option<Vec<String>> {
        if done.contains_key(start) {
            return None;
        }
        let next_of = |name: &str| -> Vec<&str> {
            edges
                .get(name)
                .map_or_else(Vec::new, |set| set.iter().map(String::as_str).collect())
        };
        // The path from `start`: each step's name, its edges, the next edge.
        let mut stack: Vec<(&str, Vec<&str>, usize)> = vec![(start, next_of(start), 0)];
        let mut on_path: HashSet<&str> = HashSet::from([start]);
        while let Some((name, nexts, at)) = stack.last_mut() {
            let Some(&next) = nexts.get(*at) else {
                let name = *name;
                let chain = 1 + nexts
                    .iter()
                    .filter_map(|n| done.get(*n))
                    .max()
                    .unwrap_or(&0);
                stack.pop();
                on_path.remove(name);
                done.insert(name.to_string(), chain);
                continue;
            };
            *at += 1;
            if on_path.contains(next) {
                let from = stack.iter().position(|(n, ..)| *n == next).unwrap_or(0);
                let mut cycle: Vec<String> =
                    stack[from..].iter().map(|(n, ..)| n.to_string()).collect();
                cycle.push(next.to_string());
                return Some(cycle);
            }
            if !done.contains_key(next) {
                on_path.insert(next);
                stack.push((next, next_of(next), 0));
            }
        }
        None
    }
    // Depth-first, in name order, for stable messages.
    let mut done = HashMap::new();
    for name in names.keys() {
        if let Some(cycle) = visit(name, &edges, &mut done) {
            let (file, line, col) = names[&cycle[0]].clone();
            let chain: Vec<String> = cycle.iter().map(|n| format!("`{n}`")).collect();
            return Some((
                file,
                line,
                col,
                format!(
                    "recursion: {}; a rule or function may not depend on itself",
                    chain.join(" -> ")
                ),
            ));
        }
    }
    // The longest chain, first in name order among equals.
    let deepest = names
        .keys()
        .filter_map(|n| Some((done.get(n.as_str())?, n)))
        .max_by(|a, b| a.0.cmp(b.0).then(b.1.cmp(a.1)));
    if let Some((&chain, name)) = deepest.filter(|(&chain, _)| chain > MAX_RULE_CHAIN) {
        let (file, line, col) = names[name].clone();
        return Some((
            file,
            line,
            col,
            format!(
                "`{name}` starts a chain of {chain} rules and functions, each depending on the next; the limit is {MAX_RULE_CHAIN}, as deeper chains can overflow the evaluator's stack"
            ),
        ));
    }
    None
}

/// The longest chain of rules and functions depending on each other that a
/// policy may have. regorus evaluates each link on the stack, ~25 KiB a
/// link in a debug build: 85 links overflowed a 2 MiB thread stack (the
/// default for spawned threads); real policies chain 3 to 5.
pub(crate) const MAX_RULE_CHAIN: usize = 32;
