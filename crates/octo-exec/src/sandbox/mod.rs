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
//! | Linux | Landlock (best effort up to ABI 6); modes, owners and times by the mount namespace's read-only base, else by a seccomp supervisor | seccomp: no sockets but Unix ones; Landlock TCP rules; named sockets hidden (`/run`) or checked by the supervisor | a read-only bind mount in a private user + mount namespace; else Landlock rules per top-level entry |
//! | macOS | Seatbelt (`sandbox-exec`) | Seatbelt | Seatbelt |
//! | others | none: [`Sandbox::is_active`] is false and [`Sandbox::describe`] says why | | |

mod hide;
mod hint;
#[cfg(target_os = "linux")]
mod linux;
mod policy;
mod promise;
mod protect;
pub mod seatbelt;

pub use hint::{denial_hint, Denial};
pub use promise::Promise;
pub use protect::undo as undo_created;

pub use policy::{Mode, Policy, SandboxError};
use std::path::Path;

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

    /// Why running commands without asking (accept-edits) cannot rely on this sandbox, or
    /// `None` when it can: it is active and, where folders inside the writable area must stay
    /// read-only (`.git`, the workspace's surroundings, a home in the temp dir), a mount
    /// namespace keeps them so. Landlock alone keeps their files from being written, but not
    /// their modes changed or (for `.git`) new files created beside them. On Linux the first call
    /// probes the namespaces (starting `true` once).
    pub fn accept_edits_gap(&self) -> Option<String> {
        match &self.state {
            State::Off => return Some("the sandbox is off".into()),
            State::Unavailable(why) => return Some(format!("there is no OS sandbox ({why})")),
            State::Active => {}
        }
        #[cfg(target_os = "linux")]
        if let Some(l) = &self.linux {
            return l.namespace_gap(&self.policy);
        }
        None
    }

    /// Whether named sockets of local daemons (under `/run`) are out of commands' reach: the
    /// network is off and a mount namespace hides them (Linux, probed like
    /// [`Sandbox::accept_edits_gap`]).
    pub fn sockets_hidden(&self) -> bool {
        #[cfg(target_os = "linux")]
        if let (State::Active, Some(l)) = (&self.state, &self.linux) {
            return l.hides_sockets(&self.policy);
        }
        false
    }

    /// Why named sockets of local daemons stay within commands' reach though the network is off
    /// (no mount namespace hides `/run`), for the permission engine to ask before a command
    /// that talks to one; `None` when they are hidden, the network is allowed anyway, or no
    /// sandbox confines commands (a state said at start).
    pub fn socket_gap(&self) -> Option<String> {
        if self.state != State::Active || self.policy.network || self.sockets_hidden() {
            return None;
        }
        Some("the sandbox here cannot hide the daemons' sockets (no mount namespace)".to_owned())
    }

    /// Whether commands run in a mount namespace of their own (Linux, where a user namespace, or
    /// as root a mount namespace, can be had; probed like [`Sandbox::accept_edits_gap`]). `false`
    /// means only Landlock confines: the fallback, with the limits [`Sandbox::promises`] names.
    pub fn has_mount_namespace(&self) -> bool {
        #[cfg(target_os = "linux")]
        if let (State::Active, Some(l)) = (&self.state, &self.linux) {
            return l.facts(&self.policy).no_namespace.is_none();
        }
        false
    }

    /// Each promise the sandbox makes about commands and whether it holds here, and how or why
    /// not (on Linux the first call probes the namespaces, as [`Sandbox::accept_edits_gap`]).
    pub fn promises(&self) -> Vec<Promise> {
        let off = match &self.state {
            State::Off => Some("the sandbox is off".to_owned()),
            State::Unavailable(why) => Some(format!("there is no OS sandbox: {why}")),
            State::Active => None,
        };
        #[cfg(target_os = "linux")]
        let (facts, how) = match &self.linux {
            Some(l) if off.is_none() => {
                let f = l.facts(&self.policy);
                let how = format!("Landlock ABI {}", f.abi);
                (f, how)
            }
            _ => (promise::Facts::default(), String::new()),
        };
        #[cfg(not(target_os = "linux"))]
        let (facts, how) = (promise::Facts::default(), "Seatbelt".to_owned());
        let facts =
            promise::Facts { watch: crate::watch::possible(), counted: crate::limit::countable(), ..facts };
        promise::list(&self.policy, off.as_deref(), &facts, &how)
    }

    /// The promises not held here, each as "what (why)", for notices and `/status`.
    pub fn unheld(&self) -> Vec<String> {
        self.promises().into_iter().filter(|p| !p.held).map(|p| format!("{} ({})", p.what, p.how)).collect()
    }

    /// The prompt and agent files ([`Policy::protected_entries`]) missing at the workspace's
    /// root now, to hand to [`Sandbox::undo_created`] after a command (none when commands are
    /// not confined or cannot write).
    pub fn protected_missing(&self) -> Vec<std::path::PathBuf> {
        if self.state == State::Active {
            protect::missing(&self.policy)
        } else {
            Vec::new()
        }
    }

    /// Moves each of `missing` a command has created since into [`Policy::quarantine`]
    /// (removes it without one): a mount namespace keeps existing prompt files read-only, but
    /// cannot keep a missing one from being made. The paths found, each with where it went.
    pub fn undo_created(
        &self,
        missing: &[std::path::PathBuf],
    ) -> Vec<(std::path::PathBuf, Option<std::path::PathBuf>)> {
        undo_created(missing, self.policy.quarantine.as_deref())
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
            State::Off => Ok(crate::shell::shell_command(command)),
            State::Unavailable(why) if self.policy.required => Err(SandboxError::Required(why.clone())),
            State::Unavailable(_) => Ok(crate::shell::shell_command(command)),
            State::Active => self.confined(command),
        }
    }

    #[cfg(target_os = "linux")]
    fn confined(&self, command: &str) -> Result<std::process::Command, SandboxError> {
        let mut cmd = crate::shell::shell_command(command);
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
        Ok(crate::shell::shell_command(command))
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
