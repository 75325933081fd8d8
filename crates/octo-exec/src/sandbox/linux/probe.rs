//! Trying, once, what a confinement step needs, by starting `exit 0` with the step run in the
//! child: the syscall filter, the namespaces, the seccomp supervisor.

/// Starts `true` with `setup` run in the child; the error says why it failed.
#[allow(unsafe_code)]
pub(super) fn try_child<F>(setup: F) -> Result<(), String>
where
    F: FnMut() -> std::io::Result<()> + Send + Sync + 'static,
{
    use std::os::unix::process::CommandExt;
    let mut cmd = crate::shell::shell_command("exit 0");
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: the probes' closures run in the forked child before exec and make only system
    // calls on data prepared by the parent.
    unsafe {
        cmd.pre_exec(setup);
    }
    match cmd.status() {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("the probe exited with {s}")),
        Err(e) => Err(e.to_string()),
    }
}
