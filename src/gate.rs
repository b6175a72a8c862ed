//! The host's entry point: a [`Gate`] is built once from a policy and called
//! before every agent request. It reads (or takes) an answer, checks it,
//! asks the policy, trims, renders, and reports — or fails, in which case
//! nothing may be sent. `Gate` is `Send + Sync`; share it across threads.

use std::path::Path;
use std::sync::Arc;

use crate::check::{require_conforming_doc, with_conforming};
use crate::deadline::{Deadline, Stage};
use crate::error::Result;
use crate::limits::Limits;
use crate::model::doc::Doc;
use crate::model::Answer;
use crate::policy::Policy;
use crate::trim::{request_input_of, trim_doc, Counts, Request, Trimmed};

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
    /// pre-tokenizer (its DFA validated, ~5 M instructions, once per process). Call it
    /// at start-up, on any thread, to keep that off the first request.
    pub fn warm_up(&self) {
        Gate::warm_up_tokens();
    }

    /// [`Gate::warm_up`] without a gate: loads the token pre-tokenizer.
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

    /// The policy's plan (scope, budget, redaction patterns) for `request`
    /// on an answer of `instance`: for a front end that redacts text
    /// outside any tree with the patterns a trim applies (`ctxgate mcp`).
    #[cfg(feature = "cli")]
    pub(crate) fn plan(
        &self,
        request: &Request,
        instance: &str,
    ) -> Result<Arc<crate::policy::RequestPlan>> {
        self.policy
            .plan(&request_input_of(crate::model::PROTOCOL, instance, request))
    }

    /// Reads an answer's bytes (0.2.x, or 0.1 upgraded) and trims it.
    /// The request's deadline ([`Request::timeout`]) counts from here.
    pub fn trim_bytes<'a>(&self, bytes: &'a [u8], request: &Request) -> Result<Trimmed<'a>> {
        let deadline = request.deadline();
        // Shape problems found while reading are reported with the tree's
        // own findings, all at once.
        let (trimmed, _doc) =
            with_conforming(bytes, &self.limits, Some(&deadline), |doc, warnings| {
                self.trim_conforming(doc, warnings, request, &deadline, Counts::Exact)
            })?;
        trimmed
    }

    /// [`Gate::trim_bytes`] for `ctxgate trim`, a process that exits after
    /// this one request: `counts` says whether the report's budgets are all
    /// counted ([`Counts::Exact`], when the report is shown) or a token
    /// budget the output cannot exceed is left uncounted
    /// ([`Counts::Binding`]: a byte budget under the policy's token budget
    /// then loads no vocabulary). The doc read from `bytes` is not freed
    /// (the output borrows only `bytes`): freeing a large one block and
    /// attribute map at a time is time spent for a process about to exit.
    #[cfg(feature = "cli")]
    pub(crate) fn trim_bytes_once<'a>(
        &self,
        bytes: &'a [u8],
        request: &Request,
        counts: Counts,
    ) -> Result<Trimmed<'a>> {
        let deadline = request.deadline();
        let (trimmed, doc) =
            with_conforming(bytes, &self.limits, Some(&deadline), |doc, warnings| {
                self.trim_conforming(doc, warnings, request, &deadline, counts)
            })?;
        std::mem::forget(doc);
        trimmed
    }

    /// Trims an answer the host already holds. It is checked first: an
    /// answer that does not conform is rejected.
    /// The request's deadline ([`Request::timeout`]) counts from here.
    pub fn trim<'a>(&self, answer: &Answer<'a>, request: &Request) -> Result<Trimmed<'a>> {
        let deadline = request.deadline();
        // Checked as a request's doc is: one index of the answer, not two.
        let doc = Doc::from_answer(answer, "");
        let warnings = require_conforming_doc(&doc)?;
        self.trim_conforming(&doc, &warnings, request, &deadline, Counts::Exact)
    }

    /// Trims an answer that was checked and conforms, read into `doc`,
    /// with what its `warnings` say was read past in the report.
    fn trim_conforming<'a>(
        &self,
        doc: &Doc<'a>,
        warnings: &[crate::Finding],
        request: &Request,
        deadline: &Deadline,
        counts: Counts,
    ) -> Result<Trimmed<'a>> {
        deadline.check(Stage::Check)?;
        let input = request_input_of(&doc.protocol, &doc.instance, request);
        // No single evaluation may run past what is left of the request.
        let mut evaluator = self
            .policy
            .evaluator_within(&input, doc.el(0).title(), *deadline)?;
        let plan = evaluator.plan().clone();
        let mut trimmed = trim_doc(
            doc,
            request,
            &plan,
            &mut evaluator,
            self.policy.hash(),
            &self.limits,
            deadline,
            counts,
        )?;
        trimmed.report.ignored = crate::trim::Ignored::of(warnings);
        Ok(trimmed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::policy::Budget;
    use crate::read::differential::{element_pointers, fixtures, mutate, MUTATIONS};

    /// `trim_bytes` as it was before the one-pass reader and the doc read
    /// straight from the bytes: two passes, then the checker, then the
    /// answer copied into the trim's doc.
    fn trim_bytes_before<'a>(
        gate: &Gate,
        bytes: &'a [u8],
        request: &Request,
    ) -> Result<Trimmed<'a>> {
        let deadline = request.deadline();
        let reading = crate::read::read_in_two_passes(bytes, &gate.limits, Some(&deadline))?;
        let mut findings = reading.findings;
        if let Some(answer) = &reading.answer {
            findings.extend(crate::check::check(answer));
        }
        let answer = match reading.answer {
            Some(answer) if !findings.iter().any(crate::finding::Finding::is_error) => answer,
            _ => return Err(Error::NotConforming { findings }),
        };
        let doc = Doc::from_answer(&answer, "");
        gate.trim_conforming(&doc, &findings, request, &deadline, Counts::Exact)
    }

    /// What a trim gave: the bytes sent and the report, or the error.
    fn outcome(trimmed: Result<Trimmed<'_>>) -> String {
        match trimmed {
            Ok(t) => format!(
                "{}\n{}",
                t.rendered,
                serde_json::to_string(&t.report).unwrap()
            ),
            Err(err) => format!("{:?}: {err:?}", err.kind()),
        }
    }

    fn requests(answer: &serde_json::Value) -> Vec<Request> {
        let mut out: Vec<Request> = ["selection", "focus", "window", "app"]
            .into_iter()
            .map(Request::new)
            .collect();
        out.push(Request::new("app").budget(Budget::Bytes(1_500)));
        let pointers = element_pointers(answer);
        if let Some(id) = answer
            .pointer(&format!("{}/id", pointers[pointers.len() / 2]))
            .and_then(|id| id.as_str())
        {
            out.push(Request::new("focus").target(id));
        }
        out.push(Request::new("focus").target("no-such-id"));
        out.into_iter()
            .map(|r| r.timeout(std::time::Duration::from_secs(600)))
            .collect()
    }

    /// For every fixture tree and generated tree, and the breakages of
    /// each, every action gives the same bytes and report, or the same
    /// error with the same findings, as before.
    #[test]
    fn trim_bytes_sends_and_refuses_what_it_did_before() {
        // One gate each, asked the same requests in the same order, so that
        // their decision caches (the report's `evaluations`) agree.
        let (gate, gate_before) = (
            Gate::embedded_default().unwrap(),
            Gate::embedded_default().unwrap(),
        );
        let mut trimmed = 0;
        for (name, bytes) in fixtures() {
            let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            let pointers = element_pointers(&value);
            let mut inputs = vec![bytes.clone()];
            for how in 0..MUTATIONS {
                inputs.push(mutate(&value, pointers.last().unwrap(), how));
            }
            for input in &inputs {
                let requests = match input == &bytes {
                    true => requests(&value),
                    false => {
                        vec![Request::new("focus").timeout(std::time::Duration::from_secs(600))]
                    }
                };
                for request in requests {
                    let now = outcome(gate.trim_bytes(input, &request));
                    let before = outcome(trim_bytes_before(&gate_before, input, &request));
                    assert_eq!(now, before, "{name}: {:?}", request.action);
                    trimmed += usize::from(!now.starts_with(|c: char| c.is_ascii_uppercase()));
                }
            }
        }
        assert!(trimmed > 60, "only {trimmed} requests were trimmed");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 12, ..Default::default() })]

        /// Generated trees and one breakage of each, every action: the same
        /// bytes and report, or the same error, as before.
        #[test]
        fn generated_trees_trim_as_before(
            n in 1usize..300,
            seed in 0u64..1_000,
            pick in proptest::prelude::any::<proptest::sample::Index>(),
            how in 0..MUTATIONS,
        ) {
            let (gate, gate_before) = (
                Gate::embedded_default().unwrap(),
                Gate::embedded_default().unwrap(),
            );
            let bytes = serde_json::to_vec(&crate::synth::synth(n, seed)).unwrap();
            let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            let pointers = element_pointers(&value);
            let broken = mutate(&value, &pointers[pick.index(pointers.len())], how);
            for input in [&bytes, &broken] {
                for request in requests(&value) {
                    let now = outcome(gate.trim_bytes(input, &request));
                    let before = outcome(trim_bytes_before(&gate_before, input, &request));
                    proptest::prop_assert_eq!(now, before);
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 12, ..Default::default() })]

        /// An answer's bytes and the same answer held (borrowing those
        /// bytes, or owned) trim alike, bytes and report: generated trees
        /// with escapes in every string, words outside the role language,
        /// states and attributes ([`odd`]), and the notices a first trim
        /// left on them.
        ///
        /// [`odd`]: crate::read::differential::odd
        #[test]
        fn bytes_and_held_answers_trim_alike(
            n in 1usize..300,
            seed in 0u64..1_000,
            odd in 0usize..4,
        ) {
            let value = serde_json::to_value(crate::synth::synth(n, seed)).unwrap();
            let first = crate::read::differential::odd(&value, odd);
            // Under the smallest budget that holds what must be sent.
            let gate = Gate::embedded_default().unwrap();
            let again = [1_500, 4_000, 16_000, usize::MAX]
                .into_iter()
                .find_map(|bytes| {
                    let request = Request::new("app")
                        .budget(Budget::Bytes(bytes))
                        .timeout(std::time::Duration::from_secs(600));
                    gate.trim_bytes(&first, &request).ok()
                })
                .unwrap()
                .rendered
                .into_bytes();
            for input in [first, again] {
                let text = input.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&input);
                let value: serde_json::Value = serde_json::from_slice(text).unwrap();
                let gates = [(); 3].map(|()| Gate::embedded_default().unwrap());
                let held = crate::read_conforming(&input, &gates[0].limits).unwrap();
                let owned = held.clone().into_owned();
                for request in requests(&value) {
                    let read = outcome(gates[0].trim_bytes(&input, &request));
                    let borrowed = outcome(gates[1].trim(&held, &request));
                    let owned = outcome(gates[2].trim(&owned, &request));
                    proptest::prop_assert_eq!(&read, &borrowed);
                    proptest::prop_assert_eq!(&read, &owned);
                }
            }
        }
    }

    #[test]
    fn gate_is_send_and_sync() {
        fn assert<T: Send + Sync>() {}
        assert::<Gate>();
    }
}
