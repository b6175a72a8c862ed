//! The host's entry point: a [`Gate`] is built once from a policy and called
//! before every agent request. It reads (or takes) an answer, checks it,
//! asks the policy, trims, renders, and reports — or fails, in which case
//! nothing may be sent. `Gate` is `Send + Sync`; share it across threads.

use std::path::Path;
use std::sync::Arc;

use crate::check::{read_checked, require_conforming};
use crate::deadline::{Deadline, Stage};
use crate::error::Result;
use crate::limits::Limits;
use crate::model::Answer;
use crate::policy::Policy;
use crate::trim::{request_input, trim_checked, Counts, Request, Trimmed};

/// A compiled policy and the limits on what is read.
#[derive(Clone)]
pub struct Gate {
    policy: Arc<Policy>,
    limits: Limits,
}

impl Gate {
    /// A gate for a compiled policy, with the default limits.
    pub fn new(policy: Policy) -> Gate {
        Gate {
            policy: Arc::new(policy),
            limits: Limits::default(),
        }
    }

    /// A gate with the embedded default policy (`policies/default.rego`).
    pub fn embedded_default() -> Result<Gate> {
        Ok(Gate::new(Policy::embedded_default()?))
    }

    /// A gate with the policy at `path`: a `.rego` file, or a folder whose
    /// `*.rego` files (tests excepted) form one policy.
    pub fn from_policy_path(path: impl AsRef<Path>) -> Result<Gate> {
        Ok(Gate::new(Policy::from_path(path.as_ref())?))
    }

    /// Replaces the limits.
    pub fn with_limits(mut self, limits: Limits) -> Gate {
        self.limits = limits;
        self
    }

    /// Loads what the first request would otherwise load: the token
    /// vocabulary (~100 ms, once per process). Call it at start-up, on any
    /// thread, to keep that off the first request.
    pub fn warm_up(&self) {
        Gate::warm_up_tokens();
    }

    /// [`Gate::warm_up`] without a gate: loads the token vocabulary.
    pub fn warm_up_tokens() {
        crate::tokens::warm_up();
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The limits.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Reads an answer's bytes (0.2.x, or 0.1 upgraded) and trims it.
    /// The request's deadline ([`Request::timeout`]) counts from here.
    pub fn trim_bytes<'a>(&self, bytes: &'a [u8], request: &Request) -> Result<Trimmed<'a>> {
        let deadline = request.deadline();
        // Shape problems found while reading are reported with the tree's
        // own findings, all at once.
        let answer = read_checked(bytes, &self.limits, Some(&deadline))?.into_conforming()?;
        self.trim_conforming(&answer, request, &deadline, Counts::Exact)
    }

    /// [`Gate::trim_bytes`] for `ctxgate trim`, a process that exits after
    /// this one request: `counts` says whether the report's budgets are all
    /// counted ([`Counts::Exact`], when the report is shown) or a token
    /// budget the output cannot exceed is left uncounted
    /// ([`Counts::Binding`]: a byte budget under the policy's token budget
    /// then loads no vocabulary). The tree read from `bytes` is not freed
    /// (the output borrows only `bytes`): freeing a large tree element by
    /// element is ~10% of a request, and the process is about to exit.
    #[cfg(feature = "cli")]
    pub(crate) fn trim_bytes_once<'a>(
        &self,
        bytes: &'a [u8],
        request: &Request,
        counts: Counts,
    ) -> Result<Trimmed<'a>> {
        let deadline = request.deadline();
        let answer = read_checked(bytes, &self.limits, Some(&deadline))?.into_conforming()?;
        let trimmed = self.trim_conforming(&answer, request, &deadline, counts);
        std::mem::forget(answer);
        trimmed
    }

    /// Trims an answer the host already holds. It is checked first: an
    /// answer that does not conform is rejected.
    /// The request's deadline ([`Request::timeout`]) counts from here.
    pub fn trim<'a>(&self, answer: &Answer<'a>, request: &Request) -> Result<Trimmed<'a>> {
        let deadline = request.deadline();
        require_conforming(answer)?;
        self.trim_conforming(answer, request, &deadline, Counts::Exact)
    }

    /// Trims an answer that was checked and conforms.
    fn trim_conforming<'a>(
        &self,
        answer: &Answer<'a>,
        request: &Request,
        deadline: &Deadline,
        counts: Counts,
    ) -> Result<Trimmed<'a>> {
        deadline.check(Stage::Check)?;
        let input = request_input(answer, request);
        // No single evaluation may run past what is left of the request.
        let mut evaluator =
            self.policy
                .evaluator_within(&input, answer.root.title.as_deref(), *deadline)?;
        let plan = evaluator.plan().clone();
        trim_checked(
            answer,
            request,
            &plan,
            &mut evaluator,
            self.policy.hash(),
            &self.limits,
            deadline,
            counts,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gate_is_send_and_sync() {
        fn assert<T: Send + Sync>() {}
        assert::<Gate>();
    }
}
