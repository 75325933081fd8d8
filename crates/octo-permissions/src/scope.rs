//! Scopes: the tools a skill, command or agent type names (`allowed-tools`, an agent's
//! `tools`). An agent type's narrows what its calls may use; a skill's or command's grants its
//! calls without asking while it is active, as in Claude Code (bounded by everything a grant
//! cannot lift: deny rules, hard denies, secret and protected paths, plan mode, the sandbox).

use super::rules::{allowing, Action, Rule};
use super::target::Target;
use octo_agent::{DenyKind, PermissionDecision, PermissionQuery, Subject};

/// The tools a skill or command allows while it is active (its `allowed-tools`, as rules). It
/// only narrows: a call it allows still goes through the rules and the mode.
#[derive(Debug, Clone)]
pub struct Scope {
    label: String,
    rules: Vec<Rule>,
    written: Vec<String>,
    /// Whether it may grant: from the user's own files (a project's arrive with a clone and
    /// grant only once trusted).
    trusted: bool,
}

impl Scope {
    /// The scope of `allowed` (Claude Code's names such as `Read` or `Bash(git:*)`, or octo's),
    /// for `label` (`the skill review`); entries naming no tool octo has are returned as notes.
    pub fn from_allowed_tools(label: &str, allowed: &[String]) -> (Self, Vec<String>) {
        let mut rules = Vec::new();
        let mut notes = Vec::new();
        for entry in allowed {
            match octo_tools::claude::rules_for(entry) {
                Ok(texts) => {
                    for t in texts {
                        match Rule::parse(&t, Action::Allow, label) {
                            Ok(r) => rules.push(r),
                            Err(e) => notes.push(format!("{label}: allowed-tools `{entry}`: {e}")),
                        }
                    }
                }
                Err(e) => notes.push(format!("{label}: allowed-tools {e}; it is left out")),
            }
        }
        (Self { label: label.to_owned(), rules, written: allowed.to_vec(), trusted: true }, notes)
    }

    /// The same scope, marked as one that may not grant (it came with the project).
    #[must_use]
    pub fn untrusted(mut self) -> Self {
        self.trusted = false;
        self
    }

    /// Whether it may grant.
    pub fn is_trusted(&self) -> bool {
        self.trusted
    }

    /// Whether it grants this call (it names it, and may grant).
    pub(super) fn grants(&self, q: &PermissionQuery<'_>, t: &Target) -> bool {
        self.trusted && allowing(&self.rules, q, t).is_some()
    }

    /// What it allows, as written.
    pub fn allowed(&self) -> &[String] {
        &self.written
    }

    /// Who set it.
    pub fn label(&self) -> &str {
        &self.label
    }
}

impl Scope {
    /// The refusal of a call it does not allow. Tools that only read and name no subject (the
    /// task list, a question for the user, loading a skill) stay available.
    pub(super) fn refusal(&self, q: &PermissionQuery<'_>, t: &Target) -> Option<PermissionDecision> {
        if q.meta.read_only && q.meta.subject == Subject::None || allowing(&self.rules, q, t).is_some() {
            return None;
        }
        let s = self;
        Some(PermissionDecision::Deny {
            message: format!(
                "`{}` is outside what {} allows while it is active (allowed-tools: {}), until this turn ends. Use one of \
                 those tools, or tell the user what you need.",
                q.tool,
                s.label,
                if s.written.is_empty() { "none".to_owned() } else { s.written.join(", ") }
            ),
            kind: DenyKind::Rule,
        })
    }
}
