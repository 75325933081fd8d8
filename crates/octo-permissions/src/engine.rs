//! The engine itself: its rules, mode, remembered answers, secret locations and scopes, how it
//! is built, and what it remembers. Deciding a call is in `check`.

use super::mode::Mode;
use super::rules::{normalize_command, Rule, RuleSet};
use super::scope::Scope;
use super::target::Target;
use octo_agent::{PermissionDecision, PermissionGate, PermissionQuery};
use octo_tools::secrets::Secrets;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};

/// An answer remembered for the rest of the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Remembered {
    Command(String, String),
    Path(String, PathBuf),
    Tool(String),
    /// Reads anywhere under this directory (outside the workspace).
    ReadDir(PathBuf),
    /// Fetches from this host.
    Host(String),
}

impl Remembered {
    fn describe(&self) -> String {
        match self {
            Self::Command(tool, c) => format!("{tool}({c})"),
            Self::Path(tool, p) => format!("{tool}({})", p.display()),
            Self::Tool(tool) => format!("{tool} (every call)"),
            Self::ReadDir(d) => format!("reads under {}", d.display()),
            Self::Host(h) => format!("fetches from {h}"),
        }
    }

    /// Whether this answer covers the call: the same command, the same file, the same tool.
    pub(super) fn covers(&self, q: &PermissionQuery<'_>, t: &Target) -> bool {
        match self {
            Self::Command(tool, c) => {
                tool == q.tool && q.subject_value().is_some_and(|x| normalize_command(x) == *c)
            }
            Self::Path(tool, p) => tool == q.tool && t.path.as_ref().is_some_and(|t| t.real == *p),
            Self::Tool(tool) => tool == q.tool,
            Self::ReadDir(_) | Self::Host(_) => false,
        }
    }
}

/// Asks the sandbox what it cannot promise (see [`PermissionEngine::with_sandbox_gap`]).
#[derive(Clone, Default)]
pub(super) struct SandboxGap(Option<std::sync::Arc<dyn Fn() -> Option<String> + Send + Sync>>);

impl SandboxGap {
    pub(super) fn get(&self) -> Option<String> {
        self.0.as_ref().and_then(|f| f())
    }
}

impl std::fmt::Debug for SandboxGap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "SandboxGap(..)" } else { "SandboxGap(none)" })
    }
}

/// The engine octo installs as the agent's [`PermissionGate`].
#[derive(Debug)]
pub struct PermissionEngine {
    pub(super) rules: RwLock<RuleSet>,
    pub(super) mode: RwLock<Mode>,
    pub(super) remembered: Mutex<Vec<Remembered>>,
    /// Answers given with "reject always": calls they cover are refused without asking.
    pub(super) refused: Mutex<Vec<Remembered>>,
    pub(super) secrets: Secrets,
    pub(super) read_roots: Vec<PathBuf>,
    /// Files read into the prompt beyond the protected names (`@include` targets).
    pub(super) protected: Vec<PathBuf>,
    /// Folders whose files are read into later prompts or run as octo's own (skills, commands,
    /// agents, memory): everything under them is protected.
    pub(super) protected_dirs: Vec<PathBuf>,
    /// Active skills' and commands' `allowed-tools`: a call must fit every one.
    pub(super) scopes: RwLock<Vec<Scope>>,
    /// Active skills' and commands' `allowed-tools`: a call one of them names runs without
    /// asking (until the turn ends).
    pub(super) grants: RwLock<Vec<Scope>>,
    /// Whether commands run in an OS sandbox: then `accept-edits` runs them without asking, and
    /// a call to run one outside it (`"sandbox": false`) is asked about in every mode.
    pub(super) sandboxed: bool,
    /// Whether commands can reach the network (the sandbox's network is on, or there is no
    /// sandbox): then, once the conversation holds something from outside, a command naming a
    /// new host asks in auto mode as a fetch does.
    pub(super) command_network: bool,
    /// Why accept-edits cannot run commands without asking although the sandbox is active (a
    /// promise it does not hold here), asked when needed.
    pub(super) sandbox_gap: SandboxGap,
    /// Why daemons' sockets stay reachable by commands with the network off (see
    /// [`PermissionEngine::with_socket_gap`]).
    pub(super) socket_gap: SandboxGap,
    /// Whether the user trusted this project's skills and commands: only then do their
    /// `allowed-tools` grant.
    pub(super) project_trusted: std::sync::atomic::AtomicBool,
    /// Whether the project's settings' allow rules were trusted during the session.
    pub(super) settings_applied: std::sync::atomic::AtomicBool,
    /// What the conversation holds from outside, and the hosts the user named.
    pub(super) taint: super::taint::Taint,
}

impl PermissionEngine {
    /// An engine with these rules, starting in `mode`; secret locations are those of `$HOME`.
    pub fn new(rules: RuleSet, mode: Mode) -> Self {
        Self {
            rules: RwLock::new(rules),
            mode: RwLock::new(mode),
            remembered: Mutex::new(Vec::new()),
            refused: Mutex::new(Vec::new()),
            secrets: Secrets::from_env(),
            read_roots: Vec::new(),
            protected: Vec::new(),
            protected_dirs: Vec::new(),
            scopes: RwLock::new(Vec::new()),
            grants: RwLock::new(Vec::new()),
            sandboxed: false,
            command_network: true,
            sandbox_gap: SandboxGap::default(),
            socket_gap: SandboxGap::default(),
            project_trusted: std::sync::atomic::AtomicBool::new(false),
            settings_applied: std::sync::atomic::AtomicBool::new(false),
            taint: super::taint::Taint::default(),
        }
    }

    /// Takes note of the hosts the user's own prompt names: fetching from them never asks for
    /// the reason [`PermissionEngine::outside_content`] gives.
    pub fn note_user_text(&self, text: &str) {
        self.taint.note_user_text(text);
    }

    /// Why a fetch to a new host asks in auto mode now: the conversation holds something read
    /// from outside the workspace or from an unnamed web page (`None`: it does not).
    pub fn outside_content(&self) -> Option<String> {
        self.taint.why()
    }

    /// Whether the project's skills and commands may grant their `allowed-tools`.
    pub fn project_trusted(&self) -> bool {
        self.project_trusted.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Whether the project's settings were trusted during the session (their rules added).
    pub fn project_settings_applied(&self) -> bool {
        self.settings_applied.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Notes that the project's settings' rules were added.
    pub fn mark_project_settings_applied(&self) {
        self.settings_applied.store(true, std::sync::atomic::Ordering::Release);
    }

    /// Lets the project's skills and commands grant (the user trusted them), or stops it.
    pub fn set_project_trusted(&self, trusted: bool) {
        self.project_trusted.store(trusted, std::sync::atomic::Ordering::Release);
    }

    /// Commands run in an active OS sandbox (see the field).
    #[must_use]
    pub fn with_sandbox(mut self, active: bool) -> Self {
        self.sandboxed = active;
        self
    }
}

impl PermissionEngine {
    /// The secret locations to guard (the user's home and octo's own key, config and session
    /// files).
    #[must_use]
    pub fn with_secrets(mut self, secrets: Secrets) -> Self {
        self.secrets = secrets;
        self
    }

    /// Directories outside the workspace that may be read without asking (octo's spilled
    /// command output).
    #[must_use]
    pub fn with_read_roots(mut self, roots: Vec<PathBuf>) -> Self {
        self.read_roots = roots;
        self
    }

    /// Whether commands can reach the network (see the field).
    #[must_use]
    pub fn with_command_network(mut self, reach: bool) -> Self {
        self.command_network = reach;
        self
    }

    /// What the active sandbox cannot promise here, asked before accept-edits runs a command
    /// without asking: `Some(why)` makes it ask (a host without namespaces, where Landlock
    /// alone cannot keep folders read-only against mode changes).
    #[must_use]
    pub fn with_sandbox_gap(mut self, gap: impl Fn() -> Option<String> + Send + Sync + 'static) -> Self {
        self.sandbox_gap = SandboxGap(Some(std::sync::Arc::new(gap)));
        self
    }

    /// Asks the sandbox why the daemons' named sockets stay within commands' reach with the
    /// network off (`None`: they do not): then a command that talks to a daemon (`docker`,
    /// `systemctl`, `nc -U`, …) is asked about in every mode.
    #[must_use]
    pub fn with_socket_gap(mut self, gap: impl Fn() -> Option<String> + Send + Sync + 'static) -> Self {
        self.socket_gap = SandboxGap(Some(std::sync::Arc::new(gap)));
        self
    }

    /// Folders to protect like `.octo`: the ones skills, commands, agents and memory are read
    /// from (each also as resolved).
    #[must_use]
    pub fn with_protected_dirs(mut self, dirs: Vec<PathBuf>) -> Self {
        let mut all = Vec::new();
        for d in dirs {
            let real = octo_tools::path::real_path(&d);
            if real != d {
                all.push(real);
            }
            all.push(d);
        }
        self.protected_dirs = all;
        self
    }

    /// The protected folder `path` lies in, if any.
    pub(super) fn in_protected_dir(&self, path: &Path) -> Option<&Path> {
        self.protected_dirs.iter().find(|d| path.starts_with(d)).map(PathBuf::as_path)
    }

    /// More files to protect like `CLAUDE.md`: the ones the project's rules include.
    #[must_use]
    pub fn with_protected(mut self, files: Vec<PathBuf>) -> Self {
        self.protected =
            files.iter().map(|f| octo_tools::path::real_path(f)).chain(files.iter().cloned()).collect();
        self
    }

    /// The current mode.
    pub fn mode(&self) -> Mode {
        *self.mode.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Switches mode (takes effect for the next call).
    pub fn set_mode(&self, mode: Mode) {
        *self.mode.write().unwrap_or_else(std::sync::PoisonError::into_inner) = mode;
    }

    /// The rules, as they are now.
    pub fn rules(&self) -> RuleSet {
        self.rules.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Adds a rule for the rest of the session (takes effect for the next call).
    pub fn add_rule(&self, rule: Rule) {
        self.rules.write().unwrap_or_else(std::sync::PoisonError::into_inner).push(rule);
    }

    /// Removes the rules written as `text` for the rest of the session; returns how many.
    pub fn remove_rule(&self, text: &str) -> usize {
        self.rules.write().unwrap_or_else(std::sync::PoisonError::into_inner).remove(text)
    }

    /// The answers given with "always" (and the hosts allowed) for the rest of the session,
    /// one line each, as `/permissions` lists them: what is allowed, then what is refused.
    pub fn granted(&self) -> Vec<String> {
        let mut lines: Vec<String> =
            self.remembered().iter().map(|r| format!("allowed {}", r.describe())).collect();
        lines.extend(self.refused().iter().map(|r| format!("refused {}", r.describe())));
        lines
    }

    pub(super) fn remembered(&self) -> std::sync::MutexGuard<'_, Vec<Remembered>> {
        self.remembered.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(super) fn refused(&self) -> std::sync::MutexGuard<'_, Vec<Remembered>> {
        self.refused.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(super) fn remembered_allows(&self, q: &PermissionQuery<'_>, t: &Target) -> bool {
        self.remembered().iter().any(|r| r.covers(q, t))
    }

    /// Notes what an allowed call brings into the conversation from outside (octo's own read
    /// roots, such as the session's spilled command output, are not outside).
    pub(super) fn note_brought(&self, q: &PermissionQuery<'_>, t: &Target) {
        let own = t.path.as_ref().is_some_and(|p| {
            self.read_roots.iter().any(|r| p.real.starts_with(octo_tools::path::real_path(r)))
        });
        if !own {
            self.taint.note_call(q, t);
        }
    }

    pub(super) fn read_remembered(&self, real: &Path) -> bool {
        self.read_roots.iter().any(|r| real.starts_with(octo_tools::path::real_path(r)))
            || self.remembered().iter().any(|r| matches!(r, Remembered::ReadDir(d) if real.starts_with(d)))
    }

    pub(super) fn host_remembered(&self, host: &str) -> bool {
        self.remembered().iter().any(|r| matches!(r, Remembered::Host(h) if h == host))
    }

    /// The first protected name (or prompt file) a command's text mentions.
    pub(super) fn names_protected(&self, command: &str) -> Option<String> {
        let lower = command.to_ascii_lowercase();
        let included = self
            .protected
            .iter()
            .filter_map(|p| p.file_name())
            .map(|n| n.to_string_lossy().to_ascii_lowercase());
        super::protect::protected_names().chain(included).find(|n| lower.contains(n.as_str()))
    }

    /// A command the model asks to run outside the active sandbox.
    pub(super) fn escapes_sandbox(&self, q: &PermissionQuery<'_>) -> bool {
        self.sandboxed && q.input.get("sandbox") == Some(&Value::Bool(false))
    }
}

impl PermissionEngine {
    /// Narrows the tools to `scope` as well as any scope already active (until
    /// [`PermissionEngine::clear_scopes`], which the session calls when the turn ends).
    pub fn narrow(&self, scope: Scope) {
        self.scopes.write().unwrap_or_else(std::sync::PoisonError::into_inner).push(scope);
    }

    /// The narrowings active now (a sub-agent keeps a copy for its whole run).
    pub fn scopes(&self) -> Vec<Scope> {
        self.scopes.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Ends every narrowing and every skill's and command's grant (the turn is over).
    pub fn clear_scopes(&self) {
        self.scopes.write().unwrap_or_else(std::sync::PoisonError::into_inner).clear();
        self.grants.write().unwrap_or_else(std::sync::PoisonError::into_inner).clear();
    }

    /// Lets the calls `scope` names run without asking until the turn ends (a skill's or a
    /// command's `allowed-tools`); an untrusted scope grants nothing.
    pub fn grant(&self, scope: Scope) {
        self.grants.write().unwrap_or_else(std::sync::PoisonError::into_inner).push(scope);
    }

    /// The refusal of a call outside an active scope. Tools that only read and name no subject
    /// (the task list, a question for the user, loading a skill) stay available.
    pub(super) fn out_of_scope(&self, q: &PermissionQuery<'_>, t: &Target) -> Option<PermissionDecision> {
        let scopes = self.scopes.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        scopes.iter().find_map(|s| s.refusal(q, t))
    }

    /// The decision for one of a command's or skill's `` !`…` `` lines before its turn starts:
    /// granted by its own `allowed-tools` (`scope`), and a command that only looks (`git
    /// status`, `git diff`) needs no grant.
    pub fn check_within(&self, q: &PermissionQuery<'_>, scope: Option<&Scope>) -> PermissionDecision {
        self.decide(q, Some(scope))
    }

    /// The decision for `q` if every one of `scopes` were active as well.
    pub fn check_within_all(&self, q: &PermissionQuery<'_>, scopes: &[Scope]) -> PermissionDecision {
        let t = Target::of(q, self.secrets.home());
        if let Some(refusal) = scopes.iter().find_map(|s| s.refusal(q, &t)) {
            return refusal;
        }
        self.check(q)
    }
}
