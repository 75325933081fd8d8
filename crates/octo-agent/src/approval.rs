//! Permission checks and approvals, as data and traits.
//!
//! Before every tool call the loop asks a [`PermissionGate`] (octo-app implements the real rule
//! engine). An `Ask` decision becomes an [`crate::AgentEvent::ApprovalRequired`] carrying an
//! approval id; any front end may answer it through [`ApprovalBroker::resolve`]. A turn that
//! nobody watches (see [`crate::Agent::turn`]) cannot be answered, so its approvals are denied
//! with a message the model can act on.

use crate::spec::ToolMeta;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use thiserror::Error;
use tokio::sync::oneshot;

/// A tool call as the permission gate sees it.
#[derive(Debug, Clone, Copy)]
pub struct PermissionQuery<'a> {
    /// Call id.
    pub tool_use_id: &'a str,
    /// Tool name.
    pub tool: &'a str,
    /// Arguments.
    pub input: &'a Value,
    /// How the tool describes itself: what to check (its subject), whether it only reads.
    pub meta: &'a ToolMeta,
    /// The workspace directory.
    pub cwd: &'a Path,
}

impl PermissionQuery<'_> {
    /// The name rules use for the tool: its declared rule name, else its own.
    pub fn rule_name(&self) -> &str {
        self.meta.rule_name.as_deref().unwrap_or(self.tool)
    }

    /// The text of the call's subject argument (its path, command or URL), when it has one.
    pub fn subject_value(&self) -> Option<&str> {
        self.meta.subject.value(self.input)
    }
}

/// Why a gate refused a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DenyKind {
    /// A deny rule matched.
    Rule,
    /// The mode allows only read-only tools.
    PlanMode,
    /// The command is on the hard-deny list, refused in every mode.
    HardDeny,
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
        /// Why.
        kind: DenyKind,
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
        if query.meta.read_only {
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
    /// The argument a front end may let the user edit before allowing (the command of a
    /// command tool), answered with [`ApprovalDecision::Edited`]; `None`: no edit offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub editable: Option<String>,
    /// What the call is asked for, in a word that fits the tool: `edit`, `write`, `run`, `fetch`
    /// ([`crate::ToolMeta::verb`]).
    #[serde(default = "default_action")]
    pub action: String,
    /// What it would do, shown before the user answers: the diff of an edit, the head of a new
    /// file ([`crate::ToolExecutor::preview`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<crate::spec::Preview>,
    /// Where a command would run (its working directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

fn default_action() -> String {
    "use".to_owned()
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
            editable: None,
            action: default_action(),
            preview: None,
            cwd: None,
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
    /// Refuse, and refuse calls like it for the rest of the session without asking (the same
    /// scope "always" has when allowing: this command, this file, this tool, this host).
    DenyAlways {
        /// What the user wants the model to know.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// Run it with these arguments instead (the user edited the call, say the command). The
    /// edited call is checked by the permission gate again (a deny rule or the hard-deny list
    /// still refuse it), then runs as approved; the model is told it was edited. A tool's own
    /// question does not take edits: there it counts as a refusal.
    Edited {
        /// The arguments to run with.
        input: Value,
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

    /// Answers a pending question (from [`crate::AgentEvent::QuestionAsked`]) with the user's text.
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

    pub(crate) fn register_question(&self) -> (String, oneshot::Receiver<String>) {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let id = format!("question-{n}");
        let (tx, rx) = oneshot::channel();
        lock(&self.questions).insert(id.clone(), tx);
        (id, rx)
    }

    /// Drops a pending question unanswered: the asker hears that nobody could answer (as in an
    /// unattended turn), not an empty answer.
    pub fn decline_question(&self, id: &str) {
        self.forget_question(id);
    }

    pub(crate) fn forget_question(&self, id: &str) {
        lock(&self.questions).remove(id);
    }

    /// Registers an approval asked for outside a turn of this broker's agent (a background
    /// sub-agent's, after its parent's turn ended): the caller sends
    /// [`crate::AgentEvent::ApprovalRequired`] with the id itself, and the front end answers it
    /// with [`ApprovalBroker::resolve`] like any other. [`ApprovalBroker::forget_pending`] drops
    /// it when nobody needs the answer any more.
    pub fn register_pending(&self) -> (String, oneshot::Receiver<ApprovalDecision>) {
        self.register()
    }

    /// Drops a pending approval registered with [`ApprovalBroker::register_pending`].
    pub fn forget_pending(&self, id: &str) {
        self.forget(id);
    }

    pub(crate) fn register(&self) -> (String, oneshot::Receiver<ApprovalDecision>) {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let id = format!("approval-{n}");
        let (tx, rx) = oneshot::channel();
        self.lock().insert(id.clone(), tx);
        (id, rx)
    }

    pub(crate) fn forget(&self, id: &str) {
        self.lock().remove(id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<ApprovalDecision>>> {
        lock(&self.pending)
    }
}

/// A poisoned map is still a valid map: a panic elsewhere must not wedge approvals.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
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
