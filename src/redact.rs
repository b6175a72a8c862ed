//! Redaction: the policy's text patterns, applied natively to every string
//! that leaves (titles, text content, urls, attribute values, content
//! block fields). Ids, roles and subroles are never rewritten.

use std::borrow::Cow;

use serde_json::Value;

use crate::policy::Redaction;

/// Applies every pattern in order, counting replacements per pattern.
pub struct Redactor<'p> {
    patterns: &'p [Redaction],
    /// Replacements made, per pattern (same order as the patterns).
    pub counts: Vec<usize>,
}

impl<'p> Redactor<'p> {
    /// A redactor for these patterns.
    pub fn new(patterns: &'p [Redaction]) -> Redactor<'p> {
        Redactor {
            patterns,
            counts: vec![0; patterns.len()],
        }
    }

    /// `text` with every match replaced.
    pub fn text<'t>(&mut self, text: &'t str) -> Cow<'t, str> {
        let mut current = Cow::Borrowed(text);
        for (i, pattern) in self.patterns.iter().enumerate() {
            if !pattern.regex.is_match(&current) {
                continue;
            }
            let mut count = 0;
            let replaced = pattern
                .regex
                .replace_all(&current, |caps: &regex::Captures<'_>| {
                    let whole = caps.get(0).map_or("", |m| m.as_str());
                    if pattern.luhn && !luhn_valid(whole) {
                        return whole.to_string();
                    }
                    count += 1;
                    let mut out = String::new();
                    caps.expand(&pattern.replace, &mut out);
                    out
                })
                .into_owned();
            if count > 0 {
                self.counts[i] += count;
                current = Cow::Owned(replaced);
            }
        }
        current
    }

    /// Redacts a string in place.
    pub fn string(&mut self, s: &mut String) {
        if let Cow::Owned(new) = self.text(s) {
            *s = new;
        }
    }

    /// Redacts a string of the model in place: a borrowed one is replaced
    /// by an owned copy only when a pattern matched.
    pub fn cow(&mut self, s: &mut Cow<'_, str>) {
        if let Cow::Owned(new) = self.text(s) {
            *s = Cow::Owned(new);
        }
    }

    /// Redacts every string inside a JSON value, iteratively.
    pub fn value(&mut self, value: &mut Value) {
        let mut stack = vec![value];
        while let Some(value) = stack.pop() {
            match value {
                Value::String(s) => self.string(s),
                Value::Array(items) => stack.extend(items.iter_mut()),
                Value::Object(map) => stack.extend(map.values_mut()),
                _ => {}
            }
        }
    }
}

/// Whether the digits in `candidate` pass the Luhn check (payment cards).
pub fn luhn_valid(candidate: &str) -> bool {
    let digits: Vec<u32> = candidate.chars().filter_map(|c| c.to_digit(10)).collect();
    if digits.len() < 12 {
        return false;
    }
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            if i % 2 == 1 {
                if d * 2 > 9 {
                    d * 2 - 9
                } else {
                    d * 2
                }
            } else {
                d
            }
        })
        .sum();
    sum % 10 == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn luhn() {
        assert!(luhn_valid("4111 1111 1111 1111"));
        assert!(luhn_valid("5500-0000-0000-0004"));
        assert!(!luhn_valid("4111 1111 1111 1112"));
        assert!(!luhn_valid("1234"));
    }

    #[test]
    fn replaces_and_counts_luhn_valid_matches_only() {
        let patterns = vec![Redaction {
            id: "card-number".into(),
            regex: regex::Regex::new(r"\b(?:\d[ -]?){12,18}\d\b").unwrap(),
            replace: "[card]".into(),
            luhn: true,
        }];
        let mut r = Redactor::new(&patterns);
        let out = r.text("pay 4111 1111 1111 1111 not 4111 1111 1111 1112");
        assert_eq!(out, "pay [card] not 4111 1111 1111 1112");
        assert_eq!(r.counts, [1]);
    }
}
