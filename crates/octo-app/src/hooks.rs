//! Hooks in a session: where they are configured (octo's config files and Claude Code's
//! `settings.json` files), trusting a project's hooks (remembered by fingerprint in
//! `hooks-trusted.json` in octo's home), and the event log.

use crate::home::Home;
use octo_hooks::{HookSet, Runner};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Why a project's hooks could not be trusted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrustError {
    /// The session runs no hooks (it was built around a custom agent).
    #[error("this session has no hooks")]
    NoHooks,
    /// The session has no home to remember a trust in (it was built around a custom agent).
    #[error("this session has no octo home to remember the trust in")]
    NoHome,
    /// The trust could not be written to octo's home; the hooks stay off. Check that the home
    /// is writable, then try again.
    #[error("could not remember the trust (the hooks stay off; check that octo's home is writable): {0}")]
    Remember(#[source] std::io::Error),
}

/// Every configured hook: the config files' (already in `config`), the plugins' in use, then `~/.claude/settings.json`
/// (the user's), `.claude/settings.json` and `.claude/settings.local.json` (the project's). A
/// file that is not JSON is a notice naming it; the others still load.
pub fn load(
    config: &crate::config::Config,
    workspace: &Path,
    user_home: Option<&Path>,
) -> (HookSet, Vec<String>) {
    let mut set = config.hooks.clone();
    let mut notices = Vec::new();
    // The plugins' hooks: the user's own (installed or named by them), so no trust step.
    for plugin in &config.plugins {
        set.extend(crate::plugin_parts::hooks(plugin, &mut notices));
    }
    for (path, text, project) in crate::config::claude_settings::settings_files(workspace, user_home) {
        // A file Claude Code ignores (a setting of the wrong type) brings no hooks; the config's
        // loading names it.
        let ignored = serde_json::from_str::<serde_json::Value>(&text)
            .is_ok_and(|v| !crate::claude_schema::problems(&v).is_empty());
        if ignored {
            continue;
        }
        let (more, n) = octo_hooks::config::from_claude_settings(&text, &path.display().to_string(), project);
        set.extend(more);
        notices.extend(n);
    }
    (set, notices)
}

/// What trusting a project's hooks is tied to: the hooks as configured, the workspace they are
/// in, and the contents of the scripts in the workspace their commands name — so a repository
/// that copies a hook set trusted elsewhere, or changes a script, is asked about again.
pub(crate) fn trust_key(set: &HookSet, workspace: &Path) -> Option<String> {
    let base = set.project_fingerprint()?;
    let ws = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let mut files = std::collections::BTreeMap::new();
    for (_, m) in set.iter().filter(|(_, m)| m.project) {
        for h in &m.hooks {
            // What the command names, and what those run in turn (sourced files, modules,
            // includes, scripts a `package.json` names; `cd` and `..` followed), as the hook
            // guard finds them.
            let run = crate::hook_guard::files_run(&h.command, &ws);
            let named = files_named(&h.command).into_iter().map(|n| ws.join(n));
            for path in named.chain(run.files) {
                let Some(digest) = digest(&path) else { continue };
                let name = path.strip_prefix(&ws).unwrap_or(&path).display().to_string();
                files.insert(name, digest);
            }
            if run.overflow {
                files.insert(format!("more than followed: {}", h.command), String::new());
            }
        }
    }
    Some(crate::home::fingerprint(
        &serde_json::json!({"hooks": base, "workspace": ws.display().to_string(), "files": files}),
    ))
}

/// The largest file a hook runs that is read whole for its trust.
const HASHED_WHOLE: u64 = 64 * 1024 * 1024;

/// What a file a hook runs is remembered by: its whole contents' SHA-256; a file too large to
/// read at every start by its size, inode and status change time (which no command can set
/// back, unlike the time it was written). `None` when it is not a file.
fn digest(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok().filter(std::fs::Metadata::is_file)?;
    if meta.len() <= HASHED_WHOLE {
        return Some(crate::home::file_digest(path).unwrap_or_default());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some(format!(
            "{} bytes, inode {}, changed {}.{}",
            meta.len(),
            meta.ino(),
            meta.ctime(),
            meta.ctime_nsec()
        ))
    }
    #[cfg(not(unix))]
    Some(format!("{} bytes, written {:?}", meta.len(), meta.modified().ok()))
}

/// The workspace files a hook's command may run, relative to the workspace: each word between
/// the shell's separators (`sh hook.sh;`, `--config=x.sh`, `$CLAUDE_PROJECT_DIR/x.sh`), and
/// the file a build tool it names reads (`make` → `Makefile`, `npm` → `package.json`).
fn files_named(command: &str) -> Vec<String> {
    let command = command.replace("${CLAUDE_PROJECT_DIR}", "").replace("$CLAUDE_PROJECT_DIR", "");
    let mut out = Vec::new();
    for word in command.split(|c: char| c.is_whitespace() || ";&|()<>`'\"=$,".contains(c)) {
        let w = word.trim_start_matches('/').trim_start_matches("./");
        if w.is_empty() || w.split('/').any(|part| part == "..") {
            continue;
        }
        let reads: &[&str] = match w {
            "make" | "gmake" => &["Makefile", "makefile", "GNUmakefile"],
            "npm" | "npx" | "pnpm" | "yarn" | "bun" => &["package.json"],
            "just" => &["justfile", "Justfile", ".justfile"],
            _ => &[],
        };
        out.extend(reads.iter().map(|f| (*f).to_owned()));
        out.push(w.to_owned());
    }
    out
}

/// Whether the user trusted a project's hooks with this fingerprint ([`Home::trusts`]).
pub(crate) fn trusted(home: &Home, fingerprint: &str) -> bool {
    home.trusts(fingerprint)
}

/// Remembers that the user trusted these hooks (for `workspace`; [`Home::remember_trust`]).
pub(crate) fn remember_trust(home: &Home, fingerprint: &str, workspace: &Path) -> std::io::Result<()> {
    home.remember_trust(fingerprint, workspace)
}

/// Hooks run through the shell the command tool uses, in the workspace, confined by `sandbox`
/// when one is given (a sandbox that is required but unavailable makes each hook fail with the
/// reason on its stderr) and then with the commands' environment (`env`: no variable that looks
/// secret). A hook with `network = true` gets the same sandbox with the network on, made the
/// first time one runs. SessionStart hooks get `CLAUDE_ENV_FILE`, `env_file` (its folder is
/// made now, writable by hooks and not by the session's commands, and removed with the runner).
pub(crate) fn runner(
    workspace: &Path,
    sandbox: Option<std::sync::Arc<octo_tools::shell::sandbox::Sandbox>>,
    env: &octo_tools::shell::env::ShellEnv,
    env_file: &Path,
) -> Runner {
    use octo_tools::shell::sandbox::Sandbox;
    let dir = env_file.parent().filter(|d| octo_session::private::create_dir(d).is_ok());
    let sandbox = match (sandbox, dir) {
        (Some(s), Some(d)) => {
            let mut policy = s.policy().clone();
            policy.writable_roots.push(d.to_path_buf());
            Some(std::sync::Arc::new(Sandbox::new(policy)))
        }
        (s, _) => s,
    };
    let sandboxed = sandbox.as_ref().is_some_and(|s| s.is_active());
    let shell: octo_hooks::Shell = match sandbox {
        Some(s) => {
            let online: std::sync::OnceLock<Sandbox> = std::sync::OnceLock::new();
            let env = env.clone();
            std::sync::Arc::new(move |command: &str, network: bool| {
                let confine: &Sandbox = if network && !s.policy().network {
                    online.get_or_init(|| {
                        let mut policy = s.policy().clone();
                        policy.network = true;
                        Sandbox::new(policy)
                    })
                } else {
                    &s
                };
                let mut cmd = confine.shell_command(command).unwrap_or_else(|e| {
                    let mut refuse = octo_tools::shell::shell_command("printf '%s\\n' \"$1\" >&2; exit 126");
                    refuse.arg("octo-hook").arg(e.to_string());
                    refuse
                });
                if confine.is_active() {
                    env.apply(&mut cmd);
                }
                cmd
            })
        }
        None => std::sync::Arc::new(|command: &str, _| octo_tools::shell::shell_command(command)),
    };
    let runner = Runner::new(shell, workspace.to_path_buf(), sandboxed);
    if dir.is_some() {
        runner.with_env_file(env_file.to_path_buf())
    } else {
        runner
    }
}

/// How hooks see calls: Claude Code's tool and argument names (`Bash` with `command`, `Write`
/// with `file_path`), or octo's own when `native` (`hook_format = "octo"`).
pub(crate) fn shape(native: bool) -> octo_hooks::Shape {
    if native {
        return octo_hooks::Shape::native();
    }
    octo_hooks::Shape {
        call: std::sync::Arc::new(octo_tools::claude::hook_call),
        input: std::sync::Arc::new(octo_tools::claude::hook_input),
        response: std::sync::Arc::new(octo_tools::claude::hook_response),
    }
}

/// Other names a tool is matched by in hook files: Claude Code's.
pub(crate) fn aliases(tool: &str) -> Vec<String> {
    let mut out: Vec<String> =
        octo_tools::claude::claude_names(tool).iter().map(|s| (*s).to_owned()).collect();
    out.extend(octo_tools::claude::OUTSIDE.iter().filter(|(_, o)| *o == tool).map(|(c, _)| (*c).to_owned()));
    out
}

/// The largest event log before it is rotated (to `<id>.1.jsonl`).
const LOG_ROTATE_BYTES: u64 = 16 * 1024 * 1024;

/// Every event of a session as JSON lines in `logs/<id>.jsonl` (credentials redacted).
#[derive(Debug)]
pub(crate) struct EventLog {
    path: PathBuf,
    file: Option<std::fs::File>,
    failed: bool,
    /// Answer text not written yet: deltas are written joined, so a credential split across
    /// two of them is redacted as a whole.
    pending: String,
}

/// How much answer text is held before it is written (the last [`CARRY`] bytes stay back, so a
/// credential at the cut is still seen whole).
const PENDING_MAX: usize = 8 * 1024;
const CARRY: usize = 512;

impl EventLog {
    /// A log named `id` in octo's logs folder.
    pub(crate) fn new(home: &Home, id: &str) -> Self {
        Self {
            path: home.logs().join(format!("{id}.jsonl")),
            file: None,
            failed: false,
            pending: String::new(),
        }
    }

    /// Appends `event`; returns a notice the first time writing fails. Answer text is joined
    /// with the deltas around it before it is redacted and written.
    pub(crate) fn write(&mut self, event: &octo_agent::AgentEvent) -> Option<String> {
        if self.failed {
            return None;
        }
        let result = match event {
            octo_agent::AgentEvent::TextDelta { text } => {
                self.pending.push_str(text);
                if self.pending.len() > PENDING_MAX {
                    let mut cut = self.pending.len() - CARRY;
                    while !self.pending.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    let rest = self.pending.split_off(cut);
                    let head = std::mem::replace(&mut self.pending, rest);
                    self.append(&octo_agent::AgentEvent::TextDelta { text: head })
                } else {
                    Ok(())
                }
            }
            other => self.flush_pending().and_then(|()| self.append(other)),
        };
        match result {
            Ok(()) => None,
            Err(e) => {
                self.failed = true;
                Some(format!(
                    "the event log {} cannot be written ({e}); events are not logged",
                    self.path.display()
                ))
            }
        }
    }

    /// Writes the answer text held back, as one delta.
    fn flush_pending(&mut self) -> std::io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let text = std::mem::take(&mut self.pending);
        self.append(&octo_agent::AgentEvent::TextDelta { text })
    }

    fn append(&mut self, event: &octo_agent::AgentEvent) -> std::io::Result<()> {
        if self.file.as_ref().and_then(|f| f.metadata().ok()).is_some_and(|m| m.len() > LOG_ROTATE_BYTES) {
            self.file = None;
            let rotated = self.path.with_extension("1.jsonl");
            std::fs::rename(&self.path, rotated)?;
        }
        if self.file.is_none() {
            if let Some(dir) = self.path.parent() {
                octo_session::private::create_dir(dir)?;
            }
            let mut o = std::fs::OpenOptions::new();
            o.create(true).append(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                o.mode(0o600);
            }
            self.file = Some(o.open(&self.path)?);
        }
        let line = serde_json::json!({"time": octo_session::now(), "event": event});
        let text = octo_tools::secrets::redact_credentials(&line.to_string());
        if let Some(f) = self.file.as_mut() {
            f.write_all(format!("{text}\n").as_bytes())?;
        }
        Ok(())
    }
}

impl Drop for EventLog {
    fn drop(&mut self) {
        if !self.failed {
            let _ = self.flush_pending();
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::{files_named, trust_key};

    #[test]
    fn every_workspace_file_a_hook_runs_is_in_its_trust() {
        assert_eq!(files_named("sh hook.sh;"), ["sh", "hook.sh"]);
        assert!(files_named("x --config=./cfg.sh").contains(&"cfg.sh".to_owned()));
        assert!(files_named("\"$CLAUDE_PROJECT_DIR\"/.claude/h.sh").contains(&".claude/h.sh".to_owned()));
        assert!(files_named("make lint").contains(&"Makefile".to_owned()));
        assert!(!files_named("cat ../secret").iter().any(|f| f.contains("..")));
        let ws = tempfile::tempdir().unwrap();
        let settings = r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "sh hook.sh;"}]}]}}"#;
        let (set, _) = octo_hooks::config::from_claude_settings(settings, ".claude/settings.json", true);
        // A script past any size, changed as a pull would change it, is a new question.
        let big = "echo ok\n".repeat(300_000);
        std::fs::write(ws.path().join("hook.sh"), &big).unwrap();
        let before = trust_key(&set, ws.path()).unwrap();
        std::fs::write(ws.path().join("hook.sh"), big.replacen("ok", "no", 1)).unwrap();
        let after = trust_key(&set, ws.path()).unwrap();
        assert_ne!(before, after);
        assert_eq!(after.len(), 64, "SHA-256");
        // What a hook reaches through what it names: a sourced file, a folder it goes into, `..`.
        for (command, changed) in [
            ("sh lib_user.sh", "lib.sh"),
            ("cd sub && sh ./x.sh", "sub/x.sh"),
            ("sh ./sub/../y.sh", "y.sh"),
            ("python3 -m hookpkg", "hookpkg/__main__.py"),
        ] {
            std::fs::create_dir_all(ws.path().join("sub")).unwrap();
            std::fs::create_dir_all(ws.path().join("hookpkg")).unwrap();
            std::fs::write(ws.path().join("lib_user.sh"), ". ./lib.sh\n").unwrap();
            std::fs::write(ws.path().join(changed), "echo one\n").unwrap();
            let settings = serde_json::json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}});
            let (set, _) = octo_hooks::config::from_claude_settings(&settings.to_string(), "s.json", true);
            let before = trust_key(&set, ws.path()).unwrap();
            std::fs::write(ws.path().join(changed), "echo two\n").unwrap();
            assert_ne!(before, trust_key(&set, ws.path()).unwrap(), "{command}: {changed}");
        }
    }
}
