//! Limits on what ctxgate reads. The RFC leaves them open (section 9); these
//! defaults are set well above what real providers send and well below what
//! would let one answer exhaust a host. Each can be raised.

/// Limits applied while reading an answer. Exceeding one is an error that
/// names the limit; nothing is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Total input size in bytes. Default 256 MiB (a 1,000,000-element tree
    /// of realistic shape is about 143 MB).
    pub max_input_bytes: usize,
    /// Elements in one tree. Default 2,000,000.
    pub max_elements: usize,
    /// Depth of the tree in elements, the root being depth 1. Default 1,024.
    pub max_depth: usize,
    /// Bytes of title, url and content (text and base64 data) of one element.
    /// Default 16 MiB.
    pub max_content_bytes: usize,
    /// Distinct element projections the policy is asked about in one
    /// request. Real trees have tens to a few thousand; a provider that
    /// makes every element look different (a new subrole on each) would
    /// otherwise buy seconds of policy work per request. Default 20,000.
    pub max_projections: usize,
}

impl Limits {
    /// The documented defaults.
    pub const DEFAULT: Limits = Limits {
        max_input_bytes: 256 * 1024 * 1024,
        max_elements: 2_000_000,
        max_depth: 1024,
        max_content_bytes: 16 * 1024 * 1024,
        max_projections: 20_000,
    };

    /// The JSON nesting the reader accepts: two levels per element (the
    /// element's object and its `children` array), the answer's object, and
    /// room for nesting inside attribute values and content blocks.
    pub fn max_json_nesting(&self) -> usize {
        self.max_depth.saturating_mul(2).saturating_add(65)
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}
