//! Synthetic answers of realistic shape and exact size, for benchmarks,
//! tests and trying policies on trees larger than any fixture.
//!
//! [`synth`] builds an Application with several windows, one of them
//! focused; panes, some hidden (`visible: false`); spreadsheet-like tables
//! of rows and cells; documents of headings, paragraphs of varied length,
//! links and small images; message threads with `author` and `related`;
//! sign-in forms with secure text fields; and, scattered in the text, the
//! things a policy must catch: Luhn-valid card numbers and API tokens. The
//! focus path is unbroken from the root's child down to a paragraph, which
//! holds the selected text. Elements average about 140 bytes of compact
//! JSON, the average measured on real providers' trees (MEASURED.md).
//!
//! The output is a pure function of `(elements, seed)` (a splitmix64
//! generator, no platform randomness), always conforms to 0.2.0, and is
//! built without recursion: elements are laid out flat in document order
//! with their parents' positions, then assembled from the last one back.

use serde_json::json;

use crate::model::{Answer, Block, Content, Element, Role, PROTOCOL};

/// A conforming 0.2.0 answer of exactly `elements` elements (at least one:
/// `0` is read as `1`), the same for the same `seed`.
///
/// ```
/// let answer = ctxgate::synth::synth(1_000, 7);
/// assert_eq!(ctxgate::Tree::new(&answer.root).len(), 1_000);
/// assert!(ctxgate::check(&answer).iter().all(|f| !f.is_error()));
/// ```
pub fn synth(elements: usize, seed: u64) -> Answer<'static> {
    let mut b = Builder::new(elements.max(1), seed);
    let root = b.add_root();
    let panes = b.windows(root, elements);
    while !b.full() {
        let pane = panes[b.rng.below(panes.len())];
        match b.rng.below(100) {
            0..=12 => b.table(pane),
            13..=42 => b.document(pane),
            43..=64 => b.thread(pane),
            65..=79 => b.links(pane),
            80..=87 => b.form(pane),
            _ => b.gallery(pane),
        }
    }
    Answer {
        protocol: PROTOCOL.to_string(),
        instance: format!("synth-{seed:x}"),
        root: b.assemble(),
    }
}

/// splitmix64 (Steele, Lea and Flood 2014): tiny, fast, and good enough
/// to make trees look varied; not for anything secret.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`; the modulo bias is irrelevant here).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True `percent` times in a hundred.
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

/// Elements in document order with their parents' positions; assembled
/// into a tree at the end.
struct Builder {
    nodes: Vec<Element<'static>>,
    parents: Vec<usize>,
    limit: usize,
    rng: Rng,
}

const WORDS: &[&str] = &[
    "the",
    "plan",
    "for",
    "launch",
    "review",
    "budget",
    "team",
    "and",
    "with",
    "draft",
    "update",
    "customer",
    "quarter",
    "revenue",
    "growth",
    "design",
    "meeting",
    "notes",
    "on",
    "in",
    "a",
    "report",
    "schedule",
    "risk",
    "we",
    "will",
    "ship",
    "next",
    "week",
    "after",
    "testing",
    "approved",
    "pending",
    "is",
    "to",
    "of",
    "café",
    "Zürich",
    "naïve",
    "résumé",
    "東京",
    "invoice",
    "supplier",
    "contract",
    "renewal",
    "deadline",
    "owner",
    "follow-up",
    "metrics",
    "latency",
    "p95",
    "dashboard",
    "migration",
    "database",
    "backup",
    "\"quoted\"",
    "it's",
    "roadmap",
    "hiring",
    "offsite",
    "feedback",
    "survey",
    "results",
    "were",
    "better",
    "than",
    "expected",
    "—",
    "see",
    "attached",
    "figures",
    "below",
    "please",
    "confirm",
    "by",
    "Friday",
];

const NAMES: &[&str] = &[
    "Ada Lovelace",
    "Grace Hopper",
    "Alan Turing",
    "Barbara Liskov",
    "Edsger Dijkstra",
    "Frances Allen",
    "Ken Thompson",
    "Margaret Hamilton",
    "Donald Knuth",
    "Radia Perlman",
    "José Martínez",
    "Zoë Müller",
];

const HOSTS: &[&str] = &[
    "example.com",
    "docs.example.org",
    "intranet.corp.example",
    "news.example.net",
    "wiki.example.com",
];

const BASE64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPPER_DIGITS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

impl Builder {
    fn new(limit: usize, seed: u64) -> Builder {
        let capacity = limit.min(1 << 22);
        Builder {
            nodes: Vec::with_capacity(capacity),
            parents: Vec::with_capacity(capacity),
            limit,
            rng: Rng(seed),
        }
    }

    fn full(&self) -> bool {
        self.nodes.len() >= self.limit
    }

    fn add_root(&mut self) -> usize {
        let mut root = Element::new("app", Role::Application);
        root.title = Some("Synth Office".into());
        root.attributes
            .insert("bundle".into(), json!("com.example.synth"));
        self.nodes.push(root);
        self.parents.push(0);
        0
    }

    /// Adds an element under `parent` with an id unique to the answer
    /// (`prefix-position`); `None` once the answer has all its elements.
    fn add(&mut self, parent: usize, prefix: &str, role: Role) -> Option<usize> {
        if self.full() {
            return None;
        }
        let at = self.nodes.len();
        self.nodes
            .push(Element::new(format!("{prefix}-{at}"), role));
        self.parents.push(parent);
        Some(at)
    }

    fn el(&mut self, at: usize) -> &mut Element<'static> {
        &mut self.nodes[at]
    }

    fn text_content(&mut self, at: usize, text: String) {
        self.nodes[at].content.push(Content::text(text));
    }

    /// The windows, the focus path with the selection, and the panes that
    /// the rest of the tree is spread over.
    fn windows(&mut self, root: usize, elements: usize) -> Vec<usize> {
        let mut panes = Vec::new();
        // The front window holds the focus path: window > editor pane >
        // document > paragraph, and the selected words inside it.
        let Some(front) = self.add(root, "win", Role::Window) else {
            return vec![root];
        };
        let w = self.el(front);
        w.subrole = Some("document".into());
        w.title = Some("Quarterly report — Synth Office".into());
        w.focused = Some(true);
        panes.push(front);
        let Some(editor) = self.add(front, "pane", Role::Group) else {
            return panes;
        };
        let e = self.el(editor);
        e.subrole = Some("editor".into());
        e.focused = Some(true);
        panes.push(editor);
        let Some(doc) = self.add(editor, "doc", Role::Document) else {
            return panes;
        };
        let d = self.el(doc);
        d.subrole = Some("report".into());
        d.title = Some("Quarterly report".into());
        d.url = Some("file:///Users/ada/Documents/Quarterly%20report.synth".into());
        d.focused = Some(true);
        d.attributes.insert("author".into(), json!("Ada Lovelace"));
        if let Some(h) = self.add(doc, "h", Role::Heading) {
            self.el(h).title = Some("Summary".into());
        }
        let Some(para) = self.add(doc, "p", Role::Text) else {
            return panes;
        };
        let p = self.el(para);
        p.subrole = Some("paragraph".into());
        p.focused = Some(true);
        p.content.push(Content::text(
            "Revenue grew by 12% this quarter, ahead of plan; costs were flat.",
        ));
        if let Some(sel) = self.add(para, "sel", Role::Text) {
            let s = self.el(sel);
            s.selected = Some(true);
            s.content.push(Content::text("grew by 12%"));
        }
        for _ in 0..self.rng.range(2, 6) {
            self.paragraph(doc);
        }

        // The other windows, and panes inside each window.
        let count = (elements / 5_000).clamp(2, 16);
        let mut windows = vec![front];
        for i in 1..count {
            let Some(w) = self.add(root, "win", Role::Window) else {
                return panes;
            };
            let kind = self
                .rng
                .pick(&["document", "browser", "mail", "sheet", "inspector"]);
            let title = format!("{} {i}", capitalize(kind));
            let el = self.el(w);
            el.subrole = Some(kind.into());
            el.title = Some(title.into());
            if i % 4 == 3 {
                // Minimized: nothing inside is drawn.
                el.visible = Some(false);
            }
            windows.push(w);
        }
        for (i, &w) in windows.iter().enumerate() {
            let extra = if i == 0 { 1 } else { self.rng.range(1, 3) };
            for _ in 0..extra {
                let Some(pane) = self.add(w, "pane", Role::Group) else {
                    return panes;
                };
                let kind = self.rng.pick(&["sidebar", "content", "detail", "split"]);
                let hidden = self.rng.chance(15);
                let p = self.el(pane);
                p.subrole = Some(kind.into());
                if hidden {
                    p.visible = Some(false);
                }
                panes.push(pane);
            }
        }
        panes
    }

    /// A spreadsheet-like table: a header row and rows of cells.
    fn table(&mut self, pane: usize) {
        let Some(table) = self.add(pane, "tbl", Role::Table) else {
            return;
        };
        let n = self.nodes.len();
        let t = self.el(table);
        t.subrole = Some("sheet".into());
        t.title = Some(format!("Sheet {n}").into());
        let columns = self.rng.range(3, 8);
        let rows = self.rng.range(4, 30);
        let headers = ["Region", "Owner", "Q1", "Q2", "Q3", "Q4", "Total", "Notes"];
        let Some(head) = self.add(table, "r", Role::Row) else {
            return;
        };
        self.el(head).subrole = Some("header".into());
        for name in headers.iter().take(columns) {
            let Some(cell) = self.add(head, "c", Role::Cell) else {
                return;
            };
            self.el(cell).title = Some((*name).into());
        }
        for r in 0..rows {
            let Some(row) = self.add(table, "r", Role::Row) else {
                return;
            };
            self.el(row).title = Some(format!("Row {}", r + 2).into());
            for c in 0..columns {
                let Some(cell) = self.add(row, "c", Role::Cell) else {
                    return;
                };
                let text = match c {
                    0 => self
                        .rng
                        .pick(&["North", "South", "East", "West", "Zürich", "東京"])
                        .to_string(),
                    1 => self.rng.pick(NAMES).to_string(),
                    _ if c == columns - 1 && self.rng.chance(3) => card_number(&mut self.rng),
                    _ if c == columns - 1 && self.rng.chance(30) => self.words(3, 12),
                    _ => {
                        let cents = self.rng.below(10_000_000);
                        format!("{}.{:02}", cents / 100, cents % 100)
                    }
                };
                self.text_content(cell, text);
            }
        }
    }

    /// A document: headings, paragraphs, links, images, sections.
    fn document(&mut self, pane: usize) {
        let Some(doc) = self.add(pane, "doc", Role::Document) else {
            return;
        };
        let title = self.words(2, 6);
        let host = self.rng.pick(HOSTS);
        let n = self.nodes.len();
        let web = self.rng.chance(50);
        let d = self.el(doc);
        d.subrole = Some(if web { "webarea" } else { "note" }.into());
        d.title = Some(capitalize(&title).into());
        if web {
            d.url = Some(format!("https://{host}/pages/{n}").into());
        }
        let sections = self.rng.range(1, 4);
        for _ in 0..sections {
            let parent = if self.rng.chance(50) {
                let Some(section) = self.add(doc, "sec", Role::Group) else {
                    return;
                };
                self.el(section).subrole = Some("section".into());
                section
            } else {
                doc
            };
            let Some(h) = self.add(parent, "h", Role::Heading) else {
                return;
            };
            let heading = self.words(2, 7);
            self.el(h).title = Some(capitalize(&heading).into());
            for _ in 0..self.rng.range(2, 8) {
                match self.rng.below(10) {
                    0 | 1 => self.link(parent),
                    2 => self.image(parent),
                    _ => self.paragraph(parent),
                }
            }
        }
    }

    fn paragraph(&mut self, parent: usize) {
        let Some(p) = self.add(parent, "p", Role::Text) else {
            return;
        };
        let mut text = if self.rng.chance(15) {
            self.words(40, 140)
        } else {
            self.words(4, 30)
        };
        if self.rng.chance(3) {
            text.push_str(" Card on file: ");
            text.push_str(&card_number(&mut self.rng));
            text.push('.');
        }
        if self.rng.chance(2) {
            text.push_str(" Token: ");
            text.push_str(&api_token(&mut self.rng));
        }
        if self.rng.chance(5) {
            text.push_str("\nP.S. ");
            text.push_str(&self.words(3, 10));
        }
        let author = self.rng.chance(10).then(|| self.rng.pick(NAMES));
        let cites = self.rng.chance(3).then(|| {
            let host = self.rng.pick(HOSTS);
            format!("https://{host}/ref/{}", self.rng.below(100_000))
        });
        let e = self.el(p);
        e.subrole = Some("paragraph".into());
        e.content.push(Content::text(text));
        if let Some(author) = author {
            e.attributes.insert("author".into(), json!(author));
        }
        if let Some(url) = cites {
            e.attributes.insert(
                "related".into(),
                json!([{ "relation": "cites", "url": url }]),
            );
        }
    }

    fn link(&mut self, parent: usize) {
        let Some(l) = self.add(parent, "a", Role::Link) else {
            return;
        };
        let title = self.words(1, 6);
        let host = self.rng.pick(HOSTS);
        let path = self.words(1, 3).replace(' ', "-");
        let n = self.rng.below(1_000_000);
        let e = self.el(l);
        e.title = Some(capitalize(&title).into());
        e.url = Some(format!("https://{host}/{}/{n}", url_safe(&path)).into());
    }

    fn image(&mut self, parent: usize) {
        let Some(i) = self.add(parent, "img", Role::Image) else {
            return;
        };
        let alt = self.words(2, 8);
        let len = self.rng.range(15, 90) * 4;
        let mut data = String::with_capacity(len);
        for _ in 0..len - 2 {
            data.push(BASE64[self.rng.below(64)] as char);
        }
        data.push_str("==");
        let mime = self.rng.pick(&["image/png", "image/jpeg", "image/gif"]);
        let e = self.el(i);
        e.title = Some(capitalize(&alt).into());
        e.content.push(Content {
            block: Block::Image {
                data: data.into(),
                mime_type: mime.into(),
            },
            extra: None,
        });
    }

    /// A thread of messages, with authors and replies linked by `related`.
    fn thread(&mut self, pane: usize) {
        let Some(list) = self.add(pane, "th", Role::List) else {
            return;
        };
        let topic = self.words(2, 5);
        let kind = self.rng.pick(&["thread", "inbox", "comments"]);
        let l = self.el(list);
        l.subrole = Some(kind.into());
        l.title = Some(capitalize(&topic).into());
        let mut previous: Option<String> = None;
        for _ in 0..self.rng.range(3, 30) {
            let Some(row) = self.add(list, "m", Role::Row) else {
                return;
            };
            let author = self.rng.pick(NAMES);
            let day = self.rng.range(1, 28);
            let reply = self.rng.chance(30);
            let r = self.el(row);
            r.subrole = Some("message".into());
            r.title = Some(format!("Message from {author}").into());
            let attributes = &mut r.attributes;
            attributes.insert("author".into(), json!(author));
            attributes.insert("sent".into(), json!(format!("2026-11-{day:02}T09:30:00Z")));
            if let (true, Some(to)) = (reply, &previous) {
                attributes.insert(
                    "related".into(),
                    json!([{ "relation": "reply-to", "id": to }]),
                );
            }
            previous = Some(r.id.to_string());
            let Some(body) = self.add(row, "t", Role::Text) else {
                return;
            };
            let mut text = self.words(5, 60);
            if self.rng.chance(3) {
                text.push_str(" my key is ");
                text.push_str(&api_token(&mut self.rng));
            }
            if self.rng.chance(2) {
                text.push_str(" — card ");
                text.push_str(&card_number(&mut self.rng));
            }
            self.text_content(body, text);
            if self.rng.chance(10) {
                self.image(row);
            }
        }
    }

    /// A list of links (bookmarks, search results).
    fn links(&mut self, pane: usize) {
        let Some(list) = self.add(pane, "ls", Role::List) else {
            return;
        };
        self.el(list).subrole = Some(self.rng.pick(&["bookmarks", "results"]).into());
        for _ in 0..self.rng.range(4, 25) {
            let Some(row) = self.add(list, "li", Role::Row) else {
                return;
            };
            self.link(row);
        }
    }

    /// A sign-in form: labels, fields, and a secure text field with a value.
    fn form(&mut self, pane: usize) {
        let Some(form) = self.add(pane, "form", Role::Group) else {
            return;
        };
        let f = self.el(form);
        f.subrole = Some("form".into());
        f.title = Some("Sign in".into());
        let name = self.rng.pick(NAMES);
        let user = name.split(' ').next().unwrap_or("user").to_lowercase();
        let secret: String = (0..self.rng.range(8, 16))
            .map(|_| ALNUM[self.rng.below(ALNUM.len())] as char)
            .collect();
        let secure = self.rng.pick(&["secure", "AXSecureTextField"]);
        let fields = [
            ("label", "Email".to_string()),
            ("field", format!("{user}@example.com")),
            ("label", "Password".to_string()),
            (secure, secret),
        ];
        for (subrole, value) in fields {
            let Some(t) = self.add(form, "f", Role::Text) else {
                return;
            };
            self.el(t).subrole = Some(subrole.into());
            self.text_content(t, value);
        }
        if self.rng.chance(30) {
            let Some(t) = self.add(form, "f", Role::Text) else {
                return;
            };
            let token = api_token(&mut self.rng);
            let e = self.el(t);
            e.subrole = Some("field".into());
            e.title = Some("API token".into());
            e.content.push(Content::text(token));
        }
    }

    /// A gallery of images.
    fn gallery(&mut self, pane: usize) {
        let Some(list) = self.add(pane, "gal", Role::List) else {
            return;
        };
        self.el(list).subrole = Some("gallery".into());
        for _ in 0..self.rng.range(2, 10) {
            self.image(list);
        }
    }

    /// `lo..=hi` words, joined by spaces.
    fn words(&mut self, lo: usize, hi: usize) -> String {
        let count = self.rng.range(lo, hi);
        let mut out = String::with_capacity(count * 7);
        for i in 0..count {
            if i > 0 {
                out.push(if self.rng.chance(8) { ',' } else { ' ' });
                if out.ends_with(',') {
                    out.push(' ');
                }
            }
            out.push_str(self.rng.pick(WORDS));
        }
        out
    }

    /// The tree, from the flat list: each element, last first, moves into
    /// its parent, so every element's children are complete before it moves.
    fn assemble(self) -> Element<'static> {
        let Builder {
            mut nodes, parents, ..
        } = self;
        for at in (1..nodes.len()).rev() {
            let mut element = std::mem::take(&mut nodes[at]);
            element.children.0.reverse();
            nodes[parents[at]].children.0.push(element);
        }
        let mut root = std::mem::take(&mut nodes[0]);
        root.children.0.reverse();
        root
    }
}

/// A 16-digit card number that passes the Luhn check (4111 1111 1111 1111
/// and its kin), written with spaces, dashes or nothing between groups.
fn card_number(rng: &mut Rng) -> String {
    let mut digits = [4u8, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0];
    for d in digits.iter_mut().take(15).skip(12) {
        *d = rng.below(10) as u8;
    }
    // The check digit: the one of ten that passes redaction's own check.
    digits[15] = (0..10)
        .find(|&c| {
            digits[15] = c;
            crate::redact::luhn(&digits)
        })
        .unwrap_or(0);
    let separator = rng.pick(&[" ", "-", ""]);
    let mut out = String::with_capacity(19);
    for (i, d) in digits.iter().enumerate() {
        if i > 0 && i % 4 == 0 {
            out.push_str(separator);
        }
        out.push(char::from(b'0' + d));
    }
    out
}

/// A GitHub (`ghp_` + 36) or AWS (`AKIA` + 16) token.
fn api_token(rng: &mut Rng) -> String {
    let (prefix, alphabet, len) = if rng.chance(50) {
        ("ghp_", ALNUM, 36)
    } else {
        ("AKIA", UPPER_DIGITS, 16)
    };
    let mut out = String::with_capacity(prefix.len() + len);
    out.push_str(prefix);
    for _ in 0..len {
        out.push(alphabet[rng.below(alphabet.len())] as char);
    }
    out
}

fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Keeps the characters a URL path can hold unescaped; others become `_`.
fn url_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn card_numbers_pass_luhn() {
        let mut rng = Rng(3);
        for _ in 0..200 {
            let card = card_number(&mut rng);
            let digits = card.chars().filter(char::is_ascii_digit).count();
            assert_eq!(digits, 16, "{card}");
            assert!(crate::redact::luhn_valid(&card), "{card}");
        }
        assert!(card_number(&mut Rng(0)).starts_with("4111"));
    }
}
