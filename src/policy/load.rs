//! Loading a policy: files or layers of files, compiled, then linted —
//! what `ctxgate policy check` calls an error refuses the policy here, for
//! every host (`Gate`, `--policy`, `serve`), with the same `file:line:col`
//! and message. Layers (`--policy default --policy extra/`) share `package
//! ctxgate`: the partial sets merge, every other rule belongs to one layer.
// `ctxgate policy check` and layering use all of this; a build without the
// CLI (the bindings) uses the part every load runs, which is most of it.
#![cfg_attr(not(feature = "cli"), allow(dead_code, unused_imports))]

use std::collections::BTreeMap;
use std::path::Path;

use super::engine::{DEFAULT_NAME, DEFAULT_SOURCE, DEFAULT_TEST_NAME, DEFAULT_TEST_SOURCE};
use super::source::{load_path, PolicyFile};
use super::Policy;
use crate::error::{Error, Result};

/// The word that names the embedded default policy where a path is
/// expected (`--policy default`); a folder of that name is `./default`.
pub const DEFAULT_LAYER: &str = "default";

impl Policy {
    /// The default policy shipped in `policies/default.rego`. Not linted
    /// here: its bytes are fixed when ctxgate is built, so the lint's
    /// result is too, and a test fixes it (`the_embedded_default_lints_clean`
    /// below); every other load, the same bytes from a file included, is
    /// linted.
    pub fn embedded_default() -> Result<Policy> {
        Policy::embedded()
    }

    /// A `.rego` file, or every `*.rego` file of a directory except
    /// `*_test.rego`.
    pub fn from_path(path: &Path) -> Result<Policy> {
        let files = load_path(path, false)?;
        Policy::from_sources(files.into_iter().map(|f| (f.name, f.source)).collect())
    }

    /// Policy files as (name used in errors, source). Files named
    /// `*_test.rego` are left out: tests are not part of a policy. What
    /// `ctxgate policy check` reports as an error refuses the policy here
    /// too, with the same `file:line:col` and message (the first error,
    /// and how many more there are).
    pub fn from_sources(files: Vec<(String, String)>) -> Result<Policy> {
        let (policy, heads) = Policy::unchecked(files)?;
        super::lint::refuse(&policy, &heads)?;
        Ok(policy)
    }

    /// The policy `--policy` values name, each one layer
    /// ([`Policy::from_layers`]): `default` is the
    /// embedded default, anything else a `.rego` file or a folder of them
    /// ([`Policy::from_path`]). `default` alone is [`Policy::embedded_default`];
    /// no value is a usage error.
    pub fn load<P: AsRef<Path>>(layers: &[P]) -> Result<Policy> {
        match layers {
            [] => Err(Error::Policy {
                location: "(none)".to_string(),
                message: "no policy was given: name one or more layers (`default`, a `.rego` file or a folder)".to_string(),
            }),
            [only] if only.as_ref() == Path::new(DEFAULT_LAYER) => Policy::embedded_default(),
            _ => {
                let mut sources = Vec::new();
                for layer in layers {
                    let files = layer_files_at(layer.as_ref(), false)?;
                    sources.push(files.into_iter().map(|f| (f.name, f.source)).collect());
                }
                Policy::from_layers(sources)
            }
        }
    }

    /// Layers of policy files, each as [`Policy::from_sources`] takes
    /// them, loaded as one policy under the composition rule
    /// (`policy::compose`): a later layer may extend the contract's partial
    /// sets with `contains`, and may not give a value to any other name an
    /// earlier layer defines or reads; a load error names both places. A
    /// file name given twice is an error too.
    pub fn from_layers(layers: Vec<Vec<(String, String)>>) -> Result<Policy> {
        let mut layer_of: BTreeMap<String, usize> = BTreeMap::new();
        let mut files = Vec::new();
        for (index, layer) in layers.into_iter().enumerate() {
            for (name, source) in layer {
                if let Some(first) = layer_of.insert(name.clone(), index) {
                    return Err(Error::Policy {
                        location: name,
                        message: format!(
                            "the file is given twice (layers {} and {}); give each file once",
                            first + 1,
                            index + 1
                        ),
                    });
                }
                files.push((name, source));
            }
        }
        let (policy, heads) = Policy::unchecked(files)?;
        super::compose::check_layers(policy.files(), &layer_of)?;
        super::lint::refuse(&policy, &heads)?;
        Ok(policy)
    }
}

/// One layer's files from a `--policy` value: [`DEFAULT_LAYER`] is the
/// embedded default, anything else a path ([`load_path`]).
pub fn layer_files(arg: &str, tests: bool) -> Result<Vec<PolicyFile>> {
    layer_files_at(Path::new(arg), tests)
}

fn layer_files_at(arg: &Path, tests: bool) -> Result<Vec<PolicyFile>> {
    if arg == Path::new(DEFAULT_LAYER) {
        let mut files = vec![PolicyFile {
            name: DEFAULT_NAME.to_string(),
            source: DEFAULT_SOURCE.to_string(),
        }];
        if tests {
            files.push(PolicyFile {
                name: DEFAULT_TEST_NAME.to_string(),
                source: DEFAULT_TEST_SOURCE.to_string(),
            });
        }
        return Ok(files);
    }
    load_path(arg, tests)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::policy::projection::Reads;
    use std::collections::BTreeSet;

    /// What [`Policy::embedded_default`] does not run at load: the lint,
    /// the compile's recursion and function checks, the bracket depth and
    /// the subset its reads are found in (its keys and table rely on them).
    #[test]
    fn the_embedded_default_lints_clean() {
        let files = [PolicyFile {
            name: DEFAULT_NAME.to_string(),
            source: DEFAULT_SOURCE.to_string(),
        }];
        let (_, rules, heads) = super::super::engine::compile_with_heads(&files, true).unwrap();
        for file in &files {
            file.check_bracket_depth().unwrap();
        }
        let tokens: Vec<_> = files
            .iter()
            .map(|f| super::super::token::tokenize(&f.source))
            .collect();
        assert!(super::super::engine::spelled_out(
            &files, &tokens, &heads, &rules
        ));
        let (policy, heads) =
            Policy::unchecked(vec![(DEFAULT_NAME.to_string(), DEFAULT_SOURCE.to_string())])
                .unwrap();
        super::super::lint::refuse(&policy, &heads).unwrap();
        // The load a file with the same bytes gets.
        Policy::from_sources(vec![("copy.rego".to_string(), DEFAULT_SOURCE.to_string())]).unwrap();
    }

    /// `default_facts.rs` as the embedded default's bytes give it: what
    /// [`Policy::embedded_default`] takes from there instead of computing
    /// at load.
    /// With them, the rules and `Reads` they were written from.
    fn default_facts() -> (String, BTreeSet<String>, Reads) {
        use super::super::engine::{compile_with_heads, reads_of, string_constants};
        let files = [PolicyFile {
            name: DEFAULT_NAME.to_string(),
            source: DEFAULT_SOURCE.to_string(),
        }];
        let (_, rules, heads) = compile_with_heads(&files, true).unwrap();
        let tokens = super::super::token::tokenize(DEFAULT_SOURCE);
        let reads = reads_of(std::slice::from_ref(&tokens), &rules);
        let element_rules: Vec<&str> = super::super::engine::ELEMENT_RULES
            .into_iter()
            .filter(|r| rules.contains(*r))
            .collect();
        let rule_reads = super::super::engine::rule_reads(
            &[(&files[0], tokens.as_slice())],
            &heads,
            &rules,
            &element_rules,
        );
        let mut constants = string_constants(DEFAULT_SOURCE);
        constants.sort();
        constants.dedup();
        let mut out = String::from(
            "//! What the embedded default's bytes fix, taken at load instead of computed\n\
             //! (`Policy::embedded_default`). Generated; `policy::load::tests` recomputes\n\
             //! it from `policies/default.rego` and fails when it differs. Regenerate with\n\
             //! `UPDATE_EXPECT=1 cargo test --lib the_default_facts_are_its_bytes`.\n\n\
             use super::projection::{Case, Op};\n\n",
        );
        out += "/// The rules `package ctxgate` defines (the compile's).\n";
        out += "pub(super) const RULES: &[&str] = &[\n";
        for rule in &rules {
            out += &format!("    {rule:?},\n");
        }
        out += "];\n\n";
        out += "/// `reads_of`: `input.inside` is read only as its count.\n";
        out += &format!(
            "pub(super) const INSIDE_COUNT_ONLY: bool = {};\n\n",
            reads.inside_count_only
        );
        out += "/// `reads_of`: the subrole's tests, sorted (`None`: read whole).\n";
        out += "pub(super) const SUBROLE_TESTS: Option<&[(Op, Case, &str)]> = ";
        match &reads.subrole {
            None => out += "None;\n\n",
            Some(tests) => {
                out += "Some(&[\n";
                for t in tests {
                    out += &format!(
                        "    (Op::{:?}, Case::{:?}, {:?}),\n",
                        t.op, t.case, t.needle
                    );
                }
                out += "]);\n\n";
            }
        }
        out += "/// `rule_reads`: what each per-element rule defined reads, in `ELEMENT_RULES`\n";
        out += "/// order: (rule, fields as `RuleReads::fields`, whether `input.inside`).\n";
        out += "pub(super) const RULE_READS: Option<&[(&str, u16, bool)]> = ";
        match &rule_reads {
            None => out += "None;\n\n",
            Some(all) => {
                out += "Some(&[\n";
                for (rule, r) in element_rules.iter().zip(all) {
                    out += &format!("    ({rule:?}, {:#06x}, {}),\n", r.fields, r.inside);
                }
                out += "]);\n\n";
            }
        }
        out += "/// `string_constants`: the rule ids the policy writes, sorted, each once.\n";
        out += "pub(super) const CONSTANTS: &[&str] = &[\n";
        for c in &constants {
            out += &format!("    {:?},\n", &**c);
        }
        out += "];\n";
        (out, rules, reads)
    }

    /// Fails unless the committed file at `path` (from the repository's
    /// root) holds `fresh`, what `policies/default.rego` gives; with
    /// `UPDATE_EXPECT` set, writes it first. `test` names the test that
    /// regenerates it.
    pub(in crate::policy) fn assert_generated(path: &str, fresh: &[u8], test: &str) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
        if std::env::var_os("UPDATE_EXPECT").is_some() {
            std::fs::write(&path, fresh).unwrap();
        }
        let written = std::fs::read(&path).unwrap_or_default();
        assert!(
            written == fresh,
            "{} is not what policies/default.rego gives; regenerate it with `UPDATE_EXPECT=1 cargo test --lib {test}`",
            path.display()
        );
    }

    #[test]
    fn the_default_facts_are_its_bytes() {
        let (facts, rules, reads) = default_facts();
        assert_generated(
            "src/policy/default_facts.rs",
            facts.as_bytes(),
            "the_default_facts_are_its_bytes",
        );
        // And the policy loaded takes them.
        let policy = Policy::embedded_default().unwrap();
        assert_eq!(policy.reads(), &reads);
        assert!(reads.inside_count_only && reads.subrole.is_some());
        assert!(policy.rule_names().eq(rules.iter().map(String::as_str)));
    }
}
