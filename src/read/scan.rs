//! The byte scan that runs before any parser: JSON nesting bounded by the
//! limits (strings skipped with their escapes), and positions as line and
//! column for errors found on bytes.

use crate::error::{DepthPlace, Error, Result};
use crate::limits::Limits;

/// Rejects JSON nested deeper than the limits allow, before any recursive
/// parser sees it. Strings are skipped with their escapes.
pub(super) fn scan_nesting(bytes: &[u8], limits: &Limits) -> Result<()> {
    let max = limits.max_json_nesting();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                // Skip the string's body: find its closing quote, stepping
                // over escapes.
                i += 1;
                loop {
                    match memchr::memchr2(b'"', b'\\', &bytes[i.min(bytes.len())..]) {
                        Some(at) if bytes[i + at] == b'\\' => i += at + 2,
                        Some(at) => {
                            i += at;
                            break;
                        }
                        None => {
                            i = bytes.len();
                            break;
                        }
                    }
                }
            }
            b'{' | b'[' => {
                depth += 1;
                if depth > max {
                    let (line, column) = line_column(bytes, i);
                    return Err(Error::TooDeep {
                        limit: limits.max_depth,
                        place: DepthPlace::Nesting {
                            nesting: max,
                            line,
                            column,
                        },
                    });
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

pub(super) fn line_column(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    (line, offset - start + 1)
}
