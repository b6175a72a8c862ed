//! The `ctxgate` command. Everything it does is in the library's `cli`
//! module (built with the default `cli` feature), which parses arguments,
//! calls the library, writes output and exits with the documented code.

fn main() -> std::process::ExitCode {
    // regorus's parser builds (and drops) an `anyhow` error wherever it
    // backtracks; with `RUST_BACKTRACE` set each one captures a backtrace
    // (~6 M instructions per load of the default policy, 3x the parse).
    // ctxgate shows error messages, never a library backtrace, so these are
    // off unless `RUST_LIB_BACKTRACE` asks for them; a panic still prints
    // its backtrace under `RUST_BACKTRACE`. No thread runs yet.
    if std::env::var_os("RUST_LIB_BACKTRACE").is_none() {
        std::env::set_var("RUST_LIB_BACKTRACE", "0");
    }
    ctxgate::cli::main()
}
