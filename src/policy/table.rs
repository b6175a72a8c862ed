//! The embedded default's answers, taken from a table instead of computed:
//! each per-element rule's value over the finite part of what it reads
//! (the role, the states, the subrole's tests' outcomes, the title
//! patterns it matches, the number of its ancestors up to
//! [`MAX_INSIDE`]), and each action's plan. regorus computed every entry:
//! `policy::table::tests` evaluates the default on its VM at every point of
//! that domain, writes `table/data.rs` and `policies/default.table`, and
//! fails when they differ from what is committed (regenerate with
//! `UPDATE_EXPECT=1 cargo test --lib the_default_table_is_regorus_answers`).
//! A request under the default then runs no policy code, and loads no
//! program, unless a projection falls outside the table (a rule that reads
//! attribute names, an element deeper than the table, an action it does
//! not name): that one rule is evaluated as before.
//!
//! The table is keyed like the per-request memo it fills
//! ([`ElementInput::key_of`]): by what each rule reads, as `engine::rule_reads`
//! found it from the default's tokens. Of the request the default reads
//! only `input.action.name` (the generator checks its tokens), so the table
//! is one per action name.

use regorus::Value;

use super::projection::{ElementInput, Field, Reads, RuleReads, SubroleTest};
use crate::model::Role;

/// One rule value of the table, as regorus gave it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Entry {
    /// No body held (none of the default's rules gives it today; the
    /// generated table names it if one does).
    #[allow(dead_code)]
    Undefined,
    /// A set of strings, sorted (a reason set, or `strip`'s names).
    Strings(&'static [&'static str]),
    /// A number.
    Number(f64),
}

impl Entry {
    /// The value as the rule's reader takes it (a set arrives as an array;
    /// the reader sorts and dedups either).
    fn value(self) -> Value {
        match self {
            Entry::Undefined => Value::Undefined,
            Entry::Strings(items) => {
                Value::from(items.iter().map(|&s| Value::from(s)).collect::<Vec<_>>())
            }
            Entry::Number(n) => Value::from(n),
        }
    }
}

/// Where each action's table of one rule is in the bytes: (start, length).
pub(crate) type Spans = &'static [(usize, usize)];

/// A byte of the table that is no value: the rule is evaluated.
pub(crate) const MISSING: u8 = u8::MAX;

/// The deepest element the table answers for: its number of ancestors.
pub(crate) const MAX_INSIDE: usize = 64;

/// The subrole's field in [`ElementInput::fields`].
const SUBROLE: usize = 1;
/// The title patterns' field.
const TITLE_MATCHES: usize = 11;

/// The digits of a rule's table position, most significant first: per
/// field read (`Some(k)`) or the ancestors (`None`), its radix. `None` when
/// the rule reads something the table cannot enumerate (attribute names or
/// values, a subrole read whole, the ancestors read whole).
#[cfg(test)]
pub(crate) fn layout(
    reads: &Reads,
    rule: RuleReads,
    titles: &[&str],
) -> Option<Vec<(Option<usize>, usize)>> {
    let mut digits = Vec::new();
    for (k, (_, field)) in super::projection::field_shapes().into_iter().enumerate() {
        if rule.fields >> k & 1 == 0 {
            continue;
        }
        digits.push((Some(k), radix(k, &field, reads, titles)?));
    }
    if rule.inside {
        if !reads.inside_count_only {
            return None;
        }
        digits.push((None, MAX_INSIDE + 1));
    }
    Some(digits)
}

/// How many values field `k` (`field`, of its kind) takes in a table, or
/// `None` when the table cannot enumerate them: the one list of what
/// [`layout`] and [`position`] take.
fn radix(k: usize, field: &Field<'_>, reads: &Reads, titles: &[&str]) -> Option<usize> {
    match field {
        Field::Role(_) => Some(Role::ALL.len()),
        Field::Flag(_) => Some(2),
        Field::Text(_) if k == SUBROLE => {
            let tests = reads.subrole.as_ref().filter(|t| t.len() <= 8)?;
            Some(1 + (1 << tests.len()))
        }
        Field::Names(_) if k == TITLE_MATCHES && titles.len() <= 8 => Some(1 << titles.len()),
        _ => None,
    }
}

/// Where what `rule` reads of `element` sits in its table (the digits of
/// [`layout`]; `titles`: the plan's title patterns' names, [`data::TITLES`]
/// but while the table is made), or `None` outside it.
fn position(
    element: &ElementInput<'_>,
    reads: &Reads,
    rule: RuleReads,
    titles: &[&str],
) -> Option<usize> {
    let mut at = 0usize;
    for (k, (_, field)) in element.fields().into_iter().enumerate() {
        if rule.fields >> k & 1 == 0 {
            continue;
        }
        let radix = radix(k, &field, reads, titles)?;
        // `radix` holds only for the subrole's text and the title patterns'
        // names.
        let digit = match field {
            Field::Role(role) => Role::ALL.iter().position(|&r| r == role)?,
            Field::Flag(flag) => usize::from(flag),
            Field::Text(None) => 0,
            Field::Text(Some(s)) => {
                1 + SubroleTest::outcome_bits(reads.subrole.as_deref()?, s)? as usize
            }
            Field::Names(names) => title_bits(names, titles)?,
            Field::Values(_) => return None,
        };
        at = at * radix + digit;
    }
    if rule.inside {
        let count = element.inside.len();
        if !reads.inside_count_only || count > MAX_INSIDE {
            return None;
        }
        at = at * (MAX_INSIDE + 1) + count;
    }
    Some(at)
}

/// The title patterns' names as bits of `titles`, when they are names of
/// it in its order (the order the projection gives them in).
fn title_bits(names: &[&str], titles: &[&str]) -> Option<usize> {
    let mut bits = 0usize;
    let mut next = 0;
    for name in names {
        let at = next + titles.get(next..)?.iter().position(|t| t == name)?;
        bits |= 1 << at;
        next = at + 1;
    }
    Some(bits)
}

/// The position of an action name among the table's, if it has one.
pub(crate) fn action(name: &str) -> Option<usize> {
    data::ACTIONS.iter().position(|&a| a == name)
}

/// The value the table holds for the `at`-th per-element rule (`rule`,
/// reading `reads`) of `element` under the action at `action`, or `None`
/// when it holds none.
pub(crate) fn value(
    action: usize,
    at: usize,
    rule: &str,
    element: &ElementInput<'_>,
    policy_reads: &Reads,
    reads: RuleReads,
) -> Option<Value> {
    let (name, tables) = data::RULES.get(at)?;
    if *name != rule {
        return None;
    }
    let &(start, len) = (*tables)?.get(action)?;
    let at = position(element, policy_reads, reads, data::TITLES)?;
    if at >= len {
        return None;
    }
    match data::BYTES.get(start + at) {
        Some(&byte) if byte != MISSING => Some(data::VALUES.get(byte as usize)?.value()),
        _ => None,
    }
}

/// The plan's rule values under the action at `action`, as JSON: each
/// per-request rule the default defines, with what regorus gave.
pub(crate) fn plan(
    action: usize,
) -> Option<impl Iterator<Item = (&'static str, &'static str)> + Clone> {
    let rules = data::PLANS.get(action)?;
    Some(
        rules
            .iter()
            .filter_map(|&(rule, k)| Some((rule, *data::JSON.get(k)?))),
    )
}

// Generated by `tests`, kept as written.
#[rustfmt::skip]
mod data;
#[cfg(test)]
pub(crate) mod tests;
