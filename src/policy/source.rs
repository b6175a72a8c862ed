//! Policy files: reading them from disk and turning regorus's error text
//! into `file:line:col` and a one-line message. No evaluation here.

use std::path::Path;

use crate::error::{Error, Result};

/// One policy file as loaded: the name used in every message and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyFile {
    /// The name errors use (the path as given, or `<default>` for the embedded default).
    pub name: String,
    /// The Rego source.
    pub source: String,
}

/// How deep brackets of any kind (`[`, `{`, `(`, counted together) may nest
/// in a policy source. regorus's parser takes time exponential in the
/// nesting of `[` and `{` (measured, release build: `[` 12 levels 0.45 s, 16
/// levels 7 s; `{` 12 levels 0.2 s, 16 levels 4 s, 24 levels did not end in
/// 15 s), so a deeper source is refused before regorus sees it. The policies
/// shipped and tested here nest at most 7.
pub const MAX_BRACKET_DEPTH: usize = 10;

impl PolicyFile {
    /// Refuses a source whose brackets nest deeper than
    /// [`MAX_BRACKET_DEPTH`] (outside strings and comments), at the first
    /// one too deep. The scan is linear and keeps no stack: a closing
    /// bracket of any kind ends the innermost level (a mismatch is
    /// regorus's to report).
    pub(crate) fn check_bracket_depth(&self) -> Result<()> {
        let (mut line, mut col, mut depth) = (1, 0, 0usize);
        let (mut string, mut raw, mut comment, mut escaped) = (false, false, false, false);
        for c in self.source.chars() {
            col += 1;
            match c {
                '\n' => {
                    (line, col, comment) = (line + 1, 0, false);
                    continue;
                }
                _ if comment => {}
                _ if string => match c {
                    _ if escaped => escaped = false,
                    '\\' => escaped = true,
                    '"' => string = false,
                    _ => {}
                },
                '`' => raw = !raw,
                _ if raw => {}
                '"' => string = true,
                '#' => comment = true,
                '[' | '{' | '(' => {
                    depth += 1;
                    if depth > MAX_BRACKET_DEPTH {
                        return Err(Error::Policy {
                            location: format!("{}:{line}:{col}", self.name),
                            message: format!(
                                "`{c}` nests deeper than {MAX_BRACKET_DEPTH} levels of brackets (`[`, `{{` and `(` counted together); regorus parses nested brackets in time exponential in their depth, so ctxgate refuses them: flatten the expression (into helper rules, say)"
                            ),
                        });
                    }
                }
                ']' | '}' | ')' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        Ok(())
    }

    /// Whether this is a test file (`*_test.rego`, or the embedded default's
    /// tests): never part of a policy,
    /// only of `ctxgate policy test`.
    pub fn is_test(&self) -> bool {
        is_test_name(&self.name)
    }
}

/// The name of the embedded default policy (no file of that name need exist).
pub(crate) const DEFAULT_NAME: &str = "<default>";
/// The name of the embedded default's tests.
pub(crate) const DEFAULT_TEST_NAME: &str = "<default-tests>";

pub(crate) fn is_test_name(name: &str) -> bool {
    name.ends_with("_test.rego") || name == DEFAULT_TEST_NAME
}

/// Reads a `.rego` file, or every `*.rego` file of a directory (not
/// recursive), sorted by name. Test files (`*_test.rego`) are included only
/// when `tests` is set. A directory without policy files is an error.
pub fn load_path(path: &Path, tests: bool) -> Result<Vec<PolicyFile>> {
    let io = |source| Error::Io {
        path: path.display().to_string(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    let mut paths = Vec::new();
    if meta.is_dir() {
        for entry in std::fs::read_dir(path).map_err(io)? {
            let entry = entry.map_err(io)?;
            let p = entry.path();
            let name = p.to_string_lossy().to_string();
            if p.is_file() && name.ends_with(".rego") && (tests || !is_test_name(&name)) {
                paths.push(p);
            }
        }
        paths.sort();
        if paths.is_empty() {
            return Err(Error::Policy {
                location: path.display().to_string(),
                message: "the directory has no `.rego` files".to_string(),
            });
        }
    } else {
        paths.push(path.to_path_buf());
    }
    paths
        .into_iter()
        .map(|p| {
            let source = std::fs::read_to_string(&p).map_err(|source| Error::Io {
                path: p.display().to_string(),
                source,
            })?;
            Ok(PolicyFile {
                name: p.display().to_string(),
                source,
            })
        })
        .collect()
}

/// A regorus error split into where and what: regorus writes
/// `\n--> file:line:col\n  |\n…\nerror: message`; anything else is kept whole.
pub(crate) fn split_regorus_error(err: &anyhow::Error) -> (Option<String>, String) {
    let text = format!("{err:#}");
    let location = text
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("--> "))
        .map(|l| l.trim().to_string());
    let message = text
        .lines()
        .find_map(|l| l.strip_prefix("error: "))
        .map(|m| m.trim_end_matches(':').trim().to_string())
        .unwrap_or_else(|| text.trim().to_string());
    (location, tidy(&message))
}

/// regorus's messages, lowercased at the start and with functions named
/// in backticks the same way however they were reported.
fn tidy(message: &str) -> String {
    let name = message
        .split_once("Unknown function: '")
        .and_then(|(_, rest)| rest.split('\'').next())
        .or_else(|| message.strip_prefix("could not find function "));
    if let Some(name) = name {
        return format!("unknown function `{name}`");
    }
    if message.starts_with("execution exceeded time limit") {
        let limit = message
            .split_once("limit=")
            .and_then(|(_, rest)| rest.trim_end_matches(')').strip_suffix("ns"))
            .and_then(|ns| ns.parse::<u64>().ok());
        return match limit {
            Some(ns) => format!(
                "the evaluation ran longer than the limit of {} ms (a runaway rule?)",
                ns / 1_000_000
            ),
            None => "the evaluation ran longer than the time limit (a runaway rule?)".to_string(),
        };
    }
    message.to_string()
}

/// Whether regorus stopped an evaluation at its time limit (its error is
/// untyped: this is the one place its text is matched for that).
pub(crate) fn is_time_limit(err: &anyhow::Error) -> bool {
    format!("{err:#}").contains("execution exceeded time limit")
}

/// A load or compile error as [`Error::Policy`].
pub(crate) fn policy_error(err: &anyhow::Error, file: &str) -> Error {
    let (location, message) = split_regorus_error(err);
    Error::Policy {
        location: location.unwrap_or_else(|| file.to_string()),
        message,
    }
}

/// An evaluation error as [`Error::PolicyEval`], with the place in the
/// message when regorus gives one.
pub(crate) fn eval_error(err: &anyhow::Error, rule: &str) -> Error {
    let (location, message) = split_regorus_error(err);
    Error::PolicyEval {
        rule: rule.to_string(),
        message: match location {
            Some(location) => format!("{location}: {message}"),
            None => message,
        },
    }
}
