//! MCP content blocks, as carried in an element's `content`.
//!
//! The block kinds ctxgate reads (text, image, audio, resource links and
//! embedded resources) are typed; any other kind is kept whole as
//! [`Block::Other`] so nothing a provider sent is lost in the model.

use std::borrow::Cow;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

/// One MCP content block: its kind's fields, plus every other key kept in
/// `extra` in the provider's order (`annotations`, `_meta`, …).
#[derive(Debug, Clone, PartialEq)]
pub struct Content<'a> {
    /// The kind and its typed fields.
    pub block: Block<'a>,
    /// The block's other keys; `None` when it has none (most blocks: the
    /// map is boxed so that a block without them stays small).
    pub extra: Option<Box<Map<String, Value>>>,
}

/// The kinds of MCP content block. `#[non_exhaustive]`: MCP may add kinds,
/// and a kind read as [`Block::Other`] today may be typed tomorrow.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Block<'a> {
    /// `{"type":"text","text":…}`
    Text {
        /// The text.
        text: Cow<'a, str>,
    },
    /// `{"type":"image","data":…,"mimeType":…}` (base64 data).
    Image {
        /// Base64 data.
        data: Cow<'a, str>,
        /// The MIME type.
        mime_type: Cow<'a, str>,
    },
    /// `{"type":"audio","data":…,"mimeType":…}` (base64 data).
    Audio {
        /// Base64 data.
        data: Cow<'a, str>,
        /// The MIME type.
        mime_type: Cow<'a, str>,
    },
    /// `{"type":"resource_link","uri":…,"name":…}`
    ResourceLink {
        /// The resource's address.
        uri: Cow<'a, str>,
        /// Its name.
        name: Cow<'a, str>,
    },
    /// `{"type":"resource","resource":{…}}`: an embedded resource, kept as
    /// its JSON object (`uri`, `mimeType`, `text` or `blob`).
    Resource {
        /// The embedded resource.
        resource: Box<Map<String, Value>>,
    },
    /// A kind this crate does not model, by its `type`; every other key is
    /// in [`Content::extra`].
    Other {
        /// The block's `type`.
        kind: String,
    },
}

impl<'a> Content<'a> {
    /// A text block.
    pub fn text(text: impl Into<Cow<'a, str>>) -> Content<'a> {
        Content {
            block: Block::Text { text: text.into() },
            extra: None,
        }
    }

    /// The block's `type`.
    pub fn kind(&self) -> &str {
        match &self.block {
            Block::Text { .. } => "text",
            Block::Image { .. } => "image",
            Block::Audio { .. } => "audio",
            Block::ResourceLink { .. } => "resource_link",
            Block::Resource { .. } => "resource",
            Block::Other { kind } => kind,
        }
    }

    /// Reads a block from its JSON object; `Err` says what is wrong, for the
    /// reader to place at a JSON pointer.
    pub fn from_object(object: Map<String, Value>) -> Result<Content<'static>, String> {
        Content::from_pairs(
            &mut object
                .into_iter()
                .map(|(key, value)| (Cow::Owned(key), BlockValue::from(value)))
                .collect(),
        )
    }

    /// Reads a block from its keys and values in the provider's order, each
    /// key once (the reader's fast path: no map is built for the few keys a
    /// block has, and strings stay borrowed from the input). Takes the pairs
    /// out of `pairs`, which the reader reuses.
    pub(crate) fn from_pairs(
        pairs: &mut Vec<(Cow<'a, str>, BlockValue<'a>)>,
    ) -> Result<Content<'a>, String> {
        // Most blocks are exactly `{"type":"text","text":…}`: taken as they
        // stand, with no search, no shifting and no `extra`.
        if let [(k0, BlockValue::Str(kind)), (k1, BlockValue::Str(text))] = &mut pairs[..] {
            if k0 == "type" && kind == "text" && k1 == "text" {
                let text = std::mem::take(text);
                pairs.clear();
                return Ok(Content::text(text));
            }
        }
        let mut remove = |key: &str| {
            pairs
                .iter()
                .position(|(k, _)| k == key)
                .map(|at| pairs.remove(at).1)
        };
        let kind = match remove("type") {
            Some(BlockValue::Str(kind)) => kind,
            Some(BlockValue::Other(other)) => {
                return Err(format!(
                    "`type` must be a string, found {}",
                    crate::finding::json_kind(&other)
                ))
            }
            None => return Err("a content block needs a `type`".into()),
        };
        let mut take = |key: &str| -> Result<Cow<'a, str>, String> {
            match remove(key) {
                Some(BlockValue::Str(s)) => Ok(s),
                Some(BlockValue::Other(other)) => Err(format!(
                    "`{key}` of a `{kind}` block must be a string, found {}",
                    crate::finding::json_kind(&other)
                )),
                None => Err(format!("a `{kind}` block needs `{key}`")),
            }
        };
        let block = match &*kind {
            "text" => Block::Text {
                text: take("text")?,
            },
            "image" => Block::Image {
                data: take("data")?,
                mime_type: take("mimeType")?,
            },
            "audio" => Block::Audio {
                data: take("data")?,
                mime_type: take("mimeType")?,
            },
            "resource_link" => Block::ResourceLink {
                uri: take("uri")?,
                name: take("name")?,
            },
            "resource" => match remove("resource").map(Value::from) {
                Some(Value::Object(resource)) => Block::Resource {
                    resource: Box::new(resource),
                },
                Some(other) => {
                    return Err(format!(
                        "`resource` of a `resource` block must be an object, found {}",
                        crate::finding::json_kind(&other)
                    ))
                }
                None => return Err("a `resource` block needs `resource`".into()),
            },
            _ => Block::Other {
                kind: kind.into_owned(),
            },
        };
        Ok(Content {
            block,
            extra: (!pairs.is_empty()).then(|| {
                Box::new(
                    pairs
                        .drain(..)
                        .map(|(key, value)| (key.into_owned(), Value::from(value)))
                        .collect(),
                )
            }),
        })
    }

    /// The same block with every string its own.
    pub fn into_owned(self) -> Content<'static> {
        let block = match self.block {
            Block::Text { text } => Block::Text { text: own(text) },
            Block::Image { data, mime_type } => Block::Image {
                data: own(data),
                mime_type: own(mime_type),
            },
            Block::Audio { data, mime_type } => Block::Audio {
                data: own(data),
                mime_type: own(mime_type),
            },
            Block::ResourceLink { uri, name } => Block::ResourceLink {
                uri: own(uri),
                name: own(name),
            },
            Block::Resource { resource } => Block::Resource { resource },
            Block::Other { kind } => Block::Other { kind },
        };
        Content {
            block,
            extra: self.extra,
        }
    }
}

/// A string of the model detached from the input it borrowed.
pub(crate) fn own(s: Cow<'_, str>) -> Cow<'static, str> {
    Cow::Owned(s.into_owned())
}

/// A value in a content block as read: a string (borrowed from the input
/// when it has no escapes), or any other JSON value.
#[derive(Debug)]
pub(crate) enum BlockValue<'a> {
    Str(Cow<'a, str>),
    Other(Value),
}

impl From<Value> for BlockValue<'_> {
    fn from(value: Value) -> Self {
        match value {
            Value::String(s) => BlockValue::Str(Cow::Owned(s)),
            other => BlockValue::Other(other),
        }
    }
}

impl From<BlockValue<'_>> for Value {
    fn from(value: BlockValue<'_>) -> Value {
        match value {
            BlockValue::Str(s) => Value::String(s.into_owned()),
            BlockValue::Other(other) => other,
        }
    }
}

impl Serialize for Content<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("type", self.kind())?;
        match &self.block {
            Block::Text { text } => map.serialize_entry("text", text)?,
            Block::Image { data, mime_type } | Block::Audio { data, mime_type } => {
                map.serialize_entry("data", data)?;
                map.serialize_entry("mimeType", mime_type)?;
            }
            Block::ResourceLink { uri, name } => {
                map.serialize_entry("uri", uri)?;
                map.serialize_entry("name", name)?;
            }
            Block::Resource { resource } => map.serialize_entry("resource", resource)?,
            Block::Other { .. } => {}
        }
        for (key, value) in self.extra.iter().flat_map(|extra| extra.iter()) {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// A content block's payload that is not base64: an image's or audio's
/// `data`, or an embedded resource's `blob`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Payload {
    /// The block's place in `content`.
    pub(crate) block: u32,
    /// Which payload: `image`, `audio` or `resource`.
    pub(crate) kind: &'static str,
}

/// The payloads of `content` that are not base64 ([`is_base64`]): MCP
/// content blocks carry binary data as base64, and ctxgate sends payloads
/// without reading them for secrets, so what is not base64 is not one.
/// `check.rs` makes each a conformance finding.
pub(crate) fn not_base64<'c>(content: &'c [Content<'_>]) -> impl Iterator<Item = Payload> + 'c {
    content.iter().enumerate().filter_map(|(at, c)| {
        let kind = match &c.block {
            Block::Image { data, .. } if !is_base64(data) => "image",
            Block::Audio { data, .. } if !is_base64(data) => "audio",
            Block::Resource { resource } => match resource.get("blob") {
                None => return None,
                Some(Value::String(blob)) if is_base64(blob) => return None,
                Some(_) => "resource",
            },
            _ => return None,
        };
        Some(Payload {
            block: at as u32,
            kind,
        })
    })
}

/// Whether `text` is base64 by RFC 4648: the standard alphabet (section 4)
/// or the URL-safe one (section 5), not both at once; `=` padding to a
/// multiple of 4, or none (then no length of 1 more than a multiple of 4,
/// which no bytes encode to); nothing else, no line breaks.
pub(crate) fn is_base64(text: &str) -> bool {
    let bytes = text.as_bytes();
    let body = match bytes {
        [rest @ .., b'=', b'='] | [rest @ .., b'='] => {
            if bytes.len() % 4 != 0 {
                return false;
            }
            rest
        }
        _ => bytes,
    };
    if body.len() % 4 == 1 {
        return false;
    }
    let (mut standard, mut url_safe) = (false, false);
    for &b in body {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' => {}
            b'+' | b'/' => standard = true,
            b'-' | b'_' => url_safe = true,
            _ => return false,
        }
    }
    !(standard && url_safe)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_either_rfc_4648_alphabet_padded_or_not() {
        for ok in [
            "",
            "Zg==",
            "Zg",
            "Zm8=",
            "Zm8",
            "Zm9v",
            "Zm9vYmFy",
            "+/8=",
            "+/8",
            "-_8=",
            "-_8",
            "iVBORw0KGgo=",
        ] {
            assert!(is_base64(ok), "{ok:?}");
        }
        for bad in [
            "hello world",
            "Zm9vY",
            "Zg=",
            "Z===",
            "=Zg=",
            "Zg==Zg==",
            "+/-_",
            "Zm9v\nYmFy",
            "Zm9v YmFy",
            "Zm9v\u{0}",
            "4111 1111 1111 1111",
            "card: 4111111111111111",
            "Zm9vYmFy!",
            "Zm9vYmFyé",
        ] {
            assert!(!is_base64(bad), "{bad:?}");
        }
    }
}
