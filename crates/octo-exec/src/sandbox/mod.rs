//! The OS sandbox for commands the model runs.
//!
//! A [`Policy`] says what a command may do: under [`Mode::WorkspaceWrite`] it reads anywhere and
//! writes only in the workspace, the system temp dir, octo's command-output dir and any extra
//! roots, with the workspace's `.git` kept read-only; under [`Mode::ReadOnly`] it writes nowhere
//! (devices such as `/dev/null` aside). Either way it reaches no network unless
//! [`Policy::network`] is set.
//!
//! A [`Sandbox`] is a policy plus what this machine can enforce, found when it is made (Landlock's
//! ABI, a cheap check) and at the first command (namespaces and the syscall filter, by starting
//! `true` once). [`Sandbox::shell_command`] builds the confined command; the confinement is set up
//! in the child between fork and exec, so the caller is never confined.
//!
//! | platform | files | network | `.git` read-only |
//! |---|---|---|---|
//! | Linux | Landlock (best effort up to ABI 6) | seccomp: no sockets but Unix ones; Landlock TCP rules | a read-only bind mount in a private user + mount namespace; else Landlock rules per top-level entry |
//! | macOS | Seatbelt (`sandbox-exec`) | Seatbelt | Seatbelt |
//! | others | none: [`Sandbox::is_active`] is false and [`Sandbox::describe`] says why | | |

mod hint;
#[cfg(target_os = "linux")]
mod linux;
pub mod seatbelt;

pub use hint::{denial_hint, Denial};

use std::path::{Path, PathBuf};

/// What commands may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Write only in the workspace, the temp dir, octo's output dir and extra roots.
    WorkspaceWrite,
    /// Write nowhere.
    ReadOnly,
    /// No sandbox: commands run with the user's full rights.
    Off,
}

impl Mode {
    /// The configuration spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::WorkspaceWrite => "workspace-write",
            Self::ReadOnly => "read-only",
            Self::Off => "off",
        }
    }
}

/// What a command may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// What it may change.
    pub mode: Mode,
    /// Refuse to run commands when no sandbox can be had (`sandbox = "required"`).
    pub required: bool,
    /// Whether it may use the network.
    pub network: bool,
    /// The workspace (writable under [`Mode::WorkspaceWrite`]).
    pub workspace: PathBuf,
    /// Other writable directories: the temp dir, octo's output dir, configured roots.
    pub writable_roots: Vec<PathBuf>,
    /// Whether the workspace's `.git` is writable too.
    pub git_writable: bool,
    /// Directories inside the writable roots that stay read-only (octo's caller adds the home
    /// directory when it lies in the temp dir). Enforced where mount namespaces are available.
    pub read_only: Vec<PathBuf>,
    /// Pretend the kernel has no Landlock (to test the fallback; `OCTO_SANDBOX_SIMULATE=no-landlock`).
    pub simulate_no_landlock: bool,
}

impl Policy {
    /// `mode` for `workspace`, with the system temp dir writable, no network and `.git`
    /// read-only.
    pub fn new(mode: Mode, workspace: &Path) -> Self {
        let mut writable_roots = vec![std::env::temp_dir()];
        if cfg!(unix) && Path::new("/tmp") != std::env::temp_dir() {
            writable_roots.push(PathBuf::from("/tmp"));
        }
        Self {
            mode,
            required: false,
            network: false,
            workspace: workspace.to_path_buf(),
            writable_roots,
            git_writable: false,
            read_only: Vec::new(),
            simulate_no_landlock: false,
        }
    }

    /// Every directory writable under this policy (none under read-only).
    pub fn writable(&self) -> Vec<PathBuf> {
        match self.mode {
            Mode::WorkspaceWrite => {
                let mut all = vec![self.workspace.clone()];
                all.extend(self.writable_roots.iter().cloned());
                all
            }
            Mode::ReadOnly | Mode::Off => Vec::new(),
        }
    }

    /// The workspace's `.git` when it must stay read-only (it exists, writes are allowed in the
    /// workspace, and `.git` was not made writable).
    pub fn protected_git(&self) -> Option<PathBuf> {
        let git = self.workspace.join(".git");
        (self.mode == Mode::WorkspaceWrite && !self.git_writable && git.symlink_metadata().is_ok())
            .then_some(git)
    }

    /// Everything kept read-only inside the writable roots (only under
    /// [`Mode::WorkspaceWrite`]: read-only protects everything already), resolved: the
    /// protected `.git`, the existing [`Policy::read_only`] directories, and the workspace's
    /// surroundings when the workspace lies in another writable root — for a workspace in
    /// `/tmp/job/ws`, `/tmp/job` — so `..` cannot reach its neighbours.
    pub fn read_only_paths(&self) -> Vec<PathBuf> {
        if self.mode != Mode::WorkspaceWrite {
            return Vec::new();
        }
        let ws = real(&self.workspace);
        let surroundings = self.writable_roots.iter().map(|r| real(r)).filter_map(|root| {
            let first = ws.strip_prefix(&root).ok()?.components().next()?;
            Some(root.join(first)).filter(|top| *top != ws)
        });
        let mut out: Vec<PathBuf> = Vec::new();
        let candidates = self
            .protected_git()
            .map(|g| real(&g))
            .into_iter()
            .chain(surroundings)
            .chain(self.read_only.iter().filter(|p| p.is_dir()).map(|p| real(p)));
        for p in candidates {
            if !out.contains(&p) {
                out.push(p);
            }
        }
        out
    }

    /// The bind mounts a command's mount namespace needs, in order (`true`: read-only): first
    /// every writable directory a read-only one holds (the workspace, a temp dir inside the
    /// workspace's surroundings, octo's output dir inside a read-only home), so they stay
    /// writable inside; then the read-only directories, outermost first.
    pub fn mounts(&self) -> Vec<(PathBuf, bool)> {
        let mut ro = self.read_only_paths();
        if ro.is_empty() {
            return Vec::new();
        }
        ro.sort_by_key(|p| p.components().count());
        let mut rw: Vec<PathBuf> = std::iter::once(real(&self.workspace))
            .chain(self.writable_roots.iter().map(|r| real(r)))
            .filter(|w| w.is_dir() && !ro.contains(w) && ro.iter().any(|p| w.starts_with(p)))
            .collect();
        rw.sort_by_key(|p| p.components().count());
        rw.dedup();
        let mut out: Vec<(PathBuf, bool)> = rw.iter().map(|w| (w.clone(), false)).collect();
        let mut done: Vec<PathBuf> = Vec::new();
        for p in ro {
            // Inside a folder already read-only, and not in a writable one bound above: the
            // outer bind covers it.
            if done.iter().any(|d| p.starts_with(d)) && !rw.iter().any(|w| p.starts_with(w)) {
                continue;
            }
            done.push(p.clone());
            out.push((p, true));
        }
        out
    }
}

/// The resolved path (the path itself when it cannot be resolved).
fn real(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Why a command could not be confined.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// `sandbox = "required"` and no sandbox is available.
    #[error("the sandbox is required but not available: {0}. Commands are not run (set `sandbox` to \"workspace-write\" or \"off\" to run them without one)")]
    Required(String),
    /// Building the rules failed.
    #[error("could not set up the sandbox: {0}")]
    Setup(String),
}

/// What this machine enforces for a policy.
#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    /// The policy is `off`.
    Off,
    /// Confinement is available; the text says how.
    Active,
    /// Nothing can be enforced here; the text says why.
    Unavailable(String),
}

/// A policy and the means to enforce it on this machine.
#[derive(Debug)]
pub struct Sandbox {
    policy: Policy,
    state: State,
    #[cfg(target_os = "linux")]
    linux: Option<linux::Linux>,
}

impl Sandbox {
    /// The sandbox for `policy` on this machine. Cheap: only the Landlock ABI is probed here;
    /// namespaces and the syscall filter are tried at the first command.
    pub fn new(policy: Policy) -> Self {
        if policy.mode == Mode::Off {
            return Self::off_with(policy);
        }
        if policy.simulate_no_landlock {
            let why = "the kernel has no Landlock (simulated by OCTO_SANDBOX_SIMULATE)".to_owned();
            return Self {
                policy,
                state: State::Unavailable(why),
                #[cfg(target_os = "linux")]
                linux: None,
            };
        }
        #[cfg(target_os = "linux")]
        {
            match linux::Linux::probe(&policy) {
                Ok(l) => Self { policy, state: State::Active, linux: Some(l) },
                Err(why) => Self { policy, state: State::Unavailable(why), linux: None },
            }
        }
        #[cfg(target_os = "macos")]
        {
            let state = if Path::new(seatbelt::SANDBOX_EXEC).is_file() {
                State::Active
            } else {
                State::Unavailable(format!("{} is missing", seatbelt::SANDBOX_EXEC))
            };
            Self { policy, state }
        }
        #[cfg(not(any(target_os = "linux", target_os = "macos")))]
        {
            Self { policy, state: State::Unavailable("there is no OS sandbox for this platform yet".into()) }
        }
    }

    /// No sandbox at all.
    pub fn off(workspace: &Path) -> Self {
        Self::off_with(Policy::new(Mode::Off, workspace))
    }

    fn off_with(policy: Policy) -> Self {
        Self {
            policy,
            state: State::Off,
            #[cfg(target_os = "linux")]
            linux: None,
        }
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Whether commands are confined.
    pub fn is_active(&self) -> bool {
        self.state == State::Active
    }

    /// Why no sandbox is available although one was asked for (`None` when it is active or
    /// `off`): the notice octo prints once.
    pub fn unavailable(&self) -> Option<&str> {
        match &self.state {
            State::Unavailable(why) => Some(why),
            State::Off | State::Active => None,
        }
    }

    /// One line for `/status` and `octo doctor`: which sandbox is active and how, or why none is.
    pub fn describe(&self) -> String {
        let p = &self.policy;
        match &self.state {
            State::Off => "off (commands run with your full rights)".into(),
            State::Unavailable(why) if p.required => {
                format!("required but unavailable ({why}): commands are refused")
            }
            State::Unavailable(why) => format!("none ({why}); commands run with your full rights"),
            State::Active => {
                let net = if p.network { "network allowed" } else { "no network" };
                let how = self.mechanism();
                format!("{}, {net} ({how})", p.mode.as_str())
            }
        }
    }

    fn mechanism(&self) -> String {
        #[cfg(target_os = "linux")]
        if let Some(l) = &self.linux {
            return l.describe(&self.policy);
        }
        if cfg!(target_os = "macos") {
            return "Seatbelt".into();
        }
        String::new()
    }

    /// The platform shell running `command`, confined by this sandbox when it is active; an
    /// error when the sandbox is required but unavailable.
    pub fn shell_command(&self, command: &str) -> Result<std::process::Command, SandboxError> {
        match &self.state {
            State::Off => Ok(crate::shell_command(command)),
            State::Unavailable(why) if self.policy.required => Err(SandboxError::Required(why.clone())),
            State::Unavailable(_) => Ok(crate::shell_command(command)),
            State::Active => self.confined(command),
        }
    }

    #[cfg(target_os = "linux")]
    fn confined(&self, command: &str) -> Result<std::process::Command, SandboxError> {
        let mut cmd = crate::shell_command(command);
        match &self.linux {
            Some(l) => l.confine(&mut cmd, &self.policy)?,
            None => return Err(SandboxError::Setup("no Linux sandbox was probed".into())),
        }
        Ok(cmd)
    }

    #[cfg(target_os = "macos")]
    fn confined(&self, command: &str) -> Result<std::process::Command, SandboxError> {
        let mut cmd = std::process::Command::new(seatbelt::SANDBOX_EXEC);
        cmd.arg("-p").arg(seatbelt::profile(&self.policy)).arg("sh").arg("-c").arg(command);
        Ok(cmd)
    }

    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    fn confined(&self, command: &str) -> Result<std::process::Command, SandboxError> {
        Ok(crate::shell_command(command))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_has_no_writable_roots_and_protects_nothing_extra() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        let ro = Policy::new(Mode::ReadOnly, dir.path());
        assert!(ro.writable().is_empty());
        assert_eq!(ro.protected_git(), None);
        let ww = Policy::new(Mode::WorkspaceWrite, dir.path());
        assert_eq!(ww.writable()[0], dir.path());
        assert_eq!(ww.protected_git(), Some(dir.path().join(".git")));
        let open = Policy { git_writable: true, ..ww };
        assert_eq!(open.protected_git(), None);
    }

    #[test]
    fn off_runs_plain_commands_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let s = Sandbox::off(dir.path());
        assert!(!s.is_active());
        assert!(s.describe().starts_with("off"));
        assert!(s.shell_command("true").is_ok());
    }

    #[test]
    fn required_refuses_when_unavailable() {
        let dir = tempfile::tempdir().unwrap();
        let policy = Policy {
            required: true,
            simulate_no_landlock: true,
            ..Policy::new(Mode::WorkspaceWrite, dir.path())
        };
        let s = Sandbox::new(policy);
        assert!(!s.is_active());
        assert!(s.describe().contains("refused"), "{}", s.describe());
        let err = s.shell_command("true").unwrap_err();
        assert!(err.to_string().contains("required"), "{err}");
    }
}
