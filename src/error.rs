//! The library's one error type. Every message names what is wrong, where
//! (a JSON pointer, a line and column, or a file:line:col), and what to do.
//! No message carries an element's title, content, url or attribute value.

use crate::check::Finding;

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
        /// Where the limit was passed: `at /root/children/0/…` or `at line L, column C`.
        place: String,
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
    /// The request is malformed (unknown target, bad budget, …).
    #[error("{0}")]
    Request(String),
    /// An OS accessibility tree that cannot be imported (`ctxgate import`).
    #[error("cannot import the `{format}` input{}: {message}", at_line(*.line))]
    Import {
        /// The format being imported (`ax-dump`, `uia-json`, …).
        format: &'static str,
        /// 1-based line of the input; 0 when the problem is not on one line.
        line: usize,
        /// What is wrong, and what to do.
        message: String,
    },
    /// The request ran past its deadline ([`crate::Request::timeout`],
    /// default [`crate::DEFAULT_TIMEOUT`]); nothing is sent.
    #[error("the request passed its deadline of {} ms while {stage}; nothing was sent (raise the request's timeout, `--timeout`, or send a smaller tree)", .limit.as_millis())]
    Deadline {
        /// The stage that was running.
        stage: crate::deadline::Stage,
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

fn summary(findings: &[Finding]) -> String {
    let errors: Vec<&Finding> = findings.iter().filter(|f| f.is_error()).collect();
    match errors.as_slice() {
        [] => "no errors".to_string(),
        [one] => one.to_string(),
        [first, rest @ ..] => format!("{first} (and {} more)", rest.len()),
    }
}

fn at_line(line: usize) -> String {
    match line {
        0 => String::new(),
        line => format!(" at line {line}"),
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
