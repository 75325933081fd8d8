//! The macOS sandbox: a Seatbelt profile for `sandbox-exec`, written from a [`Policy`].
//!
//! The profile denies by default, then allows what a command needs to run (processes, reading
//! files, system information, pseudo-terminals, shared memory), writes in the policy's writable
//! roots minus the workspace's `.git`, and the network only when the policy allows it; the secret
//! places are denied last, reads and writes alike. The text
//! is built and tested on every platform; it is used where `sandbox-exec` exists.

use super::policy::Policy;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Where macOS keeps `sandbox-exec` (a fixed path, never looked up on `PATH`).
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The profile for `policy`.
pub fn profile(policy: &Policy) -> String {
    let mut p = String::from(
        "(version 1)\n(deny default)\n\
         (allow process-exec process-fork)\n\
         (allow signal (target same-sandbox))\n\
         (allow process-info* (target same-sandbox))\n\
         (allow file-read*)\n\
         (allow sysctl-read)\n\
         (allow mach-lookup)\n\
         (allow ipc-posix-sem ipc-posix-shm)\n\
         (allow pseudo-tty)\n\
         (allow file-ioctl (literal \"/dev/tty\") (regex #\"^/dev/ttys[0-9]+$\"))\n\
         (allow file-write-data (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/tty\") (regex #\"^/dev/ttys[0-9]+$\"))\n",
    );
    let read_only: Vec<PathBuf> = policy.read_only_paths().iter().map(|g| canonical(g)).collect();
    for root in policy.writable() {
        let root = canonical(&root);
        let inside: Vec<&PathBuf> = read_only.iter().filter(|g| g.starts_with(&root)).collect();
        if inside.is_empty() {
            let _ = writeln!(p, "(allow file-write* (subpath \"{}\"))", quote(&root));
            continue;
        }
        let _ = write!(p, "(allow file-write* (require-all (subpath \"{}\")", quote(&root));
        for g in inside {
            let _ = write!(p, " (require-not (subpath \"{}\"))", quote(g));
        }
        p.push_str("))\n");
    }
    if policy.network {
        p.push_str("(allow network-outbound)\n(allow network-inbound)\n(allow system-socket)\n");
    } else {
        // Local sockets (such as a build server's) stay usable, like `AF_UNIX` on Linux.
        p.push_str("(allow network-outbound (remote unix-socket))\n");
    }
    // Last, so it wins over the read-everywhere and writable-root rules above.
    for secret in policy.secret_places() {
        let _ = writeln!(p, "(deny file-read* file-write* (subpath \"{}\"))", quote(&canonical(&secret)));
    }
    p
}

/// The real path (Seatbelt matches resolved paths: `/tmp` is `/private/tmp` on macOS).
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// A path as an SBPL string literal's contents.
fn quote(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "\\\\").replace('"', "\\\"")
}

#[cfg(test)]
mod tests {
    use super::super::policy::Mode;
    use super::*;

    #[test]
    fn workspace_write_allows_the_workspace_but_not_its_git() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        let ws = canonical(dir.path());
        let text = profile(&Policy::new(Mode::WorkspaceWrite, dir.path()));
        assert!(text.starts_with("(version 1)\n(deny default)"));
        let line = format!(
            "(allow file-write* (require-all (subpath \"{}\") (require-not (subpath \"{}\"))))",
            ws.display(),
            ws.join(".git").display()
        );
        assert!(text.contains(&line), "{text}");
        assert!(!text.contains("(allow network-outbound)\n"), "{text}");
    }

    #[test]
    fn read_only_writes_nowhere_and_network_is_opt_in() {
        let dir = tempfile::tempdir().unwrap();
        let ro = profile(&Policy::new(Mode::ReadOnly, dir.path()));
        assert!(!ro.contains("(allow file-write* (subpath"), "{ro}");
        let net = profile(&Policy { network: true, ..Policy::new(Mode::ReadOnly, dir.path()) });
        assert!(net.contains("(allow network-outbound)\n"));
    }

    #[test]
    fn secret_places_are_denied_after_everything_else() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join(".ssh")).unwrap();
        let ws = tempfile::tempdir().unwrap();
        let mut policy = Policy::new(Mode::WorkspaceWrite, ws.path());
        policy.secrets = vec![home.path().join(".ssh"), home.path().join(".aws")];
        let text = profile(&policy);
        let deny = format!(
            "(deny file-read* file-write* (subpath \"{}\"))",
            canonical(&home.path().join(".ssh")).display()
        );
        assert!(text.trim_end().ends_with(&deny), "{text}");
        assert!(!text.contains(".aws"), "a place that does not exist is left out: {text}");
    }

    #[test]
    fn quotes_are_escaped() {
        assert_eq!(quote(Path::new("/a \"b\"\\c")), "/a \\\"b\\\"\\\\c");
    }
}
