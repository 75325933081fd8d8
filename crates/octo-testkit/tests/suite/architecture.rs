//! The dependency direction is the architecture (dev-docs/architecture.md). This test reads
//! `cargo metadata` and fails when a dependency points the wrong way.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Layer of every workspace crate: a crate may depend only on crates of a lower layer, with the
/// extra rules below. A new crate must be added here, which forces a decision about its layer.
fn layer(name: &str) -> Option<u8> {
    Some(match name {
        "octo-agent" => 0,
        "octo-provider" | "octo-exec" | "octo-markdown" => 1,
        "octo-provider-anthropic"
        | "octo-provider-openai"
        | "octo-provider-responses"
        | "octo-provider-local"
        | "octo-tools"
        | "octo-session"
        | "octo-memory"
        | "octo-hooks"
        | "octo-skills"
        | "octo-mcp"
        | "octo-lsp"
        | "octo-repomap" => 2,
        // The permission engine reads a URL's host and the secret locations from the tools.
        "octo-permissions" => 3,
        "octo-app" => 4,
        // Front ends: the binary hosts the server (`octo serve`), which hosts the chat bridges.
        "octo-channels" | "octo-eval" => 5,
        "octo-server" => 6,
        "octo-cli" => 7,
        "octo-testkit" => 8,
        _ => return None,
    })
}

fn is_provider(name: &str) -> bool {
    name.starts_with("octo-provider-")
}

fn is_front_end(name: &str) -> bool {
    matches!(name, "octo-cli" | "octo-server" | "octo-channels" | "octo-eval")
}

/// crate → [(dependency, kind)] for workspace-internal dependencies.
fn internal_deps() -> BTreeMap<String, Vec<(String, String)>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr));
    let meta: Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = meta["packages"].as_array().unwrap();
    let names: Vec<&str> = packages.iter().map(|p| p["name"].as_str().unwrap()).collect();
    packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| names.contains(&d["name"].as_str().unwrap()))
                .map(|d| {
                    let kind = d["kind"].as_str().unwrap_or("normal").to_owned();
                    (d["name"].as_str().unwrap().to_owned(), kind)
                })
                .collect();
            (p["name"].as_str().unwrap().to_owned(), deps)
        })
        .collect()
}

fn violations(graph: &BTreeMap<String, Vec<(String, String)>>) -> Vec<String> {
    let mut bad = Vec::new();
    for (krate, deps) in graph {
        let Some(my_layer) = layer(krate) else {
            bad.push(format!(
                "`{krate}` has no layer: add it to the table in this test and to dev-docs/architecture.md"
            ));
            continue;
        };
        for (dep, kind) in deps {
            if dep == "octo-testkit" {
                if kind != "dev" {
                    bad.push(format!("`{krate}` uses octo-testkit as a {kind} dependency; it is dev-only"));
                }
                continue;
            }
            if kind == "dev" && krate == "octo-testkit" {
                continue;
            }
            if krate == "octo-testkit" && dep != "octo-agent" {
                bad.push(format!(
                    "octo-testkit may build only on the leaf octo-agent (every crate dev-depends on it), not `{dep}`"
                ));
                continue;
            }
            let Some(dep_layer) = layer(dep) else { continue };
            if krate == "octo-agent" {
                bad.push(format!("octo-agent is the leaf crate but depends on `{dep}`"));
            }
            if dep_layer >= my_layer {
                bad.push(format!("`{krate}` (layer {my_layer}) depends on `{dep}` (layer {dep_layer}): dependencies point down"));
            }
            if is_provider(krate) && !matches!(dep.as_str(), "octo-agent" | "octo-provider") {
                bad.push(format!(
                    "provider `{krate}` may depend only on octo-agent and octo-provider, not `{dep}`"
                ));
            }
            if is_front_end(krate) && (is_provider(dep) || dep == "octo-provider") {
                bad.push(format!(
                    "front end `{krate}` depends on `{dep}`: reach providers only through octo-app"
                ));
            }
        }
    }
    bad
}

#[test]
fn dependencies_point_down() {
    let graph = internal_deps();
    assert!(graph.contains_key("octo-agent"), "expected the workspace's crates, got {:?}", graph.keys());
    let bad = violations(&graph);
    assert!(bad.is_empty(), "architecture violations:\n{}", bad.join("\n"));
}

#[test]
fn the_rules_catch_wrong_directions() {
    let g = |edges: &[(&str, &str, &str)]| {
        let mut m: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
        for (a, b, k) in edges {
            m.entry((*a).into()).or_default().push(((*b).into(), (*k).into()));
        }
        m
    };
    assert_eq!(violations(&g(&[("octo-agent", "octo-provider", "normal")])).len(), 2);
    assert_eq!(violations(&g(&[("octo-provider-openai", "octo-tools", "normal")])).len(), 2);
    assert_eq!(violations(&g(&[("octo-cli", "octo-provider-anthropic", "normal")])).len(), 1);
    assert_eq!(violations(&g(&[("octo-tools", "octo-testkit", "normal")])).len(), 1);
    assert_eq!(violations(&g(&[("octo-mystery", "octo-agent", "normal")])).len(), 1);
    assert_eq!(violations(&g(&[("octo-testkit", "octo-app", "normal")])).len(), 1);
    assert!(violations(&g(&[
        ("octo-app", "octo-provider-openai", "normal"),
        ("octo-tools", "octo-testkit", "dev"),
        ("octo-testkit", "octo-agent", "normal")
    ]))
    .is_empty());
}

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The code of a Rust file without its test module and without comment lines (docs may name
/// anything).
fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") && !p.ends_with("tests.rs") {
                // `tests.rs` beside a module holds its unit tests (`#[cfg(test)] mod tests;`).
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The top-level modules of a crate's `src` and, for each, the top-level modules it names through
/// `crate::`.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in rust_files(src) {
        let rel = file.strip_prefix(src).unwrap();
        let module =
            rel.components().next().unwrap().as_os_str().to_string_lossy().trim_end_matches(".rs").to_owned();
        if module == "lib" {
            continue;
        }
        let code = code_of(&file);
        let uses = graph.entry(module.clone()).or_default();
        for (i, _) in code.match_indices("crate::") {
            let name: String =
                code[i + 7..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if !name.is_empty() && name != module {
                uses.insert(name);
            }
        }
    }
    graph
}

/// A cycle in `graph`, as the path that closes it.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == node) {
            let mut cycle = path[i..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|k| visit(k, graph, &mut Vec::new(), &mut done))
}

#[test]
fn octo_agent_modules_depend_on_each_other_in_one_direction() {
    let graph = module_graph(&root().join("crates/octo-agent/src"));
    assert!(graph.contains_key("tool") && graph.contains_key("event"), "{graph:?}");
    if let Some(cycle) = find_cycle(&graph) {
        panic!("octo-agent's modules import each other in a circle: {}", cycle.join(" → "));
    }
}

#[test]
fn the_cycle_finder_finds_cycles() {
    let g = |edges: &[(&str, &str)]| {
        let mut m: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges {
            m.entry((*a).into()).or_default().insert((*b).into());
            m.entry((*b).into()).or_default();
        }
        m
    };
    assert_eq!(
        find_cycle(&g(&[("approval", "event"), ("event", "tool"), ("tool", "approval")])).map(|c| c.len()),
        Some(4)
    );
    assert_eq!(find_cycle(&g(&[("a", "b"), ("b", "c"), ("a", "c")])), None);
}

/// The built-in tools' names, as octo-tools' default registry has them.
fn builtin_tool_names() -> Vec<String> {
    octo_tools::default_names()
}

#[test]
fn no_tool_is_known_by_name_outside_octo_tools() {
    let names = builtin_tool_names();
    assert!(names.len() > 10 && names.contains(&"write_file".to_owned()), "{names:?}");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path().join("src"))
        .filter(|p| {
            p.is_dir()
                && !p.starts_with(root().join("crates/octo-tools"))
                && !p.starts_with(root().join("crates/octo-testkit"))
        })
        .collect();
    dirs.push(root().join("cmd/octo/src"));
    let mut found = Vec::new();
    for dir in dirs {
        for file in rust_files(&dir) {
            let code = code_of(&file);
            for name in &names {
                if code.contains(&format!("\"{name}\"")) {
                    found.push(format!("{} names `{name}`", file.display()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "tools describe themselves (ToolMeta); nothing outside octo-tools may match one by name:\n{}",
        found.join("\n")
    );
}

/// The README's "use octo as a library" example is the program CI builds and runs
/// (`examples/library`), word for word.
#[test]
fn the_readme_library_example_is_the_program_ci_runs() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let lib = std::fs::read_to_string(root.join("examples/library/src/lib.rs")).unwrap();
    let code: Vec<&str> = lib.lines().filter(|l| !l.starts_with("//!")).collect();
    let code = code.join("\n");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(
        readme.contains(code.trim()),
        "README.md's library example differs from examples/library/src/lib.rs"
    );
    let manifest = std::fs::read_to_string(root.join("examples/library/Cargo.toml")).unwrap();
    assert!(!manifest.contains("octo-app ="), "the example uses the crates without octo-app");
}

/// The public methods (`pub fn`, `pub async fn`; not `pub(crate)`) in `text`'s `impl <ty> {`
/// blocks, by name.
fn pub_methods_of(text: &str, ty: &str) -> Vec<String> {
    let opening = format!("impl {ty} {{");
    let mut out = Vec::new();
    for (at, _) in text.match_indices(&opening) {
        let mut depth = 0usize;
        let mut line_start = at;
        let mut named = false;
        for (i, c) in text[at..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                '\n' => (line_start, named) = (at + i + 1, false),
                _ => {}
            }
            if depth == 0 && c == '}' {
                break;
            }
            if depth == 1 && c == '(' && !std::mem::replace(&mut named, true) {
                let line = text[line_start..at + i].trim_start();
                let line = line.strip_prefix("pub async fn ").or_else(|| line.strip_prefix("pub fn "));
                if let Some(name) = line {
                    out.push(name.split('<').next().unwrap_or(name).to_owned());
                }
            }
        }
    }
    out
}

#[test]
fn the_session_keeps_a_small_core_and_every_impl_of_it_is_under_session() {
    let src = root().join("crates/octo-app/src");
    let mut methods = Vec::new();
    let mut outside = Vec::new();
    for file in rust_files(&src) {
        let code = code_of(&file);
        let found = pub_methods_of(&code, "Session");
        if code.contains("impl Session {") && !file.starts_with(src.join("session")) {
            outside.push(file.display().to_string());
        }
        methods.extend(found);
    }
    assert!(outside.is_empty(), "`impl Session` outside session/ (use a sub-handle there): {outside:?}");
    assert!(methods.len() >= 5, "the counter found the core: {methods:?}");
    assert!(
        methods.len() <= 20,
        "Session has {} public methods (at most 20; give new verbs to a sub-handle): {methods:?}",
        methods.len()
    );
}

#[test]
fn the_method_counter_counts_public_methods_only() {
    let text = "impl Session {\n    pub fn a(&self) {\n        if x { y() }\n    }\n    pub(crate) fn b(&self) {}\n    \
                fn c(&self) {}\n    pub async fn d<'a>(&self) -> Result<(), E> {}\n}\nimpl Other {\n    pub fn e(&self) {}\n}\n";
    assert_eq!(pub_methods_of(text, "Session"), ["a", "d"]);
}
