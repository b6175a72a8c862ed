//! Conventions of the command line a user expects of any Unix tool.

use std::process::{Command, Stdio};

/// A reader that closes the pipe early (`ctxgate … | head -c 1`) ends the
/// command quietly with 0, as ripgrep does: no `Broken pipe` error.
#[test]
fn a_closed_pipe_ends_the_command_quietly() {
    let big = Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .args(["synth", "--elements", "20000"])
        .output()
        .unwrap();
    assert!(big.status.success());
    let path =
        std::env::temp_dir().join(format!("ctxgate-closed-pipe-{}.json", std::process::id()));
    std::fs::write(&path, &big.stdout).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .args(["trim", "--action", "app", "--max-bytes", "100000000"])
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read one byte, then close the pipe while ctxgate is still writing.
    {
        use std::io::Read;
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 1];
        stdout.read_exact(&mut first).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// Piped, stdout is exactly what the budget measured: no newline is added
/// after JSON, which ends with `}`.
#[test]
fn piped_output_is_exactly_what_was_measured() {
    let out = Command::new(env!("CARGO_BIN_EXE_ctxgate"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["trim", "--max-bytes", "600", "examples/notes.json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        out.stdout.ends_with(b"}"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(out.stdout.len() <= 600);
}
