//! The library's module graph follows the layering of ARCHITECTURE.md and
//! has no cycle (as rust-analyzer's tidy tests do). Every `src/**/*.rs` of
//! the library is read; each `crate::X` path (in `use` or in code) is an
//! edge from the file's module to top-level module `X`, and inside
//! `src/policy/` each `super::Y` or `crate::policy::Y` is an edge between
//! policy's submodules. Comments and `#[cfg(test)] mod tests` blocks are not
//! read: a unit test may use any layer, and so may the unit tests gathered
//! in `src/tests/`. A path through a root re-export (`crate::Error`) is
//! resolved through `lib.rs`'s `pub use`. `src/cli/` is a module like the
//! others (the top layer); only `lib.rs` and `main.rs` are not read.
//!
//! Adding a module means placing it in [`LAYERS`]; an edge to a module of
//! the same or a higher layer fails with the file that makes it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level modules, lowest layer first. A module may use modules of lower
/// layers only; modules of one layer do not use one another.
const LAYERS: &[&[&str]] = &[
    // Escaping of provider text for output and diagnostics.
    &["escape"],
    // Letters of other scripts read as the Latin ones they look like.
    &["lookalike"],
    // Plain data: findings (which use `escape`) and limits.
    &["finding", "limits"],
    &["error"],
    &["deadline"],
    // The element model; redaction patterns and their application.
    &["model", "redact"],
    // Bytes into an answer; words for messages; writers; the generator.
    &["read", "suggest", "render", "synth"],
    // Conformance (and the one read-then-check composition); importers.
    &["check", "import"],
    &["policy"],
    &["tokens"],
    &["trim"],
    &["gate"],
    // The command line may use every module; the benches' door to the
    // stages (feature `internals`) uses the stages. Nothing uses either.
    &["cli", "internals"],
];

/// Inside `src/policy/`, submodules under this name are the authoring tools
/// (lint, docs, probes, test runner): they may use the runtime, the runtime
/// never uses them.
const POLICY_TOOLS: &str = "tools";

/// Edges inside `src/policy/` known to close a cycle, tolerated until the
/// change that removes them. None: the policy split moved the recursion check
/// into the runtime. Only listed edges are skipped; any other cycle fails.
const TOLERATED: &[(&str, &str)] = &[];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src readable") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The file's text without comments, string literals' contents and its
/// `#[cfg(test)] mod tests` block (by convention the file's end).
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < bytes.len() && !(bytes[i] == b'*' && bytes[i + 1] == b'/') {
                    i += 1;
                }
                i += 2;
            }
            b'"' => {
                // Raw strings (`r#"…"#`) may hold quotes; none of ours holds
                // a `crate::` path, so a plain skip to the next quote is enough.
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
                out.push_str("\"\"");
            }
            b'\'' if bytes.get(i + 2) == Some(&b'\'') || bytes.get(i + 1) == Some(&b'\\') => {
                // A char literal (`'"'`, `'\n'`); lifetimes pass through.
                let end = text[i + 1..].find('\'').map_or(bytes.len(), |e| i + 2 + e);
                i = end.max(i + 3).min(bytes.len());
                out.push_str("' '");
            }
            _ => {
                let c = text[i..].chars().next().expect("a char");
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    out
}

/// A statement without its leading attributes (`#[cfg(...)]`) and space.
fn without_attributes(statement: &str) -> &str {
    let mut s = statement.trim_start();
    while let Some(rest) = s.strip_prefix("#[") {
        let mut depth = 1;
        let end = rest
            .char_indices()
            .find(|&(_, c)| {
                depth += match c {
                    '[' => 1,
                    ']' => -1,
                    _ => 0,
                };
                depth == 0
            })
            .map_or(rest.len(), |(at, _)| at + 1);
        s = rest[end..].trim_start();
    }
    s
}

fn ident(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// The paths that follow each `prefix` (`crate::`, `super::`), as their
/// first two segments; a group (`crate::{a::B, c}`) gives one per member.
fn paths<'t>(code: &'t str, prefix: &str) -> Vec<(&'t str, Option<&'t str>)> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(prefix) {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for member in group[..end].split(',') {
                let member = member.trim();
                let first = ident(member);
                let second = member[first.len()..].strip_prefix("::").map(ident);
                if !first.is_empty() {
                    out.push((first, second));
                }
            }
            continue;
        }
        let first = ident(rest);
        let second = rest[first.len()..].strip_prefix("::").map(ident);
        out.push((first, second));
    }
    out
}

/// `pub use a::b::{C, D as E};` in `text`: name → the first segment of its path.
fn reexports(text: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for statement in code(text).split(';') {
        let statement = statement.trim();
        let Some(path) = statement
            .strip_prefix("pub use ")
            .or_else(|| statement.strip_prefix("pub(crate) use "))
        else {
            continue;
        };
        let path = path.strip_prefix("crate::").unwrap_or(path);
        let module = ident(path).to_string();
        let names: Vec<&str> = match (path.find('{'), path.rfind("::")) {
            (Some(open), _) => path[open + 1..path.rfind('}').unwrap_or(path.len())]
                .split(',')
                .collect(),
            (None, Some(last)) => vec![&path[last + 2..]],
            (None, None) => vec![],
        };
        for name in names {
            let name = name.trim();
            let name = name.rsplit(" as ").next().unwrap_or(name).trim();
            if !name.is_empty() {
                map.insert(name.to_string(), module.clone());
            }
        }
    }
    map
}

struct Graph {
    /// (from, to) → a file that makes the edge.
    edges: BTreeMap<(String, String), String>,
}

impl Graph {
    fn add(&mut self, from: &str, to: &str, file: &str) {
        if from != to {
            self.edges
                .entry((from.to_string(), to.to_string()))
                .or_insert_with(|| file.to_string());
        }
    }

    /// A cycle, as the modules along it, if there is one.
    fn cycle(&self) -> Option<Vec<String>> {
        let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (from, to) in self.edges.keys() {
            next.entry(from).or_default().push(to);
        }
        // 0 = unvisited, 1 = on the path, 2 = done. Iterative DFS.
        let mut state: BTreeMap<&str, u8> = BTreeMap::new();
        for &start in next.keys() {
            if state.get(start).copied().unwrap_or(0) != 0 {
                continue;
            }
            let mut stack: Vec<(&str, usize)> = vec![(start, 0)];
            state.insert(start, 1);
            while let Some(&mut (node, ref mut i)) = stack.last_mut() {
                let children = next.get(node).map_or(&[][..], Vec::as_slice);
                if let Some(&child) = children.get(*i) {
                    *i += 1;
                    match state.get(child).copied().unwrap_or(0) {
                        0 => {
                            state.insert(child, 1);
                            stack.push((child, 0));
                        }
                        1 => {
                            let from = stack.iter().position(|&(n, _)| n == child).unwrap();
                            let mut cycle: Vec<String> =
                                stack[from..].iter().map(|&(n, _)| n.to_string()).collect();
                            cycle.push(child.to_string());
                            return Some(cycle);
                        }
                        _ => {}
                    }
                } else {
                    state.insert(node, 2);
                    stack.pop();
                }
            }
        }
        None
    }
}

/// The library's module graph: top-level modules (policy's submodules
/// folded into `policy`), and policy's own submodule graph.
fn graphs() -> (Graph, Graph, BTreeSet<String>) {
    let src = src();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let top: BTreeSet<String> = files
        .iter()
        .filter_map(|f| {
            let rel = f.strip_prefix(&src).unwrap();
            let first = rel.iter().next()?.to_str()?;
            let name = first.strip_suffix(".rs").unwrap_or(first);
            (!matches!(name, "lib" | "main" | "tests")).then(|| name.to_string())
        })
        .collect();
    let policy_children: BTreeSet<String> = files
        .iter()
        .filter_map(|f| {
            let rel = f.strip_prefix(src.join("policy")).ok()?;
            let first = rel.iter().next()?.to_str()?;
            let name = first.strip_suffix(".rs").unwrap_or(first);
            (name != "mod").then(|| name.to_string())
        })
        .collect();
    let root = reexports(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    let policy_mod = reexports(&std::fs::read_to_string(src.join("policy/mod.rs")).unwrap());

    let mut modules = Graph {
        edges: BTreeMap::new(),
    };
    let mut policy = Graph {
        edges: BTreeMap::new(),
    };
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        let parts: Vec<&str> = rel.iter().map(|p| p.to_str().unwrap()).collect();
        let first = parts[0].strip_suffix(".rs").unwrap_or(parts[0]);
        if matches!(first, "lib" | "main" | "tests") {
            // The root, the binary (which uses `ctxgate::` only) and the
            // crate's unit tests.
            continue;
        }
        let name = rel.display().to_string();
        let text = code(&std::fs::read_to_string(file).unwrap());
        // The policy submodule this file is in, if any (`None`: mod.rs).
        let child = (first == "policy" && parts.len() > 1)
            .then(|| parts[1].strip_suffix(".rs").unwrap_or(parts[1]))
            .filter(|&c| c != "mod");
        let policy_unit = |segment: Option<&str>| -> String {
            match segment {
                Some(s) if policy_children.contains(s) => format!("policy::{s}"),
                Some(s) => match policy_mod.get(s) {
                    Some(m) if policy_children.contains(m) => format!("policy::{m}"),
                    _ => "policy".to_string(),
                },
                None => "policy".to_string(),
            }
        };
        let from_policy = child.map_or("policy".to_string(), |c| format!("policy::{c}"));
        for (segment, next) in paths(&text, "crate::") {
            let to = if top.contains(segment) {
                segment.to_string()
            } else if let Some(module) = root.get(segment) {
                module.clone()
            } else {
                panic!("{name}: `crate::{segment}` is neither a module nor a root re-export");
            };
            modules.add(first, &to, &name);
            if first == "policy" && to == "policy" && child.is_some() {
                policy.add(&from_policy, &policy_unit(next), &name);
            }
        }
        // `super::` from a direct submodule of policy names policy itself.
        let direct = parts.len() == 2 || (parts.len() == 3 && parts[2] == "mod.rs");
        if child.is_some() && direct {
            for (segment, _) in paths(&text, "super::") {
                policy.add(&from_policy, &policy_unit(Some(segment)), &name);
            }
        }
        // The facade's own code (not its `mod` and `pub use` lines) may not
        // depend on its submodules: that would hide a cycle behind it.
        if first == "policy" && child.is_none() {
            for statement in text.split(';') {
                let s = without_attributes(statement);
                if s.starts_with("pub use") || s.starts_with("pub(crate) use") || s.contains("mod ")
                {
                    continue;
                }
                for c in &policy_children {
                    if statement.contains(&format!("{c}::")) {
                        policy.add("policy", &format!("policy::{c}"), &name);
                    }
                }
            }
        }
    }
    (modules, policy, top)
}

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

#[test]
fn every_module_has_a_layer() {
    let (_, _, top) = graphs();
    let missing: Vec<&String> = top.iter().filter(|m| rank(m).is_none()).collect();
    assert!(
        missing.is_empty(),
        "modules without a layer in tests/layering.rs (and ARCHITECTURE.md): {missing:?}"
    );
    let stale: Vec<&&str> = LAYERS
        .iter()
        .flat_map(|l| l.iter())
        .filter(|m| !top.contains(**m))
        .collect();
    assert!(
        stale.is_empty(),
        "layers name modules that do not exist: {stale:?}"
    );
}

#[test]
fn modules_use_only_lower_layers() {
    let (modules, _, _) = graphs();
    let mut wrong = Vec::new();
    for ((from, to), file) in &modules.edges {
        if let (Some(a), Some(b)) = (rank(from), rank(to)) {
            if b >= a {
                wrong.push(format!("{from} -> {to} (in src/{file})"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "edges against the layering of ARCHITECTURE.md:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_module_graph_has_no_cycle() {
    let (modules, policy, _) = graphs();
    assert!(
        modules.edges.len() > 20,
        "the graph looks empty: the parser is broken"
    );
    assert!(
        modules.edges.keys().any(|(from, _)| from == "cli"),
        "no edge from the command line: src/cli/ is not read"
    );
    assert_eq!(modules.cycle(), None, "a cycle between modules");
    let mut policy = policy;
    for &(from, to) in TOLERATED {
        policy.edges.remove(&(from.to_string(), to.to_string()));
    }
    assert_eq!(policy.cycle(), None, "a cycle between policy's submodules");
}

#[test]
fn the_policy_runtime_does_not_use_the_authoring_tools() {
    let (_, policy, _) = graphs();
    let tools = format!("policy::{POLICY_TOOLS}");
    let wrong: Vec<String> = policy
        .edges
        .iter()
        .filter(|((from, to), _)| *to == tools && *from != tools)
        .map(|((from, to), file)| format!("{from} -> {to} (in src/{file})"))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_parser_sees_edges_in_every_form() {
    let text = "use crate::{error::Result, model::Answer};\n\
                // use crate::gate::Gate;\n\
                let s = \"crate::trim\";\n\
                fn f() -> crate::limits::Limits { super::engine::x() }\n";
    let code = code(text);
    let found: Vec<&str> = paths(&code, "crate::").iter().map(|p| p.0).collect();
    assert_eq!(found, ["error", "model", "limits"]);
    assert_eq!(paths(&code, "super::"), [("engine", Some("x"))]);
    assert_eq!(
        without_attributes("\n#[cfg(any(test, feature = \"x\"))]\n#[doc(hidden)] pub use a::B"),
        "pub use a::B"
    );
    let map = reexports("pub use check::{check, CheckReport};\npub use error::{Error as E};");
    assert_eq!(map.get("CheckReport").map(String::as_str), Some("check"));
    assert_eq!(map.get("E").map(String::as_str), Some("error"));
}
