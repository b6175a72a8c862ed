//! SECURITY.md points only at tests and files that exist, so a renamed test
//! cannot leave a guarantee citing nothing.
//!
//! A citation is a backticked path of lowercase names:
//! - `` `file::test_name` `` where `file` is a test file, `tests/file.rs`
//!   (or a module of it under `tests/file/`) or `src/tests/file.rs`: it
//!   must hold `fn test_name`;
//! - `` `module::path::tests::test_name` ``: the module's file under `src/`
//!   (or `src/cli/`, the binary's modules) must hold `fn test_name`, and
//!   `` `module::path::tests` `` a `mod tests`.
//!
//! Other paths of that shape whose first name is a module of `src/`
//! (`` `read::scan_nesting` ``, `` `fill::cut_content` ``) name code: their
//! last name must be a `fn` or `mod` of `src/`. A backticked `tests/…`,
//! `src/…` or `fuzz/…` path must exist (a test case folder may be named by
//! its files' stem; a trailing `*` is a prefix).

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// The backticked spans of `text`.
fn code_spans(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// Whether `span` is a `::` path of lowercase names (`a::b_c`).
fn is_path(span: &str) -> bool {
    let parts: Vec<&str> = span.split("::").collect();
    parts.len() >= 2
        && parts.iter().all(|p| {
            p.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
                && p.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        })
}

/// Whether `source` defines `fn name`.
fn defines_fn(source: &str, name: &str) -> bool {
    let needle = format!("fn {name}");
    source.match_indices(&needle).any(|(at, _)| {
        let after = source[at + needle.len()..].chars().next();
        let before = source[..at].chars().next_back();
        matches!(after, Some('(' | '<')) && !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// The `.rs` files under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The files of test file `stem`: `tests/stem.rs` and its modules, or
/// `src/tests/stem.rs`. Empty when `stem` names no test file.
fn test_files(stem: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for file in [
        root().join("tests").join(format!("{stem}.rs")),
        root().join("src/tests").join(format!("{stem}.rs")),
    ] {
        if file.is_file() {
            files.push(file);
        }
    }
    if !files.is_empty() {
        rust_files(&root().join("tests").join(stem), &mut files);
    }
    files
}

/// The files of module `path` (`serve::http`) under `src/` or `src/cli/`:
/// `a/b.rs` or `a/b/mod.rs`, and its `tests.rs` if it has a folder.
fn module_files(path: &[&str]) -> Vec<PathBuf> {
    let rel: PathBuf = path.iter().collect();
    let mut files = Vec::new();
    for base in [root().join("src"), root().join("src/cli")] {
        let dir = base.join(&rel);
        for file in [
            dir.with_extension("rs"),
            dir.join("mod.rs"),
            dir.join("tests.rs"),
        ] {
            if file.is_file() {
                files.push(file);
            }
        }
    }
    files
}

/// What is wrong with citation `span`, if it is a test citation.
fn check_citation(span: &str) -> Option<String> {
    let parts: Vec<&str> = span.split("::").collect();
    if let Some(at) = parts.iter().position(|p| *p == "tests") {
        if at == 0 {
            return None;
        }
        let files = module_files(&parts[..at]);
        if files.is_empty() {
            return Some(format!("`{span}`: no module `{}`", parts[..at].join("::")));
        }
        let sources: Vec<String> = files.iter().filter_map(|f| read(f)).collect();
        return match &parts[at + 1..] {
            [] if sources.iter().any(|s| s.contains("mod tests")) => None,
            [] => Some(format!("`{span}`: {files:?} have no `mod tests`")),
            [name] if sources.iter().any(|s| defines_fn(s, name)) => None,
            [name] => Some(format!("`{span}`: no `fn {name}` in {files:?}")),
            _ => Some(format!(
                "`{span}`: a test is cited as `module::tests::name`"
            )),
        };
    }
    let [stem, name] = parts[..] else {
        return None;
    };
    let files = test_files(stem);
    if files.is_empty() {
        return None;
    }
    if files
        .iter()
        .filter_map(|f| read(f))
        .any(|s| defines_fn(&s, name))
    {
        None
    } else {
        Some(format!("`{span}`: no `fn {name}` in {files:?}"))
    }
}

/// What is wrong with code path `span` (not a test citation), if its first
/// name is a module somewhere under `src/`.
fn check_code(span: &str, files: &[PathBuf], sources: &[String]) -> Option<String> {
    let parts: Vec<&str> = span.split("::").collect();
    let first = parts[0];
    let is_module = files.iter().any(|f| {
        f.file_stem().is_some_and(|s| s == first)
            || f.parent()
                .and_then(|d| d.file_name())
                .is_some_and(|d| d == first)
    });
    if !is_module || parts.contains(&"tests") || !test_files(first).is_empty() {
        return None;
    }
    let last = parts[parts.len() - 1];
    let defined = sources.iter().any(|s| {
        defines_fn(s, last)
            || s.contains(&format!("mod {last};"))
            || s.contains(&format!("mod {last} {{"))
    });
    (!defined).then(|| format!("`{span}`: no `fn {last}` or `mod {last}` in src/"))
}

/// What is wrong with file path `span`, if it names a file of the repository.
fn check_file(span: &str) -> Option<String> {
    if !["tests/", "src/", "fuzz/"]
        .iter()
        .any(|p| span.starts_with(p))
        || span.contains(' ')
    {
        return None;
    }
    let path = root().join(span.trim_end_matches('*').trim_end_matches('/'));
    if path.exists() {
        return None;
    }
    let (dir, stem) = (path.parent()?, path.file_name()?.to_str()?);
    let prefix = if span.ends_with('*') {
        stem.to_string()
    } else {
        format!("{stem}.")
    };
    let found = std::fs::read_dir(dir).ok()?.flatten().any(|entry| {
        entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.starts_with(&prefix))
    });
    (!found).then(|| format!("`{span}`: no such file"))
}

#[test]
fn every_test_and_file_security_md_cites_exists() {
    let doc = read(&root().join("SECURITY.md")).expect("SECURITY.md");
    let spans = code_spans(&doc);
    let citations: Vec<&str> = spans
        .iter()
        .copied()
        .filter(|s| is_path(s))
        .filter(|s| {
            s.split("::").any(|p| p == "tests")
                || !test_files(s.split("::").next().unwrap()).is_empty()
        })
        .collect();
    assert!(
        citations.len() > 100,
        "found only {} test citations: {citations:?}",
        citations.len()
    );
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let sources: Vec<String> = files.iter().filter_map(|f| read(f)).collect();
    let mut problems: Vec<String> = spans
        .iter()
        .filter(|s| is_path(s))
        .filter_map(|s| check_citation(s))
        .chain(
            spans
                .iter()
                .filter(|s| is_path(s))
                .filter_map(|s| check_code(s, &files, &sources)),
        )
        .chain(spans.iter().filter_map(|s| check_file(s)))
        .collect();
    problems.sort();
    problems.dedup();
    assert!(
        problems.is_empty(),
        "SECURITY.md cites what does not exist:\n{}",
        problems.join("\n")
    );
}

/// The checker finds what it must: a real test, a missing one, a unit test
/// in a binary module, and a code path it must leave alone.
#[test]
fn the_checker_tells_a_test_from_code_and_a_missing_test() {
    assert_eq!(
        check_citation("hostile::nesting_100000_deep_is_refused_before_any_recursion"),
        None
    );
    assert!(check_citation("hostile::no_such_test_anywhere").is_some());
    assert_eq!(
        check_citation("serve::http::tests::only_loopback_names_and_addresses_are_local_hosts"),
        None
    );
    assert!(check_citation("serve::http::tests::no_such_test_anywhere").is_some());
    assert!(check_citation("no_such_module::tests::a_test").is_some());
    assert_eq!(check_citation("read::scan_nesting"), None);
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let sources: Vec<String> = files.iter().filter_map(|f| read(f)).collect();
    assert_eq!(check_code("read::scan_nesting", &files, &sources), None);
    assert!(check_code("read::no_such_reader", &files, &sources).is_some());
    assert_eq!(check_code("stacker::maybe_grow", &files, &sources), None);
    assert_eq!(check_file("tests/cases/check/v01-duplicate-key"), None);
    assert!(check_file("tests/no_such_file.rs").is_some());
    assert!(!defines_fn("fn a_test_longer() {}", "a_test"));
    assert!(defines_fn("    fn a_test() {}", "a_test"));
}
