//! Just enough of the zip format to take one file out of an archive:
//! Axe.Windows `.a11ytest` files are zips holding `el.snapshot`. Stored and
//! deflated entries are read; zip64, encryption and spanning are not.

/// The largest entry inflated: as large as the reader accepts.
const MAX_ENTRY: usize = crate::Limits::DEFAULT.max_input_bytes;

/// The bytes of the entry named `name`, or why not.
pub(crate) fn extract(archive: &[u8], name: &str) -> Result<Vec<u8>, String> {
    let end = find_end(archive).ok_or("not a zip archive: no end-of-directory record")?;
    let entries = u16_at(archive, end + 10)? as usize;
    let mut at = u32_at(archive, end + 16)? as usize;
    for _ in 0..entries {
        if u32_at(archive, at)? != 0x0201_4b50 {
            return Err("the zip directory is damaged".into());
        }
        let method = u16_at(archive, at + 10)?;
        let compressed = u32_at(archive, at + 20)? as usize;
        let size = u32_at(archive, at + 24)? as usize;
        let name_len = u16_at(archive, at + 28)? as usize;
        let extra_len = u16_at(archive, at + 30)? as usize;
        let comment_len = u16_at(archive, at + 32)? as usize;
        let local = u32_at(archive, at + 42)? as usize;
        let entry_name = archive
            .get(at + 46..at + 46 + name_len)
            .ok_or("the zip directory is truncated")?;
        at += 46 + name_len + extra_len + comment_len;
        if entry_name != name.as_bytes() {
            continue;
        }
        if u32_at(archive, local)? != 0x0403_4b50 {
            return Err(format!("the zip entry `{name}` is damaged"));
        }
        let data_start = local
            + 30
            + u16_at(archive, local + 26)? as usize
            + u16_at(archive, local + 28)? as usize;
        let data = archive
            .get(data_start..data_start + compressed)
            .ok_or_else(|| format!("the zip entry `{name}` is truncated"))?;
        return match method {
            0 => Ok(data.to_vec()),
            8 => miniz_oxide::inflate::decompress_to_vec_with_limit(data, size.clamp(1, MAX_ENTRY))
                .map_err(|e| format!("cannot inflate `{name}`: {:?}", e.status)),
            other => Err(format!(
                "the zip entry `{name}` uses compression method {other}; only stored and deflated entries are read"
            )),
        };
    }
    Err(format!("the zip archive has no `{name}`"))
}

fn find_end(archive: &[u8]) -> Option<usize> {
    // The record is 22 bytes plus a comment of at most 65,535.
    let lowest = archive.len().saturating_sub(22 + 65_535);
    (lowest..=archive.len().checked_sub(22)?)
        .rev()
        .find(|&at| archive[at..at + 4] == [0x50, 0x4b, 0x05, 0x06])
}

fn u16_at(bytes: &[u8], at: usize) -> Result<u16, String> {
    bytes
        .get(at..at + 2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .ok_or_else(|| "the zip archive is truncated".to_string())
}

fn u32_at(bytes: &[u8], at: usize) -> Result<u32, String> {
    bytes
        .get(at..at + 4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| "the zip archive is truncated".to_string())
}
