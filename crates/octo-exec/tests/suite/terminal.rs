//! A command cannot reach the terminal octo runs in. It runs in a session of its own, without a
//! controlling terminal, so it cannot push keystrokes into it (`TIOCSTI`): they would be read by
//! octo's own prompt (an approval, a `/mode auto`), or by the user's shell after octo ends.

use octo_exec::env::ShellEnv;
use octo_exec::sandbox::{Mode, Policy, Sandbox};
use octo_exec::Capture;

const HELPER: &str = "OCTO_TEST_TERMINAL_HELPER";

/// Pushes `echo PWNED` into the terminal, through `/dev/tty` and through the terminal's own name
/// (`$TTY_PATH`), and says how each went.
const INJECT: &str = r#"python3 -c "
import fcntl, os, termios
for path in ['/dev/tty', os.environ['TTY_PATH']]:
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
        for c in b'echo PWNED\n':
            fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))
        print(path, 'injected')
    except OSError as e:
        print(path, 'refused:', e.strerror)
""#;

/// Runs inside the pseudo-terminal the test below makes (the test binary started again with this
/// test alone), where it has a controlling terminal: the injection once as a plain child (the
/// control: it works there), then as octo runs the model's commands, without and with the
/// sandbox.
#[tokio::test]
async fn helper_inside_a_terminal() {
    if std::env::var_os(HELPER).is_none() {
        return;
    }
    let plain = std::process::Command::new("sh").arg("-c").arg(INJECT).output().unwrap();
    println!("\nPLAIN {}", String::from_utf8_lossy(&plain.stdout).trim().replace('\n', "; "));
    let dir = tempfile::tempdir().unwrap();
    let env = ShellEnv::default();
    let sandbox = Sandbox::new(Policy::new(Mode::WorkspaceWrite, dir.path()));
    let holds =
        sandbox.is_active() && (sandbox.has_mount_namespace() || sandbox.accept_edits_gap().is_none());
    for (name, s) in [("OCTO", None), ("SANDBOXED", Some(&sandbox))] {
        let capture = Capture::new(1 << 16, dir.path().join("spill"));
        let mut running = octo_exec::spawn(INJECT, dir.path(), capture.clone(), &env, "t", s).unwrap();
        running.child.wait().await.unwrap();
        running.finish_output(std::time::Duration::from_secs(2)).await;
        println!("\n{name} {}", capture.render().trim().replace('\n', "; "));
    }
    println!("\nHOLDS {holds}");
}

#[test]
#[allow(unsafe_code)]
fn a_command_cannot_push_keystrokes_into_the_terminal_octo_runs_in() {
    use std::os::unix::process::CommandExt;
    if !std::process::Command::new("python3").arg("-c").arg("1").status().is_ok_and(|s| s.success()) {
        eprintln!("SKIPPED: no python3");
        return;
    }
    let pty = nix::pty::openpty(None, None).unwrap();
    let tty_path = nix::unistd::ttyname(&pty.slave).unwrap();
    let slave = std::fs::File::from(pty.slave);
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "suite::terminal::helper_inside_a_terminal", "--nocapture", "--test-threads=1"])
        .env(HELPER, "1")
        .env("TTY_PATH", &tty_path)
        .stdin(slave.try_clone().unwrap())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    // SAFETY: two system calls in the forked child before exec: a new session, and the terminal
    // (its standard input) made its controlling terminal.
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid()?;
            if libc::ioctl(0, libc::TIOCSCTTY, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    drop(slave);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    // What reached the terminal's input (echoed to its output) is on the master side.
    nix::fcntl::fcntl(&pty.master, nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK)).unwrap();
    let mut echoed = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = nix::unistd::read(&pty.master, &mut buf) {
        if n == 0 {
            break;
        }
        echoed.extend_from_slice(&buf[..n]);
    }
    let line = |tag: &str| {
        text.lines()
            .find(|l| l.starts_with(tag))
            .map(str::to_owned)
            .unwrap_or_else(|| panic!("no {tag}: {text}"))
    };
    let (plain, octo, sandboxed) = (line("PLAIN "), line("OCTO "), line("SANDBOXED "));
    if !plain.contains("/dev/tty injected") {
        eprintln!("SKIPPED: this kernel refuses TIOCSTI to everyone (dev.tty.legacy_tiocsti = 0): {plain}");
        return;
    }
    // No controlling terminal: `/dev/tty` cannot even be opened.
    assert!(octo.contains("/dev/tty refused"), "{octo}");
    assert!(sandboxed.contains("/dev/tty refused"), "{sandboxed}");
    // By its name, a terminal that is not one's own takes keystrokes only from root (outside a
    // user namespace); the sandbox refuses them to root too, where it holds its promises.
    let root = nix::unistd::geteuid().is_root();
    if !root {
        assert!(!octo.contains("injected"), "a command pushed keystrokes into octo's terminal: {octo}");
    }
    if line("HOLDS ").contains("true") {
        assert!(!sandboxed.contains("injected"), "a sandboxed command pushed keystrokes: {sandboxed}");
    }
    // Only the control's and (as root, unsandboxed) the plain run's keystrokes arrived.
    let arrived = String::from_utf8_lossy(&echoed).matches("PWNED").count();
    let expected = 2 + if root { 1 } else { 0 };
    assert!(
        arrived <= expected,
        "{arrived} injections reached the terminal: {}",
        String::from_utf8_lossy(&echoed)
    );
}
