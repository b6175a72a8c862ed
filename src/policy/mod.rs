//! The policy engine: the only code that touches regorus. It turns a policy
//! set and a request into a [`RequestPlan`] (scope, budget, redaction and
//! title patterns) and answers, per distinct element projection, a
//! [`Decision`] (deny, mask, keep, prune, priority, strip), with the secure-text
//! floor applied. Compiled policies, request plans and decisions are cached
//! across requests.
//!
//! The runtime a `Gate` needs: `source` loads files; `recursion` (with the
//! `token`izer) refuses recursion and long rule chains at load; `engine`
//! compiles, plans and evaluates (the only code calling regorus's
//! evaluation) and holds the caches (a per-request memo, then a sharded
//! cache shared across requests and threads); `projection` owns the
//! element projection ([`ElementInput`]), its Rego input, its cache key and
//! the floor ([`Floor`]); `inside` its ancestors; `load` builds a policy
//! from files or layers and refuses, through `lint` (which evaluates the
//! `probes`), what `ctxgate policy check` calls an error. The authoring
//! tools (`tools/`: metadata, test runner, doc and plan) are apart and use
//! the runtime as a host would. Nothing here sees titles or
//! content: only the projection, and for the app's title the names of the
//! patterns it matches.

use std::sync::Arc;

use crate::model::Role;
pub use crate::redact::Redaction;

mod ast;
mod compose;
mod default_facts;
mod engine;
mod inside;
mod lint;
mod load;
mod probes;
mod projection;
mod recursion;
mod source;
mod table;
mod token;
// The authoring tools serve `ctxgate policy`; hosts and bindings built
// without the CLI do without them.
#[cfg(feature = "cli")]
mod tools;

pub(crate) use engine::decide;
#[cfg(any(test, feature = "internals"))]
pub use engine::Evaluator;
pub use engine::Policy;
pub use inside::Inside;
#[cfg(feature = "cli")]
pub use lint::check_layers;
#[cfg(test)]
pub use lint::check_sources;
#[cfg(feature = "cli")]
pub use load::{layer_files, DEFAULT_LAYER};
pub use projection::{Decider, ElementInput};
#[cfg(feature = "cli")]
pub use source::PolicyFile;
#[cfg(feature = "cli")]
pub use tools::{
    action_words, default_files, diff_policies, doc_markdown, percent, plan_json, run_tests_with,
    FileCoverage, TestOptions, TestOutcome, TestResult, ACTIONS,
};

/// The part of the tree an action warrants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The selected elements, the focus path and what the policy keeps.
    Selection,
    /// The focused element's subtree and its path.
    Focus,
    /// The focused window.
    Window,
    /// Everything.
    App,
}

/// A size budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Budget {
    /// o200k_base tokens of the rendered output.
    Tokens(usize),
    /// Bytes of the rendered output.
    Bytes(usize),
}

/// What the policy decided for one request.
#[derive(Debug, Clone)]
pub struct RequestPlan {
    /// The scope for this action.
    pub scope: Scope,
    /// The policy's default budget, if it sets one.
    pub budget: Option<Budget>,
    /// Redaction patterns, in id order.
    pub redact: Vec<Redaction>,
    /// Named title patterns: an element whose title matches one has its
    /// name in `input.element.title_matches`.
    pub title_patterns: Vec<(String, crate::redact::Pattern)>,
    /// Attributes whose values the policy reads (`element_attributes`).
    pub element_attributes: Vec<String>,
}

/// The action a request is for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Action {
    /// `selection`, `focus`, `window`, `app`, or a host's own word.
    pub name: String,
    /// An element id the action names.
    pub target: Option<String>,
}

/// The per-request input (`input.action`, `input.app`). The app's title is
/// not part of it: element decisions see the names of the title patterns
/// it matches (`input.app.title_matches`,
/// [`Policy::evaluator_with_title`]); the plan sees neither.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RequestInput {
    /// The action.
    pub action: Action,
    /// The answer's `instance`.
    pub instance: String,
    /// The answer's `protocol`.
    pub protocol: String,
}

/// The decision for one projection. Reasons are the policy's own strings
/// (rule ids), never app text.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Decision {
    /// `deny` reasons (sorted).
    pub deny: Vec<Arc<str>>,
    /// `mask` reasons (sorted), including `floor:secure-text` when the floor applies.
    pub mask: Vec<Arc<str>>,
    /// `keep` reasons (sorted).
    pub keep: Vec<Arc<str>>,
    /// `prune` reasons (sorted).
    pub prune: Vec<Arc<str>>,
    /// `priority` (0 when the policy says nothing).
    pub priority: f64,
    /// `strip`: attribute names removed from the element when it is sent
    /// (sorted). Names, not reasons: never app text the policy computed
    /// into a notice, as only the names an element has are removed and
    /// reported; never a reserved `ctxgate:` name (refused).
    pub strip: Vec<Arc<str>>,
}

impl Decision {
    /// A copy sharing nothing with `self`: no reference count of its own
    /// or of its reasons is one another request also counts.
    pub(crate) fn request_local(&self) -> Decision {
        let copy = |reasons: &[Arc<str>]| reasons.iter().map(|r| Arc::from(&**r)).collect();
        Decision {
            deny: copy(&self.deny),
            mask: copy(&self.mask),
            keep: copy(&self.keep),
            prune: copy(&self.prune),
            priority: self.priority,
            strip: copy(&self.strip),
        }
    }

    /// The class that wins under the precedence deny > mask > keep > prune,
    /// and its reasons; `("scope", [])` when no rule spoke and the scope
    /// (then the budget) decides.
    #[cfg(any(test, feature = "cli"))]
    pub fn outcome(&self) -> (&'static str, &[Arc<str>]) {
        if !self.deny.is_empty() {
            ("deny", &self.deny)
        } else if !self.mask.is_empty() {
            ("mask", &self.mask)
        } else if !self.keep.is_empty() {
            ("keep", &self.keep)
        } else if !self.prune.is_empty() {
            ("prune", &self.prune)
        } else {
            ("scope", &[])
        }
    }
}
