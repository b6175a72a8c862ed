//! ctxgate decides what of an app's element tree may be sent to an AI agent.
//!
//! A provider reports what is on screen as one tree of elements (protocol
//! 0.2.0). ctxgate reads it, checks it, applies Rego policies on roles,
//! subroles and states, scopes it to what the user's action warrants, fits
//! it to a budget in bytes or tokens, and says what it withheld and why.
//! On any doubt it fails closed: an error, and nothing to send.
//!
//! ```
//! let bytes = std::fs::read("examples/notes.json").unwrap();
//! let report = ctxgate::check_bytes(&bytes, &ctxgate::Limits::default()).unwrap();
//! assert!(report.conforms);
//! ```

#![warn(missing_docs)]

pub mod check;
mod error;
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

pub use check::{check, check_bytes, CheckReport, Finding, Requirement, Severity};
pub use error::{Error, Result};
pub use gate::Gate;
pub use limits::Limits;
pub use model::{Answer, Element, Role, RoleName, Tree};
pub use read::{read, read_conforming};
pub use trim::{Request, Trimmed};
