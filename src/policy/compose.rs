//! The composition rule, read from regorus's parsed modules (its AST): what
//! one layer may add to the layers before it.
//!
//! A layer's meaning is closed over every name its rules resolve: the rules
//! and helpers it defines (their `default` heads, functions and `else`
//! chains included), the names its bodies, values, arguments and imports
//! read, and the built-ins it calls. So:
//! - no policy file defines a name a built-in has (`count`, `regex`, `time`):
//!   that would replace the built-in for every rule of every layer;
//! - a later layer gives no value to a name an earlier layer defines or
//!   reads, except by extending one of the contract's partial sets
//!   ([`MERGED_RULES`]) with `contains`;
//! - a later layer does not extend a partial set an earlier layer reads in
//!   a body (`keep … if count(deny) > 0` would change with every `deny`).
//!
//! Names are compared by their first segment inside `package ctxgate`
//! (`a.b := 1` defines `a`), which is coarser than Rego's own resolution
//! and so refuses more, never less. A read of `data` that names no rule
//! statically (`data.ctxgate[x]`, `walk(data)`) reads every name.

use std::collections::BTreeMap;

use regorus::unstable::{Expr, Literal, Module, Query, Rule, RuleHead as Head};
use regorus::Value;

use super::ast::{parts, root, Part};
use super::source::PolicyFile;
use crate::error::{Error, Result};

/// The rules that merge across layers: partial sets, whose members are
/// the union of every layer's (a reason, a redaction, an attribute name
/// declared or stripped by one layer is added to the whole). Every other rule, the
/// single-valued ones (`scope`, `budget`, `priority`, `title_patterns`)
/// and helpers alike, must be defined in one layer only.
pub(crate) const MERGED_RULES: [&str; 7] = [
    "deny",
    "mask",
    "keep",
    "prune",
    "strip",
    "redact",
    "element_attributes",
];

/// A place in a policy file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    pub file: String,
    pub line: u32,
    pub col: u32,
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

/// How a rule gives its name a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `name contains …` (or `name[x]` without a value): a partial set.
    Extends,
    /// A complete rule, an object rule, a function or a `default`.
    Defines,
}

/// What one policy file defines and reads, by first name segment.
#[derive(Debug, Default)]
pub(crate) struct Facts {
    defines: Vec<(String, Kind, Place)>,
    /// Each name read, at its first read.
    reads: BTreeMap<String, Place>,
    /// The first read of `data` that names no rule statically.
    reads_all: Option<Place>,
}

/// Parses `files` as the compile does (regorus's own parser, through an
/// engine) and returns each file's facts, in the order given.
pub(crate) fn facts_of(files: &[PolicyFile]) -> Result<Vec<(String, Facts)>> {
    let mut engine = regorus::Engine::new();
    for file in files {
        engine
            .add_policy(file.name.clone(), file.source.clone())
            .map_err(|e| super::source::policy_error(&e, &file.name))?;
    }
    Ok(engine
        .get_modules()
        .iter()
        .map(|m| (m.package.span.source.file().clone(), facts(m)))
        .collect())
}

/// The facts of one parsed module.
pub(crate) fn facts(module: &Module) -> Facts {
    let mut out = Facts::default();
    for import in &module.imports {
        let mut walk = Walk::new(&mut out);
        walk.import(&import.refr);
    }
    for rule in &module.policy {
        let mut walk = Walk::new(&mut out);
        walk.rule(rule);
    }
    out
}

/// The first definition of a built-in's name in `modules`, as an error.
pub(crate) fn shadowed_builtin<'m>(
    modules: impl IntoIterator<Item = (&'m str, &'m Facts)>,
) -> Option<Error> {
    for (_, facts) in modules {
        for (name, _, place) in &facts.defines {
            if let Some(builtin) = builtin_named(name) {
                return Some(Error::Policy {
                    location: place.to_string(),
                    message: format!(
                        "`{name}` is the name of a built-in (`{builtin}`); a rule or function of that name would replace it for every rule of the policy, every layer's included: rename it"
                    ),
                });
            }
        }
    }
    None
}

/// The first way a later layer changes what an earlier layer's rules
/// mean, as an error naming both places. `layers[i]` are layer `i`'s files'
/// facts, in layer order.
pub(crate) fn layer_conflict(layers: &[Vec<&Facts>]) -> Option<Error> {
    for (later, files) in layers.iter().enumerate().skip(1) {
        for facts in files {
            for (name, kind, place) in &facts.defines {
                let merged = MERGED_RULES.contains(&name.as_str());
                for (earlier, earlier_files) in layers[..later].iter().enumerate() {
                    if let Some(err) = conflict(name, *kind, merged, place, earlier, earlier_files)
                    {
                        return Some(err);
                    }
                }
            }
        }
    }
    None
}

fn conflict(
    name: &str,
    kind: Kind,
    merged: bool,
    place: &Place,
    earlier: usize,
    earlier_files: &[&Facts],
) -> Option<Error> {
    let merged_list = MERGED_RULES.map(|r| format!("`{r}`")).join(", ");
    let refuse = |why: String| {
        Some(Error::Policy {
            location: place.to_string(),
            message: why,
        })
    };
    for facts in earlier_files {
        if !(merged && kind == Kind::Extends) {
            if let Some((_, _, there)) = facts.defines.iter().find(|(n, ..)| n == name) {
                return refuse(format!(
                    "`{name}` is also defined by layer {} ({there}); a layer may not change what an earlier layer's rules mean: across layers only the partial sets ({merged_list}) merge, with `contains`, and every other name (a rule, a `default`, a function, an `else` chain) belongs to one layer: remove one definition, or rename the helper",
                    earlier + 1
                ));
            }
        }
        let read = facts.reads.get(name).or(facts.reads_all.as_ref());
        if let Some(there) = read {
            let what = if merged && kind == Kind::Extends {
                format!(
                    "extends `{name}`, which a rule of layer {} reads ({there})",
                    earlier + 1
                )
            } else {
                format!(
                    "defines `{name}`, which a rule of layer {} reads ({there})",
                    earlier + 1
                )
            };
            return refuse(format!(
                "this layer {what}; a layer may not change what an earlier layer's rules mean: rename this layer's rule, or move the rule that reads it into this layer"
            ));
        }
    }
    None
}

/// The built-in `name` would shadow: one of that name, or a namespace of
/// built-ins (`regex` for `regex.match`). Also the names of OPA's built-ins
/// and namespaces this build of regorus lacks, so a policy does not mean
/// one thing here and another elsewhere.
fn builtin_named(name: &str) -> Option<String> {
    const OPA: &[&str] = &[
        "array",
        "base64",
        "base64url",
        "bits",
        "crypto",
        "glob",
        "graph",
        "graphql",
        "hex",
        "http",
        "io",
        "json",
        "net",
        "numbers",
        "object",
        "opa",
        "print",
        "providers",
        "rand",
        "regex",
        "rego",
        "semver",
        "sets",
        "strings",
        "time",
        "trace",
        "units",
        "urlquery",
        "uuid",
        "walk",
        "yaml",
        "input",
        "data",
        "future",
    ];
    let builtins = &*regorus::unstable::BUILTINS;
    if let Some(full) = builtins.keys().find(|b| b.split('.').next() == Some(name)) {
        return Some((*full).to_string());
    }
    OPA.contains(&name).then(|| name.to_string())
}

/// One rule's walk: the names it defines and reads, less its locals.
struct Walk<'f> {
    out: &'f mut Facts,
    locals: Vec<String>,
}

impl<'f> Walk<'f> {
    fn new(out: &'f mut Facts) -> Self {
        Walk {
            out,
            locals: Vec::new(),
        }
    }

    fn place(span: &regorus::unstable::Span) -> Place {
        Place {
            file: span.source.file().clone(),
            line: span.line,
            col: span.col,
        }
    }

    fn import(&mut self, refr: &Expr) {
        // `import data.ctxgate.x` reads `x`; `import data`, `import
        // data.ctxgate` read every name; `import input…`, `rego.v1` and
        // `future.keywords` read none.
        let chain = chain(refr);
        match chain.as_deref() {
            Some([first, ..]) if first != "data" => {}
            Some([_, pkg, name, ..]) if pkg == "ctxgate" => {
                self.read(name, refr.span());
            }
            Some([_, pkg, ..]) if pkg != "ctxgate" => {}
            _ => self.read_all(refr.span()),
        }
    }

    fn rule(&mut self, rule: &Rule) {
        match rule {
            Rule::Spec { span, head, bodies } => {
                let (refr, kind) = match head {
                    Head::Compr { refr, assign, .. } => {
                        if let Some(a) = assign {
                            self.expr(&a.value);
                        }
                        (refr, Kind::Defines)
                    }
                    Head::Set { refr, key, .. } => {
                        if let Some(k) = key {
                            self.expr(k);
                        }
                        (refr, Kind::Extends)
                    }
                    Head::Func {
                        refr, args, assign, ..
                    } => {
                        for arg in args {
                            self.bind(arg);
                        }
                        if let Some(a) = assign {
                            self.expr(&a.value);
                        }
                        (refr, Kind::Defines)
                    }
                };
                // `x[k] := v`, `a.b := v`: the brackets' and dots' keys are
                // read; the name is the head's first segment.
                self.head_keys(refr);
                if let Some(name) = first_name(refr) {
                    self.out.defines.push((name, kind, Self::place(span)));
                }
                for body in bodies {
                    if let Some(a) = &body.assign {
                        self.expr(&a.value);
                    }
                    self.query(&body.query);
                }
            }
            Rule::Default {
                span,
                refr,
                args,
                value,
                ..
            } => {
                for arg in args {
                    self.bind(arg);
                }
                self.head_keys(refr);
                self.expr(value);
                if let Some(name) = first_name(refr) {
                    self.out
                        .defines
                        .push((name, Kind::Defines, Self::place(span)));
                }
            }
        }
        // Locals are a rule's own: the next rule starts afresh.
        self.locals.clear();
    }

    /// A head's bracket keys (`x[k]`) as reads.
    fn head_keys(&mut self, refr: &Expr) {
        match refr {
            Expr::RefBrack { refr, index, .. } => {
                self.head_keys(refr);
                self.expr(index);
            }
            Expr::RefDot { refr, .. } => self.head_keys(refr),
            _ => {}
        }
    }

    /// The variables of a pattern (a function's argument, `some x`, the
    /// left of `:=`) as locals; anything else in it is read.
    fn bind(&mut self, pattern: &Expr) {
        match pattern {
            Expr::Var { span, .. } => self.locals.push(span.text().to_string()),
            Expr::Array { items, .. } | Expr::Set { items, .. } => {
                for item in items {
                    self.bind(item);
                }
            }
            Expr::Object { fields, .. } => {
                for (_, key, value) in fields {
                    self.expr(key);
                    self.bind(value);
                }
            }
            other => self.expr(other),
        }
    }

    fn query(&mut self, query: &Query) {
        for stmt in &query.stmts {
            for with in &stmt.with_mods {
                self.expr(&with.refr);
                self.expr(&with.r#as);
            }
            match &stmt.literal {
                Literal::SomeVars { vars, .. } => {
                    for var in vars {
                        self.locals.push(var.text().to_string());
                    }
                }
                Literal::SomeIn {
                    key,
                    value,
                    collection,
                    ..
                } => {
                    self.expr(collection);
                    if let Some(k) = key {
                        self.bind(k);
                    }
                    self.bind(value);
                }
                Literal::Expr { expr, .. } | Literal::NotExpr { expr, .. } => self.expr(expr),
                Literal::Every {
                    key,
                    value,
                    domain,
                    query,
                    ..
                } => {
                    self.expr(domain);
                    if let Some(k) = key {
                        self.locals.push(k.text().to_string());
                    }
                    self.locals.push(value.text().to_string());
                    self.query(query);
                }
            }
        }
    }

    fn expr(&mut self, expr: &Expr) {
        match expr {
            Expr::Var { span, .. } => {
                let name = span.text();
                match name {
                    "input" | "_" => {}
                    "data" => self.read_all(span),
                    _ if self.locals.iter().any(|l| l == name) => {}
                    _ => self.read(name, span),
                }
            }
            Expr::RefDot { span, .. } | Expr::RefBrack { span, .. } => self.reference(expr, span),
            Expr::AssignExpr { op, lhs, rhs, .. } => {
                self.expr(rhs);
                match op {
                    regorus::unstable::AssignOp::ColEq => self.bind(lhs),
                    regorus::unstable::AssignOp::Eq => self.expr(lhs),
                }
            }
            _ => match parts(expr) {
                Some(parts) => {
                    for part in parts {
                        match part {
                            Part::Expr(e) => self.expr(e),
                            Part::Query(q) => self.query(q),
                        }
                    }
                }
                None => self.read_all(expr.span()),
            },
        }
    }

    /// A reference `a.b[c]`: `data.ctxgate.x…` reads `x`; another `data…`
    /// reads every name; otherwise its root is read as a variable. Bracket
    /// keys are read either way.
    fn reference(&mut self, expr: &Expr, span: &regorus::unstable::Span) {
        let mut keys = Vec::new();
        let mut fields = Vec::new();
        let mut node = expr;
        loop {
            match node {
                Expr::RefDot { refr, field, .. } => {
                    fields.push(Some(field.0.text().to_string()));
                    node = refr;
                }
                Expr::RefBrack { refr, index, .. } => {
                    keys.push(index.clone());
                    fields.push(static_key(index));
                    node = refr;
                }
                _ => break,
            }
        }
        fields.reverse();
        for key in &keys {
            self.expr(key);
        }
        match node {
            Expr::Var { span: root, .. } if root.text() == "data" => {
                match (fields.first(), fields.get(1)) {
                    (Some(Some(pkg)), Some(Some(name))) if pkg == "ctxgate" => {
                        let name = name.clone();
                        self.read(&name, span);
                    }
                    (Some(Some(pkg)), _) if pkg != "ctxgate" => {}
                    _ => self.read_all(span),
                }
            }
            root => self.expr(root),
        }
    }

    fn read(&mut self, name: &str, span: &regorus::unstable::Span) {
        self.out
            .reads
            .entry(name.to_string())
            .or_insert_with(|| Self::place(span));
    }

    fn read_all(&mut self, span: &regorus::unstable::Span) {
        if self.out.reads_all.is_none() {
            self.out.reads_all = Some(Self::place(span));
        }
    }
}

/// A bracket key known before evaluation: a string literal.
fn static_key(index: &Expr) -> Option<String> {
    match index {
        Expr::String { value, .. } | Expr::RawString { value, .. } => match value {
            Value::String(s) => Some(s.to_string()),
            _ => None,
        },
        _ => None,
    }
}

/// `a.b.c` (dots and string keys only) as its segments.
fn chain(expr: &Expr) -> Option<Vec<String>> {
    match expr {
        Expr::Var { span, .. } => Some(vec![span.text().to_string()]),
        Expr::RefDot { refr, field, .. } => {
            let mut out = chain(refr)?;
            out.push(field.0.text().to_string());
            Some(out)
        }
        Expr::RefBrack { refr, index, .. } => {
            let mut out = chain(refr)?;
            out.push(static_key(index)?);
            Some(out)
        }
        _ => None,
    }
}

/// A rule head's name: its reference's first segment.
fn first_name(refr: &Expr) -> Option<String> {
    root(refr).map(str::to_string)
}

/// Refuses `files` when one defines a built-in's name (test files are
/// left out).
pub(crate) fn check_builtins(files: &[PolicyFile]) -> Result<()> {
    let facts = facts_of(&policy_only(files))?;
    match shadowed_builtin(facts.iter().map(|(n, f)| (n.as_str(), f))) {
        Some(err) => Err(err),
        None => Ok(()),
    }
}

/// Refuses `files`, each in the layer `layer_of` gives it, when one
/// defines a built-in's name or a later layer changes what an earlier
/// one's rules mean (test files are left out).
pub(crate) fn check_layers(files: &[PolicyFile], layer_of: &BTreeMap<String, usize>) -> Result<()> {
    let facts = facts_of(&policy_only(files))?;
    if let Some(err) = shadowed_builtin(facts.iter().map(|(n, f)| (n.as_str(), f))) {
        return Err(err);
    }
    let count = layer_of.values().copied().max().map_or(0, |m| m + 1);
    let mut layers: Vec<Vec<&Facts>> = vec![Vec::new(); count];
    for (name, f) in &facts {
        if let Some(&layer) = layer_of.get(name) {
            layers[layer].push(f);
        }
    }
    match layer_conflict(&layers) {
        Some(err) => Err(err),
        None => Ok(()),
    }
}

fn policy_only(files: &[PolicyFile]) -> Vec<PolicyFile> {
    files.iter().filter(|f| !f.is_test()).cloned().collect()
}
