//! The decision log (`--decision-log FILE`): one JSON line per request, the
//! report's counts and never content — time, request id, method, policy
//! hash, action, target id, budgets, outcome counts, deciding rules,
//! redaction counts, the error kind. Each line is written whole with one
//! `write`. When the file would pass `--decision-log-max-bytes` it is
//! rotated: `FILE` becomes `FILE.1`, `FILE.1` becomes `FILE.2`, up to
//! [`KEEP`] old files.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use serde::Serialize;

/// Rotated files kept beside the live one.
pub const KEEP: usize = 3;

/// One request's line.
#[derive(Serialize)]
pub struct Entry<'a> {
    /// When the request was received (RFC 3339, UTC).
    pub time: String,
    /// The server's sequence number for the request.
    pub request_id: u64,
    /// `stdio` or `http`.
    pub transport: &'static str,
    /// `trim`, `check`, `policy`, or the method asked for.
    pub method: &'a str,
    /// The hash of the policy the request ran under.
    pub policy_hash: &'a str,
    /// The action, for `trim`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<&'a str>,
    /// The target element's id, for `trim`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<&'a str>,
    /// The rest of the report's data (budgets, counts), when a trim worked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trim: Option<TrimCounts<'a>>,
    /// For `check`: whether the answer conforms and how many findings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conforms: Option<bool>,
    /// For `check`: how many findings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub findings: Option<usize>,
    /// The error kind, when the request failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<&'static str>,
    /// From receipt to reply.
    pub duration_us: u64,
}

/// The counts of a trim's report.
#[derive(Serialize)]
pub struct TrimCounts<'a> {
    /// The scope the policy chose.
    pub scope: crate::Scope,
    /// `json` or `outline`.
    pub format: &'static str,
    /// Each budget applied.
    pub budgets: &'a [crate::BudgetReport],
    /// Elements in the input.
    pub elements: usize,
    /// Bytes of the output.
    pub output_bytes: usize,
    /// Elements per outcome.
    pub outcomes: &'a std::collections::BTreeMap<crate::Outcome, usize>,
    /// Elements per deciding rule.
    pub rules: &'a std::collections::BTreeMap<String, usize>,
    /// Replacements per redaction pattern id.
    pub redactions: &'a std::collections::BTreeMap<String, usize>,
    /// Policy evaluations (0: all decisions came from the cache).
    pub evaluations: usize,
}

/// The log file, rotated by size.
pub struct DecisionLog {
    path: PathBuf,
    max_bytes: u64,
    file: Mutex<(File, u64)>,
}

impl DecisionLog {
    /// Opens (appends to) `path`.
    pub fn open(path: &Path, max_bytes: u64) -> std::io::Result<DecisionLog> {
        let file = append(path)?;
        let size = file.metadata()?.len();
        Ok(DecisionLog {
            path: path.to_path_buf(),
            max_bytes: max_bytes.max(1),
            file: Mutex::new((file, size)),
        })
    }

    /// Writes one line (an [`Entry`], or another front end's counts); a
    /// failure is logged, never the request's.
    pub fn write(&self, entry: &impl Serialize) {
        let mut line = serde_json::to_vec(entry).expect("an entry serializes");
        line.push(b'\n');
        let mut guard = self.file.lock().unwrap_or_else(|e| e.into_inner());
        if guard.1 > 0 && guard.1 + line.len() as u64 > self.max_bytes {
            match self.rotate() {
                Ok(file) => *guard = (file, 0),
                Err(err) => tracing::warn!("cannot rotate the decision log: {err}"),
            }
        }
        match guard.0.write_all(&line) {
            Ok(()) => guard.1 += line.len() as u64,
            Err(err) => tracing::warn!("cannot write the decision log: {err}"),
        }
    }

    fn rotate(&self) -> std::io::Result<File> {
        let numbered = |n: usize| {
            let mut name = self.path.clone().into_os_string();
            name.push(format!(".{n}"));
            PathBuf::from(name)
        };
        for n in (1..KEEP).rev() {
            let from = numbered(n);
            if from.exists() {
                std::fs::rename(&from, numbered(n + 1))?;
            }
        }
        std::fs::rename(&self.path, numbered(1))?;
        append(&self.path)
    }
}

fn append(path: &Path) -> std::io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

/// `2026-12-01T12:42:23.123Z`.
pub fn rfc3339(time: SystemTime) -> String {
    let since = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = since.as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60,
        since.subsec_millis()
    )
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian
/// (Howard Hinnant's `civil_from_days`).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn times_are_rfc3339_utc() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_millis(1_796_128_943_123);
        assert_eq!(rfc3339(t), "2026-12-01T12:42:23.123Z");
        assert_eq!(rfc3339(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let leap = SystemTime::UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn the_log_rotates_by_size_and_keeps_three_old_files() {
        let dir = std::env::temp_dir().join(format!("ctxgate-log-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("decisions.jsonl");
        let log = DecisionLog::open(&path, 300).unwrap();
        for n in 0..40 {
            log.write(&Entry {
                time: rfc3339(SystemTime::now()),
                request_id: n,
                transport: "stdio",
                method: "policy",
                policy_hash: "abc",
                action: None,
                target: None,
                trim: None,
                conforms: None,
                findings: None,
                error_kind: None,
                duration_us: 1,
            });
        }
        for name in [
            "decisions.jsonl",
            "decisions.jsonl.1",
            "decisions.jsonl.2",
            "decisions.jsonl.3",
        ] {
            let text = std::fs::read_to_string(dir.join(name)).unwrap();
            assert!(text.len() <= 300, "{name}: {}", text.len());
            for line in text.lines() {
                serde_json::from_str::<serde_json::Value>(line).unwrap();
            }
        }
        assert!(!dir.join("decisions.jsonl.4").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
