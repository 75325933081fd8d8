//! `session/load`: a saved conversation told to the editor again, as the updates it would have
//! seen — the user's messages, the answers, the thinking, and each tool call with its result.

use super::content;
use agent_client_protocol::v1::schema::{
    ContentChunk, SessionNotification, SessionUpdate, ToolCall, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields,
};
use agent_client_protocol::{v1, Client, Error};
use octo_app::{ContentBlock, Role, Session, ToolResultPart};

/// Sends the session's history as updates.
pub(super) async fn history(cx: &v1::ConnectionTo<Client>, id: &str, session: &Session) -> Result<(), Error> {
    let send = |u: SessionUpdate| cx.send_notification(SessionNotification::new(id.to_owned(), u));
    let history = session.conversation().history().await.map_err(|e| Error::new(-32603, e.to_string()))?;
    for m in &history {
        for b in &m.content {
            match (m.role, b) {
                (Role::User, ContentBlock::Text { text }) => {
                    send(SessionUpdate::UserMessageChunk(ContentChunk::new(text.clone().into())))?;
                }
                (Role::Assistant, ContentBlock::Text { text }) => {
                    send(SessionUpdate::AgentMessageChunk(ContentChunk::new(text.clone().into())))?;
                }
                (Role::Assistant, ContentBlock::Thinking { thinking, .. }) => {
                    send(SessionUpdate::AgentThoughtChunk(ContentChunk::new(thinking.clone().into())))?;
                }
                (_, ContentBlock::ToolUse { id: call, name, input }) => {
                    let kind = content::kind(session.tools().meta(name).as_ref());
                    let (locations, diffs) = content::call_view(name, input, session.workspace());
                    let tc = ToolCall::new(call.clone(), name.clone())
                        .kind(kind)
                        .status(ToolCallStatus::InProgress)
                        .raw_input(input.clone())
                        .locations(locations)
                        .content(diffs);
                    send(SessionUpdate::ToolCall(tc))?;
                }
                (_, ContentBlock::ToolResult { tool_use_id, content: parts, is_error }) => {
                    let text: Vec<&str> = parts.iter().filter_map(ToolResultPart::as_text).collect();
                    let status = if *is_error { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
                    let fields = ToolCallUpdateFields::new()
                        .status(status)
                        .content(vec![content::output(&text.join("\n"))]);
                    send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(tool_use_id.clone(), fields)))?;
                }
                _ => {}
            }
        }
    }
    Ok(())
}
