//! The interactive REPL: a line editor with history and completion, streamed answers, inline
//! approvals, slash commands, Ctrl-C to cancel a turn and Ctrl-D to leave.

use crate::cli::Cli;
use crate::exit::EXIT_USAGE;
use crate::sanitize::visible;
use crate::{launch, out};
use octo_app::{AgentEvent, Launcher, Session};
use rustyline::error::ReadlineError;
use rustyline::Editor;
use std::process::ExitCode;
use tokio::sync::broadcast::error::RecvError;

mod editor;
mod invoke;
mod memory;
mod rewind;
mod slash;
mod turn;

use editor::{expand_mentions, paint, read_line, Ed, OctoHelper, MORE, PROMPT};
use turn::turn;

/// Runs the REPL until /exit, Ctrl-D or a second Ctrl-C on an empty line.
pub async fn run(cli: &Cli) -> anyhow::Result<ExitCode> {
    let mut launcher = Launcher::from_env();
    let mut first = launch::start(&launcher, cli, false, None);
    if first.as_ref().is_err_and(octo_app::LaunchError::is_unconfigured)
        && crate::setup::first_run(&launcher).await
    {
        // The key may have gone into a new key file: look again.
        launcher = Launcher::from_env();
        first = launch::start(&launcher, cli, false, None);
    }
    let mut session = match first {
        Ok(s) => s,
        Err(e) if e.is_in_use() => {
            out::error(&e.to_string());
            out::status("octo: starting a new session instead");
            let fresh = Cli { continue_session: None, resume: None, ..cli.clone() };
            match launch::start(&launcher, &fresh, false, None) {
                Ok(s) => s,
                Err(e) => {
                    out::error(&e.to_string());
                    return Ok(ExitCode::from(launch::exit_code(&e)));
                }
            }
        }
        Err(e) => {
            out::error(&e.to_string());
            return Ok(ExitCode::from(launch::exit_code(&e)));
        }
    };
    if cli.continue_session.is_some() || cli.resume.as_deref().is_some_and(|q| !q.is_empty()) {
        let n = session.history().await.map(|h| h.len()).unwrap_or(0);
        out::status(&format!(
            "octo: continuing session {} ({n} messages)",
            session.session_id().unwrap_or_default()
        ));
    }
    let workspace = launcher.workspace(cli.workspace.as_deref())?;
    for n in session.notes() {
        out::status(&visible(&format!("octo: note: {n}")));
    }
    let st = session.status();
    out::status(&format!(
        "octo {} · {} · {} mode · /help for commands, Ctrl-D to leave",
        env!("CARGO_PKG_VERSION"),
        st.model,
        st.mode
    ));
    let config = rustyline::Config::builder().auto_add_history(false).max_history_size(2000)?.build();
    let mut ed: Ed = Editor::with_config(config)?;
    ed.set_helper(Some(OctoHelper { workspace: workspace.clone(), extra: user_commands(&session) }));
    ed.bind_sequence(
        rustyline::KeyEvent::ctrl('V'),
        rustyline::EventHandler::Conditional(Box::new(editor::Paste { dir: launcher.home().output() })),
    );
    let history = launcher.home().history_file();
    let _ = ed.load_history(&history);
    ed = approve_project_servers(&session, ed).await;
    ed = trust_project_hooks(&session, ed).await;
    if cli.resume.as_deref() == Some("") {
        ed = resume(&launcher, cli, &mut session, ed, "", &workspace).await?;
    } else {
        ed = offer_unanswered(&session, ed, cli.show_thinking).await?;
    }
    let mut last_was_interrupt = false;
    loop {
        let (e, line) = read_line(ed, PROMPT).await;
        ed = e;
        let mut line = match line {
            Ok(l) => {
                last_was_interrupt = false;
                l
            }
            Err(ReadlineError::Interrupted) => {
                if last_was_interrupt {
                    break;
                }
                last_was_interrupt = true;
                out::status("(press Ctrl-C again on an empty line, or Ctrl-D, to leave)");
                continue;
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                out::error(&format!("reading input failed: {e}"));
                return Ok(ExitCode::from(EXIT_USAGE));
            }
        };
        // A trailing backslash continues the message on the next line.
        while line.ends_with('\\') {
            line.pop();
            line.push('\n');
            let (e, more) = read_line(ed, MORE).await;
            ed = e;
            match more {
                Ok(m) => line.push_str(&m),
                Err(_) => break,
            }
        }
        if line.trim().is_empty() {
            continue;
        }
        let _ = ed.add_history_entry(line.as_str());
        save_history(&mut ed, &history);
        match slash::parse(&line) {
            slash::Parsed::Invalid(why) => {
                out::error(&why);
                continue;
            }
            slash::Parsed::Command("/compact", arg) => {
                compact(&session, Some(arg.to_owned()).filter(|a| !a.is_empty())).await;
                continue;
            }
            slash::Parsed::Command("/dream", _) => {
                ed = memory::dream(&session, ed).await;
                continue;
            }
            slash::Parsed::Command("/history", _) => {
                history_list(&launcher, &session, &workspace);
                continue;
            }
            slash::Parsed::Command("/resume", arg) => {
                ed = resume(&launcher, cli, &mut session, ed, arg, &workspace).await?;
                continue;
            }
            slash::Parsed::Command("/rewind", arg) => {
                ed = rewind::run(&session, ed, arg.parse().unwrap_or(1)).await;
                continue;
            }
            slash::Parsed::Command(name, arg) => match slash::run(&launcher, &session, name, arg) {
                slash::Done::Handled => {
                    if name == "/skills" {
                        if let Some(h) = ed.helper_mut() {
                            h.extra = user_commands(&session);
                        }
                    }
                    continue;
                }
                slash::Done::Exit => break,
            },
            slash::Parsed::Other(name, _) if name.starts_with("/mcp__") => {
                if let Some(text) = mcp_prompt(&session, line.trim()).await {
                    ed = turn(&session, ed, octo_app::Message::user(text), cli.show_thinking).await?;
                }
                continue;
            }
            slash::Parsed::Other(name, arg) => {
                let (e, prepared) = invoke::run(&session, ed, name, arg).await;
                ed = e;
                if let Some(p) = prepared {
                    ed = turn(&session, ed, p, cli.show_thinking).await?;
                }
                continue;
            }
            slash::Parsed::Message => {}
        }
        let message = expand_mentions(&line, &workspace, session.accepts_images() != Some(false));
        ed = turn(&session, ed, message, cli.show_thinking).await?;
        if cli.verbose {
            let s = session.status();
            let cost = s.cost_usd.map(|c| format!(" · ${c:.4} so far")).unwrap_or_default();
            out::status(&paint(
                "2",
                &format!(
                    "{} · {} in / {} out tokens ({} cached){cost}",
                    s.model,
                    s.usage.input_tokens + s.usage.cache_write_tokens,
                    s.usage.output_tokens,
                    s.usage.cache_read_tokens
                ),
            ));
        }
    }
    save_history(&mut ed, &history);
    crate::launch::stop_processes(&session);
    Ok(ExitCode::SUCCESS)
}

/// The skills and commands the user may run, as `/name`, for completion.
fn user_commands(session: &Session) -> Vec<String> {
    session.skills().iter().filter(|s| s.user_invocable).map(|s| format!("/{}", s.name)).collect()
}

/// Asks about each MCP server the project configures and the user has not approved yet: a
/// repository must not start programs on its own. A yes is remembered for that exact command.
async fn approve_project_servers(session: &Session, mut ed: Ed) -> Ed {
    for s in session.mcp_status().into_iter().filter(|s| s.state == "needs approval") {
        let from = match s.origin {
            octo_app::McpOrigin::ProjectJson => ".mcp.json",
            _ => ".octo/config.toml",
        };
        out::status(&visible(&format!(
            "octo: this project's {from} configures the MCP server `{}`, which runs: {}",
            s.name, s.target
        )));
        let (e, answer) =
            read_line(ed, "  start it (and remember this for this exact command)? [y/N] ").await;
        ed = e;
        if matches!(answer.unwrap_or_default().trim().to_ascii_lowercase().as_str(), "y" | "yes") {
            match session.approve_mcp(&s.name) {
                Ok(()) => out::status(&visible(&format!(
                    "  starting `{}`; its tools join before your next message",
                    s.name
                ))),
                Err(e) => out::error(&visible(&e.to_string())),
            }
        } else {
            out::status(&visible(&format!("  `{}` stays off", s.name)));
        }
    }
    ed
}

/// Asks once whether to run the hooks this project configures (a repository must not run
/// programs on its own); a yes is remembered for these exact hooks.
async fn trust_project_hooks(session: &Session, ed: Ed) -> Ed {
    let hooks = session.untrusted_hooks();
    if hooks.is_empty() {
        return ed;
    }
    out::status("octo: this project configures hooks, commands octo would run at its seats:");
    for h in &hooks {
        out::status(&visible(&format!("  {h}")));
    }
    let (ed, answer) = read_line(ed, "  run them (and remember this for these exact hooks)? [y/N] ").await;
    if matches!(answer.unwrap_or_default().trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        match session.trust_hooks() {
            Ok(()) => out::status("  the project's hooks are on"),
            Err(e) => out::error(&visible(&e.to_string())),
        }
    } else {
        out::status("  the project's hooks stay off (your own hooks still run)");
    }
    ed
}

/// `/mcp__server__prompt ARGS`: the server's prompt, rendered, as the next message.
async fn mcp_prompt(session: &Session, line: &str) -> Option<String> {
    let mut words = line.split_whitespace();
    let command = words.next()?;
    let args: Vec<String> = words.map(str::to_owned).collect();
    let prompts = session.mcp_prompts().await;
    let Some(p) = prompts.iter().find(|p| p.command == command) else {
        let known: Vec<&str> = prompts.iter().map(|p| p.command.as_str()).collect();
        out::error(&visible(&format!(
            "no MCP prompt {command}{}",
            if known.is_empty() { String::new() } else { format!("; there are: {}", known.join(", ")) }
        )));
        return None;
    };
    match session.mcp_prompt_text(p, &args).await {
        Ok(text) => Some(text),
        Err(e) => {
            let usage: Vec<String> = p
                .arguments
                .iter()
                .map(|(n, req)| if *req { n.to_uppercase() } else { format!("[{}]", n.to_uppercase()) })
                .collect();
            out::error(&visible(&format!("{e}. Usage: {command} {}", usage.join(" "))));
            None
        }
    }
}

/// Saves the input history, readable only by the user: it holds everything they typed.
fn save_history(ed: &mut Ed, path: &std::path::Path) {
    if ed.save_history(path).is_ok() {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
        }
    }
}

/// A resumed session whose last message was never answered (octo was killed, or its turn failed):
/// show it and offer to send it again.
async fn offer_unanswered(session: &Session, ed: Ed, show_thinking: bool) -> anyhow::Result<Ed> {
    let Some(text) = session.unanswered().map(str::to_owned) else { return Ok(ed) };
    out::status("octo: the last message of this session was never answered:");
    for line in text.lines().take(10) {
        out::status(&visible(&format!("  > {line}")));
    }
    let (ed, answer) = read_line(ed, "  send it again? [Y/n] ").await;
    let answer = answer.unwrap_or_default().trim().to_ascii_lowercase();
    if answer.is_empty() || answer == "y" || answer == "yes" {
        return turn(session, ed, octo_app::Message::user(text), show_thinking).await;
    }
    Ok(ed)
}

/// `/compact [focus]`: compacts now and reports the result.
async fn compact(session: &Session, focus: Option<String>) {
    let mut rx = session.subscribe();
    if let Err(e) = session.compact(focus) {
        out::error(&e.to_string());
        return;
    }
    out::status(&paint("2", "  compacting the conversation…"));
    loop {
        match tokio::time::timeout(std::time::Duration::from_secs(300), rx.recv()).await {
            Ok(Ok(AgentEvent::CompactionEnd { tokens_after, messages_folded, reclaimed, archive })) => {
                let archived = archive.map(|a| format!("; folded messages saved to {a}")).unwrap_or_default();
                out::status(&format!(
                    "  compacted: ~{tokens_after} tokens, {messages_folded} messages summarized, {reclaimed} old outputs dropped{archived}"
                ));
                return;
            }
            Ok(Ok(AgentEvent::Notice { message })) => out::status(&paint("2", &format!("  {message}"))),
            Ok(Ok(_)) | Ok(Err(RecvError::Lagged(_))) => {}
            Ok(Err(RecvError::Closed)) | Err(_) => return,
        }
    }
}

/// `/history`: this directory's saved sessions, newest first.
fn history_list(launcher: &Launcher, session: &Session, workspace: &std::path::Path) {
    let now = octo_app::session_store::now();
    match launcher.sessions().list(Some(workspace)) {
        Ok(list) if list.is_empty() => out::status("no saved sessions in this directory yet"),
        Ok(list) => {
            let current = session.session_id();
            for (i, s) in list.iter().enumerate() {
                let mark = if current.as_deref() == Some(s.id.as_str()) { "*" } else { " " };
                out::status(&visible(&format!("{mark}{:>3}. {}", i + 1, s.line(now))));
            }
            out::status("(/resume N, an id prefix or title words to continue one)");
        }
        Err(e) => out::error(&e.to_string()),
    }
}

/// `/resume [query]`: a number from `/history`, an id prefix or title words; without one, the
/// list is shown and a number asked for.
/// Picks a session (`query` empty: from a numbered list) and switches to it.
async fn resume(
    launcher: &Launcher,
    cli: &Cli,
    session: &mut Session,
    ed: Ed,
    query: &str,
    workspace: &std::path::Path,
) -> anyhow::Result<Ed> {
    let (ed, picked) = pick_session(launcher, ed, query.trim(), workspace).await;
    if let Some(id) = picked {
        match launch::start(launcher, cli, false, Some(id.clone())) {
            Ok(s) => {
                drop(std::mem::replace(session, s));
                let n = session.history().await.map(|h| h.len()).unwrap_or(0);
                out::status(&format!("octo: resumed session {id} ({n} messages)"));
                return offer_unanswered(session, ed, cli.show_thinking).await;
            }
            Err(e) => out::error(&e.to_string()),
        }
    }
    Ok(ed)
}

async fn pick_session(
    launcher: &Launcher,
    mut ed: Ed,
    query: &str,
    workspace: &std::path::Path,
) -> (Ed, Option<String>) {
    let list = launcher.sessions().list(Some(workspace)).unwrap_or_default();
    let mut query = query.to_owned();
    if query.is_empty() {
        if list.is_empty() {
            out::status("no saved sessions in this directory yet");
            return (ed, None);
        }
        let now = octo_app::session_store::now();
        for (i, s) in list.iter().enumerate().take(20) {
            out::status(&visible(&format!("{:>3}. {}", i + 1, s.line(now))));
        }
        let (e, answer) = read_line(ed, "  resume which? ").await;
        ed = e;
        query = answer.unwrap_or_default().trim().to_owned();
        if query.is_empty() {
            return (ed, None);
        }
    }
    if let Some(s) = query.parse::<usize>().ok().and_then(|n| list.get(n.wrapping_sub(1))) {
        return (ed, Some(s.id.clone()));
    }
    match launcher.find_session(&query, workspace) {
        Ok(id) => (ed, Some(id)),
        Err(e) => {
            out::error(&e.to_string());
            (ed, None)
        }
    }
}
