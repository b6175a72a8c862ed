//! Throughput of one shared `Gate` on 1 and 2 threads:
//!
//! ```sh
//! cargo run --release --example concurrency                 # the real 463-element tree, focus
//! ACTION=app cargo run --release --example concurrency
//! TREE=/tmp/s10000.json REQUESTS=200 cargo run --release --example concurrency
//! ```
//!
//! Each thread sends `REQUESTS` requests (default 2,000) through the same
//! warm gate (`Gate::trim_bytes`, public API only); a round runs 1 thread,
//! then 2, `ROUNDS` times (default 7), and the best round of each is
//! kept. Beside wall-clock throughput it prints each thread's own CPU time
//! per request and its voluntary context switches (Linux
//! `/proc/thread-self`): a lock that makes threads wait shows as switches
//! and as wall time the threads' CPU time does not account for, while a
//! machine busy with other work shows as CPU time that does not grow and
//! wall time that does. On a shared machine the second figure is the one
//! that says whether the gate itself scales. Beside it, the same rounds
//! of work that shares nothing (SHA-256 over each thread's own 4 KB)
//! give the machine's own 2 ÷ 1: what two threads can reach here at all.

use std::time::Instant;

use ctxgate::{Budget, Gate, Request};

/// One thread's own counters: CPU seconds and voluntary context switches.
fn thread_counters() -> (f64, u64) {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    // Fields after the command's closing parenthesis; utime and stime are
    // the 14th and 15th fields of the line, in clock ticks (100 per second).
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let cpu = (ticks(11) + ticks(12)) as f64 / 100.0;
    let status = std::fs::read_to_string("/proc/thread-self/status").unwrap_or_default();
    let switches = status
        .lines()
        .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    (cpu, switches)
}

/// The control's SHA-256 blocks a request: about a request's CPU.
const CONTROL_HASHES: usize = 48;

struct Round {
    wall: f64,
    cpu_per_request: f64,
    switches: u64,
}

/// One request's work.
type Work<'a> = dyn Fn() + Sync + 'a;

fn round(threads: usize, requests: usize, one: &Work<'_>) -> Round {
    let start = Instant::now();
    let per_thread: Vec<(f64, u64)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let (cpu0, sw0) = thread_counters();
                    for _ in 0..requests {
                        one();
                    }
                    let (cpu1, sw1) = thread_counters();
                    (cpu1 - cpu0, sw1 - sw0)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let wall = start.elapsed().as_secs_f64();
    let cpu: f64 = per_thread.iter().map(|t| t.0).sum();
    Round {
        wall,
        cpu_per_request: cpu / (threads * requests) as f64,
        switches: per_thread.iter().map(|t| t.1).sum(),
    }
}

fn main() {
    let tree = std::env::var("TREE").unwrap_or_else(|_| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/answers/mac-apg-data-grids.json"
        )
        .to_string()
    });
    let action = std::env::var("ACTION").unwrap_or_else(|_| "focus".to_string());
    let requests: usize = std::env::var("REQUESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7);
    let bytes = std::fs::read(&tree).expect("TREE is readable");
    let gate = Gate::embedded_default().expect("the default policy compiles");
    gate.warm_up();
    let request = Request::new(action.as_str()).budget(Budget::Tokens(8000));
    let trim = || {
        let out = gate
            .trim_bytes(&bytes, &request)
            .expect("the request succeeds");
        std::hint::black_box(&out);
    };
    // The control: about a request's CPU, on nothing another thread
    // touches.
    let control = || {
        use sha2::{Digest, Sha256};
        let mut block = [7u8; 4096];
        for _ in 0..CONTROL_HASHES {
            let digest = Sha256::digest(block);
            block[..32].copy_from_slice(&digest);
        }
        std::hint::black_box(&block);
    };
    // Warm: the plan, the decision cache, the allocator's arenas.
    round(2, requests / 10 + 1, &trim);

    let mut best: [Option<Round>; 2] = [None, None];
    let mut machine: [Option<Round>; 2] = [None, None];
    for _ in 0..rounds {
        for threads in [1, 2] {
            for (slots, one) in [(&mut best, &trim as &Work<'_>), (&mut machine, &control)] {
                let r = round(threads, requests, one);
                let slot = &mut slots[threads - 1];
                if slot.as_ref().is_none_or(|b| r.wall < b.wall) {
                    *slot = Some(r);
                }
            }
        }
    }
    println!("tree: {tree} ({} bytes), action {action}, {requests} requests per thread, best of {rounds} rounds", bytes.len());
    println!("| threads | wall s | requests/s | CPU µs per request | voluntary switches |");
    println!("|---|---|---|---|---|");
    let mut rates = [0.0; 2];
    for (i, r) in best.iter().flatten().enumerate() {
        let threads = i + 1;
        rates[i] = (threads * requests) as f64 / r.wall;
        println!(
            "| {threads} | {:.3} | {:.0} | {:.1} | {} |",
            r.wall,
            rates[i],
            r.cpu_per_request * 1e6,
            r.switches
        );
    }
    let [one, two] = [best[0].as_ref().unwrap(), best[1].as_ref().unwrap()];
    let [alone, both] = [machine[0].as_ref().unwrap(), machine[1].as_ref().unwrap()];
    let ratio = |one: &Round, two: &Round| one.wall * 2.0 / two.wall;
    println!(
        "the machine, work sharing nothing ({CONTROL_HASHES} SHA-256 of 4 KB a request): 2 threads ÷ 1: throughput {:.2}×; CPU per request {:.2}×",
        ratio(alone, both),
        both.cpu_per_request / alone.cpu_per_request
    );
    println!(
        "2 threads ÷ 1: throughput {:.2}× ({:.2} of the machine's); CPU per request {:.2}× (1.00× = no work added by sharing)",
        rates[1] / rates[0],
        (rates[1] / rates[0]) / ratio(alone, both),
        two.cpu_per_request / one.cpu_per_request
    );
}
