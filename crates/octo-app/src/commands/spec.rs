//! The shared commands as one table: each command is one unit — its name and aliases, usage, one
//! line of help, what it takes, how its argument is read, and what a front end must be able to
//! do to offer it. Help, completion, dispatch and the refusals of a front end that cannot offer
//! a command all come from this table; no front end keeps a list of names
//! ([`super::FrontEnd`]).

use super::command::{memory, permissions, rewind, skills, SessionCommand};
use crate::permissions::Mode;

/// What a command takes after its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    /// Nothing.
    Nothing,
    /// Optional free text.
    Text,
    /// An optional whole number of at least 1.
    Count,
}

/// What a front end can do that some commands need. A front end declares its own
/// ([`super::FrontEnd`]); a command it lacks one for is refused with the reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Capabilities(u8);

impl Capabilities {
    /// Nothing beyond showing a reply.
    pub const NONE: Self = Self(0);
    /// A terminal of octo's own: an editor to open, a file written where the user works.
    pub const TERMINAL: Self = Self(1);
    /// Asking the user for a yes, after showing what a command would do, before it acts.
    pub const CONFIRM: Self = Self(1 << 1);
    /// Moving between the saved sessions of the workspace.
    pub const SWITCH_SESSION: Self = Self(1 << 2);
    /// Starting the conversation over.
    pub const START_OVER: Self = Self(1 << 3);
    /// Cancelling the running turn with a command (a terminal has Ctrl-C, an editor its stop
    /// button).
    pub const STOP_BY_COMMAND: Self = Self(1 << 4);

    const ALL: [(Self, &'static str); 5] = [
        (Self::TERMINAL, "it needs octo's terminal (run it in the REPL)"),
        (Self::CONFIRM, "it shows what it would do and asks for a yes first, which is not asked here (run it in the REPL)"),
        (Self::SWITCH_SESSION, "it moves between saved sessions (run it in the REPL, or `octo -c`)"),
        (Self::START_OVER, "a new conversation is started here by the front end itself"),
        (Self::STOP_BY_COMMAND, "the running turn is cancelled here by the front end itself (Ctrl-C in the terminal, the editor's stop button)"),
    ];

    /// Both sets together.
    #[must_use]
    pub const fn and(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Whether every capability of `other` is in this set.
    pub(crate) const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// Why a front end with these capabilities cannot offer what needs `needs` (`None`: it can).
    pub(crate) fn lacking(self, needs: Self) -> Option<&'static str> {
        Self::ALL.iter().find(|(c, _)| needs.contains(*c) && !self.contains(*c)).map(|(_, why)| *why)
    }
}

/// How a command's argument becomes the command (the argument is checked against [`Takes`]
/// first); an error says what is wrong, and the usage is added to it.
pub type ParseFn = fn(&str) -> Result<SessionCommand, String>;

/// One command of the shared vocabulary.
#[derive(Debug, Clone, Copy)]
pub struct CommandSpec {
    /// `/name`.
    pub name: &'static str,
    /// Other names it answers to.
    pub aliases: &'static [&'static str],
    /// How it is written, with its arguments.
    pub usage: &'static str,
    /// One line on what it does.
    pub about: &'static str,
    /// What it takes.
    pub takes: Takes,
    /// What a front end must be able to do to offer it.
    pub needs: Capabilities,
    /// How its argument is read.
    pub parse: ParseFn,
}

impl PartialEq for CommandSpec {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for CommandSpec {}

impl CommandSpec {
    /// Whether `/word` names this command.
    pub(crate) fn is_named(&self, word: &str) -> bool {
        self.name == word || self.aliases.contains(&word)
    }
}

const fn spec(
    name: &'static str,
    usage: &'static str,
    about: &'static str,
    takes: Takes,
    parse: ParseFn,
) -> CommandSpec {
    CommandSpec { name, aliases: &[], usage, about, takes, needs: Capabilities::NONE, parse }
}

const fn needs(spec: CommandSpec, needs: Capabilities) -> CommandSpec {
    CommandSpec { needs, ..spec }
}

/// The optional free text of a command.
fn text(arg: &str) -> Option<String> {
    Some(arg.to_owned()).filter(|a| !a.is_empty())
}

/// Every shared command, in the order help lists them.
pub const COMMANDS: &[CommandSpec] = &[
    spec("/help", "/help", "this list", Takes::Nothing, |_| Ok(SessionCommand::Help)),
    spec("/status", "/status", "endpoint, model, mode, session, context use and cost", Takes::Nothing, |_| {
        Ok(SessionCommand::Status)
    }),
    spec("/model", "/model [endpoint:model]", "show the model, or switch (the conversation is kept)", Takes::Text, |a| {
        Ok(SessionCommand::Model(text(a)))
    }),
    spec("/mode", "/mode [default|build|accept-edits|plan|auto]", "show or switch the permission mode", Takes::Text, |a| {
        Ok(SessionCommand::Mode(if a.is_empty() { None } else { Some(a.parse::<Mode>().map_err(|e| e.to_string())?) }))
    }),
    spec("/plan", "/plan", "plan mode: read-only tools only", Takes::Nothing, |_| Ok(SessionCommand::Plan)),
    spec("/build", "/build", "leave plan mode", Takes::Nothing, |_| Ok(SessionCommand::Build)),
    spec(
        "/permissions",
        "/permissions [allow|ask|deny RULE | remove RULE]",
        "the mode and rules; add or remove a rule for this session",
        Takes::Text,
        |a| Ok(SessionCommand::Permissions(permissions(a)?)),
    ),
    spec("/tools", "/tools", "the tools the model can call", Takes::Nothing, |_| Ok(SessionCommand::Tools)),
    spec(
        "/mcp",
        "/mcp",
        "MCP servers: their state and tools (their prompts run as /mcp__server__prompt)",
        Takes::Nothing,
        |_| Ok(SessionCommand::Mcp),
    ),
    spec("/lsp", "/lsp", "language servers: their state and the problems they report", Takes::Nothing, |_| {
        Ok(SessionCommand::Lsp)
    }),
    spec(
        "/skills",
        "/skills [reload]",
        "skills and custom commands (run one as /name args); reload reads them again",
        Takes::Text,
        skills,
    ),
    spec("/remember", "/remember TEXT", "jot a note in this workspace's memory (no model call)", Takes::Text, |a| {
        Ok(SessionCommand::Remember(a.to_owned()))
    }),
    needs(
        spec(
            "/memory",
            "/memory [QUERY | edit | --here]",
            "the memory indexes; search them, edit the index, or keep it in the repository",
            Takes::Text,
            |a| Ok(SessionCommand::Memory(memory(a))),
        ),
        Capabilities::TERMINAL,
    ),
    needs(
        spec("/dream", "/dream", "consolidate this workspace's memory (shows the diff first)", Takes::Nothing, |_| {
            Ok(SessionCommand::Dream)
        }),
        Capabilities::CONFIRM,
    ),
    spec("/agents", "/agents", "sub-agent types and the sub-agents of this session", Takes::Nothing, |_| {
        Ok(SessionCommand::Agents)
    }),
    spec("/hooks", "/hooks", "the hooks configured, where from, and whether they run", Takes::Nothing, |_| {
        Ok(SessionCommand::Hooks)
    }),
    spec("/todos", "/todos", "the model's task list", Takes::Nothing, |_| Ok(SessionCommand::Todos)),
    spec("/cost", "/cost", "tokens and cost so far", Takes::Nothing, |_| Ok(SessionCommand::Cost)),
    needs(
        spec("/init", "/init", "survey the repository and propose its AGENTS.md (written on your yes)", Takes::Nothing, |_| {
            Ok(SessionCommand::Init)
        }),
        Capabilities::CONFIRM,
    ),
    spec(
        "/review",
        "/review [--staged | --base REF | --commit SHA]",
        "review the uncommitted changes (or staged, a branch, a commit): findings with file, line and severity",
        Takes::Text,
        |a| Ok(SessionCommand::Review(a.to_owned())),
    ),
    spec("/context", "/context", "what fills the context window, by part", Takes::Nothing, |_| {
        Ok(SessionCommand::Context)
    }),
    needs(
        spec("/export", "/export [file]", "write the conversation as Markdown (default octo-<session>.md)", Takes::Text, |a| {
            Ok(SessionCommand::Export(text(a)))
        }),
        Capabilities::TERMINAL,
    ),
    spec(
        "/compact",
        "/compact [focus]",
        "compact the conversation now, focusing the summary on what you name",
        Takes::Text,
        |a| Ok(SessionCommand::Compact(text(a))),
    ),
    needs(
        spec(
            "/rewind",
            "/rewind [N] [code|conversation|both]",
            "go back over the last N turns: restore the files they changed (any tool, command or sub-agent), drop them from the conversation (kept as a branch), or both",
            Takes::Text,
            rewind,
        ),
        Capabilities::CONFIRM,
    ),
    needs(
        spec("/history", "/history", "this directory's saved sessions", Takes::Nothing, |_| Ok(SessionCommand::History)),
        Capabilities::SWITCH_SESSION,
    ),
    needs(
        spec("/resume", "/resume [N | id prefix | title words]", "continue a saved session", Takes::Text, |a| {
            Ok(SessionCommand::Resume(text(a)))
        }),
        Capabilities::SWITCH_SESSION,
    ),
    needs(
        CommandSpec {
            aliases: &["/reset"],
            ..spec("/clear", "/clear", "forget the conversation (also /new)", Takes::Nothing, |_| Ok(SessionCommand::Clear))
        },
        Capabilities::START_OVER,
    ),
    needs(
        spec("/new", "/new", "start a fresh conversation", Takes::Nothing, |_| Ok(SessionCommand::New)),
        Capabilities::START_OVER,
    ),
    needs(
        spec("/stop", "/stop", "cancel the running turn", Takes::Nothing, |_| Ok(SessionCommand::Stop)),
        Capabilities::STOP_BY_COMMAND,
    ),
];

/// The spec of `/name` (or of one of its aliases).
pub fn find(name: &str) -> Option<&'static CommandSpec> {
    COMMANDS.iter().find(|c| c.is_named(name))
}
