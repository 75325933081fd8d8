//! The hooks of a session at work: each event's hooks run in parallel with the event's JSON, and
//! their exit codes and JSON answers become decisions, following Claude Code's protocol: exit 0
//! goes on (stdout is context where the event takes it), exit 2 blocks with stderr as the reason,
//! any other exit is an error shown to the user that blocks nothing; a JSON object on stdout may
//! decide instead (`decision`/`reason`, `hookSpecificOutput.permissionDecision`,
//! `additionalContext`, `updatedInput`, `continue: false` with `stopReason`).

use crate::answer::Answer;
use crate::config::{Event, HookSet};
use crate::run::{Ran, Runner};
use octo_agent::{AfterTool, BeforeTool, ToolOutput};
use serde_json::{json, Map, Value};
use std::path::PathBuf;
use std::sync::Arc;

/// What hooks know of the session.
#[derive(Debug, Clone, Default)]
pub struct SessionInfo {
    /// Its id, once it has one.
    pub id: Option<String>,
    /// Its saved conversation, once saved.
    pub transcript: Option<PathBuf>,
    /// The permission mode in Claude Code's words (`default`, `acceptEdits`, `plan`,
    /// `bypassPermissions`).
    pub permission_mode: Option<String>,
    /// An id of the user's prompt being worked on (the same for every hook of that prompt).
    pub prompt_id: Option<String>,
    /// The reasoning effort (`low`, `medium` …).
    pub effort: Option<String>,
}

/// Other names a tool is matched by.
pub type Aliases = Arc<dyn Fn(&str) -> Vec<String> + Send + Sync>;

/// What the application gives the hooks.
#[derive(Clone)]
pub struct Context {
    /// The session's id and transcript, as they are now.
    pub session: Arc<dyn Fn() -> SessionInfo + Send + Sync>,
    /// Other names a tool is matched by (Claude Code's `Bash` for `terminal`).
    pub aliases: Aliases,
    /// Shows the user a hook's error (it blocks nothing).
    pub notice: Arc<dyn Fn(String) + Send + Sync>,
    /// How hooks see calls: Claude Code's tool names and argument names, or octo's own.
    pub shape: Shape,
    /// Asked before each hook runs: `Err` (why) keeps it from running — it then blocks nothing
    /// and the user sees why (the application asks the user first when a hook would run a
    /// file changed in this session).
    pub guard: Option<Guard>,
}

/// Whether a hook may run now: `(event, command)` → `Ok` with what to check once it ran, or
/// `Err` with why not.
pub type Guard = Arc<
    dyn Fn(Event, String) -> futures_util::future::BoxFuture<'static, Result<Option<AfterRun>, String>>
        + Send
        + Sync,
>;

/// Checked once the hook ran: `Some(why)` when what it ran changed while it ran (then its answer
/// is not used: it blocks where a block is the safe side, and is an error elsewhere).
pub type AfterRun = Box<dyn FnOnce() -> Option<String> + Send>;

/// A call as the hooks see it: `(tool_name, tool_input)`; `None` keeps octo's.
pub type ShapeCall = Arc<dyn Fn(&str, &Value) -> Option<(String, Value)> + Send + Sync>;
/// A hook's `updatedInput` as octo's arguments for the tool.
pub type ShapeInput = Arc<dyn Fn(&str, Value) -> Value + Send + Sync>;
/// `tool_response` for a finished call (tool, its input, its text, whether it failed).
pub type ShapeResponse = Arc<dyn Fn(&str, &Value, &str, bool) -> Value + Send + Sync>;

/// How a tool call is shown to hooks, and a hook's rewritten input read back.
#[derive(Clone)]
pub struct Shape {
    /// A call as the hooks see it.
    pub call: ShapeCall,
    /// A hook's `updatedInput` read back.
    pub input: ShapeInput,
    /// `tool_response` for a finished call.
    pub response: ShapeResponse,
}

impl Shape {
    /// octo's own names and arguments, unchanged.
    pub fn native() -> Self {
        Self {
            call: Arc::new(|_, _| None),
            input: Arc::new(|_, v| v),
            response: Arc::new(|_, _, out, err| json!({"output": out, "is_error": err})),
        }
    }
}

impl Default for Shape {
    fn default() -> Self {
        Self::native()
    }
}

/// The result of the UserPromptSubmit hooks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptDecision {
    /// Send it, with this context added.
    Proceed(Option<String>),
    /// Refuse it; the user sees why.
    Block(String),
}

/// A session's hooks.
#[derive(Clone)]
pub struct Hooks {
    set: HookSet,
    pub(crate) runner: Runner,
    pub(crate) ctx: Context,
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks").field("set", &self.set).finish()
    }
}

impl Hooks {
    /// The hooks of `set`, run by `runner`.
    pub fn new(set: HookSet, runner: Runner, ctx: Context) -> Self {
        Self { set, runner, ctx }
    }

    /// The hooks configured.
    pub fn set(&self) -> &HookSet {
        &self.set
    }

    /// Kills what the hooks left running ([`Runner::stop_leftovers`]).
    pub fn stop_leftovers(&self) {
        self.runner.stop_leftovers();
    }

    /// Whether `event` has hooks.
    pub fn has(&self, event: Event) -> bool {
        self.set.has(event)
    }

    /// Runs the hooks of `event` that select `tool` (every hook, without one), in parallel.
    async fn fire(&self, event: Event, tool: Option<&str>, fields: Value) -> Vec<Answer> {
        let mut names: Vec<String> = Vec::new();
        if let Some(t) = tool {
            names.push(t.to_owned());
            names.extend((self.ctx.aliases)(t));
        }
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut hooks = self.set.matching(event, &refs);
        // `if` is for tool events: those whose JSON names the call.
        if fields.get("tool_name").is_some() {
            let call = fields.get("tool_input").cloned().unwrap_or(Value::Null);
            let mut shown = refs.clone();
            if let Some(n) = fields.get("tool_name").and_then(Value::as_str) {
                shown.push(n);
            }
            hooks.retain(|h| {
                h.condition.as_deref().is_none_or(|c| crate::condition::applies(c, &shown, &call))
            });
        }
        if hooks.is_empty() {
            return Vec::new();
        }
        settle(event).await;
        let info = (self.ctx.session)();
        let transcript = info.transcript.map(|p| self.runner.transcript_path(&p));
        let mut input = json!({
            "session_id": info.id.unwrap_or_default(),
            "transcript_path": transcript.map(|p| p.display().to_string()).unwrap_or_default(),
            "cwd": self.runner.cwd.display().to_string(),
            "hook_event_name": event.as_str(),
        });
        for (key, value) in [("permission_mode", info.permission_mode), ("prompt_id", info.prompt_id)] {
            if let Some(v) = value {
                input[key] = json!(v);
            }
        }
        if let Some(level) = info.effort {
            input["effort"] = json!({"level": level});
        }
        if let (Some(obj), Value::Object(more)) = (input.as_object_mut(), fields) {
            obj.extend(more);
        }
        let (background, hooks): (Vec<_>, Vec<_>) = hooks.into_iter().partition(|h| h.background);
        for hook in background {
            self.in_background(event, hook, input.clone());
        }
        let runs = hooks.iter().map(|h| self.guarded_run(event, h, &input));
        let results = futures_util::future::join_all(runs).await;
        results
            .into_iter()
            .map(|ran| {
                if let Some(p) = &ran.problem {
                    (self.ctx.notice)(format!("the {} hook `{}` {p}", event.as_str(), ran.command));
                } else if !matches!(ran.code, Some(0 | 2)) {
                    let first = ran.stderr.lines().next().unwrap_or("").trim().to_owned();
                    (self.ctx.notice)(format!(
                        "the {} hook `{}` failed (exit {}){}",
                        event.as_str(),
                        ran.command,
                        ran.code.map_or_else(|| "?".to_owned(), |c| c.to_string()),
                        if first.is_empty() { String::new() } else { format!(": {first}") }
                    ));
                }
                let json = (ran.code == Some(0))
                    .then(|| ran.stdout.trim())
                    .filter(|t| t.starts_with('{'))
                    .and_then(|t| serde_json::from_str::<Map<String, Value>>(t).ok());
                // Claude Code's `systemMessage`: a message for the user, whatever was decided.
                let message = json.as_ref().and_then(|j| j.get("systemMessage")).and_then(Value::as_str);
                if let Some(m) = message.map(str::trim).filter(|m| !m.is_empty()) {
                    (self.ctx.notice)(format!("{} hook: {m}", event.as_str()));
                }
                Answer { ran, json }
            })
            .collect()
    }

    /// What the guard says of `hook` now: `Ok` with the check for after its run, or what not
    /// running it amounts to.
    pub(crate) async fn guard(
        &self,
        event: Event,
        hook: &crate::config::Hook,
    ) -> Result<Option<crate::AfterRun>, Ran> {
        let Some(guard) = &self.ctx.guard else { return Ok(None) };
        guard(event, hook.command.clone()).await.map_err(|why| Ran {
            command: hook.command.clone(),
            code: None,
            stdout: String::new(),
            stderr: String::new(),
            problem: Some(why),
        })
    }

    /// Runs one hook once the guard lets it. A sandboxed hook that exits 2 on what reads as a
    /// refusal of the sandbox (a denied read or write) failed; it did not decide to block, so it
    /// is reported as an error that blocks nothing.
    async fn guarded_run(&self, event: Event, hook: &crate::config::Hook, input: &Value) -> Ran {
        let after = match self.guard(event, hook).await {
            Ok(after) => after,
            Err(ran) => return ran,
        };
        let mut ran = self.runner.run_mirrored(hook, input).await;
        if let Some(why) = after.and_then(|check| check()) {
            ran.stdout.clear();
            if matches!(event, Event::PreToolUse | Event::UserPromptSubmit) {
                ran.code = Some(2);
                ran.stderr = format!("the {} hook `{}` {why}", event.as_str(), hook.command);
            } else {
                ran.code = None;
                ran.problem = Some(why);
            }
            return ran;
        }
        // The text the model controls (the call's input) cannot make a block read as a refusal.
        let text = input.to_string();
        let steered = REFUSALS.iter().chain(&["***"]).any(|m| text.contains(m));
        if self.runner.sandboxed && ran.code == Some(2) && !steered && refused_by_sandbox(&ran.stderr) {
            let first = ran.stderr.lines().rfind(|l| refusal(l)).unwrap_or("").trim().to_owned();
            ran.code = None;
            ran.problem = Some(format!(
                "failed in the sandbox (exit 2: {first}) and blocks nothing; a hook that needs more than the workspace can run unconfined with `sandbox_hooks = false` in your user config"
            ));
        }
        ran
    }

    /// A call as the hooks see it: `tool_name`, `tool_input` (a relative `file_path` or
    /// `notebook_path` made absolute, as Claude Code gives it) and `tool_use_id` when known.
    fn call_fields(&self, id: &str, tool: &str, input: &Value) -> Value {
        let (name, mut shown) =
            (self.ctx.shape.call)(tool, input).unwrap_or_else(|| (tool.to_owned(), input.clone()));
        for key in ["file_path", "notebook_path"] {
            if let Some(Value::String(p)) = shown.get_mut(key) {
                if !p.is_empty() && !std::path::Path::new(p.as_str()).is_absolute() {
                    *p = self.runner.cwd.join(p.as_str()).display().to_string();
                }
            }
        }
        let mut fields = json!({"tool_name": name, "tool_input": shown});
        if !id.is_empty() {
            fields["tool_use_id"] = json!(id);
        }
        fields
    }

    /// PreToolUse: deny beats ask beats allow; the first rewritten input is used.
    pub async fn pre_tool(&self, tool: &str, input: &Value) -> BeforeTool {
        self.pre_tool_call("", tool, input).await
    }

    /// [`Hooks::pre_tool`] for the call `id`.
    pub async fn pre_tool_call(&self, id: &str, tool: &str, input: &Value) -> BeforeTool {
        if !self.has(Event::PreToolUse) {
            return BeforeTool::proceed();
        }
        let answers = self.fire(Event::PreToolUse, Some(tool), self.call_fields(id, tool, input)).await;
        let mut out = BeforeTool::proceed();
        let mut rank = 0;
        for a in &answers {
            let decision = a
                .specific("permissionDecision")
                .and_then(Value::as_str)
                .or_else(|| a.field("decision").and_then(Value::as_str))
                .unwrap_or("");
            let why = a
                .specific("permissionDecisionReason")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .or_else(|| a.text("reason"));
            let (r, verdict) = if a.blocked() {
                (3, BeforeTool::deny(a.reason(Event::PreToolUse)))
            } else if a.stops() {
                (3, BeforeTool::deny(a.text("stopReason").unwrap_or_else(|| a.reason(Event::PreToolUse))))
            } else {
                match decision {
                    "deny" | "block" => {
                        (3, BeforeTool::deny(why.unwrap_or_else(|| a.reason(Event::PreToolUse))))
                    }
                    "ask" => (2, BeforeTool::ask(why)),
                    "allow" | "approve" => (1, BeforeTool::allow()),
                    _ => (0, BeforeTool::proceed()),
                }
            };
            if r > rank {
                rank = r;
                out.verdict = verdict.verdict;
            }
            if out.input.is_none() {
                out.input = a
                    .specific("updatedInput")
                    .filter(|v| v.is_object())
                    .map(|v| (self.ctx.shape.input)(tool, v.clone()));
            }
        }
        out
    }

    /// PostToolUse: a block or context is added to what the model sees.
    pub async fn post_tool(&self, tool: &str, input: &Value, output: &ToolOutput) -> AfterTool {
        self.post_tool_call("", tool, input, output).await
    }

    /// [`Hooks::post_tool`] for the call `id`.
    pub async fn post_tool_call(
        &self,
        id: &str,
        tool: &str,
        input: &Value,
        output: &ToolOutput,
    ) -> AfterTool {
        if !self.has(Event::PostToolUse) {
            return AfterTool::Keep;
        }
        let response = (self.ctx.shape.response)(tool, input, &output.text_content(), output.is_error);
        let mut fields = self.call_fields(id, tool, input);
        fields["tool_response"] = response;
        let answers = self.fire(Event::PostToolUse, Some(tool), fields).await;
        let mut added = Vec::new();
        for a in &answers {
            if a.blocked() {
                added.push(a.reason(Event::PostToolUse));
            } else if a.field("decision").and_then(Value::as_str) == Some("block") {
                added.push(a.text("reason").unwrap_or_else(|| a.reason(Event::PostToolUse)));
            } else if let Some(c) = a.specific("additionalContext").and_then(Value::as_str) {
                added.push(c.to_owned());
            }
        }
        if added.is_empty() {
            AfterTool::Keep
        } else {
            AfterTool::AddContext(format!("[PostToolUse hook] {}", added.join("\n")))
        }
    }

    /// UserPromptSubmit.
    pub async fn user_prompt(&self, prompt: &str) -> PromptDecision {
        let answers = self.fire(Event::UserPromptSubmit, None, json!({"prompt": prompt})).await;
        let mut context = Vec::new();
        for a in &answers {
            if a.blocked() {
                return PromptDecision::Block(a.reason(Event::UserPromptSubmit));
            }
            if a.field("decision").and_then(Value::as_str) == Some("block") || a.stops() {
                return PromptDecision::Block(
                    a.text("reason")
                        .or_else(|| a.text("stopReason"))
                        .unwrap_or_else(|| a.reason(Event::UserPromptSubmit)),
                );
            }
            context.extend(a.context());
        }
        PromptDecision::Proceed((!context.is_empty()).then(|| context.join("\n")))
    }

    /// Stop or SubagentStop: a message that makes the model go on, or `None` to let it end.
    pub async fn stop(&self, event: Event, answer: &str, active: bool) -> Option<String> {
        let answers =
            self.fire(event, None, json!({"stop_hook_active": active, "last_message": answer})).await;
        for a in &answers {
            if a.stops() {
                return None;
            }
            if a.blocked() {
                return Some(a.reason(event));
            }
            if a.field("decision").and_then(Value::as_str) == Some("block") {
                return Some(a.text("reason").unwrap_or_else(|| a.reason(event)));
            }
        }
        None
    }

    /// PreCompact: instructions for the summary (`trigger` is `manual` or `auto`).
    pub async fn pre_compact(&self, trigger: &str) -> Option<String> {
        let answers = self
            .fire(Event::PreCompact, Some(trigger), json!({"trigger": trigger, "custom_instructions": ""}))
            .await;
        let text: Vec<String> = answers.iter().filter_map(Answer::context).collect();
        (!text.is_empty()).then(|| text.join("\n"))
    }

    /// SessionStart (`source`: `startup`, `resume`, `clear`): context for the model.
    pub async fn session_start(&self, source: &str) -> Option<String> {
        let answers = self.fire(Event::SessionStart, Some(source), json!({"source": source})).await;
        let text: Vec<String> = answers.iter().filter_map(Answer::context).collect();
        (!text.is_empty()).then(|| text.join("\n"))
    }

    /// SessionEnd.
    pub async fn session_end(&self, reason: &str) {
        self.fire(Event::SessionEnd, None, json!({"reason": reason})).await;
    }

    /// Notification: an approval or question is waiting.
    pub async fn notification(&self, message: &str) {
        self.fire(Event::Notification, None, json!({"message": message})).await;
    }
}

/// How the kernel's refusals of a read, write or operation read.
const REFUSALS: &[&str] =
    &["Permission denied", "Operation not permitted", "Read-only file system", "EACCES", "EPERM", "EROFS"];

/// Whether a line reads as the kernel refusing a read, write or operation.
fn refusal(line: &str) -> bool {
    REFUSALS.iter().any(|m| line.contains(m))
}

/// Whether a line is `make`'s own report of a failed recipe (`make: *** [fmt] Error 1`,
/// `make[2]: *** …`).
fn make_failed(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("make").or_else(|| line.strip_prefix("gmake")) else { return false };
    let rest = match rest.strip_prefix('[') {
        Some(r) => match r.split_once(']') {
            Some((n, after)) if n.chars().all(|c| c.is_ascii_digit()) => after,
            _ => return false,
        },
        None => rest,
    };
    rest.starts_with(": *** ")
}

/// Whether a hook's error output reads as the sandbox refusing it: a refusal, and nothing after
/// it but `make`'s own report of the failure (a hook that says why it blocks after a refused
/// write still blocks).
fn refused_by_sandbox(stderr: &str) -> bool {
    let lines: Vec<&str> = stderr.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let Some(at) = lines.iter().rposition(|l| refusal(l)) else { return false };
    lines[at + 1..].iter().all(|l| make_failed(l))
}

/// Before a Stop hook: the answer was just committed; the session's writer (another task) is
/// let run so that the transcript holds it when the hook reads it.
async fn settle(event: Event) {
    if matches!(event, Event::Stop | Event::SubagentStop) {
        for _ in 0..8 {
            tokio::task::yield_now().await;
        }
    }
}
