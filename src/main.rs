//! The `ctxgate` command. Everything it does is in the library's `cli`
//! module (built with the default `cli` feature), which parses arguments,
//! calls the library, writes output and exits with the documented code.

fn main() -> std::process::ExitCode {
    ctxgate::cli::main()
}
