//! What a shared command answers: a typed [`Reply`] each front end renders its own way, and
//! [`Reply::lines`], the plain text every front end may fall back on (the REPL prints it, a chat
//! sends it, an editor shows it).

use super::spec::CommandSpec;
use crate::permissions::Mode;
use crate::session::{DreamPlan, HookInfo, RewindPlan, Status};
use octo_session::Summary;
use std::path::PathBuf;
use std::sync::Arc;

/// The answer to a shared command.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Reply {
    /// `/help`: the shared commands (a front end lists those it offers, and its own).
    Help(Vec<&'static CommandSpec>),
    /// `/status`.
    Status(Box<StatusReport>),
    /// `/model`: the model now; `switched` when it was just changed.
    Model {
        /// `endpoint:model`.
        label: String,
        /// Whether the command switched to it.
        switched: bool,
    },
    /// `/mode`, `/build`: the permission mode now.
    Mode(Mode),
    /// `/plan`.
    Plan,
    /// `/permissions`: the mode and the rules (as the config would write them).
    Permissions {
        /// The mode.
        mode: Mode,
        /// The rules, one per line (empty: none).
        rules: String,
        /// What was allowed with "always" (or a host allowed) in this session, one per line.
        granted: Vec<String>,
    },
    /// `/permissions allow|ask|deny RULE`.
    RuleAdded {
        /// `allow`, `ask` or `deny`.
        verb: &'static str,
        /// The rule.
        rule: String,
    },
    /// `/permissions remove RULE`.
    RulesRemoved {
        /// The rule.
        rule: String,
        /// How many were removed.
        count: usize,
    },
    /// `/tools`.
    Tools(Vec<String>),
    /// `/mcp`.
    Mcp(Vec<octo_mcp::ServerStatus>),
    /// The language servers.
    Lsp(Vec<octo_lsp::ServerStatus>),
    /// `/skills`.
    Skills(Arc<octo_skills::Catalog>),
    /// `/skills reload`.
    SkillsReloaded {
        /// What was skipped or overridden.
        notices: Vec<String>,
        /// Skills and commands now.
        count: usize,
    },
    /// `/remember`: the line written.
    Remembered(String),
    /// `/memory`: each index (label, file, text when there is one).
    Memory(Vec<(String, PathBuf, Option<String>)>),
    /// `/memory QUERY`: the matches, one line each.
    MemoryHits {
        /// The query.
        query: String,
        /// One line per hit.
        hits: Vec<String>,
    },
    /// `/memory edit`: the index to open (created when missing); the front end opens it.
    EditMemory(PathBuf),
    /// `/memory --here`: where the workspace's memory lives from the next session on.
    MemoryHere(PathBuf),
    /// `/dream`: what would change; the front end shows the diff and asks before
    /// [`crate::session::Memories::apply_dream`].
    Dream(Box<DreamPlan>),
    /// `/agents`: the types (name, source, description) and the children so far.
    Agents {
        /// Agent types.
        types: Vec<(String, String, String)>,
        /// Children of this session.
        children: Vec<crate::subagents::ChildInfo>,
    },
    /// `/agents` in a session without sub-agents.
    NoAgents,
    /// `/hooks`.
    Hooks(Vec<HookInfo>),
    /// `/todos`.
    Todos(Vec<octo_tools::Todo>),
    /// `/cost`.
    Cost(Box<Status>),
    /// `/init`: the proposed `AGENTS.md`; the front end shows the diff and asks before
    /// [`crate::init::write`].
    InitProposal(Box<crate::init::InitProposal>),
    /// `/review`: what the model found (or why its answer could not be read).
    Review(Box<crate::review::ReviewOutcome>),
    /// `/review` with nothing to review (no model call): what was looked at.
    NothingToReview(String),
    /// `/context`.
    Context(Box<crate::session::ContextReport>),
    /// `/export`: the file written and how many messages it holds.
    Exported {
        /// The file.
        path: PathBuf,
        /// Messages exported.
        messages: usize,
    },
    /// `/compact`: what compaction did, and what it said on the way.
    Compacted {
        /// Tokens after.
        tokens_after: u64,
        /// Messages folded into the summary.
        messages_folded: usize,
        /// Old outputs dropped.
        reclaimed: usize,
        /// Where the folded messages were saved.
        archive: Option<String>,
        /// Notices during compaction.
        notices: Vec<String>,
    },
    /// `/compact` that could not finish (the session ended, or it took over five minutes).
    CompactUnfinished,
    /// `/rewind N`: what would be undone; the front end asks before [`crate::session::Conversation::rewind`].
    Rewind(Box<RewindPlan>),
    /// `/history`: this directory's saved sessions, newest first, and the current one.
    History {
        /// The sessions.
        sessions: Vec<Summary>,
        /// The current session's id.
        current: Option<String>,
    },
    /// `/resume` without a query: the sessions to pick from (by number, id prefix or words).
    PickSession(Vec<Summary>),
    /// `/resume QUERY`: the session to switch to; the front end starts it.
    Resume(String),
    /// `/clear`, `/new`.
    Cleared,
    /// `/stop`.
    Stopped,
}

/// What `/status` shows.
#[derive(Debug, Clone)]
pub struct StatusReport {
    /// The session's status.
    pub status: Status,
    /// The saved session's id.
    pub session_id: Option<String>,
    /// How many tools the model has.
    pub tools: usize,
    /// MCP servers ready, and configured.
    pub mcp: (usize, usize),
    /// The linked git worktree the session works in, if it is one.
    pub worktree: Option<crate::worktree::Linked>,
}

impl Reply {
    /// The reply as plain lines.
    pub fn lines(&self) -> Vec<String> {
        match self {
            Self::Help(specs) => specs.iter().map(|c| format!("  {:<46} {}", c.usage, c.about)).collect(),
            Self::Status(r) => status_lines(r),
            Self::Model { label, switched: true } => vec![format!("model: {label} (the conversation is kept)")],
            Self::Model { label, .. } => vec![format!("model: {label}")],
            Self::Mode(m) => vec![format!("permission mode: {m}")],
            Self::Plan => vec!["plan mode: read-only tools only; /build to leave".to_owned()],
            Self::Permissions { mode, rules, granted } => {
                let mut out = vec![format!("permission mode: {mode}")];
                if rules.trim().is_empty() {
                    out.push("no permission rules (add one: /permissions allow terminal(cargo test*))".to_owned());
                } else {
                    out.extend(rules.trim_end().lines().map(str::to_owned));
                }
                if !granted.is_empty() {
                    out.push("answered \"always\" for this session:".to_owned());
                    out.extend(granted.iter().map(|g| format!("  {g}")));
                }
                out
            }
            Self::RuleAdded { verb, rule } => vec![format!("{verb} {rule}: added for this session")],
            Self::RulesRemoved { rule, count } => vec![format!("removed {count} rule(s) `{rule}` for this session")],
            Self::Tools(names) => vec![names.join(", ")],
            Self::Mcp(servers) => mcp_lines(servers),
            Self::Lsp(servers) => lsp_lines(servers),
            Self::Skills(catalog) => skill_lines(catalog),
            Self::SkillsReloaded { notices, count } => {
                let mut out: Vec<String> = notices.iter().map(|n| format!("octo: note: {n}")).collect();
                out.push(format!(
                    "read {count} skill(s) and command(s) again; the next request rebuilds the prompt cache"
                ));
                out
            }
            Self::Remembered(line) => vec![format!("remembered in this workspace's Scratch Notes: {line}")],
            Self::Memory(indexes) => memory_lines(indexes),
            Self::MemoryHits { query, hits } if hits.is_empty() => vec![format!("no memory matches `{query}`")],
            Self::MemoryHits { hits, .. } => hits.clone(),
            Self::EditMemory(path) => vec![format!("edit {}", path.display())],
            Self::MemoryHere(dir) => vec![format!(
                "from the next session on, this workspace's memory lives in {} (commit it, or add it to .gitignore)",
                dir.display()
            )],
            Self::Dream(plan) if plan.before.as_deref() == Some(plan.after.as_str()) => {
                vec!["the dream changed nothing".to_owned()]
            }
            Self::Dream(plan) => plan.diff.lines().map(str::to_owned).collect(),
            Self::Agents { types, children } => agent_lines(types, children),
            Self::NoAgents => vec!["no sub-agents in this session (tools are off)".to_owned()],
            Self::Hooks(hooks) => hook_lines(hooks),
            Self::Todos(todos) if todos.is_empty() => {
                vec!["no task list yet (the model writes one with todo_write on longer tasks)".to_owned()]
            }
            Self::Todos(todos) => todos.iter().map(|t| format!("  {} {}", todo_mark(t.status), t.content)).collect(),
            Self::Cost(s) => vec![cost_line(s)],
            Self::Context(r) => r.lines(),
            Self::Review(outcome) => review_lines(outcome),
            Self::InitProposal(p) => p.diff.lines().map(str::to_owned).collect(),
            Self::NothingToReview(what) => vec![format!("nothing to review: no changes in {what}")],
            Self::Exported { path, messages } => {
                vec![format!("wrote the conversation ({messages} messages) to {}", path.display())]
            }
            Self::Compacted { tokens_after, messages_folded, reclaimed, archive, notices } => {
                let mut out: Vec<String> = notices.iter().map(|n| format!("  {n}")).collect();
                let archived = archive.as_ref().map(|a| format!("; folded messages saved to {a}")).unwrap_or_default();
                out.push(format!(
                    "  compacted: ~{tokens_after} tokens, {messages_folded} messages summarized, {reclaimed} old outputs dropped{archived}"
                ));
                out
            }
            Self::CompactUnfinished => vec!["  compaction did not finish".to_owned()],
            Self::Rewind(plan) => rewind_lines(plan),
            Self::History { sessions, current } => history_lines(sessions, current.as_deref()),
            Self::PickSession(sessions) => pick_lines(sessions),
            Self::Resume(id) => vec![format!("resuming session {id}")],
            Self::Cleared => vec!["started a fresh conversation".to_owned()],
            Self::Stopped => vec!["stopped the running turn".to_owned()],
        }
    }

    /// The reply's kind, for front ends that hand it on as data (`status`, `mode`, `rewind` …).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Help(_) => "help",
            Self::Status(_) => "status",
            Self::Model { .. } => "model",
            Self::Mode(_) | Self::Plan => "mode",
            Self::Permissions { .. } | Self::RuleAdded { .. } | Self::RulesRemoved { .. } => "permissions",
            Self::Tools(_) => "tools",
            Self::Mcp(_) => "mcp",
            Self::Lsp(_) => "lsp",
            Self::Skills(_) | Self::SkillsReloaded { .. } => "skills",
            Self::Remembered(_) => "remembered",
            Self::Memory(_) | Self::MemoryHits { .. } | Self::EditMemory(_) | Self::MemoryHere(_) => "memory",
            Self::Dream(_) => "dream",
            Self::Agents { .. } | Self::NoAgents => "agents",
            Self::Hooks(_) => "hooks",
            Self::Todos(_) => "todos",
            Self::Cost(_) => "cost",
            Self::Context(_) => "context",
            Self::Review(_) | Self::NothingToReview(_) => "review",
            Self::InitProposal(_) => "init",
            Self::Exported { .. } => "exported",
            Self::Compacted { .. } | Self::CompactUnfinished => "compacted",
            Self::Rewind(_) => "rewind",
            Self::History { .. } | Self::PickSession(_) => "history",
            Self::Resume(_) => "resume",
            Self::Cleared => "cleared",
            Self::Stopped => "stopped",
        }
    }

    /// The reply as one text (its lines joined).
    pub fn text(&self) -> String {
        self.lines().join("\n")
    }
}

/// A review's lines; an answer without findings is shown whole, marked as unreadable.
pub fn review_lines(outcome: &crate::review::ReviewOutcome) -> Vec<String> {
    match &outcome.review {
        Ok(r) => r.lines(),
        Err(why) => {
            let mut out = vec![format!("the review could not be read ({why}); the model's answer:")];
            out.extend(outcome.answer.lines().map(|l| format!("  {l}")));
            out
        }
    }
}

/// The mark of a task-list item: `☐` to do, `▶` in progress, `☑` done.
pub fn todo_mark(status: octo_tools::TodoStatus) -> &'static str {
    match status {
        octo_tools::TodoStatus::Pending => "☐",
        octo_tools::TodoStatus::InProgress => "▶",
        octo_tools::TodoStatus::Completed => "☑",
    }
}

fn status_lines(r: &StatusReport) -> Vec<String> {
    let s = &r.status;
    let context = match s.context_window {
        Some(w) if s.context_tokens > 0 => {
            format!("{} of {w} tokens ({:.0}%)", s.context_tokens, s.context_tokens as f64 * 100.0 / w as f64)
        }
        Some(w) => format!("empty (window {w} tokens)"),
        None => format!("{} tokens", s.context_tokens),
    };
    let cost = s.cost_usd.map(|c| format!("${c:.4}")).unwrap_or_else(|| "unknown price".into());
    let mut out = vec![
        format!("model: {}", s.model),
        format!("permission mode: {}", s.mode),
        format!("sandbox: {}", s.sandbox),
        format!(
            "session: {}",
            r.session_id.clone().unwrap_or_else(|| "not saved yet (saved after the first answer)".into())
        ),
        format!("context: {context}"),
    ];
    if let Some(w) = &r.worktree {
        out.push(format!("worktree: {} of {}", w.name(), w.main.display()));
    }
    out.extend([
        format!(
            "usage: {} · {} in / {} out tokens · {cost}",
            turns(s.turns),
            s.usage.input_tokens + s.usage.cache_read_tokens + s.usage.cache_write_tokens,
            s.usage.output_tokens
        ),
        format!("tools: {}", r.tools),
    ]);
    if r.mcp.1 > 0 {
        out.push(format!("MCP servers: {} of {} ready (/mcp)", r.mcp.0, r.mcp.1));
    }
    out
}

/// "1 turn", "3 turns".
fn turns(n: u32) -> String {
    if n == 1 {
        "1 turn".to_owned()
    } else {
        format!("{n} turns")
    }
}

fn cost_line(s: &Status) -> String {
    let cost = s.cost_usd.map(|c| format!("${c:.4}")).unwrap_or_else(|| "unknown price".into());
    let estimated = if s.usage.estimated { " (estimated: the server reported no usage)" } else { "" };
    format!(
        "{} · {} input, {} output, {} cache read, {} cache write tokens{estimated} · {cost}",
        turns(s.turns),
        s.usage.input_tokens,
        s.usage.output_tokens,
        s.usage.cache_read_tokens,
        s.usage.cache_write_tokens
    )
}

fn mcp_lines(servers: &[octo_mcp::ServerStatus]) -> Vec<String> {
    if servers.is_empty() {
        return vec![
            "no MCP servers (add one: octo mcp add NAME -- COMMAND ARGS, or a .mcp.json in the project)"
                .to_owned(),
        ];
    }
    let mut out = Vec::new();
    for s in servers {
        out.push(format!("  {} · {} · {} · {}", s.name, s.state, s.transport, s.target));
        if let Some(e) = &s.error {
            out.push(format!("    {}", e.lines().next().unwrap_or("")));
        }
        if !s.tools.is_empty() {
            out.push(format!("    tools: {}", s.tools.join(", ")));
        }
    }
    out
}

fn lsp_lines(servers: &[octo_lsp::ServerStatus]) -> Vec<String> {
    if servers.is_empty() {
        return vec![
            "no language servers for this workspace (install one — rust-analyzer, pyright, gopls, typescript-language-server, clangd — or add [lsp.NAME] to ~/.octo/config.toml)".to_owned(),
        ];
    }
    servers
        .iter()
        .map(|s| {
            let problems =
                if s.problems > 0 { format!(" · {} problems reported", s.problems) } else { String::new() };
            format!("  {} · {} · .{} · {}{problems}", s.name, s.command, s.extensions.join(" ."), s.state)
        })
        .collect()
}

fn skill_lines(catalog: &octo_skills::Catalog) -> Vec<String> {
    if catalog.is_empty() {
        return vec![
            "no skills or commands (add a skill as .claude/skills/NAME/SKILL.md or ~/.octo/skills/NAME/SKILL.md, a command as .claude/commands/NAME.md)".to_owned(),
        ];
    }
    catalog
        .iter()
        .map(|s| {
            let kind = match s.kind {
                octo_skills::Kind::Skill => "skill",
                octo_skills::Kind::Command => "command",
            };
            let hint = s.argument_hint.as_deref().map(|h| format!(" {h}")).unwrap_or_default();
            let who = match (s.user_invocable, s.model_invocable) {
                (true, true) => "",
                (true, false) => " · you only",
                (false, _) => " · model only",
            };
            format!("  /{}{hint} — {} ({kind}, {}{who})", s.name, s.description, s.source)
        })
        .collect()
}

fn memory_lines(indexes: &[(String, PathBuf, Option<String>)]) -> Vec<String> {
    let mut out = Vec::new();
    for (label, path, text) in indexes {
        match text {
            Some(text) => {
                out.push(format!("{label} memory ({}):", path.display()));
                out.extend(text.lines().map(|l| format!("  {l}")));
            }
            None => out.push(format!("{label} memory: empty ({})", path.display())),
        }
    }
    out.push(
        "(/remember TEXT jots a note, /memory QUERY searches, /memory edit opens the index, /dream tidies it)"
            .to_owned(),
    );
    out
}

fn agent_lines(types: &[(String, String, String)], children: &[crate::subagents::ChildInfo]) -> Vec<String> {
    let mut out = vec!["agent types (the model starts them with the task tool):".to_owned()];
    out.extend(types.iter().map(|(name, source, description)| format!("  {name} ({source}): {description}")));
    if children.is_empty() {
        out.push("no sub-agents have run yet".to_owned());
    }
    for c in children {
        let state = match &c.state {
            crate::subagents::ChildState::Running => "running".to_owned(),
            crate::subagents::ChildState::Done(_) => "done".to_owned(),
            crate::subagents::ChildState::Failed(e) => format!("failed: {e}"),
        };
        out.push(format!(
            "  {} · {} · {} tool call(s) · {:.1}s · {}",
            c.id, state, c.tool_calls, c.seconds, c.description
        ));
    }
    out
}

fn hook_lines(hooks: &[HookInfo]) -> Vec<String> {
    if hooks.is_empty() {
        return vec![
            "no hooks (add [[hooks.PreToolUse]] tables to ~/.octo/config.toml, or use Claude Code's .claude/settings.json)"
                .to_owned(),
        ];
    }
    hooks
        .iter()
        .map(|h| {
            let matcher = if h.matcher.is_empty() { String::new() } else { format!(" [{}]", h.matcher) };
            let state = if h.active { "" } else { " · not trusted yet (restart the REPL to be asked)" };
            format!("  {}{matcher}: {} ({}){state}", h.event, h.command, h.source)
        })
        .collect()
}

fn rewind_lines(plan: &RewindPlan) -> Vec<String> {
    if plan.turns == 0 {
        return vec!["nothing to rewind: the conversation has no turns yet".to_owned()];
    }
    let s = if plan.turns == 1 { "" } else { "s" };
    let what = match plan.what {
        crate::session::RewindWhat::Both => "files and conversation",
        crate::session::RewindWhat::Code => "files only; the conversation stays",
        crate::session::RewindWhat::Conversation => "conversation only; the files stay",
    };
    let mut out = vec![format!("rewind the last {} turn{s} ({what}):", plan.turns)];
    if plan.what.code() {
        if let Some(note) = &plan.note {
            out.push(format!("  {note}"));
        } else if plan.files.is_empty() {
            out.push("  no file changes to undo".to_owned());
        }
    }
    for f in &plan.files {
        let what = match f.undo {
            octo_tools::trash::Undo::Restore => "restore",
            octo_tools::trash::Undo::Delete => "delete (the turn created it)",
        };
        let by = f.by.as_ref().map(|b| format!(" (changed by {b})")).unwrap_or_default();
        let warn = if f.changed_since { " — changed since the turn" } else { "" };
        out.push(format!("  {what}: {}{by}{warn}", f.path.display()));
    }
    out.extend(plan.skipped.iter().map(|(p, why)| format!("  not checkpointed ({why}): {}", p.display())));
    out.extend(plan.commands.iter().map(|c| format!("  not undone (a shell command): {c}")));
    if plan.what.conversation() {
        out.push(format!(
            "  the conversation goes back to before the {} turn{s}; the current one is kept as a branch",
            plan.turns
        ));
    }
    out
}

fn pick_lines(sessions: &[Summary]) -> Vec<String> {
    if sessions.is_empty() {
        return vec!["no saved sessions in this directory yet".to_owned()];
    }
    let now = octo_session::now();
    sessions.iter().enumerate().take(20).map(|(i, s)| format!("{:>3}. {}", i + 1, s.line(now))).collect()
}

fn history_lines(sessions: &[Summary], current: Option<&str>) -> Vec<String> {
    if sessions.is_empty() {
        return vec!["no saved sessions in this directory yet".to_owned()];
    }
    let now = octo_session::now();
    let mut out: Vec<String> = sessions
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mark = if current == Some(s.id.as_str()) { "*" } else { " " };
            format!("{mark}{:>3}. {}", i + 1, s.line(now))
        })
        .collect();
    out.push("(/resume N, an id prefix or title words to continue one)".to_owned());
    out
}
