//! The layering rule every crate of the workspace keeps: **no module cycle**.
//!
//! Each crate's modules form a tree. A reference from module `m` to module `t` (a `use`, a path
//! such as `crate::ops::query` in code, or an intra-doc link to one) is lifted to the two siblings under their
//! nearest common ancestor, the scope both belong to: `command::find` using `error` is an edge
//! `command -> error` at the crate's root, `command::find` using `command::namespace` an edge
//! `find -> namespace` inside `command`. A module using its own ancestors (`super::X`) or
//! descendants adds no edge. Inside every scope the sibling edges must form no cycle, so that
//! each scope's modules can be read, tested and moved bottom up.
//!
//! One decision has one place too: the facade resolves what a statement's collection is
//! (plain, main or side collection of policies, view, time series) in its `route` module only.
//!
//! Test modules (`#[cfg(test)]`) are left out: they sit beside the code they test and may use
//! anything. Paths are read with `syn` from the sources, so the rule holds for the code as
//! written, whatever the compiler would accept.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// A module's path inside its crate (`[]` is the crate's root).
type ModulePath = Vec<String>;

/// A module as parsed: its path and what it refers to.
struct Module {
    path: ModulePath,
    /// Every path that starts with `crate`, `super` or `self` or with a child module's name,
    /// resolved to an absolute path (segments after the crate's root).
    references: Vec<ModulePath>,
}

/// The crates of the workspace: each member's `src` directory with its root file.
fn crate_roots(workspace: &Path) -> Vec<(String, PathBuf)> {
    let mut roots = Vec::new();
    let mut members: Vec<PathBuf> = fs::read_dir(workspace.join("crates"))
        .expect("the workspace has a crates directory")
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    members.push(workspace.join("xtask"));
    members.push(workspace.join("benches"));
    members.sort();
    for member in members {
        let src = member.join("src");
        // A crate with a library keeps its modules there (its `main.rs` only calls it).
        if let Some(root) = ["lib.rs", "main.rs"]
            .iter()
            .map(|root| src.join(root))
            .find(|root| root.is_file())
        {
            let name = member.file_name().unwrap().to_string_lossy().into_owned();
            roots.push((name, root));
        }
    }
    roots
}

fn is_cfg_test(attributes: &[syn::Attribute]) -> bool {
    attributes.iter().any(|attribute| {
        attribute.path().is_ident("cfg")
            && attribute.meta.require_list().is_ok_and(|list| {
                list.tokens
                    .to_string()
                    .split(|c: char| !c.is_alphanumeric() && c != '_')
                    .any(|word| word == "test")
            })
    })
}

/// Reads the module in `file` (at `path`) and, recursively, its children, into `modules`.
fn read_module(file: &Path, path: ModulePath, modules: &mut Vec<Module>) {
    let source =
        fs::read_to_string(file).unwrap_or_else(|error| panic!("{}: {error}", file.display()));
    let parsed =
        syn::parse_file(&source).unwrap_or_else(|error| panic!("{}: {error}", file.display()));
    // Children of `a.rs` or `a/mod.rs` live in `a/`; of `lib.rs`/`main.rs` beside it.
    let directory = match file.file_name().and_then(|name| name.to_str()) {
        Some("lib.rs" | "main.rs" | "mod.rs") => file.parent().unwrap().to_path_buf(),
        _ => file.with_extension(""),
    };
    read_items(&parsed.attrs, &parsed.items, &directory, path, modules);
}

/// Reads a module's inner attributes (its `//!` docs) and items into `modules`.
fn read_items(
    attributes: &[syn::Attribute],
    items: &[syn::Item],
    directory: &Path,
    path: ModulePath,
    modules: &mut Vec<Module>,
) {
    let children: BTreeSet<String> = items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Mod(module) if !is_cfg_test(&module.attrs) => Some(module.ident.to_string()),
            _ => None,
        })
        .collect();
    let mut collector = References {
        module: &path,
        children: &children,
        found: Vec::new(),
    };
    for attribute in attributes {
        collector.visit_attribute(attribute);
    }
    for item in items {
        match item {
            syn::Item::Mod(module) => {
                if is_cfg_test(&module.attrs) {
                    continue;
                }
                let name = module.ident.to_string();
                let mut child = path.clone();
                child.push(name.clone());
                if let Some((_, inner)) = &module.content {
                    read_items(&module.attrs, inner, &directory.join(&name), child, modules);
                } else {
                    let flat = directory.join(format!("{name}.rs"));
                    let nested = directory.join(&name).join("mod.rs");
                    let file = if flat.is_file() { flat } else { nested };
                    read_module(&file, child, modules);
                }
            }
            other => collector.visit_item(other),
        }
    }
    let references = collector.found;
    modules.push(Module { path, references });
}

/// Collects the crate-internal paths a module's items mention.
struct References<'a> {
    module: &'a ModulePath,
    children: &'a BTreeSet<String>,
    found: Vec<ModulePath>,
}

impl References<'_> {
    /// `segments` as an absolute path, when it names something of this crate.
    fn resolve(&self, segments: &[String]) -> Option<ModulePath> {
        let (first, rest) = segments.split_first()?;
        let mut base = match first.as_str() {
            "crate" => Vec::new(),
            "self" => self.module.clone(),
            "super" => {
                let mut base = self.module.clone();
                let mut rest = rest;
                base.pop()?;
                while rest.first().is_some_and(|segment| segment == "super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
                base.extend(rest.iter().cloned());
                return Some(base);
            }
            child if self.children.contains(child) => {
                let mut base = self.module.clone();
                base.push(child.to_string());
                base
            }
            _ => return None,
        };
        base.extend(rest.iter().cloned());
        Some(base)
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(path) => {
                prefix.push(path.ident.to_string());
                self.use_tree(prefix, &path.tree);
                prefix.pop();
            }
            syn::UseTree::Name(name) => self.used(prefix, &name.ident),
            syn::UseTree::Rename(rename) => self.used(prefix, &rename.ident),
            syn::UseTree::Glob(_) => {
                if let Some(resolved) = self.resolve(prefix) {
                    self.found.push(resolved);
                }
            }
            syn::UseTree::Group(group) => {
                for tree in &group.items {
                    self.use_tree(prefix, tree);
                }
            }
        }
    }

    fn used(&mut self, prefix: &[String], name: &syn::Ident) {
        let mut segments = prefix.to_vec();
        let name = name.to_string();
        // `use crate::ops::{self}` names `ops` itself.
        if name != "self" {
            segments.push(name);
        }
        if let Some(resolved) = self.resolve(&segments) {
            self.found.push(resolved);
        }
    }
}

impl<'ast> Visit<'ast> for References<'_> {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        if is_cfg_test(&item.attrs) {
            return;
        }
        self.use_tree(&mut Vec::new(), &item.tree);
    }

    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {
        // Modules are read by `read_items`, each on its own.
    }

    fn visit_item_fn(&mut self, function: &'ast syn::ItemFn) {
        if !is_cfg_test(&function.attrs) {
            syn::visit::visit_item_fn(self, function);
        }
    }

    /// Intra-doc links (`[`crate::ops::query`]`) point a reader at a module as a `use` does.
    fn visit_attribute(&mut self, attribute: &'ast syn::Attribute) {
        if !attribute.path().is_ident("doc") {
            return;
        }
        let syn::Meta::NameValue(syn::MetaNameValue {
            value:
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(text),
                    ..
                }),
            ..
        }) = &attribute.meta
        else {
            return;
        };
        let text = text.value();
        for (at, _) in text.match_indices("crate::") {
            let segments: Vec<String> = text[at..]
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .next()
                .unwrap_or_default()
                .split("::")
                .filter(|segment| !segment.is_empty())
                .map(str::to_string)
                .collect();
            if let Some(resolved) = self.resolve(&segments) {
                self.found.push(resolved);
            }
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path
            .segments
            .iter()
            .map(|segment| segment.ident.to_string())
            .collect();
        if path.leading_colon.is_none()
            && segments.len() > 1
            && let Some(resolved) = self.resolve(&segments)
        {
            self.found.push(resolved);
        }
        syn::visit::visit_path(self, path);
    }
}

/// The sibling edge a reference from `from` to the module `to` stands for: `(scope, from's
/// child of scope, to's child of scope)`; `None` when one is the other's ancestor.
fn sibling_edge(from: &ModulePath, to: &ModulePath) -> Option<(ModulePath, String, String)> {
    let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
    let (Some(source), Some(target)) = (from.get(common), to.get(common)) else {
        return None;
    };
    Some((from[..common].to_vec(), source.clone(), target.clone()))
}

/// The module a resolved path names: its longest prefix that is a module.
fn module_of(path: &ModulePath, known: &BTreeSet<ModulePath>) -> ModulePath {
    (0..=path.len())
        .rev()
        .map(|length| path[..length].to_vec())
        .find(|prefix| known.contains(prefix))
        .unwrap_or_default()
}

/// The cycles (strongly connected components of two or more) of `graph`.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Two modules are in one cycle when each reaches the other.
    let reach = |start: &String| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![start.clone()];
        while let Some(node) = stack.pop() {
            for next in graph.get(&node).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|node| (node, reach(node))).collect();
    let mut components: Vec<Vec<String>> = Vec::new();
    for node in graph.keys() {
        if components.iter().any(|component| component.contains(node)) {
            continue;
        }
        let component: Vec<String> = graph
            .keys()
            .filter(|other| {
                *other == node || (reached[node].contains(*other) && reached[*other].contains(node))
            })
            .cloned()
            .collect();
        if component.len() > 1 {
            components.push(component);
        }
    }
    components
}

/// The `modules` of a scope by layer, bottom first, from its acyclic sibling `graph`: each layer's modules use only
/// modules of the layers before it (printed with `SPILLWAY_PRINT_LAYERS=1`, for
/// ARCHITECTURE.md).
fn layers(graph: &BTreeMap<String, BTreeSet<String>>, modules: &BTreeSet<String>) -> Vec<String> {
    let nodes: BTreeSet<&String> = modules.iter().collect();
    let mut placed: BTreeSet<&String> = BTreeSet::new();
    let mut layers = Vec::new();
    while placed.len() < nodes.len() {
        let layer: Vec<&String> = nodes
            .iter()
            .copied()
            .filter(|node| !placed.contains(node))
            .filter(|node| {
                graph
                    .get(*node)
                    .into_iter()
                    .flatten()
                    .all(|used| placed.contains(used))
            })
            .collect();
        if layer.is_empty() {
            layers.push("(cycle)".to_string());
            break;
        }
        layers.push(
            layer
                .iter()
                .map(|node| node.as_str())
                .collect::<Vec<_>>()
                .join(" "),
        );
        placed.extend(layer);
    }
    layers
}

/// One edge of each cycle's modules, to say where the loop closes.
fn describe(
    graph: &BTreeMap<String, BTreeSet<String>>,
    component: &[String],
    because: &BTreeMap<(String, String), BTreeSet<String>>,
) -> String {
    let mut lines = Vec::new();
    for from in component {
        for to in graph.get(from).into_iter().flatten() {
            if component.contains(to) {
                let witnesses: Vec<&String> = because[&(from.clone(), to.clone())]
                    .iter()
                    .take(3)
                    .collect();
                lines.push(format!("    {from} -> {to} (from {witnesses:?})"));
            }
        }
    }
    lines.join("\n")
}

/// One crate's modules and, per scope, the sibling edges between them.
struct CrateGraph {
    name: String,
    /// Every module's path.
    known: BTreeSet<ModulePath>,
    /// Scope -> sibling graph.
    scopes: BTreeMap<ModulePath, BTreeMap<String, BTreeSet<String>>>,
    /// Scope -> (from, to) -> the modules whose references make that edge.
    because: BTreeMap<ModulePath, BTreeMap<(String, String), BTreeSet<String>>>,
}

impl CrateGraph {
    fn read(name: String, root: &Path) -> CrateGraph {
        let mut modules = Vec::new();
        read_module(root, Vec::new(), &mut modules);
        let known: BTreeSet<ModulePath> =
            modules.iter().map(|module| module.path.clone()).collect();
        let mut graph = CrateGraph {
            name,
            known,
            scopes: BTreeMap::new(),
            because: BTreeMap::new(),
        };
        for module in &modules {
            for reference in &module.references {
                let target = module_of(reference, &graph.known);
                if let Some((scope, from, to)) = sibling_edge(&module.path, &target) {
                    graph
                        .scopes
                        .entry(scope.clone())
                        .or_default()
                        .entry(from.clone())
                        .or_default()
                        .insert(to.clone());
                    graph
                        .because
                        .entry(scope)
                        .or_default()
                        .entry((from, to))
                        .or_default()
                        .insert(module.path.join("::"));
                }
            }
        }
        graph
    }

    /// The child modules of `scope`.
    fn children(&self, scope: &ModulePath) -> BTreeSet<String> {
        self.known
            .iter()
            .filter(|path| path.len() == scope.len() + 1 && path.starts_with(scope))
            .map(|path| path.last().unwrap().clone())
            .collect()
    }

    /// How a scope is named in messages and in ARCHITECTURE.md: `crate` or `crate::a::b`.
    fn scope_name(&self, scope: &ModulePath) -> String {
        std::iter::once(self.name.clone())
            .chain(scope.iter().cloned())
            .collect::<Vec<_>>()
            .join("::")
    }
}

fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

fn crate_graphs() -> Vec<CrateGraph> {
    crate_roots(workspace())
        .into_iter()
        .map(|(name, root)| CrateGraph::read(name, &root))
        .collect()
}

#[test]
fn no_crate_has_a_module_cycle() {
    let mut problems = Vec::new();
    for krate in crate_graphs() {
        for (scope, graph) in &krate.scopes {
            if std::env::var_os("SPILLWAY_PRINT_LAYERS").is_some() {
                println!(
                    "Layers of `{}`: `{}`",
                    krate.scope_name(scope),
                    layers(graph, &krate.children(scope)).join(" < ")
                );
            }
            for component in cycles(graph) {
                problems.push(format!(
                    "{}: modules {} form a cycle:\n{}",
                    krate.scope_name(scope),
                    component.join(", "),
                    describe(graph, &component, &krate.because[scope])
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "module cycles (a module may use the modules below it, never one that uses it back):\n{}",
        problems.join("\n")
    );
}

/// The layer orders ARCHITECTURE.md declares: lines holding ``Layers of `scope`: `a b < c` ``.
fn declared_layers(text: &str) -> BTreeMap<String, Vec<BTreeSet<String>>> {
    let mut declared = BTreeMap::new();
    for line in text.lines() {
        let Some(at) = line.find("Layers of `") else {
            continue;
        };
        let rest = &line[at + "Layers of `".len()..];
        let Some((scope, rest)) = rest.split_once("`: `") else {
            continue;
        };
        let Some((order, _)) = rest.split_once('`') else {
            continue;
        };
        let layers = order
            .split('<')
            .map(|layer| layer.split_whitespace().map(str::to_string).collect())
            .collect();
        declared.insert(scope.to_string(), layers);
    }
    declared
}

/// ARCHITECTURE.md gives each crate's layers (and those of the directory modules it names),
/// and the code follows them: every module is listed, and none uses a module of its own
/// layer or a later one.
#[test]
fn architecture_md_gives_the_layers_the_code_has() {
    let text = fs::read_to_string(workspace().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let declared = declared_layers(&text);
    let mut problems = Vec::new();
    for krate in crate_graphs() {
        let root_children = krate.children(&Vec::new());
        if root_children.len() > 1 && !declared.contains_key(&krate.name) {
            problems.push(format!(
                "ARCHITECTURE.md gives no layers of `{}` (add the line the test prints with SPILLWAY_PRINT_LAYERS=1)",
                krate.name
            ));
        }
        let scopes: BTreeSet<&ModulePath> = krate.scopes.keys().collect();
        for scope in scopes.into_iter().chain(std::iter::once(&Vec::new())) {
            let name = krate.scope_name(scope);
            let Some(layers) = declared.get(&name) else {
                continue;
            };
            let rank: BTreeMap<&String, usize> = layers
                .iter()
                .enumerate()
                .flat_map(|(rank, layer)| layer.iter().map(move |module| (module, rank)))
                .collect();
            let listed: BTreeSet<String> = rank.keys().map(|module| (*module).clone()).collect();
            let actual = krate.children(scope);
            if listed != actual {
                problems.push(format!(
                    "ARCHITECTURE.md's layers of `{name}` list {:?} but the modules are {:?}",
                    listed.difference(&actual).collect::<Vec<_>>(),
                    actual.difference(&listed).collect::<Vec<_>>()
                ));
                continue;
            }
            for ((from, to), witnesses) in krate.because.get(scope).into_iter().flatten() {
                if rank[to] >= rank[from] {
                    problems.push(format!(
                        "`{name}`: {from} uses {to} (in {witnesses:?}), which ARCHITECTURE.md puts in the same layer or above it"
                    ));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "ARCHITECTURE.md and the code disagree:\n{}",
        problems.join("\n")
    );
}

#[test]
fn a_cycle_of_two_siblings_is_found_and_a_parent_child_pair_is_not() {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    graph.entry("a".into()).or_default().insert("b".into());
    graph.entry("b".into()).or_default().insert("c".into());
    graph.entry("c".into()).or_default().insert("a".into());
    graph.entry("d".into()).or_default().insert("a".into());
    assert_eq!(
        cycles(&graph),
        vec![vec!["a".to_string(), "b".into(), "c".into()]]
    );
    let path = |text: &str| text.split("::").map(str::to_string).collect::<ModulePath>();
    assert_eq!(sibling_edge(&path("command::find"), &path("command")), None);
    assert_eq!(
        sibling_edge(&path("command::find"), &path("error")),
        Some((Vec::new(), "command".into(), "error".into()))
    );
    assert_eq!(
        sibling_edge(&path("command::find"), &path("command::namespace")),
        Some((path("command"), "find".into(), "namespace".into()))
    );
    let declared = declared_layers("- **x**: text.\n  Layers of `x::y`: `a b < c`, then prose");
    assert_eq!(
        declared["x::y"],
        vec![
            BTreeSet::from(["a".to_string(), "b".to_string()]),
            BTreeSet::from(["c".to_string()])
        ]
    );
}

/// The facade decides what a statement's collection is in `route.rs` alone: no other module
/// asks the pattern layer for a collection's role (`Role`), so no two parts of a statement can
/// route it differently.
#[test]
fn the_facade_routes_a_statement_in_one_place() {
    fn visit(dir: &Path, found: &mut Vec<String>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                visit(&path, found);
            } else if path.extension().is_some_and(|ext| ext == "rs")
                && path.file_name().is_some_and(|name| name != "route.rs")
            {
                let text = fs::read_to_string(&path).unwrap();
                for (number, line) in text.lines().enumerate() {
                    if line.contains("Role::") || line.contains("spillway_pattern::Role") {
                        found.push(format!(
                            "{}:{}: {}",
                            path.display(),
                            number + 1,
                            line.trim()
                        ));
                    }
                }
            }
        }
    }
    let mut found = Vec::new();
    visit(&workspace().join("crates/spillway/src"), &mut found);
    assert!(
        found.is_empty(),
        "route a statement with crate::route::Route (resolved once), not the pattern layer's \
         Role:\n{}",
        found.join("\n")
    );
}
