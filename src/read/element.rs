//! The answer object and the element tree: the answer's fields, each
//! element's fields, its children (gathered on the reader's scratch stack)
//! and its content blocks (read straight into typed `Content`).

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::fields::{removed_hint, repeated_field, repeats, unknown_field, Field};
use super::value::{
    AttributesSeed, BlockValueSeed, BorrowedStr, ListSeed, ReadAttributes, Scalar, ScalarSeed,
    Skip, ValueProblem, RED_ZONE, STACK_SEGMENT,
};
use super::{Ctx, RawAnswer};
use crate::deadline::Stage;
use crate::error::{DepthPlace, Error};
use crate::finding::{escape_pointer, json_kind, Finding, Requirement};
use crate::model::{text_bytes, BlockValue, Content, Element, RoleName};

pub(super) struct AnswerSeed<'c, 'l, 'de>(pub(super) &'c mut Ctx<'l, 'de>);

impl<'de> DeserializeSeed<'de> for AnswerSeed<'_, '_, 'de> {
    type Value = Option<RawAnswer<'de>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let ctx = self.0;
        match d.deserialize_any(AnswerVisitor(&mut *ctx))? {
            Ok(raw) => Ok(Some(raw)),
            Err(kind) => {
                ctx.findings.push(Finding::error(
                    Requirement::Schema,
                    "",
                    None,
                    format!("an answer must be a JSON object, found {kind}"),
                ));
                Ok(None)
            }
        }
    }
}

/// Visits the answer: `Ok(answer)` for an object, `Err(kind)` otherwise.
pub(super) struct AnswerVisitor<'c, 'l, 'de>(pub(super) &'c mut Ctx<'l, 'de>);

kind_visitor!(
    AnswerVisitor<'_, '_, 'de>,
    RawAnswer<'de>,
    "an answer object"
);

impl<'de> AnswerVisitor<'_, '_, 'de> {
    pub(super) fn on_seq<A: SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> Result<Result<RawAnswer<'de>, &'static str>, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(Err("an array"))
    }
    pub(super) fn on_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> Result<Result<RawAnswer<'de>, &'static str>, A::Error> {
        let ctx = self.0;
        let mut raw = RawAnswer::default();
        let mut seen: u32 = 0;
        let mut others: Vec<String> = Vec::new();
        while let Some(field) = map.next_key::<Field>()? {
            let bit = field.bit();
            if seen & bit != 0 {
                repeated_field(ctx, String::new(), field.name(), "the answer");
            }
            seen |= bit;
            match field {
                Field::Protocol | Field::Instance | Field::Title => {
                    let value = map.next_value_seed(ScalarSeed)?;
                    let name = field.name().to_string();
                    let Scalar::Str(s) = value else {
                        ctx.wrong_type(&name, "a string", &value, None);
                        continue;
                    };
                    match field {
                        Field::Protocol => raw.protocol = Some(s.into_owned()),
                        Field::Instance => raw.instance = Some(s.into_owned()),
                        _ => raw.title = Some(s.into_owned()),
                    }
                }
                Field::Root => {
                    ctx.path.clear();
                    raw.root = if map.next_value_seed(ElementSeed(&mut *ctx))? {
                        ctx.siblings.pop()
                    } else {
                        None
                    };
                }
                Field::Items | Field::Focus => {
                    let name = if matches!(field, Field::Items) {
                        "items"
                    } else {
                        "focus"
                    };
                    let Some(value) = map.next_value_seed(ListSeed(&mut *ctx, name))? else {
                        raw.unreadable = true;
                        continue;
                    };
                    match field {
                        Field::Items => raw.items = Some(value),
                        _ => raw.focus = Some(value),
                    }
                }
                other => {
                    map.next_value::<Skip>()?;
                    ctx.findings.push(Finding::warning(
                        Requirement::Schema,
                        format!("/{}", escape_pointer(other.name())),
                        None,
                        format!(
                            "unknown answer field `{}` is ignored and never sent",
                            other.name()
                        ),
                    ));
                    if let Field::Other(name) = other {
                        others.push(name);
                    }
                }
            }
        }
        for at in repeats(&others, String::as_str, &mut ctx.order) {
            repeated_field(ctx, String::new(), &others[at], "the answer");
        }
        Ok(Ok(raw))
    }
}

/// Reads one element onto the top of the context's `siblings` stack (where
/// its parent gathers its children, so the 176-byte element is not moved
/// through every layer's return value): `true` when it was an object and
/// is there, `false` (and a finding) otherwise.
pub(super) struct ElementSeed<'c, 'l, 'de>(pub(super) &'c mut Ctx<'l, 'de>);

impl<'de> DeserializeSeed<'de> for ElementSeed<'_, '_, 'de> {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let ctx = self.0;
        // Elements nest as deep as the limits allow: each one makes sure of
        // room on the stack for itself (its own fields are shallow; values
        // nested inside them are read through `serde_stacker`).
        let read = stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
            d.deserialize_any(ScalarOrElement(&mut *ctx))
        });
        match read? {
            Ok(()) => Ok(true),
            Err(kind) => {
                ctx.findings.push(Finding::error(
                    Requirement::Schema,
                    ctx.pointer(),
                    None,
                    format!("an element must be a JSON object, found {kind}"),
                ));
                Ok(false)
            }
        }
    }
}

/// Visits an element: `Ok(())` for an object, pushed onto `siblings`;
/// `Err(kind)` otherwise.
pub(super) struct ScalarOrElement<'c, 'l, 'de>(pub(super) &'c mut Ctx<'l, 'de>);

kind_visitor!(ScalarOrElement<'_, '_, 'de>, (), "an element object");

impl<'de> ScalarOrElement<'_, '_, 'de> {
    pub(super) fn on_seq<A: SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> Result<Result<(), &'static str>, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(Err("an array"))
    }
    pub(super) fn on_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> Result<Result<(), &'static str>, A::Error> {
        let ctx = self.0;
        ctx.elements += 1;
        if ctx.elements > ctx.limits.max_elements {
            let limit = ctx.limits.max_elements;
            return Err(ctx.stop(Error::TooManyElements { limit }));
        }
        if let Some(deadline) = ctx.deadline {
            if let Err(err) = deadline.every(ctx.elements, Stage::Read) {
                return Err(ctx.stop(err));
            }
        }
        ctx.depth += 1;
        ctx.deepest = ctx.deepest.max(ctx.depth);
        if ctx.depth > ctx.limits.max_depth {
            let error = Error::TooDeep {
                limit: ctx.limits.max_depth,
                place: DepthPlace::Element(ctx.pointer()),
            };
            return Err(ctx.stop(error));
        }
        let mut element = Element::default();
        let mut seen: u32 = 0;
        // Unknown field names, to find one written twice (no allocation
        // for an element without them).
        let mut others: Vec<String> = Vec::new();
        let (mut has_id, mut has_role) = (false, false);
        let mut role_word: Option<Cow<'de, str>> = None;
        while let Some(field) = map.next_key::<Field>()? {
            let bit = field.bit();
            if seen & bit != 0 {
                repeated_field(ctx, ctx.pointer(), field.name(), "one element");
            }
            seen |= bit;
            match field {
                Field::Id | Field::Role | Field::Subrole | Field::Title | Field::Url => {
                    let value = map.next_value_seed(ScalarSeed)?;
                    // Present, if not well-typed: one finding, not two.
                    has_id |= matches!(field, Field::Id);
                    has_role |= matches!(field, Field::Role);
                    let Scalar::Str(s) = value else {
                        ctx.wrong_type(field.name(), "a string", &value, None);
                        continue;
                    };
                    match field {
                        Field::Id => element.id = s,
                        Field::Role => role_word = Some(s),
                        Field::Subrole => element.subrole = Some(s),
                        Field::Title => element.title = Some(s),
                        _ => element.url = Some(s),
                    }
                }
                Field::Selected | Field::Focused | Field::Visible | Field::Hovered => {
                    let value = map.next_value_seed(ScalarSeed)?;
                    let Scalar::Bool(b) = value else {
                        ctx.wrong_type(field.name(), "true or false", &value, None);
                        continue;
                    };
                    match field {
                        Field::Selected => element.selected = Some(b),
                        Field::Focused => element.focused = Some(b),
                        Field::Visible => element.visible = Some(b),
                        _ => element.hovered = Some(b),
                    }
                }
                Field::Children => {
                    let children = map.next_value_seed(ChildrenSeed(&mut *ctx))?;
                    element.children = children.into();
                }
                Field::Content => {
                    element.content = map.next_value_seed(ContentSeed(&mut *ctx))?;
                }
                Field::Attributes => match map.next_value_seed(AttributesSeed(&mut ctx.pairs))? {
                    Ok(ReadAttributes::Object(attributes)) => element.attributes = attributes,
                    Err(problem) => {
                        let at = format!("{}/attributes", ctx.pointer());
                        ctx.value_problem(at, problem);
                    }
                    Ok(ReadAttributes::Other(other)) => {
                        let found = Scalar::Other(json_kind(&other));
                        ctx.wrong_type("attributes", "an object", &found, None);
                    }
                },
                Field::Items | Field::Focus | Field::Protocol | Field::Instance | Field::Root => {
                    map.next_value::<Skip>()?;
                    unknown_field(ctx, field.name());
                }
                Field::Other(name) => {
                    map.next_value::<Skip>()?;
                    match name.as_str() {
                        "type" | "parent" | "locatable" | "payload" => {
                            ctx.findings.push(Finding::error(
                                Requirement::Version,
                                format!("{}/{}", ctx.pointer(), name),
                                None,
                                format!(
                                    "`{name}` is a 0.1 field, removed in 0.2.0 ({})",
                                    removed_hint(&name)
                                ),
                            ));
                        }
                        _ => unknown_field(ctx, &name),
                    }
                    others.push(name);
                }
            }
        }
        if others.len() > 1 {
            for at in repeats(&others, String::as_str, &mut ctx.order) {
                repeated_field(ctx, ctx.pointer(), &others[at], "one element");
            }
        }
        if let Some(word) = role_word {
            element.role = RoleName::parse(&word);
        }
        for (present, field) in [(has_id, "id"), (has_role, "role")] {
            if !present {
                let id = has_id.then(|| element.id.to_string());
                ctx.findings.push(Finding::error(
                    Requirement::Schema,
                    format!("{}/{}", ctx.pointer(), field),
                    id,
                    format!("an element needs `{field}`"),
                ));
            }
        }
        let size = text_bytes(&element);
        if size > ctx.limits.max_content_bytes {
            let error = Error::ContentTooLarge {
                pointer: ctx.pointer(),
                size,
                limit: ctx.limits.max_content_bytes,
            };
            return Err(ctx.stop(error));
        }
        ctx.depth -= 1;
        ctx.siblings.push(element);
        Ok(Ok(()))
    }
}

/// An element's `content`: its blocks, each read straight into a
/// [`Content`] (strings borrowed); a problem is a finding at its pointer.
pub(super) struct ContentSeed<'c, 'l, 'de>(pub(super) &'c mut Ctx<'l, 'de>);

impl<'de> DeserializeSeed<'de> for ContentSeed<'_, '_, 'de> {
    type Value = Vec<Content<'de>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let ctx = self.0;
        let read = d.deserialize_any(ContentVisitor(&mut *ctx))?;
        Ok(ctx.list_or_wrong_type(read, "content", "an array of content blocks"))
    }
}

pub(super) struct ContentVisitor<'c, 'l, 'de>(pub(super) &'c mut Ctx<'l, 'de>);
kind_visitor!(
    ContentVisitor<'_, '_, 'de>,
    Vec<Content<'de>>,
    "an array of content blocks"
);

impl<'de> ContentVisitor<'_, '_, 'de> {
    pub(super) fn on_seq<A: SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> Result<Result<Vec<Content<'de>>, &'static str>, A::Error> {
        let ctx = self.0;
        let start = ctx.blocks.len();
        let mut i = 0;
        while let Some(block) = seq.next_element_seed(BlockSeed(&mut ctx.block))? {
            let problem = match block {
                Ok(()) => match Content::from_pairs(ctx.block.pairs_mut()) {
                    Ok(content) => {
                        ctx.blocks.push(content);
                        i += 1;
                        continue;
                    }
                    Err(problem) => problem,
                },
                Err(VALUE_PROBLEM) => {
                    let problem = ctx.block.problem.take().expect("the block's problem");
                    let at = format!("{}/content/{i}", ctx.pointer());
                    ctx.value_problem(at, problem);
                    i += 1;
                    continue;
                }
                Err(kind) => format!("a content block must be an object, found {kind}"),
            };
            ctx.findings.push(Finding::error(
                Requirement::Schema,
                format!("{}/content/{i}", ctx.pointer()),
                None,
                problem,
            ));
            i += 1;
        }
        // Most elements with content have one block: moved out on its own.
        if ctx.blocks.len() == start + 1 {
            let mut one = Vec::with_capacity(1);
            one.extend(ctx.blocks.pop());
            return Ok(Ok(one));
        }
        Ok(Ok(ctx.blocks.drain(start..).collect()))
    }
    pub(super) fn on_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> Result<Result<Vec<Content<'de>>, &'static str>, A::Error> {
        while map.next_entry::<Skip, Skip>()?.is_some() {}
        Ok(Err("an object"))
    }
}

/// One content block: its keys and values, in order, into the reused
/// `pairs` (no map is built for a block's few keys).
pub(super) struct BlockSeed<'c, 'de>(pub(super) &'c mut BlockScratch<'de>);

/// What the reader reuses for every content block: its pairs, the order for
/// finding a repeated key among many, and the problem that stopped it.
#[derive(Default)]
pub(super) struct BlockScratch<'de> {
    pairs: Vec<(Cow<'de, str>, BlockValue<'de>)>,
    order: Vec<u32>,
    problem: Option<ValueProblem>,
}

impl<'de> BlockScratch<'de> {
    /// The block's pairs, for [`Content::from_pairs`].
    pub(super) fn pairs_mut(&mut self) -> &mut Vec<(Cow<'de, str>, BlockValue<'de>)> {
        &mut self.pairs
    }
}

impl<'de> DeserializeSeed<'de> for BlockSeed<'_, 'de> {
    type Value = Result<(), &'static str>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(BlockVisitor(self.0))
    }
}

pub(super) struct BlockVisitor<'c, 'de>(pub(super) &'c mut BlockScratch<'de>);
kind_visitor!(BlockVisitor<'_, 'de>, (), "a content block");

/// The kind a block reports when a [`ValueProblem`] waits in its scratch.
pub(super) const VALUE_PROBLEM: &str = "a value problem";

impl<'de> BlockVisitor<'_, 'de> {
    pub(super) fn on_seq<A: SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> Result<Result<(), &'static str>, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(Err("an array"))
    }
    pub(super) fn on_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> Result<Result<(), &'static str>, A::Error> {
        let scratch = self.0;
        scratch.pairs.clear();
        scratch.problem = None;
        while let Some(key) = map.next_key::<BorrowedStr<'de>>()? {
            match map.next_value_seed(BlockValueSeed)? {
                Ok(value) => scratch.pairs.push((key.0, value)),
                Err(problem) => {
                    // The first problem is the block's; the rest is skipped.
                    while map.next_entry::<Skip, Skip>()?.is_some() {}
                    scratch.problem = Some(problem.inside(&key.0));
                    return Ok(Err(VALUE_PROBLEM));
                }
            }
        }
        // A repeated key is refused: JSON readers differ on which value
        // counts, and the agent's might not take the one a policy saw.
        // (Most blocks have two keys: one comparison, no call.)
        let repeated = match &scratch.pairs[..] {
            [] | [_] => None,
            [(a, _), (b, _)] => (a == b).then_some(1),
            pairs => repeats(pairs, |(k, _)| k, &mut scratch.order)
                .first()
                .copied(),
        };
        if let Some(at) = repeated {
            let key = scratch.pairs[at].0.to_string();
            scratch.problem = Some(ValueProblem::repeated(key));
            return Ok(Err(VALUE_PROBLEM));
        }
        Ok(Ok(()))
    }
}

pub(super) struct ChildrenSeed<'c, 'l, 'de>(pub(super) &'c mut Ctx<'l, 'de>);

impl<'de> DeserializeSeed<'de> for ChildrenSeed<'_, '_, 'de> {
    type Value = Vec<Element<'de>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let ctx = self.0;
        let read = d.deserialize_any(ChildrenVisitor(&mut *ctx))?;
        Ok(ctx.list_or_wrong_type(read, "children", "an array of elements"))
    }
}

pub(super) struct ChildrenVisitor<'c, 'l, 'de>(pub(super) &'c mut Ctx<'l, 'de>);

kind_visitor!(
    ChildrenVisitor<'_, '_, 'de>,
    Vec<Element<'de>>,
    "an array of elements"
);

impl<'de> ChildrenVisitor<'_, '_, 'de> {
    pub(super) fn on_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> Result<Result<Vec<Element<'de>>, &'static str>, A::Error> {
        while map.next_entry::<Skip, Skip>()?.is_some() {}
        Ok(Err("an object"))
    }
    pub(super) fn on_seq<A: SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> Result<Result<Vec<Element<'de>>, &'static str>, A::Error> {
        let ctx = self.0;
        // JSON gives no length up front: children gather on the shared
        // stack and move out at their exact count (no regrowth, no slack).
        let start = ctx.siblings.len();
        let mut index = 0u32;
        loop {
            ctx.path.push(index);
            let next = seq.next_element_seed(ElementSeed(&mut *ctx));
            ctx.path.pop();
            if next?.is_none() {
                break;
            }
            index += 1;
        }
        Ok(Ok(ctx.siblings.drain(start..).collect()))
    }
}
