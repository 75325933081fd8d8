//! Nested and conditional rules: added once, when a file tool reaches their folder or files.

#![allow(clippy::unwrap_used)]
use super::*;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn folder_rules_and_path_rules_are_added_once_when_work_reaches_them() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path();
    write(ws, "CLAUDE.md", "ROOT RULES\n");
    write(ws, "pkg/CLAUDE.md", "PKG RULES\n");
    write(ws, "pkg/inner/CLAUDE.local.md", "INNER LOCAL\n");
    write(ws, ".claude/rules/api.md", "---\npaths:\n  - \"src/api/**/*.ts\"\n---\nAPI RULE\n");
    write(ws, ".claude/rules/style.md", "---\npaths: \"**/*.{css,scss}, docs/*.md\"\n---\nSTYLE RULE\n");
    write(ws, ".claude/rules/always.md", "ALWAYS\n");
    let rules = NestedRules::new(ws);
    let text = |rel: &str| rules.reached(&inside(ws, rel).unwrap()).join("\n");

    let first = text("pkg/inner/a.rs");
    assert!(first.contains("PKG RULES") && first.contains("INNER LOCAL"), "{first}");
    assert!(!first.contains("ROOT RULES"), "the root's rules are in the prompt already: {first}");
    assert!(first.find("PKG RULES") < first.find("INNER LOCAL"), "outer folders first: {first}");
    assert_eq!(text("pkg/b.rs"), "", "each is added once");

    assert_eq!(text("src/api/x.js"), "");
    assert!(text("src/api/v1/x.ts").contains("API RULE"));
    assert!(text("web/a/b.scss").contains("STYLE RULE"));
    assert_eq!(text("docs/a.md"), "", "added already");
    assert!(!text("README.md").contains("ALWAYS"), "a rule without paths is in the prompt");
}

#[test]
fn paths_outside_the_workspace_reach_nothing() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    write(&ws, "x/CLAUDE.md", "X\n");
    write(t.path(), "CLAUDE.md", "PARENT\n");
    assert_eq!(inside(&ws, "../CLAUDE.md"), None);
    assert_eq!(inside(&ws, "/etc/passwd"), None);
    assert_eq!(inside(&ws, "x/../../y"), None);
    assert_eq!(inside(&ws, &ws.join("x/a").display().to_string()), Some(PathBuf::from("x/a")));
    assert_eq!(inside(&ws, "./x/./a"), Some(PathBuf::from("x/a")));
}

#[cfg(unix)]
#[test]
fn a_folder_linked_out_of_the_workspace_brings_no_rules() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    write(t.path(), "elsewhere/CLAUDE.md", "FROM OUTSIDE\n");
    write(&ws, "in/CLAUDE.md", "INSIDE\n");
    std::os::unix::fs::symlink(t.path().join("elsewhere"), ws.join("link")).unwrap();
    let rules = NestedRules::new(&ws);
    assert!(rules.reached(Path::new("link/a.txt")).is_empty());
    assert_eq!(rules.reached(Path::new("in/a.txt")).len(), 1);
}
