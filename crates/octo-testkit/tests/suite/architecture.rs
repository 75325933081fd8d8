//! The dependency direction is the architecture (shared/ARCHITECTURE.md). This test reads
//! `cargo metadata` and fails when a dependency points the wrong way.

use serde_json::Value;
use std::collections::BTreeMap;
use std::process::Command;

/// Layer of every workspace crate: a crate may depend only on crates of a lower layer, with the
/// extra rules below. A new crate must be added here, which forces a decision about its layer.
fn layer(name: &str) -> Option<u8> {
    Some(match name {
        "octo-agent" => 0,
        "octo-provider" => 1,
        "octo-provider-anthropic"
        | "octo-provider-openai"
        | "octo-tools"
        | "octo-session"
        | "octo-memory"
        | "octo-skills"
        | "octo-mcp" => 2,
        "octo-app" => 3,
        "octo-cli" | "octo-server" | "octo-channels" => 4,
        "octo-testkit" => 5,
        _ => return None,
    })
}

fn is_provider(name: &str) -> bool {
    name.starts_with("octo-provider-")
}

fn is_front_end(name: &str) -> bool {
    matches!(name, "octo-cli" | "octo-server" | "octo-channels")
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
                "`{krate}` has no layer: add it to the table in this test and to ARCHITECTURE.md"
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
    assert!(violations(&g(&[
        ("octo-app", "octo-provider-openai", "normal"),
        ("octo-tools", "octo-testkit", "dev")
    ]))
    .is_empty());
}
