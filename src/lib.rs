#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

// The public API is the root re-exports below, `import::{import, Format}`,
// `synth::synth` and `wire`, the wire form every front end and binding
// shares (ARCHITECTURE.md, "API boundary"). Every other module
// is private: the CLI is a module of this crate so it can use them, and
// benches and fuzz targets that time one stage reach them through the
// doc-hidden `internals` module (feature `internals`).

mod check;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;
mod deadline;
mod error;
mod escape;
mod finding;
mod floor;
mod gate;
pub mod import;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod internals;
mod limits;
mod lookalike;
mod model;
mod policy;
mod read;
mod redact;
mod render;
mod suggest;
pub mod synth;
mod tokens;
mod trim;
pub mod wire;

pub use check::{check, check_bytes, read_conforming, CheckReport};
pub use deadline::{Stage, DEFAULT_TIMEOUT};
pub use error::{DepthPlace, Error, ErrorKind, Result};
pub use finding::{Finding, Requirement, Severity};
pub use gate::Gate;
pub use limits::Limits;
pub use model::{
    Answer, Attributes, Block, Children, Content, Element, Node, NodeId, Related, RelatedTarget,
    Role, RoleName, Tree, PROTOCOL,
};
pub use policy::{Action, Budget, Policy, Scope};
pub use read::read;
pub use render::Format;
pub use trim::{BudgetReport, ElementReport, Ignored, Outcome, Report, Request, Trimmed};

#[cfg(test)]
mod tests;
