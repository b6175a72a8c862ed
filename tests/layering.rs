//! The library's module graph follows the layering of ARCHITECTURE.md and
//! has no cycle (as rust-analyzer's tidy tests do), read by parsing the
//! sources with `syn`.
//!
//! The crate is read from `src/lib.rs` down its `mod` declarations, so a
//! module's path is the compiler's: `src/policy/engine.rs` is
//! `crate::policy::engine`, a `mod.rs` is its folder, an inline `mod x { … }`
//! nests. Items under a `#[cfg(…)]` that is false without `test` are not
//! read, wherever they are (and so neither are the files of a
//! `#[cfg(test)] mod …;`, the unit tests in `src/tests/` among them): a unit
//! test may use any layer. Everything else is read, whatever its features.
//!
//! An edge goes from the module a path is written in to the module that
//! defines what the path names. The paths are every leaf of every `use` tree
//! (groups, nested groups, `self`, renames, globs), every path in code, and
//! every `a::b…` in a macro invocation's tokens. A path's first segment is
//! resolved through `crate` (`$crate`), `super` (any number), `self`, a `use`
//! name in scope (the block's or the module's: `use crate as root;`,
//! `use super::x as y;`) or a child module; any other path (std, a
//! dependency, a local) is not the crate's. Its further segments descend
//! through modules and through their `use` names, so a path through a
//! re-export (`crate::Error`) names the module that defines the item; a glob
//! names its module.
//!
//! Checked, each failure naming the file and line of the edge:
//! - every top-level module has a layer in [`LAYERS`], and every edge
//!   between two of them goes to a lower layer;
//! - no path into the crate root names anything but a module or a root
//!   re-export;
//! - inside every module with submodules, the graph of those submodules
//!   (each with everything below it) has no cycle;
//! - the code of a module in [`FACADES`] uses none of its submodules (a
//!   `pub use` of one is a re-export, not a use), so no cycle hides behind it;
//! - `policy`'s authoring tools (`policy::tools`) are used by none of the
//!   rest of `policy`, which only re-exports them;
//! - every `src/**/*.rs` but `main.rs` is read or test-only.
//!
//! Adding a module means placing it in [`LAYERS`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::OnceLock;

use proc_macro2::{Spacing, Span, TokenStream, TokenTree};
use syn::ext::IdentExt;
use syn::punctuated::Punctuated;
use syn::visit::{self, Visit};
use syn::{Attribute, Item, Meta, UseTree, Visibility};

/// Top-level modules, lowest layer first. A module may use modules of lower
/// layers only; modules of one layer do not use one another.
const LAYERS: &[&[&str]] = &[
    // Escaping of provider text for output and diagnostics.
    &["escape"],
    // Letters of other scripts read as the Latin ones they look like.
    &["lookalike"],
    // The secure-text floor: what says an element holds a secret.
    &["floor"],
    // Plain data: findings (which use `escape`) and limits.
    &["finding", "limits"],
    &["error"],
    &["deadline"],
    // The element model; redaction patterns and their application.
    &["model", "redact"],
    // Bytes into an answer; words for messages; writers; the generator.
    &["read", "suggest", "render", "synth"],
    // Conformance (and the one read-then-check composition); importers.
    &["check", "import"],
    &["policy"],
    &["tokens"],
    &["trim"],
    // The library's front door; the wire form of requests, results and
    // errors, which every front end and binding shares.
    &["gate", "wire"],
    // The command line may use every module; the benches' door to the
    // stages (feature `internals`) uses the stages. Nothing uses either.
    &["cli", "internals"],
];

/// The authoring tools (lint, docs, probes, test runner): they may use the
/// policy runtime, the runtime never uses them.
const POLICY_TOOLS: &str = "policy::tools";

/// Modules whose own code uses none of their submodules: they declare and
/// re-export them. Their submodules' graph is then the whole of theirs, so
/// no cycle hides behind the facade.
const FACADES: &[&str] = &["policy"];

/// Edges (from, to, why) that break a check today and are let through; any
/// other fails, and so does an entry that is no longer an edge.
const TOLERATED: &[(&str, &str, &str)] = &[];

/// A module's path below the crate root; `[]` is the root.
type ModPath = Vec<String>;

fn show(module: &[String]) -> String {
    if module.is_empty() {
        "crate".to_string()
    } else {
        module.join("::")
    }
}

fn under(module: &[String], ancestor: &[String]) -> bool {
    module.starts_with(ancestor)
}

fn name(ident: &proc_macro2::Ident) -> String {
    ident.unraw().to_string()
}

fn line(span: Span) -> usize {
    span.start().line
}

// ---------------------------------------------------------------- cfg(test)

/// Whether `attrs` hold a `#[cfg(…)]` that is false whenever `test` is off:
/// the item exists only in the unit-test build.
fn test_only(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<Meta>()
                .is_ok_and(|m| cfg_without_test(&m) == Some(false))
    })
}

/// A cfg predicate's value with `test` off; `None` when it depends on
/// something else (a feature, the target).
fn cfg_without_test(predicate: &Meta) -> Option<bool> {
    let Meta::List(list) = predicate else {
        return predicate.path().is_ident("test").then_some(false);
    };
    let args = list
        .parse_args_with(Punctuated::<Meta, syn::Token![,]>::parse_terminated)
        .ok()?;
    let values: Vec<Option<bool>> = args.iter().map(cfg_without_test).collect();
    if list.path.is_ident("not") {
        values.first().copied().flatten().map(|v| !v)
    } else if list.path.is_ident("all") {
        if values.contains(&Some(false)) {
            Some(false)
        } else {
            values.iter().all(|v| *v == Some(true)).then_some(true)
        }
    } else if list.path.is_ident("any") {
        if values.contains(&Some(true)) {
            Some(true)
        } else {
            values.iter().all(|v| *v == Some(false)).then_some(false)
        }
    } else {
        None
    }
}

fn item_attrs(item: &Item) -> &[Attribute] {
    match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::ExternCrate(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::ForeignMod(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::TraitAlias(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Union(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

fn impl_item_attrs(item: &syn::ImplItem) -> &[Attribute] {
    match item {
        syn::ImplItem::Const(i) => &i.attrs,
        syn::ImplItem::Fn(i) => &i.attrs,
        syn::ImplItem::Type(i) => &i.attrs,
        syn::ImplItem::Macro(i) => &i.attrs,
        _ => &[],
    }
}

fn trait_item_attrs(item: &syn::TraitItem) -> &[Attribute] {
    match item {
        syn::TraitItem::Const(i) => &i.attrs,
        syn::TraitItem::Fn(i) => &i.attrs,
        syn::TraitItem::Type(i) => &i.attrs,
        syn::TraitItem::Macro(i) => &i.attrs,
        _ => &[],
    }
}

// ---------------------------------------------------------------- paths

/// One leaf of a `use` tree: the path it names and the name it binds
/// (`None` for a glob or `as _`).
struct Leaf {
    path: Vec<String>,
    binds: Option<String>,
    span: Span,
}

fn use_leaves(tree: &UseTree, prefix: &mut Vec<String>, out: &mut Vec<Leaf>) {
    let mut leaf = |ident: &proc_macro2::Ident, binds: Option<String>| {
        let mut path = prefix.clone();
        if ident != "self" {
            path.push(name(ident));
        }
        out.push(Leaf {
            path,
            binds,
            span: ident.span(),
        });
    };
    match tree {
        UseTree::Path(p) => {
            prefix.push(name(&p.ident));
            use_leaves(&p.tree, prefix, out);
            prefix.pop();
        }
        UseTree::Name(n) => {
            let binds = if n.ident == "self" {
                prefix.last().cloned()
            } else {
                Some(name(&n.ident))
            };
            leaf(&n.ident, binds);
        }
        UseTree::Rename(r) => {
            let binds = (r.rename != "_").then(|| name(&r.rename));
            leaf(&r.ident, binds);
        }
        UseTree::Glob(g) => out.push(Leaf {
            path: prefix.clone(),
            binds: None,
            span: g.star_token.span,
        }),
        UseTree::Group(g) => {
            for tree in &g.items {
                use_leaves(tree, prefix, out);
            }
        }
    }
}

/// The names a list of items binds by `use` (test-only ones excepted).
fn use_names<'i>(items: impl Iterator<Item = &'i Item>) -> BTreeMap<String, Vec<String>> {
    let mut names = BTreeMap::new();
    for item in items {
        if let Item::Use(u) = item {
            if !test_only(&u.attrs) {
                let mut leaves = Vec::new();
                use_leaves(&u.tree, &mut Vec::new(), &mut leaves);
                for leaf in leaves {
                    if let Some(binds) = leaf.binds {
                        names.insert(binds, leaf.path);
                    }
                }
            }
        }
    }
    names
}

fn path_separator(tokens: &[TokenTree], at: usize) -> bool {
    matches!(
        (tokens.get(at), tokens.get(at + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':'
    )
}

/// The `a::b…` paths in a macro's tokens, with their first segment's span.
/// A path after `::` is the tail of another; `$x::…` is a macro variable's,
/// but `$crate::…` is the crate's.
fn token_paths(tokens: TokenStream, out: &mut Vec<(Vec<String>, Span)>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Group(g) => token_paths(g.stream(), out),
            TokenTree::Ident(first) => {
                let tail = i >= 2 && path_separator(&tokens, i - 2);
                let variable = i >= 1
                    && matches!(&tokens[i - 1], TokenTree::Punct(p) if p.as_char() == '$')
                    && first != "crate";
                let mut path = vec![name(first)];
                let mut next = i + 1;
                while path_separator(&tokens, next) {
                    let Some(TokenTree::Ident(segment)) = tokens.get(next + 2) else {
                        break;
                    };
                    path.push(name(segment));
                    next += 3;
                }
                if path.len() > 1 && !tail && !variable {
                    out.push((path, first.span()));
                }
                i = next;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
}

// ---------------------------------------------------------------- the crate

/// What paths into a module resolve through.
#[derive(Default)]
struct Module {
    children: BTreeSet<String>,
    /// Names its `use` items bind → the path as written.
    names: BTreeMap<String, Vec<String>>,
}

/// One edge, where it is made.
struct Edge {
    from: ModPath,
    to: ModPath,
    /// The path as written.
    path: String,
    file: String,
    line: usize,
    /// A `pub use` at module level.
    reexport: bool,
}

impl Edge {
    fn pair(&self) -> (String, String) {
        (show(&self.from), show(&self.to))
    }

    fn place(&self) -> String {
        format!("`{}` (src/{}:{})", self.path, self.file, self.line)
    }

    fn describe(&self) -> String {
        format!(
            "{} -> {}: {}",
            show(&self.from),
            show(&self.to),
            self.place()
        )
    }
}

/// The library as read: its modules, its edges, and which files were read.
struct Library {
    modules: BTreeMap<ModPath, Module>,
    edges: Vec<Edge>,
    read: Vec<String>,
    test_only: Vec<String>,
}

/// A crate's sources by path below `src/`.
type Sources<'s> = &'s dyn Fn(&str) -> Option<String>;

impl Library {
    fn load(sources: Sources) -> Library {
        let mut library = Library {
            modules: BTreeMap::new(),
            edges: Vec::new(),
            read: Vec::new(),
            test_only: Vec::new(),
        };
        let mut files = Vec::new();
        let text = sources("lib.rs").expect("src/lib.rs");
        library.load_file(sources, "lib.rs", &text, Vec::new(), false, &mut files);
        for (file, module, ast) in &files {
            let mut edges = Edges {
                library: &library,
                file,
                module: module.clone(),
                blocks: Vec::new(),
                out: Vec::new(),
            };
            edges.visit_file(ast);
            let found = edges.out;
            library.edges.extend(found);
        }
        library
    }

    /// Parses `rel` as `module` and declares it; a file that is not
    /// test-only joins `files` to be read for edges.
    fn load_file(
        &mut self,
        sources: Sources,
        rel: &str,
        text: &str,
        module: ModPath,
        test: bool,
        files: &mut Vec<(String, ModPath, syn::File)>,
    ) {
        let ast = syn::parse_file(text).unwrap_or_else(|e| panic!("src/{rel}: {e}"));
        // `lib.rs` and `mod.rs` hold their folder's children; `x.rs`, `x/`'s.
        let dir = match rel.rsplit_once('/') {
            _ if rel == "lib.rs" => String::new(),
            Some((dir, "mod.rs")) => format!("{dir}/"),
            _ => format!("{}/", rel.trim_end_matches(".rs")),
        };
        self.declare(sources, &dir, &module, &ast.items, test, files);
        if test {
            self.test_only.push(rel.to_string());
        } else {
            self.read.push(rel.to_string());
            files.push((rel.to_string(), module, ast));
        }
    }

    /// Records a module's children and `use` names, and loads its
    /// submodules' files from `dir`.
    fn declare(
        &mut self,
        sources: Sources,
        dir: &str,
        module: &ModPath,
        items: &[Item],
        test: bool,
        files: &mut Vec<(String, ModPath, syn::File)>,
    ) {
        let mut children = BTreeSet::new();
        for item in items {
            let Item::Mod(m) = item else { continue };
            assert!(
                !m.attrs.iter().any(|a| a.path().is_ident("path")),
                "src/{dir}: `#[path]` on `mod {}`: not followed by this test",
                m.ident
            );
            let child_test = test || test_only(&m.attrs);
            let child_name = name(&m.ident);
            let mut child = module.clone();
            child.push(child_name.clone());
            if !child_test {
                children.insert(child_name.clone());
            }
            match &m.content {
                Some((_, inner)) => {
                    let inner_dir = format!("{dir}{child_name}/");
                    self.declare(sources, &inner_dir, &child, inner, child_test, files);
                }
                None => {
                    let (rel, text) = [
                        format!("{dir}{child_name}.rs"),
                        format!("{dir}{child_name}/mod.rs"),
                    ]
                    .into_iter()
                    .find_map(|rel| sources(&rel).map(|text| (rel, text)))
                    .unwrap_or_else(|| panic!("no file for `mod {child_name}` in src/{dir}"));
                    self.load_file(sources, &rel, &text, child, child_test, files);
                }
            }
        }
        if !test {
            let names = use_names(items.iter().filter(|i| !test_only(item_attrs(i))));
            self.modules
                .insert(module.clone(), Module { children, names });
        }
    }

    /// The crate-absolute path `segments` names, written in `module` inside
    /// `blocks` (innermost last), or `None` if it is not the crate's. A
    /// `use std;`-like name resolves through itself until `depth` gives up.
    fn absolute(
        &self,
        module: &[String],
        blocks: &[BTreeMap<String, Vec<String>>],
        segments: &[String],
        depth: u8,
    ) -> Option<Vec<String>> {
        let (first, rest) = segments.split_first()?;
        let (mut at, rest) = match first.as_str() {
            "crate" | "$crate" => (Vec::new(), rest),
            "self" => (module.to_vec(), rest),
            "super" => {
                let ups = segments.iter().take_while(|s| *s == "super").count();
                assert!(ups <= module.len(), "`super` above the root in {module:?}");
                (module[..module.len() - ups].to_vec(), &segments[ups..])
            }
            _ if depth > 8 => return None,
            first => {
                let in_module = self.modules.get(module)?;
                if let Some(path) = blocks.iter().rev().find_map(|b| b.get(first)) {
                    (self.absolute(module, blocks, path, depth + 1)?, rest)
                } else if in_module.children.contains(first) && !rest.is_empty() {
                    // A module alone is no value or type: a local of its name.
                    ([module, &[first.to_string()]].concat(), rest)
                } else if let Some(path) = in_module.names.get(first) {
                    (self.absolute(module, &[], path, depth + 1)?, rest)
                } else {
                    return None;
                }
            }
        };
        at.extend_from_slice(rest);
        Some(at)
    }

    /// The module that defines what the absolute `path` names: it descends
    /// through modules and follows their `use` names to their source.
    fn module_of(&self, path: &[String], depth: u8) -> ModPath {
        let mut at: ModPath = Vec::new();
        for (i, segment) in path.iter().enumerate() {
            let Some(module) = self.modules.get(&at) else {
                break;
            };
            if module.children.contains(segment) {
                at.push(segment.clone());
                continue;
            }
            if let Some(target) = module.names.get(segment).filter(|_| depth < 8) {
                if let Some(mut source) = self.absolute(&at, &[], target, depth + 1) {
                    source.extend_from_slice(&path[i + 1..]);
                    return self.module_of(&source, depth + 1);
                }
            }
            break;
        }
        at
    }
}

/// Collects one file's edges.
struct Edges<'l> {
    library: &'l Library,
    file: &'l str,
    module: ModPath,
    blocks: Vec<BTreeMap<String, Vec<String>>>,
    out: Vec<Edge>,
}

impl Edges<'_> {
    fn add(&mut self, segments: &[String], span: Span, reexport: bool) {
        let Some(absolute) = self
            .library
            .absolute(&self.module, &self.blocks, segments, 0)
        else {
            return;
        };
        if absolute.is_empty() {
            // The crate itself (`use crate as root;`): its uses are the edges.
            return;
        }
        let to = self.library.module_of(&absolute, 0);
        if to != self.module {
            self.out.push(Edge {
                from: self.module.clone(),
                to,
                path: segments.join("::"),
                file: self.file.to_string(),
                line: line(span),
                reexport,
            });
        }
    }
}

impl<'ast> Visit<'ast> for Edges<'_> {
    fn visit_item(&mut self, item: &'ast Item) {
        if !test_only(item_attrs(item)) {
            visit::visit_item(self, item);
        }
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        // A `mod x;` is its own file, read as such.
        let Some((_, items)) = &m.content else { return };
        let child = [&self.module[..], &[name(&m.ident)]].concat();
        let module = std::mem::replace(&mut self.module, child);
        let blocks = std::mem::take(&mut self.blocks);
        for item in items {
            self.visit_item(item);
        }
        self.module = module;
        self.blocks = blocks;
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let reexport = self.blocks.is_empty() && !matches!(u.vis, Visibility::Inherited);
        let mut leaves = Vec::new();
        use_leaves(&u.tree, &mut Vec::new(), &mut leaves);
        for leaf in leaves {
            self.add(&leaf.path, leaf.span, reexport);
        }
    }

    fn visit_block(&mut self, block: &'ast syn::Block) {
        let items = block.stmts.iter().filter_map(|s| match s {
            syn::Stmt::Item(item) if !test_only(item_attrs(item)) => Some(item),
            _ => None,
        });
        self.blocks.push(use_names(items));
        visit::visit_block(self, block);
        self.blocks.pop();
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() {
            let segments: Vec<String> = path.segments.iter().map(|s| name(&s.ident)).collect();
            self.add(&segments, path.segments[0].ident.span(), false);
        }
        visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        let mut paths = Vec::new();
        token_paths(mac.tokens.clone(), &mut paths);
        for (path, span) in paths {
            self.add(&path, span, false);
        }
        visit::visit_macro(self, mac);
    }

    /// `pub(super)`, `pub(in crate::x)` grant access; they use nothing.
    fn visit_visibility(&mut self, _: &'ast Visibility) {}

    /// An attribute's name is not a path into the crate (`doc`, `cfg`); a
    /// `#[doc = …]`'s value is code.
    fn visit_attribute(&mut self, attr: &'ast Attribute) {
        if let Meta::NameValue(pair) = &attr.meta {
            self.visit_expr(&pair.value);
        }
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        if !test_only(impl_item_attrs(item)) {
            visit::visit_impl_item(self, item);
        }
    }

    fn visit_trait_item(&mut self, item: &'ast syn::TraitItem) {
        if !test_only(trait_item_attrs(item)) {
            visit::visit_trait_item(self, item);
        }
    }

    fn visit_field(&mut self, field: &'ast syn::Field) {
        if !test_only(&field.attrs) {
            visit::visit_field(self, field);
        }
    }

    fn visit_variant(&mut self, variant: &'ast syn::Variant) {
        if !test_only(&variant.attrs) {
            visit::visit_variant(self, variant);
        }
    }

    fn visit_arm(&mut self, arm: &'ast syn::Arm) {
        if !test_only(&arm.attrs) {
            visit::visit_arm(self, arm);
        }
    }

    fn visit_local(&mut self, local: &'ast syn::Local) {
        if !test_only(&local.attrs) {
            visit::visit_local(self, local);
        }
    }

    fn visit_stmt_macro(&mut self, stmt: &'ast syn::StmtMacro) {
        if !test_only(&stmt.attrs) {
            visit::visit_stmt_macro(self, stmt);
        }
    }
}

// ---------------------------------------------------------------- checks

fn src() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src"))
}

/// The library under `src/`, read once.
fn library() -> &'static Library {
    static LIBRARY: OnceLock<Library> = OnceLock::new();
    LIBRARY.get_or_init(|| Library::load(&|rel| std::fs::read_to_string(src().join(rel)).ok()))
}

fn tolerated(edge: &Edge) -> bool {
    let (from, to) = edge.pair();
    TOLERATED.iter().any(|&(f, t, _)| f == from && t == to)
}

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

struct Graph {
    /// (from, to) → the first place that makes the edge.
    edges: BTreeMap<(String, String), String>,
}

impl Graph {
    /// The graph of `parent`'s submodules, each with everything below it.
    fn inside(parent: &[String], edges: &[Edge]) -> Graph {
        let node = |module: &[String]| show(&module[..=parent.len()]);
        let mut graph = Graph {
            edges: BTreeMap::new(),
        };
        for edge in edges {
            let below = |m: &[String]| m.len() > parent.len() && under(m, parent);
            if below(&edge.from) && below(&edge.to) && !tolerated(edge) {
                let (from, to) = (node(&edge.from), node(&edge.to));
                if from != to {
                    graph
                        .edges
                        .entry((from, to))
                        .or_insert_with(|| edge.place());
                }
            }
        }
        graph
    }

    /// A cycle, as the modules along it, if there is one.
    fn cycle(&self) -> Option<Vec<String>> {
        let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (from, to) in self.edges.keys() {
            next.entry(from).or_default().push(to);
        }
        // 0 = unvisited, 1 = on the path, 2 = done. Iterative DFS.
        let mut state: BTreeMap<&str, u8> = BTreeMap::new();
        for &start in next.keys() {
            if state.get(start).copied().unwrap_or(0) != 0 {
                continue;
            }
            let mut stack: Vec<(&str, usize)> = vec![(start, 0)];
            state.insert(start, 1);
            while let Some(&mut (node, ref mut i)) = stack.last_mut() {
                let children = next.get(node).map_or(&[][..], Vec::as_slice);
                if let Some(&child) = children.get(*i) {
                    *i += 1;
                    match state.get(child).copied().unwrap_or(0) {
                        0 => {
                            state.insert(child, 1);
                            stack.push((child, 0));
                        }
                        1 => {
                            let from = stack.iter().position(|&(n, _)| n == child).unwrap();
                            let mut cycle: Vec<String> =
                                stack[from..].iter().map(|&(n, _)| n.to_string()).collect();
                            cycle.push(child.to_string());
                            return Some(cycle);
                        }
                        _ => {}
                    }
                } else {
                    state.insert(node, 2);
                    stack.pop();
                }
            }
        }
        None
    }

    /// The cycle's edges, each with where it is made.
    fn explain(&self, cycle: &[String]) -> String {
        cycle
            .windows(2)
            .map(|w| {
                let place = &self.edges[&(w[0].clone(), w[1].clone())];
                format!("{} -> {}: {place}", w[0], w[1])
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[test]
fn every_module_has_a_layer() {
    let top = &library().modules[&Vec::new()].children;
    let missing: Vec<&String> = top.iter().filter(|m| rank(m).is_none()).collect();
    assert!(
        missing.is_empty(),
        "modules without a layer in tests/layering.rs (and ARCHITECTURE.md): {missing:?}"
    );
    let stale: Vec<&&str> = LAYERS
        .iter()
        .flat_map(|l| l.iter())
        .filter(|m| !top.contains(**m))
        .collect();
    assert!(
        stale.is_empty(),
        "layers name modules that do not exist: {stale:?}"
    );
}

#[test]
fn modules_use_only_lower_layers() {
    let mut wrong = Vec::new();
    for edge in &library().edges {
        let (Some(from), Some(to)) = (edge.from.first(), edge.to.first()) else {
            continue;
        };
        if let (Some(a), Some(b)) = (rank(from), rank(to)) {
            if from != to && b >= a && !tolerated(edge) {
                wrong.push(edge.describe());
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "edges against the layering of ARCHITECTURE.md:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn paths_into_the_root_name_a_module_or_a_reexport() {
    let wrong: Vec<String> = library()
        .edges
        .iter()
        .filter(|e| e.to.is_empty() && !e.from.is_empty())
        .map(Edge::describe)
        .collect();
    assert!(
        wrong.is_empty(),
        "paths into the crate root that name neither a module nor a root re-export:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_module_graph_has_no_cycle() {
    let library = library();
    let mut cycles = Vec::new();
    for (module, declared) in &library.modules {
        if declared.children.is_empty() {
            continue;
        }
        let graph = Graph::inside(module, &library.edges);
        if let Some(cycle) = graph.cycle() {
            cycles.push(format!(
                "inside `{}`:\n{}",
                show(module),
                graph.explain(&cycle)
            ));
        }
    }
    assert!(cycles.is_empty(), "cycles:\n{}", cycles.join("\n"));
}

#[test]
fn facades_use_none_of_their_submodules() {
    let mut wrong = Vec::new();
    for &facade in FACADES {
        let facade: ModPath = facade.split("::").map(String::from).collect();
        for edge in &library().edges {
            let down = edge.from == facade && edge.to.len() > facade.len();
            if down && under(&edge.to, &facade) && !edge.reexport && !tolerated(edge) {
                wrong.push(edge.describe());
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_policy_runtime_does_not_use_the_authoring_tools() {
    let policy = vec!["policy".to_string()];
    let tools: ModPath = POLICY_TOOLS.split("::").map(String::from).collect();
    let wrong: Vec<String> = library()
        .edges
        .iter()
        .filter(|e| under(&e.from, &policy) && !under(&e.from, &tools) && under(&e.to, &tools))
        .filter(|e| !(e.reexport && e.from == policy))
        .filter(|e| !tolerated(e))
        .map(Edge::describe)
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_library_file_is_read() {
    fn rust_files(dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("src readable") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                rust_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(src()).unwrap();
                out.push(rel.to_str().unwrap().replace('\\', "/"));
            }
        }
    }
    let library = library();
    let mut on_disk = Vec::new();
    rust_files(src(), &mut on_disk);
    let unread: Vec<&String> = on_disk
        .iter()
        .filter(|f| *f != "main.rs" && !library.read.contains(f) && !library.test_only.contains(f))
        .collect();
    assert!(unread.is_empty(), "files no `mod` declares: {unread:?}");
    for folder in [
        "policy/", "read/", "trim/", "model/", "render/", "import/", "cli/",
    ] {
        assert!(
            library
                .read
                .iter()
                .any(|f| f.starts_with(folder) && !f.ends_with("mod.rs")),
            "no file of src/{folder} is read"
        );
    }
    assert!(
        library.edges.len() > 100 && library.edges.iter().any(|e| e.from[0] == "cli"),
        "the graph looks empty: the resolver is broken"
    );
}

#[test]
fn every_tolerated_edge_exists() {
    let pairs: BTreeSet<(String, String)> = library().edges.iter().map(Edge::pair).collect();
    let stale: Vec<_> = TOLERATED
        .iter()
        .filter(|&&(f, t, _)| !pairs.contains(&(f.to_string(), t.to_string())))
        .collect();
    assert!(stale.is_empty(), "tolerated edges that are gone: {stale:?}");
}

/// The edges of a crate given as sources, as `from -> to` with their line.
fn edges_of(sources: &[(&str, &str)]) -> BTreeMap<String, usize> {
    let read = |rel: &str| {
        sources
            .iter()
            .find(|(path, _)| *path == rel)
            .map(|(_, text)| text.to_string())
    };
    let library = Library::load(&read);
    let mut edges = BTreeMap::new();
    for edge in &library.edges {
        let (from, to) = edge.pair();
        edges.entry(format!("{from} -> {to}")).or_insert(edge.line);
    }
    edges
}

#[test]
fn the_resolver_sees_every_form_of_edge() {
    // (what, the text of src/policy/engine.rs, an edge it makes at a line).
    let cases = [
        (
            "use super::",
            "use super::plan::Plan;",
            "policy::engine -> policy::plan",
            1,
        ),
        (
            "the second member of a group",
            "use crate::{model::Answer,\n gate::Gate};",
            "policy::engine -> gate",
            2,
        ),
        (
            "a nested group with `self`",
            "use crate::{model::{self, Answer}, policy::{plan::{self}}};",
            "policy::engine -> policy::plan",
            1,
        ),
        (
            "an alias of the crate",
            "use crate as root;\nfn f() -> root::gate::Gate { todo!() }",
            "policy::engine -> gate",
            2,
        ),
        (
            "an alias of a `super` path",
            "use super::plan as p;\nfn f(_: p::deep::D) {}",
            "policy::engine -> policy::plan::deep",
            2,
        ),
        (
            "a block's alias",
            "fn f() {\n use super::plan as p;\n let _ = p::deep::D;\n}",
            "policy::engine -> policy::plan::deep",
            3,
        ),
        (
            "code after a test module",
            "#[cfg(test)]\nmod t {}\nfn f() { crate::gate::Gate; }",
            "policy::engine -> gate",
            3,
        ),
        (
            "a path in a macro",
            "fn f(x: u8) -> bool { matches!(x, crate::gate::ONE) }",
            "policy::engine -> gate",
            1,
        ),
        (
            "`super::super` in an inline module",
            "mod inner {\n use super::super::plan::Plan;\n}",
            "policy::engine::inner -> policy::plan",
            2,
        ),
        (
            "a root re-export",
            "fn f(_: crate::Answer) {}",
            "policy::engine -> model",
            1,
        ),
        (
            "a child module's path in the facade's code",
            "",
            "policy -> policy::plan",
            1,
        ),
        (
            "an item that needs a feature besides `test`",
            "#[cfg(any(test, feature = \"x\"))]\nfn f() { crate::gate::Gate; }",
            "policy::engine -> gate",
            2,
        ),
    ];
    for (what, engine, edge, at) in cases {
        let edges = edges_of(&[
            (
                "lib.rs",
                "mod gate;\nmod model;\nmod policy;\npub use model::Answer;",
            ),
            ("gate.rs", "pub struct Gate;"),
            ("model.rs", "pub struct Answer;"),
            (
                "policy/mod.rs",
                "fn g() { plan::Plan; }\nmod engine;\nmod plan;",
            ),
            (
                "policy/plan.rs",
                "pub struct Plan;\npub mod deep {\n pub struct D;\n}",
            ),
            ("policy/engine.rs", engine),
        ]);
        assert_eq!(edges.get(edge), Some(&at), "{what}: {edges:?}");
    }
}

#[test]
fn the_resolver_skips_test_only_items() {
    let edges = edges_of(&[
        ("lib.rs", "mod gate;\nmod model;\nmod engine;"),
        ("gate.rs", "pub struct Gate;"),
        ("model.rs", "pub struct Answer;"),
        (
            "engine.rs",
            "#[cfg(test)]\nuse crate::gate::Gate;\n\
             #[cfg(all(test, unix))]\nfn f() { crate::gate::Gate; }\n\
             struct S { #[cfg(test)] g: crate::gate::Gate }\n\
             impl S { #[cfg(test)] fn h() { crate::gate::Gate; } }\n\
             #[cfg(test)]\nmod tests;\n\
             fn kept(_: crate::model::Answer) {}",
        ),
        ("engine/tests.rs", "use crate::gate::Gate;"),
    ]);
    let found: Vec<&String> = edges.keys().collect();
    assert_eq!(found, ["engine -> model"]);
}
