//! The first try of reading in one pass: a reader written for the shape a
//! clean 0.2.x answer has, over the bytes themselves, with no serde visitor
//! between the bytes and the element (serde_json's visitor protocol and our
//! visitors over it cost ~1.4× its tokenizing at 100k elements).
//!
//! It reads only what it is sure of: the answer object with `protocol`,
//! `instance` and `root`; elements with their known fields, each once and
//! of its type; children; content blocks written `{"type":"text","text":…}`.
//! An element's `attributes` and any other content block are read by the
//! lenient pass's own seeds ([`AttributesSeed`], [`BlockSeed`]) on a
//! serde_json reader started where the value starts, so they are read
//! exactly as that pass reads them. At anything else — a key with an
//! escape, a field it does not know, a wrong type, a key written twice, a
//! limit, a problem a seed reports, bad JSON — it gives up ([`Doubt`]) and
//! the caller reads the answer with the lenient pass, which finds what there
//! is to find. So it never makes a finding, and what it reads is what the
//! lenient pass reads (`read::differential` holds the three readers equal).
//!
//! For a request and for the checker ([`super::read_doc`]) it keeps no
//! element: each is read whole, then its fields move into the context's
//! [`Doc`](crate::model::doc::Doc) and its shell is dropped.
//!
//! It recurses once per element, as the lenient pass does, making sure of
//! stack room first (`stacker`), and the depth is bounded by `max_depth`.

use std::borrow::Cow;

use serde::de::DeserializeSeed;

use super::element::BlockSeed;
use super::value::{AttributesSeed, ReadAttributes, RED_ZONE, STACK_SEGMENT};
use super::{Ctx, RawAnswer};
use crate::deadline::Stage;
use crate::model::{text_bytes, text_bytes_of, Content, Element, RoleName};

/// Why the fast reader stopped.
#[derive(Clone, Copy)]
pub(super) enum Stop {
    /// It is not sure: read the answer with the lenient pass.
    Doubt,
    /// The deadline passed (as it would in the lenient pass); the caller
    /// names it. No data: a `Stop` has no drop glue on the reader's paths.
    Deadline,
}

use Stop::Doubt;

type Read<T> = Result<T, Stop>;

/// Reads a clean answer: `Ok(raw)` exactly as the lenient pass reads it,
/// having made no finding; `Err(Doubt)` for anything else.
pub(super) fn read_answer<'de>(text: &'de str, ctx: &mut Ctx<'_, 'de>) -> Read<RawAnswer<'de>> {
    let mut fast = Fast {
        text,
        bytes: text.as_bytes(),
        at: 0,
    };
    let raw = fast.answer(ctx)?;
    fast.ws();
    if fast.at != fast.bytes.len() {
        return Err(Doubt);
    }
    Ok(raw)
}

struct Fast<'de> {
    text: &'de str,
    bytes: &'de [u8],
    at: usize,
}

/// The first byte at or after `from` that is `"`, `\` or a control
/// character (which a JSON string may not hold unescaped), eight bytes at a
/// time; `bytes.len()` when there is none.
fn special(bytes: &[u8], from: usize) -> usize {
    const ONES: u64 = u64::MAX / 255;
    const HIGH: u64 = ONES << 7;
    let mut at = from;
    while at + 8 <= bytes.len() {
        let mut chunk = [0u8; 8];
        chunk.copy_from_slice(&bytes[at..at + 8]);
        let word = u64::from_le_bytes(chunk);
        let control = word.wrapping_sub(ONES * 0x20) & !word;
        let quote = word ^ (ONES * u64::from(b'"'));
        let quote = quote.wrapping_sub(ONES) & !quote;
        let backslash = word ^ (ONES * u64::from(b'\\'));
        let backslash = backslash.wrapping_sub(ONES) & !backslash;
        let found = (control | quote | backslash) & HIGH;
        if found != 0 {
            return at + found.trailing_zeros() as usize / 8;
        }
        at += 8;
    }
    while at < bytes.len() && !matches!(bytes[at], b'"' | b'\\' | 0..=0x1f) {
        at += 1;
    }
    at
}

/// The index of the closing quote of the string whose contents start at
/// `from` (`None` at a control character or the end of the input).
fn string_end(bytes: &[u8], mut from: usize) -> Option<usize> {
    loop {
        from = special(bytes, from);
        match bytes.get(from)? {
            b'"' => return Some(from),
            b'\\' => from += 2,
            _ => return None,
        }
    }
}

/// Just past the bracket that closes the one at `from`, counting brackets
/// outside strings (`None` if the input ends first).
fn object_end(bytes: &[u8], from: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut at = from;
    loop {
        match bytes.get(at)? {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(at + 1);
                }
            }
            b'"' => at = string_end(bytes, at + 1)?,
            _ => {}
        }
        at += 1;
    }
}

impl<'de> Fast<'de> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    /// The next byte after whitespace, not taken.
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.bytes.get(self.at).copied()
    }

    fn expect(&mut self, byte: u8) -> Read<()> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(Doubt)
        }
    }

    /// After a member: `true` for `,`, `false` for `close`.
    fn more(&mut self, close: u8) -> Read<bool> {
        match self.peek() {
            Some(b',') => {
                self.at += 1;
                Ok(true)
            }
            Some(b) if b == close => {
                self.at += 1;
                Ok(false)
            }
            _ => Err(Doubt),
        }
    }

    /// A string, borrowed when it has no escape; one with escapes is
    /// decoded by serde_json (which refuses what the lenient pass refuses).
    fn string(&mut self) -> Read<Cow<'de, str>> {
        self.expect(b'"')?;
        let start = self.at;
        let mut end = special(self.bytes, start);
        match self.bytes.get(end) {
            Some(b'"') => {
                self.at = end + 1;
                let s = self.text.get(start..end).ok_or(Doubt)?;
                return Ok(Cow::Borrowed(s));
            }
            Some(b'\\') => {}
            _ => return Err(Doubt),
        }
        // The closing quote past the escapes, then the decoding.
        end = string_end(self.bytes, end).ok_or(Doubt)?;
        let literal = self.text.get(start - 1..end + 1).ok_or(Doubt)?;
        let decoded: String = serde_json::from_str(literal).map_err(|_| Doubt)?;
        self.at = end + 1;
        Ok(Cow::Owned(decoded))
    }

    /// An object key, then its `:`. A key with an escape is a doubt (the
    /// lenient pass reads it as the key it spells).
    fn key(&mut self) -> Read<&'de str> {
        match self.string()? {
            Cow::Borrowed(key) => {
                self.expect(b':')?;
                Ok(key)
            }
            Cow::Owned(_) => Err(Doubt),
        }
    }

    fn boolean(&mut self) -> Read<bool> {
        self.ws();
        let rest = &self.bytes[self.at..];
        if rest.starts_with(b"true") {
            self.at += 4;
            Ok(true)
        } else if rest.starts_with(b"false") {
            self.at += 5;
            Ok(false)
        } else {
            Err(Doubt)
        }
    }

    /// One object read by a seed of the lenient pass, on a serde_json
    /// reader (configured as the lenient pass's) over exactly its bytes: it
    /// must read them all. Its end is found first by counting brackets
    /// outside strings (no recursion); a JSON object ends at its matching
    /// brace, so what the seed reads is what the lenient pass reads there.
    fn seed<T, S: DeserializeSeed<'de, Value = T>>(&mut self, seed: S) -> Read<T> {
        if self.peek() != Some(b'{') {
            return Err(Doubt);
        }
        let end = object_end(self.bytes, self.at).ok_or(Doubt)?;
        let object = self.text.get(self.at..end).ok_or(Doubt)?;
        let mut json = serde_json::Deserializer::from_str(object);
        json.disable_recursion_limit();
        let value = seed.deserialize(&mut json).map_err(|_| Doubt)?;
        json.end().map_err(|_| Doubt)?;
        self.at = end;
        Ok(value)
    }

    fn answer(&mut self, ctx: &mut Ctx<'_, 'de>) -> Read<RawAnswer<'de>> {
        let mut raw = RawAnswer::default();
        self.expect(b'{')?;
        loop {
            match self.key()? {
                "protocol" if raw.protocol.is_none() => {
                    raw.protocol = Some(self.string()?.into_owned());
                }
                "instance" if raw.instance.is_none() => {
                    raw.instance = Some(self.string()?.into_owned());
                }
                "root" if raw.root.is_none() => {
                    self.element(ctx)?;
                    raw.root = Some(ctx.siblings.pop().ok_or(Doubt)?);
                }
                _ => return Err(Doubt),
            }
            if !self.more(b'}')? {
                return Ok(raw);
            }
        }
    }

    /// One element, pushed onto `ctx.siblings` (as the lenient pass does).
    fn element(&mut self, ctx: &mut Ctx<'_, 'de>) -> Read<()> {
        stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || self.element_here(ctx))
    }

    fn element_here(&mut self, ctx: &mut Ctx<'_, 'de>) -> Read<()> {
        self.expect(b'{')?;
        ctx.elements += 1;
        if ctx.elements > ctx.limits.max_elements {
            return Err(Doubt);
        }
        if let Some(deadline) = ctx.deadline {
            deadline
                .every(ctx.elements, Stage::Read)
                .map_err(|_| Stop::Deadline)?;
        }
        ctx.depth += 1;
        ctx.deepest = ctx.deepest.max(ctx.depth);
        if ctx.depth > ctx.limits.max_depth {
            return Err(Doubt);
        }
        if let Some(doc) = &mut ctx.doc {
            doc.open();
        }
        let mut element = Element::default();
        // Its blocks, when the doc holds them already.
        let mut placed: Option<(u32, u32)> = None;
        let mut seen: u16 = 0;
        let mut role: Option<Cow<'de, str>> = None;
        loop {
            let key = self.key()?;
            let bit = match key {
                "id" => {
                    element.id = self.string()?;
                    1
                }
                "role" => {
                    role = Some(self.string()?);
                    1 << 1
                }
                "subrole" => {
                    element.subrole = Some(self.string()?);
                    1 << 2
                }
                "title" => {
                    element.title = Some(self.string()?);
                    1 << 3
                }
                "url" => {
                    element.url = Some(self.string()?);
                    1 << 4
                }
                "selected" => {
                    element.selected = Some(self.boolean()?);
                    1 << 5
                }
                "focused" => {
                    element.focused = Some(self.boolean()?);
                    1 << 6
                }
                "visible" => {
                    element.visible = Some(self.boolean()?);
                    1 << 7
                }
                "hovered" => {
                    element.hovered = Some(self.boolean()?);
                    1 << 8
                }
                "children" => {
                    element.children = self.children(ctx)?.into();
                    1 << 9
                }
                "content" => {
                    match &mut ctx.doc {
                        // Straight into the doc's list: no list of the
                        // element's own to allocate and move from.
                        Some(_) => placed = Some(self.content_into_doc(ctx)?),
                        None => element.content = self.content(ctx)?,
                    }
                    1 << 10
                }
                "attributes" => {
                    match self.seed(AttributesSeed(&mut ctx.pairs))? {
                        Ok(ReadAttributes::Object(attributes)) => element.attributes = attributes,
                        _ => return Err(Doubt),
                    }
                    1 << 11
                }
                _ => return Err(Doubt),
            };
            if seen & bit != 0 {
                return Err(Doubt);
            }
            seen |= bit;
            if !self.more(b'}')? {
                break;
            }
        }
        // `id` and `role` are required.
        if seen & 0b11 != 0b11 {
            return Err(Doubt);
        }
        if let Some(word) = role {
            element.role = RoleName::parse(&word);
        }
        let bytes = match (&ctx.doc, placed) {
            (Some(doc), Some(placed)) => text_bytes_of(
                element.title.as_deref(),
                element.url.as_deref(),
                doc.blocks(placed),
            ),
            _ => text_bytes(&element),
        };
        if bytes > ctx.limits.max_content_bytes {
            return Err(Doubt);
        }
        ctx.depth -= 1;
        if let Some(doc) = &mut ctx.doc {
            // Only the root's shell is kept (the answer needs one); the
            // doc holds the rest.
            if ctx.depth > 0 {
                doc.close(element, placed);
                return Ok(());
            }
            doc.close(std::mem::take(&mut element), placed);
        }
        ctx.siblings.push(element);
        Ok(())
    }

    fn children(&mut self, ctx: &mut Ctx<'_, 'de>) -> Read<Vec<Element<'de>>> {
        self.expect(b'[')?;
        let start = ctx.siblings.len();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(Vec::new());
        }
        loop {
            self.element(ctx)?;
            if !self.more(b']')? {
                break;
            }
        }
        if ctx.doc.is_some() {
            // The doc holds them: no element outlives its reading.
            ctx.siblings.truncate(start);
            return Ok(Vec::new());
        }
        Ok(ctx.siblings.drain(start..).collect())
    }

    fn content(&mut self, ctx: &mut Ctx<'_, 'de>) -> Read<Vec<Content<'de>>> {
        let start = self.content_scratch(ctx)?;
        if ctx.blocks.len() == start + 1 {
            let mut one = Vec::with_capacity(1);
            one.extend(ctx.blocks.pop());
            return Ok(one);
        }
        Ok(ctx.blocks.drain(start..).collect())
    }

    /// [`Fast::content`] placed in the context's doc: where the blocks
    /// start there, and how many.
    fn content_into_doc(&mut self, ctx: &mut Ctx<'_, 'de>) -> Read<(u32, u32)> {
        let start = self.content_scratch(ctx)?;
        let Some(doc) = &mut ctx.doc else {
            return Err(Doubt);
        };
        Ok(doc.place_blocks(ctx.blocks.drain(start..)))
    }

    /// Reads a content array onto `ctx.blocks`: where its blocks start.
    fn content_scratch(&mut self, ctx: &mut Ctx<'_, 'de>) -> Read<usize> {
        self.expect(b'[')?;
        let start = ctx.blocks.len();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(start);
        }
        loop {
            let block = match self.text_block()? {
                Some(text) => Content::text(text),
                None => self.other_block(ctx)?,
            };
            ctx.blocks.push(block);
            if !self.more(b']')? {
                break;
            }
        }
        Ok(start)
    }

    /// A block written `{"type":"text","text":…}` (whitespace aside): its
    /// text. `None`, with nothing taken, for any other block.
    fn text_block(&mut self) -> Read<Option<Cow<'de, str>>> {
        let start = self.at;
        let text = (|| {
            self.expect(b'{').ok()?;
            (self.key().ok()? == "type").then_some(())?;
            (self.string().ok()? == "text").then_some(())?;
            self.expect(b',').ok()?;
            (self.key().ok()? == "text").then_some(())?;
            let text = self.string().ok()?;
            self.expect(b'}').ok()?;
            Some(text)
        })();
        if text.is_none() {
            self.at = start;
        }
        Ok(text)
    }

    /// Any other block, read by the lenient pass's `BlockSeed` and
    /// `Content::from_pairs`.
    fn other_block(&mut self, ctx: &mut Ctx<'_, 'de>) -> Read<Content<'de>> {
        match self.seed(BlockSeed(&mut ctx.block))? {
            Ok(()) => Content::from_pairs(ctx.block.pairs_mut()).map_err(|_| Doubt),
            Err(_) => Err(Doubt),
        }
    }
}
