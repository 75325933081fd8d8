//! The seccomp supervisor of the Landlock-only fallback (simulated here, so `make test` covers
//! it on a host with namespaces too; `scripts/sandbox-as-user` runs it in the real fallback):
//! sockets outside the writable roots, a symlink swapped while a mode changes, a background
//! process after its shell ended, and a process that hides its memory.

use super::common::{place_with, run, Place};
use octo_exec::sandbox::{Mode, Policy, Sandbox};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// No `.git`: without a namespace its presence keeps new entries off the workspace's root.
fn place() -> Place {
    place_with("guard-", &[])
}

/// The fallback with its supervisor, or `None` (said) where it cannot be had.
fn guarded(ws: &Path) -> Option<Sandbox> {
    let s = Sandbox::new(Policy { simulate_no_namespaces: true, ..Policy::new(Mode::WorkspaceWrite, ws) });
    if !s.is_active() || !s.describe().contains("checked by a seccomp supervisor") {
        eprintln!("SKIPPED: no supervisor here: {}", s.describe());
        return None;
    }
    Some(s)
}

fn mode(f: &Path) -> u32 {
    std::fs::metadata(f).unwrap().permissions().mode() & 0o777
}

fn has_python() -> bool {
    std::process::Command::new("python3").arg("-c").arg("1").status().is_ok_and(|s| s.success())
}

#[test]
fn named_sockets_outside_are_refused_and_those_inside_reached() {
    let p = place();
    let Some(s) = guarded(&p.ws) else { return };
    if !has_python() {
        eprintln!("SKIPPED: no python3");
        return;
    }
    let outside = std::os::unix::net::UnixListener::bind(p.out.join("daemon.sock")).unwrap();
    let inside = std::os::unix::net::UnixListener::bind(p.ws.join("mine.sock")).unwrap();
    let script = r#"
import socket, sys
def reach(path):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path); return "connected"
    except OSError as e:
        return e.strerror
print("outside", reach(sys.argv[1] + "/daemon.sock"))
print("inside", reach("mine.sock"))
print("through a link", reach("link.sock"))
try:
    socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); print("datagram made")
except OSError as e:
    print("datagram", e.strerror)
"#;
    std::fs::write(p.ws.join("reach.py"), script).unwrap();
    let (_, text) = run(&s, &p.ws, "ln -s \"$OUT/daemon.sock\" link.sock; python3 reach.py \"$OUT\"");
    assert!(text.contains("outside Permission denied"), "{text}");
    assert!(text.contains("inside connected"), "{text}");
    assert!(text.contains("through a link Permission denied"), "{text}");
    assert!(text.contains("datagram Operation not permitted"), "{text}");
    // The listener inside got its connection; the one outside none.
    inside.set_nonblocking(true).unwrap();
    outside.set_nonblocking(true).unwrap();
    assert!(inside.accept().is_ok());
    assert!(outside.accept().is_err());
    // With the network allowed, sockets are not the supervisor's business.
    let open = Sandbox::new(Policy {
        simulate_no_namespaces: true,
        network: true,
        ..Policy::new(Mode::WorkspaceWrite, &p.ws)
    });
    let (_, text) = run(&open, &p.ws, "python3 reach.py \"$OUT\"");
    assert!(text.contains("outside connected"), "{text}");
}

#[test]
fn a_symlink_swapped_while_a_mode_changes_never_redirects_the_change() {
    let p = place();
    let Some(s) = guarded(&p.ws) else { return };
    std::fs::write(p.ws.join("real.txt"), "in\n").unwrap();
    let race = "(i=0; while [ $i -lt 3000 ]; do ln -sfn \"$OUT/secret.txt\" t; ln -sfn real.txt t; i=$((i+1)); done) & \
                i=0; while [ $i -lt 1500 ]; do chmod 600 t 2>/dev/null; i=$((i+1)); done; wait";
    let (_, text) = run(&s, &p.ws, race);
    assert_eq!(mode(&p.out.join("secret.txt")), 0o644, "{text}");
    assert_eq!(mode(&p.ws.join("real.txt")), 0o600, "the file inside changed: {text}");
}

#[test]
fn a_background_process_stays_supervised_after_its_shell_ends() {
    let p = place();
    let Some(s) = guarded(&p.ws) else { return };
    let cmd = "(sleep 0.3; chmod 000 \"$OUT/secret.txt\"; chmod 700 late.sh) >/dev/null 2>&1 & touch late.sh";
    let (ok, text) = run(&s, &p.ws, cmd);
    assert!(ok, "{text}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while mode(&p.ws.join("late.sh")) != 0o700 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(mode(&p.ws.join("late.sh")), 0o700, "the background change inside was made");
    assert_eq!(mode(&p.out.join("secret.txt")), 0o644);
}

#[test]
fn a_process_that_hides_its_memory_is_refused_not_let_through() {
    let p = place();
    let Some(s) = guarded(&p.ws) else { return };
    if !has_python() {
        eprintln!("SKIPPED: no python3");
        return;
    }
    // Undumpable: the supervisor cannot read its calls' paths, so they fail (closed), inside or not.
    let cmd = "python3 -c \"import ctypes, os; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); \
               os.chmod(os.environ['OUT'] + '/secret.txt', 0)\"";
    let (ok, text) = run(&s, &p.ws, cmd);
    assert!(!ok, "{text}");
    assert_eq!(mode(&p.out.join("secret.txt")), 0o644, "{text}");
}

#[test]
fn read_only_mode_changes_no_metadata_anywhere() {
    let p = place();
    std::fs::write(p.ws.join("code.rs"), "fn main() {}\n").unwrap();
    let s = Sandbox::new(Policy { simulate_no_namespaces: true, ..Policy::new(Mode::ReadOnly, &p.ws) });
    if !s.describe().contains("checked by a seccomp supervisor") {
        eprintln!("SKIPPED: no supervisor here: {}", s.describe());
        return;
    }
    for cmd in ["chmod 000 code.rs", "chmod 000 \"$OUT/secret.txt\"", "touch -d 2000-01-01 code.rs"] {
        let (ok, text) = run(&s, &p.ws, cmd);
        assert!(!ok, "{cmd}: {text}");
    }
    assert_eq!(mode(&p.ws.join("code.rs")), 0o644);
    assert_eq!(mode(&p.out.join("secret.txt")), 0o644);
}
