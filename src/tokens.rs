//! Measuring output against a budget: bytes, or o200k_base tokens counted
//! offline with `bpe-openai` (cargo feature `tokens`, on by default).

#[cfg(not(feature = "tokens"))]
use crate::error::Error;
use crate::error::Result;
use crate::policy::Budget;

/// The size of `text` in the budget's unit, or `None` when it is over
/// `limit` (token counting stops early there).
pub fn measure_within(text: &str, budget: Budget, limit: usize) -> Result<Option<usize>> {
    match budget {
        Budget::Bytes(_) => Ok((text.len() <= limit).then_some(text.len())),
        Budget::Tokens(_) => count_tokens_till(text, limit),
    }
}

/// The size of `text` in the budget's unit.
pub fn measure(text: &str, budget: Budget) -> Result<usize> {
    match budget {
        Budget::Bytes(_) => Ok(text.len()),
        Budget::Tokens(_) => count_tokens(text),
    }
}

/// Loads the o200k_base vocabulary now (~100 ms, once per process) rather
/// than on the first token budget. A no-op without the `tokens` feature.
pub fn warm_up() {
    #[cfg(feature = "tokens")]
    let _ = bpe_openai::o200k_base();
}

/// o200k_base tokens in `text`.
#[cfg(feature = "tokens")]
pub fn count_tokens(text: &str) -> Result<usize> {
    Ok(bpe_openai::o200k_base().count(text))
}

#[cfg(feature = "tokens")]
fn count_tokens_till(text: &str, limit: usize) -> Result<Option<usize>> {
    // Every token is at least one byte.
    if text.len() <= limit {
        return Ok(Some(bpe_openai::o200k_base().count(text)));
    }
    let tokenizer = bpe_openai::o200k_base();
    Ok(tokenizer.count_till_limit(&tokenizer.normalize(text), limit))
}

/// Without the `tokens` feature, token budgets are an error.
#[cfg(not(feature = "tokens"))]
pub fn count_tokens(_: &str) -> Result<usize> {
    Err(no_tokens())
}

#[cfg(not(feature = "tokens"))]
fn count_tokens_till(_: &str, _: usize) -> Result<Option<usize>> {
    Err(no_tokens())
}

#[cfg(not(feature = "tokens"))]
fn no_tokens() -> Error {
    Error::Request(
        "token budgets need ctxgate built with the `tokens` feature; use a byte budget".into(),
    )
}

/// The unit's name, for messages.
pub fn unit(budget: Budget) -> &'static str {
    match budget {
        Budget::Bytes(_) => "bytes",
        Budget::Tokens(_) => "tokens",
    }
}

/// The budget's limit.
pub fn limit(budget: Budget) -> usize {
    match budget {
        Budget::Bytes(n) | Budget::Tokens(n) => n,
    }
}

#[cfg(all(test, feature = "tokens"))]
mod tests {
    use super::*;

    #[test]
    fn counts_o200k_tokens_and_stops_early() {
        assert_eq!(count_tokens("Hello world").unwrap(), 2);
        let long = "word ".repeat(1000);
        assert_eq!(count_tokens_till(&long, 10).unwrap(), None);
        assert_eq!(
            count_tokens_till(&long, 100_000).unwrap(),
            Some(count_tokens(&long).unwrap())
        );
    }
}
