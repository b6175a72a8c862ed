//! Counters for `GET /metrics`, in Prometheus's text format: requests by
//! method and outcome, a latency histogram, reloads, policy evaluations and
//! requests decided wholly from the decision cache. Counts only.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 14] = [
    0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
];

/// The server's counters.
#[derive(Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(&'static str, &'static str), u64>>,
    buckets: [AtomicU64; BUCKETS.len()],
    latency_count: AtomicU64,
    latency_micros: AtomicU64,
    reloads_ok: AtomicU64,
    reloads_failed: AtomicU64,
    evaluations: AtomicU64,
    elements: AtomicU64,
    cached: AtomicU64,
}

impl Metrics {
    /// One request of `method` ended with `outcome` (`ok` or an error kind).
    pub fn request(&self, method: &'static str, outcome: &'static str, took: Duration) {
        *self
            .requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry((method, outcome))
            .or_default() += 1;
        let seconds = took.as_secs_f64();
        for (bound, bucket) in BUCKETS.iter().zip(&self.buckets) {
            if seconds <= *bound {
                bucket.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.latency_count.fetch_add(1, Ordering::Relaxed);
        self.latency_micros
            .fetch_add(took.as_micros() as u64, Ordering::Relaxed);
    }

    /// A trim's evaluations and elements.
    pub fn trimmed(&self, evaluations: usize, elements: usize) {
        self.evaluations
            .fetch_add(evaluations as u64, Ordering::Relaxed);
        self.elements.fetch_add(elements as u64, Ordering::Relaxed);
        if evaluations == 0 {
            self.cached.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A reload that worked or failed.
    pub fn reload(&self, ok: bool) {
        let counter = if ok {
            &self.reloads_ok
        } else {
            &self.reloads_failed
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// The text for `/metrics`.
    pub fn render(&self, policy_hash: &str, in_flight: usize) -> String {
        let mut out = String::new();
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        out.push_str("# HELP ctxgate_requests_total Requests by method and outcome (ok, or the error kind).\n# TYPE ctxgate_requests_total counter\n");
        for ((method, outcome), n) in self
            .requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            let _ = writeln!(
                out,
                "ctxgate_requests_total{{method=\"{method}\",outcome=\"{outcome}\"}} {n}"
            );
        }
        out.push_str("# HELP ctxgate_request_duration_seconds Time from receipt to reply, queueing included.\n# TYPE ctxgate_request_duration_seconds histogram\n");
        for (bound, bucket) in BUCKETS.iter().zip(&self.buckets) {
            let _ = writeln!(
                out,
                "ctxgate_request_duration_seconds_bucket{{le=\"{bound}\"}} {}",
                get(bucket)
            );
        }
        let count = get(&self.latency_count);
        let _ = writeln!(
            out,
            "ctxgate_request_duration_seconds_bucket{{le=\"+Inf\"}} {count}\nctxgate_request_duration_seconds_sum {}\nctxgate_request_duration_seconds_count {count}",
            get(&self.latency_micros) as f64 / 1e6
        );
        let _ = writeln!(
            out,
            "# HELP ctxgate_reloads_total Policy reloads by result (a failed one keeps the last good policy).\n# TYPE ctxgate_reloads_total counter\nctxgate_reloads_total{{result=\"ok\"}} {}\nctxgate_reloads_total{{result=\"failed\"}} {}",
            get(&self.reloads_ok),
            get(&self.reloads_failed)
        );
        let _ = writeln!(
            out,
            "# HELP ctxgate_policy_evaluations_total Regorus evaluations run by trims.\n# TYPE ctxgate_policy_evaluations_total counter\nctxgate_policy_evaluations_total {}",
            get(&self.evaluations)
        );
        let _ = writeln!(
            out,
            "# HELP ctxgate_elements_total Elements decided by trims.\n# TYPE ctxgate_elements_total counter\nctxgate_elements_total {}",
            get(&self.elements)
        );
        let _ = writeln!(
            out,
            "# HELP ctxgate_cache_hit_requests_total Trims whose every decision came from the decision cache (no evaluation).\n# TYPE ctxgate_cache_hit_requests_total counter\nctxgate_cache_hit_requests_total {}",
            get(&self.cached)
        );
        let _ = writeln!(
            out,
            "# HELP ctxgate_in_flight Requests running or queued.\n# TYPE ctxgate_in_flight gauge\nctxgate_in_flight {in_flight}"
        );
        let _ = writeln!(
            out,
            "# HELP ctxgate_policy_info The served policy.\n# TYPE ctxgate_policy_info gauge\nctxgate_policy_info{{hash=\"{policy_hash}\"}} 1"
        );
        out
    }
}
