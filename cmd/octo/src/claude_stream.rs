//! `--output-format stream-json` in Claude Code's shape, for programs written for
//! `claude -p --output-format stream-json`: a `system`/`init` line first (session, cwd, model,
//! tools, MCP servers, permission mode), then one `assistant` line per model message and one
//! `user` line per batch of tool results (content blocks as the Messages API writes them, tool
//! names and arguments as Claude Code names them), `stream_event` deltas with
//! `--include-partial-messages` (a `message_start` before each new reply, and again when a reply
//! broke off and starts over, so a reader keeps only the last), and the `result` object last.
//! Approval and question events (octo's, for `--permission-prompt stdio`) pass in octo's event
//! shape; octo's own event stream is `--output-format events`.

use octo_app::{Change, ContentBlock, Message, Role, Session};
use serde_json::{json, Value};

/// The Claude Code release the differential suite compares this output with.
pub const CLAUDE_CODE_VERSION: &str = "2.1.337";

/// What the `init` line says about the session.
pub struct Init {
    /// The workspace.
    pub cwd: String,
    /// `endpoint:model`.
    pub model: String,
    /// The tools the model is offered, in Claude Code's names where it has them.
    pub tools: Vec<String>,
    /// Each MCP server and its state.
    pub mcp_servers: Vec<Value>,
    /// The permission mode in Claude Code's words.
    pub permission_mode: String,
    /// What `/name` runs: commands and skills a user may invoke.
    pub slash_commands: Vec<String>,
    /// The skills.
    pub skills: Vec<String>,
    /// The sub-agent types.
    pub agents: Vec<String>,
    /// The plugins in use: `name`, `path` (its folder) and `source` (`name@marketplace` for
    /// Claude Code's installs), as Claude Code lists them.
    pub plugins: Vec<Value>,
}

impl Init {
    /// What `session` is about to run with.
    pub fn of(session: &Session) -> Self {
        let status = session.status();
        let tools = session
            .tools()
            .names()
            .iter()
            .map(|t| octo_app::claude_tool_name(t).unwrap_or_else(|| t.clone()))
            .collect();
        let mcp_servers =
            session.servers().mcp().iter().map(|s| json!({"name": s.name, "status": s.state})).collect();
        let permission_mode = match status.mode {
            octo_app::Mode::Default => "default",
            octo_app::Mode::AcceptEdits => "acceptEdits",
            octo_app::Mode::Plan => "plan",
            octo_app::Mode::Auto => "bypassPermissions",
        }
        .to_owned();
        let catalog = session.skills().catalog();
        let slash_commands = catalog.iter().filter(|s| s.user_invocable).map(|s| s.name.clone()).collect();
        let skills = catalog
            .iter()
            .filter(|s| s.kind == octo_app::skill_files::Kind::Skill)
            .map(|s| s.name.clone())
            .collect();
        Self {
            cwd: session.workspace().display().to_string(),
            model: status.model,
            tools,
            mcp_servers,
            permission_mode,
            slash_commands,
            skills,
            agents: session.tools().agent_types(),
            plugins: session.config().map_or_else(Vec::new, |c| {
                c.plugins
                    .iter()
                    .map(|p| json!({"name": p.name, "path": p.root.display().to_string(), "source": p.id}))
                    .collect()
            }),
        }
    }
}

/// Turns a session's events into Claude Code's stream-json lines.
pub struct ClaudeStream {
    init: Option<Init>,
    partial: bool,
    messages: u64,
    /// The model's id, for each assistant message.
    model: String,
    /// The usage of the last model request, for the assistant message it produced.
    usage: octo_app::Usage,
    /// Whether a text block's `content_block_start` was sent and its stop was not.
    open_block: bool,
}

impl ClaudeStream {
    /// A stream that opens with `init`; `partial` adds the `stream_event` deltas.
    pub fn new(init: Init, partial: bool) -> Self {
        let model = init.model.split_once(':').map_or(init.model.as_str(), |(_, m)| m).to_owned();
        Self {
            init: Some(init),
            partial,
            messages: 0,
            model,
            usage: octo_app::Usage::default(),
            open_block: false,
        }
    }

    /// The lines for one change of the turn (none for most).
    pub fn lines(&mut self, change: &Change<'_>, session_id: &str) -> Vec<Value> {
        let mut out = Vec::new();
        if let Some(init) = self.init.take() {
            out.push(json!({
                "type": "system",
                "subtype": "init",
                "session_id": session_id,
                "cwd": init.cwd,
                "model": init.model,
                "tools": init.tools,
                "mcp_servers": init.mcp_servers,
                "permissionMode": init.permission_mode,
                "slash_commands": init.slash_commands,
                "skills": init.skills,
                "agents": init.agents,
                "plugins": init.plugins,
                "apiKeySource": "none",
                // The Claude Code release whose output this follows (the differential suite
                // runs it), and octo's own.
                "claude_code_version": CLAUDE_CODE_VERSION,
                "octo_version": env!("CARGO_PKG_VERSION"),
                "output_style": "default",
                "uuid": uuid(),
            }));
        }
        let partial = |event: Value| json!({"type": "stream_event", "event": event, "parent_tool_use_id": null, "session_id": session_id, "uuid": uuid()});
        match change {
            Change::Usage(u) => self.usage = *u,
            Change::Committed(messages) => {
                for m in *messages {
                    if let Some(line) = self.message(m, session_id) {
                        out.push(line);
                        if self.partial && m.role == Role::Assistant {
                            out.extend(self.message_end(m).into_iter().map(partial));
                        }
                    }
                }
            }
            Change::Request { continues: false } | Change::AnswerRestarted { .. } if self.partial => {
                self.open_block = false;
                out.push(partial(json!({"type": "message_start", "message": {"type": "message", "role": "assistant", "content": []}})));
            }
            Change::AnswerDelta(text) if self.partial => {
                if !std::mem::replace(&mut self.open_block, true) {
                    out.push(partial(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})));
                }
                out.push(partial(
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
                ));
            }
            Change::Thinking(text) if self.partial => out.push(partial(
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": text}}),
            )),
            Change::Approval { id, request } => {
                out.push(json!({"type": "approval_required", "approval_id": id, "request": request}));
            }
            Change::ApprovalResolved { id, decision } => {
                out.push(json!({"type": "approval_resolved", "approval_id": id, "decision": decision}));
            }
            Change::Question { id, call, question, options } => {
                let mut q = json!({"type": "question_asked", "question_id": id, "tool_use_id": call, "question": question});
                if !options.is_empty() {
                    q["options"] = json!(options);
                }
                out.push(q);
            }
            Change::QuestionAnswered { id, answer } => {
                out.push(json!({"type": "question_answered", "question_id": id, "answer": answer}));
            }
            _ => {}
        }
        out
    }

    /// The events that close a streamed message once it is committed, as the Messages API ends
    /// one: the open text block's stop, `message_delta` (why it stopped, output tokens) and
    /// `message_stop`.
    fn message_end(&mut self, m: &Message) -> Vec<Value> {
        let mut out = Vec::new();
        if std::mem::take(&mut self.open_block) {
            out.push(json!({"type": "content_block_stop", "index": 0}));
        }
        let tools = m.content.iter().any(|b| matches!(b, ContentBlock::ToolUse { .. }));
        let stop_reason = if tools { "tool_use" } else { "end_turn" };
        out.push(json!({
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": self.usage.output_tokens},
        }));
        out.push(json!({"type": "message_stop"}));
        out
    }

    /// An `assistant` or `user` line for a committed message; the user's own prompt is not
    /// echoed (as Claude Code does not).
    fn message(&mut self, m: &Message, session_id: &str) -> Option<Value> {
        self.messages += 1;
        let content: Vec<Value> = m.content.iter().filter_map(block).collect();
        match m.role {
            Role::Assistant if !content.is_empty() => Some(json!({
                "type": "assistant",
                "message": {
                    "id": format!("msg_octo_{}", self.messages),
                    "type": "message",
                    "role": "assistant",
                    "content": content,
                    "stop_reason": null,
                    "stop_sequence": null,
                    "model": self.model,
                    "usage": {
                        "input_tokens": self.usage.input_tokens,
                        "output_tokens": self.usage.output_tokens,
                        "cache_read_input_tokens": self.usage.cache_read_tokens,
                        "cache_creation_input_tokens": self.usage.cache_write_tokens,
                    },
                },
                "parent_tool_use_id": null,
                "session_id": session_id,
                "uuid": uuid(),
            })),
            Role::User if m.content.iter().any(|b| matches!(b, ContentBlock::ToolResult { .. })) => {
                Some(json!({
                    "type": "user",
                    "message": {"role": "user", "content": content},
                    "parent_tool_use_id": null,
                    "session_id": session_id,
                    "uuid": uuid(),
                }))
            }
            _ => None,
        }
    }
}

/// A fresh id in the UUID text form Claude Code gives each line (random, version 4; ids only,
/// not a secret).
pub fn uuid() -> String {
    use std::hash::{BuildHasher, Hasher};
    let half = |salt: u64| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(salt);
        h.finish()
    };
    let (a, b) = (half(1), half(2));
    let b = (b & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000;
    let a = (a & 0xffff_ffff_ffff_0fff) | 0x4000;
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

/// One content block as the Messages API writes it; tool calls under Claude Code's names.
fn block(b: &ContentBlock) -> Option<Value> {
    Some(match b {
        ContentBlock::Text { text } => json!({"type": "text", "text": text}),
        ContentBlock::Thinking { thinking, signature } => {
            json!({"type": "thinking", "thinking": thinking, "signature": signature.clone().unwrap_or_default()})
        }
        ContentBlock::ToolUse { id, name, input } => {
            let (name, input) =
                octo_app::claude_tool_call(name, input).unwrap_or_else(|| (name.clone(), input.clone()));
            json!({"type": "tool_use", "id": id, "name": name, "input": input})
        }
        ContentBlock::ToolResult { tool_use_id, content, is_error } => {
            let text: String = content
                .iter()
                .filter_map(|p| match p {
                    octo_app::ToolResultPart::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n");
            json!({"type": "tool_result", "tool_use_id": tool_use_id, "content": text, "is_error": is_error})
        }
        _ => return None,
    })
}
