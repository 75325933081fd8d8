//! One prompt: a `/command` line runs through the shared vocabulary (or a skill), a message is a
//! turn whose fold changes stream to the editor as `session/update`s; approvals and the model's
//! questions go to the editor as `session/request_permission`. Each reply's chunks carry a
//! message id of their own; a reply that broke off and starts again does so under a new one
//! (ACP has no way to take back what was sent: a new `messageId` starts a new message), after a
//! line in the broken one saying it is discarded.

use super::calls::Calls;
use super::content::{self, Input};
use super::state::{Acp, Live, FRONT};
use agent_client_protocol::v1::schema::{
    ContentChunk, Cost, PermissionOption, PermissionOptionKind, Plan, PlanEntry, PlanEntryPriority,
    PlanEntryStatus, PromptResponse, RequestPermissionOutcome, RequestPermissionRequest, SessionNotification,
    SessionUpdate, StopReason, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, UsageUpdate,
};
use agent_client_protocol::{v1, Client, Error};
use octo_app::commands::Parsed;
use octo_app::{ApprovalRequest, Change, Session, ToolOutcome, TurnEndReason, TurnFold};
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

/// The message the answer's chunks belong to: a new one for each reply, and for a reply that
/// starts again.
struct Reply {
    prefix: String,
    number: u32,
    said: bool,
}

impl Reply {
    fn new(session: &str) -> Self {
        let nonce =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        Self { prefix: format!("{session}-{nonce:x}"), number: 0, said: false }
    }

    fn next(&mut self) {
        self.number += 1;
        self.said = false;
    }

    fn say(&mut self, cx: &Cx, id: &str, text: &str) -> Result<(), Error> {
        self.said = true;
        let message =
            agent_client_protocol::v1::schema::MessageId::new(format!("{}-{}", self.prefix, self.number));
        let chunk = ContentChunk::new(text.to_owned().into()).message_id(message);
        update(cx, id, SessionUpdate::AgentMessageChunk(chunk))
    }
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
    session.prompt(prepared).map_err(|e| Error::new(-32603, e.to_string()))?;
    let mut turn =
        Turn { error: None, calls: Calls::default(), reply: Reply::new(id), fold: TurnFold::new() };
    loop {
        let ev = match rx.recv().await {
            Ok(ev) => ev,
            Err(RecvError::Lagged(_)) => continue,
            Err(RecvError::Closed) => return Err(Error::new(-32603, "the session ended")),
        };
        for change in turn.fold.push(&ev) {
            if let Some(end) = turn.change(cx, id, session, &change).await? {
                for failure in live.new_failures() {
                    say(cx, id, format!("\n\n(octo: {failure}; the session goes on without it)"))?;
                }
                return end;
            }
        }
    }
}

/// A turn as the editor sees it.
struct Turn {
    error: Option<String>,
    calls: Calls,
    reply: Reply,
    fold: TurnFold,
}

impl Turn {
    /// Sends what one change means to the editor; the prompt's answer once the turn is over.
    async fn change(
        &mut self,
        cx: &Cx,
        id: &str,
        session: &Session,
        change: &Change<'_>,
    ) -> Result<Option<Result<PromptResponse, Error>>, Error> {
        match change {
            Change::Request { continues: false } => self.reply.next(),
            Change::AnswerDelta(text) => self.reply.say(cx, id, text)?,
            Change::AnswerRestarted { .. } => {
                if self.reply.said {
                    self.reply.say(
                        cx,
                        id,
                        " — (the reply broke off here; it is discarded and starts again)",
                    )?;
                }
                self.reply.next();
            }
            Change::Thinking(text) => {
                update(cx, id, SessionUpdate::AgentThoughtChunk(ContentChunk::new(text.to_string().into())))?;
            }
            Change::ToolStarted { id: call, name, input, summary } => {
                let u = self.calls.started(
                    session,
                    call.to_string(),
                    name,
                    (*input).clone(),
                    summary.to_string(),
                );
                update(cx, id, u)?;
            }
            Change::ToolEnded { record, output, .. } => {
                let failed = record.outcome != ToolOutcome::Ran;
                let u = self.calls.ended(
                    session,
                    record.id.clone(),
                    record.name.clone(),
                    output,
                    failed,
                    record.summary.clone(),
                );
                update(cx, id, u)?;
            }
            Change::Todos(todos) => update(cx, id, plan(todos))?,
            Change::Subagent { call, progress } => {
                update(cx, id, self.calls.progress(call.to_string(), progress))?;
            }
            Change::Approval { id: approval_id, request } => {
                if let Some(pending) = self.calls.asked(session, request) {
                    update(cx, id, pending)?;
                }
                approve(cx, id, session, approval_id, (*request).clone()).await;
            }
            Change::Question { id: question_id, question, options, .. } => {
                ask(cx, id, session, question_id, question, options).await?;
            }
            Change::Usage(_) => update(cx, id, usage(session))?,
            Change::Error(message) => self.error = Some(message.to_string()),
            Change::Ended { reason, stop_reason } => {
                return Ok(Some(match reason {
                    TurnEndReason::Cancelled => Ok(PromptResponse::new(StopReason::Cancelled)),
                    TurnEndReason::MaxTurns => Ok(PromptResponse::new(StopReason::MaxTurnRequests)),
                    TurnEndReason::Failed => {
                        Err(Error::new(-32603, self.error.take().unwrap_or_else(|| "the turn failed".into())))
                    }
                    _ => Ok(PromptResponse::new(match stop_reason {
                        Some(octo_app::StopReason::MaxTokens) => StopReason::MaxTokens,
                        Some(octo_app::StopReason::Refusal) => StopReason::Refusal,
                        _ => StopReason::EndTurn,
                    })),
                }));
            }
            _ => {}
        }
        Ok(None)
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
    match FRONT.read(line) {
        Parsed::Command(c) => {
            let text = match session.command(&acp.launcher, c).await {
                Ok(octo_app::commands::Reply::Help(_)) => FRONT.help_lines().join("\n"),
                Ok(reply) => reply.lines().join("\n"),
                Err(e) => e.to_string(),
            };
            say(cx, id, text)?;
            Ok(None)
        }
        Parsed::Refused(why) | Parsed::Invalid(why) => {
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
                let skills: Vec<String> = session
                    .skills()
                    .catalog()
                    .iter()
                    .filter(|s| s.user_invocable)
                    .map(|s| format!("/{}", s.name))
                    .collect();
                say(cx, id, FRONT.unknown(word, skills.iter().map(String::as_str)))?;
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
    let kind = content::kind(session.tools().meta(&request.tool).as_ref());
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
        Some("allow") => session.approvals().approve(approval_id),
        Some("always") => session.approvals().approve_always(approval_id),
        Some("never") => session
            .approvals()
            .reject_always(approval_id, Some("the user rejected this for the session in the editor".into())),
        Some(_) => {
            session.approvals().reject(approval_id, Some("the user rejected this in the editor".into()))
        }
        None => {
            session.approvals().reject(approval_id, Some("the request was cancelled in the editor".into()))
        }
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
        let _ = session.approvals().answer(
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
    let _ = session.approvals().answer(question_id, chosen.map_or("", String::as_str));
    Ok(())
}

/// The model's task list as the editor's plan.
fn plan(todos: &[octo_app::Todo]) -> SessionUpdate {
    let entries = todos
        .iter()
        .cloned()
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
