//! The field names the reader knows, from one table, and the findings about
//! fields: written twice, unknown, or removed in 0.2.0.

use serde::de::{self, Deserializer, Visitor};
use std::fmt;

use super::Ctx;
use crate::finding::{escape_pointer, Finding, Requirement};

/// One table of the answer's and the elements' field names: the `Field`
/// enum, its reading from a key, its name and its bit in a seen-set are all
/// written from it, so they cannot disagree.
macro_rules! fields {
    ($($variant:ident => $name:literal,)*) => {
        /// An element's or the answer's field names.
        pub(super) enum Field {
            $($variant,)*
            Other(String),
        }

        impl Field {
            fn parse(key: &str) -> Field {
                match key {
                    $($name => Field::$variant,)*
                    other => Field::Other(other.to_string()),
                }
            }

            pub(super) fn name(&self) -> &str {
                match self {
                    $(Field::$variant => $name,)*
                    Field::Other(name) => name,
                }
            }

            /// The field's bit in a set of the known fields seen in one
            /// object (0 for another name), to find one written twice
            /// without a map.
            pub(super) fn bit(&self) -> u32 {
                #[allow(clippy::enum_variant_names)]
                enum Index {
                    $($variant,)*
                }
                match self {
                    $(Field::$variant => 1 << Index::$variant as u32,)*
                    Field::Other(_) => 0,
                }
            }
        }
    };
}

fields! {
    Id => "id",
    Role => "role",
    Subrole => "subrole",
    Title => "title",
    Content => "content",
    Url => "url",
    Selected => "selected",
    Focused => "focused",
    Visible => "visible",
    Hovered => "hovered",
    Children => "children",
    Attributes => "attributes",
    Protocol => "protocol",
    Instance => "instance",
    Root => "root",
    Items => "items",
    Focus => "focus",
}

impl<'de> de::Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Field, D::Error> {
        struct FieldVisitor;
        impl Visitor<'_> for FieldVisitor {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E>(self, v: &str) -> Result<Field, E> {
                Ok(Field::parse(v))
            }
        }
        d.deserialize_str(FieldVisitor)
    }
}

pub(super) fn removed_hint(field: &str) -> &'static str {
    match field {
        "type" => "use `role` and `subrole`",
        "parent" => "nest the element in its parent's `children`",
        "locatable" => "whether an element can be located is asked with `locate`",
        _ => "use `attributes`",
    }
}

/// A field written twice in one object (`element` pointer, or empty for the
/// answer): refused, as JSON readers differ on which value counts.
pub(super) fn repeated_field(ctx: &mut Ctx, pointer: String, name: &str, within: &str) {
    ctx.findings.push(Finding::error(
        Requirement::Schema,
        format!("{pointer}/{}", escape_pointer(name)),
        None,
        format!("field `{name}` appears twice in {within}"),
    ));
}

pub(super) fn unknown_field(ctx: &mut Ctx, name: &str) {
    ctx.findings.push(Finding::warning(
        Requirement::Schema,
        format!("{}/{}", ctx.pointer(), escape_pointer(name)),
        None,
        format!("unknown element field `{name}` is ignored and never sent"),
    ));
}

/// The positions of the keys that repeat an earlier key, in order. Most
/// objects have a few keys: they are compared pairwise, allocating nothing;
/// more are sorted by key through `order`, which the caller reuses.
pub(super) fn repeats<T>(
    items: &[T],
    key: impl Fn(&T) -> &str,
    order: &mut Vec<u32>,
) -> Vec<usize> {
    let mut found = Vec::new();
    if items.len() <= 8 {
        for (i, item) in items.iter().enumerate() {
            let k = key(item);
            if items[..i].iter().any(|seen| key(seen) == k) {
                found.push(i);
            }
        }
        return found;
    }
    order.clear();
    order.extend(0..items.len() as u32);
    order.sort_unstable_by(|&a, &b| {
        key(&items[a as usize])
            .cmp(key(&items[b as usize]))
            .then(a.cmp(&b))
    });
    for pair in order.windows(2) {
        if key(&items[pair[0] as usize]) == key(&items[pair[1] as usize]) {
            found.push(pair[1] as usize);
        }
    }
    found.sort_unstable();
    found
}
