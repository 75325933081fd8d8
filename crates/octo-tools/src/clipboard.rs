//! Reading the clipboard for a paste: an image when it holds one, else its text. Uses the
//! platform's clipboard programs (`wl-paste` on Wayland, `xclip` on X11, `pngpaste`/`pbpaste` on
//! macOS), started through the same shell wrapper as every command ([`crate::shell::shell_command`]),
//! with a short timeout so a stuck clipboard owner cannot hang the prompt.

use std::time::Duration;

/// What the clipboard holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Clip {
    /// PNG bytes.
    Image(Vec<u8>),
    /// Text.
    Text(String),
}

/// Runs `command` and returns its stdout when it succeeds within the timeout.
fn run(command: &str) -> Option<Vec<u8>> {
    let mut cmd = crate::shell::shell_command(command);
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().ok()?;
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        use std::io::Read;
        let mut buf = Vec::new();
        let _ = stdout.read_to_end(&mut buf);
        buf
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(3);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let out = reader.join().ok()?;
                return status.success().then_some(out);
            }
            Ok(None) if std::time::Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

fn have(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
}

/// The clipboard's content, or `None` when no clipboard program is available or it is empty.
pub fn read() -> Option<Clip> {
    let wayland = std::env::var_os("WAYLAND_DISPLAY").is_some() && have("wl-paste");
    let x11 = std::env::var_os("DISPLAY").is_some() && have("xclip");
    if wayland {
        let types = run("wl-paste --list-types")
            .map(|t| String::from_utf8_lossy(&t).into_owned())
            .unwrap_or_default();
        if types.lines().any(|t| t.trim() == "image/png") {
            return run("wl-paste --no-newline --type image/png").filter(|b| !b.is_empty()).map(Clip::Image);
        }
        return text(run("wl-paste --no-newline"));
    }
    if x11 {
        let targets = run("xclip -selection clipboard -t TARGETS -o")
            .map(|t| String::from_utf8_lossy(&t).into_owned())
            .unwrap_or_default();
        if targets.lines().any(|t| t.trim() == "image/png") {
            return run("xclip -selection clipboard -t image/png -o")
                .filter(|b| !b.is_empty())
                .map(Clip::Image);
        }
        return text(run("xclip -selection clipboard -o"));
    }
    if cfg!(target_os = "macos") {
        if have("pngpaste") {
            if let Some(png) = run("pngpaste - 2>/dev/null").filter(|b| b.starts_with(b"\x89PNG")) {
                return Some(Clip::Image(png));
            }
        }
        return text(run("pbpaste"));
    }
    None
}

fn text(bytes: Option<Vec<u8>>) -> Option<Clip> {
    let t = String::from_utf8(bytes?).ok()?;
    (!t.is_empty()).then_some(Clip::Text(t))
}
