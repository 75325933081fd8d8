//! `terminal`, `terminal_output` and `kill_shell`: commands through the platform shell.

mod background;
pub mod credentials;
mod deny;
pub mod plain;
mod readonly;
pub mod syntax;
mod undone;

pub use background::BackgroundShells;
pub use deny::{
    changes_metadata_outside, check, command_segments, hard_denied, reaches_local_daemon, Context, Verdict,
};
pub use octo_exec::{
    env, kill_group, pause, reaper, sandbox, shell_command, spawn, unique, Capture, Ending, Running,
};
pub use readonly::only_looks;

use octo_agent::{
    async_trait, parse_input, Subject, ToolContext, ToolDefinition, ToolExecutor, ToolMeta, ToolOutcome,
    ToolOutput,
};
use serde::Deserialize;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How commands run: where long output goes, their limits, their environment, and the secret
/// locations a command must ask about.
#[derive(Debug, Clone)]
pub struct ShellSettings {
    /// Where full output too long to return is written.
    pub spill_dir: PathBuf,
    /// Bytes of output returned before head and tail are kept.
    pub output_cap: usize,
    /// Timeout when the model gives none.
    pub default_timeout: Duration,
    /// The longest timeout a call may ask for.
    pub max_timeout: Duration,
    /// Which environment variables commands see.
    pub env: env::ShellEnv,
    /// Secret locations (and the home directory) commands are checked against.
    pub secrets: crate::secrets::Secrets,
    /// The OS sandbox commands run in (`None`: none).
    pub sandbox: Option<Arc<sandbox::Sandbox>>,
}

/// Runs shell commands.
#[derive(Debug, Clone)]
pub struct Terminal {
    background: Arc<BackgroundShells>,
    settings: ShellSettings,
    /// Whether the first confined command has said what the sandbox does not hold here.
    told: Arc<std::sync::atomic::AtomicBool>,
}

impl Terminal {
    /// A terminal tool sharing `background` with `terminal_output` and `kill_shell`.
    pub fn new(background: Arc<BackgroundShells>, settings: ShellSettings) -> Self {
        Self { background, settings, told: Arc::default() }
    }

    /// Once per session, after the first confined command: the sandbox's promises that do not
    /// hold on this machine, and why (nothing when all hold).
    fn gaps_once(&self, sandbox: &sandbox::Sandbox) -> Option<String> {
        if self.told.swap(true, Ordering::Relaxed) {
            return None;
        }
        let gaps = sandbox.unheld();
        (!gaps.is_empty())
            .then(|| format!("[The OS sandbox here does not promise that {}.]", gaps.join("; nor that ")))
    }

    /// The active sandbox, if any.
    fn sandbox(&self) -> Option<&sandbox::Sandbox> {
        self.settings.sandbox.as_deref().filter(|s| s.is_active())
    }

    /// What the model is told about the sandbox (nothing when there is none).
    fn sandbox_note(&self) -> String {
        let Some(s) = self.sandbox() else { return String::new() };
        let p = s.policy();
        let writes = match p.mode {
            sandbox::Mode::ReadOnly => "write nowhere".to_owned(),
            _ if p.protected_git().is_some() => {
                "write only in the workspace (not its .git) and the temp dir".to_owned()
            }
            _ => "write only in the workspace and the temp dir".to_owned(),
        };
        let net = if p.network { "" } else { " and have no network" };
        format!(
            " In an OS sandbox, commands {writes}{net}; if that blocks one, rerun it with `sandbox: false` \
             and a `reason` (asks the user)."
        )
    }

    fn schema(&self) -> Value {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "command": {"type": "string"},
                "timeout": {"type": "integer", "minimum": 1, "description": "Seconds."},
                "run_in_background": {"type": "boolean", "description": "For servers, watchers."},
                "description": {"type": "string", "description": "A few words for the user."}
            },
            "required": ["command"]
        });
        if self.sandbox().is_some() {
            schema["properties"]["sandbox"] =
                json!({"type": "boolean", "description": "false: outside the sandbox (asks the user)."});
            schema["properties"]["reason"] =
                json!({"type": "string", "description": "Why it needs sandbox: false."});
        }
        schema
    }

    /// Asks the user before a command runs outside the sandbox (unless the permission gate
    /// already asked about this very call).
    async fn escalate(&self, input: &Input, ctx: &ToolContext) -> Option<ToolOutput> {
        if ctx.user_approved() {
            return None;
        }
        let why =
            input.reason.as_deref().map(str::trim).filter(|r| !r.is_empty()).unwrap_or("no reason given");
        let mut req = octo_agent::ApprovalRequest::new(
            ctx.tool_use_id(),
            "terminal",
            json!({ "command": input.command, "sandbox": false }),
            &input.command,
        );
        req.reason = Some(outside_reason(why, &input.command));
        let (decision, by) = ctx.ask_approval(req).await;
        if decision.is_allowed() {
            return None;
        }
        let outcome = match by {
            octo_agent::AnsweredBy::User => ToolOutcome::DeniedByUser,
            octo_agent::AnsweredBy::Nobody => ToolOutcome::DeniedUnattended,
            _ => ToolOutcome::Interrupted,
        };
        Some(ToolOutput::refused(
            "not run: running outside the sandbox was not approved. Find a way that works inside it, or ask the user.",
            outcome,
        ))
    }

    /// What octo decides about `command` before running it: refused, asked about (when the
    /// user did not already approve this very call), or run.
    async fn vet(&self, command: &str, ctx: &ToolContext) -> Option<ToolOutput> {
        let verdict = check(command, &Context { cwd: ctx.cwd(), secrets: &self.settings.secrets });
        match verdict {
            // A `.env` named in a command is the permission engine's to ask about (an allow rule
            // or "always" may settle it); asking here too would ask twice.
            Verdict::Run | Verdict::Caution(_) => None,
            Verdict::Refuse(why) => Some(ToolOutput::refused(
                format!("refused: this command would do {why}. octo never runs it, whatever the permission rules say."),
                ToolOutcome::HardDenied,
            )),
            Verdict::Ask(_) if ctx.user_approved() => None,
            Verdict::Ask(why) => {
                let mut req = octo_agent::ApprovalRequest::new(
                    ctx.tool_use_id(),
                    "terminal",
                    serde_json::json!({ "command": command }),
                    command,
                );
                req.reason = Some(why.clone());
                let (decision, by) = ctx.ask_approval(req).await;
                if decision.is_allowed() {
                    return None;
                }
                let outcome = match by {
                    octo_agent::AnsweredBy::User => ToolOutcome::DeniedByUser,
                    octo_agent::AnsweredBy::Nobody => ToolOutcome::DeniedUnattended,
                    _ => ToolOutcome::Interrupted,
                };
                Some(ToolOutput::refused(format!("not run: {why}, and it was not approved."), outcome))
            }
        }
    }
}

#[derive(Deserialize)]
struct Input {
    command: String,
    #[serde(default)]
    timeout: Option<u64>,
    #[serde(default)]
    run_in_background: bool,
    #[serde(default)]
    #[allow(dead_code)]
    description: Option<String>,
    /// `false`: run outside the OS sandbox (the user is always asked).
    #[serde(default)]
    sandbox: Option<bool>,
    /// Why the command needs to run outside the sandbox.
    #[serde(default)]
    reason: Option<String>,
}

fn spill_path(dir: &std::path::Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    dir.join(format!("{}-{n}-{:x}.txt", std::process::id(), unique()))
}

#[async_trait]
impl ToolExecutor for Terminal {
    fn definition(&self) -> ToolDefinition {
        let shell = if cfg!(windows) { "PowerShell" } else { "`sh -c`" };
        ToolDefinition::new(
            "terminal",
            format!(
                "Run a command with {shell} in the workspace: its output (stdout and stderr) and exit code. Killed \
                 with its children after `timeout` ({}s, at most {}s). Over {} bytes, head and tail are kept and \
                 the rest saved to a file. `run_in_background` returns an id for terminal_output and \
                 kill_shell. No TTY: pass `--yes`. Not for cat, grep, find, sed: use the tools.",
                self.settings.default_timeout.as_secs(),
                self.settings.max_timeout.as_secs(),
                self.settings.output_cap
            ) + &self.sandbox_note(),
            self.schema(),
        )
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::writes()
            .subject(Subject::command("command"))
            .aliases(&["Bash"])
            .millisecond_args(&["timeout"])
    }

    async fn execute(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let input: Input = match parse_input("terminal", input) {
            Ok(i) => i,
            Err(e) => return e,
        };
        if input.command.trim().is_empty() {
            return ToolOutput::error("`command` is empty");
        }
        if let Some(refusal) = self.vet(&input.command, ctx).await {
            return refusal;
        }
        let escalating = input.sandbox == Some(false) && self.sandbox().is_some();
        if escalating {
            if let Some(refusal) = self.escalate(&input, ctx).await {
                return refusal;
            }
        }
        let s = &self.settings;
        let confine = if escalating { None } else { s.sandbox.as_deref() };
        if input.run_in_background {
            return match self.background.start(&input.command, ctx.cwd(), &s.spill_dir, &s.env, confine) {
                Ok(id) => ToolOutput::text(format!(
                    "started in the background as {id}. Read its output with terminal_output(id: \"{id}\"); stop it \
                     with kill_shell(id: \"{id}\")."
                )),
                Err(e) => ToolOutput::error(format!("could not start the command: {e}")),
            };
        }
        let timeout = input
            .timeout
            .map(Duration::from_secs)
            .unwrap_or(s.default_timeout)
            .clamp(Duration::from_secs(1), s.max_timeout);
        let capture = Capture::new(s.output_cap, spill_path(&s.spill_dir));
        let missing = confine.map(sandbox::Sandbox::protected_missing).unwrap_or_default();
        let mut running =
            match spawn(&input.command, ctx.cwd(), capture.clone(), &s.env, self.background.tag(), confine) {
                Ok(r) => r,
                Err(e) => {
                    return ToolOutput::error(format!(
                        "could not start the command in {}: {e}",
                        ctx.cwd().display()
                    ))
                }
            };
        let group = running.group;
        let ending = tokio::select! {
            status = running.child.wait() => match status {
                Ok(s) => Ending::from_status(s),
                Err(e) => Ending::Signalled(e.to_string()),
            },
            () = octo_exec::limit::past_room(group) => {
                running.terminate().await;
                Ending::TooManyProcesses
            }
            () = tokio::time::sleep(timeout) => {
                running.terminate().await;
                Ending::TimedOut(timeout)
            }
            () = ctx.cancel().cancelled() => {
                running.terminate().await;
                Ending::Cancelled
            }
        };
        running.finish_output(Duration::from_millis(250)).await;
        reaper::reap_soon();
        let mut text = capture.render();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        if text.is_empty() {
            text.push_str("(no output)\n");
        }
        text.push_str(&ending.describe());
        if let Some(note) = confine.filter(|_| ending.is_error()).and_then(|sb| denial_note(sb, &text)) {
            text.push('\n');
            text.push_str(&note);
        }
        if let Some(sb) = confine {
            let undone = sb.undo_created(&missing);
            if !undone.is_empty() {
                text.push('\n');
                text.push_str(&undone::note(&undone));
            }
            if let Some(gaps) = self.gaps_once(sb) {
                text.push('\n');
                text.push_str(&gaps);
            }
        }
        if ending.is_error() {
            ToolOutput::error(text)
        } else {
            ToolOutput::text(text)
        }
    }
}

/// The question before a command runs outside the sandbox: the model's reason, and the secret
/// place the command can then read, named.
pub fn outside_reason(why: &str, command: &str) -> String {
    match credentials::needed(command) {
        Some(place) => format!("runs outside the sandbox: {why}; there it can read {place}"),
        // A command can build its program's name at run time: every place is open to it.
        None => format!(
            "runs outside the sandbox: {why}; there it can read your secret places (~/.ssh, cloud and registry credentials)"
        ),
    }
}

/// The secret place a failed command's output names (as the user writes it: `~/.ssh`).
fn secret_named(sb: &sandbox::Sandbox, output: &str) -> Option<String> {
    let policy = sb.policy();
    let home = std::env::var_os("HOME").map(PathBuf::from);
    policy.secrets.iter().chain(policy.secret_places().iter()).find_map(|place| {
        let text = place.display().to_string();
        let short = home
            .as_ref()
            .and_then(|h| place.strip_prefix(h).ok())
            .map(|rest| format!("~/{}", rest.display()));
        let named = (text.len() > 1 && output.contains(&text))
            || short.as_ref().is_some_and(|s| output.contains(s.as_str()));
        named.then(|| short.unwrap_or(text))
    })
}

/// The note added to a failed command's output when the sandbox is the likely cause.
fn denial_note(sb: &sandbox::Sandbox, output: &str) -> Option<String> {
    if !sb.is_active() {
        return None;
    }
    if let Some(place) = secret_named(sb, output) {
        return Some(format!(
            "[This is the OS sandbox: {place} is one of your secret places, hidden from commands here (it reads as \
             missing, empty or refused). If the command really needs it, run it again with `sandbox: false` and a \
             `reason` naming it; the user will be asked.]"
        ));
    }
    if credentials::missing(output) {
        return Some(
            "[This may be the OS sandbox: your secret places (~/.ssh, cloud and registry credentials) are hidden \
             from commands here. If the command really needs one (a git push over SSH), run it again with \
             `sandbox: false` and a `reason` naming it; the user will be asked.]"
                .to_owned(),
        );
    }
    let what = match sandbox::denial_hint(output)? {
        sandbox::Denial::Network if !sb.policy().network => "commands here have no network",
        sandbox::Denial::Network => return None,
        sandbox::Denial::Write => match sb.policy().mode {
            sandbox::Mode::ReadOnly => "commands here may not write files",
            _ => "commands here may write only in the workspace (not its .git) and the temp dir",
        },
    };
    Some(format!(
        "[This may be the OS sandbox: {what}. If the command really needs more, run it again with `sandbox: false` \
         and a `reason`; the user will be asked.]"
    ))
}

/// Reads a background command's new output.
#[derive(Debug, Clone)]
pub struct TerminalOutput {
    background: Arc<BackgroundShells>,
    output_cap: usize,
}

impl TerminalOutput {
    /// Reads shells started by a [`Terminal`] sharing `background`.
    pub fn new(background: Arc<BackgroundShells>, output_cap: usize) -> Self {
        Self { background, output_cap }
    }
}

#[derive(Deserialize)]
struct IdInput {
    id: String,
}

#[async_trait]
impl ToolExecutor for TerminalOutput {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            "terminal_output",
            "New output of a background command since the last read, and whether it still runs.",
            json!({
                "type": "object",
                "properties": {"id": {"type": "string"}},
                "required": ["id"]
            }),
        )
    }

    // Reading advances the shell's read position, so two reads at once would race.
    fn meta(&self) -> ToolMeta {
        ToolMeta::reads()
            .concurrency_safe(false)
            .aliases(&["BashOutput"])
            .follows("terminal")
            .renamed_args(&[("id", "bash_id")])
    }

    async fn execute(&self, input: Value, _ctx: &ToolContext) -> ToolOutput {
        let input: IdInput = match parse_input("terminal_output", input) {
            Ok(i) => i,
            Err(e) => return e,
        };
        match self.background.read(&input.id, self.output_cap) {
            Ok(t) => ToolOutput::text(t),
            Err(e) => e.into_output(),
        }
    }
}

/// Stops a background command.
#[derive(Debug, Clone)]
pub struct KillShell {
    background: Arc<BackgroundShells>,
}

impl KillShell {
    /// Stops shells started by a [`Terminal`] sharing `background`.
    pub fn new(background: Arc<BackgroundShells>) -> Self {
        Self { background }
    }
}

#[async_trait]
impl ToolExecutor for KillShell {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            "kill_shell",
            "Stop a background command and what it started.",
            json!({
                "type": "object",
                "properties": {"id": {"type": "string"}},
                "required": ["id"]
            }),
        )
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::writes()
            .aliases(&["KillShell", "KillBash"])
            .follows("terminal")
            .renamed_args(&[("id", "shell_id")])
    }

    async fn execute(&self, input: Value, _ctx: &ToolContext) -> ToolOutput {
        let input: IdInput = match parse_input("kill_shell", input) {
            Ok(i) => i,
            Err(e) => return e,
        };
        match self.background.kill(&input.id) {
            Ok(t) => ToolOutput::text(t),
            Err(e) => e.into_output(),
        }
    }
}
