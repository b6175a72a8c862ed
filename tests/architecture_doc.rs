//! ARCHITECTURE.md stays a true map (as rust-analyzer's tidy tests keep its
//! docs): it is at most 15,000 bytes; it names every module of the library
//! (each `mod x;` of `src/lib.rs`, and each submodule a folder module or a
//! module with a folder declares, as `` `x::y` `` or a path such as
//! `src/policy/compose.rs`); every module path and every file path it names
//! exists; and its ```` ```layers ```` block is `tests/layering.rs`'s
//! `LAYERS`, layer for layer.
//!
//! A backticked path of lowercase names whose first is a top-level module
//! (`` `policy::compose` ``) must name a module; items are written otherwise
//! (`` `policy::decide()` ``, `` `engine::enforce` ``).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const MAX_BYTES: usize = 15_000;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn doc() -> String {
    read("ARCHITECTURE.md")
}

/// The names of `mod NAME;` declarations in `text` (with any attributes or
/// visibility before them); inline `mod NAME { … }` blocks are not files.
fn declared_modules(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut s = line.trim();
        if s.starts_with("//") {
            continue;
        }
        while let Some(rest) = s.strip_prefix("#[") {
            match rest.find(']') {
                Some(end) => s = rest[end + 1..].trim_start(),
                None => break,
            }
        }
        for vis in ["pub(crate) ", "pub(super) ", "pub "] {
            if let Some(rest) = s.strip_prefix(vis) {
                s = rest;
            }
        }
        if let Some(rest) = s.strip_prefix("mod ") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && rest[name.len()..].trim_start().starts_with(';') {
                out.push(name);
            }
        }
    }
    out
}

/// The file of top-level module `name` and its folder, if it has one.
fn module_file(src: &Path, name: &str) -> Option<(PathBuf, Option<PathBuf>)> {
    let folder = src.join(name);
    let file = src.join(format!("{name}.rs"));
    if folder.join("mod.rs").is_file() {
        Some((folder.join("mod.rs"), Some(folder)))
    } else if file.is_file() {
        Some((file, folder.is_dir().then_some(folder)))
    } else {
        None
    }
}

/// Top-level modules (`mod x;` in lib.rs).
fn top_modules() -> Vec<String> {
    declared_modules(&read("src/lib.rs"))
}

/// Every module the document must name: the top-level ones, and the direct
/// submodules of each that has a folder, as `x::y`.
fn required_modules() -> Vec<String> {
    let src = root().join("src");
    let mut out = Vec::new();
    for top in top_modules() {
        out.push(top.clone());
        let Some((file, Some(_))) = module_file(&src, &top) else {
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap();
        for sub in declared_modules(&text) {
            out.push(format!("{top}::{sub}"));
        }
    }
    out
}

/// Whether module path `a::b::c` exists as a file or folder under src/.
fn module_exists(path: &str) -> bool {
    let parts: Vec<&str> = path.split("::").collect();
    let rel = parts.join("/");
    let src = root().join("src");
    src.join(format!("{rel}.rs")).is_file() || src.join(&rel).join("mod.rs").is_file()
}

/// The texts between backticks (inline code spans) of `doc`, outside fenced
/// blocks.
fn code_spans(doc: &str) -> Vec<&str> {
    let mut spans = Vec::new();
    let mut fenced = false;
    for line in doc.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut parts = line.split('`');
        parts.next();
        while let Some(inside) = parts.next() {
            spans.push(inside);
            parts.next();
        }
    }
    spans
}

/// Whether the document names module `m` (`x` or `x::y`).
fn names_module(doc: &str, spans: &[&str], m: &str) -> bool {
    let rel = m.replace("::", "/");
    spans.contains(&m)
        || doc.contains(&format!("src/{rel}.rs"))
        || doc.contains(&format!("src/{rel}/"))
}

#[test]
fn the_document_is_at_most_15_000_bytes() {
    let len = doc().len();
    assert!(
        len <= MAX_BYTES,
        "ARCHITECTURE.md is {len} bytes; the limit is {MAX_BYTES}: say less, or move figures to BENCHMARKS.md"
    );
}

#[test]
fn every_module_is_named() {
    let doc = doc();
    let spans = code_spans(&doc);
    let missing: Vec<String> = required_modules()
        .into_iter()
        .filter(|m| !names_module(&doc, &spans, m))
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md does not name these modules (write `x::y` or src/x/y.rs): {missing:?}"
    );
}

#[test]
fn every_module_path_named_exists() {
    let doc = doc();
    let tops: BTreeSet<String> = top_modules().into_iter().collect();
    let is_name = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    };
    let mut stale = Vec::new();
    for span in code_spans(&doc) {
        let parts: Vec<&str> = span.split("::").collect();
        if parts.len() < 2 || !parts.iter().all(|p| is_name(p)) || !tops.contains(parts[0]) {
            continue;
        }
        if !module_exists(span) {
            stale.push(span.to_string());
        }
    }
    stale.sort();
    stale.dedup();
    assert!(
        stale.is_empty(),
        "ARCHITECTURE.md names module paths that do not exist (an item is written `a::f()`): {stale:?}"
    );
}

#[test]
fn every_file_path_named_exists() {
    let doc = doc();
    let prefixes = [
        "src/",
        "tests/",
        "policies/",
        "docs/",
        "benches/",
        "fuzz/",
        "bindings/",
        "examples/",
    ];
    let mut stale = Vec::new();
    for (at, _) in doc.match_indices('/') {
        // The word the slash is in: a run of path characters around it.
        let is_path = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/');
        let start = doc[..at].rfind(|c: char| !is_path(c)).map_or(0, |i| i + 1);
        let end = doc[at..]
            .find(|c: char| !is_path(c))
            .map_or(doc.len(), |i| at + i);
        let word = doc[start..end].trim_end_matches('.');
        if !prefixes.iter().any(|p| word.starts_with(p)) || doc[..start].ends_with("::") {
            continue;
        }
        if !root().join(word).exists() {
            stale.push(word.to_string());
        }
    }
    stale.sort();
    stale.dedup();
    assert!(
        stale.is_empty(),
        "ARCHITECTURE.md names files that do not exist: {stale:?}"
    );
}

/// The layers of the document's ```` ```layers ```` block: one a line,
/// modules separated by spaces, lowest first.
fn doc_layers(doc: &str) -> Vec<Vec<String>> {
    let start = doc
        .find("```layers\n")
        .expect("ARCHITECTURE.md has a ```layers block");
    let body = &doc[start + "```layers\n".len()..];
    let end = body.find("```").expect("the ```layers block is closed");
    body[..end]
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

/// `LAYERS` in tests/layering.rs: each `&[...]` line of the constant.
fn test_layers() -> Vec<Vec<String>> {
    let text = read("tests/layering.rs");
    let start = text
        .find("const LAYERS")
        .expect("tests/layering.rs defines LAYERS");
    let body = &text[start..];
    let body = &body[body.find("= &[").expect("LAYERS = &[") + 4..];
    let end = body.find("\n];").expect("LAYERS ends with `];`");
    body[..end]
        .lines()
        .map(|l| l.split("//").next().unwrap_or("").trim())
        .filter(|l| l.starts_with("&["))
        .map(|l| {
            l.split('"')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect()
        })
        .collect()
}

#[test]
fn the_layer_list_is_layerings() {
    let doc = doc_layers(&doc());
    let test = test_layers();
    assert!(!test.is_empty(), "no layers read from tests/layering.rs");
    let flat = |l: &[Vec<String>]| -> BTreeSet<String> { l.iter().flatten().cloned().collect() };
    let (d, t) = (flat(&doc), flat(&test));
    let missing: Vec<&String> = t.difference(&d).collect();
    let extra: Vec<&String> = d.difference(&t).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "ARCHITECTURE.md's layers lack {missing:?} and have {extra:?} that tests/layering.rs's LAYERS does not"
    );
    for (i, (a, b)) in doc.iter().zip(&test).enumerate() {
        let (mut a, mut b) = (a.clone(), b.clone());
        a.sort();
        b.sort();
        assert_eq!(
            a,
            b,
            "layer {} (lowest is 1): ARCHITECTURE.md has {a:?}, tests/layering.rs has {b:?}",
            i + 1
        );
    }
    assert_eq!(doc.len(), test.len(), "the number of layers differs");
    // Every top-level module but the unit tests has a layer.
    let unlayered: Vec<String> = top_modules()
        .into_iter()
        .filter(|m| m != "tests" && !t.contains(m))
        .collect();
    assert!(
        unlayered.is_empty(),
        "modules of src/lib.rs in no layer: {unlayered:?}"
    );
}

/// BENCHMARKS.md holds today's figures, not their history.
#[test]
fn the_benchmarks_are_at_most_30_000_bytes() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/BENCHMARKS.md");
    let len = std::fs::read(path).unwrap().len();
    assert!(
        len <= 30_000,
        "BENCHMARKS.md is {len} bytes; the limit is 30,000: keep today's figures, leave history to git"
    );
}
