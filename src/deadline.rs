//! A request's deadline: one clock started when a request arrives and
//! checked across reading, checking, deciding and fitting, so no input
//! within the limits can hold a request past its time. On expiry the stage
//! is named and nothing is sent.
//!
//! Checks are cheap (one `Instant::now`, ~25 ns) and placed where work is
//! done in steps: every [`Deadline::EVERY`] elements in the reader and the
//! decision loop, before every rendering the fitter measures, and between
//! stages. The policy's own per-evaluation timer is capped by what is left.

use std::time::{Duration, Instant};

pub use crate::error::Stage;
use crate::error::{Error, Result};

/// The deadline a request gets when it names none: a few seconds, far above
/// what a real tree takes (a 463-element tree trims in well under 1 ms, a
/// 100,000-element one in ~50 ms) and low enough that a hostile answer
/// cannot hold a host's request for long.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// When a request must be done by.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadline {
    start: Instant,
    limit: Duration,
}

impl Deadline {
    /// Elements between two checks in per-element loops.
    pub(crate) const EVERY: usize = 1024;

    /// A deadline `limit` from now.
    pub(crate) fn after(limit: Duration) -> Deadline {
        Deadline {
            start: Instant::now(),
            limit,
        }
    }

    /// `Err` naming `stage` if the deadline has passed.
    pub(crate) fn check(&self, stage: Stage) -> Result<()> {
        if self.start.elapsed() > self.limit {
            tracing::warn!(stage = %stage, limit_ms = self.limit.as_millis() as u64, "deadline passed");
            return Err(self.passed(stage));
        }
        Ok(())
    }

    /// The error of this deadline passed in `stage`.
    pub(crate) fn passed(&self, stage: Stage) -> Error {
        Error::Deadline {
            stage,
            limit: self.limit,
        }
    }

    /// [`Deadline::check`] every [`Deadline::EVERY`] calls, counted by `n`.
    pub(crate) fn every(&self, n: usize, stage: Stage) -> Result<()> {
        match n % Deadline::EVERY {
            0 => self.check(stage),
            _ => Ok(()),
        }
    }

    /// What is left (zero once passed).
    pub(crate) fn remaining(&self) -> Duration {
        self.limit.saturating_sub(self.start.elapsed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_passed_deadline_names_its_stage_and_the_limit() {
        let deadline = Deadline::after(Duration::ZERO);
        std::thread::sleep(Duration::from_millis(2));
        let err = deadline.check(Stage::Decide).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the request passed its deadline of 0 ms while deciding; nothing was sent \
             (raise the request's timeout, `--timeout`, or send a smaller tree)"
        );
        assert_eq!(deadline.remaining(), Duration::ZERO);
        assert!(Deadline::after(Duration::from_secs(60))
            .check(Stage::Read)
            .is_ok());
    }
}
