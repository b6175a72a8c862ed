// One log-capturing helper for the integration tests (`tests/common`) and
// the crate's unit tests (`src/tests`), included by both.

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
