//! The platform shell, chosen in this one place.

/// The shell octo runs commands with, chosen in this one place: `sh -c` on Unix; `pwsh`, else
/// Windows PowerShell, on Windows.
pub fn shell_command(command: &str) -> std::process::Command {
    #[cfg(windows)]
    {
        let shell = if which("pwsh") { "pwsh" } else { "powershell" };
        let mut c = std::process::Command::new(shell);
        c.args(["-NoProfile", "-NonInteractive", "-Command", command]);
        c
    }
    #[cfg(not(windows))]
    {
        let mut c = std::process::Command::new("sh");
        c.arg("-c").arg(command);
        c
    }
}

#[cfg(windows)]
fn which(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|dir| dir.join(format!("{program}.exe")).is_file())
    })
}
