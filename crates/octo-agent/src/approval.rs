//! Permission checks and approvals.
//!
//! Before every tool call the loop asks a [`PermissionGate`] (octo-app implements the real rule
//! engine). An `Ask` decision becomes an [`AgentEvent::ApprovalRequired`] carrying an approval id;
//! any front end may answer it through [`ApprovalBroker::resolve`]. A turn that nobody watches
//! (see [`crate::Agent::turn`]) cannot be answered, so its approvals are denied with a message the
//! model can act on.

use crate::event::AgentEvent;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use thiserror::Error;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// A tool call as the permission gate sees it.
#[derive(Debug, Clone, Copy)]
pub struct PermissionQuery<'a> {
    /// Call id.
    pub tool_use_id: &'a str,
    /// Tool name.
    pub tool: &'a str,
    /// Arguments.
    pub input: &'a Value,
    /// Whether the tool declares itself read-only (`false` for unknown tools).
    pub read_only: bool,
    /// The workspace directory.
    pub cwd: &'a Path,
}

/// The gate's answer for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionDecision {
    /// Run it.
    Allow,
    /// Ask the user first.
    Ask {
        /// What to show (the full command or path); defaults to the tool and its arguments.
        summary: Option<String>,
        /// Why it needs approval.
        reason: Option<String>,
    },
    /// Refuse; the message goes to the model as an error result.
    Deny {
        /// What the model is told, including what it may do instead.
        message: String,
    },
}

/// Decides, before each tool call, whether it runs, needs approval, or is refused.
pub trait PermissionGate: Send + Sync {
    /// The decision for one call.
    fn check(&self, query: &PermissionQuery<'_>) -> PermissionDecision;

    /// Called after the user answered an approval for this call, so "always allow" can be
    /// remembered. The default does nothing.
    fn remember(&self, _query: &PermissionQuery<'_>, _decision: &ApprovalDecision) {}
}

/// A gate that allows every call. The core enforces nothing by itself; applications install their
/// own gate (octo-app's rule engine) with [`crate::AgentBuilder::permission_gate`].
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

impl PermissionGate for AllowAll {
    fn check(&self, _query: &PermissionQuery<'_>) -> PermissionDecision {
        PermissionDecision::Allow
    }
}

/// A gate that allows read-only tools and asks for everything else.
#[derive(Debug, Clone, Copy, Default)]
pub struct AskForWrites;

impl PermissionGate for AskForWrites {
    fn check(&self, query: &PermissionQuery<'_>) -> PermissionDecision {
        if query.read_only {
            PermissionDecision::Allow
        } else {
            PermissionDecision::Ask { summary: None, reason: None }
        }
    }
}

/// What a front end is asked to approve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// The tool call it belongs to.
    pub tool_use_id: String,
    /// Tool name.
    pub tool: String,
    /// The call's arguments.
    pub input: Value,
    /// What to show the user: the full command, path or URL.
    pub summary: String,
    /// Why approval is needed, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl ApprovalRequest {
    /// A request from its parts, without a reason.
    pub fn new(
        tool_use_id: impl Into<String>,
        tool: impl Into<String>,
        input: Value,
        summary: impl Into<String>,
    ) -> Self {
        Self {
            tool_use_id: tool_use_id.into(),
            tool: tool.into(),
            input,
            summary: summary.into(),
            reason: None,
        }
    }
}

/// The user's answer to an approval request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Allow this once.
    Allow,
    /// Allow, and remember for the rest of the session.
    AllowAlways,
    /// Refuse; the optional message is passed to the model.
    Deny {
        /// What the user wants the model to know.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
}

impl ApprovalDecision {
    /// Whether the call may run.
    pub fn is_allowed(&self) -> bool {
        matches!(self, Self::Allow | Self::AllowAlways)
    }
}

/// An approval id that is not pending (never issued, already answered, or its turn ended).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("no pending approval with id `{0}` (it was already answered, or its turn ended)")]
pub struct UnknownApproval(pub String);

/// Pending approvals by id. Cloned handles share the same set, so any front end holding one can
/// answer.
#[derive(Debug, Default)]
pub struct ApprovalBroker {
    pending: Mutex<HashMap<String, oneshot::Sender<ApprovalDecision>>>,
    questions: Mutex<HashMap<String, oneshot::Sender<String>>>,
    next: AtomicU64,
}

impl ApprovalBroker {
    /// An empty broker.
    pub fn new() -> Self {
        Self::default()
    }

    /// Answers a pending approval.
    pub fn resolve(&self, id: &str, decision: ApprovalDecision) -> Result<(), UnknownApproval> {
        let sender = self.lock().remove(id).ok_or_else(|| UnknownApproval(id.to_owned()))?;
        sender.send(decision).map_err(|_| UnknownApproval(id.to_owned()))
    }

    /// Ids of the approvals waiting for an answer.
    pub fn pending(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.lock().keys().cloned().collect();
        ids.sort();
        ids
    }

    /// Answers a pending question (from [`AgentEvent::QuestionAsked`]) with the user's text.
    pub fn answer(&self, id: &str, answer: impl Into<String>) -> Result<(), UnknownApproval> {
        let sender = lock(&self.questions).remove(id).ok_or_else(|| UnknownApproval(id.to_owned()))?;
        sender.send(answer.into()).map_err(|_| UnknownApproval(id.to_owned()))
    }

    /// Ids of the questions waiting for an answer.
    pub fn pending_questions(&self) -> Vec<String> {
        let mut ids: Vec<String> = lock(&self.questions).keys().cloned().collect();
        ids.sort();
        ids
    }

    fn register_question(&self) -> (String, oneshot::Receiver<String>) {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let id = format!("question-{n}");
        let (tx, rx) = oneshot::channel();
        lock(&self.questions).insert(id.clone(), tx);
        (id, rx)
    }

    fn forget_question(&self, id: &str) {
        lock(&self.questions).remove(id);
    }

    fn register(&self) -> (String, oneshot::Receiver<ApprovalDecision>) {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let id = format!("approval-{n}");
        let (tx, rx) = oneshot::channel();
        self.lock().insert(id.clone(), tx);
        (id, rx)
    }

    fn forget(&self, id: &str) {
        self.lock().remove(id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<ApprovalDecision>>> {
        lock(&self.pending)
    }
}

/// A poisoned map is still a valid map: a panic elsewhere must not wedge approvals.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

struct ForgetQuestion<'a> {
    broker: &'a ApprovalBroker,
    id: &'a str,
}

impl Drop for ForgetQuestion<'_> {
    fn drop(&mut self) {
        self.broker.forget_question(self.id);
    }
}

struct Forget<'a> {
    broker: &'a ApprovalBroker,
    id: &'a str,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.broker.forget(self.id);
    }
}

/// The per-turn link to the front end: where events go and how approvals are answered.
#[derive(Debug)]
pub(crate) struct TurnChannel {
    events: mpsc::UnboundedSender<AgentEvent>,
    broker: Arc<ApprovalBroker>,
    interactive: bool,
}

pub(crate) const NO_FRONT_END: &str =
    "this action needs the user's approval, but the turn runs without anyone to ask. \
Do something that needs no approval, or tell the user what you would like to run.";

impl TurnChannel {
    pub(crate) fn new(
        events: mpsc::UnboundedSender<AgentEvent>,
        broker: Arc<ApprovalBroker>,
        interactive: bool,
    ) -> Self {
        Self { events, broker, interactive }
    }

    pub(crate) fn emit(&self, event: AgentEvent) {
        // A front end that stopped listening must not stop the turn.
        let _ = self.events.send(event);
    }

    /// Asks the user a question; `None` when nobody can answer or the turn is cancelled.
    pub(crate) async fn ask(
        &self,
        tool_use_id: &str,
        question: &str,
        options: &[String],
        cancel: &CancellationToken,
    ) -> Option<String> {
        if !self.interactive {
            return None;
        }
        let (id, rx) = self.broker.register_question();
        let _forget = ForgetQuestion { broker: &self.broker, id: &id };
        self.emit(AgentEvent::QuestionAsked {
            question_id: id.clone(),
            tool_use_id: tool_use_id.to_owned(),
            question: question.to_owned(),
            options: options.to_vec(),
        });
        let answer = tokio::select! {
            a = rx => a.ok(),
            () = cancel.cancelled() => None,
        };
        if let Some(a) = &answer {
            self.emit(AgentEvent::QuestionAnswered { question_id: id.clone(), answer: a.clone() });
        }
        answer
    }

    pub(crate) async fn request_approval(
        &self,
        request: ApprovalRequest,
        cancel: &CancellationToken,
    ) -> ApprovalDecision {
        if !self.interactive {
            return ApprovalDecision::Deny { message: Some(NO_FRONT_END.into()) };
        }
        let (id, rx) = self.broker.register();
        // However this wait ends — answer, cancellation, or the turn being dropped — the id
        // leaves the pending set.
        let _forget = Forget { broker: &self.broker, id: &id };
        self.emit(AgentEvent::ApprovalRequired { approval_id: id.clone(), request });
        let decision = tokio::select! {
            answer = rx => answer.unwrap_or(ApprovalDecision::Deny { message: Some("the approval was dropped".into()) }),
            () = cancel.cancelled() => ApprovalDecision::Deny { message: Some("the turn was cancelled".into()) },
        };
        self.emit(AgentEvent::ApprovalResolved { approval_id: id.clone(), decision: decision.clone() });
        decision
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_approval_id_is_a_clear_error() {
        let b = ApprovalBroker::new();
        let err = b.resolve("approval-9", ApprovalDecision::Allow).unwrap_err();
        assert!(err.to_string().contains("approval-9"));
    }

    #[tokio::test]
    async fn approval_round_trip_through_events() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let broker = Arc::new(ApprovalBroker::new());
        let ch = TurnChannel::new(tx, broker.clone(), true);
        let cancel = CancellationToken::new();
        let req = ApprovalRequest::new("t1", "terminal", json!({"command": "make"}), "make");
        let answer = async {
            let Some(AgentEvent::ApprovalRequired { approval_id, request }) = rx.recv().await else {
                panic!()
            };
            assert_eq!(request.summary, "make");
            assert_eq!(broker.pending(), vec![approval_id.clone()]);
            broker.resolve(&approval_id, ApprovalDecision::AllowAlways).unwrap();
            // answered once only
            assert!(broker.resolve(&approval_id, ApprovalDecision::Allow).is_err());
        };
        let (decision, ()) = tokio::join!(ch.request_approval(req, &cancel), answer);
        assert_eq!(decision, ApprovalDecision::AllowAlways);
        assert!(matches!(rx.recv().await, Some(AgentEvent::ApprovalResolved { .. })));
    }

    #[tokio::test]
    async fn cancellation_denies_and_forgets() {
        let (tx, _rx) = mpsc::unbounded_channel();
        let broker = Arc::new(ApprovalBroker::new());
        let ch = TurnChannel::new(tx, broker.clone(), true);
        let cancel = CancellationToken::new();
        cancel.cancel();
        let d = ch.request_approval(ApprovalRequest::new("t", "x", json!({}), "x"), &cancel).await;
        assert!(!d.is_allowed());
        assert!(broker.pending().is_empty());
    }

    #[tokio::test]
    async fn questions_are_asked_and_answered_by_id() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let broker = Arc::new(ApprovalBroker::new());
        let ch = TurnChannel::new(tx, broker.clone(), true);
        let cancel = CancellationToken::new();
        let options = vec!["yes".to_owned(), "no".to_owned()];
        let answer = async {
            let Some(AgentEvent::QuestionAsked { question_id, question, options, .. }) = rx.recv().await
            else {
                panic!()
            };
            assert_eq!((question.as_str(), options.len()), ("Proceed?", 2));
            assert_eq!(broker.pending_questions(), vec![question_id.clone()]);
            broker.answer(&question_id, "yes, go").unwrap();
            assert!(broker.answer(&question_id, "again").is_err());
        };
        let (got, ()) = tokio::join!(ch.ask("t1", "Proceed?", &options, &cancel), answer);
        assert_eq!(got.as_deref(), Some("yes, go"));
        assert!(broker.pending_questions().is_empty());
        let (tx, _rx) = mpsc::unbounded_channel();
        let unattended = TurnChannel::new(tx, broker.clone(), false);
        assert_eq!(unattended.ask("t", "q", &[], &cancel).await, None);
    }

    #[test]
    fn decision_serde_shape() {
        assert_eq!(
            serde_json::to_value(ApprovalDecision::AllowAlways).unwrap(),
            json!({"decision": "allow_always"})
        );
        let d: ApprovalDecision =
            serde_json::from_value(json!({"decision": "deny", "message": "no"})).unwrap();
        assert_eq!(d, ApprovalDecision::Deny { message: Some("no".into()) });
    }
}
