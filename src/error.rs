//! The library's one error type. Every message names what is wrong, where
//! (a JSON pointer, a line and column, or a file:line:col), and what to do.
//! No message carries an element's title, content, url or attribute value.
//!
//! Callers decide by [`Error::kind`], never by matching messages or listing
//! variants: [`crate::wire::codes`] gives each kind's exit code, JSON-RPC
//! code, HTTP status and Python exception class. Positions are read with
//! [`Error::line`], [`Error::column`] and [`Error::pointer`].

use std::fmt;

use crate::finding::Finding;

/// What kind of failure an [`Error`] is: the one thing a caller needs to
/// decide what to do. New kinds may be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input cannot be read as what it claims to be: not JSON, not
    /// UTF-8, not a tree of the import format.
    InvalidInput,
    /// The answer was read but does not conform to the protocol (or a 0.1
    /// answer cannot be upgraded).
    NotConforming,
    /// The input passes one of the [`crate::Limits`].
    OverLimit,
    /// Not even the root and the kept elements fit the budget.
    BudgetUnreachable,
    /// The policy failed to load, to compile or to evaluate (fail closed).
    Policy,
    /// The request ran past its deadline.
    Deadline,
    /// Reading or writing a file.
    Io,
    /// The request (or the command line) asks for something that cannot be
    /// done: an unknown target or format, a budget of 0, tokens without the
    /// `tokens` feature.
    Usage,
    /// A bug in ctxgate: an invariant did not hold; nothing was sent.
    Internal,
}

impl ErrorKind {
    /// Every kind, in the order above.
    pub const ALL: &'static [ErrorKind] = &[
        ErrorKind::InvalidInput,
        ErrorKind::NotConforming,
        ErrorKind::OverLimit,
        ErrorKind::BudgetUnreachable,
        ErrorKind::Policy,
        ErrorKind::Deadline,
        ErrorKind::Io,
        ErrorKind::Usage,
        ErrorKind::Internal,
    ];
}

/// Everything that can go wrong. On any error, nothing may be sent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input is not JSON.
    #[error("invalid JSON at line {line}, column {column}: {message}")]
    Json {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What serde_json found.
        message: String,
    },
    /// The input is larger than [`crate::Limits::max_input_bytes`].
    #[error(
        "the input is {size} bytes; the limit is {limit} (`max_input_bytes`, `--max-input-bytes`)"
    )]
    InputTooLarge {
        /// The input's size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The tree is deeper than [`crate::Limits::max_depth`].
    #[error("the tree is deeper than the limit of {limit} elements {place} (`max_depth`, `--max-depth`)")]
    TooDeep {
        /// The limit.
        limit: usize,
        /// Where the limit was passed.
        place: DepthPlace,
    },
    /// The tree has more elements than [`crate::Limits::max_elements`].
    #[error("the tree has more than {limit} elements (`max_elements`, `--max-elements`)")]
    TooManyElements {
        /// The limit.
        limit: usize,
    },
    /// The tree has more distinct element projections than
    /// [`crate::Limits::max_projections`].
    #[error("the tree has more than {limit} distinct element projections for the policy to decide (`max_projections`, `--max-projections`)")]
    TooManyProjections {
        /// The limit.
        limit: usize,
    },
    /// One element carries more text than [`crate::Limits::max_content_bytes`].
    #[error("element at {pointer} carries {size} bytes of title, url and content; the limit is {limit} (`max_content_bytes`, `--max-content-bytes`)")]
    ContentTooLarge {
        /// The element's JSON pointer.
        pointer: String,
        /// Its size in bytes.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The answer does not conform to protocol 0.2.0.
    #[error("the answer does not conform to protocol 0.2.0: {}", summary(.findings))]
    NotConforming {
        /// Every finding (errors and warnings).
        findings: Vec<Finding>,
    },
    /// A 0.1 answer that cannot be upgraded.
    #[error("cannot upgrade the 0.1 answer: {message} at {pointer}")]
    Upgrade {
        /// Where.
        pointer: String,
        /// What is wrong.
        message: String,
    },
    /// A policy failed to load or to compile.
    #[error("policy {location}: {message}")]
    Policy {
        /// `file:line:col`, or the file alone.
        location: String,
        /// What is wrong, with a hint where there is one.
        message: String,
    },
    /// A policy failed while it was evaluated; nothing is sent.
    #[error("policy evaluation failed ({rule}): {message}")]
    PolicyEval {
        /// The rule being evaluated.
        rule: String,
        /// What regorus reported.
        message: String,
    },
    /// Not even the root and the kept skeleton fit the budget.
    #[error("the budget of {budget} {unit} cannot hold the root and the kept elements; the smallest budget that would work is {needed} {unit}")]
    BudgetUnreachable {
        /// The budget asked for.
        budget: usize,
        /// The smallest budget that works.
        needed: usize,
        /// `bytes` or `tokens`.
        unit: &'static str,
    },
    /// The request names a target that is not an element of the answer.
    #[error("target `{id}` is not an element of this answer")]
    UnknownTarget {
        /// The id the request named.
        id: String,
    },
    /// A budget (the policy's or the request's) of 0.
    #[error("a budget must be at least 1")]
    ZeroBudget,
    /// A token budget, in a build without the `tokens` feature (or one whose
    /// pre-tokenizer does not load, which a build that passed its tests cannot
    /// be).
    #[error("token budgets need ctxgate built with the `tokens` feature; use a byte budget")]
    TokensUnavailable,
    /// An import format name that is not one of [`crate::import::Format::ALL`].
    #[error("unknown import format `{word}`; expected one of {expected}")]
    UnknownFormat {
        /// The name given.
        word: String,
        /// The known names, comma-separated.
        expected: String,
    },
    /// The output would pass its budget: the fitter accepted a state it had
    /// not measured. A bug; nothing is sent.
    #[error("internal error: output of {size} {unit} over the budget of {limit}; nothing is sent")]
    OverBudget {
        /// The output's size.
        size: usize,
        /// The budget.
        limit: usize,
        /// `bytes` or `tokens`.
        unit: &'static str,
    },
    /// An OS accessibility tree that cannot be imported (`ctxgate import`).
    #[error("cannot import the `{format}` input{}: {message}", at_line(*.line))]
    Import {
        /// The format being imported (`ax-dump`, `uia-json`, …).
        format: &'static str,
        /// 1-based line of the input, when the problem is on one line.
        line: Option<usize>,
        /// What is wrong, and what to do.
        message: String,
    },
    /// The request ran past its deadline ([`crate::Request::timeout`],
    /// default [`crate::DEFAULT_TIMEOUT`]); nothing is sent.
    #[error("the request passed its deadline of {} ms while {stage}; nothing was sent (raise the request's timeout, `--timeout`, or send a smaller tree)", .limit.as_millis())]
    Deadline {
        /// The stage that was running.
        stage: Stage,
        /// The deadline the request had.
        limit: std::time::Duration,
    },
    /// Reading or writing a file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
}

/// Where a tree passed [`crate::Limits::max_depth`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DepthPlace {
    /// At the element with this JSON pointer.
    Element(String),
    /// Where the JSON nesting passes `nesting` levels (two per element),
    /// found by the byte scan before any element is read.
    Nesting {
        /// The most JSON nesting the depth limit allows.
        nesting: usize,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
    },
    /// At the root that upgrading a 0.1 answer synthesizes.
    SynthesizedRoot,
}

impl fmt::Display for DepthPlace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DepthPlace::Element(pointer) => write!(f, "(at {pointer})"),
            DepthPlace::Nesting {
                nesting,
                line,
                column,
            } => write!(
                f,
                "(JSON nesting passes {nesting} levels at line {line}, column {column})"
            ),
            DepthPlace::SynthesizedRoot => f.write_str("(at the synthesized root)"),
        }
    }
}

impl Error {
    /// The kind of failure; decide by this, not by the variant or the message.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Json { .. } | Error::Import { .. } => ErrorKind::InvalidInput,
            Error::InputTooLarge { .. }
            | Error::TooDeep { .. }
            | Error::TooManyElements { .. }
            | Error::TooManyProjections { .. }
            | Error::ContentTooLarge { .. } => ErrorKind::OverLimit,
            Error::NotConforming { .. } | Error::Upgrade { .. } => ErrorKind::NotConforming,
            Error::Policy { .. } | Error::PolicyEval { .. } => ErrorKind::Policy,
            Error::BudgetUnreachable { .. } => ErrorKind::BudgetUnreachable,
            Error::UnknownTarget { .. }
            | Error::ZeroBudget
            | Error::TokensUnavailable
            | Error::UnknownFormat { .. } => ErrorKind::Usage,
            Error::OverBudget { .. } => ErrorKind::Internal,
            Error::Deadline { .. } => ErrorKind::Deadline,
            Error::Io { .. } => ErrorKind::Io,
        }
    }

    /// The 1-based line of the input where the problem is, when it is on
    /// one line.
    pub fn line(&self) -> Option<usize> {
        match self {
            Error::Json { line, .. }
            | Error::TooDeep {
                place: DepthPlace::Nesting { line, .. },
                ..
            } => Some(*line),
            Error::Import { line, .. } => *line,
            _ => None,
        }
    }

    /// The 1-based column of the input where the problem is, when known.
    pub fn column(&self) -> Option<usize> {
        match self {
            Error::Json { column, .. }
            | Error::TooDeep {
                place: DepthPlace::Nesting { column, .. },
                ..
            } => Some(*column),
            _ => None,
        }
    }

    /// The JSON pointer of the element or field at fault, when the error
    /// names one. A [`Error::NotConforming`]'s findings carry their own.
    pub fn pointer(&self) -> Option<&str> {
        match self {
            Error::ContentTooLarge { pointer, .. }
            | Error::Upgrade { pointer, .. }
            | Error::TooDeep {
                place: DepthPlace::Element(pointer),
                ..
            } => Some(pointer),
            _ => None,
        }
    }

    /// For a policy that failed to load or compile ([`Error::Policy`]): the
    /// file, and the 1-based line and column when the error names them (its
    /// location is `file:line:col` or the file alone). `None` for any other
    /// error.
    pub fn policy_location(&self) -> Option<(&str, Option<usize>, Option<usize>)> {
        let Error::Policy { location, .. } = self else {
            return None;
        };
        Some(split_location(location))
    }

    /// Every finding, for [`Error::NotConforming`]; empty otherwise.
    pub fn findings(&self) -> &[Finding] {
        match self {
            Error::NotConforming { findings } => findings,
            _ => &[],
        }
    }
}

/// A policy location, `file:line:col` or the file alone, as its parts.
pub(crate) fn split_location(location: &str) -> (&str, Option<usize>, Option<usize>) {
    let mut parts = location.rsplitn(3, ':');
    let column = parts.next().and_then(|c| c.parse().ok());
    let line = parts.next().and_then(|l| l.parse().ok());
    match (parts.next(), line, column) {
        (Some(file), Some(line), Some(column)) => (file, Some(line), Some(column)),
        _ => (location, None, None),
    }
}

/// The pipeline stage that was running when a deadline passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stage {
    /// Reading the answer's bytes (and upgrading a 0.1 answer).
    Read,
    /// Checking conformance.
    Check,
    /// Asking the policy about each element.
    Decide,
    /// Fitting the output to the budget.
    Fill,
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stage::Read => "reading",
            Stage::Check => "checking",
            Stage::Decide => "deciding",
            Stage::Fill => "fitting to the budget",
        })
    }
}

fn summary(findings: &[Finding]) -> String {
    let errors: Vec<&Finding> = findings.iter().filter(|f| f.is_error()).collect();
    match errors.as_slice() {
        [] => "no errors".to_string(),
        [one] => one.to_string(),
        [first, rest @ ..] => format!("{first} (and {} more)", rest.len()),
    }
}

fn at_line(line: Option<usize>) -> String {
    match line {
        None => String::new(),
        Some(line) => format!(" at line {line}"),
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    /// The CLI's table test (`src/cli/mod.rs`) lists every variant; this
    /// match, exhaustive inside the crate, stops compiling when a variant is
    /// added, so that the table and [`Error::kind`] are revisited.
    #[allow(dead_code)]
    fn every_variant_is_in_the_cli_table(err: &Error) -> usize {
        match err {
            Error::Json { .. }
            | Error::InputTooLarge { .. }
            | Error::TooDeep { .. }
            | Error::TooManyElements { .. }
            | Error::TooManyProjections { .. }
            | Error::ContentTooLarge { .. }
            | Error::NotConforming { .. }
            | Error::Upgrade { .. }
            | Error::Policy { .. }
            | Error::PolicyEval { .. }
            | Error::BudgetUnreachable { .. }
            | Error::UnknownTarget { .. }
            | Error::ZeroBudget
            | Error::TokensUnavailable
            | Error::UnknownFormat { .. }
            | Error::OverBudget { .. }
            | Error::Import { .. }
            | Error::Deadline { .. }
            | Error::Io { .. } => 19,
        }
    }

    /// [`ErrorKind::ALL`] holds every kind: this match, exhaustive inside the
    /// crate, stops compiling when a kind is added.
    #[test]
    fn every_kind_is_in_all() {
        let index = |kind: ErrorKind| match kind {
            ErrorKind::InvalidInput => 0,
            ErrorKind::NotConforming => 1,
            ErrorKind::OverLimit => 2,
            ErrorKind::BudgetUnreachable => 3,
            ErrorKind::Policy => 4,
            ErrorKind::Deadline => 5,
            ErrorKind::Io => 6,
            ErrorKind::Usage => 7,
            ErrorKind::Internal => 8,
        };
        for (n, kind) in ErrorKind::ALL.iter().enumerate() {
            assert_eq!(index(*kind), n);
        }
        assert_eq!(ErrorKind::ALL.len(), 9);
    }

    #[test]
    fn positions_are_options() {
        let json = Error::Json {
            line: 3,
            column: 7,
            message: "expected value".into(),
        };
        assert_eq!(
            (json.line(), json.column(), json.pointer()),
            (Some(3), Some(7), None)
        );
        let import = |line| Error::Import {
            format: "ax-dump",
            line,
            message: "the input has no node lines".into(),
        };
        assert_eq!(import(None).line(), None);
        assert_eq!(
            import(None).to_string(),
            "cannot import the `ax-dump` input: the input has no node lines"
        );
        assert_eq!(import(Some(4)).line(), Some(4));
        assert_eq!(
            import(Some(4)).to_string(),
            "cannot import the `ax-dump` input at line 4: the input has no node lines"
        );
        let content = Error::ContentTooLarge {
            pointer: "/root/children/0".into(),
            size: 2,
            limit: 1,
        };
        assert_eq!(content.pointer(), Some("/root/children/0"));
        assert_eq!(content.line(), None);
        let nesting = Error::TooDeep {
            limit: 1024,
            place: DepthPlace::Nesting {
                nesting: 2113,
                line: 1,
                column: 40,
            },
        };
        assert_eq!((nesting.line(), nesting.column()), (Some(1), Some(40)));
        assert_eq!(nesting.to_string(), "the tree is deeper than the limit of 1024 elements (JSON nesting passes 2113 levels at line 1, column 40) (`max_depth`, `--max-depth`)");
        let element = Error::TooDeep {
            limit: 3,
            place: DepthPlace::Element("/root/children/0/children/0".into()),
        };
        assert_eq!(element.pointer(), Some("/root/children/0/children/0"));
        assert_eq!(element.to_string(), "the tree is deeper than the limit of 3 elements (at /root/children/0/children/0) (`max_depth`, `--max-depth`)");
    }

    #[test]
    fn policy_locations_split_into_file_line_and_column() {
        let policy = |location: &str| Error::Policy {
            location: location.into(),
            message: "unexpected token".into(),
        };
        assert_eq!(
            policy("policies/a.rego:3:14").policy_location(),
            Some(("policies/a.rego", Some(3), Some(14)))
        );
        assert_eq!(
            policy("C:\\p\\a.rego:3:14").policy_location(),
            Some(("C:\\p\\a.rego", Some(3), Some(14)))
        );
        assert_eq!(
            policy("policies/").policy_location(),
            Some(("policies/", None, None))
        );
        assert_eq!(
            policy("a:b.rego").policy_location(),
            Some(("a:b.rego", None, None))
        );
        assert_eq!(Error::ZeroBudget.policy_location(), None);
    }

    /// The typed variants that replaced `Error::Request(String)` keep its
    /// messages exactly.
    #[test]
    fn request_errors_keep_their_messages() {
        for (err, message) in [
            (
                Error::UnknownTarget { id: "e9".into() },
                "target `e9` is not an element of this answer",
            ),
            (Error::ZeroBudget, "a budget must be at least 1"),
            (
                Error::TokensUnavailable,
                "token budgets need ctxgate built with the `tokens` feature; use a byte budget",
            ),
            (
                Error::UnknownFormat {
                    word: "ax".into(),
                    expected: "ax-dump, aria".into(),
                },
                "unknown import format `ax`; expected one of ax-dump, aria",
            ),
            (
                Error::OverBudget {
                    size: 12,
                    limit: 10,
                    unit: "bytes",
                },
                "internal error: output of 12 bytes over the budget of 10; nothing is sent",
            ),
        ] {
            assert_eq!(err.to_string(), message);
            assert!(matches!(err.kind(), ErrorKind::Usage | ErrorKind::Internal));
        }
    }
}
