//! The per-turn link between the loop and the front ends: where events go, and how approvals
//! and questions are asked and answered.

use crate::approval::{ApprovalBroker, ApprovalDecision, ApprovalRequest};
use crate::event::AgentEvent;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Removes a question id from the broker however the wait ends.
struct ForgetQuestion<'a> {
    broker: &'a ApprovalBroker,
    id: &'a str,
}

impl Drop for ForgetQuestion<'_> {
    fn drop(&mut self) {
        self.broker.forget_question(self.id);
    }
}

/// Removes an approval id from the broker however the wait ends.
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

    /// Asks the front end to approve a call and says who settled it.
    pub(crate) async fn ask_approval(
        &self,
        request: ApprovalRequest,
        cancel: &CancellationToken,
    ) -> (ApprovalDecision, AnsweredBy) {
        if !self.interactive {
            return (ApprovalDecision::Deny { message: Some(NO_FRONT_END.into()) }, AnsweredBy::Nobody);
        }
        let (id, rx) = self.broker.register();
        // However this wait ends — answer, cancellation, or the turn being dropped — the id
        // leaves the pending set.
        let _forget = Forget { broker: &self.broker, id: &id };
        self.emit(AgentEvent::ApprovalRequired { approval_id: id.clone(), request });
        let (decision, by) = tokio::select! {
            answer = rx => match answer {
                Ok(d) => (d, AnsweredBy::User),
                Err(_) => (ApprovalDecision::Deny { message: Some("the approval was dropped".into()) }, AnsweredBy::Nobody),
            },
            () = cancel.cancelled() => (ApprovalDecision::Deny { message: Some("the turn was cancelled".into()) }, AnsweredBy::Cancelled),
        };
        self.emit(AgentEvent::ApprovalResolved { approval_id: id.clone(), decision: decision.clone() });
        (decision, by)
    }
}

/// Who settled an approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnsweredBy {
    /// The user, through a front end.
    User,
    /// Nobody could be asked (an unattended turn) or the request was dropped.
    Nobody,
    /// The turn was cancelled while waiting.
    Cancelled,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approval::ApprovalBroker;
    use serde_json::json;

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
        let ((decision, by), ()) = tokio::join!(ch.ask_approval(req, &cancel), answer);
        assert_eq!((decision, by), (ApprovalDecision::AllowAlways, AnsweredBy::User));
        assert!(matches!(rx.recv().await, Some(AgentEvent::ApprovalResolved { .. })));
    }

    #[tokio::test]
    async fn cancellation_denies_and_forgets() {
        let (tx, _rx) = mpsc::unbounded_channel();
        let broker = Arc::new(ApprovalBroker::new());
        let ch = TurnChannel::new(tx, broker.clone(), true);
        let cancel = CancellationToken::new();
        cancel.cancel();
        let (d, by) = ch.ask_approval(ApprovalRequest::new("t", "x", json!({}), "x"), &cancel).await;
        assert!(!d.is_allowed());
        assert_eq!(by, AnsweredBy::Cancelled);
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
}
