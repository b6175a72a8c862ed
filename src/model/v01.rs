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

use std::collections::HashMap;

use serde_json::Value;

use super::{Content, Element, Role};
use crate::error::{Error, Result};
use crate::read::json_kind;

/// The role a 0.1 `type` is read as (case-insensitive); unknown → `Group`.
///
/// | types | role |
/// |---|---|
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

/// Builds the 0.2.0 root from a 0.1 answer's `items`, `focus` and `title`.
pub fn upgrade(
    items: Option<Value>,
    focus: Option<Value>,
    title: Option<String>,
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
    let mut parsed: Vec<Item> = Vec::with_capacity(items.len());
    let mut index: HashMap<String, usize> = HashMap::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let pointer = format!("/items/{i}");
        let item = read_item(item, &pointer)?;
        if let Some(&first) = index.get(&*item.element.id) {
            return Err(fail(
                pointer,
                format!(
                    "id `{}` is repeated; it first appears at /items/{first}",
                    item.element.id
                ),
            ));
        }
        index.insert(item.element.id.to_string(), i);
        parsed.push(item);
    }

    // Parent links: must name an item; must not cycle.
    let mut parent_of: Vec<Option<usize>> = Vec::with_capacity(parsed.len());
    for (i, item) in parsed.iter().enumerate() {
        parent_of.push(match &item.parent {
            None => None,
            Some(parent) => match index.get(parent) {
                Some(&p) => Some(p),
                None => {
                    return Err(fail(
                        format!("/items/{i}/parent"),
                        format!("parent `{parent}` is not an item"),
                    ))
                }
            },
        });
    }
    for start in 0..parsed.len() {
        let (mut at, mut steps) = (start, 0);
        while let Some(p) = parent_of[at] {
            steps += 1;
            if steps > parsed.len() {
                return Err(fail(
                    format!("/items/{start}/parent"),
                    format!(
                        "item `{}` is its own ancestor (a parent cycle)",
                        parsed[start].element.id
                    ),
                ));
            }
            at = p;
        }
    }

    // focus: every id on one path; mark the path from the top down.
    let mut focused = vec![false; parsed.len()];
    match focus {
        None | Some(Value::Null) => {}
        Some(Value::Array(ids)) => {
            let mut deepest: Option<(usize, usize)> = None;
            let mut named = Vec::new();
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
                let depth = ancestors(&parent_of, i).count();
                if deepest.is_none_or(|(d, _)| depth > d) {
                    deepest = Some((depth, i));
                }
                named.push((k, i));
            }
            if let Some((_, leaf)) = deepest {
                let path: Vec<usize> = std::iter::once(leaf)
                    .chain(ancestors(&parent_of, leaf))
                    .collect();
                for (k, i) in named {
                    if !path.contains(&i) {
                        return Err(fail(
                            format!("/focus/{k}"),
                            format!(
                                "focus names `{}` and `{}`, which are on different branches; the focus is one path",
                                parsed[i].element.id, parsed[leaf].element.id
                            ),
                        ));
                    }
                }
                for i in path {
                    focused[i] = true;
                }
            }
        }
        Some(other) => {
            return Err(fail(
                "/focus",
                format!(
                    "`focus` must be an array of ids, found {}",
                    json_kind(&other)
                ),
            ))
        }
    }

    // Build bottom-up without recursion: children lists in item order, then
    // attach each item to its parent deepest-first.
    let mut root_id = String::from("app");
    let mut n = 1;
    while index.contains_key(&root_id) {
        n += 1;
        root_id = format!("app-{n}");
    }
    let depth: Vec<usize> = (0..parsed.len())
        .map(|i| ancestors(&parent_of, i).count())
        .collect();
    let mut order: Vec<usize> = (0..parsed.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(depth[i]));
    let mut slots: Vec<Option<Element>> = Vec::with_capacity(parsed.len());
    for (i, item) in parsed.into_iter().enumerate() {
        let mut element = item.element;
        if focused[i] {
            element.focused = Some(true);
        }
        slots.push(Some(element));
    }
    let mut children: Vec<Vec<(usize, Element)>> = (0..slots.len()).map(|_| Vec::new()).collect();
    let mut top: Vec<(usize, Element)> = Vec::new();
    for i in order {
        let mut element = slots[i].take().expect("each item is placed once");
        let mut mine = std::mem::take(&mut children[i]);
        mine.sort_by_key(|(k, _)| *k);
        element.children = mine.into_iter().map(|(_, e)| e).collect::<Vec<_>>().into();
        match parent_of[i] {
            Some(p) => children[p].push((i, element)),
            None => top.push((i, element)),
        }
    }
    top.sort_by_key(|(k, _)| *k);
    let mut root = Element::new(root_id, Role::Application);
    root.title = title.map(Into::into);
    root.children = top.into_iter().map(|(_, e)| e).collect::<Vec<_>>().into();
    Ok(root)
}

fn ancestors(parent_of: &[Option<usize>], i: usize) -> impl Iterator<Item = usize> + '_ {
    let mut next = parent_of[i];
    std::iter::from_fn(move || {
        let current = next?;
        next = parent_of[current];
        Some(current)
    })
}

fn read_item(item: Value, pointer: &str) -> Result<Item> {
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
