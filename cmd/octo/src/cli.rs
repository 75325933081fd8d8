//! The command line: flags, subcommands and their help text.

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

pub use crate::cli_actions::*;

/// The environment variables octo reads, for `--help`.
const ENVIRONMENT: &str = "\
Environment:
  OCTO_HOME              octo's directory (default ~/.octo): config.toml, sessions, history
  OCTO_MODEL             endpoint:model to use (like --model)
  OCTO_PERMISSION_MODE   default, accept-edits, plan or auto
  OCTO_SANDBOX           workspace-write, read-only, off or required (like --sandbox)
  OCTO_MAX_TURNS         most model requests in one turn
  OCTO_REASONING_EFFORT  low, medium, high or max
  OCTO_MAX_ATTEMPTS      attempts per model request, retries included
  OCTO_KEYRING_FILE      keep API keys in this private file instead of the OS keyring
  OCTO_NO_KEYRING        use no key store; keys come from the environment only
  NO_COLOR               plain output
  ANTHROPIC_API_KEY, OPENAI_API_KEY, DEEPSEEK_API_KEY, ...  the vendors' usual key variables

Exit status: 0 done, 1 failed, 2 usage or setup error, 3 cut short (a call was refused),
130 interrupted.";

/// octo — an AI coding agent for the terminal that works with any model.
///
/// Run `octo` on a terminal for the interactive REPL (type /help there). Give it a prompt to run
/// one task and exit (`octo "fix the failing test"`), pipe one in (`git diff | octo "review
/// this"`), or use -p. It reads, searches and edits files and runs commands in the workspace,
/// asking before anything risky — on a terminal a one-shot asks too; without one, what would
/// need an answer is refused (unless --permission-mode allows it), and the run ends by saying
/// what and how to allow it, with exit status 3 (with --output-format json or stream-json, as in
/// Claude Code, the refusals are in `permission_denials` and the status is 0).
///
/// Skills and custom commands (Claude Code's `.claude/skills`, `.claude/commands` and octo's
/// `.octo/...`, in the project and in your home) run as `/name args`, in the REPL or as the
/// prompt (`octo "/review src/lib.rs"`).
///
/// No key? `octo models pull qwen2.5-coder-1.5b` fetches a model that runs inside octo; with
/// nothing else configured, octo then uses it (`--endpoint local --model NAME-or-FILE.gguf`).
///
/// Conversations are saved under ~/.octo/sessions (unless --no-save); `octo -c` continues the
/// last one of this directory and `octo sessions` lists them.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "octo",
    version,
    about,
    long_about,
    after_long_help = ENVIRONMENT
)]
pub struct Cli {
    /// The prompt (words are joined with spaces).
    #[arg(value_name = "PROMPT")]
    pub prompt: Vec<String>,

    /// Print the answer and exit, never the REPL (as `claude -p`): the prompt is PROMPT, stdin,
    /// or both (`echo q | octo -p`, `octo -p --output-format json "q"`).
    #[arg(short = 'p', long = "print")]
    pub print: bool,

    /// Read the prompt from a file.
    #[arg(long, value_name = "FILE")]
    pub prompt_file: Option<PathBuf>,

    /// Continue a saved session of this directory: the last one, or `-c=ID-PREFIX` /
    /// `--continue="title words"` for another (`octo -c "message"` continues the last one).
    #[arg(
        short = 'c',
        long = "continue",
        value_name = "SESSION",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "last"
    )]
    pub continue_session: Option<String>,

    /// Continue a saved session of this directory: its number in `octo sessions` (1 is the
    /// newest), an id prefix or title words; without one, pick from a numbered list (that needs
    /// a terminal).
    #[arg(
        short = 'r',
        long = "resume",
        value_name = "SESSION",
        num_args = 0..=1,
        default_missing_value = "",
        conflicts_with = "continue_session"
    )]
    pub resume: Option<String>,

    /// Do not save this conversation.
    #[arg(long)]
    pub no_save: bool,

    /// Append every event of the session to `~/.octo/logs/<session>.jsonl` (credentials redacted;
    /// also `log_events = true` in the config).
    #[arg(long)]
    pub log_events: bool,

    /// Plain chat: send no tools to the model.
    #[arg(long)]
    pub no_tools: bool,

    /// Work in this directory instead of the current one.
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,

    /// Work in a git worktree of this repository: NAME's (made on branch octo/NAME beside the
    /// repository, or reused), or a fresh one. A prompt after a bare --worktree needs `--`.
    #[arg(long, short = 'w', value_name = "NAME", num_args = 0..=1, default_missing_value = "")]
    pub worktree: Option<String>,

    /// Endpoint to use (`anthropic`, `deepseek`, `ollama`, a configured id; `id:model` too).
    #[arg(long, value_name = "ENDPOINT")]
    pub endpoint: Option<String>,

    /// Model to use (or `endpoint:model`).
    #[arg(long, short = 'm', value_name = "MODEL")]
    pub model: Option<String>,

    /// Replace octo's base system prompt (environment and project rules are still added).
    #[arg(long, value_name = "TEXT")]
    pub system: Option<String>,

    /// Add this text at the end of the system prompt.
    #[arg(long, value_name = "TEXT")]
    pub append_system_prompt: Option<String>,

    /// Add this file's text at the end of the system prompt.
    #[arg(long, value_name = "FILE")]
    pub append_system_prompt_file: Option<PathBuf>,

    /// Output token cap per model request.
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u32>,

    /// Most model requests in one turn.
    #[arg(long, value_name = "N")]
    pub max_turns: Option<u32>,

    /// Spending limit for the session in US dollars: a turn stops before the request that
    /// would pass it (estimated from the model's price; exit status 1, `error_max_budget_usd`).
    #[arg(long, value_name = "USD")]
    pub max_budget_usd: Option<String>,

    /// default (ask), accept-edits, plan (read-only), auto (allow what would be asked) or
    /// dont-ask (Claude Code's `dontAsk`: what is not allowed by a rule is refused, never asked).
    #[arg(long, value_name = "MODE")]
    pub permission_mode: Option<String>,

    /// Same as --permission-mode auto (Claude Code's --dangerously-skip-permissions too).
    #[arg(long, alias = "dangerously-skip-permissions")]
    pub auto_approve: bool,

    /// MCP servers for this run only, from JSON files or JSON strings holding
    /// `{"mcpServers": …}` (as Claude Code's flag); they join the configured ones.
    #[arg(long = "mcp-config", num_args = 1.., value_name = "CONFIGS")]
    pub mcp_config: Vec<String>,

    /// The id of a new saved session (letters, digits, `-` and `_`; a UUID, as Claude Code's
    /// flag takes): scripts can name the session before it starts and `--resume` it later.
    #[arg(long, value_name = "ID", conflicts_with_all = ["continue_session", "resume"])]
    pub session_id: Option<String>,

    /// OS sandbox for commands: workspace-write (the default where the kernel has one), read-only,
    /// off, or required (refuse commands when no sandbox can be had).
    #[arg(long, value_name = "MODE")]
    pub sandbox: Option<String>,

    /// off, low, medium, high or max.
    #[arg(long, value_name = "EFFORT")]
    pub reasoning_effort: Option<String>,

    /// Ask the model for whole responses instead of streaming them.
    #[arg(long)]
    pub no_stream: bool,

    /// Show the model's reasoning (dimmed) in the REPL; hidden by default.
    #[arg(long)]
    pub show_thinking: bool,

    /// Print nothing but the answer (no status lines on stderr).
    #[arg(long, short = 'q')]
    pub quiet: bool,

    /// Show tool calls, usage and cost on stderr.
    #[arg(long, short = 'v')]
    pub verbose: bool,

    /// Print the answer as the bytes the model sent. Otherwise control characters and escape
    /// sequences in it are shown as `^[` on a terminal and dropped when stdout is piped.
    #[arg(long)]
    pub raw: bool,

    /// text (the answer), json (one result object, Claude Code's fields and octo's), stream-json
    /// (Claude Code's messages as JSON lines: system/init, assistant, user, result) or events
    /// (octo's own event stream, one event per line).
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output_format: OutputFormat,

    /// Tools allowed without asking, in Claude Code's spelling (`"Bash(git log:*)" Read`).
    #[arg(long = "allowedTools", alias = "allowed-tools", num_args = 1.., value_name = "TOOLS")]
    pub allowed_tools: Vec<String>,

    /// Tools denied, in Claude Code's spelling (`"Bash(rm:*)" WebFetch`).
    #[arg(long = "disallowedTools", alias = "disallowed-tools", num_args = 1.., value_name = "TOOLS")]
    pub disallowed_tools: Vec<String>,

    /// A Claude Code plugin folder (with .claude-plugin/plugin.json) to use for this run: its
    /// commands, agents, skills, hooks and MCP servers (repeatable).
    #[arg(long = "plugin-dir", value_name = "DIR")]
    pub plugin_dirs: Vec<PathBuf>,

    /// With --output-format stream-json: also the answer's deltas as `stream_event` lines.
    #[arg(long)]
    pub include_partial_messages: bool,

    /// text (the prompt) or stream-json: user messages as JSON lines on stdin, in Claude Code's
    /// shape (`{"type":"user","message":{"role":"user","content":"..."}}`), each answered in turn
    /// in one session (with --output-format stream-json).
    #[arg(long, value_enum, default_value_t = InputFormat::Text)]
    pub input_format: InputFormat,

    /// How a headless run answers approvals: `deny` (default: what needs one is refused) or
    /// `stdio` (an `approval_required` event goes to stdout and the answer is read from stdin as
    /// `{"type":"approval","approval_id":"...","decision":"allow|allow_always|deny"}`; needs
    /// --input-format stream-json).
    #[arg(long, value_enum, default_value_t = PermissionPrompt::Deny)]
    pub permission_prompt: PermissionPrompt,

    #[command(subcommand)]
    pub command: Option<Command>,
}

/// How a headless run reads its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InputFormat {
    /// The prompt from the arguments, a file or stdin.
    Text,
    /// JSON lines of user messages (and approval answers) on stdin.
    StreamJson,
}

/// Who answers approvals in a headless run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PermissionPrompt {
    /// Nobody: the call is refused, and the model told so.
    Deny,
    /// The program driving octo, over stdin and stdout.
    Stdio,
}

/// How a headless run prints its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// The final answer on stdout; status on stderr.
    Text,
    /// One JSON object with the answer, usage, cost and more.
    Json,
    /// Claude Code's stream-json messages, one JSON object per line.
    StreamJson,
    /// octo's own events, one JSON object per line, as they happen.
    Events,
}

/// A review finding's severity, for `--fail-on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SeverityArg {
    /// A bug, a security hole, data loss.
    High,
    /// A problem in a corner case, a missing test.
    Medium,
    /// Any finding.
    Low,
}

/// Subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// Show or locate the configuration.
    Config {
        #[command(subcommand)]
        action: ConfigAction,
    },
    /// Store or remove an API key in the OS keyring (or the file named by OCTO_KEYRING_FILE).
    Auth {
        #[command(subcommand)]
        action: AuthAction,
    },
    /// Check configuration, keys, keyring and endpoint reachability (changes nothing).
    Doctor,
    /// List this directory's saved sessions (or every directory's with --all), remove or export one.
    Sessions {
        /// Every directory's sessions, grouped by directory.
        #[arg(long)]
        all: bool,
        #[command(subcommand)]
        action: Option<SessionsAction>,
    },
    /// Set up an endpoint: pick a provider, store its key, pick a model, test it, and write
    /// ~/.octo/config.toml (comments and other settings kept). Without flags it asks; with
    /// --endpoint it runs without questions.
    Setup {
        /// The endpoint (a preset such as `deepseek`, `anthropic`, `ollama`).
        #[arg(long, value_name = "ENDPOINT")]
        endpoint: Option<String>,
        /// The model (default: the endpoint's first).
        #[arg(long, value_name = "MODEL")]
        model: Option<String>,
        /// Read the key from this environment variable at run time (nothing is stored).
        #[arg(long, value_name = "VAR")]
        key_env: Option<String>,
        /// The server's base URL (for a custom or local endpoint).
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
        /// Do not send the test request.
        #[arg(long)]
        no_test: bool,
    },
    /// MCP servers: list them, show one, add or remove one (in ~/.octo/config.toml), or serve
    /// octo's own tools over MCP.
    Mcp {
        #[command(subcommand)]
        action: McpAction,
    },
    /// What octo remembers across sessions (yours and this workspace's): list, show or delete
    /// entries, or consolidate the workspace's index with one model call.
    Memory {
        #[command(subcommand)]
        action: MemoryAction,
    },
    /// Serve octo over HTTP: an API with live events and a web UI. Prints a login link (the
    /// access token is kept in ~/.octo/server-token). Ctrl-C stops it. The chat-app bridges of
    /// `[channels]` in ~/.octo/config.toml (Telegram, Discord, Slack, Feishu/Lark) start with it.
    Serve {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:8088", value_name = "ADDR")]
        listen: std::net::SocketAddr,
        /// Allow a non-loopback address (other machines could connect; the token is required).
        #[arg(long)]
        allow_remote: bool,
        /// A directory sessions may work in (repeatable; default: the current directory).
        #[arg(long = "root", value_name = "DIR")]
        roots: Vec<PathBuf>,
        /// Run in the background: prints the link and returns; the pid is in ~/.octo/serve.pid
        /// (stop it with `kill`), the log in ~/.octo/logs/serve.log.
        #[arg(long)]
        daemon: bool,
        /// Run only the chat-app bridges of `[channels]` in ~/.octo/config.toml, no HTTP server.
        #[arg(long)]
        channels_only: bool,
    },
    /// Local models (GGUF files run inside octo, no key or server): list, pull (by name, URL or
    /// Hugging Face owner/repo/file.gguf; resumable, hash-checked) or remove them.
    Models {
        #[command(subcommand)]
        action: ModelsAction,
    },
    /// The git worktrees `--worktree` made for this repository: list them, or remove one
    /// (refused with uncommitted changes unless --force; its branch is kept).
    Worktrees {
        #[command(subcommand)]
        action: WorktreesAction,
    },
    /// The previous contents of files octo changed: list them, restore one, or empty the trash.
    Trash {
        #[command(subcommand)]
        action: TrashAction,
    },
    /// Serve octo to an editor over the Agent Client Protocol on stdio (Zed, JetBrains, Neovim,
    /// Emacs): the editor starts `octo acp` and talks JSON-RPC; sessions, approvals, modes and
    /// commands are octo's. Flags such as --model and --permission-mode (before `acp`) apply.
    Acp,
    /// Each turn's file changes in this workspace (whoever made them): list them, show one as a
    /// diff, or put the files back to before a turn.
    Checkpoints {
        #[command(subcommand)]
        action: CheckpointsAction,
    },
    /// Claude Code plugins (commands, agents, skills, hooks and MCP servers in one folder): the
    /// ones Claude Code installed, octo's own, and --plugin-dir folders.
    Plugin {
        #[command(subcommand)]
        action: PluginAction,
    },
    /// Review changes: octo gathers the diff (the uncommitted changes by default), the model
    /// reviews it with read-only tools, and the findings (file, line, severity, title,
    /// explanation, suggestion) are listed, or printed as JSON with --output-format json. With
    /// --fail-on, the exit status is 1 when a finding is that severe or more (for CI); an answer
    /// that holds no findings is an error, never a pass. A `review` command of your own supplies
    /// the instructions.
    Review {
        /// Review the current branch against this branch or ref (from where they part).
        #[arg(long, value_name = "REF", conflicts_with_all = ["commit", "staged"])]
        base: Option<String>,
        /// Review this commit.
        #[arg(long, value_name = "SHA", conflicts_with = "staged")]
        commit: Option<String>,
        /// Review only the staged changes.
        #[arg(long)]
        staged: bool,
        /// Exit with status 1 when a finding is this severe or more.
        #[arg(long, value_name = "SEVERITY")]
        fail_on: Option<SeverityArg>,
    },
    /// Survey the repository and propose an AGENTS.md (or changes to the existing one) that
    /// tells later sessions how to build, test and work in it. Writes only with --write.
    Init {
        /// Write the proposed file (without it, the proposal is printed).
        #[arg(long)]
        write: bool,
    },
    /// What this project brings that waits for your yes (MCP servers, hooks, commands and skills
    /// that grant tools, Claude Code settings that allow): listed, and trusted with --yes, as the
    /// REPL asks at start. Remembered for these exact files (a change asks again); headless runs
    /// such as CI scripts then use them.
    Trust {
        /// Trust everything listed.
        #[arg(long)]
        yes: bool,
    },
    /// Print a shell completion script.
    Completion {
        /// bash, zsh, fish or powershell.
        shell: clap_complete::Shell,
    },
}
