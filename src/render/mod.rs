//! The writers of what the agent receives: compact JSON and the outline
//! format. The only code that turns a (trimmed) answer into bytes.
//!
//! Both writers are iterative, deterministic (same answer → same bytes),
//! and keep app text from forging structure: in JSON by construction; in
//! the outline by its grammar (`src/render/outline.rs`): every provider string is a
//! plain ASCII word or JSON, content lines start with `| ` and ctxgate's
//! own lines with `[ctxgate]`. Both write every provider string through one
//! escaper (`escape`), which never lets a line terminator, another control
//! char, or a bidi or invisible format char out raw.

pub(crate) use crate::escape;
#[cfg(feature = "cli")]
mod aria;
#[cfg(feature = "cli")]
pub use crate::escape::visible;
#[cfg(feature = "cli")]
pub(crate) use aria::aria;
mod json;
mod outline;

pub use json::json;
#[cfg(any(test, feature = "internals"))]
pub use json::json_element_fragment;
pub(crate) use json::json_fragment;
pub(crate) use json::{
    json_head, json_start, json_tail, JSON_END, JSON_FIRST_CHILD, JSON_LAST_CHILD, JSON_NEXT_CHILD,
};
pub use outline::outline;
#[cfg(any(test, feature = "internals"))]
pub use outline::outline_element_fragment;
pub(crate) use outline::outline_fragment;
pub(crate) use outline::outline_lines;

use crate::model::Answer;

/// ctxgate's notices (`ctxgate:` attributes): one type writes and reads
/// every shape, and one function says what is in the namespace. An input's
/// attributes in it are dropped before trimming, so a notice in the output
/// is always ctxgate's own count.
pub mod notice;

/// The output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Format {
    /// Compact JSON, a conforming 0.2.0 answer.
    #[default]
    Json,
    /// One line per element, indented.
    Outline,
}

impl Format {
    /// Renders an answer in this format.
    pub fn render(self, answer: &Answer) -> String {
        match self {
            Format::Json => json(answer),
            Format::Outline => outline(answer),
        }
    }

    /// The format's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Outline => "outline",
        }
    }
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Format, String> {
        match s {
            "json" => Ok(Format::Json),
            "outline" => Ok(Format::Outline),
            other => Err(format!("unknown format `{other}`; use `json` or `outline`")),
        }
    }
}
