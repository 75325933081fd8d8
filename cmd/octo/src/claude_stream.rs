//! `--output-format stream-json` in Claude Code's shape, for programs written for
//! `claude -p --output-format stream-json`: a `system`/`init` line first (session, cwd, model,
//! tools, MCP servers, permission mode, plugins and the plugins that failed to load), then one
//! `assistant` line per content block of a model message and one `user` line per batch of tool
//! results (content blocks as the Messages API writes them, tool names and arguments as Claude
//! Code names them), `stream_event`s with `--include-partial-messages` (a `requesting` status and
//! a `message_start` before each new reply, and again when a reply broke off and starts over, so a
//! reader keeps only the last; each block's start, deltas and stop, a tool call's input as one
//! `input_json_delta`), and the `result` object last.
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
    /// The plugin folders that could not be used: `plugin`, `type`, `message`, `path`.
    pub plugin_errors: Vec<Value>,
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
        let mcp_servers = session
            .servers()
            .mcp()
            .iter()
            .map(|s| {
                // Claude Code's words for the states scripts check.
                let status = match s.state.as_str() {
                    "ready" => "connected",
                    "starting" => "pending",
                    "exited" => "failed",
                    other => other,
                };
                json!({"name": s.name, "status": status})
            })
            .collect();
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
            plugins: session.config().map_or_else(Vec::new, |c| c.plugins.iter().map(plugin).collect()),
            plugin_errors: session.config().map_or_else(Vec::new, |c| {
                c.plugin_errors
                    .iter()
                    .map(|e| json!({"plugin": e.plugin, "type": "generic-error", "message": e.message, "path": e.path.display().to_string()}))
                    .collect()
            }),
        }
    }
}

/// A plugin in use as Claude Code lists it: a `--plugin-dir` folder's source is `name@inline`.
fn plugin(p: &octo_app::claude_plugins::InstalledPlugin) -> Value {
    let source = match p.from {
        octo_app::claude_plugins::PluginFrom::Dir => format!("{}@inline", p.name),
        _ => p.id.clone(),
    };
    json!({"name": p.name, "path": p.root.display().to_string(), "source": source})
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
    /// The kind of the content block streaming now (`text`, `thinking`), if one is.
    open: Option<&'static str>,
    /// How many content blocks of the streaming message were started.
    opened: usize,
}

impl ClaudeStream {
    /// A stream whose turns each open with an `init` line ([`ClaudeStream::next_turn`]);
    /// `partial` adds the `stream_event` deltas.
    pub fn new(partial: bool) -> Self {
        Self {
            init: None,
            partial,
            messages: 0,
            model: String::new(),
            usage: octo_app::Usage::default(),
            open: None,
            opened: 0,
        }
    }

    /// The turn starting opens with `init` (taken as it starts, so the servers that started and
    /// their tools are in it), as Claude Code opens each turn of a run.
    pub fn next_turn(&mut self, init: Init) {
        self.model = init.model.split_once(':').map_or(init.model.as_str(), |(_, m)| m).to_owned();
        self.init = Some(init);
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
                "plugin_errors": init.plugin_errors,
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
                    out.extend(self.committed(m, session_id));
                }
            }
            Change::Request { continues: false } | Change::AnswerRestarted { .. } if self.partial => {
                (self.open, self.opened) = (None, 0);
                if matches!(change, Change::Request { .. }) {
                    out.push(json!({"type": "system", "subtype": "status", "status": "requesting", "session_id": session_id, "uuid": uuid()}));
                }
                out.push(partial(json!({"type": "message_start", "message": {"type": "message", "role": "assistant", "content": []}})));
            }
            Change::AnswerDelta(text) if self.partial => {
                out.extend(self.open_block("text").map(partial));
                out.push(partial(delta(self.opened - 1, "text", text)));
            }
            Change::Thinking(text) if self.partial => {
                out.extend(self.open_block("thinking").map(partial));
                out.push(partial(delta(self.opened - 1, "thinking", text)));
            }
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

    /// `content_block_start` for a streamed block of `kind`, unless one of that kind is open.
    fn open_block(&mut self, kind: &'static str) -> Option<Value> {
        if self.open == Some(kind) {
            return None;
        }
        self.open = Some(kind);
        self.opened += 1;
        let empty = if kind == "thinking" {
            json!({"type": kind, "thinking": ""})
        } else {
            json!({"type": kind, "text": ""})
        };
        Some(json!({"type": "content_block_start", "index": self.opened - 1, "content_block": empty}))
    }

    /// The lines for a committed message, as Claude Code writes them: one `assistant` line per
    /// content block (sharing the message's id), and with partial messages each block's events
    /// around it (a block not streamed as it came, such as a tool call, whole at once), then
    /// `message_delta` and `message_stop`; one `user` line for a batch of tool results. The
    /// user's own prompt is not echoed (as Claude Code does not).
    fn committed(&mut self, m: &Message, session_id: &str) -> Vec<Value> {
        let partial = |event: Value| json!({"type": "stream_event", "event": event, "parent_tool_use_id": null, "session_id": session_id, "uuid": uuid()});
        self.messages += 1;
        let mut out = Vec::new();
        match m.role {
            Role::Assistant => {
                let blocks: Vec<Value> = m.content.iter().filter_map(block).collect();
                for (k, b) in blocks.iter().enumerate() {
                    if self.partial && k >= self.opened {
                        out.extend(whole_block(k, b).into_iter().map(partial));
                    }
                    out.push(self.assistant_line(b, session_id));
                    if self.partial {
                        out.push(partial(json!({"type": "content_block_stop", "index": k})));
                    }
                }
                if self.partial && !blocks.is_empty() {
                    let tools = blocks.iter().any(|b| b["type"] == "tool_use");
                    let stop_reason = if tools { "tool_use" } else { "end_turn" };
                    out.push(partial(json!({
                        "type": "message_delta",
                        "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                        "usage": {"output_tokens": self.usage.output_tokens},
                    })));
                    out.push(partial(json!({"type": "message_stop"})));
                }
                (self.open, self.opened) = (None, 0);
            }
            Role::User if m.content.iter().any(|b| matches!(b, ContentBlock::ToolResult { .. })) => {
                let content: Vec<Value> = m.content.iter().filter_map(block).collect();
                out.push(json!({
                    "type": "user",
                    "message": {"role": "user", "content": content},
                    "parent_tool_use_id": null,
                    "session_id": session_id,
                    "uuid": uuid(),
                }));
            }
            _ => {}
        }
        out
    }

    /// One content block of an assistant message as its own `assistant` line.
    fn assistant_line(&self, b: &Value, session_id: &str) -> Value {
        json!({
            "type": "assistant",
            "message": {
                "id": format!("msg_octo_{}", self.messages),
                "type": "message",
                "role": "assistant",
                "content": [b],
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
        })
    }
}

/// A `content_block_delta` of `kind` (`text`, `thinking`) at `index`.
fn delta(index: usize, kind: &str, text: &str) -> Value {
    let d = if kind == "thinking" {
        json!({"type": "thinking_delta", "thinking": text})
    } else {
        json!({"type": "text_delta", "text": text})
    };
    json!({"type": "content_block_delta", "index": index, "delta": d})
}

/// The start and one delta of a block that was not streamed as it came: a tool call's input as
/// one `input_json_delta` (its arguments in Claude Code's names), a text or thinking block whole.
fn whole_block(index: usize, b: &Value) -> Vec<Value> {
    let start = |block: Value| json!({"type": "content_block_start", "index": index, "content_block": block});
    match b["type"].as_str() {
        Some("tool_use") => vec![
            start(json!({"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}})),
            json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": b["input"].to_string()}}),
        ],
        Some("thinking") => vec![
            start(json!({"type": "thinking", "thinking": ""})),
            delta(index, "thinking", b["thinking"].as_str().unwrap_or_default()),
        ],
        _ => vec![
            start(json!({"type": "text", "text": ""})),
            delta(index, "text", b["text"].as_str().unwrap_or_default()),
        ],
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
