//! The server's workers: `--max-concurrency` threads run requests, at most
//! `--max-queue` more wait, and a request beyond that is refused at once
//! (`overloaded`) rather than queued without bound. Both transports submit
//! here, so the limits hold across stdio and HTTP alike. Closing the pool
//! lets the workers finish what was admitted, then they end.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

type Job = Box<dyn FnOnce() + Send>;

/// Why a job was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Every worker is busy and the queue is full.
    Overloaded,
    /// The pool was closed.
    Closed,
}

/// An admitted job's slot; dropping it frees the slot.
pub struct Permit(Arc<AtomicUsize>);

impl Drop for Permit {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A fixed set of worker threads and a bounded queue.
pub struct Pool {
    sender: Mutex<Option<mpsc::Sender<Job>>>,
    /// Jobs admitted and not yet finished (running or waiting).
    admitted: Arc<AtomicUsize>,
    capacity: usize,
    workers: Mutex<Vec<JoinHandle<()>>>,
    /// The number of workers.
    pub concurrency: usize,
    /// How many may wait.
    pub queue: usize,
}

impl Pool {
    /// `concurrency` workers (at least 1) and room for `queue` waiting jobs.
    pub fn new(concurrency: usize, queue: usize) -> Pool {
        let concurrency = concurrency.max(1);
        let (sender, receiver) = mpsc::channel::<Job>();
        let receiver = Arc::new(Mutex::new(receiver));
        let workers = (0..concurrency)
            .map(|n| {
                let receiver = receiver.clone();
                std::thread::Builder::new()
                    .name(format!("ctxgate-worker-{n}"))
                    .spawn(move || loop {
                        // The lock is held only while waiting for the next job.
                        let job = match receiver.lock() {
                            Ok(receiver) => receiver.recv(),
                            Err(_) => return,
                        };
                        match job {
                            Ok(job) => job(),
                            Err(_) => return,
                        }
                    })
                    .expect("a worker thread starts")
            })
            .collect();
        Pool {
            sender: Mutex::new(Some(sender)),
            admitted: Arc::new(AtomicUsize::new(0)),
            capacity: concurrency + queue,
            workers: Mutex::new(workers),
            concurrency,
            queue,
        }
    }

    /// Runs `job` on a worker, or says why not (then `job` is dropped
    /// without running). The job's slot is free once it drops its
    /// [`Permit`] (at the latest when it returns): drop it before replying,
    /// so that a client that has its reply can count on the slot.
    pub fn submit(&self, job: impl FnOnce(Permit) + Send + 'static) -> Result<(), Refused> {
        let sender = self.sender.lock().unwrap_or_else(|e| e.into_inner());
        let Some(sender) = sender.as_ref() else {
            return Err(Refused::Closed);
        };
        if self.admitted.fetch_add(1, Ordering::AcqRel) >= self.capacity {
            self.admitted.fetch_sub(1, Ordering::AcqRel);
            return Err(Refused::Overloaded);
        }
        // Counted out when dropped, even if the job panics or never runs.
        let permit = Permit(self.admitted.clone());
        let job: Job = Box::new(move || job(permit));
        sender.send(job).map_err(|_| Refused::Closed)
    }

    /// Jobs running or waiting.
    pub fn in_flight(&self) -> usize {
        self.admitted.load(Ordering::Acquire)
    }

    /// Admits nothing more; returns once every admitted job has run.
    pub fn close(&self) {
        drop(self.sender.lock().unwrap_or_else(|e| e.into_inner()).take());
        let workers = std::mem::take(&mut *self.workers.lock().unwrap_or_else(|e| e.into_inner()));
        for worker in workers {
            let _ = worker.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    #[test]
    fn a_full_pool_refuses_and_a_closed_one_finishes_what_it_admitted() {
        let pool = Pool::new(1, 1);
        let release = Arc::new(AtomicBool::new(false));
        let ran = Arc::new(AtomicUsize::new(0));
        for _ in 0..2 {
            let (release, ran) = (release.clone(), ran.clone());
            pool.submit(move |_| {
                while !release.load(Ordering::Acquire) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                ran.fetch_add(1, Ordering::AcqRel);
            })
            .expect("admitted");
        }
        assert_eq!(pool.submit(|_| {}), Err(Refused::Overloaded));
        release.store(true, Ordering::Release);
        pool.close();
        assert_eq!(ran.load(Ordering::Acquire), 2);
        assert_eq!(pool.in_flight(), 0);
        assert_eq!(pool.submit(|_| {}), Err(Refused::Closed));
    }
}
