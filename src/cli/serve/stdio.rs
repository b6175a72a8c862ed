//! The stdio transport: one JSON-RPC request per line on stdin, one reply
//! per line on stdout (replies may come out of order when requests run at
//! once; match them by `id`), logs on stderr only. One reader thread frames
//! lines (a line past `--max-request-bytes` is skipped to its end and
//! answered with `over_limit`) and hands each to the pool; workers write
//! whole reply lines under one lock. End of input or SIGTERM/SIGINT: no new
//! request starts, those admitted finish and are answered, exit 0.

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::methods::Server;
use crate::Error;

/// What the reader found.
enum Line {
    /// A line (without its newline).
    Whole(Vec<u8>),
    /// A line longer than the limit, skipped; its length.
    TooLong(usize),
    /// End of input.
    End,
}

/// Serves stdin until it ends or a signal comes.
pub fn run(server: Arc<Server>) -> Result<(), Error> {
    let runtime = super::runtime()?;
    let mut signals = {
        let _inside = runtime.enter();
        super::Signals::new()?
    };
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let stopping = Arc::new(AtomicBool::new(false));
    let (ended, end) = tokio::sync::oneshot::channel::<()>();
    {
        let (server, out, stopping) = (server.clone(), out.clone(), stopping.clone());
        std::thread::Builder::new()
            .name("ctxgate-stdin".into())
            .spawn(move || {
                read_loop(&server, &out, &stopping);
                let _ = ended.send(());
            })
            .map_err(|e| Error::Io {
                path: "(stdin thread)".into(),
                source: e,
            })?;
    }
    let why = runtime.block_on(async {
        tokio::select! {
            _ = end => "end of input",
            why = signals.recv() => why,
        }
    });
    stopping.store(true, Ordering::Release);
    tracing::info!(
        in_flight = server.pool.in_flight(),
        "{why}: finishing the requests admitted"
    );
    server.pool.close();
    let _ = out.lock().unwrap_or_else(|e| e.into_inner()).flush();
    tracing::info!("stopped");
    Ok(())
}

fn read_loop(server: &Arc<Server>, out: &Arc<Mutex<std::io::Stdout>>, stopping: &AtomicBool) {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    loop {
        let line = match read_line(&mut input, server.max_request_bytes) {
            Ok(line) => line,
            Err(err) => {
                tracing::warn!("cannot read standard input: {err}");
                return;
            }
        };
        let received = Instant::now();
        match line {
            Line::End => return,
            Line::TooLong(size) => {
                tracing::warn!(size, "request line over the limit, skipped");
                let reply = server.rpc_refusal(None, &server.too_large(Some(size)), received);
                write_line(out, &reply);
            }
            Line::Whole(bytes) => {
                if bytes.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                if stopping.load(Ordering::Acquire) {
                    let failure = crate::wire::Failure::new(
                        crate::wire::Kind::ShuttingDown,
                        "the server is shutting down and takes no new requests",
                    );
                    write_line(out, &server.rpc_refusal(Some(&bytes), &failure, received));
                    continue;
                }
                let shared = Arc::new(bytes);
                let job = {
                    let (server, out, line) = (server.clone(), out.clone(), shared.clone());
                    move |permit: super::pool::Permit| {
                        let reply = server.rpc_line(&line, received);
                        drop(permit);
                        if let Some(reply) = reply {
                            write_line(&out, &reply);
                        }
                    }
                };
                if let Err(failure) = server.submit(job) {
                    write_line(out, &server.rpc_refusal(Some(&shared), &failure, received));
                }
            }
        }
    }
}

/// One reply line, written whole.
fn write_line(out: &Mutex<std::io::Stdout>, reply: &str) {
    let mut line = String::with_capacity(reply.len() + 1);
    line.push_str(reply);
    line.push('\n');
    let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
    if let Err(err) = out.write_all(line.as_bytes()).and_then(|()| out.flush()) {
        tracing::warn!("cannot write standard output: {err}");
    }
}

/// Reads up to the next newline, keeping at most `max` bytes. A last line
/// without a newline is a line (a client that stops mid-line gets an
/// answer to what it sent, most likely a parse error).
fn read_line(input: &mut impl BufRead, max: usize) -> std::io::Result<Line> {
    let mut line = Vec::new();
    let mut size = 0usize;
    loop {
        let buffer = match input.fill_buf() {
            Ok(buffer) => buffer,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        if buffer.is_empty() {
            return Ok(match size {
                0 => Line::End,
                _ if size > max => Line::TooLong(size),
                _ => Line::Whole(line),
            });
        }
        let (take, done) = match memchr::memchr(b'\n', buffer) {
            Some(at) => (at, true),
            None => (buffer.len(), false),
        };
        size += take;
        if size <= max {
            line.extend_from_slice(&buffer[..take]);
        } else {
            line = Vec::new();
        }
        input.consume(take + usize::from(done));
        if done {
            return Ok(if size > max {
                Line::TooLong(size)
            } else {
                Line::Whole(line)
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max: usize) -> Vec<String> {
        let mut reader = std::io::BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        loop {
            match read_line(&mut reader, max).unwrap() {
                Line::End => return out,
                Line::TooLong(n) => out.push(format!("too long: {n}")),
                Line::Whole(l) => out.push(String::from_utf8(l).unwrap()),
            }
        }
    }

    #[test]
    fn lines_are_framed_and_long_ones_skipped_to_their_end() {
        assert_eq!(
            lines(b"ab\n0123456789\ncd\nlast", 5),
            ["ab", "too long: 10", "cd", "last"]
        );
        assert_eq!(lines(b"", 5), Vec::<String>::new());
        assert_eq!(lines(b"\n\n", 5), ["", ""]);
    }
}
