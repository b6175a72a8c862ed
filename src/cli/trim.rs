//! `ctxgate trim`: the main job. Reads an answer, writes what may be sent
//! to stdout and, when asked, the report to a file. With `--json`, stdout
//! is `serve`'s `trim` result, `{"output", "report"}`, and an error is
//! `serve`'s error object on stderr, `{"error": {"code", "message",
//! "data": {"kind", …}}}`, with the usual exit code.

use std::path::PathBuf;

use clap::Args;

use super::{read_input, write_stdout, Failure, FormatArg, Outcome, RequestArgs};

#[derive(Args)]
pub struct TrimArgs {
    #[command(flatten)]
    request: RequestArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Json)]
    format: FormatArg,
    /// Write the report (JSON) to this file. Not `-`: stdout carries the
    /// output alone; `--json` gives both in one object.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Print `{"output", "report"}` on one line (what `ctxgate serve`'s
    /// `trim` returns); errors as its JSON error object on stderr.
    #[arg(long)]
    json: bool,
    /// Refuse an answer with fields outside the protocol or role words
    /// outside the language (by default they are read past, with a warning
    /// on stderr).
    #[arg(long)]
    strict: bool,
}

pub fn run(args: TrimArgs) -> Result<Outcome, Failure> {
    let json = args.json;
    run_inner(args).map_err(|failure| {
        if json {
            print_json_error(failure)
        } else {
            failure
        }
    })
}

/// Writes the failure as `serve`'s error object on stderr.
fn print_json_error(mut failure: Failure) -> Failure {
    use crate::wire;
    let object = match &failure.error {
        Some(err) => wire::Failure::from(err.as_ref()),
        None => wire::Failure::new(wire::Kind::Lib(failure.kind), failure.message.clone()),
    };
    eprintln!("{}", serde_json::json!({"error": object.to_json()}));
    failure.printed = true;
    failure
}

/// Why `action` is a guess, when it is neither built in nor named by the
/// policy's rules (`--action windw`): the policy scopes it as any action it
/// does not know.
fn unknown_action(gate: &crate::Gate, action: &str) -> Option<String> {
    let builtin = crate::policy::ACTIONS;
    if builtin.contains(&action) || crate::policy::action_words(gate.policy()).contains(action) {
        return None;
    }
    let near = crate::suggest::closest(action, builtin.iter().copied())
        .map(|w| format!(" (did you mean `{w}`?)"))
        .unwrap_or_default();
    Some(format!(
        "the action `{}` is neither built in ({}) nor named by the policy{near}; it is scoped as the policy scopes an action it does not know",
        crate::render::visible(action),
        builtin.map(|a| format!("`{a}`")).join(", ")
    ))
}

/// What a trim read past, in one line: counts and the first pointer.
fn ignored_text(ignored: &crate::Ignored) -> String {
    let plural = |n: usize, one: &str, many: &str| match n {
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    };
    let mut parts = Vec::new();
    if ignored.fields > 0 {
        parts.push(plural(
            ignored.fields,
            "field outside the protocol was ignored (never sent)",
            "fields outside the protocol were ignored (never sent)",
        ));
    }
    if ignored.roles > 0 {
        parts.push(plural(
            ignored.roles,
            "role word outside the language was read as `Group`",
            "role words outside the language were read as `Group`",
        ));
    }
    format!("{}; the first at {}", parts.join(" and "), ignored.first)
}

/// The stack the request's thread gets: what Linux gives a main thread.
const STACK: usize = 8 << 20;

/// Runs `work` on a thread of its own, named `main` (a panic reads as it
/// would on the main thread, and goes on unwinding there). The reader and
/// the renderer check their stack room (stacker), and glibc tells a
/// spawned thread's stack at once but the main thread's only by parsing
/// `/proc/self/maps`: ~0.2 M instructions, a tenth of a small request
/// (BENCHMARKS.md, "Start-up"). If no thread can be spawned, it runs here.
fn on_own_thread<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    let mut work = Some(work);
    let ran = std::thread::scope(|scope| {
        let thread = std::thread::Builder::new()
            .name("main".to_string())
            .stack_size(STACK)
            .spawn_scoped(scope, || work.take().map(|work| work()));
        thread.ok().map(|thread| thread.join())
    });
    match ran {
        Some(Ok(Some(value))) => value,
        Some(Err(panic)) => std::panic::resume_unwind(panic),
        // Not spawned, so not taken.
        _ => (work.take().expect("the work ran on no thread"))(),
    }
}

fn run_inner(args: TrimArgs) -> Result<Outcome, Failure> {
    if args.report.as_deref() == Some(std::path::Path::new("-")) {
        return Err(Failure::usage(
            "`--report -` would mix the report into standard output with what may be sent; name a file, or use `--json` for both in one object",
        ));
    }
    // The report's budgets are counted exactly only when it is shown; a
    // token budget the output cannot exceed is otherwise left uncounted.
    let reported = args.report.is_some() || args.json;
    // The token pre-tokenizer (o200k's DFA validated, ~5 M instructions) loads
    // while the policy compiles and the input is read when tokens will be
    // counted: a token budget in the request, or a report that counts the
    // policy's. Otherwise it loads on the first count, if any: a token
    // budget is counted only for an output with more bytes than its limit
    // (a token is at least a byte), so a small output, or one under a byte
    // budget, loads nothing.
    let warm = (args.request.max_tokens.is_some() || reported)
        .then(|| std::thread::spawn(crate::Gate::warm_up_tokens));
    let gate = args.request.gate()?;
    if let Some(unknown) = unknown_action(&gate, &args.request.action) {
        if args.strict {
            return Err(Failure::usage(format!("{unknown}; `--strict` refuses it")));
        }
        eprintln!("warning: {unknown}");
    }
    let bytes = read_input(args.request.file.as_deref())?;
    let request = args.request.request(args.format)?;
    if let Some(warm) = warm {
        let _ = warm.join();
    }
    let counts = match reported {
        true => crate::trim::Counts::Exact,
        false => crate::trim::Counts::Binding,
    };
    let trimmed = on_own_thread(|| gate.trim_bytes_once(&bytes, &request, counts))?;
    for warning in &trimmed.report.warnings {
        eprintln!("warning: {warning}");
    }
    if let Some(ignored) = &trimmed.report.ignored {
        let what = ignored_text(ignored);
        if args.strict {
            return Err(Failure::findings(format!(
                "{what}; `--strict` refuses them: `ctxgate check` lists each, docs/FORMAT.md has the format"
            )));
        }
        eprintln!("warning: {what} (`ctxgate check` lists each; `--strict` refuses them)");
    }
    if let Some(path) = &args.report {
        let mut json = serde_json::to_string_pretty(&trimmed.report).expect("a report serializes");
        json.push('\n');
        std::fs::write(path, json).map_err(|e| {
            Failure::io(format!(
                "cannot write the report to `{}`: {e}",
                path.display()
            ))
        })?;
    }
    if args.json {
        let mut line = serde_json::to_string(&crate::wire::TrimResult {
            output: &trimmed.rendered,
            report: &trimmed.report,
        })
        .expect("a report serializes");
        line.push('\n');
        write_stdout(line.as_bytes())?;
        return Ok(Outcome::Fine);
    }
    // Exactly the bytes the budget measured: no newline is added (the
    // outline's lines end with one already; JSON has none).
    write_stdout(trimmed.rendered.as_bytes())?;
    // The process exits next: the compiled policy and the output are not
    // freed piece by piece (~1 M instructions for the policy alone).
    std::mem::forget(trimmed);
    std::mem::forget(gate);
    Ok(Outcome::Fine)
}
