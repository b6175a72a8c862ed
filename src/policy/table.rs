//! The embedded default's answers, taken from a table instead of computed:
//! each per-element rule's value over the finite part of what it reads
//! (the role, the states, the subrole's tests' outcomes, which of the
//! attribute names it tests for are there, the title patterns it matches,
//! the number of its ancestors up to [`MAX_INSIDE`]), and each action's
//! plan, for the action names it names and one table for every other.
//! regorus computed every entry: `policy::table::tests` evaluates the
//! default's bytes on its interpreter at every point of that domain, writes
//! `table/data.rs` and `policies/default.table`, and fails when they differ
//! from what is committed (regenerate with
//! `UPDATE_EXPECT=1 cargo test --lib the_default_table_is_regorus_answers`).
//! A request under the default runs no policy code and compiles nothing.
//!
//! The table is keyed like the per-request memo it fills
//! ([`ElementInput::key_of`]): by what each rule reads, as `engine::rule_reads`
//! found it from the default's tokens. The generator checks from the tokens
//! what makes the finite domain the whole one: of the request the default
//! reads only `input.action.name`, and compares it only with string
//! literals (so every other name answers alike); it reads the attribute
//! names only as `"name" in input.element.attribute_names`; it compares
//! `count(input.inside)` only with numbers below [`MAX_INSIDE`] (so a
//! deeper element answers as one at [`MAX_INSIDE`]).

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

/// The number of ancestors the table enumerates: more read as this many.
pub(crate) const MAX_INSIDE: usize = 64;

/// The subrole's field in [`ElementInput::fields`].
const SUBROLE: usize = 1;
/// The attribute names' field.
const ATTRIBUTE_NAMES: usize = 9;
/// The title patterns' field.
const TITLE_MATCHES: usize = 11;

/// The names a table enumerates: the plan's title patterns, and the
/// attribute names the default tests for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Names<'n> {
    pub titles: &'n [&'n str],
    pub attributes: &'n [&'n str],
}

/// What [`data`] was made with.
const NAMES: Names<'static> = Names {
    titles: data::TITLES,
    attributes: data::ATTRIBUTE_NAMES,
};

/// The digits of a rule's table position, most significant first: per
/// field read (`Some(k)`) or the ancestors (`None`), its radix. `None` when
/// the rule reads something the table cannot enumerate (attribute values,
/// a subrole read whole, the ancestors read whole).
#[cfg(test)]
pub(crate) fn layout(
    reads: &Reads,
    rule: RuleReads,
    names: Names<'_>,
) -> Option<Vec<(Option<usize>, usize)>> {
    let mut digits = Vec::new();
    for (k, (_, field)) in super::projection::field_shapes().into_iter().enumerate() {
        if rule.fields >> k & 1 == 0 {
            continue;
        }
        digits.push((Some(k), radix(k, &field, reads, names)?));
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
fn radix(k: usize, field: &Field<'_>, reads: &Reads, names: Names<'_>) -> Option<usize> {
    match field {
        Field::Role(_) => Some(Role::ALL.len()),
        Field::Flag(_) => Some(2),
        Field::Text(_) if k == SUBROLE => {
            let tests = reads.subrole.as_ref().filter(|t| t.len() <= 8)?;
            Some(1 + (1 << tests.len()))
        }
        Field::Names(_) if k == TITLE_MATCHES && names.titles.len() <= 8 => {
            Some(1 << names.titles.len())
        }
        Field::Names(_) if k == ATTRIBUTE_NAMES && names.attributes.len() <= 8 => {
            Some(1 << names.attributes.len())
        }
        _ => None,
    }
}

/// Where what `rule` reads of `element` sits in its table (the digits of
/// [`layout`]; `names`: [`NAMES`] but while the table is made), or `None`
/// outside it.
fn position(
    element: &ElementInput<'_>,
    reads: &Reads,
    rule: RuleReads,
    names: Names<'_>,
) -> Option<usize> {
    let mut at = 0usize;
    for (k, (_, field)) in element.fields().into_iter().enumerate() {
        if rule.fields >> k & 1 == 0 {
            continue;
        }
        let radix = radix(k, &field, reads, names)?;
        // `radix` holds only for the subrole's text and the two lists of
        // names.
        let digit = match field {
            Field::Role(role) => Role::ALL.iter().position(|&r| r == role)?,
            Field::Flag(flag) => usize::from(flag),
            Field::Text(None) => 0,
            Field::Text(Some(s)) => {
                1 + SubroleTest::outcome_bits(reads.subrole.as_deref()?, s)? as usize
            }
            Field::Names(these) if k == TITLE_MATCHES => title_bits(these, names.titles)?,
            Field::Names(these) => names
                .attributes
                .iter()
                .enumerate()
                .filter(|(_, name)| these.contains(name))
                .fold(0, |bits, (at, _)| bits | 1 << at),
            Field::Values(_) => return None,
        };
        at = at * radix + digit;
    }
    if rule.inside {
        if !reads.inside_count_only {
            return None;
        }
        at = at * (MAX_INSIDE + 1) + element.inside.len().min(MAX_INSIDE);
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

/// The table of an action name: its own, or the one of every name the
/// table does not name (after those).
pub(crate) fn action(name: &str) -> usize {
    data::ACTIONS
        .iter()
        .position(|&a| a == name)
        .unwrap_or(data::ACTIONS.len())
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
    let at = position(element, policy_reads, reads, NAMES)?;
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
