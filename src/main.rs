//! The `ctxgate` command: parses arguments, calls the library, writes
//! output, exits with the documented code. No logic of its own.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
