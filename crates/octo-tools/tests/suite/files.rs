//! File tools on real temporary directories.

use octo_agent::{ToolContext, ToolOutput, ToolRegistry, ToolResultPart};
use octo_tools::{default_registry, ToolsConfig};
use serde_json::{json, Value};
use std::path::PathBuf;

struct Ws {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    trash: PathBuf,
    reg: ToolRegistry,
}

fn ws() -> Ws {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ws");
    let trash = tmp.path().join("trash");
    std::fs::create_dir_all(&root).unwrap();
    let reg = default_registry(ToolsConfig { trash_dir: Some(trash.clone()), ..ToolsConfig::default() });
    Ws { _tmp: tmp, root, trash, reg }
}

impl Ws {
    async fn call(&self, tool: &str, input: Value) -> ToolOutput {
        self.reg.get(tool).unwrap().execute(input, &ToolContext::detached(&self.root)).await
    }
    fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, content).unwrap();
        p
    }
    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).unwrap()
    }
}

#[tokio::test]
async fn read_file_numbers_lines_and_pages() {
    let w = ws();
    let body: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    w.write("a.txt", &body);
    let out = w.call("read_file", json!({"path": "a.txt", "offset": 10, "limit": 3})).await;
    assert_eq!(
        out.text_content(),
        "    10\tline 10\n    11\tline 11\n    12\tline 12\n[showing lines 10-12 of 30; call read_file with offset=13 to read more]\n"
    );
    let all = w.call("read_file", json!({"path": "a.txt"})).await.text_content();
    assert!(all.ends_with("    30\tline 30\n"), "no note when everything is shown");
    let past = w.call("read_file", json!({"path": "a.txt", "offset": 99})).await;
    assert!(past.is_error && past.text_content().contains("has 30 lines"));
}

#[tokio::test]
async fn read_file_handles_crlf_non_utf8_and_long_lines() {
    let w = ws();
    w.write("crlf.txt", "one\r\ntwo\r\n");
    let out = w.call("read_file", json!({"path": "crlf.txt"})).await.text_content();
    assert!(out.starts_with("     1\tone\n     2\ttwo\n") && out.contains("CRLF"), "{out}");
    w.write("latin1.txt", b"caf\xe9\n");
    let out = w.call("read_file", json!({"path": "latin1.txt"})).await.text_content();
    assert!(out.contains("caf\u{fffd}") && out.contains("not valid UTF-8"), "{out}");
    w.write("min.js", "x".repeat(5000));
    let out = w.call("read_file", json!({"path": "min.js"})).await.text_content();
    assert!(out.contains("[line cut]") && out.len() < 2_200, "{}", out.len());
}

#[tokio::test]
async fn read_file_refuses_binaries_and_attaches_images() {
    let w = ws();
    w.write("prog", b"\x7FELF\x02\x01\x01\x00\x00\x00binary");
    let out = w.call("read_file", json!({"path": "prog"})).await;
    assert!(out.is_error);
    assert!(out.text_content().contains("binary file (ELF executable, 16 B)"), "{}", out.text_content());
    // A 2×2 PNG.
    let png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x02\x00\x00\x00\x02\x08\x02\x00\x00\x00\xfd\xd4\x9as\x00\x00\x00\x16IDATx\x9cc\xf8\xcf\xc0\xc0\xf0\x9f\x81\x81\x81\x81\xe1?\x03\x00\x1a\xeb\x03\xfd\xa7\x9f\x11\x1b\x00\x00\x00\x00IEND\xaeB`\x82";
    w.write("pic.png", png);
    let out = w.call("read_file", json!({"path": "pic.png"})).await;
    assert!(!out.is_error, "{}", out.text_content());
    assert!(matches!(&out.content[1], ToolResultPart::Image { source } if source.media_type == "image/png"));
    // A damaged image or a text file named like one is refused with the reason.
    w.write("broken.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR");
    let out = w.call("read_file", json!({"path": "broken.png"})).await;
    assert!(out.is_error && out.text_content().contains("cannot be read"), "{}", out.text_content());
}

#[tokio::test]
async fn read_file_pages_through_a_10_mb_file() {
    let w = ws();
    let line =
        "0123456789 abcdefghij klmnopqrst uvwxyz 0123456789 abcdefghij klmnopqrst uvwxyz 0123456789 abcd\n";
    let body = line.repeat(10 * 1024 * 1024 / line.len());
    w.write("big.log", &body);
    let lines = body.lines().count();
    let out =
        w.call("read_file", json!({"path": "big.log", "offset": lines - 1, "limit": 5})).await.text_content();
    assert!(out.contains(&format!("{lines:>6}\t")), "{out}");
    let first = w.call("read_file", json!({"path": "big.log"})).await.text_content();
    assert_eq!(first.lines().filter(|l| !l.starts_with('[')).count(), 2000);
    assert!(first.contains(&format!("of {lines}")));
}

#[tokio::test]
async fn read_file_explains_missing_paths_and_directories() {
    let w = ws();
    let out = w.call("read_file", json!({"path": "nope.rs"})).await;
    assert!(out.is_error && out.text_content().contains("does not exist"));
    std::fs::create_dir(w.root.join("dir")).unwrap();
    assert!(w.call("read_file", json!({"path": "dir"})).await.text_content().contains("list_dir"));
    let bad = w.call("read_file", json!({"path": 5})).await;
    assert!(bad.is_error && bad.text_content().contains("invalid type"));
}

#[tokio::test]
async fn write_file_creates_overwrites_with_diff_and_keeps_the_old_content() {
    let w = ws();
    let out = w.call("write_file", json!({"path": "src/new/mod.rs", "content": "a\nb\n"})).await;
    assert_eq!(out.text_content(), "created src/new/mod.rs (2 lines)");
    let out =
        w.call("write_file", json!({"path": "src/new/mod.rs", "content": "a\nB\n"})).await.text_content();
    assert!(out.contains("-b\n+B"), "{out}");
    assert_eq!(w.read("src/new/mod.rs"), "a\nB\n");
    let trashed: Vec<_> = std::fs::read_dir(&w.trash)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.ends_with("journal.jsonl"))
        .collect();
    assert_eq!(trashed.len(), 1);
    assert_eq!(std::fs::read_to_string(&trashed[0]).unwrap(), "a\nb\n");
}

#[cfg(unix)]
#[tokio::test]
async fn write_file_keeps_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let w = ws();
    let p = w.write("run.sh", "#!/bin/sh\n");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    w.call("write_file", json!({"path": "run.sh", "content": "#!/bin/sh\necho hi\n"})).await;
    assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o755);
}

#[tokio::test]
async fn writes_outside_the_workspace_are_refused() {
    let w = ws();
    let outside = w.root.parent().unwrap().join("outside.txt");
    for path in ["../outside.txt".to_owned(), outside.display().to_string()] {
        let out = w.call("write_file", json!({"path": path, "content": "x"})).await;
        assert!(
            out.is_error && out.text_content().contains("outside the workspace"),
            "{}",
            out.text_content()
        );
    }
    assert!(!outside.exists());
    let out =
        w.call("edit_file", json!({"path": "../outside.txt", "old_string": "a", "new_string": "b"})).await;
    assert!(out.is_error && out.text_content().contains("outside the workspace"));
}

#[cfg(unix)]
#[tokio::test]
async fn a_symlink_that_points_out_is_refused() {
    let w = ws();
    let target = w.root.parent().unwrap().join("elsewhere");
    std::fs::create_dir_all(&target).unwrap();
    std::os::unix::fs::symlink(&target, w.root.join("link")).unwrap();
    let out = w.call("write_file", json!({"path": "link/pwned.txt", "content": "x"})).await;
    assert!(out.is_error && out.text_content().contains("outside the workspace"), "{}", out.text_content());
    assert!(!target.join("pwned.txt").exists());
}

#[tokio::test]
async fn writable_roots_are_allowed_without_asking() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ws");
    let extra = tmp.path().join("scratch");
    std::fs::create_dir_all(&root).unwrap();
    let reg = default_registry(ToolsConfig { writable_roots: vec![extra.clone()], ..ToolsConfig::default() });
    let out = reg
        .get("write_file")
        .unwrap()
        .execute(
            json!({"path": extra.join("x.txt").display().to_string(), "content": "ok"}),
            &ToolContext::detached(&root),
        )
        .await;
    assert!(!out.is_error, "{}", out.text_content());
    assert_eq!(std::fs::read_to_string(extra.join("x.txt")).unwrap(), "ok");
}

#[tokio::test]
async fn edit_file_replaces_uniquely_and_explains_failures() {
    let w = ws();
    w.write("lib.rs", "fn a() {}\nfn b() {}\nfn a2() {}\n");
    let out = w
        .call(
            "edit_file",
            json!({"path": "lib.rs", "old_string": "fn b() {}", "new_string": "fn b() { todo() }"}),
        )
        .await;
    assert!(!out.is_error && out.text_content().contains("+fn b() { todo() }"), "{}", out.text_content());
    let many =
        w.call("edit_file", json!({"path": "lib.rs", "old_string": "fn a", "new_string": "fn z"})).await;
    assert!(
        many.is_error && many.text_content().contains("2 times (at lines 1, 3)"),
        "{}",
        many.text_content()
    );
    let missing =
        w.call("edit_file", json!({"path": "lib.rs", "old_string": "fn c() {}", "new_string": "x"})).await;
    assert!(
        missing.is_error && missing.text_content().contains("closest match"),
        "{}",
        missing.text_content()
    );
    let all = w
        .call(
            "edit_file",
            json!({"path": "lib.rs", "old_string": "fn a", "new_string": "fn z", "replace_all": true}),
        )
        .await;
    assert!(!all.is_error);
    assert_eq!(w.read("lib.rs"), "fn z() {}\nfn b() { todo() }\nfn z2() {}\n");
    let nofile = w.call("edit_file", json!({"path": "nope.rs", "old_string": "a", "new_string": "b"})).await;
    assert!(nofile.text_content().contains("use write_file"));
}

#[tokio::test]
async fn edit_file_keeps_crlf_files_crlf() {
    let w = ws();
    w.write("win.txt", "alpha\r\nbeta\r\ngamma\r\n");
    let out = w
        .call(
            "edit_file",
            json!({"path": "win.txt", "old_string": "alpha\nbeta", "new_string": "ALPHA\nBETA"}),
        )
        .await;
    assert!(!out.is_error, "{}", out.text_content());
    assert_eq!(w.read("win.txt"), "ALPHA\r\nBETA\r\ngamma\r\n");
}

#[tokio::test]
async fn several_edits_are_all_or_nothing() {
    let w = ws();
    w.write("cfg.toml", "a = 1\nb = 2\n");
    let bad = w
        .call(
            "edit_file",
            json!({"path": "cfg.toml", "edits": [
                {"old_string": "a = 1", "new_string": "a = 10"},
                {"old_string": "c = 3", "new_string": "c = 30"}
            ]}),
        )
        .await;
    assert!(bad.is_error && bad.text_content().contains("edit #2 of 2 failed"), "{}", bad.text_content());
    assert_eq!(w.read("cfg.toml"), "a = 1\nb = 2\n", "nothing applied");
    let good = w
        .call(
            "edit_file",
            json!({"path": "cfg.toml", "edits": [
                {"old_string": "a = 1", "new_string": "a = 10"},
                {"old_string": "a = 10\nb = 2", "new_string": "a = 10\nb = 20"}
            ]}),
        )
        .await;
    assert!(!good.is_error, "{}", good.text_content());
    assert_eq!(w.read("cfg.toml"), "a = 10\nb = 20\n", "later edits see earlier ones");
    // One change or several, not both; a half-given change says what is missing.
    for (input, says) in [
        (
            json!({"path": "cfg.toml", "old_string": "a", "new_string": "b", "edits": [{"old_string": "b", "new_string": "c"}]}),
            "not both",
        ),
        (json!({"path": "cfg.toml", "old_string": "a = 10"}), "`new_string` is missing"),
        (json!({"path": "cfg.toml"}), "nothing to change"),
    ] {
        let out = w.call("edit_file", input).await;
        assert!(out.is_error && out.text_content().contains(says), "{}", out.text_content());
    }
    assert_eq!(w.read("cfg.toml"), "a = 10\nb = 20\n", "a refused call changes nothing");
}

#[tokio::test]
async fn list_dir_shows_types_sizes_and_respects_ignores() {
    let w = ws();
    w.write(".gitignore", "target/\n*.log\n");
    w.write("src/main.rs", "fn main() {}\n");
    w.write("debug.log", "noise");
    w.write("target/out", "x");
    w.write("README.md", "hi");
    let out = w.call("list_dir", json!({})).await.text_content();
    assert!(out.contains("src/\n") && out.contains("README.md  (2 B)"), "{out}");
    assert!(!out.contains("target") && !out.contains("debug.log") && !out.contains(".gitignore"), "{out}");
    let all = w.call("list_dir", json!({"all": true})).await.text_content();
    assert!(all.contains("target/") && all.contains("debug.log") && all.contains(".gitignore"), "{all}");
    let file = w.call("list_dir", json!({"path": "README.md"})).await;
    assert!(file.is_error);
}

/// A command left running swaps `src/rd` between a folder inside and a link to the outside while
/// `write_file src/rd/victim.txt` runs 50 times: whatever octo's check saw, the write never lands
/// outside and no temporary file is left there.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_swapped_for_a_link_outside_never_redirects_a_write() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let w = ws();
    let outside = w.root.parent().unwrap().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("victim.txt"), "untouched\n").unwrap();
    let src = w.root.join("src");
    std::fs::create_dir_all(src.join("real")).unwrap();
    std::os::unix::fs::symlink("real", src.join("rd")).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, src, outside) = (Arc::clone(&stop), src.clone(), outside.clone());
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let tmp = src.join("rd.swap");
                let _ = std::fs::remove_file(&tmp);
                let target = if i.is_multiple_of(2) { outside.clone() } else { PathBuf::from("real") };
                std::os::unix::fs::symlink(target, &tmp).unwrap();
                std::fs::rename(&tmp, src.join("rd")).unwrap();
                i += 1;
            }
        })
    };
    for n in 0..50 {
        let _ = w
            .call("write_file", json!({"path": "src/rd/victim.txt", "content": format!("write {n}\n")}))
            .await;
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    assert_eq!(std::fs::read_to_string(outside.join("victim.txt")).unwrap(), "untouched\n");
    let left: Vec<_> = std::fs::read_dir(&outside).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, ["victim.txt"], "nothing else outside");
}
