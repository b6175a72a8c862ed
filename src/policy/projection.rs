//! The element projection: all a policy ever sees of one element, and the
//! one place that says so. The struct ([`ElementInput`]) lists the fields;
//! [`ElementInput::fields`] names each one as the policy reads it; the Rego
//! input (`input.element`), the decision caches' key and lint's picture of
//! the input's shape are all built from that list, so adding a field is
//! one edit and the key cannot miss a field the policy sees (a test proves
//! that equal keys give equal inputs and different inputs different keys).
//!
//! What the floor says of the projection ([`Floor`], in `crate::floor`)
//! keeps a secure field's attribute values out of the input and the key.

use std::sync::Arc;

use regorus::Value;

use super::inside::{Digest32, Inside};
use super::Decision;
use crate::error::Result;
use crate::floor::Floor;
use crate::model::Role;

/// What trimming needs of a policy: a decision per element projection.
/// The trimmer applies the floor ([`Floor`]) and the rule-id check to
/// every decision a decider gives; a decider cannot skip either.
pub trait Decider {
    /// The decision for one projection, before the floor.
    fn decide(&mut self, element: &ElementInput<'_>) -> Result<Arc<Decision>>;
    /// Evaluations run so far for this request.
    fn evaluations(&self) -> usize;
}

/// One element's projection: all a policy sees of it. `A` is how its
/// ancestors are given: an [`Inside`] chain for the policy, or a
/// per-request id of that chain for the trimmer's deduplication (derived
/// equality and hashing then cover every field).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ElementInput<'a, A = Inside<'a>> {
    /// The role as read.
    pub role: Role,
    /// The subrole.
    pub subrole: Option<&'a str>,
    /// Effective states (R2).
    pub selected: bool,
    /// Effective states (R2).
    pub focused: bool,
    /// Effective states (R2).
    pub visible: bool,
    /// Effective states (R2).
    pub hovered: bool,
    /// Whether it has a title.
    pub has_title: bool,
    /// Whether it has content.
    pub has_content: bool,
    /// Whether a selected element is inside it (a descendant): lets a rule
    /// keep the Document that encloses the selection.
    pub contains_selection: bool,
    /// Its attribute names, in the provider's order.
    pub attribute_names: Vec<&'a str>,
    /// The values of the attributes the policy declares it reads. A secure
    /// field's never reach the policy: the projection leaves them out of
    /// the input and the key.
    pub attributes: Vec<(&'a str, &'a serde_json::Value)>,
    /// Names of the title patterns its title matches.
    pub title_matches: Vec<&'a str>,
    /// Its ancestors' roles and subroles, nearest first (`input.inside`).
    pub inside: A,
    /// Whether the floor masks it for a word other than its subrole: its
    /// role is outside the language and the provider's word for it says
    /// secure or password (`SecureTextField`, `PasswordBox`), or one of its
    /// attributes says so ([`Floor::attribute_says_secure`]). Not part of
    /// the policy's input; the floor ([`Floor::applies`]) reads the subrole
    /// itself.
    pub secure_elsewhere: bool,
}

/// One field of `input.element`, as the policy reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Field<'p> {
    /// The role's word.
    Role(Role),
    /// A string, absent from the input when `None`.
    Text(Option<&'p str>),
    /// A boolean.
    Flag(bool),
    /// An array of strings.
    Names(&'p [&'p str]),
    /// An object of provider values.
    Values(&'p [(&'p str, &'p serde_json::Value)]),
}

/// How many fields `input.element` has.
pub(crate) const FIELDS: usize = 12;

/// The fields of `input.element` with an example of each kind, in the
/// order [`ElementInput::fields`] gives them (lint's picture of the input).
pub(crate) fn field_shapes() -> [(&'static str, Field<'static>); FIELDS] {
    let probe = ElementInput::blank(());
    probe.fields().map(|(name, field)| {
        let field = match field {
            Field::Role(role) => Field::Role(role),
            Field::Text(_) => Field::Text(None),
            Field::Flag(flag) => Field::Flag(flag),
            Field::Names(_) => Field::Names(&[]),
            Field::Values(_) => Field::Values(&[]),
        };
        (name, field)
    })
}

impl<A> ElementInput<'static, A> {
    /// A Group with no subrole, no state, nothing in it, under `inside`.
    pub(crate) fn blank(inside: A) -> ElementInput<'static, A> {
        ElementInput {
            role: Role::Group,
            subrole: None,
            selected: false,
            focused: false,
            visible: false,
            hovered: false,
            has_title: false,
            has_content: false,
            contains_selection: false,
            attribute_names: Vec::new(),
            attributes: Vec::new(),
            title_matches: Vec::new(),
            inside,
            secure_elsewhere: false,
        }
    }
}

impl<'a, A> ElementInput<'a, A> {
    /// Every field of `input.element`, named as the policy reads it. The
    /// only list of them: the Rego input and the cache key are built from
    /// it, and the destructuring makes a new struct field a compile error
    /// until it is named here.
    pub(crate) fn fields(&self) -> [(&'static str, Field<'_>); FIELDS] {
        let ElementInput {
            role,
            subrole,
            selected,
            focused,
            visible,
            hovered,
            has_title,
            has_content,
            contains_selection,
            attribute_names,
            attributes,
            title_matches,
            inside: _,
            secure_elsewhere: _,
        } = self;
        // A secure field's attribute values (its value, say) never reach
        // the policy, whoever built the projection.
        let attributes: &[(&str, &serde_json::Value)] = match self.floor_masks() {
            true => &[],
            false => attributes,
        };
        [
            ("role", Field::Role(*role)),
            ("subrole", Field::Text(*subrole)),
            ("selected", Field::Flag(*selected)),
            ("focused", Field::Flag(*focused)),
            ("visible", Field::Flag(*visible)),
            ("hovered", Field::Flag(*hovered)),
            ("has_title", Field::Flag(*has_title)),
            ("has_content", Field::Flag(*has_content)),
            ("contains_selection", Field::Flag(*contains_selection)),
            ("attribute_names", Field::Names(attribute_names)),
            ("attributes", Field::Values(attributes)),
            ("title_matches", Field::Names(title_matches)),
        ]
    }

    /// Whether the secure-text floor masks it: its subrole says so
    /// ([`Floor::applies`]), or its role word or an attribute does
    /// (`secure_elsewhere`).
    pub(crate) fn floor_masks(&self) -> bool {
        self.secure_elsewhere || Floor::applies(self.subrole)
    }

    /// The same projection with its ancestors given another way.
    pub(crate) fn with_inside<B>(self, inside: B) -> ElementInput<'a, B> {
        let ElementInput {
            role,
            subrole,
            selected,
            focused,
            visible,
            hovered,
            has_title,
            has_content,
            contains_selection,
            attribute_names,
            attributes,
            title_matches,
            inside: _,
            secure_elsewhere,
        } = self;
        ElementInput {
            role,
            subrole,
            selected,
            focused,
            visible,
            hovered,
            has_title,
            has_content,
            contains_selection,
            attribute_names,
            attributes,
            title_matches,
            inside,
            secure_elsewhere,
        }
    }

    /// `input.element`, built straight into regorus values (a round trip
    /// through serde_json cost more than the rules).
    pub(crate) fn element_value(&self) -> Value {
        let mut element = Value::new_object();
        let map = element.as_object_mut().expect("an object");
        let strings =
            |items: &[&str]| Value::from(items.iter().map(|s| Value::from(*s)).collect::<Vec<_>>());
        for (name, field) in self.fields() {
            let value = match field {
                Field::Role(role) => Value::from(role.as_str()),
                Field::Text(None) => continue,
                Field::Text(Some(text)) => Value::from(text),
                Field::Flag(flag) => Value::from(flag),
                Field::Names(names) => strings(names),
                Field::Values(values) => {
                    let mut object = Value::new_object();
                    let entries = object.as_object_mut().expect("an object");
                    for (k, v) in values {
                        entries.insert(Value::from(*k), Value::from((*v).clone()));
                    }
                    object
                }
            };
            map.insert(Value::from(name), value);
        }
        element
    }

    /// The fields' bytes, unambiguous (tags and lengths), for the key.
    /// With `reads`, the subrole is written as what the policy can learn
    /// of it ([`Reads::subrole`]).
    /// `fields`: bit `k` keeps the `k`-th field of [`ElementInput::fields`]
    /// ([`RuleReads::ALL`]: every one); the others are left out.
    fn key_bytes(&self, out: &mut Vec<u8>, reads: &Reads, fields: u16) {
        fn text(out: &mut Vec<u8>, s: &str) {
            out.extend_from_slice(&(s.len() as u64).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        let kept = self
            .fields()
            .into_iter()
            .enumerate()
            .filter(|(k, _)| fields >> k & 1 == 1)
            .map(|(_, field)| field);
        for (name, field) in kept {
            if let (Some(tests), Field::Text(subrole)) = (&reads.subrole, field) {
                if name == "subrole" {
                    out.push(7);
                    SubroleTest::write_outcomes(tests, subrole, out);
                    continue;
                }
            }
            match field {
                Field::Role(role) => {
                    out.push(0);
                    text(out, role.as_str());
                }
                Field::Text(None) => out.push(1),
                Field::Text(Some(s)) => {
                    out.push(2);
                    text(out, s);
                }
                Field::Flag(flag) => out.push(3 + u8::from(flag)),
                Field::Names(names) => {
                    out.push(5);
                    out.extend_from_slice(&(names.len() as u64).to_le_bytes());
                    for name in names {
                        text(out, name);
                    }
                }
                Field::Values(values) => {
                    out.push(6);
                    out.extend_from_slice(&(values.len() as u64).to_le_bytes());
                    for (k, v) in values {
                        text(out, k);
                        text(out, &serde_json::to_string(v).expect("JSON serializes"));
                    }
                }
            }
        }
    }
}

impl ElementInput<'_> {
    /// The decision caches' key: the fields as [`ElementInput::fields`]
    /// gives them, then the ancestors' SHA-256 digest (a digest, not a
    /// copy: a copy costs depth × subrole bytes per cached decision).
    pub(crate) fn key(&self) -> ProjectionKey {
        self.key_for(&Reads::default())
    }

    /// The decision caches' key under a policy that reads only `reads` of
    /// the projection: what it cannot tell apart gets one key (the
    /// subrole as its tests' outcomes, the ancestors as their number).
    /// With [`Reads::default`] (everything) it is [`ElementInput::key`].
    pub(crate) fn key_for(&self, reads: &Reads) -> ProjectionKey {
        self.key_of(reads, RuleReads::ALL)
    }

    /// The key of what one rule can read of the projection under a policy
    /// that reads `reads` of it: [`ElementInput::key_for`] of `rule`'s
    /// fields alone, and of the ancestors only when it reads them. Two
    /// projections with one such key give the rule one value (the
    /// evaluator's per-rule memo, `engine::rule_reads`).
    pub(crate) fn key_of(&self, reads: &Reads, rule: RuleReads) -> ProjectionKey {
        let mut out = Vec::with_capacity(64);
        self.key_bytes(&mut out, reads, rule.fields);
        if !rule.inside {
            out.push(9);
        } else if reads.inside_count_only {
            out.push(8);
            out.extend_from_slice(&(self.inside.len() as u64).to_le_bytes());
        } else {
            let digest: Digest32 = self.inside.digest();
            out.extend_from_slice(&digest);
        }
        ProjectionKey(out.into_boxed_slice())
    }

    /// The whole Rego input for this element under a request's
    /// `input.action` and `input.app` (an object).
    pub(crate) fn rego_input(&self, request: &Value) -> Value {
        let mut input = request.clone();
        if let Ok(map) = input.as_object_mut() {
            map.insert(Value::from("element"), self.element_value());
            map.insert(Value::from("inside"), self.inside.to_value());
        }
        input
    }
}

/// What of a projection a policy can read, where that is less than all of
/// it: found from the policy's tokens by `engine::reads_of`, only for a
/// policy in the part of Rego where no evaluation can fail and the only
/// calls are `count`, `lower`, `upper`, `contains`, `startswith` and
/// `endswith` (`engine::spelled_out`). Two projections that differ only in
/// what the policy cannot read get the same decision from it, so they
/// share one key ([`ElementInput::key_for`]) and one evaluation. The
/// default (`Reads::default()`) is everything: the full key.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Reads {
    /// `input.inside` is read only as `count(input.inside)`: its length is
    /// all the policy sees of the ancestors.
    pub inside_count_only: bool,
    /// `input.element.subrole` is read only by these tests (and whether it
    /// is there at all): their outcomes are all the policy sees of it.
    /// `None`: read some other way, so the whole string counts.
    pub subrole: Option<Vec<SubroleTest>>,
}

/// What one per-element rule reads of a projection, through every rule it
/// refers to (`engine::rule_reads`, from the policy's tokens, for a policy
/// in `engine::spelled_out`): its value is the same for two projections
/// that agree on these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RuleReads {
    /// Bit `k`: the `k`-th field of [`ElementInput::fields`].
    pub fields: u16,
    /// Whether it reads `input.inside` (as [`Reads`] says: its count, or
    /// all of it).
    pub inside: bool,
}

impl RuleReads {
    /// Everything.
    pub const ALL: RuleReads = RuleReads {
        fields: (1 << FIELDS) - 1,
        inside: true,
    };

    /// The bit of the field named `name` as the policy reads it
    /// (`input.element.NAME`), if it is one.
    pub(crate) fn field(name: &str) -> Option<u16> {
        field_shapes()
            .iter()
            .position(|(field, _)| *field == name)
            .map(|k| 1 << k)
    }
}

/// How a policy reads a subrole: `contains(lower(input.element.subrole),
/// "secure")` is `Op::Contains`, `Case::Lower`, `"secure"`;
/// `input.element.subrole == "chat"` is `Op::Equals`, `Case::AsIs`, `"chat"`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct SubroleTest {
    pub op: Op,
    pub case: Case,
    pub needle: String,
}

/// The string builtin of a [`SubroleTest`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Op {
    Contains,
    StartsWith,
    EndsWith,
    /// `==` (and `!=`, its negation) with a string.
    Equals,
}

/// What is done to the subrole before the test: regorus's `lower` and
/// `upper` are Rust's `to_lowercase` and `to_uppercase`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Case {
    AsIs,
    Lower,
    Upper,
}

impl SubroleTest {
    /// Whether the subrole is there, then each test's outcome, as bits
    /// (regorus's builtins of the same names: `str::contains`,
    /// `starts_with`, `ends_with`).
    fn write_outcomes(tests: &[SubroleTest], subrole: Option<&str>, out: &mut Vec<u8>) {
        let Some(subrole) = subrole else {
            out.push(0);
            return;
        };
        out.push(1);
        let mut cases = Cases::new(subrole);
        let mut bits = 0u8;
        for (k, test) in tests.iter().enumerate() {
            bits |= u8::from(test.holds(&mut cases)) << (k % 8);
            if k % 8 == 7 {
                out.push(bits);
                bits = 0;
            }
        }
        if tests.len() % 8 != 0 {
            out.push(bits);
        }
    }

    /// Each test's outcome on a subrole that is there, as the bits of a
    /// number (test `k` is bit `k`): at most 32 tests.
    pub(crate) fn outcome_bits(tests: &[SubroleTest], subrole: &str) -> Option<u32> {
        if tests.len() > 32 {
            return None;
        }
        let mut cases = Cases::new(subrole);
        let mut bits = 0u32;
        for (k, test) in tests.iter().enumerate() {
            bits |= u32::from(test.holds(&mut cases)) << k;
        }
        Some(bits)
    }

    /// Whether the test holds (regorus's builtins of the same names:
    /// `str::contains`, `starts_with`, `ends_with`).
    fn holds(&self, cases: &mut Cases<'_>) -> bool {
        let s: &str = match self.case {
            Case::AsIs => cases.as_is,
            Case::Lower => cases
                .lower
                .get_or_insert_with(|| cases.as_is.to_lowercase()),
            Case::Upper => cases
                .upper
                .get_or_insert_with(|| cases.as_is.to_uppercase()),
        };
        match self.op {
            Op::Contains => s.contains(self.needle.as_str()),
            Op::StartsWith => s.starts_with(self.needle.as_str()),
            Op::EndsWith => s.ends_with(self.needle.as_str()),
            Op::Equals => s == self.needle,
        }
    }
}

/// A subrole as the tests read it, each case made once.
struct Cases<'s> {
    as_is: &'s str,
    lower: Option<String>,
    upper: Option<String>,
}

impl<'s> Cases<'s> {
    fn new(as_is: &'s str) -> Cases<'s> {
        Cases {
            as_is,
            lower: None,
            upper: None,
        }
    }
}

/// What makes two projections the same decision: owned, compared exactly
/// (no hash collisions to tell apart).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ProjectionKey(Box<[u8]>);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::floor::FLOOR_SECURE_TEXT;
    use proptest::prelude::*;

    fn json(input: &ElementInput<'_>) -> serde_json::Value {
        let request = Value::from(serde_json::json!({"action": {"name": "app"}, "app": {}}));
        serde_json::from_str(&input.rego_input(&request).to_json_str().unwrap()).unwrap()
    }

    const ROLES: [Role; 4] = [Role::Text, Role::Group, Role::Window, Role::Document];
    const WORDS: [&str; 5] = ["", "a", "secure", "AXSecureTextField", "pane"];

    fn values() -> &'static [serde_json::Value; 4] {
        static VALUES: std::sync::OnceLock<[serde_json::Value; 4]> = std::sync::OnceLock::new();
        VALUES.get_or_init(|| {
            [
                serde_json::json!(1),
                serde_json::json!("1"),
                serde_json::json!({"a": [1, null]}),
                serde_json::json!(null),
            ]
        })
    }

    #[derive(Debug, Clone)]
    struct Spec {
        role: usize,
        subrole: Option<usize>,
        flags: [bool; 7],
        names: Vec<usize>,
        attributes: Vec<(usize, usize)>,
        matches: Vec<usize>,
        inside: Vec<(usize, Option<usize>)>,
    }

    fn spec() -> impl Strategy<Value = Spec> {
        let word = 0..WORDS.len();
        (
            0..ROLES.len(),
            proptest::option::of(word.clone()),
            proptest::array::uniform7(any::<bool>()),
            proptest::collection::vec(word.clone(), 0..3),
            proptest::collection::vec((word.clone(), 0..4usize), 0..3),
            proptest::collection::vec(word.clone(), 0..2),
            proptest::collection::vec((0..ROLES.len(), proptest::option::of(word)), 0..3),
        )
            .prop_map(
                |(role, subrole, flags, names, attributes, matches, inside)| Spec {
                    role,
                    subrole,
                    flags,
                    names,
                    attributes,
                    matches,
                    inside,
                },
            )
    }

    fn build(s: &Spec) -> ElementInput<'static> {
        ElementInput {
            role: ROLES[s.role],
            subrole: s.subrole.map(|w| WORDS[w]),
            selected: s.flags[0],
            focused: s.flags[1],
            visible: s.flags[2],
            hovered: s.flags[3],
            has_title: s.flags[4],
            has_content: s.flags[5],
            contains_selection: s.flags[6],
            attribute_names: s.names.iter().map(|&w| WORDS[w]).collect(),
            // Attribute names are unique, as in a provider's map.
            attributes: {
                let mut seen = Vec::new();
                s.attributes
                    .iter()
                    .filter(|(k, _)| {
                        !seen.contains(k) && {
                            seen.push(*k);
                            true
                        }
                    })
                    .map(|&(k, v)| (WORDS[k], &values()[v]))
                    .collect()
            },
            title_matches: s.matches.iter().map(|&w| WORDS[w]).collect(),
            inside: s
                .inside
                .iter()
                .map(|&(r, w)| (ROLES[r], w.map(|w| WORDS[w])))
                .collect(),
            secure_elsewhere: false,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        /// The key and the Rego input cannot disagree: equal keys give
        /// identical input JSON, and different input JSON different keys.
        #[test]
        fn equal_keys_mean_equal_inputs_and_different_inputs_different_keys(
            a in spec(), b in spec()
        ) {
            let (a, b) = (build(&a), build(&b));
            let same_key = a.key() == b.key();
            let same_input = json(&a) == json(&b);
            prop_assert_eq!(same_key, same_input, "{:?} / {:?}", a, b);
            // The trimmer's per-request key (derived over every field,
            // ancestors by id) is at least as fine as the input.
            let (ia, ib) = (a.inside.clone(), b.inside.clone());
            let da = a.clone().with_inside(ia.digest());
            let db = b.clone().with_inside(ib.digest());
            if da == db {
                prop_assert!(same_input);
            }
        }
    }

    #[test]
    fn the_input_has_exactly_the_named_fields() {
        let values = values();
        let input = ElementInput {
            subrole: Some("pane"),
            attributes: vec![("k", &values[0])],
            ..build(&Spec {
                role: 0,
                subrole: None,
                flags: [true; 7],
                names: vec![1],
                attributes: vec![],
                matches: vec![1],
                inside: vec![],
            })
        };
        let json = json(&input);
        let mut got: Vec<&str> = json["element"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut want: Vec<&str> = field_shapes().iter().map(|(n, _)| *n).collect();
        got.sort();
        want.sort();
        assert_eq!(got, want);
    }

    #[test]
    fn a_secure_fields_values_never_reach_the_input_and_the_floor_is_typed() {
        let values = values();
        let mut input = build(&Spec {
            role: 1,
            subrole: Some(3),
            flags: [false; 7],
            names: vec![],
            attributes: vec![],
            matches: vec![],
            inside: vec![],
        });
        input.attributes = vec![("value", &values[1])];
        assert_eq!(json(&input)["element"]["attributes"], serde_json::json!({}));
        assert_eq!(Floor::of_reason(FLOOR_SECURE_TEXT), Some(Floor::SecureText));
        assert_eq!(Floor::of_reason("floor:other"), None);
        let d = crate::policy::engine::enforce(&input, Arc::new(Decision::default())).unwrap();
        assert_eq!(d.mask, vec![Arc::<str>::from(FLOOR_SECURE_TEXT)]);
    }
}
