//! The interactive REPL: a line editor with history and completion, streamed answers, inline
//! approvals, slash commands, Ctrl-C to cancel a turn and Ctrl-D to leave.

use crate::cli::Cli;
use crate::exit::EXIT_USAGE;
use crate::sanitize::visible;
use crate::{launch, out};
use octo_app::commands::SessionCommand;
use octo_app::{Launcher, Session};
use rustyline::Editor;
use std::path::PathBuf;
use std::process::ExitCode;

mod between;
mod editor;
mod init;
mod input;
mod invoke;
mod key;
mod memory;
mod paint;
mod recap;
mod review;
mod rewind;
mod slash;
mod status;
mod trust;
mod turn;
mod vocabulary;

use editor::{expand_mentions, read_line, Ed, OctoHelper};
use paint::paint;
use turn::turn;

/// Runs the REPL until /exit, Ctrl-D or a second Ctrl-C on an empty line.
pub async fn run(cli: &Cli) -> anyhow::Result<ExitCode> {
    let (launcher, session) = match open(cli).await {
        Ok(opened) => opened,
        Err(code) => return Ok(code),
    };
    let workspace = launcher.workspace(cli.workspace.as_deref())?;
    greet(cli, &session).await;
    let shown = std::sync::Arc::new(status::Shown::default());
    let mut ed = editor(&launcher, &session, &workspace, std::sync::Arc::clone(&shown))?;
    let history = launcher.home().history_file();
    let printer =
        ed.create_external_printer().ok().map(|p| Box::new(p) as Box<dyn rustyline::ExternalPrinter + Send>);
    let between = between::Between::new(&session, printer);
    let mut repl = Repl { cli, launcher, session, workspace, history, between };
    let mut ed = repl.start(ed).await?;
    let mut interrupted = false;
    let mut status_line = status::Status::new(shown);
    loop {
        let prompt = editor::prompt(repl.session.status().mode);
        status_line.before_prompt(&repl.session).await;
        let (e, input) = input::read(ed, prompt, &mut interrupted).await;
        status_line.after_prompt();
        ed = e;
        match input {
            input::Input::Line(line) => match repl.line(ed, line).await? {
                Flow::Go(e) => ed = e,
                Flow::Leave(e) => {
                    ed = e;
                    break;
                }
            },
            input::Input::Nothing => {}
            input::Input::Leave => break,
            input::Input::Failed(e) => {
                out::error(&format!("reading input failed: {e}"));
                return Ok(ExitCode::from(EXIT_USAGE));
            }
        }
    }
    save_history(&mut ed, &repl.history);
    crate::launch::stop_processes(&repl.session);
    Ok(ExitCode::SUCCESS)
}

/// One turn on a terminal for a one-shot run: streamed and redrawn as the REPL shows it, with
/// its spinner, approvals and questions; what the turn amounted to.
pub async fn run_once(
    session: &Session,
    message: octo_app::skills::Prepared,
    show_thinking: bool,
) -> anyhow::Result<octo_app::TurnSummary> {
    let config = rustyline::Config::builder().auto_add_history(false).build();
    let ed: Ed = Editor::with_config(config)?;
    Ok(turn::turn_summarized(session, ed, message, show_thinking).await?.1)
}

/// The launcher and the first session: the setup wizard on a first run, a new session when the
/// one to continue is in use elsewhere; the exit code when none can start.
async fn open(cli: &Cli) -> Result<(Launcher, Session), ExitCode> {
    let mut launcher = Launcher::from_env();
    let mut first = launch::start_repl(&launcher, cli, None);
    if first.as_ref().is_err_and(octo_app::LaunchError::is_unconfigured)
        && crate::setup::first_run(&launcher).await
    {
        // The key may have gone into a new key file: look again.
        launcher = Launcher::from_env();
        first = launch::start_repl(&launcher, cli, None);
    }
    let started = match first {
        Err(e) if e.is_in_use() => {
            out::error(&e.to_string());
            out::status("octo: starting a new session instead");
            let fresh = Cli { continue_session: None, resume: None, ..cli.clone() };
            launch::start_repl(&launcher, &fresh, None)
        }
        other => other,
    };
    match started {
        Ok(s) => Ok((launcher, s)),
        Err(e) => {
            out::error(&e.to_string());
            Err(ExitCode::from(launch::exit_code(&e)))
        }
    }
}

/// "1 message", "18 messages".
fn messages(n: usize) -> String {
    if n == 1 {
        "1 message".to_owned()
    } else {
        format!("{n} messages")
    }
}

/// What the user is told as the REPL opens: the continued session, the notes, the banner.
async fn greet(cli: &Cli, session: &Session) {
    if cli.continue_session.is_some() || cli.resume.as_deref().is_some_and(|q| !q.is_empty()) {
        let history = session.conversation().history().await.unwrap_or_default();
        out::status(&format!(
            "octo: continuing session {} ({})",
            session.conversation().id().unwrap_or_default(),
            messages(history.len())
        ));
        recap::show(&history);
    }
    for n in session.conversation().notes() {
        out::status(&visible(&format!("octo: note: {n}")));
    }
    let st = session.status();
    out::status(&format!(
        "octo {} · {} · {} mode · /help for commands, Ctrl-D to leave",
        env!("CARGO_PKG_VERSION"),
        st.model,
        st.mode
    ));
}

/// The line editor: history, completion of commands and `@paths`, Ctrl-V to paste.
fn editor(
    launcher: &Launcher,
    session: &Session,
    workspace: &std::path::Path,
    status: std::sync::Arc<status::Shown>,
) -> anyhow::Result<Ed> {
    let config = rustyline::Config::builder().auto_add_history(false).max_history_size(2000)?.build();
    let mut ed: Ed = Editor::with_config(config)?;
    let expand = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    ed.set_helper(Some(OctoHelper {
        workspace: workspace.to_path_buf(),
        extra: user_commands(session),
        expand: std::sync::Arc::clone(&expand),
        status,
    }));
    ed.bind_sequence(
        rustyline::KeyEvent::ctrl('O'),
        rustyline::EventHandler::Conditional(Box::new(editor::ExpandKey(expand))),
    );
    ed.bind_sequence(
        rustyline::KeyEvent::ctrl('V'),
        rustyline::EventHandler::Conditional(Box::new(editor::Paste { dir: launcher.home().output() })),
    );
    let _ = ed.load_history(&launcher.home().history_file());
    Ok(ed)
}

/// What the loop does after a line.
enum Flow {
    /// Read the next one.
    Go(Ed),
    /// Leave.
    Leave(Ed),
}

/// The REPL's state between lines.
struct Repl<'a> {
    cli: &'a Cli,
    launcher: Launcher,
    session: Session,
    workspace: PathBuf,
    history: PathBuf,
    /// Background sub-agents' approvals waiting between turns.
    between: between::Between,
}

impl Repl<'_> {
    /// Before the first prompt: the project's servers and hooks are asked about, then the
    /// session to resume is picked, or an unanswered message is offered again.
    async fn start(&mut self, ed: Ed) -> anyhow::Result<Ed> {
        let mut ed = trust::approve_project_servers(&self.session, ed).await;
        ed = trust::trust_project_hooks(&self.session, ed).await;
        ed = trust::trust_project_grants(&self.session, ed).await;
        if self.cli.resume.as_deref() == Some("") {
            return self.command(ed, SessionCommand::Resume(None)).await;
        }
        offer_unanswered(&self.session, ed, self.cli.show_thinking).await
    }

    /// One line: a command, a skill or MCP prompt, or a message for the model.
    async fn line(&mut self, mut ed: Ed, line: String) -> anyhow::Result<Flow> {
        let _ = ed.add_history_entry(line.as_str());
        save_history(&mut ed, &self.history);
        if let Some(reply) = self.between.answer(&self.session, &line) {
            out::status(&reply);
            return Ok(Flow::Go(ed));
        }
        let thinking = self.cli.show_thinking;
        let ed = match slash::read(&line) {
            slash::Line::Invalid(why) => {
                out::error(&why);
                ed
            }
            slash::Line::Exit => return Ok(Flow::Leave(ed)),
            slash::Line::Expand => {
                expand(&self.session).await;
                ed
            }
            slash::Line::Shared(SessionCommand::Init) => init::run(&self.session, ed, thinking).await?,
            slash::Line::Shared(SessionCommand::Review(arg)) => {
                review::run(&self.session, ed, &arg, thinking).await?
            }
            slash::Line::Shared(command) => self.command(ed, command).await?,
            slash::Line::Other(name, _) if name.starts_with("/mcp__") => {
                match mcp_prompt(&self.session, line.trim()).await {
                    Some(text) => turn(&self.session, ed, octo_app::Message::user(text), thinking).await?,
                    None => ed,
                }
            }
            slash::Line::Other(name, arg) => match invoke::run(&self.session, ed, name, arg).await {
                (ed, Some(p)) => turn(&self.session, ed, p, thinking).await?,
                (ed, None) => ed,
            },
            slash::Line::Message => self.message(ed, &line).await?,
        };
        Ok(Flow::Go(ed))
    }

    /// A shared command; `/skills reload` refreshes completion, `/resume` switches sessions.
    async fn command(&mut self, ed: Ed, command: SessionCommand) -> anyhow::Result<Ed> {
        let reload = matches!(command, SessionCommand::Skills { reload: true });
        let (mut ed, done) = slash::run(&self.launcher, &self.session, ed, command).await;
        if reload {
            if let Some(h) = ed.helper_mut() {
                h.extra = user_commands(&self.session);
            }
        }
        if let slash::Done::Resume(id) = done {
            ed = switch_to(&self.launcher, self.cli, &mut self.session, ed, id).await?;
            self.between.watch(&self.session);
        }
        Ok(ed)
    }

    /// A message for the model (with its `@path` mentions attached); with `-v`, the usage after.
    async fn message(&self, ed: Ed, line: &str) -> anyhow::Result<Ed> {
        let message = expand_mentions(
            line,
            &self.workspace,
            self.session.conversation().accepts_images() != Some(false),
        );
        let ed = turn(&self.session, ed, message, self.cli.show_thinking).await?;
        if self.cli.verbose {
            let s = self.session.status();
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
        Ok(ed)
    }
}

/// `/expand`: the last tool call's output, whole.
async fn expand(session: &Session) {
    let history = session.conversation().history().await.unwrap_or_default();
    let last = history.iter().rev().flat_map(|m| m.content.iter().rev()).find_map(|b| match b {
        octo_app::ContentBlock::ToolResult { content, .. } => Some(content),
        _ => None,
    });
    match last {
        None => out::status("no tool output yet"),
        Some(parts) => {
            for p in parts {
                if let octo_app::ToolResultPart::Text { text } = p {
                    for l in text.lines() {
                        out::status(&visible(&format!("  {l}")));
                    }
                }
            }
        }
    }
}

/// The skills and commands the user may run, as `/name`, for completion.
fn user_commands(session: &Session) -> Vec<String> {
    session.skills().catalog().iter().filter(|s| s.user_invocable).map(|s| format!("/{}", s.name)).collect()
}

/// `/mcp__server__prompt ARGS`: the server's prompt, rendered, as the next message.
async fn mcp_prompt(session: &Session, line: &str) -> Option<String> {
    let mut words = line.split_whitespace();
    let command = words.next()?;
    let args: Vec<String> = words.map(str::to_owned).collect();
    let prompts = session.servers().prompts().await;
    let Some(p) = prompts.iter().find(|p| p.command == command) else {
        let known: Vec<&str> = prompts.iter().map(|p| p.command.as_str()).collect();
        out::error(&visible(&format!(
            "no MCP prompt {command}{}",
            if known.is_empty() { String::new() } else { format!("; there are: {}", known.join(", ")) }
        )));
        return None;
    };
    match session.servers().prompt_text(p, &args).await {
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
    let Some(text) = session.approvals().unanswered().map(str::to_owned) else { return Ok(ed) };
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
    match launch::start_repl(launcher, cli, Some(id.clone())) {
        Ok(s) => {
            drop(std::mem::replace(session, s));
            let history = session.conversation().history().await.unwrap_or_default();
            out::status(&format!("octo: resumed session {id} ({})", messages(history.len())));
            recap::show(&history);
            offer_unanswered(session, ed, cli.show_thinking).await
        }
        Err(e) => {
            out::error(&e.to_string());
            Ok(ed)
        }
    }
}
