//! Secret places stay unreadable to sandboxed commands and what they start — a build script,
//! an interpreter, a link planted in the workspace — with and without namespaces.

use super::common::{place_with, run};
use octo_exec::sandbox::{Mode, Policy, Sandbox};

#[test]
fn secret_places_are_unreadable_by_commands_and_their_children() {
    for fallback in [false, true] {
        let p = place_with("secrets-", &[".git"]);
        let home = p.out.join("home");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE KEY\n").unwrap();
        std::fs::create_dir_all(home.join(".aws")).unwrap();
        std::fs::write(home.join(".aws/credentials"), "AWS SECRET\n").unwrap();
        std::fs::write(home.join(".netrc"), "NETRC PASSWORD\n").unwrap();
        std::fs::write(home.join(".bashrc"), "plain\n").unwrap();
        let octo = home.join(".octo");
        std::fs::create_dir_all(octo.join("output/this")).unwrap();
        std::fs::create_dir_all(octo.join("sessions")).unwrap();
        std::fs::write(octo.join("keys.json"), "OCTO KEY\n").unwrap();
        std::fs::write(octo.join("sessions/old.jsonl"), "OLD SESSION\n").unwrap();
        std::fs::write(octo.join("output/this/run.txt"), "mine\n").unwrap();
        // A link the repository brought along, to the home.
        std::os::unix::fs::symlink(&home, p.ws.join("h")).unwrap();
        std::fs::write(p.ws.join("Makefile"), "all:\n\t@cat $(HOME)/.ssh/id_rsa\n").unwrap();
        let mut policy = Policy::new(Mode::WorkspaceWrite, &p.ws);
        policy.writable_roots.push(octo.join("output/this"));
        policy.secrets =
            [".ssh", ".aws", ".netrc", ".octo/keys.json", ".octo/sessions", ".octo/output", ".gnupg"]
                .iter()
                .map(|s| home.join(s))
                .collect();
        policy.simulate_no_namespaces = fallback;
        let s = Sandbox::new(policy);
        assert!(s.is_active(), "{}", s.describe());
        let reads = [
            "cat \"$H/.ssh/id_rsa\"",
            "cat \"$H/.aws/credentials\"",
            "cat \"$H/.netrc\"",
            "python3 -c \"import os; print(open(os.environ['H']+'/.octo/ke'+'ys.json').read())\"",
            "cat \"$H\"/.octo/sessions/*",
            "cat h/.ssh/id_rsa",
            "make -s HOME=\"$H\"",
            "sh -c 'cd \"$H\" && tar cf - .ssh .aws | tar tvf -; cat .ssh/id_rsa'",
        ];
        for cmd in reads {
            let (_, text) = run_with_home(&s, &p.ws, &home, cmd);
            for secret in ["PRIVATE KEY", "AWS SECRET", "NETRC PASSWORD", "OCTO KEY", "OLD SESSION"] {
                assert!(!text.contains(secret), "fallback {fallback}: `{cmd}` read {secret}: {text}");
            }
        }
        // The link is no way to write there either (a rule on a link is a rule on its target).
        let (ok, _) = run_with_home(&s, &p.ws, &home, "echo evil > h/.bashrc");
        assert!(!ok, "fallback {fallback}: a write through the planted link got through");
        assert_eq!(std::fs::read_to_string(home.join(".bashrc")).unwrap(), "plain\n");
        // What is not secret stays readable, this session's own output included.
        let (ok, text) =
            run_with_home(&s, &p.ws, &home, "cat \"$H/.bashrc\" \"$H/.octo/output/this/run.txt\"");
        assert!(ok && text.contains("plain") && text.contains("mine"), "fallback {fallback}: {text}");
        let (ok, text) = run_with_home(&s, &p.ws, &home, "echo x > \"$H/.octo/output/this/new.txt\"");
        assert!(ok, "fallback {fallback}: the output folder stays writable: {text}");
        assert!(
            s.promises().iter().any(|x| x.what.starts_with("secret places") && x.held),
            "{:?}",
            s.promises()
        );
        assert!(s.describe().contains("secret place"), "{}", s.describe());
        // With the sandbox off, the same command reads it: the test can fail.
        let off = Sandbox::new(Policy::new(Mode::Off, &p.ws));
        let (_, text) = run_with_home(&off, &p.ws, &home, "cat \"$H/.ssh/id_rsa\"");
        assert!(text.contains("PRIVATE KEY"));
    }
}

#[test]
fn a_workspace_at_the_home_still_hides_its_secrets() {
    for fallback in [false, true] {
        let p = place_with("secrets-home-", &[]);
        std::fs::create_dir_all(p.ws.join(".ssh")).unwrap();
        std::fs::write(p.ws.join(".ssh/id_rsa"), "PRIVATE KEY\n").unwrap();
        std::fs::write(p.ws.join("notes.txt"), "notes\n").unwrap();
        let mut policy = Policy::new(Mode::WorkspaceWrite, &p.ws);
        policy.secrets = vec![p.ws.join(".ssh")];
        policy.simulate_no_namespaces = fallback;
        let s = Sandbox::new(policy);
        let (_, text) = run(&s, &p.ws, "cat .ssh/id_rsa; cat \"$PWD/.ssh/id_rsa\"");
        assert!(!text.contains("PRIVATE KEY"), "fallback {fallback}: {text}");
        let (ok, text) = run(&s, &p.ws, "cat notes.txt && echo more >> notes.txt");
        assert!(ok && text.contains("notes"), "fallback {fallback}: {text}");
    }
}

fn run_with_home(s: &Sandbox, ws: &std::path::Path, home: &std::path::Path, cmd: &str) -> (bool, String) {
    run(s, ws, &format!("H='{}'; export H; {cmd}", home.display()))
}

/// A block device this process can read (a disk, as root), if any: `/dev/<name>` for each
/// `/sys/block/<name>`.
fn readable_disk() -> Option<std::path::PathBuf> {
    std::fs::read_dir("/sys/block")
        .ok()?
        .flatten()
        .map(|e| std::path::Path::new("/dev").join(e.file_name()))
        .find(|d| {
            use std::io::Read;
            std::fs::File::open(d).and_then(|mut f| f.read(&mut [0u8; 16])).is_ok_and(|n| n > 0)
        })
}

/// Every secret is on the disk: a command run by root must not read the disk itself, nor make a
/// device node for it in the workspace and read that.
/// A loop device over a file of its own, detached when dropped (as root, where none of the
/// machine's disks is readable: a container's device rules).
struct Loop(String);

impl Loop {
    fn attach(dir: &std::path::Path) -> Option<Self> {
        let image = dir.join("disk.img");
        std::fs::write(&image, "SECRET ON DISK\n".repeat(4096)).ok()?;
        let out = std::process::Command::new("losetup").args(["-f", "--show"]).arg(&image).output().ok()?;
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        (out.status.success() && !dev.is_empty()).then_some(Self(dev))
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup").args(["-d", &self.0]).status();
    }
}

#[test]
fn the_disk_itself_is_not_readable_nor_made_again() {
    let scratch = tempfile::tempdir().unwrap();
    let attached = readable_disk().is_none().then(|| Loop::attach(scratch.path())).flatten();
    let Some(disk) = readable_disk() else {
        eprintln!("no block device is readable by this process (and none could be attached): a command could not read one either");
        return;
    };
    let _keep = attached;
    let meta = std::os::unix::fs::MetadataExt::rdev(&std::fs::metadata(&disk).unwrap());
    let (major, minor) = (nix::sys::stat::major(meta), nix::sys::stat::minor(meta));
    for fallback in [false, true] {
        let p = place_with("disk-", &[]);
        let mut policy = Policy::new(Mode::WorkspaceWrite, &p.ws);
        policy.simulate_no_namespaces = fallback;
        let s = Sandbox::new(policy);
        assert!(s.is_active(), "{}", s.describe());
        let (ok, text) = run(&s, &p.ws, &format!("head -c 16 {} | od -c | head -1", disk.display()));
        assert!(!ok || !text.contains("0000000 "), "fallback {fallback}: the disk was read: {text}");
        let (_, text) = run(&s, &p.ws, &format!("mknod d b {major} {minor}; head -c 16 d | od -c | head -1"));
        assert!(!text.contains("0000000 "), "fallback {fallback}: a device node was made and read: {text}");
        // The everyday devices stay usable.
        let (ok, text) =
            run(&s, &p.ws, "head -c 4 /dev/urandom | wc -c; echo x > /dev/null; ls /dev > /dev/null");
        assert!(ok && text.contains('4'), "fallback {fallback}: {text}");
    }
}

/// Without namespaces a root command keeps root's capabilities, and with `CAP_PERFMON` (or
/// `CAP_SYS_ADMIN`) reads other processes' environments (octo's own, where API keys can be):
/// the command loses them.
#[test]
fn no_command_reads_another_processs_environment() {
    for fallback in [false, true] {
        let p = place_with("environ-", &[]);
        let mut policy = Policy::new(Mode::WorkspaceWrite, &p.ws);
        policy.simulate_no_namespaces = fallback;
        let s = Sandbox::new(policy);
        let me = std::process::id();
        let (_, caps) = run(&s, &p.ws, "grep Cap /proc/self/status");
        let (_, text) = run(&s, &p.ws, &format!("tr '\\0' '\\n' < /proc/{me}/environ | grep -c ="));
        assert!(
            text.trim().starts_with('0') || text.contains("denied"),
            "fallback {fallback}: {text} {caps}"
        );
    }
}
