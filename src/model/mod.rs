//! The element model of protocol 0.2.0 (RFC-0001): plain data, serde, and
//! the derived view that reads states (R2). No I/O, no policy.
//!
//! Reading bytes into an [`Answer`] lives in [`crate::read()`]; this module only
//! defines what an answer is and how it serializes back.
//!
//! Nothing here recurses over the tree: `Clone`, `PartialEq`, `Debug`, drop
//! and [`Element::into_owned`] walk it with an explicit stack, and
//! `Serialize` (which serde's data model nests one call per level) runs each
//! level of children on a stack that grows on the heap as it needs, so an
//! answer as deep as a host's raised limits allow is cloned, compared,
//! printed and serialized on a normal thread.

pub(crate) mod content;
pub(crate) mod doc;
mod role;
pub(crate) mod tree;
pub mod v01;

pub(crate) use content::BlockValue;
pub use content::{Block, Content};
pub use role::{Role, RoleName};
pub use tree::{Node, NodeId, Tree};

use std::borrow::Cow;

use indexmap::IndexMap;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

/// The protocol version this crate reads and writes.
pub const PROTOCOL: &str = "0.2.0";

/// The names of the four states (RFC-0001 4.1 and the `hovered` amendment).
pub const STATES: [&str; 4] = ["selected", "focused", "visible", "hovered"];

/// A provider's answer to `current`: `{ protocol, instance, root }`.
#[derive(Debug, Clone, PartialEq)]
///
/// `'a` is the input the answer was read from: the reader borrows every
/// string that needs no unescaping instead of copying it
/// ([`Answer::into_owned`] detaches an answer from its input).
pub struct Answer<'a> {
    /// The protocol version, three parts (`0.2.0`).
    pub protocol: String,
    /// The provider instance that answered.
    pub instance: String,
    /// The application; the root of the tree.
    pub root: Element<'a>,
}

/// One element of the tree (RFC-0001 4.1).
///
/// States are stored as the provider stated them (`None` = absent); read
/// their effective values through [`Tree`], which applies R2.
///
/// `Clone`, `PartialEq` and `Debug` are written by hand without recursion
/// (see the module doc).
#[derive(Default)]
pub struct Element<'a> {
    /// Opaque, unique within the answer.
    pub id: Cow<'a, str>,
    /// The role as written.
    pub role: RoleName,
    /// The app's own word for the thing.
    pub subrole: Option<Cow<'a, str>>,
    /// One line a person could read.
    pub title: Option<Cow<'a, str>>,
    /// MCP content blocks.
    pub content: Vec<Content<'a>>,
    /// An address for the thing.
    pub url: Option<Cow<'a, str>>,
    /// The user selected this.
    pub selected: Option<bool>,
    /// The keyboard or cursor is here, or below.
    pub focused: Option<bool>,
    /// Drawn on screen now.
    pub visible: Option<bool>,
    /// The pointer is over this (RFC-0003).
    pub hovered: Option<bool>,
    /// The elements inside this one, in the app's order.
    pub children: Children<'a>,
    /// Anything else, by name, in the provider's order.
    pub attributes: Attributes,
}

impl Default for RoleName {
    fn default() -> Self {
        RoleName::Known(Role::Group)
    }
}

/// An element's children. A `Vec<Element>` (it derefs to one) whose drop
/// does not recurse, so a tree as deep as the limits allow (or deeper, if a
/// host raises them) cannot overflow the stack when it is freed, cloned,
/// compared, printed or serialized.
#[derive(Default)]
pub struct Children<'a>(pub Vec<Element<'a>>);

impl<'a> std::ops::Deref for Children<'a> {
    type Target = Vec<Element<'a>>;
    fn deref(&self) -> &Vec<Element<'a>> {
        &self.0
    }
}

impl<'a> std::ops::DerefMut for Children<'a> {
    fn deref_mut(&mut self) -> &mut Vec<Element<'a>> {
        &mut self.0
    }
}

impl<'a> From<Vec<Element<'a>>> for Children<'a> {
    fn from(children: Vec<Element<'a>>) -> Children<'a> {
        Children(children)
    }
}

impl Drop for Children<'_> {
    fn drop(&mut self) {
        if self.0.iter().all(|c| c.children.is_empty()) {
            return;
        }
        let mut stack = std::mem::take(&mut self.0);
        while let Some(mut element) = stack.pop() {
            stack.append(&mut element.children.0);
        }
    }
}

impl Serialize for Children<'_> {
    /// A sequence of elements. serde nests one call per level, so each child
    /// makes sure of room on the stack first (as the reader does): a deep
    /// tree grows the stack on the heap instead of overflowing it.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for child in &self.0 {
            stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || seq.serialize_element(child))?;
        }
        seq.end()
    }
}

/// Stack room a level of children makes sure of before it is serialized,
/// and the size of a new stack segment when there is less (as the reader's).
const RED_ZONE: usize = 64 * 1024;
const STACK_SEGMENT: usize = 2 * 1024 * 1024;

impl<'a> Element<'a> {
    /// A copy of the element without its children (room made for them).
    fn shallow_clone(&self) -> Element<'a> {
        Element {
            id: self.id.clone(),
            role: self.role.clone(),
            subrole: self.subrole.clone(),
            title: self.title.clone(),
            content: self.content.clone(),
            url: self.url.clone(),
            selected: self.selected,
            focused: self.focused,
            visible: self.visible,
            hovered: self.hovered,
            children: Children(Vec::with_capacity(self.children.len())),
            attributes: self.attributes.clone(),
        }
    }

    /// Whether two elements are equal apart from their children's contents
    /// (their number counts).
    fn shallow_eq(&self, other: &Element<'_>) -> bool {
        self.id == other.id
            && self.role == other.role
            && self.subrole == other.subrole
            && self.title == other.title
            && self.content == other.content
            && self.url == other.url
            && self.selected == other.selected
            && self.focused == other.focused
            && self.visible == other.visible
            && self.hovered == other.hovered
            && self.children.len() == other.children.len()
            && self.attributes == other.attributes
    }
}

impl Clone for Element<'_> {
    /// A deep copy, built with an explicit stack.
    fn clone(&self) -> Self {
        if self.children.is_empty() {
            // The fitter clones childless elements per probe: no stack.
            return self.shallow_clone();
        }
        // Each frame: the copy so far, its source, the next child to copy.
        let mut stack = vec![(self.shallow_clone(), self, 0)];
        loop {
            let (_, source, next) = stack.last_mut().expect("the root frame stays");
            let source: &Element<'_> = source;
            if let Some(child) = source.children.get(*next) {
                *next += 1;
                stack.push((child.shallow_clone(), child, 0));
                continue;
            }
            let (done, _, _) = stack.pop().expect("checked above");
            match stack.last_mut() {
                Some((parent, _, _)) => parent.children.0.push(done),
                None => return done,
            }
        }
    }
}

impl Clone for Children<'_> {
    fn clone(&self) -> Self {
        Children(self.0.iter().map(Element::clone).collect())
    }
}

impl<'b> PartialEq<Element<'b>> for Element<'_> {
    /// Field by field, over the whole subtree, with an explicit stack.
    fn eq(&self, other: &Element<'b>) -> bool {
        if self.children.is_empty() || other.children.is_empty() {
            return self.shallow_eq(other);
        }
        let mut stack: Vec<(&Element<'_>, &Element<'_>)> = vec![(self, other)];
        while let Some((a, b)) = stack.pop() {
            if !a.shallow_eq(b) {
                return false;
            }
            stack.extend(a.children.iter().zip(b.children.iter()));
        }
        true
    }
}

impl<'b> PartialEq<Children<'b>> for Children<'_> {
    fn eq(&self, other: &Children<'b>) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(&other.0).all(|(a, b)| a == b)
    }
}

impl std::fmt::Debug for Element<'_> {
    /// Every field, as a derived `Debug` would name them, the children
    /// written as a list of elements; iterative, and always on one line
    /// (`{:#?}` would indent a deep tree quadratically).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        fn head(f: &mut std::fmt::Formatter<'_>, e: &Element<'_>) -> std::fmt::Result {
            write!(
                f,
                "Element {{ id: {:?}, role: {:?}, subrole: {:?}, title: {:?}, content: {:?}, \
                 url: {:?}, selected: {:?}, focused: {:?}, visible: {:?}, hovered: {:?}, \
                 children: [",
                e.id,
                e.role,
                e.subrole,
                e.title,
                e.content,
                e.url,
                e.selected,
                e.focused,
                e.visible,
                e.hovered
            )
        }
        // Each frame: an element whose head is written, the next child.
        let mut stack: Vec<(&Element<'_>, usize)> = vec![(self, 0)];
        head(f, self)?;
        while let Some((element, next)) = stack.last_mut() {
            let element: &Element<'_> = element;
            if let Some(child) = element.children.get(*next) {
                if *next > 0 {
                    f.write_str(", ")?;
                }
                *next += 1;
                head(f, child)?;
                stack.push((child, 0));
            } else {
                write!(f, "], attributes: {:?} }}", element.attributes)?;
                stack.pop();
            }
        }
        Ok(())
    }
}

impl std::fmt::Debug for Children<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Children([")?;
        for (at, child) in self.0.iter().enumerate() {
            if at > 0 {
                f.write_str(", ")?;
            }
            child.fmt(f)?;
        }
        f.write_str("])")
    }
}

/// The `attributes` of an element: any JSON by name, in the provider's order.
///
/// `author` and `related` are reserved (RFC-0001 4.3); the reader guarantees
/// they have the shape below, so [`Attributes::author`] and
/// [`Attributes::related`] are typed.
///
/// Most elements have none; an element without attributes carries one
/// pointer (the names and values are boxed, and allocated only for the
/// first one). Up to `SMALL_ATTRIBUTES` are a list searched in order
/// (no hash table: most elements have one to three); more are an index
/// map. Two are equal when they hold the same names with equal values, in
/// any order (as maps).
#[derive(Clone, Default)]
pub struct Attributes(Option<Box<Named>>);

/// An element's attributes, as a list or, past [`SMALL_ATTRIBUTES`], a map
/// (boxed again, so that a list's box holds only the list: 24 bytes).
#[derive(Clone)]
enum Named {
    Few(Vec<(String, Value)>),
    Many(Box<IndexMap<String, Value>>),
}

/// The iterator of [`Attributes::iter`].
enum Iter<'a> {
    Few(std::slice::Iter<'a, (String, Value)>),
    Many(indexmap::map::Iter<'a, String, Value>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a String, &'a Value);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Iter::Few(list) => list.next().map(|(k, v)| (k, v)),
            Iter::Many(map) => map.next(),
        }
    }
}

/// Attributes kept as a list; more move into a map.
const SMALL_ATTRIBUTES: usize = 8;

/// One `related` link: a relation that is not containment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Related<'a> {
    /// The relation's name.
    pub relation: &'a str,
    /// What it points to.
    pub target: RelatedTarget<'a>,
}

/// The other end of a [`Related`] link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RelatedTarget<'a> {
    /// Another element of the answer, by id.
    Id(&'a str),
    /// An address.
    Url(&'a str),
}

impl Attributes {
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        match self.0.as_deref() {
            None => 0,
            Some(Named::Few(list)) => list.len(),
            Some(Named::Many(map)) => map.len(),
        }
    }

    /// One attribute's value.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.get_key_value(name).map(|(_, value)| value)
    }

    /// One attribute's name (as stored) and value.
    pub fn get_key_value(&self, name: &str) -> Option<(&String, &Value)> {
        match self.0.as_deref()? {
            Named::Few(list) => list
                .iter()
                .find(|(key, _)| key == name)
                .map(|(key, value)| (key, value)),
            Named::Many(map) => map.get_key_value(name),
        }
    }

    /// Names and values, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Value)> {
        match self.0.as_deref() {
            None => Iter::Few([].iter()),
            Some(Named::Few(list)) => Iter::Few(list.iter()),
            Some(Named::Many(map)) => Iter::Many(map.iter()),
        }
    }

    /// Names, in order.
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.iter().map(|(name, _)| name)
    }

    /// Sets one, after the others (or in its place, if it is there).
    pub fn insert(&mut self, name: String, value: Value) {
        let named = self
            .0
            .get_or_insert_with(|| Box::new(Named::Few(Vec::new())));
        match &mut **named {
            Named::Few(list) => {
                if let Some(slot) = list.iter_mut().find(|(key, _)| *key == name) {
                    slot.1 = value;
                } else if list.len() < SMALL_ATTRIBUTES {
                    list.push((name, value));
                } else {
                    let mut map: IndexMap<String, Value> =
                        std::mem::take(list).into_iter().collect();
                    map.insert(name, value);
                    **named = Named::Many(Box::new(map));
                }
            }
            Named::Many(map) => {
                map.insert(name, value);
            }
        }
    }

    /// Attributes from pairs whose names are known to be distinct (the
    /// reader refuses a repeated name before this).
    pub(crate) fn from_distinct(pairs: Vec<(String, Value)>) -> Attributes {
        debug_assert!(
            pairs.len() > 64
                || pairs
                    .iter()
                    .enumerate()
                    .all(|(at, (key, _))| pairs[..at].iter().all(|(seen, _)| seen != key))
        );
        if pairs.is_empty() {
            Attributes(None)
        } else if pairs.len() <= SMALL_ATTRIBUTES {
            Attributes(Some(Box::new(Named::Few(pairs))))
        } else {
            Attributes(Some(Box::new(Named::Many(Box::new(
                pairs.into_iter().collect(),
            )))))
        }
    }

    /// The reserved `author`: who wrote the thing.
    pub fn author(&self) -> Option<&str> {
        self.get("author").and_then(Value::as_str)
    }

    /// The reserved `related` links, in order. Entries that do not have the
    /// reserved shape are skipped (the reader rejects them before this).
    pub fn related(&self) -> Vec<Related<'_>> {
        let Some(Value::Array(items)) = self.get("related") else {
            return Vec::new();
        };
        items.iter().filter_map(related_entry).collect()
    }
}

/// Reads one `related` entry: `{ "relation": s, "id": s }` or
/// `{ "relation": s, "url": s }`.
pub(crate) fn related_entry(value: &Value) -> Option<Related<'_>> {
    let object = value.as_object()?;
    let relation = object.get("relation")?.as_str()?;
    let target = match (object.get("id"), object.get("url")) {
        (Some(Value::String(id)), None) => RelatedTarget::Id(id),
        (None, Some(Value::String(url))) => RelatedTarget::Url(url),
        _ => return None,
    };
    Some(Related { relation, target })
}

impl<'a> Element<'a> {
    /// A new element with an id and a role, and nothing else.
    pub fn new(id: impl Into<Cow<'a, str>>, role: impl Into<RoleName>) -> Element<'a> {
        Element {
            id: id.into(),
            role: role.into(),
            ..Element::default()
        }
    }

    /// The same element with every string its own, detached from the input
    /// it was read from. Iterative: as deep a tree as the limits allow.
    pub fn into_owned(self) -> Element<'static> {
        // Detach each element's own fields; children are re-attached bottom
        // up from a stack of (element, its detached children so far).
        use content::own;
        fn shell(mut element: Element<'_>) -> (Element<'static>, Vec<Element<'_>>) {
            let children = std::mem::take(&mut element.children.0);
            let content = std::mem::take(&mut element.content);
            let attributes = std::mem::take(&mut element.attributes);
            let role = std::mem::take(&mut element.role);
            let owned = Element {
                id: own(std::mem::take(&mut element.id)),
                role,
                subrole: element.subrole.take().map(own),
                title: element.title.take().map(own),
                content: content.into_iter().map(Content::into_owned).collect(),
                url: element.url.take().map(own),
                selected: element.selected,
                focused: element.focused,
                visible: element.visible,
                hovered: element.hovered,
                children: Children(Vec::new()),
                attributes,
            };
            (owned, children)
        }
        // Each frame: the detached element, and its remaining children in
        // reverse order (popped from the end, pushed in order).
        let (root, children) = shell(self);
        let mut stack = vec![(root, reversed(children))];
        loop {
            let (_, pending) = stack.last_mut().expect("the root frame stays");
            if let Some(child) = pending.pop() {
                let (owned, grandchildren) = shell(child);
                stack.push((owned, reversed(grandchildren)));
                continue;
            }
            let (done, _) = stack.pop().expect("checked above");
            match stack.last_mut() {
                Some((parent, _)) => parent.children.0.push(done),
                None => return done,
            }
        }
    }
}

fn reversed<T>(mut items: Vec<T>) -> Vec<T> {
    items.reverse();
    items
}

impl<'a> Answer<'a> {
    /// An answer of this crate's [`PROTOCOL`] from `instance`, with `root`.
    pub fn new(instance: impl Into<String>, root: Element<'a>) -> Answer<'a> {
        Answer {
            protocol: PROTOCOL.to_string(),
            instance: instance.into(),
            root,
        }
    }
}

impl Answer<'_> {
    /// The same answer with every string its own ([`Element::into_owned`]).
    pub fn into_owned(self) -> Answer<'static> {
        Answer {
            protocol: self.protocol,
            instance: self.instance,
            root: self.root.into_owned(),
        }
    }
}

impl FromIterator<(String, Value)> for Attributes {
    /// As a map collects: a name given twice keeps its first place and its
    /// last value.
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(items: I) -> Attributes {
        let mut attributes = Attributes(None);
        for (name, value) in items {
            attributes.insert(name, value);
        }
        attributes
    }
}

impl PartialEq for Attributes {
    fn eq(&self, other: &Attributes) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .all(|(name, value)| other.get(name) == Some(value))
    }
}

impl std::fmt::Debug for Attributes {
    /// As the map it was: `Attributes(Some({"name": value, …}))`, or
    /// `Attributes(None)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        struct Map<'m>(&'m Attributes);
        impl std::fmt::Debug for Map<'_> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_map().entries(self.0.iter()).finish()
            }
        }
        let inner = self.0.as_ref().map(|_| Map(self));
        f.debug_tuple("Attributes").field(&inner).finish()
    }
}

impl std::ops::Index<&str> for Attributes {
    type Output = Value;
    /// The value of `name`; panics when there is none, as a map does.
    fn index(&self, name: &str) -> &Value {
        self.get(name)
            .unwrap_or_else(|| panic!("no attribute `{name}`"))
    }
}

impl Serialize for Attributes {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (name, value) in self.iter() {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

impl Serialize for Element<'_> {
    /// Fields in the RFC's order; absent fields are left out.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("role", self.role.as_str())?;
        if let Some(subrole) = &self.subrole {
            map.serialize_entry("subrole", subrole)?;
        }
        if let Some(title) = &self.title {
            map.serialize_entry("title", title)?;
        }
        if !self.content.is_empty() {
            map.serialize_entry("content", &self.content)?;
        }
        if let Some(url) = &self.url {
            map.serialize_entry("url", url)?;
        }
        for (name, state) in [
            ("selected", self.selected),
            ("focused", self.focused),
            ("visible", self.visible),
            ("hovered", self.hovered),
        ] {
            if let Some(state) = state {
                map.serialize_entry(name, &state)?;
            }
        }
        if !self.children.is_empty() {
            map.serialize_entry("children", &self.children)?;
        }
        if !self.attributes.is_empty() {
            map.serialize_entry("attributes", &self.attributes)?;
        }
        map.end()
    }
}

impl Serialize for Answer<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("protocol", &self.protocol)?;
        map.serialize_entry("instance", &self.instance)?;
        map.serialize_entry("root", &self.root)?;
        map.end()
    }
}

/// Bytes of an element's own text: title, url and content strings.
pub(crate) fn text_bytes(element: &Element<'_>) -> usize {
    text_bytes_of(
        element.title.as_deref(),
        element.url.as_deref(),
        &element.content,
    )
}

/// [`text_bytes`] of an element's parts.
pub(crate) fn text_bytes_of(title: Option<&str>, url: Option<&str>, content: &[Content]) -> usize {
    let mut size = title.map_or(0, str::len) + url.map_or(0, str::len);
    for content in content {
        size += match &content.block {
            Block::Text { text } => text.len(),
            Block::Image { data, .. } | Block::Audio { data, .. } => data.len(),
            Block::ResourceLink { uri, name } => uri.len() + name.len(),
            Block::Resource { resource } => resource
                .values()
                .map(|v| v.as_str().map_or(0, str::len))
                .sum(),
            Block::Other { .. } => 0,
        };
    }
    size
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_and_blocks_stay_small() {
        // A tree holds one of each per element: rarely present parts are
        // boxed so they cost a pointer when absent (SECURITY.md, memory).
        assert!(std::mem::size_of::<Element>() <= 176);
        assert!(std::mem::size_of::<Content>() <= 64);
        assert_eq!(std::mem::size_of::<Attributes>(), 8);
        assert_eq!(std::mem::size_of::<Named>(), 24);
    }

    #[test]
    fn attributes_are_a_map_in_order_as_a_list_or_past_it() {
        for n in [1, SMALL_ATTRIBUTES, SMALL_ATTRIBUTES + 1, 40] {
            let mut attributes = Attributes::default();
            for i in 0..n {
                attributes.insert(format!("k{i}"), Value::from(i));
            }
            // Setting one again keeps its place and takes the new value.
            attributes.insert("k0".into(), Value::from("again"));
            assert_eq!(attributes.len(), n);
            let keys: Vec<String> = attributes.keys().cloned().collect();
            let expected: Vec<String> = (0..n).map(|i| format!("k{i}")).collect();
            assert_eq!(keys, expected);
            assert_eq!(attributes.get("k0"), Some(&Value::from("again")));
            if n > 1 {
                let last = format!("k{}", n - 1);
                assert_eq!(attributes.get(&last), Some(&Value::from(n - 1)));
            }
            assert_eq!(attributes.get("absent"), None);
            // A map's equality: the same names and values in another order.
            let mut pairs: Vec<(String, Value)> = attributes
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            pairs.reverse();
            let reversed: Attributes = pairs.into_iter().collect();
            assert_eq!(reversed, attributes);
            let distinct = Attributes::from_distinct(
                attributes
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            );
            assert_eq!(distinct, attributes);
            assert_eq!(format!("{distinct:?}"), format!("{attributes:?}"));
            let mut other = attributes.clone();
            other.insert("k0".into(), Value::from(0));
            assert_ne!(other, attributes);
        }
        // A name collected twice keeps its first place and its last value.
        let collected: Attributes = [("a", 1), ("b", 2), ("a", 3)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), Value::from(v)))
            .collect();
        assert_eq!(
            format!("{collected:?}"),
            r#"Attributes(Some({"a": Number(3), "b": Number(2)}))"#
        );
        assert_eq!(format!("{:?}", Attributes::default()), "Attributes(None)");
    }
}
