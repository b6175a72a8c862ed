//! The input space `policy diff` explores: what the rules of both policies
//! read of the input (`input.action`, `input.app`, `input.element`,
//! `input.inside`), found on regorus's parsed modules, and the literals
//! they compare each field with. [`reads`] gathers them; [`Reads`] turns
//! them into candidate values per field, one per class of values the
//! rules cannot tell apart ("each literal, and one value no rule names").
//!
//! What this cannot enumerate — a regex or another builtin on a read value,
//! an ordering or arithmetic on one, two read values compared, `walk`,
//! `with`, data not from the input, a read value given to a function — is
//! an [`Undecided`] naming the rule; the diff does not answer "no change"
//! for a policy with one.

use std::collections::{BTreeMap, BTreeSet};

use regorus::unstable::{BoolOp, Expr, Literal, Parser, Query, Rule, RuleHead, Source};
use serde_json::Value as Json;

use crate::model::Role;
use crate::policy::ast::{parts, root, Part};
use crate::policy::PolicyFile;

/// A field of the input a rule compares with literals.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Leaf {
    /// `input.action.name`.
    Action,
    /// `input.action.target`.
    Target,
    /// `input.app.instance`.
    Instance,
    /// `input.app.protocol`.
    Protocol,
    /// An item of `input.app.title_matches`.
    AppTitle,
    /// `input.element.role`.
    Role,
    /// `input.element.subrole`.
    Subrole,
    /// A state of `input.element` (`focused`, `has_content`, …).
    Flag(String),
    /// An item of `input.element.attribute_names`.
    AttrName,
    /// `input.element.attributes.<name>`.
    Attr(String),
    /// An item of `input.element.title_matches`.
    Title,
    /// An ancestor's role (`input.inside[_].role`).
    InsideRole,
    /// An ancestor's subrole.
    InsideSubrole,
}

/// A part of the input that holds fields.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Path {
    Leaf(Leaf),
    Input,
    ActionObject,
    App,
    Element,
    Attributes,
    Collection(Collection),
    InsideItem,
    /// An index into `input.inside` held in a variable.
    InsideIndex,
    Unknown,
}

/// An array of the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Collection {
    AttributeNames,
    TitleMatches,
    AppTitleMatches,
    Inside,
}

impl Collection {
    fn item(self) -> Path {
        match self {
            Collection::AttributeNames => Path::Leaf(Leaf::AttrName),
            Collection::TitleMatches => Path::Leaf(Leaf::Title),
            Collection::AppTitleMatches => Path::Leaf(Leaf::AppTitle),
            Collection::Inside => Path::InsideItem,
        }
    }
}

/// The states of `input.element`.
pub(crate) const FLAGS: [&str; 7] = [
    "selected",
    "focused",
    "visible",
    "hovered",
    "has_title",
    "has_content",
    "contains_selection",
];

fn step(path: &Path, name: &str) -> Path {
    use Path as P;
    match (path, name) {
        (P::Input, "action") => P::ActionObject,
        (P::Input, "app") => P::App,
        (P::Input, "element") => P::Element,
        (P::Input, "inside") => P::Collection(Collection::Inside),
        (P::ActionObject, "name") => P::Leaf(Leaf::Action),
        (P::ActionObject, "target") => P::Leaf(Leaf::Target),
        (P::App, "instance") => P::Leaf(Leaf::Instance),
        (P::App, "protocol") => P::Leaf(Leaf::Protocol),
        (P::App, "title_matches") => P::Collection(Collection::AppTitleMatches),
        (P::Element, "role") => P::Leaf(Leaf::Role),
        (P::Element, "subrole") => P::Leaf(Leaf::Subrole),
        (P::Element, "attribute_names") => P::Collection(Collection::AttributeNames),
        (P::Element, "attributes") => P::Attributes,
        (P::Element, "title_matches") => P::Collection(Collection::TitleMatches),
        (P::Element, flag) if FLAGS.contains(&flag) => P::Leaf(Leaf::Flag(flag.to_string())),
        (P::Attributes, name) => P::Leaf(Leaf::Attr(name.to_string())),
        (P::InsideItem, "role") => P::Leaf(Leaf::InsideRole),
        (P::InsideItem, "subrole") => P::Leaf(Leaf::InsideSubrole),
        _ => P::Unknown,
    }
}

/// A string builtin with a literal needle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Op {
    Contains,
    StartsWith,
    EndsWith,
}

/// What is done to a value before a substring test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Case {
    AsIs,
    Lower,
    Upper,
}

/// One test a rule makes of a field.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Test {
    /// Equal to one of these (`==`, `!=`, `in {…}`).
    Equals(Vec<Json>),
    /// A substring test.
    Substring(Op, Case, String),
}

impl Test {
    /// Whether `value` passes.
    pub(crate) fn holds(&self, value: &Json) -> bool {
        match self {
            Test::Equals(values) => values.contains(value),
            Test::Substring(op, case, needle) => {
                let Some(text) = value.as_str() else {
                    return false;
                };
                let text = match case {
                    Case::AsIs => text.to_string(),
                    Case::Lower => text.to_lowercase(),
                    Case::Upper => text.to_uppercase(),
                };
                match op {
                    Op::Contains => text.contains(needle.as_str()),
                    Op::StartsWith => text.starts_with(needle.as_str()),
                    Op::EndsWith => text.ends_with(needle.as_str()),
                }
            }
        }
    }
}

/// A rule the diff cannot decide, and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Undecided {
    /// `file:line` of the rule.
    pub place: String,
    /// The rule's name.
    pub rule: String,
    /// What it does that cannot be enumerated.
    pub why: String,
}

/// What the rules of both policies read of the input.
#[derive(Debug, Default, Clone)]
pub(crate) struct Reads {
    /// The tests per field; a field read without a test has an empty list.
    pub tests: BTreeMap<Leaf, Vec<Test>>,
    /// The numbers `count(…)` of each array is compared with.
    pub counts: BTreeMap<Collection, BTreeSet<i64>>,
    /// The literal indexes of `input.inside[k]`.
    pub inside_indexes: BTreeSet<usize>,
    /// Whether `input.inside` is read at all.
    pub inside: bool,
    /// Whether a rule computes a `strip` name from the input.
    pub computed_strip: bool,
    /// What cannot be enumerated.
    pub undecided: Vec<Undecided>,
    /// Per rule name: the fields its definitions read themselves.
    pub rule_leaves: BTreeMap<String, BTreeSet<Leaf>>,
    /// Per rule name: whether its definitions read `input.inside`.
    pub rule_inside: BTreeSet<String>,
    /// Per rule name: the rules its definitions refer to.
    pub rule_refs: BTreeMap<String, BTreeSet<String>>,
}

impl Reads {
    /// Whether a field is read.
    pub(crate) fn reads(&self, leaf: &Leaf) -> bool {
        self.tests.contains_key(leaf)
    }

    /// The tests of a field.
    pub(crate) fn tests_of(&self, leaf: &Leaf) -> &[Test] {
        self.tests.get(leaf).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The fields `rule` reads, through every rule it refers to, and
    /// whether it reads `input.inside`.
    pub(crate) fn deps(&self, rule: &str) -> (BTreeSet<Leaf>, bool) {
        let mut leaves = BTreeSet::new();
        let mut inside = false;
        let mut seen = BTreeSet::new();
        let mut stack = vec![rule.to_string()];
        while let Some(name) = stack.pop() {
            if !seen.insert(name.clone()) {
                continue;
            }
            if let Some(l) = self.rule_leaves.get(&name) {
                leaves.extend(l.iter().cloned());
            }
            inside |= self.rule_inside.contains(&name);
            if let Some(refs) = self.rule_refs.get(&name) {
                stack.extend(refs.iter().cloned());
            }
        }
        (leaves, inside)
    }

    /// The attribute names read by value (`attributes.x`).
    pub(crate) fn attribute_values(&self) -> Vec<String> {
        self.tests
            .keys()
            .filter_map(|l| match l {
                Leaf::Attr(name) => Some(name.clone()),
                _ => None,
            })
            .collect()
    }

    /// The strings a field is compared with or tested for.
    pub(crate) fn strings(&self, leaf: &Leaf) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for test in self.tests_of(leaf) {
            match test {
                Test::Equals(values) => {
                    out.extend(values.iter().filter_map(|v| v.as_str().map(str::to_string)))
                }
                Test::Substring(_, _, needle) => {
                    out.insert(needle.clone());
                }
            }
        }
        out
    }

    /// One value per class the tests of `leaf` tell apart, among each
    /// literal and needle, the needles together, and `other`; `extra`
    /// tells classes apart too (the floor, for a subrole). With
    /// `absent`, `None` (the field missing) is one of them.
    pub(crate) fn candidates(
        &self,
        leaf: &Leaf,
        other: Json,
        absent: bool,
        extra: &dyn Fn(&Json) -> bool,
    ) -> Vec<Option<Json>> {
        let tests = self.tests_of(leaf);
        let mut pool: Vec<Json> = Vec::new();
        let mut needles = Vec::new();
        for test in tests {
            match test {
                Test::Equals(values) => pool.extend(values.iter().cloned()),
                Test::Substring(_, _, needle) => {
                    pool.push(Json::String(needle.clone()));
                    needles.push(needle.clone());
                }
            }
        }
        if needles.len() > 1 {
            pool.push(Json::String(needles.join("-")));
        }
        pool.push(other);
        let mut out: Vec<Option<Json>> = Vec::new();
        if absent {
            out.push(None);
        }
        let mut seen: BTreeSet<Vec<bool>> = BTreeSet::new();
        for value in pool {
            let mut class: Vec<bool> = tests.iter().map(|t| t.holds(&value)).collect();
            class.push(extra(&value));
            if seen.insert(class) {
                out.push(Some(value));
            }
        }
        out
    }

    /// Role words to try for a role field: each role the rules name, and
    /// one they do not.
    pub(crate) fn roles(&self, leaf: &Leaf) -> Vec<Role> {
        let mut out: Vec<Role> = self
            .strings(leaf)
            .iter()
            .filter_map(|w| Role::from_word(w))
            .collect();
        out.dedup();
        let other = Role::ALL
            .into_iter()
            .find(|r| !out.contains(r) && *r != Role::Application)
            .unwrap_or(Role::Group);
        if !out.contains(&other) {
            out.push(other);
        }
        out
    }
}

/// What the rules of `files` (tests excluded) read, per rule and in all,
/// with what cannot be enumerated, added to `out`.
pub(crate) fn reads(files: &[&PolicyFile], out: &mut Reads) {
    let mut modules = Vec::new();
    for file in files.iter().filter(|f| !f.is_test()) {
        let module = Source::from_contents(file.name.clone(), file.source.clone()).and_then(|s| {
            let mut parser = Parser::new(&s)?;
            parser.enable_rego_v1()?;
            parser.parse()
        });
        match module {
            Ok(module) => modules.push((file, module)),
            Err(e) => out.undecided.push(Undecided {
                place: file.name.clone(),
                rule: String::new(),
                why: format!("it does not parse for the diff: {e}"),
            }),
        }
    }
    let names: BTreeSet<String> = modules
        .iter()
        .flat_map(|(_, m)| m.policy.iter().map(|r| rule_name(r)))
        .collect();
    for (file, module) in &modules {
        for import in &module.imports {
            let text = import.refr.span().text().to_string();
            if !(text == "rego.v1" || text.starts_with("future.") || text == "data.ctxgate") {
                out.undecided.push(Undecided {
                    place: format!("{}:{}", file.name, import.span.line),
                    rule: String::new(),
                    why: format!("`import {text}`: the diff follows `input` only by its name"),
                });
            }
        }
        for rule in &module.policy {
            let mut analyzer = Analyzer {
                reads: out,
                vars: BTreeMap::new(),
                place: format!("{}:{}", file.name, rule.span().line),
                rule: rule_name(rule),
                names: &names,
                found: Vec::new(),
            };
            analyzer.rule(rule);
            let Analyzer {
                found, place, rule, ..
            } = analyzer;
            for why in found {
                let undecided = Undecided {
                    place: place.clone(),
                    rule: rule.clone(),
                    why,
                };
                if !out.undecided.contains(&undecided) {
                    out.undecided.push(undecided);
                }
            }
        }
    }
    out.undecided.sort();
}

fn rule_name(rule: &Rule) -> String {
    let refr = match rule {
        Rule::Spec { head, .. } => match head {
            RuleHead::Compr { refr, .. }
            | RuleHead::Set { refr, .. }
            | RuleHead::Func { refr, .. } => refr,
        },
        Rule::Default { refr, .. } => refr,
    };
    let text = refr.span().text();
    let text = text.strip_prefix("data.ctxgate.").unwrap_or(text);
    text.split(['.', '[']).next().unwrap_or(text).to_string()
}

/// What a variable holds.
#[derive(Debug, Clone)]
enum Bound {
    Path(Path),
    Literals(Vec<Json>),
}

struct Analyzer<'r> {
    reads: &'r mut Reads,
    vars: BTreeMap<String, Bound>,
    place: String,
    rule: String,
    names: &'r BTreeSet<String>,
    found: Vec<String>,
}

/// A called function's name as written (`count`, `regex.match`).
fn function_name(fcn: &Expr) -> String {
    match fcn {
        Expr::Var { value, .. } => value.as_string().map(|s| s.to_string()).unwrap_or_default(),
        Expr::RefDot { refr, field, .. } => format!(
            "{}.{}",
            function_name(refr),
            field
                .1
                .as_string()
                .map(|s| s.to_string())
                .unwrap_or_default()
        ),
        _ => String::new(),
    }
}

fn json(value: &regorus::Value) -> Json {
    serde_json::to_value(value).unwrap_or(Json::Null)
}

impl Analyzer<'_> {
    fn undecided(&mut self, why: String) {
        if !self.found.contains(&why) {
            self.found.push(why);
        }
    }

    fn refer(&mut self, name: &str) {
        if self.names.contains(name) {
            self.reads
                .rule_refs
                .entry(self.rule.clone())
                .or_default()
                .insert(name.to_string());
        }
    }

    fn record(&mut self, leaf: Leaf, test: Option<Test>) {
        self.reads
            .rule_leaves
            .entry(self.rule.clone())
            .or_default()
            .insert(leaf.clone());
        let tests = self.reads.tests.entry(leaf).or_default();
        if let Some(test) = test {
            if !tests.contains(&test) {
                tests.push(test);
            }
        }
    }

    fn rule(&mut self, rule: &Rule) {
        match rule {
            Rule::Spec { head, bodies, .. } => {
                let (refr, key, assign) = match head {
                    RuleHead::Compr { refr, assign, .. } => (refr, None, assign.as_ref()),
                    RuleHead::Set { refr, key, .. } => (refr, key.as_ref(), None),
                    RuleHead::Func { refr, assign, .. } => (refr, None, assign.as_ref()),
                };
                if self.rule == "strip" {
                    // `strip` is asked only of an element with attributes:
                    // the names are read, whatever the rule tests.
                    self.record(Leaf::AttrName, None);
                }
                let head = |this: &mut Self, value: Option<&Expr>| {
                    // `x[k] := …`: the keys of the head are expressions too.
                    let mut at: &Expr = refr;
                    while let Expr::RefDot { refr, .. } | Expr::RefBrack { refr, .. } = at {
                        if let Expr::RefBrack { index, .. } = at {
                            this.generic(index);
                        }
                        at = refr;
                    }
                    if let Some(key) = key {
                        this.head_key(key);
                    }
                    if let Some(value) = value {
                        this.value(value);
                    }
                };
                if bodies.is_empty() {
                    head(self, assign.map(|a| &*a.value));
                }
                for body in bodies {
                    self.vars.clear();
                    self.query(&body.query);
                    let value = body.assign.as_ref().or(assign).map(|a| &*a.value);
                    head(self, value);
                }
            }
            Rule::Default { value, .. } => self.value(value),
        }
    }

    /// A set rule's member: a name read from the input (a computed `strip`
    /// name) is the input's own value, sent back; it reads no more.
    fn head_key(&mut self, key: &Expr) {
        if let Some(path) = self.path(key) {
            if matches!(path, Path::Leaf(Leaf::AttrName)) && self.rule == "strip" {
                self.reads.computed_strip = true;
                self.record(Leaf::AttrName, None);
                return;
            }
            self.undecided(format!(
                "its value is `{}`, read from the input",
                key.span().text()
            ));
            return;
        }
        // A name `strip` removes is explored on an element that has it.
        if self.rule == "strip" {
            if let Some(names) = self.literals(key) {
                self.record(Leaf::AttrName, Some(Test::Equals(names)));
                return;
            }
        }
        self.value(key);
    }

    /// A rule's value: literals, or anything not read from the input.
    fn value(&mut self, expr: &Expr) {
        self.generic(expr);
    }

    fn query(&mut self, query: &Query) {
        for stmt in &query.stmts {
            if !stmt.with_mods.is_empty() {
                self.undecided("`with` replaces what the diff explores".to_string());
            }
            match &stmt.literal {
                Literal::SomeVars { .. } => {}
                Literal::SomeIn {
                    key,
                    value,
                    collection,
                    ..
                } => self.bind_in(key.as_deref(), value, collection),
                Literal::Expr { expr, .. } | Literal::NotExpr { expr, .. } => self.condition(expr),
                Literal::Every {
                    key,
                    value,
                    domain,
                    query,
                    ..
                } => {
                    let name = value.text().to_string();
                    self.bind_name(key.as_ref().map(|k| k.text().to_string()), name, domain);
                    self.query(query);
                }
            }
        }
    }

    fn bind_in(&mut self, key: Option<&Expr>, value: &Expr, collection: &Expr) {
        let key_name = key.and_then(|k| match k {
            Expr::Var { value, .. } => value.as_string().ok().map(|s| s.to_string()),
            _ => None,
        });
        match value {
            Expr::Var { value: name, .. } => {
                let name = name.as_string().map(|s| s.to_string()).unwrap_or_default();
                self.bind_name(key_name, name, collection);
            }
            other => {
                self.generic(other);
                self.generic(collection);
            }
        }
    }

    fn bind_name(&mut self, key: Option<String>, name: String, collection: &Expr) {
        match self.path(collection) {
            Some(Path::Collection(c)) => {
                self.note_collection(c);
                if let Some(key) = key {
                    self.vars.insert(key, Bound::Path(Path::InsideIndex));
                }
                self.vars.insert(name, Bound::Path(c.item()));
            }
            Some(_) => self.generic(collection),
            None => match self.literals(collection) {
                Some(values) => {
                    self.vars.insert(name, Bound::Literals(values));
                }
                None => self.generic(collection),
            },
        }
    }

    fn note_collection(&mut self, c: Collection) {
        match c {
            Collection::Inside => {
                self.reads.inside = true;
                self.reads.rule_inside.insert(self.rule.clone());
            }
            Collection::AttributeNames => self.record(Leaf::AttrName, None),
            Collection::TitleMatches => self.record(Leaf::Title, None),
            Collection::AppTitleMatches => self.record(Leaf::AppTitle, None),
        }
    }

    /// The input path `expr` names, if it is one (through variables).
    fn path(&mut self, expr: &Expr) -> Option<Path> {
        match expr {
            Expr::Var { value, .. } => {
                let name = value.as_string().ok()?;
                if &**name == "input" {
                    return Some(Path::Input);
                }
                match self.vars.get(&**name) {
                    Some(Bound::Path(p)) => Some(p.clone()),
                    _ => None,
                }
            }
            Expr::RefDot { refr, field, .. } => {
                let base = self.path(refr)?;
                let name = field.1.as_string().ok()?;
                Some(step(&base, name))
            }
            Expr::RefBrack { refr, index, .. } => {
                let base = self.path(refr)?;
                match (&base, &**index) {
                    (_, Expr::String { value, .. } | Expr::RawString { value, .. })
                        if !matches!(base, Path::Collection(_)) =>
                    {
                        Some(step(&base, value.as_string().ok()?))
                    }
                    (Path::Collection(c), Expr::Number { value, .. }) => {
                        let c = *c;
                        if c == Collection::Inside {
                            let k = value.as_u64().ok().unwrap_or(0) as usize;
                            self.reads.inside_indexes.insert(k);
                        }
                        self.note_collection(c);
                        Some(c.item())
                    }
                    (Path::Collection(c), Expr::Var { value, .. }) => {
                        let c = *c;
                        let bound = value
                            .as_string()
                            .ok()
                            .map(|n| &**n == "_" || !self.vars.contains_key(&**n))
                            .unwrap_or(false);
                        if !bound {
                            self.undecided(format!(
                                "it indexes `{}` with a computed index",
                                refr.span().text()
                            ));
                        }
                        self.note_collection(c);
                        Some(c.item())
                    }
                    _ => Some(Path::Unknown),
                }
            }
            _ => None,
        }
    }

    /// The literal values `expr` is: a constant, a set or array of them, or
    /// a variable bound to them.
    fn literals(&self, expr: &Expr) -> Option<Vec<Json>> {
        match expr {
            Expr::String { value, .. }
            | Expr::RawString { value, .. }
            | Expr::Number { value, .. }
            | Expr::Bool { value, .. }
            | Expr::Null { value, .. } => Some(vec![json(value)]),
            Expr::Set { items, .. } | Expr::Array { items, .. } => {
                let mut out = Vec::new();
                for item in items {
                    out.extend(self.literals(item)?);
                }
                Some(out)
            }
            Expr::Var { value, .. } => match self.vars.get(&**value.as_string().ok()?) {
                Some(Bound::Literals(values)) => Some(values.clone()),
                _ => None,
            },
            _ => None,
        }
    }

    fn leaf(&mut self, expr: &Expr) -> Option<Leaf> {
        match self.path(expr) {
            Some(Path::Leaf(leaf)) => Some(leaf),
            _ => None,
        }
    }

    /// A count of an input array.
    fn count_of(&mut self, expr: &Expr) -> Option<Collection> {
        let Expr::Call { fcn, params, .. } = expr else {
            return None;
        };
        if function_name(fcn) != "count" || params.len() != 1 {
            return None;
        }
        match self.path(&params[0]) {
            Some(Path::Collection(c)) => Some(c),
            _ => None,
        }
    }

    fn condition(&mut self, expr: &Expr) {
        match expr {
            Expr::BoolExpr { op, lhs, rhs, .. } => self.compare(op, lhs, rhs),
            Expr::AssignExpr { op, lhs, rhs, .. } => {
                if let Expr::Var { value, .. } = &**lhs {
                    let name = value.as_string().map(|s| s.to_string()).unwrap_or_default();
                    if !self.vars.contains_key(&name) && name != "input" {
                        match self.path(rhs) {
                            Some(path) => {
                                self.vars.insert(name, Bound::Path(path));
                                return;
                            }
                            None => {
                                if let Some(values) = self.literals(rhs) {
                                    self.vars.insert(name, Bound::Literals(values));
                                    return;
                                }
                            }
                        }
                        self.generic(rhs);
                        return;
                    }
                }
                let _ = op;
                self.compare(&BoolOp::Eq, lhs, rhs);
            }
            Expr::Membership {
                key: None,
                value,
                collection,
                ..
            } => {
                if let (Some(leaf), Some(values)) = (self.leaf(value), self.literals(collection)) {
                    self.record(leaf, Some(Test::Equals(values)));
                    return;
                }
                if let Some(values) = self.literals(value) {
                    if let Some(Path::Collection(c)) = self.path(collection) {
                        self.note_collection(c);
                        if let Path::Leaf(leaf) = c.item() {
                            self.record(leaf, Some(Test::Equals(values)));
                            return;
                        }
                    }
                }
                self.generic(value);
                self.generic(collection);
            }
            Expr::Call { fcn, params, .. } => {
                let name = function_name(fcn);
                let op = match name.as_str() {
                    "contains" => Some(Op::Contains),
                    "startswith" => Some(Op::StartsWith),
                    "endswith" => Some(Op::EndsWith),
                    _ => None,
                };
                if let (Some(op), [haystack, needle]) = (op, params.as_slice()) {
                    let (case, inner) = match &**haystack {
                        Expr::Call { fcn, params, .. } if params.len() == 1 => {
                            match function_name(fcn).as_str() {
                                "lower" => (Case::Lower, &params[0]),
                                "upper" => (Case::Upper, &params[0]),
                                _ => (Case::AsIs, haystack),
                            }
                        }
                        _ => (Case::AsIs, haystack),
                    };
                    if let (Some(leaf), Some(needles)) = (self.leaf(inner), self.literals(needle)) {
                        if needles.iter().all(Json::is_string) {
                            for n in needles {
                                let n = n.as_str().unwrap_or_default().to_string();
                                self.record(leaf.clone(), Some(Test::Substring(op, case, n)));
                            }
                            return;
                        }
                    }
                }
                self.generic(expr);
            }
            other => {
                match self.path(other) {
                    // Truthiness or definedness.
                    Some(Path::Leaf(leaf)) => self.record(leaf, None),
                    Some(Path::Collection(c)) => self.note_collection(c),
                    _ => self.generic(other),
                }
            }
        }
    }

    fn compare(&mut self, op: &BoolOp, lhs: &Expr, rhs: &Expr) {
        let equality = matches!(op, BoolOp::Eq | BoolOp::Ne);
        for (a, b) in [(lhs, rhs), (rhs, lhs)] {
            if let Some(c) = self.count_of(a) {
                if let Some(values) = self.literals(b) {
                    if let Some(n) = values.iter().map(Json::as_i64).collect::<Option<Vec<_>>>() {
                        self.note_collection(c);
                        // Ancestor chains are built to any length; the
                        // other arrays hold the names explored, so only
                        // whether one is empty is enumerated.
                        if c != Collection::Inside && n.iter().any(|n| *n != 0) {
                            self.undecided(format!(
                                "it compares `{}` with a count other than 0",
                                a.span().text()
                            ));
                        }
                        self.reads.counts.entry(c).or_default().extend(n);
                        return;
                    }
                }
            }
            if let Some(leaf) = self.leaf(a) {
                if let Some(values) = self.literals(b) {
                    if equality {
                        self.record(leaf, Some(Test::Equals(values)));
                    } else {
                        self.undecided(format!("it orders `{}` against a number", a.span().text()));
                    }
                    return;
                }
            }
        }
        self.generic(lhs);
        self.generic(rhs);
    }

    /// Any other expression: it may use rules, literals and builtins on
    /// values not read from the input; an input path here is undecided.
    fn generic(&mut self, expr: &Expr) {
        if let Some(path) = self.path(expr) {
            let what = match path {
                Path::InsideIndex => "an ancestor's index".to_string(),
                _ => format!("`{}`", expr.span().text()),
            };
            self.undecided(format!(
                "it reads {what} in a way the diff cannot enumerate"
            ));
            return;
        }
        match expr {
            Expr::Var { value, .. } => {
                if let Ok(name) = value.as_string() {
                    self.refer(&name.clone());
                }
            }
            Expr::Call { fcn, params, .. } => {
                let name = function_name(fcn);
                self.refer(name.strip_prefix("data.ctxgate.").unwrap_or(&name));
                if name == "walk" {
                    self.undecided("it calls `walk`".to_string());
                }
                let reads_input = params.iter().any(|p| self.reads_input(p));
                if reads_input {
                    self.undecided(format!("it calls `{name}` on a value read from the input"));
                } else {
                    for p in params {
                        self.generic(p);
                    }
                }
            }
            Expr::RefDot { .. } | Expr::RefBrack { .. } if root(expr) == Some("data") => {
                self.data(expr);
                let mut at = expr;
                while let Expr::RefDot { refr, .. } | Expr::RefBrack { refr, .. } = at {
                    if let Expr::RefBrack { index, .. } = at {
                        self.generic(index);
                    }
                    at = refr;
                }
            }
            _ => match parts(expr) {
                Some(parts) => {
                    for part in parts {
                        match part {
                            Part::Expr(e) => self.generic(e),
                            Part::Query(q) => self.query(q),
                        }
                    }
                }
                None => self.undecided(format!(
                    "`{}` is an expression the diff does not know",
                    expr.span().text()
                )),
            },
        }
    }

    /// `data.x` other than the package's own rules.
    fn data(&mut self, expr: &Expr) {
        let text = expr.span().text().to_string();
        if let Some(rest) = text.strip_prefix("data.ctxgate.") {
            let name = rest.split(['.', '[']).next().unwrap_or(rest);
            self.refer(name);
            if !self.names.contains(name) {
                self.undecided(format!("it reads `{text}`, which the diff cannot follow"));
            }
        } else if text == "data"
            || text == "data.ctxgate"
            || text.starts_with("data.")
            || text.starts_with("data[")
        {
            self.undecided(format!("it reads `{text}`, data not from the input"));
        }
    }

    /// Whether anything in `expr` is read from the input.
    fn reads_input(&mut self, expr: &Expr) -> bool {
        if self.path(expr).is_some() {
            return true;
        }
        match expr {
            Expr::Array { items, .. } | Expr::Set { items, .. } => {
                items.iter().any(|i| self.reads_input(i))
            }
            Expr::Object { fields, .. } => fields
                .iter()
                .any(|(_, k, v)| self.reads_input(k) || self.reads_input(v)),
            Expr::Call { params, .. } => params.iter().any(|p| self.reads_input(p)),
            Expr::UnaryExpr { expr, .. } => self.reads_input(expr),
            Expr::RefDot { refr, .. } => self.reads_input(refr),
            Expr::RefBrack { refr, index, .. } => self.reads_input(refr) || self.reads_input(index),
            Expr::BinExpr { lhs, rhs, .. }
            | Expr::BoolExpr { lhs, rhs, .. }
            | Expr::ArithExpr { lhs, rhs, .. }
            | Expr::AssignExpr { lhs, rhs, .. } => self.reads_input(lhs) || self.reads_input(rhs),
            Expr::Membership {
                value, collection, ..
            } => self.reads_input(value) || self.reads_input(collection),
            // A comprehension over the input is flagged when walked.
            _ => false,
        }
    }
}
