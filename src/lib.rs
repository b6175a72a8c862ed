#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

pub mod check;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;
mod deadline;
mod error;
mod escape;
mod finding;
mod gate;
pub mod import;
mod limits;
pub mod model;
pub mod policy;
pub mod read;
mod redact;
pub mod render;
mod suggest;
pub mod synth;
mod tokens;
pub mod trim;

pub use check::{check, check_bytes, read_conforming, CheckReport};
pub use deadline::{Stage, DEFAULT_TIMEOUT};
pub use error::{DepthPlace, Error, ErrorKind, Result};
pub use finding::{Finding, Requirement, Severity};
pub use gate::Gate;
pub use limits::Limits;
pub use model::{Answer, Attributes, Block, Children, Content, Element, Role, RoleName, Tree};
pub use policy::{Budget, Policy, Scope};
pub use read::read;
pub use render::Format;
pub use trim::{BudgetReport, ElementReport, Outcome, Report, Request, Trimmed};
