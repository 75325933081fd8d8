//! One prompt: a `/command` line runs through the shared vocabulary (or a skill), a message is a
//! turn whose events stream to the editor as `session/update`s; approvals and the model's
//! questions go to the editor as `session/request_permission`.

use super::calls::Calls;
use super::content::{self, Input};
use super::state::{Acp, Live, OFFERED};
use agent_client_protocol::v1::schema::{
    ContentChunk, Cost, PermissionOption, PermissionOptionKind, Plan, PlanEntry, PlanEntryPriority,
    PlanEntryStatus, PromptResponse, RequestPermissionOutcome, RequestPermissionRequest, SessionNotification,
    SessionUpdate, StopReason, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, UsageUpdate,
};
use agent_client_protocol::{v1, Client, Error};
use octo_app::commands::{parse, Parsed};
use octo_app::{AgentEvent, ApprovalRequest, Session, TurnEndReason};
use tokio::sync::broadcast::error::RecvError;

/// What a prompt answers.
pub(super) type Response = PromptResponse;

type Cx = v1::ConnectionTo<Client>;

fn update(cx: &Cx, id: &str, u: SessionUpdate) -> Result<(), Error> {
    cx.send_notification(SessionNotification::new(id.to_owned(), u))
}

fn say(cx: &Cx, id: &str, text: impl Into<String>) -> Result<(), Error> {
    update(cx, id, SessionUpdate::AgentMessageChunk(ContentChunk::new(text.into().into())))
}

/// Runs one prompt to its end.
pub(super) async fn run(
    acp: &Acp,
    cx: &Cx,
    id: &str,
    live: &Live,
    prompt: Vec<agent_client_protocol::v1::schema::ContentBlock>,
) -> Result<PromptResponse, Error> {
    let session = &live.session;
    let prepared = match content::prompt(&prompt) {
        Input::Message(m) if m.content.is_empty() => {
            return Err(Error::new(-32602, "the prompt is empty"));
        }
        Input::Message(m) => octo_app::skills::Prepared::from(m),
        Input::Line(line) => match line_command(acp, cx, id, session, &line).await? {
            Some(p) => p,
            None => return Ok(PromptResponse::new(StopReason::EndTurn)),
        },
    };
    let mut rx = session.subscribe();
    session.prompt_prepared(prepared).map_err(|e| Error::new(-32603, e.to_string()))?;
    let mut error = None;
    let mut calls = Calls::default();
    loop {
        let ev = match rx.recv().await {
            Ok(ev) => ev,
            Err(RecvError::Lagged(_)) => continue,
            Err(RecvError::Closed) => return Err(Error::new(-32603, "the session ended")),
        };
        match ev {
            AgentEvent::TextDelta { text } => say(cx, id, text)?,
            AgentEvent::ThinkingDelta { text } => {
                update(cx, id, SessionUpdate::AgentThoughtChunk(ContentChunk::new(text.into())))?;
            }
            AgentEvent::ToolCallStart { id: call, name, input, summary } => {
                update(cx, id, calls.started(session, call, &name, input, summary))?;
            }
            AgentEvent::ToolCallEnd { id: call, name, output, is_error, summary, .. } => {
                update(cx, id, calls.ended(session, call, name, &output, is_error, summary))?;
            }
            AgentEvent::ToolUpdate { kind, .. } if kind == "todos" => update(cx, id, plan(session))?,
            AgentEvent::ToolUpdate { tool_use_id, kind, data }
                if kind == octo_app::subagents::PROGRESS_UPDATE =>
            {
                update(cx, id, calls.progress(tool_use_id, &data))?;
            }
            AgentEvent::ApprovalRequired { approval_id, request } => {
                if let Some(pending) = calls.asked(session, &request) {
                    update(cx, id, pending)?;
                }
                approve(cx, id, session, &approval_id, request).await;
            }
            AgentEvent::QuestionAsked { question_id, question, options, .. } => {
                ask(cx, id, session, &question_id, &question, &options).await?;
            }
            AgentEvent::Usage { .. } => update(cx, id, usage(session))?,
            AgentEvent::Error { message, .. } => error = Some(message),
            AgentEvent::TurnEnd { reason, stop_reason, .. } => {
                for failure in live.new_failures() {
                    say(cx, id, format!("\n\n(octo: {failure}; the session goes on without it)"))?;
                }
                return match reason {
                    TurnEndReason::Cancelled => Ok(PromptResponse::new(StopReason::Cancelled)),
                    TurnEndReason::MaxTurns => Ok(PromptResponse::new(StopReason::MaxTurnRequests)),
                    TurnEndReason::Failed => {
                        Err(Error::new(-32603, error.unwrap_or_else(|| "the turn failed".into())))
                    }
                    _ => Ok(PromptResponse::new(match stop_reason {
                        Some(octo_app::StopReason::MaxTokens) => StopReason::MaxTokens,
                        Some(octo_app::StopReason::Refusal) => StopReason::Refusal,
                        _ => StopReason::EndTurn,
                    })),
                };
            }
            _ => {}
        }
    }
}

/// A `/` line: a shared command's reply is said; a skill or custom command becomes the turn's
/// input (`Some`).
async fn line_command(
    acp: &Acp,
    cx: &Cx,
    id: &str,
    session: &Session,
    line: &str,
) -> Result<Option<octo_app::skills::Prepared>, Error> {
    match parse(line) {
        Parsed::Command(c) if OFFERED.contains(&c.name()) => {
            let text = match session.command(&acp.launcher, c).await {
                Ok(reply) => reply.lines().join("\n"),
                Err(e) => e.to_string(),
            };
            say(cx, id, text)?;
            Ok(None)
        }
        Parsed::Command(c) => {
            say(cx, id, format!("{} needs octo's terminal; run it in the REPL", c.name()))?;
            Ok(None)
        }
        Parsed::Invalid(why) => {
            say(cx, id, why)?;
            Ok(None)
        }
        Parsed::Other(word, arg) => match crate::invoke::headless(session, word, arg).await {
            Some(Ok(p)) => Ok(Some(p)),
            Some(Err(e)) => {
                say(cx, id, e)?;
                Ok(None)
            }
            None => {
                say(
                    cx,
                    id,
                    format!("{word} is not a command, skill or custom command here; /help lists them"),
                )?;
                Ok(None)
            }
        },
        Parsed::Message => Ok(Some(octo_app::Message::user(line).into())),
    }
}

/// An approval asked of the editor: allow or reject, once or always (octo's "a" answer, the
/// same scope either way: this command, this file, this tool).
async fn approve(cx: &Cx, id: &str, session: &Session, approval_id: &str, request: ApprovalRequest) {
    let options = vec![
        PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce),
        PermissionOption::new("always", "Always allow", PermissionOptionKind::AllowAlways),
        PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
        PermissionOption::new("never", "Always reject", PermissionOptionKind::RejectAlways),
    ];
    let kind = content::kind(session.tool_meta(&request.tool).as_ref());
    let (locations, diffs) = content::call_view(&request.tool, &request.input, session.workspace());
    let mut title = request.summary.clone();
    if let Some(reason) = &request.reason {
        title.push_str(&format!(" ({reason})"));
    }
    let fields = ToolCallUpdateFields::new()
        .title(title)
        .kind(kind)
        .status(ToolCallStatus::Pending)
        .raw_input(request.input.clone())
        .locations(locations)
        .content(diffs);
    let ask = RequestPermissionRequest::new(
        id.to_owned(),
        ToolCallUpdate::new(request.tool_use_id.clone(), fields),
        options,
    );
    let chosen = match cx.send_request(ask).block_task().await {
        Ok(r) => match r.outcome {
            RequestPermissionOutcome::Selected(s) => Some(s.option_id.0.to_string()),
            _ => None,
        },
        Err(_) => None,
    };
    let _ = match chosen.as_deref() {
        Some("allow") => session.approve(approval_id),
        Some("always") => session.approve_always(approval_id),
        Some("never") => session
            .reject_always(approval_id, Some("the user rejected this for the session in the editor".into())),
        Some(_) => session.reject(approval_id, Some("the user rejected this in the editor".into())),
        None => session.reject(approval_id, Some("the request was cancelled in the editor".into())),
    };
}

/// The model's question: its options as the permission request's choices; without options the
/// editor cannot take a typed answer, so the question is shown and the model told.
async fn ask(
    cx: &Cx,
    id: &str,
    session: &Session,
    question_id: &str,
    question: &str,
    options: &[String],
) -> Result<(), Error> {
    if options.is_empty() {
        say(cx, id, format!("\n\n**octo asks:** {question}\n\n"))?;
        let _ = session.answer(
            question_id,
            "(asked in an editor that cannot take a typed answer: go on with your best judgement and say what you assumed)",
        );
        return Ok(());
    }
    let choices = options
        .iter()
        .enumerate()
        .map(|(i, o)| PermissionOption::new(i.to_string(), o.clone(), PermissionOptionKind::AllowOnce))
        .collect();
    let call =
        ToolCallUpdate::new(question_id.to_owned(), ToolCallUpdateFields::new().title(question.to_owned()));
    let chosen =
        match cx.send_request(RequestPermissionRequest::new(id.to_owned(), call, choices)).block_task().await
        {
            Ok(r) => match r.outcome {
                RequestPermissionOutcome::Selected(s) => {
                    s.option_id.0.parse::<usize>().ok().and_then(|i| options.get(i))
                }
                _ => None,
            },
            Err(_) => None,
        };
    let _ = session.answer(question_id, chosen.map_or("", String::as_str));
    Ok(())
}

/// The model's task list as the editor's plan.
fn plan(session: &Session) -> SessionUpdate {
    let entries = session
        .todos()
        .into_iter()
        .map(|t| {
            let status = match t.status {
                octo_app::TodoStatus::InProgress => PlanEntryStatus::InProgress,
                octo_app::TodoStatus::Completed => PlanEntryStatus::Completed,
                _ => PlanEntryStatus::Pending,
            };
            PlanEntry::new(t.content, PlanEntryPriority::Medium, status)
        })
        .collect();
    SessionUpdate::Plan(Plan::new(entries))
}

/// How full the context is, and the cost so far.
fn usage(session: &Session) -> SessionUpdate {
    let s = session.status();
    let mut u = UsageUpdate::new(s.context_tokens, s.context_window.unwrap_or(0));
    if let Some(c) = s.cost_usd {
        u = u.cost(Cost::new(c, "USD"));
    }
    SessionUpdate::UsageUpdate(u)
}
