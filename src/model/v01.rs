//! Upgrading a protocol 0.1 answer to a 0.2.0 tree (RFC-0001 section 5).
//!
//! The 0.1 format is not in our spec folder. The shape accepted is:
//!
//! ```text
//! { "protocol": "0.1" | "0.1.N",
//!   "instance": string,
//!   "title":    string,            optional: the app's name, becomes the root's title
//!   "items": [ { "id": string,     required, unique
//!                "type": string,   required: becomes the subrole; the role is mapped below
//!                "title": string, "content": [MCP blocks], "url": string,   optional, as in 0.2.0
//!                "parent": string | null,   optional: another item's id; absent/null = top level
//!                "locatable": bool,         optional: dropped (0.2.0 asks with `locate`)
//!                "payload": object } ],     optional: becomes `attributes`
//!   "focus": [ids] }               optional: the focused items, on one path
//! ```
//!
//! Items without a parent become children of a synthesized `Application`
//! root (id `app`, or `app-2`, `app-3`, … if an item already uses it), in
//! the order the items are listed; so do children under each parent.
//! Anything else — an unknown item field, a parent that does not exist, a
//! parent cycle, focus ids on two branches — is an error that names the
//! item. The role each `type` maps to is [`role_for_type`].
//!
//! The limits of a 0.2.0 tree hold for the upgraded one, with the same
//! errors: `max_elements` counts the items and the root, `max_content_bytes`
//! each item's title, url and content (named by its `/items/N` pointer), and
//! `max_depth` the depth the parent links make (the root is depth 1). The
//! upgrade is linear in the items and never recurses.

use foldhash::{HashMap, HashMapExt};
use serde_json::Value;

use super::{Content, Element, Role};
use crate::error::{DepthPlace, Error, Result};
use crate::finding::json_kind;
use crate::limits::Limits;

/// The role a 0.1 `type` is read as (case-insensitive); unknown → `Group`.
///
/// A type that says it holds a secret as the floor reads a subrole
/// (`password`, `secure`, `SecureTextField`, `password-input`, `pwd`,
/// `pinCode`, `Раѕѕword`) is `Text`: kept as the
/// subrole, it is what the secure-text floor masks, so a 0.1 password
/// field is never sent as a `Group` with its content.
///
/// | types | role |
/// |---|---|
/// | any type the floor reads as secret | Text |
/// | window, pane, tab, sheet, dialog, popover, panel | Window |
/// | document, note, editor, webpage, web_area | Document |
/// | page | Page |
/// | list, thread, feed, inbox, outline, tree, channel | List |
/// | table, grid, spreadsheet | Table |
/// | row, item, message, comment, task, email, entry, post, event | Row |
/// | cell | Cell |
/// | text, selection, paragraph, label, body, snippet, field | Text |
/// | heading, header, title | Heading |
/// | link, url, hyperlink | Link |
/// | image, picture, photo, figure, icon | Image |
/// | anything else | Group |
pub fn role_for_type(kind: &str) -> Role {
    const TABLE: &[(&[&str], Role)] = &[
        (
            &[
                "window", "pane", "tab", "sheet", "dialog", "popover", "panel",
            ],
            Role::Window,
        ),
        (
            &["document", "note", "editor", "webpage", "web_area"],
            Role::Document,
        ),
        (&["page"], Role::Page),
        (
            &[
                "list", "thread", "feed", "inbox", "outline", "tree", "channel",
            ],
            Role::List,
        ),
        (&["table", "grid", "spreadsheet"], Role::Table),
        (
            &[
                "row", "item", "message", "comment", "task", "email", "entry", "post", "event",
            ],
            Role::Row,
        ),
        (&["cell"], Role::Cell),
        (
            &[
                "text",
                "selection",
                "paragraph",
                "label",
                "body",
                "snippet",
                "field",
            ],
            Role::Text,
        ),
        (&["heading", "header", "title"], Role::Heading),
        (&["link", "url", "hyperlink"], Role::Link),
        (
            &["image", "picture", "photo", "figure", "icon"],
            Role::Image,
        ),
    ];
    // Read as the floor reads a subrole, so every type it masks is `Text`.
    if crate::floor::says_secret(kind) {
        return Role::Text;
    }
    let kind = kind.to_ascii_lowercase();
    TABLE
        .iter()
        .find(|(words, _)| words.contains(&kind.as_str()))
        .map_or(Role::Group, |(_, role)| *role)
}

struct Item {
    element: Element<'static>,
    parent: Option<String>,
}

fn fail(pointer: impl Into<String>, message: impl Into<String>) -> Error {
    Error::Upgrade {
        pointer: pointer.into(),
        message: message.into(),
    }
}

/// Builds the 0.2.0 root from a 0.1 answer's `items`, `focus` and `title`,
/// under the same limits as a 0.2.0 tree: elements (the items and the
/// synthesized root), content bytes of each item, and the depth of the tree
/// the parent links make (the root is depth 1).
///
/// Linear in the items: parent links become child lists in one pass, depth
/// is measured by one iterative walk from the top, and an item that walk
/// never reaches is on or under a parent cycle.
pub fn upgrade(
    items: Option<Value>,
    focus: Option<Value>,
    title: Option<String>,
    limits: &Limits,
) -> Result<Element<'static>> {
    let items = match items {
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(fail(
                "/items",
                format!("`items` must be an array, found {}", json_kind(&other)),
            ))
        }
        None => return Err(fail("/items", "a 0.1 answer needs `items`")),
    };
    // The items and the synthesized root.
    if items.len() >= limits.max_elements {
        return Err(Error::TooManyElements {
            limit: limits.max_elements,
        });
    }
    let mut parsed: Vec<Item> = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let item = read_item(item, i)?;
        let size = super::text_bytes(&item.element);
        if size > limits.max_content_bytes {
            return Err(Error::ContentTooLarge {
                pointer: format!("/items/{i}"),
                size,
                limit: limits.max_content_bytes,
            });
        }
        parsed.push(item);
    }
    let n = parsed.len();

    // Ids are the provider's, but the map lives for one upgrade and nothing
    // of it leaves: a fast hasher is enough.
    let mut index: HashMap<&str, u32> = HashMap::with_capacity(n);
    for (i, item) in parsed.iter().enumerate() {
        if let Some(&first) = index.get(&*item.element.id) {
            return Err(fail(
                format!("/items/{i}"),
                format!(
                    "id `{}` is repeated; it first appears at /items/{first}",
                    item.element.id
                ),
            ));
        }
        index.insert(&item.element.id, i as u32);
    }

    // Parent links must name an item. `n` stands for the synthesized root.
    let mut parent_of: Vec<u32> = Vec::with_capacity(n);
    for (i, item) in parsed.iter().enumerate() {
        parent_of.push(match &item.parent {
            None => n as u32,
            Some(parent) => match index.get(parent.as_str()) {
                Some(&p) => p,
                None => {
                    return Err(fail(
                        format!("/items/{i}/parent"),
                        format!("parent `{parent}` is not an item"),
                    ))
                }
            },
        });
    }
    let children = ChildLists::new(&parent_of);

    // Document order and depth, in one walk from the root (depth 1), the
    // children of each item in the order the items are listed. The first
    // item past the depth limit in document order is the one a 0.2.0
    // reader of the upgraded tree would name.
    if limits.max_depth < 1 {
        return Err(Error::TooDeep {
            limit: limits.max_depth,
            place: DepthPlace::SynthesizedRoot,
        });
    }
    // 0 = not reached (yet).
    let mut depth = vec![0u32; n + 1];
    depth[n] = 1;
    let mut order: Vec<u32> = Vec::with_capacity(n);
    let mut stack: Vec<u32> = children.of(n as u32).iter().rev().copied().collect();
    while let Some(at) = stack.pop() {
        let d = depth[parent_of[at as usize] as usize] + 1;
        if d as usize > limits.max_depth {
            return Err(Error::TooDeep {
                limit: limits.max_depth,
                place: DepthPlace::Element(format!("/items/{at}")),
            });
        }
        depth[at as usize] = d;
        order.push(at);
        stack.extend(children.of(at).iter().rev());
    }
    if order.len() < n {
        return Err(cycle(&parsed, &parent_of, &depth));
    }

    let focused = focus_path(focus, &index, &parent_of, &depth, &parsed)?;

    let mut root_id = String::from("app");
    let mut k = 1;
    while index.contains_key(root_id.as_str()) {
        k += 1;
        root_id = format!("app-{k}");
    }
    drop(index);

    // Attach bottom-up without recursion: in reverse document order every
    // item's children are complete before the item itself is taken.
    let mut slots: Vec<Option<Element<'static>>> = parsed
        .into_iter()
        .zip(focused)
        .map(|(item, focused)| {
            let mut element = item.element;
            if focused {
                element.focused = Some(true);
            }
            Some(element)
        })
        .collect();
    let take = |slots: &mut [Option<Element<'static>>], of: u32| -> Vec<Element<'static>> {
        children
            .of(of)
            .iter()
            .map(|&c| slots[c as usize].take().expect("each item is placed once"))
            .collect()
    };
    for &at in order.iter().rev() {
        let kids = take(&mut slots, at);
        if let Some(element) = slots[at as usize].as_mut() {
            element.children = kids.into();
        }
    }
    let mut root = Element::new(root_id, Role::Application);
    root.title = title.map(Into::into);
    root.children = take(&mut slots, n as u32).into();
    Ok(root)
}

/// Each item's children, in the order the items are listed: one flat list
/// grouped by parent (the synthesized root is parent `n`).
struct ChildLists {
    start: Vec<usize>,
    kids: Vec<u32>,
}

impl ChildLists {
    fn new(parent_of: &[u32]) -> ChildLists {
        let n = parent_of.len();
        let mut start = vec![0usize; n + 2];
        for &p in parent_of {
            start[p as usize + 1] += 1;
        }
        for k in 1..start.len() {
            start[k] += start[k - 1];
        }
        let mut next = start.clone();
        let mut kids = vec![0u32; n];
        for (i, &p) in parent_of.iter().enumerate() {
            kids[next[p as usize]] = i as u32;
            next[p as usize] += 1;
        }
        ChildLists { start, kids }
    }

    fn of(&self, parent: u32) -> &[u32] {
        let p = parent as usize;
        &self.kids[self.start[p]..self.start[p + 1]]
    }
}

/// The error for items the walk from the root never reached: each has a
/// parent that was not reached either, so following parents from the first
/// of them comes back to an item; the cycle is named by its first item in
/// the list.
fn cycle(parsed: &[Item], parent_of: &[u32], depth: &[u32]) -> Error {
    let first = depth[..parsed.len()]
        .iter()
        .position(|&d| d == 0)
        .expect("an item was not reached");
    // Following parents from an unreached item ends on the cycle: the
    // first item seen twice is on it.
    let mut seen = vec![false; parsed.len()];
    let mut at = first;
    while !seen[at] {
        seen[at] = true;
        at = parent_of[at] as usize;
    }
    let (mut lowest, mut walk) = (at, parent_of[at] as usize);
    while walk != at {
        lowest = lowest.min(walk);
        walk = parent_of[walk] as usize;
    }
    fail(
        format!("/items/{lowest}/parent"),
        format!(
            "item `{}` is its own ancestor (a parent cycle)",
            parsed[lowest].element.id
        ),
    )
}

/// Which items are focused: `focus` names items on one path; the path from
/// the deepest of them up to the top is marked.
fn focus_path(
    focus: Option<Value>,
    index: &HashMap<&str, u32>,
    parent_of: &[u32],
    depth: &[u32],
    parsed: &[Item],
) -> Result<Vec<bool>> {
    let n = parent_of.len();
    let mut on_path = vec![false; n];
    let ids = match focus {
        None | Some(Value::Null) => return Ok(on_path),
        Some(Value::Array(ids)) => ids,
        Some(other) => {
            return Err(fail(
                "/focus",
                format!(
                    "`focus` must be an array of ids, found {}",
                    json_kind(&other)
                ),
            ))
        }
    };
    let mut deepest: Option<usize> = None;
    let mut named = Vec::with_capacity(ids.len());
    for (k, id) in ids.iter().enumerate() {
        let Some(id) = id.as_str() else {
            return Err(fail(
                format!("/focus/{k}"),
                format!(
                    "a focus entry must be an id string, found {}",
                    json_kind(id)
                ),
            ));
        };
        let Some(&i) = index.get(id) else {
            return Err(fail(
                format!("/focus/{k}"),
                format!("focus names `{id}`, which is not an item"),
            ));
        };
        let i = i as usize;
        if deepest.is_none_or(|d| depth[i] > depth[d]) {
            deepest = Some(i);
        }
        named.push((k, i));
    }
    let Some(leaf) = deepest else {
        return Ok(on_path);
    };
    let mut at = leaf;
    while at < n {
        on_path[at] = true;
        at = parent_of[at] as usize;
    }
    for (k, i) in named {
        if !on_path[i] {
            return Err(fail(
                format!("/focus/{k}"),
                format!(
                    "focus names `{}` and `{}`, which are on different branches; the focus is one path",
                    parsed[i].element.id, parsed[leaf].element.id
                ),
            ));
        }
    }
    Ok(on_path)
}

fn read_item(item: Value, i: usize) -> Result<Item> {
    let pointer = &format!("/items/{i}");
    let Value::Object(fields) = item else {
        return Err(fail(
            pointer,
            format!("an item must be an object, found {}", json_kind(&item)),
        ));
    };
    let mut element = Element::default();
    let mut parent = None;
    let (mut id, mut kind) = (None, None);
    for (key, value) in fields {
        let at = format!("{pointer}/{key}");
        let string = |value: Value| match value {
            Value::String(s) => Ok(s),
            other => Err(fail(
                &at,
                format!("`{key}` must be a string, found {}", json_kind(&other)),
            )),
        };
        match key.as_str() {
            "id" => id = Some(string(value)?),
            "type" => kind = Some(string(value)?),
            "title" => element.title = Some(string(value)?.into()),
            "url" => element.url = Some(string(value)?.into()),
            "parent" => {
                parent = match value {
                    Value::Null => None,
                    other => Some(string(other)?),
                }
            }
            "locatable" => {
                if !value.is_boolean() {
                    return Err(fail(&at, "`locatable` must be true or false"));
                }
            }
            "payload" => match value {
                Value::Object(map) => element.attributes = map.into_iter().collect(),
                other => return Err(fail(&at, format!("`payload` must be an object, found {}", json_kind(&other)))),
            },
            "content" => element.content = read_blocks(value, &at)?,
            _ => return Err(fail(&at, format!("`{key}` is not a 0.1 item field (id, type, title, content, url, parent, locatable, payload)"))),
        }
    }
    let id = id.ok_or_else(|| fail(pointer, "an item needs `id`"))?;
    let kind = kind.ok_or_else(|| fail(pointer, "an item needs `type`"))?;
    element.id = id.into();
    element.role = role_for_type(&kind).into();
    element.subrole = Some(kind.into());
    Ok(Item { element, parent })
}

fn read_blocks(value: Value, pointer: &str) -> Result<Vec<Content<'static>>> {
    let Value::Array(blocks) = value else {
        return Err(fail(
            pointer,
            format!("`content` must be an array, found {}", json_kind(&value)),
        ));
    };
    blocks
        .into_iter()
        .enumerate()
        .map(|(i, block)| match block {
            Value::Object(object) => {
                Content::from_object(object).map_err(|m| fail(format!("{pointer}/{i}"), m))
            }
            other => Err(fail(
                format!("{pointer}/{i}"),
                format!(
                    "a content block must be an object, found {}",
                    json_kind(&other)
                ),
            )),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn secure_and_password_types_read_as_text_whatever_their_case() {
        for kind in [
            "password",
            "secure",
            "SecureTextField",
            "password-input",
            "PASSWORD",
            "pwd",
            "pinCode",
            "Раѕѕword",
        ] {
            assert_eq!(role_for_type(kind), Role::Text, "{kind}");
        }
        assert_eq!(role_for_type("Comment"), Role::Row);
        assert_eq!(role_for_type("widget"), Role::Group);
    }

    /// Items `i0`, `i1`, … with the parents given by index.
    fn items(parents: &[Option<usize>]) -> Value {
        Value::Array(
            parents
                .iter()
                .enumerate()
                .map(|(i, parent)| {
                    let mut item = serde_json::json!({"id": format!("i{i}"), "type": "row"});
                    if let Some(p) = parent {
                        item["parent"] = format!("i{p}").into();
                    }
                    item
                })
                .collect(),
        )
    }

    /// Each item's depth (top items 2: the root is 1), found by walking up;
    /// `None` if it is on or under a cycle.
    fn naive_depths(parents: &[Option<usize>]) -> Vec<Option<usize>> {
        (0..parents.len())
            .map(|start| {
                let (mut at, mut depth) = (start, 2);
                while let Some(p) = parents[at] {
                    if depth > parents.len() + 1 {
                        return None;
                    }
                    (at, depth) = (p, depth + 1);
                }
                Some(depth)
            })
            .collect()
    }

    proptest! {
        /// The linear upgrade agrees with walking up each item's parents:
        /// every item under its parent, children in list order, a cycle
        /// refused, a depth past the limit refused.
        #[test]
        fn the_upgrade_nests_each_item_under_its_parent_in_list_order(
            raw in prop::collection::vec(prop::option::of(0usize..64), 0..24),
            max_depth in 1usize..10,
        ) {
            let n = raw.len();
            let parents: Vec<Option<usize>> = raw.iter().map(|p| p.map(|p| p % n)).collect();
            let depths = naive_depths(&parents);
            let limits = Limits { max_depth, ..Limits::default() };
            let upgraded = upgrade(Some(items(&parents)), None, None, &limits);
            let deepest = depths.iter().flatten().max().copied().unwrap_or(1);
            if deepest > max_depth {
                prop_assert!(matches!(upgraded, Err(Error::TooDeep { .. })), "{upgraded:?}");
                return Ok(());
            }
            if depths.iter().any(Option::is_none) {
                let Err(Error::Upgrade { message, .. }) = upgraded else {
                    return Err(TestCaseError::fail(format!("{upgraded:?}")));
                };
                prop_assert!(message.ends_with("is its own ancestor (a parent cycle)"));
                return Ok(());
            }
            let root = upgraded.unwrap();
            // Every element (its item's index, `None` for the root) and its
            // depth, iteratively.
            let mut seen = vec![None; n];
            let mut stack = vec![(&root, None::<usize>, 1usize)];
            while let Some((element, own, depth)) = stack.pop() {
                let mut previous = None;
                for child in element.children.iter() {
                    let i: usize = child.id[1..].parse().unwrap();
                    prop_assert_eq!(parents[i], own, "i{} under the wrong parent", i);
                    // Children in the order the items are listed.
                    prop_assert!(previous < Some(i));
                    previous = Some(i);
                    stack.push((child, Some(i), depth + 1));
                }
                if let Some(i) = own {
                    prop_assert!(seen[i].is_none(), "i{} placed twice", i);
                    seen[i] = Some(depth);
                }
            }
            prop_assert_eq!(seen, depths);
        }
    }
}
