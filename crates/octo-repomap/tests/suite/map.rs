use super::fixture::{project, write};
use octo_agent::{ToolContext, ToolExecutor};
use octo_repomap::{tokens, Limits, RepoMap, RepoMapTool, Request};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

fn request(focus: &[&str], budget: Option<usize>) -> Request {
    Request { focus: focus.iter().map(|s| (*s).to_owned()).collect(), budget }
}

/// The files of a map in the order shown.
fn files_in(text: &str) -> Vec<&str> {
    text.lines().filter(|l| !l.starts_with(' ') && l.contains('.') && !l.contains(' ')).collect()
}

#[test]
fn the_definitions_the_named_files_use_come_first() {
    let ws = tempfile::tempdir().unwrap();
    project(ws.path());
    let map = RepoMap::new(ws.path(), None);
    let plain = map.build(&request(&[], None)).text;
    assert_eq!(files_in(&plain)[0], "src/net.rs", "{plain}");
    let focused = map.build(&request(&["src/app.rs"], None)).text;
    assert_eq!(files_in(&focused)[0], "src/store.rs", "{focused}");
    assert!(focused.contains("pub fn open_store(path: &str) -> Store {"), "{focused}");
    let python = map.build(&request(&["tools/report.py"], None)).text;
    assert_eq!(files_in(&python)[0], "tools/lib.py", "{python}");
    assert!(!plain.contains("README"), "{plain}");
}

#[test]
fn a_symbol_in_focus_and_a_directory_in_focus() {
    let ws = tempfile::tempdir().unwrap();
    project(ws.path());
    let map = RepoMap::new(ws.path(), None);
    let by_symbol = map.build(&request(&["Cart"], None)).text;
    assert_eq!(files_in(&by_symbol)[0], "web/cart.ts", "{by_symbol}");
    let by_dir = map.build(&request(&["tools"], None)).text;
    assert_eq!(files_in(&by_dir)[0], "tools/lib.py", "{by_dir}");
}

#[test]
fn the_budget_holds() {
    let ws = tempfile::tempdir().unwrap();
    project(ws.path());
    for i in 0..60 {
        let body: String = (0..20)
            .map(|j| format!("pub fn item_{i}_{j}() {{ crate::net::connect_socket(\"x\"); }}\n"))
            .collect();
        write(ws.path(), &[(&format!("gen/m{i}.rs"), &body)]);
    }
    let map = RepoMap::new(ws.path(), None);
    for budget in [100, 400, 1_024, 4_000] {
        let text = map.build(&request(&[], Some(budget))).text;
        assert!(tokens(&text) <= budget, "budget {budget}, used {}", tokens(&text));
        assert!(text.contains("more definitions not shown"), "{text}");
    }
}

#[test]
fn a_changed_file_updates_the_map_and_the_cache_is_reused() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    project(ws.path());
    let first = RepoMap::new(ws.path(), Some(home.path().to_path_buf()));
    let built = first.build(&request(&[], None));
    assert_eq!(built.progress.parsed, 8);
    assert!(built.text.contains("connect_socket"));
    // A new session over the same workspace reads nothing again.
    let second = RepoMap::new(ws.path(), Some(home.path().to_path_buf()));
    assert_eq!(second.build(&request(&[], None)).progress.parsed, 0);
    // A changed file (other size) is read again, and only it.
    write(
        ws.path(),
        &[(
            "src/net.rs",
            "pub struct Socket;\n\npub fn dial_remote_host(addr: &str) -> Socket {\n    Socket\n}\n",
        )],
    );
    let after = second.build(&request(&[], None));
    assert_eq!(after.progress.parsed, 1);
    assert!(after.text.contains("dial_remote_host"), "{}", after.text);
    assert!(!after.text.contains("pub fn connect_socket"), "{}", after.text);
    // A deleted file leaves the map.
    std::fs::remove_file(ws.path().join("tools/lib.py")).unwrap();
    let gone = second.build(&request(&[], None)).text;
    assert!(!gone.contains("tools/lib.py"), "{gone}");
}

#[test]
fn unparsable_binary_and_outside_files_are_left_out() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    project(ws.path());
    let garbage = ")))) ]]]] }}}} ;;;; @@@@ #### fn\n".repeat(50);
    write(ws.path(), &[("src/broken.rs", &garbage), ("src/blob.rs", "fn hidden_blob() {}\0\0\0")]);
    write(outside.path(), &[("secret.rs", "pub fn outside_secret() {}\n")]);
    std::os::unix::fs::symlink(outside.path().join("secret.rs"), ws.path().join("src/link.rs")).unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.path().join("linked_dir")).unwrap();
    write(ws.path(), &[("ignored/gen.rs", "pub fn ignored_fn() {}\n"), (".gitignore", "ignored/\n")]);
    let map = RepoMap::new(ws.path(), None);
    let text = map.build(&request(&["../secret.rs", "/etc/passwd"], Some(4_000))).text;
    for absent in ["outside_secret", "hidden_blob", "broken.rs", "ignored_fn"] {
        assert!(!text.contains(absent), "{absent} in {text}");
    }
    assert!(text.contains("open_store"), "{text}");
}

#[test]
fn the_filter_keeps_files_out() {
    let ws = tempfile::tempdir().unwrap();
    project(ws.path());
    let limits = Limits {
        filter: Some(Arc::new(|p: &std::path::Path| !p.ends_with("store.rs"))),
        ..Limits::default()
    };
    let map = RepoMap::new(ws.path(), None).with_limits(limits);
    let text = map.build(&request(&[], Some(4_000))).text;
    assert!(!text.contains("open_store(path"), "{text}");
    assert!(text.contains("connect_socket"), "{text}");
}

#[test]
fn the_conversations_files_lean_the_ranking() {
    let ws = tempfile::tempdir().unwrap();
    project(ws.path());
    let map = RepoMap::new(ws.path(), None);
    map.note_seen(&ws.path().join("src/app.rs"));
    map.note_seen(std::path::Path::new("/elsewhere/x.rs"));
    let text = map.build(&request(&[], None)).text;
    assert_eq!(files_in(&text)[0], "src/store.rs", "{text}");
}

#[tokio::test]
async fn the_tool_answers_and_refuses_bad_arguments() {
    let ws = tempfile::tempdir().unwrap();
    project(ws.path());
    let tool = RepoMapTool(Arc::new(
        RepoMap::new(ws.path(), None)
            .with_limits(Limits { budget: Duration::from_secs(10), ..Limits::default() }),
    ));
    assert!(tool.meta().read_only && tool.meta().concurrency_safe);
    let ctx = ToolContext::detached("/");
    let out = tool.execute(json!({"focus": ["src/cli.rs"], "budget": 500}), &ctx).await;
    assert!(!out.is_error, "{out:?}");
    assert!(out.text_content().contains("src/net.rs"), "{out:?}");
    let bad = tool.execute(json!({"focus": "src/cli.rs", "depth": 3}), &ctx).await;
    assert!(bad.is_error, "{bad:?}");
    let empty = tempfile::tempdir().unwrap();
    let none = RepoMapTool(Arc::new(RepoMap::new(empty.path(), None)));
    let out = none.execute(json!({}), &ctx).await;
    assert!(out.text_content().contains("0 files"), "{out:?}");
}

#[test]
fn the_files_a_prompt_names_lead_the_ranking() {
    let ws = tempfile::tempdir().unwrap();
    project(ws.path());
    let map = RepoMap::new(ws.path(), None);
    map.note_prompt("Why does `src/app.rs` open the store twice? See also ../outside.rs and notes.");
    let text = map.build(&request(&[], None)).text;
    assert_eq!(files_in(&text)[0], "src/store.rs", "{text}");
    // The next prompt replaces it.
    map.note_prompt("now look at tools/report.py, please.");
    let text = map.build(&request(&[], None)).text;
    assert_eq!(files_in(&text)[0], "tools/lib.py", "{text}");
}
