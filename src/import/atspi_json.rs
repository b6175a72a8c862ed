//! `atspi-json`: Odilia's flat AT-SPI cache, a JSON array of items that
//! name each other by `{sender, id}` (or `{name, path}`, as newer `atspi`
//! crates write an `ObjectRef`) in `parent` and `children`. The tree
//! is rebuilt from `children` (from `parent` where an item lists none).
//!
//! * A `DesktopFrame` root holds every application; only the one that
//!   holds the focused item is kept (else the first with children).
//! * An item's `text` stands for its children with U+FFFC, one per
//!   embedded child, in order. Where the counts agree the text is split
//!   there, and its runs become `Text` elements between the children, so a
//!   paragraph reads in order with its links inside.
//! * `states` is two 32-bit words: bit 12 FOCUSED, 23 SELECTED, 25 SHOWING
//!   (drawn now, which is what `visible` means).
//! * Ids are the object path after `/org/a11y/atspi/accessible/`.
//! * `PasswordText` (in any case or spelling, as every role word) is a
//!   secure field: its `text` is never read, only whether it is empty.
//! * An item without a `role` name, or with states that are not two
//!   32-bit words, is an error naming its JSON pointer.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::build::{Kind, Node};
use super::{error, json, kind_of, roles, Format, MAX_DEPTH};
use crate::error::Result;
use crate::model::Role;

const FORMAT: Format = Format::AtspiJson;
const OBJECT_REPLACEMENT: char = '\u{FFFC}';
const FOCUSED: u32 = 12;
const SELECTED: u32 = 23;
const SHOWING: u32 = 25;

type Key<'a> = (&'a str, &'a str);

struct Cache<'a> {
    items: &'a [Value],
    by_key: HashMap<Key<'a>, usize>,
    /// Items by their `parent`, for items that list no `children`.
    by_parent: HashMap<Key<'a>, Vec<usize>>,
}

/// A reference as Odilia writes it: `{sender, id}`, or `{name, path}` as
/// newer `atspi` crates serialize their `ObjectRef`.
fn key(reference: &Value) -> Option<Key<'_>> {
    let pair = |bus: &str, path: &str| {
        Some((
            reference.get(bus)?.as_str()?,
            reference.get(path)?.as_str()?,
        ))
    };
    pair("sender", "id").or_else(|| pair("name", "path"))
}

fn state(item: &Value, bit: u32) -> bool {
    item.get("states")
        .and_then(|s| s.get((bit / 32) as usize))
        .and_then(Value::as_u64)
        .is_some_and(|word| word & (1 << (bit % 32)) != 0)
}

fn role(item: &Value) -> &str {
    item.get("role")
        .and_then(Value::as_str)
        .unwrap_or("Unknown")
}

/// What is not understood in item `i`'s shape, if anything: every item
/// names its role, and its states are AT-SPI's two 32-bit words.
fn shape_problem(i: usize, item: &Value) -> Option<String> {
    match item.get("role") {
        Some(Value::String(_)) => {}
        Some(other) => {
            return Some(format!(
                "`/{i}/role` is {}, not a role name: expected an AT-SPI role such as `Frame` or `PushButton`",
                kind_of(other)
            ))
        }
        None => {
            return Some(format!(
                "`/{i}/role` is missing: every AT-SPI cache item names its role (`Frame`, `PushButton`)"
            ))
        }
    }
    match item.get("states") {
        None | Some(Value::Null) => {}
        Some(Value::Array(words))
            if words.len() <= 2 && words.iter().all(|w| w.as_u64().is_some_and(|w| w <= u64::from(u32::MAX))) => {}
        Some(_) => {
            return Some(format!(
                "`/{i}/states` is not AT-SPI's state set: expected two 32-bit numbers such as `[4096, 0]`"
            ))
        }
    }
    match item.get("children") {
        None | Some(Value::Null | Value::Array(_)) => None,
        Some(_) => Some(format!("`/{i}/children` is not a list of references")),
    }
}

pub(crate) fn parse(bytes: &[u8]) -> Result<Vec<Node>> {
    let value = json(FORMAT, bytes)?;
    let Value::Array(items) = &value else {
        return Err(error(
            FORMAT,
            None,
            "expected a JSON array of AT-SPI cache items (`object`, `parent`, `children`, `role`)",
        ));
    };
    let mut by_key = HashMap::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let Some(k) = item.get("object").and_then(key) else {
            return Err(error(
                FORMAT,
                None,
                format!(
                    "item {i} has no `object` reference (`{{\"sender\", \"id\"}}` or `{{\"name\", \"path\"}}`)"
                ),
            ));
        };
        if let Some(problem) = shape_problem(i, item) {
            return Err(error(FORMAT, None, problem));
        }
        by_key.insert(k, i);
    }
    let mut by_parent: HashMap<Key<'_>, Vec<usize>> = HashMap::new();
    for (i, item) in items.iter().enumerate() {
        if let Some(parent) = item.get("parent").and_then(key) {
            by_parent.entry(parent).or_default().push(i);
        }
    }
    let cache = Cache {
        items,
        by_key,
        by_parent,
    };
    let Some(root) = cache.root() else {
        return Err(error(FORMAT, None, "the cache has no root item"));
    };
    let start = if role(&items[root]) == "DesktopFrame" {
        cache.application(root).unwrap_or(root)
    } else {
        root
    };
    let mut seen = HashSet::new();
    Ok(vec![cache.node(start, 0, &mut seen)?])
}

impl<'a> Cache<'a> {
    /// The item whose parent is not in the cache; the first such.
    fn root(&self) -> Option<usize> {
        self.items.iter().position(|item| {
            item.get("parent")
                .and_then(key)
                .is_none_or(|k| !self.by_key.contains_key(&k))
        })
    }

    fn children(&self, at: usize) -> Vec<usize> {
        let item = &self.items[at];
        let listed: Vec<usize> = item
            .get("children")
            .and_then(Value::as_array)
            .map(|refs| {
                refs.iter()
                    .filter_map(|r| key(r).and_then(|k| self.by_key.get(&k).copied()))
                    .collect()
            })
            .unwrap_or_default();
        if !listed.is_empty() {
            return listed;
        }
        let own = item.get("object").and_then(key);
        let mut found = own
            .and_then(|k| self.by_parent.get(&k))
            .cloned()
            .unwrap_or_default();
        found.retain(|&i| i != at);
        found.sort_by_key(|&i| self.items[i].get("index").and_then(Value::as_u64));
        found
    }

    fn parent(&self, at: usize) -> Option<usize> {
        let k = self.items[at].get("parent").and_then(key)?;
        self.by_key.get(&k).copied()
    }

    /// The desktop's application that holds the focus, else the first
    /// with children.
    fn application(&self, desktop: usize) -> Option<usize> {
        let apps = self.children(desktop);
        let focused = self.items.iter().position(|i| state(i, FOCUSED));
        if let Some(mut at) = focused {
            let mut steps = 0;
            while let Some(parent) = self.parent(at) {
                if parent == desktop && apps.contains(&at) {
                    return Some(at);
                }
                at = parent;
                steps += 1;
                if steps > self.items.len() {
                    break;
                }
            }
        }
        apps.into_iter().find(|&a| !self.children(a).is_empty())
    }

    fn node(&self, at: usize, depth: usize, seen: &mut HashSet<usize>) -> Result<Node> {
        if depth > MAX_DEPTH {
            return Err(error(
                FORMAT,
                None,
                format!("the tree is deeper than {MAX_DEPTH} levels"),
            ));
        }
        seen.insert(at);
        let item = &self.items[at];
        let (known, entry) = roles::atspi(role(item));
        let word = known.unwrap_or(role(item));
        let secure = roles::atspi_is_password(word);
        let kind = if secure { Kind::Secure } else { entry.kind };
        let mut node = Node::new(word, kind);
        node.id = item.get("object").and_then(key).map(|(_, id)| {
            id.strip_prefix("/org/a11y/atspi/accessible/")
                .unwrap_or(id)
                .to_string()
        });
        let name = item
            .get("name")
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty());
        node.title = name.map(str::to_string);
        if entry.keep_word && !secure {
            node.subrole = Some(word.to_string());
        }
        node.focused = state(item, FOCUSED);
        node.selected = state(item, SELECTED);
        node.visible = Some(state(item, SHOWING));
        if matches!(kind, Kind::Secure | Kind::Furniture) {
            // A password's text is never read: only whether there is any.
            node.filled = kind == Kind::Secure
                && item
                    .get("text")
                    .and_then(Value::as_str)
                    .is_some_and(|t| !t.is_empty());
            return Ok(node);
        }
        let mut children = Vec::new();
        for child in self.children(at) {
            if seen.contains(&child) {
                continue;
            }
            children.push(self.node(child, depth + 1, seen)?);
        }
        let text = item.get("text").and_then(Value::as_str).unwrap_or("");
        let embedded = text.matches(OBJECT_REPLACEMENT).count();
        let plain = text.replace(OBJECT_REPLACEMENT, "");
        let has_text = !plain.trim().is_empty();
        if kind == Kind::Control {
            // A control's words are its label; its children are hoisted.
            node.children = children;
            if name.is_none() && has_text {
                node.text = Some(plain);
            }
        } else if embedded > 0 && embedded == children.len() && has_text {
            // Text runs between the embedded children, in order.
            let mut runs = text.split(OBJECT_REPLACEMENT);
            let mut kids = children.into_iter();
            let mut woven = Vec::new();
            loop {
                if let Some(run) = runs.next().filter(|r| !r.trim().is_empty()) {
                    let mut segment = Node::new("text", Kind::Report(Role::Text));
                    segment.text = Some(run.to_string());
                    woven.push(segment);
                }
                match kids.next() {
                    Some(kid) => woven.push(kid),
                    None => break,
                }
            }
            node.children = woven;
        } else {
            node.children = children;
            let is_text = kind == Kind::Report(Role::Text);
            let same = Some(plain.trim()) == name.map(str::trim);
            if has_text && is_text {
                // A text's words are its content, not also its title.
                if same {
                    node.title = None;
                }
                node.text = Some(plain);
            } else if has_text && !same {
                node.text = Some(plain);
            } else if matches!(word, "Static" | "Text" | "Label" | "Caption")
                && node.children.is_empty()
            {
                // A static's name is the words it shows.
                node.text = node.title.take();
            }
        }
        Ok(node)
    }
}
