//! `ctxgate synth`: a realistic 0.2.0 answer of N elements as compact JSON,
//! the same bytes for the same N and seed. For benchmarks and trying
//! policies on large trees.

use clap::Args;

use super::{write_stdout, Failure, Outcome};

#[derive(Args)]
pub struct SynthArgs {
    /// How many elements the answer has, exactly (at least 1).
    #[arg(long, value_name = "N")]
    elements: usize,
    /// The generator's seed.
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
}

pub fn run(args: SynthArgs) -> Result<Outcome, Failure> {
    if args.elements == 0 {
        return Err(Failure::usage(
            "`--elements` must be at least 1: a tree has its root",
        ));
    }
    let answer = crate::synth::synth(args.elements, args.seed);
    let mut text = crate::render::json(&answer);
    text.push('\n');
    write_stdout(text.as_bytes())?;
    Ok(Outcome::Fine)
}
