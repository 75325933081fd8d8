//! The interactive REPL: a line editor with history and completion, streamed answers, inline
//! approvals, slash commands, Ctrl-C to cancel a turn and Ctrl-D to leave.

use crate::cli::Cli;
use crate::exit::EXIT_USAGE;
use crate::sanitize::visible;
use crate::{launch, out};
use octo_app::commands::SessionCommand;
use octo_app::{Launcher, Session};
use rustyline::error::ReadlineError;
use rustyline::Editor;
use std::process::ExitCode;

mod editor;
mod invoke;
mod memory;
mod paint;
mod rewind;
mod slash;
mod turn;
mod vocabulary;

use editor::{expand_mentions, read_line, Ed, OctoHelper, MORE, PROMPT};
use paint::paint;
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
        let (e, done) = slash::run(&launcher, &session, ed, SessionCommand::Resume(None)).await;
        ed = e;
        if let slash::Done::Resume(id) = done {
            ed = switch_to(&launcher, cli, &mut session, ed, id).await?;
        }
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
        match slash::read(&line) {
            slash::Line::Invalid(why) => {
                out::error(&why);
                continue;
            }
            slash::Line::Exit => break,
            slash::Line::Shared(command) => {
                let reload = matches!(command, SessionCommand::Skills { reload: true });
                let (e, done) = slash::run(&launcher, &session, ed, command).await;
                ed = e;
                if reload {
                    if let Some(h) = ed.helper_mut() {
                        h.extra = user_commands(&session);
                    }
                }
                if let slash::Done::Resume(id) = done {
                    ed = switch_to(&launcher, cli, &mut session, ed, id).await?;
                }
                continue;
            }
            slash::Line::Other(name, _) if name.starts_with("/mcp__") => {
                if let Some(text) = mcp_prompt(&session, line.trim()).await {
                    ed = turn(&session, ed, octo_app::Message::user(text), cli.show_thinking).await?;
                }
                continue;
            }
            slash::Line::Other(name, arg) => {
                let (e, prepared) = invoke::run(&session, ed, name, arg).await;
                ed = e;
                if let Some(p) = prepared {
                    ed = turn(&session, ed, p, cli.show_thinking).await?;
                }
                continue;
            }
            slash::Line::Message => {}
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

/// Switches to the saved session `id` (from `/resume` or `--resume`).
async fn switch_to(
    launcher: &Launcher,
    cli: &Cli,
    session: &mut Session,
    ed: Ed,
    id: String,
) -> anyhow::Result<Ed> {
    match launch::start(launcher, cli, false, Some(id.clone())) {
        Ok(s) => {
            drop(std::mem::replace(session, s));
            let n = session.history().await.map(|h| h.len()).unwrap_or(0);
            out::status(&format!("octo: resumed session {id} ({n} messages)"));
            offer_unanswered(session, ed, cli.show_thinking).await
        }
        Err(e) => {
            out::error(&e.to_string());
            Ok(ed)
        }
    }
}
