//! Measuring output against a budget: bytes, or o200k_base tokens counted
//! offline with `bpe-openai` (cargo feature `tokens`, on by default).

#[cfg(feature = "tokens")]
use foldhash::HashMap;

#[cfg(not(feature = "tokens"))]
use crate::error::Error;
use crate::error::Result;
use crate::policy::Budget;

/// Measures texts against budgets. Tokens are counted piece by piece (a
/// text's o200k count is the sum of its pre-tokenized pieces' counts), and
/// a meter remembers each distinct piece's count: the probes of one fill
/// render mostly the same elements, so most pieces are looked up, not
/// encoded. The pieces are one request's text, like the maps of
/// `decide_all`: foldhash is enough.
#[derive(Default)]
pub struct Meter {
    #[cfg(feature = "tokens")]
    pieces: HashMap<String, usize>,
}

impl Meter {
    /// Whether `text` is within `budget`, and its size in the budget's unit
    /// when measured. Tokens are not counted when the bytes alone show the
    /// text fits (a token is at least a byte), and the count stops past
    /// twice the limit: a probe a little over still says by how much, and a
    /// big rendering (a 50 MB image) is not counted to the end.
    pub fn fit(&mut self, text: &str, budget: Budget) -> Result<(bool, Option<usize>)> {
        let limit = limit(budget);
        match budget {
            Budget::Bytes(_) => Ok((text.len() <= limit, Some(text.len()))),
            Budget::Tokens(_) if text.len() <= limit => Ok((true, None)),
            Budget::Tokens(_) => {
                let size = self.count_till(text, limit.saturating_mul(2))?;
                Ok((size.is_some_and(|n| n <= limit), size))
            }
        }
    }

    /// The size of `text` in the budget's unit.
    pub fn measure(&mut self, text: &str, budget: Budget) -> Result<usize> {
        match budget {
            Budget::Bytes(_) => Ok(text.len()),
            Budget::Tokens(_) => Ok(self
                .count_till(text, usize::MAX)?
                .expect("a count without a limit")),
        }
    }

    /// o200k_base tokens in `text`, or `None` past `limit`.
    #[cfg(feature = "tokens")]
    fn count_till(&mut self, text: &str, limit: usize) -> Result<Option<usize>> {
        let tokenizer = bpe_openai::o200k_base();
        let text = tokenizer.normalize(text);
        let mut total = 0;
        for piece in tokenizer.split(text.as_str()) {
            total += match self.pieces.get(piece) {
                Some(&n) => n,
                None => {
                    // Stops early inside one huge piece, too.
                    let Some(n) = tokenizer
                        .bpe
                        .count_till_limit(piece.as_bytes(), limit - total)
                    else {
                        return Ok(None);
                    };
                    self.pieces.insert(piece.to_string(), n);
                    n
                }
            };
            if total > limit {
                return Ok(None);
            }
        }
        Ok(Some(total))
    }

    /// Without the `tokens` feature, token budgets are an error.
    #[cfg(not(feature = "tokens"))]
    fn count_till(&mut self, _: &str, _: usize) -> Result<Option<usize>> {
        Err(Error::TokensUnavailable)
    }
}

/// Loads the o200k_base vocabulary now (~100 ms, once per process) rather
/// than on the first token budget. A no-op without the `tokens` feature.
pub fn warm_up() {
    #[cfg(feature = "tokens")]
    let _ = bpe_openai::o200k_base();
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
    fn counts_o200k_tokens_piece_by_piece_and_stops_early() {
        let text = "Hello world, «ünïcödé» \"quoted\"\n\tline 4111 1111 ".repeat(50);
        let exact = bpe_openai::o200k_base().count(text.as_str());
        let mut meter = Meter::default();
        assert_eq!(meter.measure("Hello world", Budget::Tokens(1)).unwrap(), 2);
        assert_eq!(meter.measure(&text, Budget::Tokens(1)).unwrap(), exact);
        // Again, from the remembered pieces.
        assert_eq!(meter.measure(&text, Budget::Tokens(1)).unwrap(), exact);
        let fit = |meter: &mut Meter, limit| meter.fit(&text, Budget::Tokens(limit)).unwrap();
        assert_eq!(fit(&mut meter, exact), (true, Some(exact)));
        assert_eq!(fit(&mut meter, exact - 1), (false, Some(exact)));
        assert_eq!(fit(&mut meter, exact / 3), (false, None));
        assert_eq!(
            Meter::default()
                .fit(&text, Budget::Tokens(exact / 3))
                .unwrap(),
            (false, None)
        );
        assert_eq!(meter.fit("short", Budget::Tokens(5)).unwrap(), (true, None));
    }
}
