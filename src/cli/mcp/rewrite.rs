//! What the gate changes in what an upstream MCP server answers: every
//! text redacted by the policy's patterns, every tree trimmed by the gate
//! and written back (an ARIA snapshot in its own dialect, with its refs),
//! every value the session withheld replaced wherever it appears again,
//! every link to a file in the upstream's working folder replaced by the
//! file's content, treated the same way.
//!
//! Page text cannot pass for ctxgate's own words: before anything is
//! added, every `[ctxgate` the upstream wrote becomes `\[ctxgate`, so a
//! notice or a placeholder (`[ctxgate: withheld value 1]`) in a result is
//! always ctxgate's.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::profile::{Place, Profile, Tree};
use crate::import::Format as Source;
use crate::policy::{Budget, RequestPlan};
use crate::redact::Redactor;
use crate::{Gate, Request};

/// What every notice and placeholder ctxgate adds starts with.
pub const MARK: &str = "[ctxgate";

/// Shortest value the session remembers: shorter ones would be replaced
/// inside ordinary words.
pub const MIN_REMEMBERED: usize = 4;

/// Most bytes of a linked text file inlined into a result.
pub const MAX_FILE_BYTES: usize = 64 * 1024;

/// Budget when neither the request nor the policy sets one.
pub const DEFAULT_BUDGET: Budget = Budget::Tokens(8_000);

/// The values withheld in one session (one connection), in memory only,
/// and the refs of the secure fields seen.
#[derive(Default)]
pub struct Memory {
    /// Each value and its placeholder number, longest first.
    values: Vec<(String, usize)>,
    /// Refs of secure fields in the snapshots seen.
    pub secure_refs: HashSet<String>,
}

impl Memory {
    /// Remembers a value to withhold; whether it is new.
    pub fn remember(&mut self, value: &str) -> bool {
        if value.chars().count() < MIN_REMEMBERED || value.contains(MARK) {
            return false;
        }
        if self.values.iter().any(|(v, _)| v == value) {
            return false;
        }
        let number = self.values.len() + 1;
        self.values.push((value.to_string(), number));
        self.values
            .sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.1.cmp(&b.1)));
        true
    }

    /// How many values are remembered.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// `text` with every remembered value replaced by its placeholder;
    /// `replaced` counts the replacements.
    pub fn replace<'t>(&self, text: &'t str, replaced: &mut usize) -> Cow<'t, str> {
        let mut out = Cow::Borrowed(text);
        for (value, number) in &self.values {
            if out.contains(value.as_str()) {
                *replaced += out.matches(value.as_str()).count();
                out = Cow::Owned(out.replace(value.as_str(), &placeholder(*number)));
            }
        }
        out
    }
}

/// The placeholder of the `number`th value withheld in a session.
pub fn placeholder(number: usize) -> String {
    format!("[ctxgate: withheld value {number}]")
}

/// Counts for one result (the decision log's line): never content.
#[derive(Debug, Default, Serialize)]
pub struct Counts {
    /// Trees trimmed.
    pub trees: usize,
    /// Elements in the trees read.
    pub elements: usize,
    /// Elements per outcome, over the trees.
    pub outcomes: BTreeMap<String, usize>,
    /// Replacements per redaction pattern, trees and texts.
    pub redactions: BTreeMap<String, usize>,
    /// Session values replaced by placeholders.
    pub withheld_values: usize,
    /// Values the session learnt from this result.
    pub remembered: usize,
    /// Linked files inlined.
    pub files: usize,
    /// Image, audio and binary blocks dropped.
    pub blocks_dropped: usize,
    /// Bytes of the result as received and as sent.
    pub bytes_in: usize,
    /// Bytes of the result as sent.
    pub bytes_out: usize,
}

/// The gate, the request every tree is trimmed for, the redaction plan,
/// the profile and the session's memory.
pub struct Rewriter {
    gate: Gate,
    action: String,
    budget: Option<Budget>,
    plan: Arc<RequestPlan>,
    /// The profile.
    pub profile: Profile,
    /// The session's memory.
    pub memory: Memory,
    /// The upstream's working folder, whose files results may link to.
    workdir: Option<PathBuf>,
    /// The last snapshot's ARIA size over its outline's, in the budget's
    /// unit, where counted: the next snapshot's outline starts at the
    /// budget over it (an agent snapshots the same page again and again),
    /// so that its ARIA usually fits at the first trim.
    aria_per_outline: Option<f64>,
}

impl Rewriter {
    /// A rewriter trimming trees for `action` under `budget` (else the
    /// policy's, else [`DEFAULT_BUDGET`]).
    pub fn new(
        gate: Gate,
        action: &str,
        budget: Option<Budget>,
        profile: Profile,
        workdir: Option<PathBuf>,
    ) -> crate::Result<Rewriter> {
        let plan = gate.plan(&Request::new(action), "mcp")?;
        let budget = budget.or(plan.budget).or(Some(DEFAULT_BUDGET));
        Ok(Rewriter {
            gate,
            action: action.to_string(),
            budget,
            plan,
            profile,
            memory: Memory::default(),
            workdir,
            aria_per_outline: None,
        })
    }

    /// The policy's hash.
    pub fn policy_hash(&self) -> &str {
        self.gate.policy().hash()
    }

    /// The redaction patterns' replacement texts: a tool argument holding
    /// one carries something ctxgate wrote.
    pub fn replacements(&self) -> impl Iterator<Item = &str> {
        self.plan.redact.iter().map(|r| r.replace.as_str())
    }

    /// Free text from the upstream: `[ctxgate` escaped, session values
    /// replaced, redacted.
    pub fn text(&self, text: &str, counts: &mut Counts) -> String {
        let escaped = neutralize(text);
        let remembered = self.memory.replace(&escaped, &mut counts.withheld_values);
        self.redact(&remembered, counts)
    }

    fn redact(&self, text: &str, counts: &mut Counts) -> String {
        let mut redactor = Redactor::new(&self.plan.redact);
        let out = redactor.text(text).into_owned();
        self.count(&redactor, counts);
        out
    }

    fn count(&self, redactor: &Redactor, counts: &mut Counts) {
        for (rule, n) in self.plan.redact.iter().zip(&redactor.counts) {
            if *n > 0 {
                *counts.redactions.entry(rule.id.clone()).or_default() += n;
            }
        }
    }

    /// Every string of a JSON value (not its `_meta`) as [`Rewriter::text`]
    /// does, keys included.
    pub fn value(&self, value: &mut Value, counts: &mut Counts) {
        let mut stack = vec![value];
        while let Some(value) = stack.pop() {
            match value {
                Value::String(s) => {
                    let new = self.text(s, counts);
                    if new != *s {
                        *s = new;
                    }
                }
                Value::Number(_) => {
                    let mut redactor = Redactor::new(&self.plan.redact);
                    redactor.value(value);
                    self.count(&redactor, counts);
                }
                Value::Array(items) => stack.extend(items.iter_mut()),
                Value::Object(map) => {
                    let mut redactor = Redactor::new(&self.plan.redact);
                    redactor.keys(map);
                    self.count(&redactor, counts);
                    stack.extend(
                        map.iter_mut()
                            .filter(|(k, _)| k.as_str() != "_meta")
                            .map(|(_, v)| v),
                    );
                }
                _ => {}
            }
        }
    }

    /// Remembers what a tool call types into a secure field (an object
    /// of its arguments whose `target` or `ref` is a secure field's ref, or
    /// whose `element` names a password): its `text` or `value`.
    pub fn remember_arguments(&mut self, arguments: &Value) -> usize {
        let mut found = Vec::new();
        let mut stack = vec![arguments];
        while let Some(value) = stack.pop() {
            match value {
                Value::Object(map) => {
                    let secure = ["target", "ref"].iter().any(|k| {
                        map.get(*k)
                            .and_then(Value::as_str)
                            .is_some_and(|r| self.memory.secure_refs.contains(r))
                    }) || map
                        .get("element")
                        .and_then(Value::as_str)
                        .is_some_and(crate::floor::names_password);
                    if secure {
                        for key in ["text", "value"] {
                            if let Some(Value::String(s)) = map.get(key) {
                                found.push(s.clone());
                            }
                        }
                    }
                    stack.extend(map.values());
                }
                Value::Array(items) => stack.extend(items),
                _ => {}
            }
        }
        found.iter().filter(|v| self.memory.remember(v)).count()
    }

    /// Rewrites a `CallToolResult` of `tool` in place.
    pub fn tool_result(
        &mut self,
        tool: Option<&str>,
        result: &mut Value,
        counts: &mut Counts,
    ) -> Result<(), String> {
        counts.bytes_in = serde_json::to_string(result).map_or(0, |s| s.len());
        let Some(object) = result.as_object_mut() else {
            return Err("the upstream's tool result is not an object".into());
        };
        if let Some(content) = object.get("content") {
            if !content.is_array() {
                return Err("the upstream's tool result has a `content` that is not a list".into());
            }
        } else if !object.contains_key("structuredContent") {
            return Err("the upstream's tool result has no `content`".into());
        }
        let trees: Vec<Tree> = self.profile.trees_for(tool).cloned().collect();
        // Linked files are read once, before anything is learnt from them.
        let mut linked = BTreeMap::new();
        if self.profile.files {
            for text in texts(object) {
                for link in links(text) {
                    if let Some(path) = self.resolve(&link.path) {
                        linked
                            .entry(link.path.clone())
                            .or_insert_with(|| read_capped(&path));
                    }
                }
            }
        }
        // First what the session learns: values in secure fields.
        for tree in trees.iter().filter(|t| t.format == Source::Aria) {
            let mut seen = Vec::new();
            for text in texts(object) {
                if tree.place == Place::Fenced {
                    for (_, body, _) in fenced_blocks(text, tree.format) {
                        seen.extend(crate::import::aria_secure_values(body.as_bytes()));
                    }
                } else if tree.place == Place::Text {
                    seen.extend(crate::import::aria_secure_values(text.as_bytes()));
                }
            }
            for bytes in linked.values().flatten() {
                seen.extend(crate::import::aria_secure_values(bytes));
            }
            counts.remembered += seen.iter().filter(|v| self.memory.remember(v)).count();
        }
        // The text copy of structuredContent, to keep it equal.
        let mirror = object.get("structuredContent").cloned();
        let mut mirrors = Vec::new();
        if let (Some(structured), Some(Value::Array(blocks))) = (&mirror, object.get("content")) {
            for (i, block) in blocks.iter().enumerate() {
                if let Some(text) = block.get("text").and_then(Value::as_str) {
                    if serde_json::from_str::<Value>(text).ok().as_ref() == Some(structured) {
                        mirrors.push(i);
                    }
                }
            }
        }
        if let Some(structured) = object.get_mut("structuredContent") {
            let json_tree = trees.iter().find(|t| matches!(t.place, Place::Json(_)));
            match json_tree {
                Some(tree) => self.json_tree(structured, tree, counts)?,
                None => self.value(structured, counts),
            }
        }
        let structured = object.get("structuredContent").cloned();
        if let Some(Value::Array(blocks)) = object.get_mut("content") {
            let mut out = Vec::with_capacity(blocks.len());
            for (i, mut block) in std::mem::take(blocks).into_iter().enumerate() {
                if let (true, Some(structured)) = (mirrors.contains(&i), &structured) {
                    block["text"] = Value::String(structured.to_string());
                    out.push(block);
                    continue;
                }
                match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        let text = block
                            .get("text")
                            .and_then(Value::as_str)
                            .ok_or("a text block of the upstream's result has no `text` string")?
                            .to_string();
                        let new = self.text_block(&text, &trees, &linked, counts)?;
                        block["text"] = Value::String(new);
                        let meta = take_meta(&mut block);
                        self.others(&mut block, &["type", "text"], counts);
                        put_meta(&mut block, meta);
                        out.push(block);
                    }
                    Some(kind @ ("image" | "audio")) if self.profile.drop_images => {
                        counts.blocks_dropped += 1;
                        let mime = block.get("mimeType").and_then(Value::as_str).unwrap_or("");
                        out.push(text_block(format!(
                            "[ctxgate] {kind} block ({}) not shown: the gate cannot read it",
                            quoted(mime)
                        )));
                    }
                    Some("resource") => {
                        let binary = block.pointer("/resource/blob").is_some();
                        if binary && self.profile.drop_images {
                            counts.blocks_dropped += 1;
                            out.push(text_block(
                                "[ctxgate] binary resource block not shown: the gate cannot read it"
                                    .into(),
                            ));
                            continue;
                        }
                        if let Some(Value::String(text)) = block.pointer_mut("/resource/text") {
                            *text = self.text_block(text, &trees, &linked, counts)?;
                        }
                        let meta = take_meta(&mut block);
                        self.others(&mut block, &["type"], counts);
                        put_meta(&mut block, meta);
                        out.push(block);
                    }
                    _ => {
                        let meta = take_meta(&mut block);
                        self.value(&mut block, counts);
                        put_meta(&mut block, meta);
                        out.push(block);
                    }
                }
            }
            *blocks = out;
        }
        counts.bytes_out = serde_json::to_string(result).map_or(0, |s| s.len());
        Ok(())
    }

    /// Every string of `block` outside `keep` (resource text was done).
    fn others(&self, block: &mut Value, keep: &[&str], counts: &mut Counts) {
        if let Some(map) = block.as_object_mut() {
            for (key, value) in map.iter_mut() {
                if !keep.contains(&key.as_str()) && key != "_meta" {
                    if key == "resource" {
                        if let Some(resource) = value.as_object_mut() {
                            for (k, v) in resource.iter_mut() {
                                if k != "text" && k != "_meta" {
                                    self.value(v, counts);
                                }
                            }
                        }
                    } else {
                        self.value(value, counts);
                    }
                }
            }
        }
    }

    /// One text: its trees trimmed, its links inlined, the rest as free text.
    fn text_block(
        &mut self,
        text: &str,
        trees: &[Tree],
        linked: &BTreeMap<String, Option<Vec<u8>>>,
        counts: &mut Counts,
    ) -> Result<String, String> {
        for tree in trees {
            match &tree.place {
                Place::Text => {
                    if looks_like(tree.format, text) {
                        return self.tree_text(tree.format, text.as_bytes(), counts);
                    }
                }
                Place::Json(_) => {
                    if let Ok(mut value) = serde_json::from_str::<Value>(text) {
                        if value.is_object() {
                            self.json_tree(&mut value, tree, counts)?;
                            return Ok(value.to_string());
                        }
                    }
                }
                Place::Fenced => {}
            }
        }
        let fenced = trees.iter().find(|t| t.place == Place::Fenced);
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        if let Some(tree) = fenced {
            for (start, body, end) in fenced_blocks(text, tree.format) {
                out.push_str(&self.free(&text[at..start], linked, counts));
                let trimmed = self.tree_text(tree.format, body.as_bytes(), counts)?;
                out.push_str(&fence(&trimmed, info(tree.format)));
                at = end;
            }
        }
        out.push_str(&self.free(&text[at..], linked, counts));
        Ok(out)
    }

    /// Free text, with its links to files in the working folder replaced by
    /// the files' content (a snapshot trimmed, other text redacted).
    fn free(
        &mut self,
        text: &str,
        linked: &BTreeMap<String, Option<Vec<u8>>>,
        counts: &mut Counts,
    ) -> String {
        let found: Vec<Link> = match self.profile.files {
            true => links(text)
                .into_iter()
                .filter(|l| linked.contains_key(&l.path))
                .collect(),
            false => Vec::new(),
        };
        if found.is_empty() {
            return self.text(text, counts);
        }
        let mut out = String::new();
        let mut at = 0;
        for link in found {
            out.push_str(&self.text(&text[at..link.start], counts));
            out.push_str(&self.text(&link.label, counts));
            let body = linked.get(&link.path).cloned().flatten();
            out.push_str(&self.inline(&link, body.as_deref(), counts));
            at = link.end;
        }
        out.push_str(&self.text(&text[at..], counts));
        out
    }

    /// A linked file's content in place of its link.
    fn inline(&mut self, link: &Link, body: Option<&[u8]>, counts: &mut Counts) -> String {
        counts.files += 1;
        let ext = link
            .path
            .rsplit('.')
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        let Some(body) = body else {
            return " [ctxgate] linked file not shown: it cannot be read".into();
        };
        if matches!(ext.as_str(), "yml" | "yaml") && self.profile.reads(Source::Aria) {
            return match self.tree_text(Source::Aria, body, counts) {
                Ok(trimmed) => format!(" (inlined by ctxgate)\n{}", fence(&trimmed, "yaml")),
                Err(message) => format!(" [ctxgate] snapshot not shown: {message}"),
            };
        }
        if body.len() > MAX_FILE_BYTES * 16
            || std::str::from_utf8(body).is_err()
            || matches!(
                ext.as_str(),
                "png" | "jpg" | "jpeg" | "webp" | "pdf" | "gif"
            )
        {
            counts.blocks_dropped += 1;
            return " [ctxgate] linked file not shown: the gate cannot read it".into();
        }
        let text = std::str::from_utf8(body).expect("checked");
        let lines: Vec<&str> = text.lines().collect();
        let (from, to) = link.lines.unwrap_or((1, lines.len().max(1)));
        let part = lines
            .get(from.saturating_sub(1).min(lines.len())..to.min(lines.len()))
            .unwrap_or(&[])
            .join("\n");
        let (part, cut) = match part.len() > MAX_FILE_BYTES {
            true => {
                let mut end = MAX_FILE_BYTES;
                while !part.is_char_boundary(end) {
                    end -= 1;
                }
                (part[..end].to_string(), true)
            }
            false => (part, false),
        };
        let mut out = format!(
            " (inlined by ctxgate)\n{}",
            fence(&self.text(&part, counts), "text")
        );
        if cut {
            out.push_str(&format!("\n[ctxgate] file cut to {MAX_FILE_BYTES} bytes"));
        }
        out
    }

    /// The path a link names, if it is a file inside the working folder.
    fn resolve(&self, link: &str) -> Option<PathBuf> {
        let base = match &self.workdir {
            Some(dir) => dir.clone(),
            None => std::env::current_dir().ok()?,
        };
        let base = base.canonicalize().ok()?;
        let path = base.join(link).canonicalize().ok()?;
        (path.starts_with(&base) && path.is_file()).then_some(path)
    }

    /// A tree's text trimmed and written back: ARIA as ARIA, others as
    /// the outline.
    fn tree_text(
        &mut self,
        format: Source,
        bytes: &[u8],
        counts: &mut Counts,
    ) -> Result<String, String> {
        let escaped = neutralize(&String::from_utf8_lossy(bytes)).into_owned();
        let remembered = self
            .memory
            .replace(&escaped, &mut counts.withheld_values)
            .into_owned();
        match format {
            Source::Aria => self.trim_aria(&remembered, counts),
            other => {
                self.trim_rendered(other, remembered.as_bytes(), crate::Format::Outline, counts)
            }
        }
    }

    /// An ARIA snapshot trimmed and written back with its refs, within the
    /// budget as written (the gate measures the outline, from the budget
    /// over the last snapshot's ARIA-to-outline ratio; the ARIA text is
    /// measured again and the outline's budget lowered until it fits).
    pub fn trim_aria(&mut self, snapshot: &str, counts: &mut Counts) -> Result<String, String> {
        let answer = crate::import::import(Source::Aria, snapshot.as_bytes())
            .map_err(|e| format!("{e:#}"))?;
        let refs = refs(snapshot);
        note_secure(&answer.root, &mut self.memory.secure_refs);
        let is_ref = |id: &str| refs.contains(id);
        let budget = self.budget.unwrap_or(DEFAULT_BUDGET);
        let full = crate::tokens::limit(budget);
        let mut limit = match self.aria_per_outline {
            Some(ratio) if ratio > 1.0 => ((full as f64 / ratio) as usize).clamp(1, full),
            _ => full,
        };
        for _ in 0..8 {
            let request = Request::new(self.action.clone())
                .format(crate::Format::Outline)
                .budget(with_limit(budget, limit));
            let trimmed = self
                .gate
                .trim(&answer, &request)
                .map_err(|e| format!("{e:#}"))?;
            let written = crate::render::aria(&trimmed.answer, &is_ref);
            let (fits, size) =
                crate::tokens::fit(&written, budget).map_err(|e| format!("{e:#}"))?;
            if fits {
                let unit = crate::tokens::unit(budget);
                let outline = trimmed.report.budgets.iter().find(|b| b.unit == unit);
                self.aria_per_outline = size
                    .zip(outline.filter(|b| b.used > 0))
                    .map(|(aria, outline)| aria as f64 / outline.used as f64);
                add_report(counts, &trimmed.report);
                return Ok(written);
            }
            let size = size.unwrap_or(limit * 2).max(1);
            let next = limit * full / size * 95 / 100;
            limit = next.min(limit.saturating_sub(1)).max(1);
        }
        Err(format!(
            "the snapshot does not fit {} {} written as ARIA",
            crate::tokens::limit(budget),
            crate::tokens::unit(budget)
        ))
    }

    /// A tree of another format trimmed and rendered by the gate.
    fn trim_rendered(
        &mut self,
        format: Source,
        bytes: &[u8],
        out: crate::Format,
        counts: &mut Counts,
    ) -> Result<String, String> {
        let answer = crate::import::import(format, bytes).map_err(|e| format!("{e:#}"))?;
        let mut request = Request::new(self.action.clone()).format(out);
        if let Some(budget) = self.budget {
            request = request.budget(budget);
        }
        let trimmed = self
            .gate
            .trim(&answer, &request)
            .map_err(|e| format!("{e:#}"))?;
        add_report(counts, &trimmed.report);
        Ok(trimmed.rendered)
    }

    /// A JSON object holding a tree at the entry's pointer: the tree
    /// replaced by the trimmed answer (JSON), every other string redacted.
    fn json_tree(
        &mut self,
        value: &mut Value,
        tree: &Tree,
        counts: &mut Counts,
    ) -> Result<(), String> {
        let Place::Json(pointer) = &tree.place else {
            return Ok(());
        };
        let trimmed = match value.pointer(pointer) {
            Some(Value::String(text)) => {
                let text = self.memory.replace(&neutralize(text), &mut 0).into_owned();
                let out =
                    self.trim_rendered(tree.format, text.as_bytes(), crate::Format::Json, counts)?;
                Some(Value::String(out))
            }
            Some(found) => {
                let bytes = serde_json::to_vec(found).map_err(|e| e.to_string())?;
                let text = self
                    .memory
                    .replace(&neutralize(&String::from_utf8_lossy(&bytes)), &mut 0)
                    .into_owned();
                let out =
                    self.trim_rendered(tree.format, text.as_bytes(), crate::Format::Json, counts)?;
                Some(serde_json::from_str(&out).map_err(|e| e.to_string())?)
            }
            None => None,
        };
        match trimmed {
            Some(new) => {
                // The rest redacted; the trimmed tree was redacted by the trim.
                *value.pointer_mut(pointer).expect("found above") = Value::Null;
                self.value(value, counts);
                *value.pointer_mut(pointer).expect("kept") = new;
            }
            None => self.value(value, counts),
        }
        Ok(())
    }
}

/// `budget` with another limit.
fn with_limit(budget: Budget, limit: usize) -> Budget {
    match budget {
        Budget::Bytes(_) => Budget::Bytes(limit),
        Budget::Tokens(_) => Budget::Tokens(limit),
    }
}

fn add_report(counts: &mut Counts, report: &crate::Report) {
    counts.trees += 1;
    counts.elements += report.elements;
    for (outcome, n) in &report.outcomes {
        let name = serde_json::to_value(outcome)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        *counts.outcomes.entry(name).or_default() += n;
    }
    for (rule, n) in &report.redactions {
        *counts.redactions.entry(rule.clone()).or_default() += n;
    }
}

/// The ids of the secure fields of an imported answer.
fn note_secure(root: &crate::Element, refs: &mut HashSet<String>) {
    let mut stack = vec![root];
    while let Some(element) = stack.pop() {
        if element.subrole.as_deref() == Some("secure") {
            refs.insert(element.id.to_string());
        }
        stack.extend(element.children.iter());
    }
}

/// The `[ref=…]`s of a snapshot.
fn refs(snapshot: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut rest = snapshot;
    while let Some(i) = rest.find("[ref=") {
        rest = &rest[i + 5..];
        if let Some(end) = rest.find(']') {
            out.insert(rest[..end].to_string());
            rest = &rest[end..];
        }
    }
    out
}

/// Every `[ctxgate` the upstream wrote, as `\[ctxgate`.
pub fn neutralize(text: &str) -> Cow<'_, str> {
    match text.contains(MARK) {
        true => Cow::Owned(text.replace(MARK, "\\[ctxgate")),
        false => Cow::Borrowed(text),
    }
}

/// The texts of a result's blocks (text blocks and resource text).
fn texts(object: &serde_json::Map<String, Value>) -> Vec<&str> {
    let Some(Value::Array(blocks)) = object.get("content") else {
        return Vec::new();
    };
    blocks
        .iter()
        .filter_map(|b| {
            b.get("text")
                .or_else(|| b.pointer("/resource/text"))
                .and_then(Value::as_str)
        })
        .collect()
}

fn take_meta(block: &mut Value) -> Option<Value> {
    block.as_object_mut().and_then(|m| m.remove("_meta"))
}

fn put_meta(block: &mut Value, meta: Option<Value>) {
    if let (Some(map), Some(meta)) = (block.as_object_mut(), meta) {
        map.insert("_meta".into(), meta);
    }
}

fn text_block(text: String) -> Value {
    serde_json::json!({"type": "text", "text": text})
}

fn quoted(text: &str) -> String {
    let mut out = Vec::new();
    let _ = crate::render::escape::quoted(&mut out, text);
    String::from_utf8(out).unwrap_or_default()
}

/// The info word of a fence holding a tree of `format` as sent.
fn info(format: Source) -> &'static str {
    match format {
        Source::Aria => "yaml",
        _ => "text",
    }
}

/// Whether a whole text block is a tree of `format` (a JSON tree starts
/// with `{` or `[`, a snapshot with `- `).
fn looks_like(format: Source, text: &str) -> bool {
    let start = text.trim_start();
    match format {
        Source::Aria => start.starts_with("- "),
        Source::AxDump => !start.is_empty(),
        _ => start.starts_with('{') || start.starts_with('['),
    }
}

/// `body` in a fence longer than any run of backticks inside it.
pub fn fence(body: &str, info: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in body.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let ticks = "`".repeat(longest.max(2) + 1);
    let body = body.strip_suffix('\n').unwrap_or(body);
    format!("{ticks}{info}\n{body}\n{ticks}")
}

/// The fenced blocks of `text` that hold a tree of `format`: each block's
/// start (its opening fence), its body, and its end (after the closing
/// fence).
fn fenced_blocks(text: &str, format: Source) -> Vec<(usize, &str, usize)> {
    let words: &[&str] = match format {
        Source::Aria => &["yaml", "aria"],
        _ => &["json", "", "text"],
    };
    let mut out = Vec::new();
    let mut offset = 0;
    let mut open: Option<(usize, usize, usize)> = None; // (start, body start, ticks)
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_end_matches(['\n', '\r']);
        let ticks = trimmed.bytes().take_while(|&b| b == b'`').count();
        match open {
            None if ticks >= 3 && words.contains(&trimmed[ticks..].trim()) => {
                open = Some((offset, offset + line.len(), ticks));
            }
            Some((start, body, n)) if ticks >= n && trimmed[ticks..].trim().is_empty() => {
                out.push((start, &text[body..offset], offset + trimmed.len()));
                open = None;
            }
            _ => {}
        }
        offset += line.len();
    }
    out
}

/// A link to a file in a result's text.
#[derive(Debug, Clone)]
struct Link {
    start: usize,
    end: usize,
    /// What stands in for it: a Markdown link's label, else the file name.
    label: String,
    /// The path, without a `#L…` line range.
    path: String,
    /// Lines `#Ln` or `#Ln-Lm`, 1-based, inclusive.
    lines: Option<(usize, usize)>,
}

/// Markdown links `[label](path)` and bare relative paths of files
/// (`.playwright-mcp/console-….log#L1-L2`); urls with a scheme are not.
fn links(text: &str) -> Vec<Link> {
    use std::sync::OnceLock;
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(
            r"\[([^\]\n]*)\]\(([^()\s]+)\)|(?:^|[\s(])((?:\./|\.\./)?[A-Za-z0-9_.\-/]*[A-Za-z0-9_\-]\.[A-Za-z0-9]{1,5}(?:#L[0-9]+(?:-L[0-9]+)?)?)",
        )
        .expect("the link pattern compiles")
    });
    let mut out = Vec::new();
    for caps in re.captures_iter(text) {
        let (label, target, whole) = match (caps.get(1), caps.get(2), caps.get(3)) {
            (Some(label), Some(target), _) => (
                label.as_str().to_string(),
                target.as_str(),
                caps.get(0).expect("whole"),
            ),
            (_, _, Some(bare)) => {
                let name = bare.as_str().rsplit('/').next().unwrap_or("").to_string();
                (name, bare.as_str(), bare)
            }
            _ => continue,
        };
        if target.contains("://") || target.starts_with('/') || target.contains(':') {
            continue;
        }
        let (path, lines) = match target.split_once("#L") {
            Some((path, range)) => {
                let mut parts = range.splitn(2, "-L");
                let from = parts.next().and_then(|n| n.parse().ok());
                let to = parts.next().and_then(|n| n.parse().ok()).or(from);
                (path.to_string(), from.zip(to))
            }
            None => (target.to_string(), None),
        };
        out.push(Link {
            start: whole.start(),
            end: whole.end(),
            label,
            path,
            lines,
        });
    }
    out
}

/// A file's bytes, or `None` when it cannot be read.
fn read_capped(path: &Path) -> Option<Vec<u8>> {
    std::fs::read(path).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_found_with_their_line_ranges() {
        let text = "- [Snapshot](.playwright-mcp/page-1.yml)\n- New console entries: .playwright-mcp/console-1.log#L1-L2\n- [Sign in](http://127.0.0.1:8765/login.html)";
        let found: Vec<_> = links(text)
            .into_iter()
            .map(|l| (l.label, l.path, l.lines))
            .collect();
        assert_eq!(
            found,
            [
                ("Snapshot".into(), ".playwright-mcp/page-1.yml".into(), None),
                (
                    "console-1.log#L1-L2".into(),
                    ".playwright-mcp/console-1.log".into(),
                    Some((1, 2))
                ),
            ]
        );
    }

    #[test]
    fn fences_outlast_the_backticks_inside() {
        assert_eq!(fence("a\n", "yaml"), "```yaml\na\n```");
        assert_eq!(fence("x ```` y", "text"), "`````text\nx ```` y\n`````");
        let text = "### Snapshot\n```yaml\n- button \"a\"\n```\nafter";
        let blocks = fenced_blocks(text, Source::Aria);
        assert_eq!(blocks.len(), 1);
        assert_eq!(blocks[0].1, "- button \"a\"\n");
        assert_eq!(&text[blocks[0].2..], "\nafter");
    }

    #[test]
    fn the_memory_replaces_longest_first_and_skips_short_values() {
        let mut memory = Memory::default();
        assert!(memory.remember("hunter2"));
        assert!(memory.remember("hunter2-long"));
        assert!(!memory.remember("abc"));
        let mut n = 0;
        assert_eq!(
            memory.replace("hunter2-long and hunter2", &mut n),
            "[ctxgate: withheld value 2] and [ctxgate: withheld value 1]"
        );
        assert_eq!(n, 2);
    }
}
