//! `terminal`, `terminal_output` and `kill_shell`: commands through the platform shell.

mod background;
mod capture;
mod deny;
mod process;

pub use background::BackgroundShells;
pub use capture::Capture;
pub use deny::{canonical_segment, command_segments, hard_denied};
pub use process::{kill_group, shell_command, spawn, Ending, Running};

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

/// Runs shell commands.
#[derive(Debug, Clone)]
pub struct Terminal {
    background: Arc<BackgroundShells>,
    spill_dir: PathBuf,
    output_cap: usize,
    default_timeout: Duration,
    max_timeout: Duration,
}

impl Terminal {
    /// A terminal tool sharing `background` with `terminal_output` and `kill_shell`.
    pub fn new(
        background: Arc<BackgroundShells>,
        spill_dir: PathBuf,
        output_cap: usize,
        default_timeout: Duration,
        max_timeout: Duration,
    ) -> Self {
        Self { background, spill_dir, output_cap, default_timeout, max_timeout }
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
}

/// Nanoseconds of the clock: a cheap suffix so names never collide with an earlier process's.
pub(crate) fn unique() -> u32 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0)
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
                "Run a command with {shell} in the workspace directory and return its output (stdout and stderr \
                 interleaved) and exit code. Default timeout {}s, at most {}s (`timeout`, in seconds); on \
                 timeout or cancellation the command and every process it started are killed. Output over \
                 {} bytes keeps its head and tail and the full text is saved to a file you can read. Use \
                 `run_in_background` for servers and watchers: you get an id for `terminal_output` and \
                 `kill_shell`. Commands run unattended (no TTY): avoid interactive programs and pass flags such \
                 as `--yes`/`-y`. Prefer `read_file`, `grep`, `glob` and `edit_file` over cat/grep/find/sed.",
                self.default_timeout.as_secs(),
                self.max_timeout.as_secs(),
                self.output_cap
            ),
            json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The command line."},
                    "timeout": {"type": "integer", "minimum": 1, "description": "Seconds before the command is killed."},
                    "run_in_background": {"type": "boolean", "description": "Start it and return at once with an id."},
                    "description": {"type": "string", "description": "A few words on what the command does, for the user."}
                },
                "required": ["command"],
                "additionalProperties": false
            }),
        )
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::writes().subject(Subject::command("command"))
    }

    async fn execute(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let input: Input = match parse_input("terminal", input) {
            Ok(i) => i,
            Err(e) => return e,
        };
        if input.command.trim().is_empty() {
            return ToolOutput::error("`command` is empty");
        }
        if let Some(why) = hard_denied(&input.command) {
            return ToolOutput::refused(
                format!("refused: this command would do {why}. octo never runs it, whatever the permission rules say."),
                ToolOutcome::HardDenied,
            );
        }
        if input.run_in_background {
            return match self.background.start(&input.command, ctx.cwd(), &self.spill_dir) {
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
            .unwrap_or(self.default_timeout)
            .clamp(Duration::from_secs(1), self.max_timeout);
        let capture = Capture::new(self.output_cap, spill_path(&self.spill_dir));
        let mut running = match spawn(&input.command, ctx.cwd(), capture.clone()) {
            Ok(r) => r,
            Err(e) => {
                return ToolOutput::error(format!(
                    "could not start the command in {}: {e}",
                    ctx.cwd().display()
                ))
            }
        };
        let ending = tokio::select! {
            status = running.child.wait() => match status {
                Ok(s) => Ending::from_status(s),
                Err(e) => Ending::Signalled(e.to_string()),
            },
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
        let mut text = capture.render();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        if text.is_empty() {
            text.push_str("(no output)\n");
        }
        text.push_str(&ending.describe());
        if ending.is_error() {
            ToolOutput::error(text)
        } else {
            ToolOutput::text(text)
        }
    }
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
            "Read what a background command (started with terminal's `run_in_background`) printed since the last \
             read, and whether it is still running.",
            json!({
                "type": "object",
                "properties": {"id": {"type": "string", "description": "The id terminal returned."}},
                "required": ["id"],
                "additionalProperties": false
            }),
        )
    }

    // Reading advances the shell's read position, so two reads at once would race.
    fn meta(&self) -> ToolMeta {
        ToolMeta::reads().concurrency_safe(false)
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
            "Stop a background command (and every process it started) by the id terminal returned.",
            json!({
                "type": "object",
                "properties": {"id": {"type": "string", "description": "The id terminal returned."}},
                "required": ["id"],
                "additionalProperties": false
            }),
        )
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::writes()
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
