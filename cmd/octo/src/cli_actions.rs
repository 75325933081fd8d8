//! The subcommands' own actions (`octo mcp add`, `octo models pull` …).

use clap::Subcommand;

/// `octo plugin ...`
#[derive(Debug, Clone, Subcommand)]
pub enum PluginAction {
    /// Every plugin: on or off, where it is, what it brings.
    List,
    /// Use an installed plugin (its name, or Claude Code's `name@marketplace`).
    Enable {
        /// The plugin.
        name: String,
    },
    /// Stop using an installed plugin (Claude Code's own settings are left as they are).
    Disable {
        /// The plugin.
        name: String,
    },
    /// Install a plugin into ~/.octo/plugins from a local folder, a git URL or a marketplace.
    Install {
        /// A plugin folder, a git URL (https://, ssh://, git@…), or NAME@MARKETPLACE.
        source: String,
    },
    /// Plugin marketplaces (folders or repositories with .claude-plugin/marketplace.json).
    #[command(subcommand)]
    Marketplace(MarketplaceAction),
}

/// `octo plugin marketplace ...`
#[derive(Debug, Clone, Subcommand)]
pub enum MarketplaceAction {
    /// Add a marketplace: a folder, the path of its marketplace.json, a git URL or owner/repo.
    Add {
        /// Where the marketplace is.
        source: String,
    },
    /// The marketplaces octo and Claude Code added, and the plugins each lists.
    List,
    /// Forget a marketplace octo added (its plugins stay installed).
    Remove {
        /// The marketplace's name.
        name: String,
    },
}

/// `octo models ...`
#[derive(Debug, Clone, Subcommand)]
pub enum ModelsAction {
    /// The installed models (with --available, also the ones octo knows by name).
    List {
        /// Also list the recommended models that can be pulled by name.
        #[arg(long)]
        available: bool,
    },
    /// Download a model into ~/.octo/models: a name from `octo models list --available`, an
    /// https:// URL of a .gguf file, or owner/repo/file.gguf on Hugging Face. An interrupted
    /// download resumes; a file that fails its SHA-256 check is deleted. Without a name, lists
    /// the choices.
    Pull {
        /// The model.
        model: Option<String>,
        /// The SHA-256 the file must have (default: octo's, else the one the server announces).
        #[arg(long, value_name = "HEX")]
        sha256: Option<String>,
    },
    /// Delete an installed model.
    Rm {
        /// Its name (or file name).
        name: String,
    },
}

/// `octo memory ...`
#[derive(Debug, Clone, Subcommand)]
pub enum MemoryAction {
    /// Both scopes' entries and where their indexes are.
    List,
    /// One entry (the workspace's first, then yours).
    Show {
        /// The entry's name.
        name: String,
    },
    /// Delete an entry (the workspace's first, then yours).
    Rm {
        /// The entry's name.
        name: String,
    },
    /// Consolidate this workspace's index (Scratch Notes into sections, duplicates merged):
    /// shows the diff, then asks (or writes with --yes). The old index goes to octo's trash.
    Dream {
        /// Write without asking.
        #[arg(long)]
        yes: bool,
    },
}

/// `octo config ...`
#[derive(Debug, Clone, Subcommand)]
pub enum ConfigAction {
    /// The effective settings and where each came from (secrets masked).
    Show,
    /// The paths of the config files.
    Path,
}

/// `octo sessions ...`
#[derive(Debug, Clone, Subcommand)]
pub enum SessionsAction {
    /// Delete a session (id or unique prefix).
    Rm {
        /// The session.
        id: String,
    },
    /// Print a session as a Markdown transcript.
    Export {
        /// The session.
        id: String,
    },
}

/// `octo mcp ...`
#[derive(Debug, Clone, Subcommand)]
pub enum McpAction {
    /// Every configured server: state, transport, tool count (starts them to find out).
    List,
    /// One server: where it is configured, what it runs, its tools.
    Get {
        /// The server's name.
        name: String,
    },
    /// Add a server to the user config: `octo mcp add NAME -- COMMAND ARGS...` (stdio) or
    /// `octo mcp add NAME --url URL` (streamable HTTP).
    Add {
        /// The server's name.
        name: String,
        /// Its URL (streamable HTTP).
        #[arg(long)]
        url: Option<String>,
        /// An environment variable for it, `KEY=VALUE` (repeatable; `${VAR}` is expanded when it starts).
        #[arg(long = "env", value_name = "KEY=VALUE")]
        env: Vec<String>,
        /// A header for it, `NAME=VALUE` (repeatable; HTTP).
        #[arg(long = "header", value_name = "NAME=VALUE")]
        headers: Vec<String>,
        /// The environment variable holding its bearer token (HTTP).
        #[arg(long, value_name = "VAR")]
        bearer_env: Option<String>,
        /// The command and its arguments (after `--`).
        #[arg(last = true)]
        command: Vec<String>,
    },
    /// Remove a server from the user config.
    Remove {
        /// The server's name.
        name: String,
    },
    /// Log in to an HTTP server that uses OAuth: opens your browser ($BROWSER, else the
    /// system's), waits for the answer on localhost, keeps the tokens in the key store.
    Login {
        /// The server's name.
        name: String,
        /// Store a bearer token you have instead (read hidden from the terminal, or stdin).
        #[arg(long)]
        token: bool,
    },
    /// Forget a server's stored login and token.
    Logout {
        /// The server's name.
        name: String,
    },
    /// Serve octo's tools over MCP on stdio (read-only tools, unless --allow-writes).
    Serve {
        /// Offer every tool (in auto mode: deny rules and hard limits still hold).
        #[arg(long)]
        allow_writes: bool,
    },
}

/// `octo trash ...`
#[derive(Debug, Clone, Subcommand)]
pub enum TrashAction {
    /// Every change octo's file tools made, newest first (with --all, in every directory).
    List {
        /// Changes outside this directory too.
        #[arg(long)]
        all: bool,
    },
    /// Put back what a file held before a change (an entry id from `list`, or a path: its
    /// newest change). A file changed since is only overwritten with --force.
    Restore {
        /// Entry id or file path.
        what: String,
        /// Overwrite a file that changed after octo wrote it.
        #[arg(long)]
        force: bool,
    },
    /// Delete every kept copy and the journal.
    Empty,
}

/// `octo checkpoints ...`
#[derive(Debug, Clone, Subcommand)]
pub enum CheckpointsAction {
    /// This workspace's checkpoints, newest first: session, number, age, files, prompt.
    List,
    /// What a turn changed, as a diff (`N` in the newest session, or `SESSION:N`).
    Diff {
        /// The checkpoint.
        checkpoint: String,
    },
    /// Put the files back to before a turn and every later turn of its session. A file changed
    /// since is only overwritten with --force.
    Restore {
        /// The checkpoint (`N` in the newest session, or `SESSION:N`).
        checkpoint: String,
        /// Overwrite files changed after the turns.
        #[arg(long)]
        force: bool,
    },
}

/// `octo auth ...`
#[derive(Debug, Clone, Subcommand)]
pub enum AuthAction {
    /// Store a key for an endpoint (read from a hidden prompt, or from stdin when piped).
    Set {
        /// Endpoint id (`anthropic`, `deepseek`, a configured id).
        endpoint: String,
    },
    /// Remove the stored key of an endpoint.
    Remove {
        /// Endpoint id.
        endpoint: String,
    },
}

/// What `octo worktrees` does.
#[derive(Debug, Clone, Subcommand)]
pub enum WorktreesAction {
    /// octo's worktrees of this repository: name, branch, uncommitted changes, folder.
    List,
    /// Remove a worktree (its branch is kept).
    Remove {
        /// The worktree's name.
        name: String,
        /// Remove it even with uncommitted changes (they are lost).
        #[arg(long)]
        force: bool,
    },
}
