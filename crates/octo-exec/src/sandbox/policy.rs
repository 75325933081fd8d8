//! What a sandboxed command may do, and why it could not be confined.

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
    /// Pretend no user or mount namespace can be had, as on hosts that restrict them (to test
    /// the Landlock-only fallback; `OCTO_SANDBOX_SIMULATE=no-namespaces`).
    pub simulate_no_namespaces: bool,
    /// Pretend the seccomp supervisor that stands in for the namespaces cannot be had (a kernel
    /// before 5.9, a nested octo; `OCTO_SANDBOX_SIMULATE=no-supervisor`).
    pub simulate_no_supervisor: bool,
    /// Names of workspace entries commands may not change (files read into later prompts or
    /// configuring the agent: `AGENTS.md`, `.claude`, …), kept read-only like `.git` when they
    /// exist; without a mount namespace they cannot be created at the workspace's root either.
    pub protected_entries: Vec<String>,
    /// A temp dir of the session's own, used as `TMPDIR` where the system temp dir cannot be
    /// writable because it holds a protected folder and no mount namespace keeps that folder
    /// read-only.
    pub private_tmp: Option<PathBuf>,
    /// Where a prompt or agent file a command created is moved ([`crate::sandbox::Sandbox::undo_created`];
    /// `None`: it is removed).
    pub quarantine: Option<PathBuf>,
    /// Secret places commands may not read (the user's credentials, octo's keys and saved
    /// sessions): hidden in the command's mount namespace, left out of Landlock's read rules
    /// without one ([`Policy::secret_places`]).
    pub secrets: Vec<PathBuf>,
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
            simulate_no_namespaces: false,
            simulate_no_supervisor: false,
            protected_entries: Vec::new(),
            private_tmp: None,
            quarantine: None,
            secrets: Vec::new(),
        }
    }

    /// The secret places to hide from commands, resolved and existing (none when the sandbox
    /// is off): each of [`Policy::secrets`], or, for one holding the workspace or a writable
    /// root, its entries but those on the way there.
    pub fn secret_places(&self) -> Vec<PathBuf> {
        if self.mode == Mode::Off {
            return Vec::new();
        }
        let kept: Vec<PathBuf> = std::iter::once(real(&self.workspace))
            .chain(self.writable_roots.iter().map(|r| real(r)))
            .collect();
        super::hide::places(&self.secrets, &kept)
    }

    /// The secret places that do not exist now, resolved as far as they exist (none when the
    /// sandbox is off): left out of the read rules all the same, so one made while a command
    /// runs is not readable by it.
    pub fn missing_secrets(&self) -> Vec<PathBuf> {
        if self.mode == Mode::Off {
            return Vec::new();
        }
        super::hide::missing(&self.secrets)
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

    /// What is writable where only Landlock confines (no mount namespace): Landlock rules only
    /// add rights, so a writable root holding a protected folder or a secret place (the temp
    /// dir holding the workspace's `.git`, its surroundings or a home) is left out, and the session's private
    /// temp dir takes its place. The second value is that temp dir when it is used (the
    /// command's `TMPDIR`).
    pub fn writable_without_namespaces(&self) -> (Vec<PathBuf>, Option<PathBuf>) {
        if self.mode != Mode::WorkspaceWrite {
            return (Vec::new(), None);
        }
        let mut protected = self.read_only_paths();
        protected.extend(self.secret_places());
        let mut out = vec![self.workspace.clone()];
        let mut dropped = false;
        for root in &self.writable_roots {
            let r = real(root);
            if protected.iter().any(|p| p.starts_with(&r) && *p != r) {
                dropped = true;
            } else {
                out.push(root.clone());
            }
        }
        let tmp = self.private_tmp.clone().filter(|_| dropped);
        out.extend(tmp.iter().cloned());
        (out, tmp)
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
        let entries = self
            .protected_entries
            .iter()
            .map(|n| self.workspace.join(n))
            .filter(|p| p.symlink_metadata().is_ok())
            .map(|p| real(&p))
            .filter(|p| p.starts_with(&ws));
        let candidates = self
            .protected_git()
            .map(|g| real(&g))
            .into_iter()
            .chain(entries)
            .chain(surroundings)
            .chain(self.read_only.iter().filter(|p| p.is_dir()).map(|p| real(p)));
        for p in candidates {
            if !out.contains(&p) {
                out.push(p);
            }
        }
        out
    }

    /// Folders hidden under an empty file system in a command's mount namespace: with the
    /// network off, where local daemons keep their named sockets (`/run`: Docker, D-Bus,
    /// systemd), unless the workspace or a writable root lies in one.
    pub fn hidden(&self) -> Vec<PathBuf> {
        if self.network || self.mode == Mode::Off || !cfg!(target_os = "linux") {
            return Vec::new();
        }
        let keep: Vec<PathBuf> = std::iter::once(real(&self.workspace))
            .chain(self.writable_roots.iter().map(|r| real(r)))
            .collect();
        let mut out: Vec<PathBuf> = Vec::new();
        for dir in SOCKET_DIRS.iter().map(|d| real(Path::new(d))) {
            if dir.is_dir()
                && !out.contains(&dir)
                && !keep.iter().any(|k| k.starts_with(&dir) || dir.starts_with(k))
            {
                out.push(dir);
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

/// Where local daemons keep their named sockets.
const SOCKET_DIRS: &[&str] = &["/run", "/var/run"];

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
