//! The session's sub-handles: borrowed views that group its verbs by feature, so [`Session`]
//! itself keeps a small core (prompt, run, events, command, abort, close, status). Each is
//! cheap to make (`session.memories().remember(…)`) and lives no longer than the borrow.

use super::facade::Session;

/// Answering the tool calls and questions waiting for the user ([`Session::approvals`]).
#[derive(Debug, Clone, Copy)]
pub struct Approvals<'a> {
    pub(super) session: &'a Session,
}

/// The permission mode, the rules in force and what was allowed ([`Session::permissions`]).
#[derive(Debug, Clone, Copy)]
pub struct Permissions<'a> {
    pub(super) session: &'a Session,
}

/// The conversation: history, id, title, model, compaction, export, rewinding
/// ([`Session::conversation`]).
#[derive(Debug, Clone, Copy)]
pub struct Conversation<'a> {
    pub(super) session: &'a Session,
}

/// The user's and the workspace's memory ([`Session::memories`]).
#[derive(Debug, Clone, Copy)]
pub struct Memories<'a> {
    pub(super) session: &'a Session,
}

/// The session's MCP and language servers ([`Session::servers`]).
#[derive(Debug, Clone, Copy)]
pub struct Servers<'a> {
    pub(super) session: &'a Session,
}

/// The skills and custom commands ([`Session::skills`]).
#[derive(Debug, Clone, Copy)]
pub struct Skills<'a> {
    pub(super) session: &'a Session,
}

/// What a project brings that waits for the user's trust ([`Session::trust`]).
#[derive(Debug, Clone, Copy)]
pub struct Trust<'a> {
    pub(super) session: &'a Session,
}

/// The tools, the sub-agents and the processes they left running ([`Session::tools`]).
#[derive(Debug, Clone, Copy)]
pub struct Tools<'a> {
    pub(super) session: &'a Session,
}

impl Session {
    /// Answering the tool calls and questions waiting for the user.
    pub fn approvals(&self) -> Approvals<'_> {
        Approvals { session: self }
    }

    /// The permission mode, the rules in force and what was allowed for the session.
    pub fn permissions(&self) -> Permissions<'_> {
        Permissions { session: self }
    }

    /// The conversation: its history, id, title, model, compaction, export and rewinding.
    pub fn conversation(&self) -> Conversation<'_> {
        Conversation { session: self }
    }

    /// The user's and the workspace's memory: `/remember`, `/memory --here`, the dream.
    pub fn memories(&self) -> Memories<'_> {
        Memories { session: self }
    }

    /// The session's MCP and language servers.
    pub fn servers(&self) -> Servers<'_> {
        Servers { session: self }
    }

    /// The skills and custom commands, and running one as `/name args`.
    pub fn skills(&self) -> Skills<'_> {
        Skills { session: self }
    }

    /// What a project brings that waits for the user's trust: hooks, granting skills, settings.
    pub fn trust(&self) -> Trust<'_> {
        Trust { session: self }
    }

    /// The tools the model can call, the sub-agents, and the processes they left running.
    pub fn tools(&self) -> Tools<'_> {
        Tools { session: self }
    }
}
