//! The shared commands as data: name, usage, what each does, what it takes. Help text and
//! completion come from this table; a front end offers the subset it can render.

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

/// One command of the shared vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandSpec {
    /// `/name`.
    pub name: &'static str,
    /// How it is written, with its arguments.
    pub usage: &'static str,
    /// One line on what it does.
    pub about: &'static str,
    /// What it takes.
    pub takes: Takes,
}

const fn spec(name: &'static str, usage: &'static str, about: &'static str, takes: Takes) -> CommandSpec {
    CommandSpec { name, usage, about, takes }
}

/// Every shared command, in the order help lists them.
pub const COMMANDS: &[CommandSpec] = &[
    spec("/help", "/help", "this list", Takes::Nothing),
    spec("/status", "/status", "endpoint, model, mode, session, context use and cost", Takes::Nothing),
    spec(
        "/model",
        "/model [endpoint:model]",
        "show the model, or switch (the conversation is kept)",
        Takes::Text,
    ),
    spec(
        "/mode",
        "/mode [default|build|accept-edits|plan|auto]",
        "show or switch the permission mode",
        Takes::Text,
    ),
    spec("/plan", "/plan", "plan mode: read-only tools only", Takes::Nothing),
    spec("/build", "/build", "leave plan mode", Takes::Nothing),
    spec(
        "/permissions",
        "/permissions [allow|ask|deny RULE | remove RULE]",
        "the mode and rules; add or remove a rule for this session",
        Takes::Text,
    ),
    spec("/tools", "/tools", "the tools the model can call", Takes::Nothing),
    spec(
        "/mcp",
        "/mcp",
        "MCP servers: their state and tools (their prompts run as /mcp__server__prompt)",
        Takes::Nothing,
    ),
    spec("/lsp", "/lsp", "language servers: their state and the problems they report", Takes::Nothing),
    spec(
        "/skills",
        "/skills [reload]",
        "skills and custom commands (run one as /name args); reload reads them again",
        Takes::Text,
    ),
    spec("/remember", "/remember TEXT", "jot a note in this workspace's memory (no model call)", Takes::Text),
    spec(
        "/memory",
        "/memory [QUERY | edit | --here]",
        "the memory indexes; search them, edit the index, or keep it in the repository",
        Takes::Text,
    ),
    spec("/dream", "/dream", "consolidate this workspace's memory (shows the diff first)", Takes::Nothing),
    spec("/agents", "/agents", "sub-agent types and the sub-agents of this session", Takes::Nothing),
    spec("/hooks", "/hooks", "the hooks configured, where from, and whether they run", Takes::Nothing),
    spec("/todos", "/todos", "the model's task list", Takes::Nothing),
    spec("/cost", "/cost", "tokens and cost so far", Takes::Nothing),
    spec(
        "/init",
        "/init",
        "survey the repository and propose its AGENTS.md (written on your yes)",
        Takes::Nothing,
    ),
    spec(
        "/review",
        "/review [--staged | --base REF | --commit SHA]",
        "review the uncommitted changes (or staged, a branch, a commit): findings with file, line and severity",
        Takes::Text,
    ),
    spec("/context", "/context", "what fills the context window, by part", Takes::Nothing),
    spec("/export", "/export [file]", "write the conversation as Markdown (default octo-<session>.md)", Takes::Text),
    spec(
        "/compact",
        "/compact [focus]",
        "compact the conversation now, focusing the summary on what you name",
        Takes::Text,
    ),
    spec(
        "/rewind",
        "/rewind [N] [code|conversation|both]",
        "go back over the last N turns: restore the files they changed (any tool, command or sub-agent), drop them from the conversation (kept as a branch), or both",
        Takes::Text,
    ),
    spec("/history", "/history", "this directory's saved sessions", Takes::Nothing),
    spec("/resume", "/resume [N | id prefix | title words]", "continue a saved session", Takes::Text),
    spec("/clear", "/clear", "forget the conversation (also /new)", Takes::Nothing),
    spec("/new", "/new", "start a fresh conversation", Takes::Nothing),
    spec("/stop", "/stop", "cancel the running turn", Takes::Nothing),
];

/// The shared commands any front end can run, terminal or not: each one's reply is complete in
/// itself and none needs a yes first (a front end adds those it can also carry, say `/clear`).
pub const SELF_CONTAINED: &[&str] = &[
    "/help",
    "/status",
    "/model",
    "/mode",
    "/plan",
    "/build",
    "/permissions",
    "/tools",
    "/mcp",
    "/lsp",
    "/skills",
    "/remember",
    "/agents",
    "/hooks",
    "/todos",
    "/cost",
    "/context",
    "/review",
    "/compact",
];

/// The spec of `/name`.
pub fn find(name: &str) -> Option<&'static CommandSpec> {
    COMMANDS.iter().find(|c| c.name == name)
}

/// The specs of the commands a front end offers (named in `offered`), in help order.
pub fn offered(offered: &[&str]) -> Vec<&'static CommandSpec> {
    COMMANDS.iter().filter(|c| offered.contains(&c.name)).collect()
}
