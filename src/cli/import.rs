//! `ctxgate import --from FORMAT [FILE|-]`: an OS accessibility tree in,
//! a protocol 0.2.0 answer out, as pretty JSON on stdout.

use std::path::PathBuf;

use crate::import::Format;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Args;

use super::{read_input, write_stdout, Failure, Outcome};

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

pub fn run(args: ImportArgs) -> Result<Outcome, Failure> {
    let bytes = read_input(args.file.as_deref())?;
    let answer = crate::import::import(args.from, &bytes)?;
    let mut text = serde_json::to_vec_pretty(&answer).expect("an answer serializes");
    text.push(b'\n');
    write_stdout(&text)?;
    Ok(Outcome::Fine)
}
