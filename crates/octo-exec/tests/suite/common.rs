//! What the sandbox suites share: a workspace beside an "outside" folder, and running a command
//! in it.

use octo_exec::sandbox::Sandbox;
use std::path::{Path, PathBuf};

/// A workspace and a directory outside it, both outside the temp dir (which the sandbox lets
/// commands write); the outside holds `secret.txt` (mode 644).
pub struct Place {
    _root: tempfile::TempDir,
    pub ws: PathBuf,
    pub out: PathBuf,
}

/// A [`Place`] whose workspace holds `dirs` (`.git/hooks`, say).
pub fn place_with(prefix: &str, dirs: &[&str]) -> Place {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::Builder::new().prefix(prefix).tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let ws = root.path().join("ws");
    let out = root.path().join("outside");
    std::fs::create_dir_all(&ws).unwrap();
    for d in dirs {
        std::fs::create_dir_all(ws.join(d)).unwrap();
    }
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("secret.txt"), "outside\n").unwrap();
    std::fs::set_permissions(out.join("secret.txt"), std::fs::Permissions::from_mode(0o644)).unwrap();
    Place { _root: root, ws, out }
}

/// Runs `command` in `ws` (`$OUT` is the folder beside it); its exit status and output.
pub fn run(s: &Sandbox, ws: &Path, command: &str) -> (bool, String) {
    let out = s
        .shell_command(command)
        .unwrap()
        .current_dir(ws)
        .env("OUT", ws.parent().unwrap().join("outside"))
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}
