//! `glob` and `grep` on real trees.

use octo_agent::{ToolContext, ToolOutput};
use octo_tools::{default_registry, ToolsConfig};
use serde_json::{json, Value};
use std::path::Path;

fn tree() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let files: &[(&str, &[u8])] = &[
        (".gitignore", b"target/\n*.min.js\n"),
        ("src/main.rs", b"fn main() {\n    helper();\n}\n"),
        ("src/util/helper.rs", b"pub fn helper() {\n    // TODO: Helper docs\n}\n"),
        ("src/util/mod.rs", b"pub mod helper;\n"),
        ("web/app.ts", b"export function helper() {}\n"),
        ("web/vendor.min.js", b"function helper(){}"),
        ("target/debug/build.rs", b"fn helper() {}\n"),
        (".hidden/secret.rs", b"fn helper() {}\n"),
        ("assets/blob.bin", b"helper\x00\x01\x02binary"),
    ];
    for (p, c) in files {
        let path = tmp.path().join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, c).unwrap();
    }
    tmp
}

async fn call(root: &Path, tool: &str, input: Value) -> ToolOutput {
    default_registry(ToolsConfig::default())
        .get(tool)
        .unwrap()
        .execute(input, &ToolContext::detached(root))
        .await
}

#[tokio::test]
async fn glob_matches_respects_gitignore_and_hidden_files() {
    let t = tree();
    let out = call(t.path(), "glob", json!({"pattern": "**/*.rs"})).await.text_content();
    let mut got: Vec<&str> = out.lines().collect();
    got.sort_unstable();
    assert_eq!(got, ["src/main.rs", "src/util/helper.rs", "src/util/mod.rs"]);
    let top = call(t.path(), "glob", json!({"pattern": "src/*.rs"})).await.text_content();
    assert_eq!(top, "src/main.rs\n", "`*` does not cross directories");
    let scoped = call(t.path(), "glob", json!({"pattern": "*.rs", "path": "src/util"})).await.text_content();
    assert_eq!(scoped.lines().count(), 2);
    let none = call(t.path(), "glob", json!({"pattern": "**/*.java"})).await.text_content();
    assert!(none.contains("no files match"));
    let bad = call(t.path(), "glob", json!({"pattern": "src/[a"})).await;
    assert!(bad.is_error && bad.text_content().contains("invalid glob"), "{}", bad.text_content());
}

#[tokio::test]
async fn glob_lists_newest_first_and_caps_the_list() {
    let t = tempfile::tempdir().unwrap();
    for i in 0..150 {
        std::fs::write(t.path().join(format!("f{i:03}.txt")), "x").unwrap();
    }
    let newest = t.path().join("f007.txt");
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
    std::fs::File::options().write(true).open(&newest).unwrap().set_modified(later).unwrap();
    let out = call(t.path(), "glob", json!({"pattern": "*.txt"})).await.text_content();
    assert!(out.starts_with("f007.txt\n"), "{}", &out[..40]);
    assert_eq!(out.lines().filter(|l| l.ends_with(".txt")).count(), 100);
    assert!(out.contains("50 more files match"));
}

#[tokio::test]
async fn grep_finds_files_lines_and_counts() {
    let t = tree();
    let files = call(t.path(), "grep", json!({"pattern": "helper"})).await.text_content();
    assert_eq!(
        files, "src/main.rs\nsrc/util/helper.rs\nsrc/util/mod.rs\nweb/app.ts\n",
        "ignored, hidden and binary files skipped"
    );
    let content = call(t.path(), "grep", json!({"pattern": "fn helper", "output_mode": "content"}))
        .await
        .text_content();
    assert_eq!(content, "src/util/helper.rs:1:pub fn helper() {\n");
    let count = call(t.path(), "grep", json!({"pattern": "helper", "output_mode": "count", "glob": "*.rs"}))
        .await
        .text_content();
    assert!(count.starts_with("src/main.rs:1\nsrc/util/helper.rs:1\nsrc/util/mod.rs:1\n"), "{count}");
}

#[tokio::test]
async fn grep_options_case_context_globs_and_literals() {
    let t = tree();
    let ci = call(
        t.path(),
        "grep",
        json!({"pattern": "todo: helper", "case_insensitive": true, "output_mode": "content"}),
    )
    .await;
    assert_eq!(ci.text_content(), "src/util/helper.rs:2:    // TODO: Helper docs\n");
    let ctx = call(t.path(), "grep", json!({"pattern": "TODO", "output_mode": "content", "context": 1}))
        .await
        .text_content();
    assert_eq!(ctx, "src/util/helper.rs-1-pub fn helper() {\nsrc/util/helper.rs:2:    // TODO: Helper docs\nsrc/util/helper.rs-3-}\n");
    let excl = call(t.path(), "grep", json!({"pattern": "helper", "exclude": "*.rs"})).await.text_content();
    assert_eq!(excl, "web/app.ts\n");
    let lit =
        call(t.path(), "grep", json!({"pattern": "helper()", "fixed_strings": true, "output_mode": "count"}))
            .await
            .text_content();
    assert!(lit.starts_with("src/main.rs:1\n"), "{lit}");
    let scoped = call(
        t.path(),
        "grep",
        json!({"pattern": "helper", "path": "src/util/helper.rs", "output_mode": "content"}),
    )
    .await;
    assert!(scoped.text_content().starts_with("helper.rs:1:"), "{}", scoped.text_content());
}

#[tokio::test]
async fn grep_limits_output_and_reports_bad_patterns() {
    let t = tempfile::tempdir().unwrap();
    let body: String = (0..500).map(|i| format!("match {i}\n")).collect();
    std::fs::write(t.path().join("many.txt"), body).unwrap();
    let out = call(t.path(), "grep", json!({"pattern": "match", "output_mode": "content", "limit": 10}))
        .await
        .text_content();
    assert_eq!(out.lines().filter(|l| l.starts_with("many.txt:")).count(), 10);
    assert!(out.contains("500 matching lines"), "{out}");
    let bad = call(t.path(), "grep", json!({"pattern": "fn (("})).await;
    assert!(bad.is_error && bad.text_content().contains("invalid regular expression"));
    let missing = call(t.path(), "grep", json!({"pattern": "x", "path": "nope"})).await;
    assert!(missing.is_error && missing.text_content().contains("does not exist"));
}

/// A glob override would reach hidden files the permission engine refuses one by one: secret
/// files are never searched, however the call is spelled.
#[tokio::test]
async fn grep_never_searches_secret_files() {
    let t = tree();
    std::fs::write(t.path().join(".env"), "API_TOKEN=sk-live-123\n").unwrap();
    std::fs::write(t.path().join(".env.example"), "API_TOKEN=\n").unwrap();
    for input in [
        json!({"pattern": "API_TOKEN", "glob": ".env", "output_mode": "content"}),
        json!({"pattern": "API_TOKEN", "glob": "*", "output_mode": "content"}),
        json!({"pattern": "sk-live", "glob": ".env*", "output_mode": "content"}),
    ] {
        let out = call(t.path(), "grep", input.clone()).await.text_content();
        assert!(!out.contains("sk-live-123") && !out.contains(".env:"), "{input}: {out}");
    }
    let example =
        call(t.path(), "grep", json!({"pattern": "API_TOKEN", "glob": ".env*"})).await.text_content();
    assert!(example.contains(".env.example"), "committed examples are searched: {example}");
}
