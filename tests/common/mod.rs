//! Helpers shared by the integration tests: running the binary and
//! comparing against expectation files (`UPDATE_EXPECT=1` rewrites them).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// What every importer writes in place of a secure field's value (never
/// the value): part of the output a host sees, so the tests name it.
pub const SECURE_MARKER: &str = "[secure value not imported]";

/// The crate's root folder.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `ctxgate` with `args`, feeding `stdin`.
pub fn ctxgate(args: &[&str], stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ctxgate runs");
    let mut input = child.stdin.take().expect("stdin");
    let stdin = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let output = child.wait_with_output().expect("ctxgate ends");
    writer.join().expect("stdin written");
    output
}

/// `exit: N`, then stdout, then `--- stderr`, then stderr: what a user sees.
pub fn transcript(output: &Output) -> String {
    format!(
        "exit: {}\n{}--- stderr\n{}",
        output
            .status
            .code()
            .map_or("signal".to_string(), |c| c.to_string()),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Compares `actual` with the file at `path`, or rewrites it under
/// `UPDATE_EXPECT=1`. Returns a description of the mismatch.
pub fn expect_file(path: &Path, actual: &str) -> Result<(), String> {
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(path, actual).expect("expectation written");
        return Ok(());
    }
    let expected = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "{}: {e} (run with UPDATE_EXPECT=1 to create it)",
            path.display()
        )
    })?;
    if expected == actual {
        Ok(())
    } else {
        Err(format!(
            "{} differs\n--- expected\n{expected}\n--- actual\n{actual}",
            path.display()
        ))
    }
}

/// Every file in `dir` with extension `ext`, sorted.
pub fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    files
}

/// Runs `f` with every log event and span of the library captured, at
/// every level (TRACE, span open and close); returns its result and the log.
///
/// One global subscriber, installed once, writes to the calling thread's
/// capture while one is open and enables nothing otherwise. A scoped
/// subscriber per call (`with_default`) raced with other tests' threads over
/// tracing's cached callsite interest and lost events now and then.
pub fn with_logs<T>(f: impl FnOnce() -> T) -> (T, String) {
    use std::cell::{Cell, RefCell};
    use std::sync::Once;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::Layer;

    thread_local! {
        static CAPTURING: Cell<bool> = const { Cell::new(false) };
        static CAPTURED: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }

    struct ThreadCapture;

    impl std::io::Write for ThreadCapture {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            CAPTURED.with(|c| c.borrow_mut().extend_from_slice(buf));
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let layer = tracing_subscriber::fmt::layer()
            .with_writer(|| ThreadCapture)
            .with_span_events(tracing_subscriber::fmt::format::FmtSpan::FULL)
            // Dynamic: asked at every event (a `filter_fn` caches its first
            // answer per callsite, which another thread may have given).
            .with_filter(tracing_subscriber::filter::dynamic_filter_fn(|_, _| {
                CAPTURING.with(Cell::get)
            }));
        tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))
            .expect("no other global subscriber in the tests");
    });
    CAPTURED.with(|c| c.borrow_mut().clear());
    CAPTURING.with(|c| c.set(true));
    let result = f();
    CAPTURING.with(|c| c.set(false));
    let logged =
        CAPTURED.with(|c| String::from_utf8(std::mem::take(&mut *c.borrow_mut())).unwrap());
    (result, logged)
}
