//! Answering the session's pending tool calls and questions, and its permission mode and rules.

use super::handles::{Approvals, Permissions};
use crate::permissions::{Mode, Rule};
use octo_agent::{ApprovalDecision, UnknownApproval};

impl<'a> Approvals<'a> {
    /// Allows a pending tool call once.
    pub fn approve(self, approval_id: &str) -> Result<(), UnknownApproval> {
        self.session.broker.resolve(approval_id, ApprovalDecision::Allow)
    }

    /// Allows a pending tool call with arguments the user changed (an edited command). The
    /// permission gate checks them again; the model is told they were edited.
    pub fn approve_edited(self, approval_id: &str, input: serde_json::Value) -> Result<(), UnknownApproval> {
        self.session.broker.resolve(approval_id, ApprovalDecision::Edited { input })
    }

    /// Allows a pending tool call and remembers the answer for the rest of the session.
    pub fn approve_always(self, approval_id: &str) -> Result<(), UnknownApproval> {
        self.session.broker.resolve(approval_id, ApprovalDecision::AllowAlways)
    }

    /// Refuses a pending tool call; `message` is passed to the model.
    pub fn reject(self, approval_id: &str, message: Option<String>) -> Result<(), UnknownApproval> {
        self.session.broker.resolve(approval_id, ApprovalDecision::Deny { message })
    }

    /// Refuses a pending tool call and refuses calls like it for the rest of the session
    /// (the scope "always" has when allowing); `message` is passed to the model.
    pub fn reject_always(self, approval_id: &str, message: Option<String>) -> Result<(), UnknownApproval> {
        self.session.broker.resolve(approval_id, ApprovalDecision::DenyAlways { message })
    }

    /// Answers a pending question from `ask_user`.
    pub fn answer(self, question_id: &str, answer: &str) -> Result<(), UnknownApproval> {
        self.session.broker.answer(question_id, answer)
    }

    /// When the session was resumed: the last message sent in it whose turn never completed a
    /// round (octo was killed, or the turn failed or was cancelled). It is not in the history;
    /// front ends offer to send it again.
    pub fn unanswered(self) -> Option<&'a str> {
        self.session.setup.unanswered.as_deref()
    }
}

impl Permissions<'_> {
    /// Switches the permission mode (takes effect for the next tool call).
    pub fn set_mode(self, mode: Mode) {
        self.session.engine.set_mode(mode);
    }

    /// Adds a permission rule for the rest of the session (takes effect for the next tool call).
    /// A rule whose specifier does not suit its tool (a path pattern that is not a glob, a
    /// specifier on a tool that takes none) is refused.
    pub fn add_rule(self, rule: Rule) -> Result<(), crate::permissions::RuleError> {
        let mut one = crate::permissions::RuleSet::default();
        one.push(rule.clone());
        one.check(&self.session.setup.tools.registry)?;
        self.session.engine.add_rule(rule);
        Ok(())
    }

    /// Removes the rules written as `text` (from any layer) for the rest of the session;
    /// returns how many there were.
    pub(crate) fn remove_rule(self, text: &str) -> usize {
        self.session.engine.remove_rule(text)
    }

    /// The permission rules in force.
    pub fn rules(self) -> crate::permissions::RuleSet {
        self.session.engine.rules()
    }

    /// What was allowed with "always" in this session (see [`PermissionEngine::granted`]).
    pub(crate) fn granted(self) -> Vec<String> {
        self.session.engine.granted()
    }
}
