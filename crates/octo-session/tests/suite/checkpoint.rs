//! Checkpoints on real files with the system git: what any writer changed between two snapshots
//! is put back, the user's own repository is never touched, and odd files are handled.

use octo_session::checkpoint::{CheckpointError, CheckpointStore, RestoreAction, Snapshot, TurnRecord};
use std::fs;
use std::path::Path;
use std::process::Command;

fn store(root: &Path, ws: &Path) -> CheckpointStore {
    CheckpointStore::open(root, ws).unwrap()
}

/// One turn: `change` runs between the before and after snapshots.
fn turn(s: &CheckpointStore, session: &str, position: usize, change: impl FnOnce()) -> Option<u32> {
    let before = s.snapshot(session).unwrap();
    change();
    let after = s.snapshot(session).unwrap();
    record(s, session, position, &before, &after, &[])
}

fn record(
    s: &CheckpointStore,
    session: &str,
    position: usize,
    before: &Snapshot,
    after: &Snapshot,
    by: &[(String, Vec<String>)],
) -> Option<u32> {
    let rec = TurnRecord { session, position, prompt: "do it\nmore", before, after, by };
    s.record(&rec).unwrap().map(|c| c.seq)
}

/// Restores everything from checkpoint `seq` on, overwriting nothing changed since.
fn rewind(s: &CheckpointStore, session: &str, seq: u32) -> octo_session::checkpoint::RestoreReport {
    let list: Vec<_> = s.list(Some(session)).unwrap().into_iter().filter(|c| c.seq >= seq).collect();
    let plan = s.plan_restore(session, &list).unwrap();
    s.restore(&plan, &[])
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git").args(args).current_dir(dir).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn has_git() -> bool {
    Command::new("git").arg("--version").output().is_ok_and(|o| o.status.success())
}

#[test]
fn a_commands_edit_a_deletion_and_a_new_file_are_undone() {
    if !has_git() {
        eprintln!("skipped: no git");
        return;
    }
    let (home, ws) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    fs::write(ws.path().join("a.rs"), "fn a() {}\n").unwrap();
    fs::write(ws.path().join("gone.txt"), "keep me\n").unwrap();
    let s = store(home.path(), ws.path());
    let seq = turn(&s, "s1", 0, || {
        // What `sed -i`, `rm` and a generator would do: no octo file tool involved.
        fs::write(ws.path().join("a.rs"), "fn a() { broken }\n").unwrap();
        fs::remove_file(ws.path().join("gone.txt")).unwrap();
        fs::create_dir_all(ws.path().join("gen/out")).unwrap();
        fs::write(ws.path().join("gen/out/new.rs"), "// generated\n").unwrap();
    })
    .unwrap();
    let cp = s.get("s1", seq).unwrap();
    assert_eq!(cp.prompt, "do it");
    let mut changed: Vec<_> = cp.changed.iter().map(|c| (c.status.as_str(), c.path.as_str())).collect();
    changed.sort_unstable();
    assert_eq!(changed, [("A", "gen/out/new.rs"), ("D", "gone.txt"), ("M", "a.rs")]);
    let report = rewind(&s, "s1", seq);
    assert_eq!(report.restored, ["a.rs", "gen/out/new.rs", "gone.txt"], "{report:?}");
    assert_eq!(fs::read_to_string(ws.path().join("a.rs")).unwrap(), "fn a() {}\n");
    assert_eq!(fs::read_to_string(ws.path().join("gone.txt")).unwrap(), "keep me\n");
    assert!(!ws.path().join("gen").exists(), "the new file and the folders it needed are gone");
}

#[test]
fn the_users_repository_is_byte_identical_and_its_ignores_hold() {
    if !has_git() {
        return;
    }
    let (home, ws) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let w = ws.path();
    git(w, &["init", "-q"]);
    fs::write(w.join(".gitignore"), "target/\n").unwrap();
    fs::write(w.join("lib.rs"), "v1\n").unwrap();
    git(w, &["add", "."]);
    git(w, &["-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "one"]);
    fs::write(w.join("lib.rs"), "v2 staged\n").unwrap();
    git(w, &["add", "lib.rs"]);
    let index = fs::read(w.join(".git/index")).unwrap();
    let refs = git(w, &["for-each-ref"]);
    let objects = git(w, &["count-objects", "-v"]);
    let s = store(home.path(), w);
    let seq = turn(&s, "s1", 0, || {
        fs::write(w.join("lib.rs"), "v3\n").unwrap();
        fs::create_dir_all(w.join("target")).unwrap();
        fs::write(w.join("target/app.bin"), "build output").unwrap();
    })
    .unwrap();
    let cp = s.get("s1", seq).unwrap();
    assert_eq!(cp.changed.len(), 1, "ignored build output is not checkpointed: {:?}", cp.changed);
    rewind(&s, "s1", seq);
    assert_eq!(fs::read_to_string(w.join("lib.rs")).unwrap(), "v2 staged\n");
    assert_eq!(fs::read(w.join(".git/index")).unwrap(), index, "the user's index is untouched");
    assert_eq!(git(w, &["for-each-ref"]), refs);
    assert_eq!(git(w, &["count-objects", "-v"]), objects);
    assert!(!git(w, &["stash", "list"]).contains("stash"));
}

#[test]
fn a_dot_git_file_a_folder_without_git_and_a_nested_repository_work() {
    if !has_git() {
        return;
    }
    let (home, ws) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let w = ws.path();
    // A linked worktree's `.git` is a file; it is never stored or restored.
    fs::write(w.join(".git"), "gitdir: /somewhere/else\n").unwrap();
    fs::create_dir_all(w.join("vendor/dep")).unwrap();
    git(&w.join("vendor/dep"), &["init", "-q"]);
    fs::write(w.join("vendor/dep/x"), "x").unwrap();
    let s = store(home.path(), w);
    let seq = turn(&s, "s1", 0, || fs::write(w.join("notes.md"), "hi").unwrap()).unwrap();
    let cp = s.get("s1", seq).unwrap();
    assert_eq!(cp.changed.iter().map(|c| c.path.as_str()).collect::<Vec<_>>(), ["notes.md"]);
    assert!(
        cp.skipped.iter().any(|k| k.path == "vendor/dep" && k.why.contains("repository")),
        "{:?}",
        cp.skipped
    );
    rewind(&s, "s1", seq);
    assert!(!w.join("notes.md").exists());
    assert_eq!(fs::read_to_string(w.join(".git")).unwrap(), "gitdir: /somewhere/else\n");
}

#[cfg(unix)]
#[test]
fn modes_are_restored_and_links_are_never_followed() {
    use std::os::unix::fs::PermissionsExt;
    if !has_git() {
        return;
    }
    let (home, ws, outside) =
        (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let w = ws.path();
    fs::write(w.join("run.sh"), "echo hi\n").unwrap();
    fs::write(outside.path().join("secret"), "outside").unwrap();
    let s = store(home.path(), w);
    let seq = turn(&s, "s1", 0, || {
        fs::set_permissions(w.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink(outside.path(), w.join("out")).unwrap();
    })
    .unwrap();
    let cp = s.get("s1", seq).unwrap();
    assert_eq!(cp.changed.len(), 2, "{:?}", cp.changed);
    rewind(&s, "s1", seq);
    let mode = fs::metadata(w.join("run.sh")).unwrap().permissions().mode();
    assert_eq!(mode & 0o111, 0, "the executable bit is taken away again");
    assert!(fs::symlink_metadata(w.join("out")).is_err(), "the link is deleted");
    assert_eq!(fs::read_to_string(outside.path().join("secret")).unwrap(), "outside", "never followed");

    // A link that existed before is restored as the same link.
    std::os::unix::fs::symlink(outside.path().join("secret"), w.join("ln")).unwrap();
    let seq = turn(&s, "s1", 1, || {
        fs::remove_file(w.join("ln")).unwrap();
        fs::write(w.join("ln"), "a file now").unwrap();
    })
    .unwrap();
    rewind(&s, "s1", seq);
    assert_eq!(fs::read_link(w.join("ln")).unwrap(), outside.path().join("secret"));
    assert_eq!(fs::read_to_string(outside.path().join("secret")).unwrap(), "outside");
}

#[test]
fn large_files_are_skipped_and_named_and_never_restored() {
    if !has_git() {
        return;
    }
    let (home, ws) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let w = ws.path();
    let s = CheckpointStore::open(home.path(), w).unwrap().with_max_file_bytes(1024);
    let seq = turn(&s, "s1", 0, || {
        fs::write(w.join("big.bin"), vec![7u8; 4096]).unwrap();
        fs::write(w.join("small.txt"), "s").unwrap();
    })
    .unwrap();
    let cp = s.get("s1", seq).unwrap();
    assert!(
        cp.skipped.iter().any(|k| k.path == "big.bin" && k.why.contains("larger than")),
        "{:?}",
        cp.skipped
    );
    let list = s.list(Some("s1")).unwrap();
    let plan = s.plan_restore("s1", &list).unwrap();
    assert_eq!(plan.files.len(), 1);
    assert_eq!((plan.files[0].path.as_str(), plan.files[0].action), ("small.txt", RestoreAction::Delete));
    assert!(plan.skipped.iter().any(|k| k.path == "big.bin"));
    s.restore(&plan, &[]);
    assert!(w.join("big.bin").exists(), "a file never checkpointed is left alone");
    // A 2 GB file (sparse: nothing is written) with the default limit: only looked at, named.
    let s = store(home.path(), w);
    let before = s.snapshot("s2").unwrap();
    std::fs::File::create(w.join("huge.img")).unwrap().set_len(2 << 30).unwrap();
    let after = s.snapshot("s2").unwrap();
    assert!(
        after.skipped.iter().any(|k| k.path == "huge.img" && k.why.contains("10 MB")),
        "{:?}",
        after.skipped
    );
    assert_eq!(record(&s, "s2", 0, &before, &after, &[]), None, "nothing storable changed");
}

#[test]
fn a_file_changed_after_the_turn_is_only_overwritten_when_asked() {
    if !has_git() {
        return;
    }
    let (home, ws) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let w = ws.path();
    fs::write(w.join("a.txt"), "old").unwrap();
    fs::write(w.join("b.txt"), "old").unwrap();
    let s = store(home.path(), w);
    let before = s.snapshot("s1").unwrap();
    fs::write(w.join("a.txt"), "octo").unwrap();
    fs::write(w.join("b.txt"), "sub-agent").unwrap();
    let after = s.snapshot("s1").unwrap();
    record(&s, "s1", 0, &before, &after, &[("sub-agent explore".into(), vec!["b.txt".into()])]).unwrap();
    fs::write(w.join("a.txt"), "the user's edit").unwrap();
    let list = s.list(Some("s1")).unwrap();
    let plan = s.plan_restore("s1", &list).unwrap();
    let a = plan.files.iter().find(|f| f.path == "a.txt").unwrap();
    let b = plan.files.iter().find(|f| f.path == "b.txt").unwrap();
    assert!(a.changed_since && !b.changed_since);
    assert_eq!(b.by.as_deref(), Some("sub-agent explore"), "a sub-agent's edit is named");
    let report = s.restore(&plan, &[]);
    assert_eq!(report.restored, ["b.txt"]);
    assert_eq!(fs::read_to_string(w.join("a.txt")).unwrap(), "the user's edit");
    let plan = s.plan_restore("s1", &list).unwrap();
    s.restore(&plan, &["a.txt".to_owned()]);
    assert_eq!(fs::read_to_string(w.join("a.txt")).unwrap(), "old");
}

#[test]
fn two_sessions_each_rewind_their_own_turns() {
    if !has_git() {
        return;
    }
    let (home, ws) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let w = ws.path();
    let (one, two) = (store(home.path(), w), store(home.path(), w));
    let a = turn(&one, "one", 0, || fs::write(w.join("one.txt"), "1").unwrap()).unwrap();
    let b = turn(&two, "two", 0, || fs::write(w.join("two.txt"), "2").unwrap()).unwrap();
    rewind(&one, "one", a);
    assert!(!w.join("one.txt").exists());
    assert!(w.join("two.txt").exists(), "the other session's file stays");
    assert_eq!(two.list(Some("two")).unwrap().len(), 1);
    rewind(&two, "two", b);
    assert!(!w.join("two.txt").exists());
    // A branch gets the checkpoints; forgetting them in the original leaves the branch's.
    one.copy_session("one", "branch").unwrap();
    one.remove("one", &[a]).unwrap();
    assert!(one.list(Some("one")).unwrap().is_empty());
    assert_eq!(one.list(Some("branch")).unwrap().len(), 1);
}

#[test]
fn an_unchanged_turn_records_nothing_and_a_corrupt_store_is_named() {
    if !has_git() {
        return;
    }
    let (home, ws) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    fs::write(ws.path().join("a"), "a").unwrap();
    let s = store(home.path(), ws.path());
    assert_eq!(turn(&s, "s1", 0, || {}), None);
    let dir = s.dir().to_path_buf();
    drop(s);
    fs::write(dir.join("HEAD"), "garbage").unwrap();
    let before = fs::read_to_string(ws.path().join("a")).unwrap();
    match CheckpointStore::open(home.path(), ws.path()) {
        Err(e @ CheckpointError::Corrupt { .. }) => assert!(e.to_string().contains("Move it away"), "{e}"),
        other => panic!("expected a corrupt store, got {other:?}"),
    }
    assert_eq!(fs::read_to_string(ws.path().join("a")).unwrap(), before);
}
