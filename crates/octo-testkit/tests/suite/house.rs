//! The whole house, drawn from its imports: every crate's modules (one node per file) and the
//! paths each names (`use`, `crate::`, `super::`, a child module, an imported name, inside macros
//! too), resolved to the file that defines what they name. No circle may remain anywhere, no file
//! of the binary may reach back up to a module above it, and the rooms stay small: no file over
//! 500 lines, no function over 80 (bar the named allowance of `allowance.rs`, which only
//! shrinks), no public function of a library returning `Result<_, String>`.

use super::allowance;
use proc_macro2::{TokenStream, TokenTree};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// A module path inside a crate (empty: the crate root).
type ModPath = Vec<String>;

/// One module: the file that holds it, its children, what it imports and what it names.
#[derive(Debug, Default)]
struct Module {
    file: PathBuf,
    children: BTreeSet<String>,
    /// Name in scope → the path it was imported from (`use a::b as c` gives `c → a::b`).
    imports: BTreeMap<String, Vec<String>>,
    /// `use path::*`.
    globs: Vec<Vec<String>>,
    /// Items defined here (functions, types, constants …).
    defines: BTreeSet<String>,
    /// Every path the module's code names (`use` trees included).
    paths: Vec<Vec<String>>,
}

/// A crate's modules.
#[derive(Debug, Default)]
pub struct Crate {
    modules: BTreeMap<ModPath, Module>,
    /// Files that could not be read or parsed.
    pub problems: Vec<String>,
}

fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| match &a.meta {
        syn::Meta::List(l) if l.path.is_ident("cfg") => {
            let text = l.tokens.to_string();
            text.split(|c: char| !c.is_alphanumeric() && c != '_').any(|w| w == "test")
                && !text.contains("not (test")
        }
        _ => false,
    })
}

/// The `#[path = "…"]` of a module declaration.
fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find(|a| a.path().is_ident("path")).and_then(|a| match &a.meta {
        syn::Meta::NameValue(nv) => match &nv.value {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

/// Collects the paths a module's code names, leaving nested modules and test-only items out.
#[derive(Default)]
struct Paths {
    found: Vec<Vec<String>>,
}

impl Paths {
    fn tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                TokenTree::Group(g) => {
                    self.tokens(g.stream());
                    i += 1;
                }
                TokenTree::Ident(first) => {
                    let mut segs = vec![first.to_string()];
                    let mut j = i + 1;
                    while j + 2 < trees.len() + 1 {
                        let colons = matches!((&trees.get(j), &trees.get(j + 1)),
                            (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) if a.as_char() == ':' && b.as_char() == ':');
                        match (colons, trees.get(j + 2)) {
                            (true, Some(TokenTree::Ident(next))) => {
                                segs.push(next.to_string());
                                j += 3;
                            }
                            _ => break,
                        }
                    }
                    if segs.len() > 1 {
                        self.found.push(segs);
                    }
                    i = j;
                }
                _ => i += 1,
            }
        }
    }
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if segs.len() > 1 {
            self.found.push(segs);
        }
        syn::visit::visit_path(self, p);
    }
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.visit_path(&m.path);
        self.tokens(m.tokens.clone());
    }
    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if !is_test_only(item_attrs(item)) {
            syn::visit::visit_item(self, item);
        }
    }
    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        let attrs = match item {
            syn::ImplItem::Fn(f) => &f.attrs,
            syn::ImplItem::Const(c) => &c.attrs,
            syn::ImplItem::Type(t) => &t.attrs,
            _ => return syn::visit::visit_impl_item(self, item),
        };
        if !is_test_only(attrs) {
            syn::visit::visit_impl_item(self, item);
        }
    }
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Union(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

fn item_name(item: &syn::Item) -> Option<String> {
    Some(match item {
        syn::Item::Const(i) => i.ident.to_string(),
        syn::Item::Enum(i) => i.ident.to_string(),
        syn::Item::Fn(i) => i.sig.ident.to_string(),
        syn::Item::Static(i) => i.ident.to_string(),
        syn::Item::Struct(i) => i.ident.to_string(),
        syn::Item::Trait(i) => i.ident.to_string(),
        syn::Item::Type(i) => i.ident.to_string(),
        syn::Item::Union(i) => i.ident.to_string(),
        syn::Item::Macro(i) => i.ident.as_ref()?.to_string(),
        _ => return None,
    })
}

/// The entries of a `use` tree: (name in scope, full path); a glob has the name `*`.
fn use_entries(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<(String, Vec<String>)>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_entries(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            if name == "self" {
                if let Some(last) = prefix.last() {
                    out.push((last.clone(), prefix.clone()));
                }
            } else {
                let mut full = prefix.clone();
                full.push(name.clone());
                out.push((name, full));
            }
        }
        syn::UseTree::Rename(r) => {
            let mut full = prefix.clone();
            if r.ident != "self" {
                full.push(r.ident.to_string());
            }
            out.push((r.rename.to_string(), full));
        }
        syn::UseTree::Glob(_) => out.push(("*".into(), prefix.clone())),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                use_entries(t, prefix, out);
            }
        }
    }
}

impl Crate {
    /// Reads the crate whose root file is `root` (`src/lib.rs` or `src/main.rs`).
    pub fn read(name: &str, root: &Path) -> Self {
        let _ = name;
        let mut c = Crate::default();
        let dir = root.parent().unwrap_or(Path::new(".")).to_path_buf();
        c.read_file(Vec::new(), root, &dir);
        c
    }

    fn read_file(&mut self, path: ModPath, file: &Path, child_dir: &Path) {
        let parsed = std::fs::read_to_string(file)
            .map_err(|e| e.to_string())
            .and_then(|t| syn::parse_file(&t).map_err(|e| e.to_string()));
        match parsed {
            Ok(f) => self.read_items(path, file, child_dir, &f.items),
            Err(e) => self.problems.push(format!("{}: {e}", file.display())),
        }
    }

    fn read_items(&mut self, path: ModPath, file: &Path, child_dir: &Path, items: &[syn::Item]) {
        let mut module = Module { file: file.to_path_buf(), ..Module::default() };
        let mut paths = Paths::default();
        let mut nested = Vec::new();
        for item in items {
            if is_test_only(item_attrs(item)) {
                continue;
            }
            if let Some(name) = item_name(item) {
                module.defines.insert(name);
            }
            match item {
                syn::Item::Mod(m) => {
                    module.children.insert(m.ident.to_string());
                    nested.push(m);
                }
                syn::Item::Use(u) => {
                    let mut entries = Vec::new();
                    use_entries(&u.tree, &mut Vec::new(), &mut entries);
                    for (name, full) in entries {
                        if name == "*" {
                            module.globs.push(full.clone());
                        } else if name != "_" {
                            module.imports.insert(name, full.clone());
                        }
                        paths.found.push(full);
                    }
                }
                other => paths.visit_item(other),
            }
        }
        module.paths = paths.found;
        self.modules.insert(path.clone(), module);
        for m in nested {
            let mut child = path.clone();
            child.push(m.ident.to_string());
            match &m.content {
                Some((_, items)) => {
                    let dir = child_dir.join(m.ident.to_string());
                    self.read_items(child, file, &dir, items);
                }
                None => {
                    let name = m.ident.to_string();
                    let candidates = match path_attr(&m.attrs) {
                        Some(p) => vec![file.parent().unwrap_or(Path::new(".")).join(p)],
                        None => {
                            vec![child_dir.join(format!("{name}.rs")), child_dir.join(&name).join("mod.rs")]
                        }
                    };
                    match candidates.iter().find(|p| p.is_file()) {
                        Some(f) => {
                            let dir = if f.ends_with("mod.rs") {
                                f.parent().unwrap_or(Path::new(".")).to_path_buf()
                            } else {
                                child_dir.join(&name)
                            };
                            self.read_file(child, &f.clone(), &dir);
                        }
                        None => self.problems.push(format!("no file for module {}", child.join("::"))),
                    }
                }
            }
        }
    }

    /// The module `segs` names from inside `from`, or `None` when it is outside the crate.
    fn resolve(&self, from: &[String], segs: &[String], depth: usize) -> Option<ModPath> {
        if depth > 16 || segs.is_empty() {
            return None;
        }
        let here = self.modules.get(from)?;
        let (start, rest): (ModPath, &[String]) = match segs[0].as_str() {
            "crate" => (Vec::new(), &segs[1..]),
            "self" => (from.to_vec(), &segs[1..]),
            "super" => {
                let mut at = from.to_vec();
                at.pop();
                let mut i = 1;
                while segs.get(i).is_some_and(|s| s == "super") {
                    at.pop();
                    i += 1;
                }
                (at, &segs[i..])
            }
            first if here.children.contains(first) => {
                let mut at = from.to_vec();
                at.push(first.to_owned());
                (at, &segs[1..])
            }
            first => {
                let imported = here.imports.get(first)?;
                if imported.as_slice() == segs
                    || imported.first().is_some_and(|f| f == first) && imported.len() == 1
                {
                    return None;
                }
                let mut full = imported.clone();
                full.extend_from_slice(&segs[1..]);
                return self.resolve(from, &full, depth + 1);
            }
        };
        self.walk(start, rest, depth)
    }

    fn walk(&self, mut at: ModPath, rest: &[String], depth: usize) -> Option<ModPath> {
        for (i, seg) in rest.iter().enumerate() {
            let module = self.modules.get(&at)?;
            if module.children.contains(seg) {
                at.push(seg.clone());
                continue;
            }
            if module.defines.contains(seg) {
                return Some(at);
            }
            if let Some(imported) = module.imports.get(seg) {
                let mut full = imported.clone();
                full.extend_from_slice(&rest[i + 1..]);
                return self.resolve(&at, &full, depth + 1);
            }
            for glob in &module.globs {
                if let Some(g) = self.resolve(&at, glob, depth + 1) {
                    if g != at && self.modules.get(&g).is_some_and(|m| m.names(seg)) {
                        return self.walk(g, &rest[i..], depth + 1);
                    }
                }
            }
            return Some(at);
        }
        Some(at)
    }

    /// file → the files it uses, with one path that shows each use.
    pub fn edges(&self) -> BTreeMap<PathBuf, BTreeMap<PathBuf, String>> {
        let mut edges: BTreeMap<PathBuf, BTreeMap<PathBuf, String>> = BTreeMap::new();
        for (path, module) in &self.modules {
            let from = edges.entry(module.file.clone()).or_default();
            let mut all = module.paths.clone();
            all.extend(module.globs.iter().cloned());
            for segs in all {
                let Some(target) = self.resolve(path, &segs, 0) else { continue };
                let Some(to) = self.modules.get(&target) else { continue };
                if to.file != module.file {
                    from.entry(to.file.clone()).or_insert_with(|| segs.join("::"));
                }
            }
        }
        edges
    }

    /// Uses of a module above the user's own (its parent, or the crate root), as
    /// `file → ancestor file (path)`.
    pub fn upward(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (path, module) in &self.modules {
            let mut all = module.paths.clone();
            all.extend(module.globs.iter().cloned());
            for segs in all {
                let Some(target) = self.resolve(path, &segs, 0) else { continue };
                let Some(to) = self.modules.get(&target) else { continue };
                if target.len() < path.len() && path.starts_with(&target) && to.file != module.file {
                    out.push(format!(
                        "{} → {} ({})",
                        module.file.display(),
                        to.file.display(),
                        segs.join("::")
                    ));
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// The crate's files.
    pub fn files(&self) -> BTreeSet<PathBuf> {
        self.modules.values().map(|m| m.file.clone()).collect()
    }
}

impl Module {
    fn names(&self, name: &str) -> bool {
        self.children.contains(name) || self.defines.contains(name) || self.imports.contains_key(name)
    }
}

/// The circles of a graph (its strongly connected parts with more than one node).
pub fn circles<N: Ord + Clone>(graph: &BTreeMap<N, BTreeSet<N>>) -> Vec<Vec<N>> {
    struct State<N> {
        index: BTreeMap<N, usize>,
        low: BTreeMap<N, usize>,
        stack: Vec<N>,
        on: BTreeSet<N>,
        out: Vec<Vec<N>>,
        next: usize,
    }
    fn visit<N: Ord + Clone>(v: &N, g: &BTreeMap<N, BTreeSet<N>>, s: &mut State<N>) {
        s.index.insert(v.clone(), s.next);
        s.low.insert(v.clone(), s.next);
        s.next += 1;
        s.stack.push(v.clone());
        s.on.insert(v.clone());
        for w in g.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(w, g, s);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut part = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(&w);
                let done = &w == v;
                part.push(w);
                if done {
                    break;
                }
            }
            if part.len() > 1 {
                part.sort();
                s.out.push(part);
            }
        }
    }
    let mut s = State {
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
        next: 0,
    };
    for v in graph.keys() {
        if !s.index.contains_key(v) {
            visit(v, graph, &mut s);
        }
    }
    s.out
}

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// Every crate of the workspace with its root file: `crates/*/src/{lib,main}.rs` and the binary.
fn crates() -> Vec<(String, PathBuf, bool)> {
    let mut out = Vec::new();
    let mut dirs: Vec<PathBuf> =
        std::fs::read_dir(root().join("crates")).unwrap().map(|e| e.unwrap().path()).collect();
    dirs.extend(std::fs::read_dir(root().join("cmd")).unwrap().map(|e| e.unwrap().path()));
    dirs.sort();
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        for (file, library) in [("src/lib.rs", true), ("src/main.rs", false)] {
            let f = dir.join(file);
            if f.is_file() {
                out.push((format!("{name} ({file})"), f, library));
            }
        }
    }
    out
}

fn relative(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

/// The crate's file graph, with the files as workspace-relative names.
/// Files and the files each uses.
type Graph = BTreeMap<String, BTreeSet<String>>;
/// For each use, one path that shows it.
type Why = BTreeMap<(String, String), String>;

fn file_graph(c: &Crate) -> (Graph, Why) {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut why = BTreeMap::new();
    for f in c.files() {
        graph.entry(relative(&f)).or_default();
    }
    for (from, tos) in c.edges() {
        for (to, path) in tos {
            graph.entry(relative(&from)).or_default().insert(relative(&to));
            why.insert((relative(&from), relative(&to)), path);
        }
    }
    (graph, why)
}

#[test]
fn no_module_anywhere_imports_in_a_circle() {
    let mut found = Vec::new();
    let all = crates();
    assert!(all.len() > 10, "expected the workspace's crates, got {all:?}");
    for (name, root_file, _) in all {
        let c = Crate::read(&name, &root_file);
        assert!(c.problems.is_empty(), "{name}: {:?}", c.problems);
        let (graph, why) = file_graph(&c);
        for circle in circles(&graph) {
            let mut lines = vec![format!("{name}: {}", circle.join(", "))];
            for a in &circle {
                for b in graph[a].iter().filter(|b| circle.contains(b)) {
                    lines.push(format!("    {a} → {b} ({})", why[&(a.clone(), b.clone())]));
                }
            }
            found.push(lines.join("\n"));
        }
    }
    assert!(found.is_empty(), "modules that import each other in a circle:\n{}", found.join("\n"));
}

#[test]
fn no_file_of_the_binary_reaches_back_up() {
    let c = Crate::read("octo-cli", &root().join("cmd/octo/src/main.rs"));
    assert!(c.files().len() > 10);
    let up: Vec<String> =
        c.upward().iter().map(|l| l.replace(&format!("{}/", root().display()), "")).collect();
    assert!(up.is_empty(), "cmd/octo's modules use what a module above them defines:\n{}", up.join("\n"));
}

#[test]
fn the_house_drawing_sees_uses_through_reexports_macros_and_children() {
    let dir = tempfile_dir();
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("b")).unwrap();
    std::fs::write(
        src.join("lib.rs"),
        "mod a;\nmod b;\nmod c;\npub use a::Thing;\npub struct Root;\n#[cfg(test)]\nmod tests { use super::c::Late; }\n",
    )
    .unwrap();
    std::fs::write(
        src.join("a.rs"),
        "pub struct Thing;\npub fn f() { let _ = format!(\"{}\", crate::b::inner::g()); }\n",
    )
    .unwrap();
    std::fs::write(src.join("b.rs"), "pub mod inner;\n").unwrap();
    std::fs::write(src.join("b/inner.rs"), "use crate::Thing;\npub fn g() -> u8 { let _t = Thing; 1 }\n")
        .unwrap();
    std::fs::write(src.join("c.rs"), "pub struct Late;\npub fn h() -> crate::Root { crate::Root }\n")
        .unwrap();
    let c = Crate::read("t", &src.join("lib.rs"));
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    let (graph, _) = file_graph(&c);
    let name = |f: &str| relative(&src.join(f));
    // a → b/inner through a macro; b/inner → a through the root's re-export: a circle.
    assert!(graph[&name("a.rs")].contains(&name("b/inner.rs")), "{graph:?}");
    assert!(graph[&name("b/inner.rs")].contains(&name("a.rs")), "{graph:?}");
    assert_eq!(circles(&graph), vec![vec![name("a.rs"), name("b/inner.rs")]]);
    // The root names a (re-export) but not c (only its tests do), so c → root is no circle.
    assert!(graph[&name("c.rs")].contains(&name("lib.rs")));
    assert!(!graph[&name("lib.rs")].contains(&name("c.rs")));
    assert_eq!(c.upward().len(), 1, "{:?}", c.upward());
    std::fs::remove_dir_all(&dir).unwrap();
}

fn tempfile_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "octo-house-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Non-test Rust files of the workspace's crates and binary: the files their module trees reach,
/// leaving out modules only compiled for tests (`#[cfg(test)] mod tests;` in a `tests.rs`).
fn source_files() -> Vec<(PathBuf, bool)> {
    let mut out: Vec<(PathBuf, bool)> = Vec::new();
    for (name, root_file, library) in crates() {
        for f in Crate::read(&name, &root_file).files() {
            if !out.iter().any(|(g, _)| g == &f) {
                out.push((f, library));
            }
        }
    }
    out.sort();
    out
}

/// The most lines a source file may have.
const FILE_LINES: usize = 500;

/// The most lines a function may span.
const FN_LINES: usize = 80;

/// Checks `found` (`(name, size)`) against `limit` and a named allowance of older exceptions: an
/// exception may shrink but never grow, and one that no longer needs its allowance (back under the
/// limit, or gone) must be struck off, so the list only gets shorter.
fn fence(what: &str, limit: usize, found: &[(String, usize)], allowance: &[(&str, usize)]) -> Vec<String> {
    let mut problems = Vec::new();
    for (name, n) in found.iter().filter(|(_, n)| *n > limit) {
        match allowance.iter().find(|(a, _)| a == name) {
            Some((_, allowed)) if n <= allowed => {}
            Some((_, allowed)) => {
                problems.push(format!("{name}: {n} lines, more than its allowance of {allowed}: split it"));
            }
            None => problems.push(format!("{name}: {n} lines (the limit for a {what} is {limit})")),
        }
    }
    for (name, allowed) in allowance {
        match found.iter().find(|(f, _)| f == name) {
            Some((_, n)) if *n > limit && n < allowed => {
                problems.push(format!("{name}: now {n} lines: lower its allowance from {allowed} to {n}"));
            }
            Some((_, n)) if *n > limit => {}
            _ => problems.push(format!("{name}: no longer over {limit} lines: strike it off the allowance")),
        }
    }
    problems
}

#[test]
fn no_source_file_is_over_its_limit() {
    let found: Vec<(String, usize)> = source_files()
        .into_iter()
        .map(|(f, _)| (relative(&f), std::fs::read_to_string(&f).unwrap().lines().count()))
        .collect();
    let problems = fence("file", FILE_LINES, &found, allowance::FILES);
    assert!(
        problems.is_empty(),
        "split these files by concept (tests may move to a `tests.rs` beside them):\n{}",
        problems.join("\n")
    );
}

/// Functions, with the lines they span; test-only items left out.
#[derive(Default)]
struct Functions {
    found: Vec<(String, usize)>,
    public_string_errors: Vec<String>,
}

fn lines_of(block: &syn::Block) -> usize {
    let open = block.brace_token.span.open().start().line;
    let close = block.brace_token.span.close().end().line;
    close + 1 - open
}

fn returns_string_error(sig: &syn::Signature) -> bool {
    let syn::ReturnType::Type(_, ty) = &sig.output else { return false };
    let syn::Type::Path(tp) = ty.as_ref() else { return false };
    let Some(last) = tp.path.segments.last() else { return false };
    if last.ident != "Result" {
        return false;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else { return false };
    let Some(syn::GenericArgument::Type(syn::Type::Path(err))) = args.args.iter().nth(1) else {
        return false;
    };
    err.path.is_ident("String")
}

impl<'ast> Visit<'ast> for Functions {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if !is_test_only(item_attrs(item)) {
            syn::visit::visit_item(self, item);
        }
    }
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.found.push((f.sig.ident.to_string(), lines_of(&f.block)));
        if matches!(f.vis, syn::Visibility::Public(_)) && returns_string_error(&f.sig) {
            self.public_string_errors.push(f.sig.ident.to_string());
        }
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if is_test_only(&f.attrs) {
            return;
        }
        self.found.push((f.sig.ident.to_string(), lines_of(&f.block)));
        if matches!(f.vis, syn::Visibility::Public(_)) && returns_string_error(&f.sig) {
            self.public_string_errors.push(f.sig.ident.to_string());
        }
    }
    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(b) = &f.default {
            self.found.push((f.sig.ident.to_string(), lines_of(b)));
        }
        if returns_string_error(&f.sig) {
            self.public_string_errors.push(f.sig.ident.to_string());
        }
    }
}

fn functions_of(file: &Path) -> Functions {
    let text = std::fs::read_to_string(file).unwrap();
    let parsed = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let mut v = Functions::default();
    v.visit_file(&parsed);
    v
}

#[test]
fn no_function_is_over_its_limit() {
    let mut found = Vec::new();
    for (f, _) in source_files() {
        for (name, n) in functions_of(&f).found {
            found.push((format!("{}::{name}", relative(&f)), n));
        }
    }
    let problems = fence("function", FN_LINES, &found, allowance::FUNCTIONS);
    assert!(problems.is_empty(), "write these as named steps:\n{}", problems.join("\n"));
}

#[test]
fn an_allowance_only_shrinks() {
    let found = vec![("a.rs".to_owned(), 700), ("b.rs".to_owned(), 650), ("c.rs".to_owned(), 400)];
    assert!(fence("file", 500, &found, &[("a.rs", 700), ("b.rs", 650)]).is_empty());
    let grown = fence("file", 500, &found, &[("a.rs", 690), ("b.rs", 650)]);
    assert!(grown[0].contains("more than its allowance of 690"), "{grown:?}");
    let shrunk = fence("file", 500, &found, &[("a.rs", 720), ("b.rs", 650)]);
    assert!(shrunk[0].contains("lower its allowance from 720 to 700"), "{shrunk:?}");
    let fixed = fence("file", 500, &found, &[("a.rs", 700), ("b.rs", 650), ("c.rs", 450)]);
    assert!(fixed[0].contains("c.rs: no longer over 500 lines"), "{fixed:?}");
    let new = fence("file", 500, &found, &[("a.rs", 700)]);
    assert!(new[0].starts_with("b.rs: 650 lines (the limit"), "{new:?}");
}

#[test]
fn no_public_library_function_returns_a_string_error() {
    let mut found = Vec::new();
    for (f, library) in source_files() {
        if !library || f.starts_with(root().join("crates/octo-testkit")) {
            continue;
        }
        for name in functions_of(&f).public_string_errors {
            found.push(format!("{}: fn {name}", relative(&f)));
        }
    }
    assert!(
        found.is_empty(),
        "give these a typed error (thiserror) that says what failed and what to do:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_room_checks_see_long_functions_and_string_errors() {
    let dir = tempfile_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let body = "    let _x = 1;\n".repeat(101);
    let file = dir.join("long.rs");
    std::fs::write(
        &file,
        format!(
            "pub fn long() {{\n{body}}}\npub fn bad() -> Result<(), String> {{ Ok(()) }}\nfn private() -> Result<(), String> {{ Ok(()) }}\n#[cfg(test)]\nmod tests {{ pub fn t() -> Result<(), String> {{ Ok(()) }} }}\n"
        ),
    )
    .unwrap();
    let f = functions_of(&file);
    assert_eq!(f.found.iter().find(|(n, _)| n == "long").map(|(_, l)| *l), Some(103));
    assert_eq!(f.public_string_errors, ["bad"]);
    std::fs::remove_dir_all(&dir).unwrap();
}
