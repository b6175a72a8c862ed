//! `ctxgate import --from FORMAT [FILE|-]`: an OS accessibility tree in,
//! a protocol 0.2.0 answer out, as pretty JSON on stdout.

use std::path::PathBuf;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Args;
use ctxgate::import::Format;

use super::{read_input, write_stdout, Outcome};

#[derive(Args)]
pub struct ImportArgs {
    /// The source format.
    #[arg(
        long = "from",
        value_name = "FORMAT",
        value_parser = PossibleValuesParser::new(Format::ALL.map(Format::name))
            .map(|name| name.parse::<Format>().expect("a listed format"))
    )]
    from: Format,
    /// The tree to import (`-` or nothing: standard input).
    file: Option<PathBuf>,
}

pub fn run(args: ImportArgs) -> Outcome {
    let bytes = match read_input(args.file.as_deref()) {
        Ok(bytes) => bytes,
        Err(message) => return Outcome::Failed(message),
    };
    let answer = match ctxgate::import::import(args.from, &bytes) {
        Ok(answer) => answer,
        // The input was read and judged: it is not a tree of that format.
        Err(err) => return Outcome::Rejected(Some(format!("{err:#}"))),
    };
    let mut text = serde_json::to_vec_pretty(&answer).expect("an answer serializes");
    text.push(b'\n');
    match write_stdout(&text) {
        Ok(()) => Outcome::Fine,
        Err(message) => Outcome::Failed(message),
    }
}
