//! The session's language servers: found by a file's extension, started in the background on
//! the first touch of a file of their language, rooted at the nearest root marker inside the
//! workspace, restarted with backoff when they die, and stopped with the session.

use crate::config::Resolved;
use crate::server::{Launch, Server};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// After this many failed starts a server is not started again this session.
const MAX_FAILURES: u32 = 4;

/// Files a command changed that are checked after it, at most.
const MAX_CHANGED: usize = 10;

/// How a session's servers behave.
#[derive(Debug, Clone)]
pub struct Settings {
    /// How long an edit waits for its diagnostics, at most (the server's start included).
    pub wait: Duration,
    /// Report warnings too, not only errors.
    pub warnings: bool,
    /// Diagnostics lines appended to a result, at most.
    pub max_lines: usize,
    /// Files larger than this are never sent to a server.
    pub max_file: u64,
    /// How long `initialize` may take.
    pub init_timeout: Duration,
    /// How long the `lsp` tool waits for an answer.
    pub request_timeout: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            wait: Duration::from_millis(1500),
            warnings: false,
            max_lines: 20,
            max_file: 5 << 20,
            init_timeout: Duration::from_secs(20),
            request_timeout: Duration::from_secs(10),
        }
    }
}

type Started = Option<Result<Arc<Server>, String>>;

/// One configured server and its running instances (one per project root).
struct Slot {
    resolved: Resolved,
    running: Mutex<HashMap<PathBuf, watch::Receiver<Started>>>,
    health: Mutex<Health>,
}

#[derive(Default)]
struct Health {
    failures: u32,
    last_failure: Option<Instant>,
    last_error: Option<String>,
    /// The failure was already told to the model once.
    told: bool,
}

/// A server that ran this long before it died is forgiven its earlier failures: the death
/// counts as its first (a crash a day does not end it for the session).
const HEALTHY_RUN: Duration = Duration::from_secs(10 * 60);

impl Health {
    fn record(&mut self, why: String, ran: Option<Duration>) {
        if ran.is_some_and(|r| r >= HEALTHY_RUN) {
            self.failures = 0;
        }
        self.failures += 1;
        self.last_failure = Some(Instant::now());
        self.last_error = Some(why);
        self.told = false;
    }
}

/// A server's state, for `/lsp` and `octo doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerStatus {
    /// Its name.
    pub name: String,
    /// The program it runs.
    pub command: String,
    /// The extensions it serves.
    pub extensions: Vec<String>,
    /// `not installed`, `idle`, `starting`, `running`, `failed: …`.
    pub state: String,
    /// Errors and warnings it reports now, over all files.
    pub problems: usize,
}

/// The language servers of one workspace.
pub struct Lsp {
    workspace: PathBuf,
    slots: Vec<Arc<Slot>>,
    sandbox: Option<Arc<octo_exec::sandbox::Sandbox>>,
    env: octo_exec::env::ShellEnv,
    /// How servers behave.
    pub settings: Settings,
}

impl std::fmt::Debug for Lsp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.slots.iter().map(|s| s.resolved.name.as_str()).collect();
        f.debug_struct("Lsp").field("workspace", &self.workspace).field("servers", &names).finish()
    }
}

impl Lsp {
    /// The servers for `workspace`; they run in `sandbox` (with the network off) when given.
    pub fn new(
        workspace: &Path,
        servers: Vec<Resolved>,
        sandbox: Option<Arc<octo_exec::sandbox::Sandbox>>,
        env: octo_exec::env::ShellEnv,
        settings: Settings,
    ) -> Self {
        let workspace = workspace.canonicalize().unwrap_or_else(|_| workspace.to_path_buf());
        let slots = servers
            .into_iter()
            .map(|resolved| Arc::new(Slot { resolved, running: Mutex::default(), health: Mutex::default() }))
            .collect();
        Self { workspace, slots, sandbox, env, settings }
    }

    /// Whether any server can run (else the `lsp` tool is not offered).
    pub fn any_installed(&self) -> bool {
        self.slots.iter().any(|s| s.resolved.program.is_some())
    }

    /// The workspace the servers serve.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// `path` (relative to the workspace or absolute) resolved, if it lies inside the workspace.
    pub(crate) fn inside(&self, path: &Path) -> Option<PathBuf> {
        let joined = if path.is_absolute() { path.to_path_buf() } else { self.workspace.join(path) };
        let real = joined.canonicalize().ok()?;
        real.starts_with(&self.workspace).then_some(real)
    }

    /// The slot serving a file, by its extension (the first installed one).
    fn slot(&self, path: &Path) -> Option<&Arc<Slot>> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        self.slots
            .iter()
            .find(|s| s.resolved.program.is_some() && s.resolved.config.extensions.contains(&ext))
    }

    /// The directory that roots a file's server: the nearest with a root marker, up to the
    /// workspace (which roots it when none has one).
    fn root(&self, slot: &Slot, file: &Path) -> PathBuf {
        let markers = &slot.resolved.config.root_markers;
        let mut dir = file.parent();
        while let Some(d) = dir {
            if !d.starts_with(&self.workspace) {
                break;
            }
            if markers.iter().any(|m| d.join(m).exists()) {
                return d.to_path_buf();
            }
            if d == self.workspace {
                break;
            }
            dir = d.parent();
        }
        self.workspace.clone()
    }

    /// Starts the server for `path` in the background if it is not running (a read warms it up
    /// for the edits that follow). Files outside the workspace are never opened.
    pub fn touch(&self, path: &Path) {
        if let Some(file) = self.inside(path) {
            let _ = self.starting(&file);
        }
    }

    /// The server for a file as it starts (or why there is none).
    fn starting(&self, file: &Path) -> Result<(Arc<Slot>, watch::Receiver<Started>), String> {
        let slot = Arc::clone(self.slot(file).ok_or("no language server serves this file")?);
        let root = self.root(&slot, file);
        let mut running = slot.running.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(rx) = running.get(&root) {
            let dead = match &*rx.borrow() {
                Some(Ok(server)) => server.is_dead().then(|| (server.death(), server.ran())),
                Some(Err(_)) => Some((String::new(), None)),
                None => None,
            };
            match dead {
                None => return Ok((Arc::clone(&slot), rx.clone())),
                Some((why, ran)) => {
                    if !why.is_empty() {
                        slot.failed(why, ran);
                    }
                    running.remove(&root);
                }
            }
        }
        slot.may_start()?;
        let (tx, rx) = watch::channel(None);
        running.insert(root.clone(), rx.clone());
        drop(running);
        let (slot2, sandbox, env, timeout) =
            (Arc::clone(&slot), self.sandbox.clone(), self.env.clone(), self.settings.init_timeout);
        tokio::spawn(async move {
            let r = &slot2.resolved;
            let program = r.program.clone().unwrap_or_default();
            let started = Server::start(Launch {
                config: &r.config,
                program: &program,
                root: &root,
                sandbox: sandbox.as_deref(),
                env: &env,
                init_timeout: timeout,
            })
            .await;
            let started = match started {
                Ok(s) => Ok(Arc::new(s)),
                Err(e) => {
                    slot2.failed(e.to_string(), None);
                    Err(e.to_string())
                }
            };
            let _ = tx.send(Some(started));
        });
        Ok((slot, rx))
    }

    /// The server for a file, waiting until `deadline` for it to be ready.
    pub(crate) async fn server(
        &self,
        file: &Path,
        deadline: Instant,
    ) -> Result<(String, Arc<Server>), String> {
        let (slot, mut rx) = self.starting(file)?;
        let wait = deadline.saturating_duration_since(Instant::now());
        let ready = tokio::time::timeout(wait, rx.wait_for(Option::is_some)).await;
        let name = slot.resolved.name.clone();
        match ready {
            Ok(Ok(state)) => match &*state {
                Some(Ok(server)) => Ok((name, Arc::clone(server))),
                Some(Err(e)) => Err(format!("`{name}` could not start: {e}")),
                None => Err(format!("`{name}` is still starting")),
            },
            Ok(Err(_)) => Err(format!("`{name}` stopped while starting")),
            Err(_) => Err(format!("`{name}` is still starting")),
        }
    }

    /// After `path` was written: its text sent to its server, and the errors (and warnings, when
    /// asked for) the server reports for it within the wait, formatted for the tool result.
    /// `None` when there is nothing to say — no server, a slow one, no problems. A server that
    /// failed is named once.
    pub async fn after_edit(&self, path: &Path) -> Option<String> {
        let file = self.inside(path)?;
        let deadline = Instant::now() + self.settings.wait;
        if std::fs::metadata(&file).ok()?.len() > self.settings.max_file {
            return None;
        }
        let Ok((name, server)) = self.server(&file, deadline).await else {
            return self.slot(&file).and_then(|s| s.tell_failure());
        };
        let text = std::fs::read_to_string(&file).ok()?;
        let before = server.diagnostics.seq();
        let (uri, version) = server.sync(&file, &text).await.ok()?;
        // A publication for this version (or one that names none) that came after the sync: a
        // late one for an earlier version is not this edit's answer.
        let current = |p: &crate::server::Published| {
            p.seq > before && p.version.is_none_or(|v| v >= i64::from(version))
        };
        let published = tokio::time::timeout_at(deadline.into(), async {
            loop {
                let changed = server.diagnostics.changed.notified();
                if let Some(p) = server.diagnostics.get(&uri).filter(current) {
                    return p;
                }
                changed.await;
            }
        })
        .await
        .ok()?;
        let rel = file.strip_prefix(&self.workspace).unwrap_or(&file);
        crate::format::diagnostics(
            &name,
            rel,
            &published.items,
            self.settings.warnings,
            self.settings.max_lines,
        )
    }

    /// After a command changed `paths` (the workspace's files, as the checkpoints saw them):
    /// those a server serves (at most ten) synced at once and their problems
    /// reported within one wait, as [`Lsp::after_edit`] does for one file.
    pub async fn after_changes(&self, paths: &[PathBuf]) -> Option<String> {
        let served: Vec<&PathBuf> = paths
            .iter()
            .filter(|p| self.inside(p).is_some_and(|f| self.slot(&f).is_some()))
            .take(MAX_CHANGED)
            .collect();
        let reports = futures_util::future::join_all(served.iter().map(|p| self.after_edit(p))).await;
        let said: Vec<String> = reports.into_iter().flatten().collect();
        (!said.is_empty()).then(|| said.join("\n"))
    }

    /// The servers running now, with their names.
    pub(crate) fn running(&self) -> Vec<(String, Arc<Server>)> {
        let mut out = Vec::new();
        for slot in &self.slots {
            let running = slot.running.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            for rx in running.values() {
                if let Some(Ok(server)) = &*rx.borrow() {
                    out.push((slot.resolved.name.clone(), Arc::clone(server)));
                }
            }
        }
        out
    }

    /// Every server's state.
    pub fn status(&self) -> Vec<ServerStatus> {
        self.slots.iter().map(|s| s.status()).collect()
    }

    /// Stops every running server (their process groups are killed).
    pub async fn shutdown(&self) {
        for slot in &self.slots {
            let receivers: Vec<_> = slot
                .running
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .drain()
                .map(|(_, rx)| rx)
                .collect();
            for rx in receivers {
                let server = match &*rx.borrow() {
                    Some(Ok(server)) => Some(Arc::clone(server)),
                    _ => None,
                };
                if let Some(server) = server {
                    server.shutdown().await;
                }
            }
        }
    }
}

impl Slot {
    /// Counts a failure: a start that failed, or a server that died after running `ran`.
    fn failed(&self, why: String, ran: Option<Duration>) {
        self.health.lock().unwrap_or_else(std::sync::PoisonError::into_inner).record(why, ran);
    }

    /// Whether a new start may be tried now: not after too many failures, and not before the
    /// backoff since the last one (1 s, doubling, at most a minute) has passed.
    fn may_start(&self) -> Result<(), String> {
        let h = self.health.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let name = &self.resolved.name;
        if h.failures >= MAX_FAILURES {
            return Err(format!(
                "`{name}` failed {} times and is not started again this session",
                h.failures
            ));
        }
        if let (Some(at), n @ 1..) = (h.last_failure, h.failures) {
            let backoff = Duration::from_secs(1 << (n - 1).min(6)).min(Duration::from_secs(60));
            if at.elapsed() < backoff {
                return Err(format!("`{name}` failed; it is started again in a moment"));
            }
        }
        Ok(())
    }

    /// The failure, the first time it is asked for after it happened.
    fn tell_failure(&self) -> Option<String> {
        let mut h = self.health.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if h.told {
            return None;
        }
        let why = h.last_error.clone()?;
        h.told = true;
        let exts = self.resolved.config.extensions.join(", .");
        Some(format!(
            "(The language server `{}` failed: {why}. Diagnostics for .{exts} files are off until it starts.)",
            self.resolved.name
        ))
    }

    fn status(&self) -> ServerStatus {
        let r = &self.resolved;
        let running = self.running.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut problems = 0;
        let last_error =
            self.health.lock().unwrap_or_else(std::sync::PoisonError::into_inner).last_error.clone();
        let mut state = match (&r.program, last_error) {
            (None, _) => "not installed".to_owned(),
            (Some(_), Some(e)) => format!("failed: {e}"),
            (Some(_), None) => "idle".to_owned(),
        };
        for rx in running.values() {
            state = match &*rx.borrow() {
                None => "starting".into(),
                Some(Ok(server)) if server.is_dead() => format!("stopped: {}", server.death()),
                Some(Ok(server)) => {
                    problems += server.diagnostics.all().iter().map(|(_, d)| d.len()).sum::<usize>();
                    "running".into()
                }
                Some(Err(e)) => format!("failed: {e}"),
            };
        }
        ServerStatus {
            name: r.name.clone(),
            command: r.config.command.clone(),
            extensions: r.config.extensions.clone(),
            state,
            problems,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_healthy_run_forgives_earlier_failures() {
        let mut h = Health::default();
        for _ in 0..3 {
            h.record("exited".into(), Some(Duration::from_secs(5)));
        }
        assert_eq!(h.failures, 3);
        h.record("exited".into(), Some(HEALTHY_RUN));
        assert_eq!(h.failures, 1, "the death after a long run counts as the first");
        h.record("no answer to initialize".into(), None);
        assert_eq!(h.failures, 2);
        assert!(!h.told);
    }
}
