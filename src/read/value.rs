//! Values below the element: scalar fields, values kept whole and bounded
//! in depth (attributes, a block's other values, 0.1 `items` and `focus`),
//! values skipped as strictly as kept ones are read (`Skip`), and borrowed
//! strings.

use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::Ctx;
use crate::finding::{escape_pointer, Finding, Requirement};
use crate::model::{Attributes, BlockValue};

/// A scalar field's value, or the kind of what stood there instead.
pub(super) enum Scalar<'de> {
    /// Borrowed from the input unless it had escapes.
    Str(Cow<'de, str>),
    Bool(bool),
    Other(&'static str),
}

impl Scalar<'_> {
    pub(super) fn kind(&self) -> &'static str {
        match self {
            Scalar::Str(_) => "a string",
            Scalar::Bool(_) => "a boolean",
            Scalar::Other(kind) => kind,
        }
    }
}

pub(super) struct ScalarSeed;

impl<'de> DeserializeSeed<'de> for ScalarSeed {
    type Value = Scalar<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Scalar<'de>, D::Error> {
        d.deserialize_any(ScalarVisitor)
    }
}

pub(super) struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Scalar::Bool(v))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Scalar::Other("a number"))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Scalar::Other("a number"))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Scalar::Other("a number"))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Owned(v.to_string())))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Owned(v)))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Other("null"))
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Other("null"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(Scalar::Other("an array"))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<Skip, Skip>()?.is_some() {}
        Ok(Scalar::Other("an object"))
    }
}

/// Any JSON value, skipped without being built, but read as strictly as a
/// value that is kept: serde_json's own skipping (`IgnoredAny`) takes a
/// number out of an f64's range (`1e999`) and a lone surrogate escape
/// (`"\ud800"`) without a word, so an unknown field's value could hold what
/// the same field read anywhere else refuses. Nested values are skipped on a
/// stack that grows as it needs (`stacker`); their nesting is bounded by
/// `scan_nesting`.
pub(super) struct Skip;

impl<'de> de::Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Skip, D::Error> {
        struct SkipVisitor;
        impl<'de> Visitor<'de> for SkipVisitor {
            type Value = Skip;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Skip, E> {
                Ok(Skip)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Skip, E> {
                Ok(Skip)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Skip, E> {
                Ok(Skip)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Skip, E> {
                Ok(Skip)
            }
            fn visit_str<E>(self, _: &str) -> Result<Skip, E> {
                Ok(Skip)
            }
            fn visit_unit<E>(self) -> Result<Skip, E> {
                Ok(Skip)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Skip, A::Error> {
                while seq.next_element::<Skip>()?.is_some() {}
                Ok(Skip)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skip, A::Error> {
                while map.next_entry::<Skip, Skip>()?.is_some() {}
                Ok(Skip)
            }
        }
        // A value is skipped only where a finding is made: reading in one
        // pass, that stops the pass (the two passes read it after the scan
        // has bounded its nesting).
        if ONE_PASS.with(|p| p.get().is_some()) {
            return Err(de::Error::custom("read again in two passes"));
        }
        stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || d.deserialize_any(SkipVisitor))
    }
}

thread_local! {
    /// While this thread reads in one pass: the deepest level of an array
    /// or object a [`BoundedValue`] has read (0, the attributes object
    /// itself; 1, a value directly inside it or inside a content block).
    static ONE_PASS: Cell<Option<usize>> = const { Cell::new(None) };
}

/// This thread reads in one pass while the value lives (`read_fast_into`):
/// [`Skip`] stops the pass, and [`BoundedValue`] notes how deep its arrays
/// and objects go.
pub(super) struct OnePass(());

impl OnePass {
    pub(super) fn start() -> OnePass {
        ONE_PASS.with(|p| p.set(Some(0)));
        OnePass(())
    }

    /// The deepest level of an array or object read inside an element.
    pub(super) fn deepest_value() -> usize {
        ONE_PASS.with(|p| p.get().unwrap_or(0))
    }

    fn note(level: usize) {
        ONE_PASS.with(|p| {
            if let Some(deepest) = p.get() {
                if level > deepest {
                    p.set(Some(level));
                }
            }
        });
    }
}

impl Drop for OnePass {
    fn drop(&mut self) {
        ONE_PASS.with(|p| p.set(None));
    }
}

/// A string borrowed from the input unless it had escapes.
pub(super) struct BorrowedStr<'de>(pub(super) Cow<'de, str>);

impl<'de> de::Deserialize<'de> for BorrowedStr<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<BorrowedStr<'de>, D::Error> {
        struct StrVisitor;
        impl<'de> Visitor<'de> for StrVisitor {
            type Value = BorrowedStr<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(BorrowedStr(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(BorrowedStr(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(BorrowedStr(Cow::Owned(v)))
            }
        }
        d.deserialize_str(StrVisitor)
    }
}

/// Stack room an element makes sure of before it is read, and the size of a
/// new stack segment when there is less (as `serde_stacker`'s defaults).
pub(super) const RED_ZONE: usize = 64 * 1024;
pub(super) const STACK_SEGMENT: usize = 2 * 1024 * 1024;

/// How deep a value inside an element (an attribute, a content block's
/// value, a 0.1 `items` entry) may nest: as serde_json's own default. Elements
/// nest as the limits allow; values are data, and a bound keeps reading,
/// copying, rendering and freeing them off any risk to the stack.
pub const MAX_VALUE_DEPTH: usize = 128;

/// Why a value inside an element (or a 0.1 `items` or `focus`) was not read.
#[derive(Debug)]
pub(super) enum ValueProblem {
    /// It nests deeper than [`MAX_VALUE_DEPTH`]; reported at the value.
    TooDeep,
    /// A key appears twice in one object; reported at the second one.
    Repeated {
        /// The key, as written.
        key: String,
        /// The pointer's segments from the value down to the key, escaped,
        /// innermost first (pushed as the problem travels out).
        path: Vec<String>,
    },
}

impl ValueProblem {
    pub(super) fn repeated(key: String) -> ValueProblem {
        let path = vec![escape_pointer(&key)];
        ValueProblem::Repeated { key, path }
    }

    /// The same problem seen from the value that holds this one at `segment`.
    pub(super) fn inside(mut self, segment: &str) -> ValueProblem {
        if let ValueProblem::Repeated { path, .. } = &mut self {
            path.push(escape_pointer(segment));
        }
        self
    }
}

pub(super) fn too_deep_message() -> String {
    format!("nests deeper than {MAX_VALUE_DEPTH} levels; values inside an element are read to {MAX_VALUE_DEPTH} levels")
}

impl Ctx<'_, '_> {
    pub(super) fn too_deep(&mut self, pointer: String) {
        self.findings.push(Finding::error(
            Requirement::Schema,
            pointer,
            None,
            too_deep_message(),
        ));
    }

    /// The finding for a value read at `at` that had `problem`.
    pub(super) fn value_problem(&mut self, mut at: String, problem: ValueProblem) {
        match problem {
            ValueProblem::TooDeep => self.too_deep(at),
            ValueProblem::Repeated { key, path } => {
                for segment in path.iter().rev() {
                    at.push('/');
                    at.push_str(segment);
                }
                self.findings.push(Finding::error(
                    Requirement::Schema,
                    at,
                    None,
                    format!("key `{key}` appears twice in one object; write each key once (JSON readers differ on which value counts)"),
                ));
            }
        }
    }
}

/// Any JSON value, as serde_json reads a `Value`, at most
/// [`MAX_VALUE_DEPTH`] levels deep (the field is the current level), each
/// key once in each object. On a problem the rest of the value is skipped
/// ([`Skip`]).
pub(super) struct BoundedValue(pub(super) usize);

impl<'de> DeserializeSeed<'de> for BoundedValue {
    type Value = Result<Value, ValueProblem>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for BoundedValue {
    type Value = Result<Value, ValueProblem>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Ok(Value::Bool(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Ok(Value::from(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Ok(Value::from(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Ok(Value::from(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Ok(Value::String(v.to_string())))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Ok(Value::String(v)))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Ok(Value::Null))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        OnePass::note(self.0);
        if self.0 >= MAX_VALUE_DEPTH {
            while seq.next_element::<Skip>()?.is_some() {}
            return Ok(Err(ValueProblem::TooDeep));
        }
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(BoundedValue(self.0 + 1))? {
            match item {
                Ok(item) => items.push(item),
                Err(problem) => {
                    while seq.next_element::<Skip>()?.is_some() {}
                    return Ok(Err(problem.inside(&items.len().to_string())));
                }
            }
        }
        Ok(Ok(Value::Array(items)))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        OnePass::note(self.0);
        if self.0 >= MAX_VALUE_DEPTH {
            while map.next_entry::<Skip, Skip>()?.is_some() {}
            return Ok(Err(ValueProblem::TooDeep));
        }
        let mut object = serde_json::Map::new();
        Ok(match self.visit_rest(&mut map, &mut object)? {
            Some(problem) => Err(problem),
            None => Ok(Value::Object(object)),
        })
    }
}

impl BoundedValue {
    /// Reads the rest of an object at this level into `object`: `Some` with
    /// the first problem (the rest then skipped).
    fn visit_rest<'de, A: MapAccess<'de>>(
        self,
        map: &mut A,
        object: &mut serde_json::Map<String, Value>,
    ) -> Result<Option<ValueProblem>, A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            let value = match map.next_value_seed(BoundedValue(self.0 + 1))? {
                Ok(value) => value,
                Err(problem) => {
                    while map.next_entry::<Skip, Skip>()?.is_some() {}
                    return Ok(Some(problem.inside(&key)));
                }
            };
            // The map finds a repeated key as it inserts: no second lookup.
            match object.entry(key) {
                serde_json::map::Entry::Vacant(slot) => {
                    slot.insert(value);
                }
                serde_json::map::Entry::Occupied(slot) => {
                    let key = slot.key().clone();
                    while map.next_entry::<Skip, Skip>()?.is_some() {}
                    return Ok(Some(ValueProblem::repeated(key)));
                }
            }
        }
        Ok(None)
    }
}

/// An element's `attributes`: what [`BoundedValue`] at level 0 reads, with
/// an object's pairs gathered in `pairs` (reused for every element) and
/// moved into [`Attributes`] once, instead of into a map that is then
/// copied into another. Anything but an object is read as [`BoundedValue`]
/// reads it, for the same finding.
pub(super) struct AttributesSeed<'c>(pub(super) &'c mut Vec<(String, Value)>);

/// What [`AttributesSeed`] read.
pub(super) enum ReadAttributes {
    Object(Attributes),
    /// Not an object: the value, for the finding's kind.
    Other(Value),
}

/// Keys compared pairwise to find a repeated one in [`AttributesSeed`]; past
/// it the pairs move into a map, which finds one as it inserts.
const PAIRWISE_KEYS: usize = 16;

impl<'de> DeserializeSeed<'de> for AttributesSeed<'_> {
    type Value = Result<ReadAttributes, ValueProblem>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

fn other(read: Result<Value, ValueProblem>) -> Result<ReadAttributes, ValueProblem> {
    read.map(ReadAttributes::Other)
}

impl<'de> Visitor<'de> for AttributesSeed<'_> {
    type Value = Result<ReadAttributes, ValueProblem>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(other(BoundedValue(0).visit_bool(v)?))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(other(BoundedValue(0).visit_i64(v)?))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(other(BoundedValue(0).visit_u64(v)?))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(other(BoundedValue(0).visit_f64(v)?))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(other(BoundedValue(0).visit_str(v)?))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(other(BoundedValue(0).visit_string(v)?))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(other(BoundedValue(0).visit_unit()?))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Ok(other(BoundedValue(0).visit_seq(seq)?))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        // As `BoundedValue(0).visit_map`: each value read at level 1, the
        // first problem (inside a value, or a key written twice, found once
        // its value is read) ends the object.
        OnePass::note(0);
        let pairs = self.0;
        pairs.clear();
        while let Some(key) = map.next_key::<String>()? {
            let value = match map.next_value_seed(BoundedValue(1))? {
                Ok(value) => value,
                Err(problem) => {
                    while map.next_entry::<Skip, Skip>()?.is_some() {}
                    return Ok(Err(problem.inside(&key)));
                }
            };
            if pairs.iter().any(|(seen, _)| *seen == key) {
                while map.next_entry::<Skip, Skip>()?.is_some() {}
                return Ok(Err(ValueProblem::repeated(key)));
            }
            pairs.push((key, value));
            if pairs.len() == PAIRWISE_KEYS {
                let mut object: serde_json::Map<String, Value> = pairs.drain(..).collect();
                return Ok(match BoundedValue(0).visit_rest(&mut map, &mut object)? {
                    Some(problem) => Err(problem),
                    None => Ok(ReadAttributes::Object(Attributes::from_distinct(
                        object.into_iter().collect(),
                    ))),
                });
            }
        }
        // Moved out at their exact size; the scratch keeps its room for the
        // next element (`mem::take` would hand over the room too).
        #[allow(clippy::drain_collect)]
        let pairs: Vec<(String, Value)> = pairs.drain(..).collect();
        Ok(Ok(ReadAttributes::Object(Attributes::from_distinct(pairs))))
    }
}

/// A 0.1 `items` or `focus` list (the field's name): each entry read as a
/// [`BoundedValue`], so a problem in one is a finding at its index and the
/// others are still read. `None` when there was a problem.
pub(super) struct ListSeed<'c, 'l, 'de>(pub(super) &'c mut Ctx<'l, 'de>, pub(super) &'static str);

impl<'de> DeserializeSeed<'de> for ListSeed<'_, '_, 'de> {
    type Value = Option<Value>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl ListSeed<'_, '_, '_> {
    pub(super) fn read(self, value: Result<Value, ValueProblem>) -> Option<Value> {
        value
            .map_err(|problem| self.0.value_problem(format!("/{}", self.1), problem))
            .ok()
    }
}

impl<'de> Visitor<'de> for ListSeed<'_, '_, 'de> {
    type Value = Option<Value>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Some(Value::Bool(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Some(Value::from(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Some(Value::from(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Some(Value::from(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(Value::String(v.to_string())))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Some(Value::Null))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let value = BoundedValue(0).visit_map(map)?;
        Ok(self.read(value))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let (ctx, field) = (self.0, self.1);
        let mut entries = Vec::new();
        let mut clean = true;
        let mut i = 0;
        while let Some(entry) = seq.next_element_seed(BoundedValue(1))? {
            match entry {
                Ok(entry) => entries.push(entry),
                Err(problem) => {
                    ctx.value_problem(format!("/{field}/{i}"), problem);
                    clean = false;
                }
            }
            i += 1;
        }
        Ok(clean.then_some(Value::Array(entries)))
    }
}

/// A content block's value: strings borrowed as [`BorrowedStr`], anything
/// else a [`BoundedValue`] (the block is the first level).
pub(super) struct BlockValueSeed;

impl<'de> DeserializeSeed<'de> for BlockValueSeed {
    type Value = Result<BlockValue<'de>, ValueProblem>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for BlockValueSeed {
    type Value = Result<BlockValue<'de>, ValueProblem>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Ok(BlockValue::Str(Cow::Borrowed(v))))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Ok(BlockValue::Str(Cow::Owned(v.to_string()))))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Ok(BlockValue::Str(Cow::Owned(v))))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(BoundedValue(1).visit_bool(v)?.map(BlockValue::Other))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(BoundedValue(1).visit_i64(v)?.map(BlockValue::Other))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(BoundedValue(1).visit_u64(v)?.map(BlockValue::Other))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(BoundedValue(1).visit_f64(v)?.map(BlockValue::Other))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(BoundedValue(1).visit_unit()?.map(BlockValue::Other))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Ok(BoundedValue(1).visit_seq(seq)?.map(BlockValue::Other))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Ok(BoundedValue(1).visit_map(map)?.map(BlockValue::Other))
    }
}
