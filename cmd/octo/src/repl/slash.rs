//! Slash commands: what each takes, checked before anything happens. A known command with an
//! argument it does not take is an error that shows its usage — never silently ignored. Any
//! other `/word` is a skill, a custom command or an MCP prompt, or an error that names the near
//! matches; a line starting with `/ ` or a path (`/usr/bin/env …`) goes to the model as text.

use crate::out;
use crate::sanitize::visible;
use octo_app::permissions::{Action, Rule};
use octo_app::{Launcher, Mode, Session};

/// What a command takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Takes {
    /// Nothing.
    Nothing,
    /// Optional free text.
    Text,
    /// An optional whole number of at least 1.
    Count,
}

/// One slash command.
pub(super) struct Spec {
    pub name: &'static str,
    pub usage: &'static str,
    pub about: &'static str,
    takes: Takes,
}

const fn spec(name: &'static str, usage: &'static str, about: &'static str, takes: Takes) -> Spec {
    Spec { name, usage, about, takes }
}

/// Every command, in the order `/help` lists them.
pub(super) const COMMANDS: &[Spec] = &[
    spec("/help", "/help", "this list", Takes::Nothing),
    spec("/status", "/status", "endpoint, model, mode, session, context use and cost", Takes::Nothing),
    spec(
        "/model",
        "/model [endpoint:model]",
        "show the model, or switch (the conversation is kept)",
        Takes::Text,
    ),
    spec(
        "/mode",
        "/mode [default|build|accept-edits|plan|auto]",
        "show or switch the permission mode",
        Takes::Text,
    ),
    spec("/plan", "/plan", "plan mode: read-only tools only", Takes::Nothing),
    spec("/build", "/build", "leave plan mode", Takes::Nothing),
    spec(
        "/permissions",
        "/permissions [allow|ask|deny RULE | remove RULE]",
        "the mode and rules; add or remove a rule for this session",
        Takes::Text,
    ),
    spec("/tools", "/tools", "the tools the model can call", Takes::Nothing),
    spec(
        "/mcp",
        "/mcp",
        "MCP servers: their state and tools (their prompts run as /mcp__server__prompt)",
        Takes::Nothing,
    ),
    spec(
        "/skills",
        "/skills [reload]",
        "skills and custom commands (run one as /name args); reload reads them again",
        Takes::Text,
    ),
    spec("/remember", "/remember TEXT", "jot a note in this workspace's memory (no model call)", Takes::Text),
    spec(
        "/memory",
        "/memory [QUERY | edit | --here]",
        "the memory indexes; search them, edit the index, or keep it in the repository",
        Takes::Text,
    ),
    spec("/dream", "/dream", "consolidate this workspace's memory (shows the diff first)", Takes::Nothing),
    spec("/agents", "/agents", "sub-agent types and the sub-agents of this session", Takes::Nothing),
    spec("/hooks", "/hooks", "the hooks configured, where from, and whether they run", Takes::Nothing),
    spec("/todos", "/todos", "the model's task list", Takes::Nothing),
    spec("/cost", "/cost", "tokens and cost so far", Takes::Nothing),
    spec(
        "/compact",
        "/compact [focus]",
        "compact the conversation now, focusing the summary on what you name",
        Takes::Text,
    ),
    spec(
        "/rewind",
        "/rewind [N]",
        "undo the file changes of the last N turns (default 1) and forget those turns",
        Takes::Count,
    ),
    spec("/history", "/history", "this directory's saved sessions", Takes::Nothing),
    spec("/resume", "/resume [N | id prefix | title words]", "continue a saved session", Takes::Text),
    spec("/clear", "/clear", "forget the conversation (also /new)", Takes::Nothing),
    spec("/new", "/new", "start a fresh conversation", Takes::Nothing),
    spec("/exit", "/exit", "leave (also /quit, Ctrl-D)", Takes::Nothing),
    spec("/quit", "/quit", "leave", Takes::Nothing),
];

/// A typed line, read as a command.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Parsed<'a> {
    /// A known command with an argument it takes (possibly empty).
    Command(&'static str, &'a str),
    /// A known command with an argument it does not take: the message says what is wrong.
    Invalid(String),
    /// Another `/word`: a skill, a custom command, an MCP prompt, or unknown.
    Other(&'a str, &'a str),
    /// Not a command: the line goes to the model.
    Message,
}

/// Reads `line` as a slash command.
pub(super) fn parse(line: &str) -> Parsed<'_> {
    let line = line.trim();
    if !line.starts_with('/') {
        return Parsed::Message;
    }
    let (name, arg) = match line.split_once(char::is_whitespace) {
        Some((n, a)) => (n, a.trim()),
        None => (line, ""),
    };
    let Some(spec) = COMMANDS.iter().find(|c| c.name == name) else {
        // `/usr/bin/env is broken` and `/ (the root)` are text, not commands.
        return if name.len() > 1 && !name[1..].contains('/') {
            Parsed::Other(name, arg)
        } else {
            Parsed::Message
        };
    };
    let bad = |what: String| Parsed::Invalid(format!("{what}. Usage: {}", spec.usage));
    match spec.takes {
        Takes::Nothing if !arg.is_empty() => bad(format!("{name} takes no argument (got `{arg}`)")),
        Takes::Count if !arg.is_empty() && !arg.parse::<usize>().is_ok_and(|n| n >= 1) => {
            bad(format!("{name} takes a number of turns, at least 1 (got `{arg}`)"))
        }
        _ => Parsed::Command(spec.name, arg),
    }
}

/// What the REPL does after a command it handles here.
pub(super) enum Done {
    /// Nothing more.
    Handled,
    /// Leave the REPL.
    Exit,
}

/// Runs the commands that need nothing but the session (the others — `/compact`, `/resume`,
/// `/rewind`, `/history` — are the REPL loop's).
pub(super) fn run(launcher: &Launcher, session: &Session, name: &str, arg: &str) -> Done {
    match name {
        "/help" => help(),
        "/status" => status(session),
        "/model" if arg.is_empty() => out::status(&format!("model: {}", session.status().model)),
        "/model" => match session.set_model(arg, launcher.credentials(), launcher.env()) {
            Ok(label) => out::status(&format!("model: {label} (the conversation is kept)")),
            Err(e) => out::error(&e.to_string()),
        },
        "/mode" if arg.is_empty() => out::status(&format!("permission mode: {}", session.status().mode)),
        "/mode" => match arg.parse::<Mode>() {
            Ok(m) => {
                session.set_mode(m);
                out::status(&format!("permission mode: {m}"));
            }
            Err(e) => out::error(&format!("{e}. Usage: /mode [default|build|accept-edits|plan|auto]")),
        },
        "/plan" => {
            session.set_mode(Mode::Plan);
            out::status("plan mode: read-only tools only; /build to leave");
        }
        "/build" => {
            let configured = session.config().map(|c| c.permission_mode.value).unwrap_or_default();
            let m = if configured == Mode::Plan { Mode::Default } else { configured };
            session.set_mode(m);
            out::status(&format!("permission mode: {m}"));
        }
        "/permissions" => permissions(session, arg),
        "/tools" => out::status(&visible(&session.tool_names().join(", "))),
        "/mcp" => {
            let servers = session.mcp_status();
            if servers.is_empty() {
                out::status("no MCP servers (add one: octo mcp add NAME -- COMMAND ARGS, or a .mcp.json in the project)");
            }
            for s in servers {
                out::status(&visible(&format!(
                    "  {} · {} · {} · {}",
                    s.name, s.state, s.transport, s.target
                )));
                if let Some(e) = &s.error {
                    out::status(&visible(&format!("    {}", e.lines().next().unwrap_or(""))));
                }
                if !s.tools.is_empty() {
                    out::status(&visible(&format!("    tools: {}", s.tools.join(", "))));
                }
            }
        }
        "/skills" => skills(session, arg),
        "/agents" => agents(session),
        "/hooks" => {
            let hooks = session.hooks();
            if hooks.is_empty() {
                out::status("no hooks (add [[hooks.PreToolUse]] tables to ~/.octo/config.toml, or use Claude Code's .claude/settings.json)");
            }
            for h in hooks {
                let matcher = if h.matcher.is_empty() { String::new() } else { format!(" [{}]", h.matcher) };
                let state = if h.active { "" } else { " · not trusted yet (restart the REPL to be asked)" };
                out::status(&visible(&format!(
                    "  {}{matcher}: {} ({}){state}",
                    h.event, h.command, h.source
                )));
            }
        }
        "/remember" => super::memory::remember(session, arg),
        "/memory" => super::memory::memory(session, arg),
        "/todos" => {
            let todos = session.todos();
            if todos.is_empty() {
                out::status("no task list yet (the model writes one with todo_write on longer tasks)");
            } else {
                for line in checklist(&todos) {
                    out::status(&line);
                }
            }
        }
        "/cost" => {
            let s = session.status();
            let cost = s.cost_usd.map(|c| format!("${c:.4}")).unwrap_or_else(|| "unknown price".into());
            let estimated = if s.usage.estimated { " (estimated: the server reported no usage)" } else { "" };
            out::status(&format!(
                "{} turns · {} input, {} output, {} cache read, {} cache write tokens{estimated} · {cost}",
                s.turns,
                s.usage.input_tokens,
                s.usage.output_tokens,
                s.usage.cache_read_tokens,
                s.usage.cache_write_tokens
            ));
        }
        "/clear" | "/new" => match session.clear() {
            Ok(()) => out::status("started a fresh conversation"),
            Err(e) => out::error(&e.to_string()),
        },
        "/exit" | "/quit" => return Done::Exit,
        _ => {}
    }
    Done::Handled
}

fn help() {
    for c in COMMANDS {
        out::status(&format!("  {:<46} {}", c.usage, c.about));
    }
    out::status(
        "  @path                                          attach a file (text, or an image: png, jpeg, gif, webp)\n  \
         a line ending in \\ continues on the next line; Ctrl-C cancels a running turn",
    );
}

fn status(session: &Session) {
    let s = session.status();
    out::status(&format!("model: {}", s.model));
    out::status(&format!("permission mode: {}", s.mode));
    out::status(&format!("sandbox: {}", s.sandbox));
    out::status(&format!(
        "session: {}",
        session.session_id().unwrap_or_else(|| "not saved yet (saved after the first answer)".into())
    ));
    let context = match s.context_window {
        Some(w) if s.context_tokens > 0 => {
            format!("{} of {w} tokens ({:.0}%)", s.context_tokens, s.context_tokens as f64 * 100.0 / w as f64)
        }
        Some(w) => format!("empty (window {w} tokens)"),
        None => format!("{} tokens", s.context_tokens),
    };
    out::status(&format!("context: {context}"));
    let cost = s.cost_usd.map(|c| format!("${c:.4}")).unwrap_or_else(|| "unknown price".into());
    out::status(&format!(
        "usage: {} turns · {} in / {} out tokens · {cost}",
        s.turns,
        s.usage.input_tokens + s.usage.cache_read_tokens + s.usage.cache_write_tokens,
        s.usage.output_tokens
    ));
    out::status(&format!("tools: {}", session.tool_names().len()));
    let mcp = session.mcp_status();
    if !mcp.is_empty() {
        let ready = mcp.iter().filter(|s| s.state == "ready").count();
        out::status(&format!("MCP servers: {ready} of {} ready (/mcp)", mcp.len()));
    }
}

/// `/agents`: the types and the children so far.
fn agents(session: &Session) {
    let Some(spawner) = session.subagents() else {
        out::status("no sub-agents in this session (tools are off)");
        return;
    };
    out::status("agent types (the model starts them with the task tool):");
    for a in spawner.agents().iter() {
        out::status(&visible(&format!("  {} ({}): {}", a.name, a.source, a.description)));
    }
    let children = spawner.children();
    if children.is_empty() {
        out::status("no sub-agents have run yet");
    }
    for c in children {
        let state = match &c.state {
            octo_app::subagents::ChildState::Running => "running".to_owned(),
            octo_app::subagents::ChildState::Done(_) => "done".to_owned(),
            octo_app::subagents::ChildState::Failed(e) => format!("failed: {e}"),
        };
        out::status(&visible(&format!(
            "  {} · {} · {} tool call(s) · {:.1}s · {}",
            c.id, state, c.tool_calls, c.seconds, c.description
        )));
    }
}

/// `/skills [reload]`.
fn skills(session: &Session, arg: &str) {
    match arg {
        "" => {}
        "reload" => match session.reload_skills() {
            Ok(notices) => {
                for n in notices {
                    out::status(&visible(&format!("octo: note: {n}")));
                }
                out::status(&format!(
                    "read {} skill(s) and command(s) again; the next request rebuilds the prompt cache",
                    session.skills().len()
                ));
            }
            Err(e) => out::error(&e.to_string()),
        },
        other => {
            out::error(&visible(&format!(
                "`/skills {other}` is not a skills command. Usage: /skills [reload]"
            )));
            return;
        }
    }
    if !arg.is_empty() {
        return;
    }
    let catalog = session.skills();
    if catalog.is_empty() {
        out::status(
            "no skills or commands (add a skill as .claude/skills/NAME/SKILL.md or ~/.octo/skills/NAME/SKILL.md, a command as .claude/commands/NAME.md)",
        );
        return;
    }
    for s in catalog.iter() {
        let kind = match s.kind {
            octo_app::skill_files::Kind::Skill => "skill",
            octo_app::skill_files::Kind::Command => "command",
        };
        let hint = s.argument_hint.as_deref().map(|h| format!(" {h}")).unwrap_or_default();
        let who = match (s.user_invocable, s.model_invocable) {
            (true, true) => "",
            (true, false) => " · you only",
            (false, _) => " · model only",
        };
        out::status(&visible(&format!(
            "  /{}{hint} — {} ({kind}, {}{who})",
            s.name, s.description, s.source
        )));
    }
}

/// `/permissions [allow|ask|deny RULE | remove RULE]`.
fn permissions(session: &Session, arg: &str) {
    const USAGE: &str = "Usage: /permissions [allow|ask|deny RULE | remove RULE], e.g. /permissions allow terminal(cargo test*)";
    if arg.is_empty() {
        out::status(&format!("permission mode: {}", session.status().mode));
        let rules = session.rules().describe();
        if rules.is_empty() {
            out::status("no permission rules (add one: /permissions allow terminal(cargo test*))");
        } else {
            out::status(&visible(rules.trim_end()));
        }
        return;
    }
    let (verb, rule) = match arg.split_once(char::is_whitespace) {
        Some((v, r)) => (v, r.trim()),
        None => (arg, ""),
    };
    let action = match verb {
        "allow" => Action::Allow,
        "ask" => Action::Ask,
        "deny" => Action::Deny,
        "remove" if !rule.is_empty() => {
            match session.remove_rule(rule) {
                0 => out::error(&visible(&format!("no rule `{rule}` to remove; /permissions lists them"))),
                n => out::status(&visible(&format!("removed {n} rule(s) `{rule}` for this session"))),
            }
            return;
        }
        _ => {
            out::error(&visible(&format!("`/permissions {arg}` is not a permissions command. {USAGE}")));
            return;
        }
    };
    if rule.is_empty() {
        out::error(&format!("/permissions {verb} needs a rule. {USAGE}"));
        return;
    }
    match Rule::parse(rule, action, "/permissions")
        .map_err(|e| e.to_string())
        .and_then(|r| session.add_rule(r).map_err(|e| e.to_string()))
    {
        Ok(()) => out::status(&visible(&format!("{verb} {rule}: added for this session"))),
        Err(e) => out::error(&visible(&format!("{e}. {USAGE}"))),
    }
}

/// The task list as lines: `☐` to do, `▶` in progress, `☑` done.
pub(super) fn checklist(todos: &[octo_app::Todo]) -> Vec<String> {
    todos
        .iter()
        .map(|t| {
            let (mark, code) = match t.status {
                octo_app::TodoStatus::Pending => ("☐", "0"),
                octo_app::TodoStatus::InProgress => ("▶", "1"),
                octo_app::TodoStatus::Completed => ("☑", "2"),
            };
            super::editor::paint(code, &visible(&format!("  {mark} {}", t.content)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_checked_before_anything_happens() {
        assert_eq!(parse("/help"), Parsed::Command("/help", ""));
        assert_eq!(parse("  /mode   plan "), Parsed::Command("/mode", "plan"));
        assert_eq!(parse("/rewind 2"), Parsed::Command("/rewind", "2"));
        assert!(
            matches!(parse("/plan now"), Parsed::Invalid(m) if m.contains("takes no argument") && m.contains("Usage: /plan"))
        );
        assert!(matches!(parse("/rewind two"), Parsed::Invalid(m) if m.contains("Usage: /rewind [N]")));
        assert!(matches!(parse("/rewind 0"), Parsed::Invalid(_)));
        assert!(matches!(parse("/cost please"), Parsed::Invalid(_)));
        assert_eq!(parse("/compactx the widget"), Parsed::Other("/compactx", "the widget"));
        assert_eq!(parse("/review src/lib.rs"), Parsed::Other("/review", "src/lib.rs"));
        assert_eq!(parse("/usr/bin/env is broken"), Parsed::Message);
        assert_eq!(parse("/ is the root"), Parsed::Message);
        assert_eq!(parse("/"), Parsed::Message);
        assert_eq!(parse("hello /help"), Parsed::Message);
    }
}
