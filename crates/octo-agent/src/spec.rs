//! What a tool is, as data: its definition for the model, its description for octo (what the
//! permission engine checks, how a call is summarized, which arguments may be shortened in old
//! history, what its output looks like), its output, and how a call ended.
//!
//! Everything here is plain data with no behaviour that reaches the loop, so every other module
//! (senders, events, approvals, the loop) can name it without pulling in the rest.

use crate::message::{ImageSource, ToolResultPart};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the model is told about a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// Name the model calls it by; unique in a registry.
    pub name: String,
    /// What it does, its limits, and what to use instead; written for the model.
    pub description: String,
    /// JSON schema of the arguments object.
    pub input_schema: Value,
}

impl ToolDefinition {
    /// A definition from its parts.
    pub fn new(name: impl Into<String>, description: impl Into<String>, input_schema: Value) -> Self {
        Self { name: name.into(), description: description.into(), input_schema }
    }
}

/// Whether a path argument is read or written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// The tool only reads at the path (read, list, search).
    Read,
    /// The tool creates or changes what is at the path.
    Write,
}

/// What the permission engine looks at in a call: the argument that names what the call touches.
///
/// Rules are written against it: `Tool(src/**)` matches the path argument of a [`Subject::Path`]
/// tool, `Tool(git status*)` the command of a [`Subject::Command`] tool, `Tool(docs.rs)` the host of
/// a [`Subject::Url`] tool. A tool with [`Subject::None`] can only be allowed, asked about or denied
/// as a whole.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Subject {
    /// Nothing in particular: the tool as a whole.
    #[default]
    None,
    /// A file-system path (relative to the workspace or absolute); a missing argument means the
    /// workspace itself.
    Path {
        /// The argument that holds the path.
        field: String,
        /// Whether the call reads or writes there.
        access: Access,
    },
    /// A shell command.
    Command {
        /// The argument that holds the command line.
        field: String,
    },
    /// A URL fetched over the network.
    Url {
        /// The argument that holds the URL.
        field: String,
    },
}

impl Subject {
    /// A path argument named `field`.
    pub fn path(field: impl Into<String>, access: Access) -> Self {
        Self::Path { field: field.into(), access }
    }

    /// A command argument named `field`.
    pub fn command(field: impl Into<String>) -> Self {
        Self::Command { field: field.into() }
    }

    /// A URL argument named `field`.
    pub fn url(field: impl Into<String>) -> Self {
        Self::Url { field: field.into() }
    }

    /// The argument's text in `input`, when the subject has one and the call gave it.
    pub fn value<'a>(&self, input: &'a Value) -> Option<&'a str> {
        let field = match self {
            Self::None => return None,
            Self::Path { field, .. } | Self::Command { field } | Self::Url { field } => field,
        };
        input.get(field).and_then(Value::as_str)
    }

    /// Whether the call writes at a path.
    pub fn writes_path(&self) -> bool {
        matches!(self, Self::Path { access: Access::Write, .. })
    }
}

/// What a tool's output is, so front ends can render it (a diff in colour, a checklist).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum OutputKind {
    /// Text to show as it is.
    #[default]
    Plain,
    /// A summary line followed by a unified diff of the change.
    Diff,
    /// The model's task list (its state also arrives as a `todos` tool update).
    Todos,
}

/// What a call would do, shown with its approval before it runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Preview {
    /// How to show it: [`OutputKind::Diff`] for a change, [`OutputKind::Plain`] for text.
    pub kind: OutputKind,
    /// The diff or the text.
    pub text: String,
}

impl Preview {
    /// A unified diff.
    pub fn diff(text: impl Into<String>) -> Self {
        Self { kind: OutputKind::Diff, text: text.into() }
    }

    /// Plain text.
    pub fn text(text: impl Into<String>) -> Self {
        Self { kind: OutputKind::Plain, text: text.into() }
    }
}

impl OutputKind {
    /// Whether this is [`OutputKind::Plain`] (used to keep serialized events short).
    pub fn is_plain(&self) -> bool {
        *self == Self::Plain
    }
}

/// How octo treats a tool: everything except what the model is told.
///
/// The permission engine, history reclaiming and every renderer read this instead of knowing
/// tools by name, so a tool from any source (built-in, MCP, skill, sub-agent) needs no edit
/// elsewhere.
///
/// ```
/// use octo_agent::{Access, OutputKind, Subject, ToolMeta};
///
/// let edit = ToolMeta::writes()
///     .subject(Subject::path("path", Access::Write))
///     .reclaimable(&["old_string", "new_string"])
///     .output(OutputKind::Diff);
/// assert!(!edit.read_only && edit.subject.writes_path());
/// let grep = ToolMeta::reads().subject(Subject::path("path", Access::Read));
/// assert!(grep.read_only && grep.concurrency_safe);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolMeta {
    /// The tool only reads: it never writes files, runs commands or changes state.
    pub read_only: bool,
    /// Several calls may run at the same time (only read-only ones ever do).
    pub concurrency_safe: bool,
    /// What the permission engine checks.
    pub subject: Subject,
    /// The name rules use for the tool, when not its own (`Tool(...)` in a rule).
    pub rule_name: Option<String>,
    /// Argument fields (at any depth of the arguments) whose long values may be replaced by a
    /// placeholder once the call is old: what was written is on disk, the copy in history only
    /// costs context.
    pub reclaimable: Vec<String>,
    /// What its output looks like.
    pub output: OutputKind,
    /// The names other agents' files give this tool (Claude Code's `Bash` for a command tool):
    /// hook matchers and `allowed-tools` entries written with one of them apply to it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// The tool this one comes with: an `allowed-tools` entry that grants that tool grants this
    /// one too (a background command's output comes with the command tool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follows: Option<String>,
    /// The word approvals use for a call (`edit`, `write`, `run`, `fetch`), when the subject's
    /// default is not the right one ([`ToolMeta::verb`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// Arguments other agents' files name differently, as `(octo's name, theirs)`: a hook
    /// written for Claude Code sees `read_file`'s `path` as `file_path`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub renamed_args: Vec<(String, String)>,
    /// Arguments the tool takes in seconds that other agents' files give in milliseconds (a
    /// command's `timeout`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub millisecond_args: Vec<String>,
}

impl ToolMeta {
    /// A tool that changes things (the safe default: it is asked about).
    pub fn writes() -> Self {
        Self::default()
    }

    /// A tool that only reads; calls may run in parallel.
    pub fn reads() -> Self {
        Self { read_only: true, concurrency_safe: true, ..Self::default() }
    }

    /// Sets whether calls may run in parallel (only read-only tools ever do).
    pub fn concurrency_safe(mut self, yes: bool) -> Self {
        self.concurrency_safe = yes;
        self
    }

    /// Sets what the permission engine checks.
    pub fn subject(mut self, subject: Subject) -> Self {
        self.subject = subject;
        self
    }

    /// Sets the name rules use for this tool.
    pub fn rule_name(mut self, name: impl Into<String>) -> Self {
        self.rule_name = Some(name.into());
        self
    }

    /// Sets the argument fields that may be shortened in old history.
    pub fn reclaimable(mut self, fields: &[&str]) -> Self {
        self.reclaimable = fields.iter().map(|f| (*f).to_owned()).collect();
        self
    }

    /// Sets the kind of output.
    pub fn output(mut self, kind: OutputKind) -> Self {
        self.output = kind;
        self
    }

    /// Sets the names other agents' files give this tool.
    pub fn aliases(mut self, names: &[&str]) -> Self {
        self.aliases = names.iter().map(|n| (*n).to_owned()).collect();
        self
    }

    /// Sets the word approvals use for a call.
    pub fn action(mut self, verb: impl Into<String>) -> Self {
        self.action = Some(verb.into());
        self
    }

    /// The word approvals use for a call: the tool's own, else one its subject suggests (`run`
    /// a command, `fetch` a URL, `change` or `read` a path), else `use`.
    pub fn verb(&self) -> &str {
        match (&self.action, &self.subject) {
            (Some(a), _) => a,
            (None, Subject::Command { .. }) => "run",
            (None, Subject::Url { .. }) => "fetch",
            (None, Subject::Path { access: Access::Write, .. }) => "change",
            (None, Subject::Path { .. }) => "read",
            (None, _) => "use",
        }
    }

    /// Sets the arguments other agents' files name differently, as `(octo's name, theirs)`.
    pub fn renamed_args(mut self, pairs: &[(&str, &str)]) -> Self {
        self.renamed_args = pairs.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect();
        self
    }

    /// Sets the arguments other agents' files give in milliseconds (the tool takes seconds).
    pub fn millisecond_args(mut self, fields: &[&str]) -> Self {
        self.millisecond_args = fields.iter().map(|f| (*f).to_owned()).collect();
        self
    }

    /// Sets the tool this one comes with.
    pub fn follows(mut self, tool: impl Into<String>) -> Self {
        self.follows = Some(tool.into());
        self
    }

    /// Whether calls of this tool may join a parallel batch.
    pub fn parallel(&self) -> bool {
        self.read_only && self.concurrency_safe
    }

    /// A one-line description of a call for approval prompts and status lines: the subject's
    /// argument when the tool has one, else the arguments in compact JSON, at most `max` chars.
    pub fn summarize(&self, input: &Value, max: usize) -> String {
        let text = match self.subject.value(input) {
            Some(v) => v.to_owned(),
            None if input.as_object().is_some_and(serde_json::Map::is_empty) => String::new(),
            None => input.to_string(),
        };
        let line = text.lines().next().unwrap_or_default();
        let mut short: String = line.chars().take(max).collect();
        if short.len() < text.len() {
            short.push('…');
        }
        short
    }
}

/// How a tool call ended. Front ends and outputs read this instead of guessing from errors or
/// timings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolOutcome {
    /// The tool ran and succeeded.
    Ran,
    /// The tool ran and reported an error.
    Failed,
    /// The user said no.
    DeniedByUser,
    /// A deny rule matched.
    DeniedByRule,
    /// Plan mode allows only read-only tools.
    BlockedByPlanMode,
    /// A command on the hard-deny list, refused in every mode.
    HardDenied,
    /// A plugin (a hook) refused the call.
    DeniedByPlugin,
    /// The call needed the user's approval and nobody could be asked (a headless run).
    DeniedUnattended,
    /// The model named a tool that does not exist.
    UnknownTool,
    /// The arguments were not a valid JSON object.
    InvalidInput,
    /// The user cancelled the turn before or while the call ran.
    Interrupted,
}

impl ToolOutcome {
    /// Whether the call was refused (by the user, a rule, the mode, a plugin or the hard-deny
    /// list, or for want of anyone to ask).
    pub fn is_denial(self) -> bool {
        matches!(
            self,
            Self::DeniedByUser
                | Self::DeniedByRule
                | Self::BlockedByPlanMode
                | Self::HardDenied
                | Self::DeniedByPlugin
                | Self::DeniedUnattended
        )
    }

    /// Whether the tool actually started.
    pub fn ran(self) -> bool {
        matches!(self, Self::Ran | Self::Failed)
    }

    /// The snake_case name used in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ran => "ran",
            Self::Failed => "failed",
            Self::DeniedByUser => "denied_by_user",
            Self::DeniedByRule => "denied_by_rule",
            Self::BlockedByPlanMode => "blocked_by_plan_mode",
            Self::HardDenied => "hard_denied",
            Self::DeniedByPlugin => "denied_by_plugin",
            Self::DeniedUnattended => "denied_unattended",
            Self::UnknownTool => "unknown_tool",
            Self::InvalidInput => "invalid_input",
            Self::Interrupted => "interrupted",
        }
    }
}

impl std::fmt::Display for ToolOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a tool call returns to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// Text and images the model sees.
    pub content: Vec<ToolResultPart>,
    /// Whether the call failed.
    #[serde(default)]
    pub is_error: bool,
    /// How the call ended, when the tool knows better than "ran" or "failed" (it refused a
    /// command on the hard-deny list, the user declined its own approval request).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<ToolOutcome>,
}

impl ToolOutput {
    /// A successful text result.
    pub fn text(text: impl Into<String>) -> Self {
        Self { content: vec![ToolResultPart::Text { text: text.into() }], is_error: false, outcome: None }
    }

    /// A failed result; the text tells the model what went wrong and what to do instead.
    pub fn error(text: impl Into<String>) -> Self {
        Self { content: vec![ToolResultPart::Text { text: text.into() }], is_error: true, outcome: None }
    }

    /// A refusal: an error result with the outcome that says why it did not run.
    pub fn refused(text: impl Into<String>, outcome: ToolOutcome) -> Self {
        Self { outcome: Some(outcome), ..Self::error(text) }
    }

    /// Adds an image part.
    pub fn with_image(mut self, source: ImageSource) -> Self {
        self.content.push(ToolResultPart::Image { source });
        self
    }

    /// All text parts joined with newlines.
    pub fn text_content(&self) -> String {
        let mut out = String::new();
        for part in self.content.iter().filter_map(ToolResultPart::as_text) {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(part);
        }
        out
    }

    /// How the call ended: the tool's own word, else ran or failed.
    pub fn outcome(&self) -> ToolOutcome {
        self.outcome.unwrap_or(if self.is_error { ToolOutcome::Failed } else { ToolOutcome::Ran })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn summaries_use_the_subject_and_stay_on_one_line() {
        let shell = ToolMeta::writes().subject(Subject::command("command"));
        assert_eq!(shell.summarize(&json!({"command": "cargo test\n--more"}), 100), "cargo test…");
        let plain = ToolMeta::writes();
        assert_eq!(plain.summarize(&json!({"a": 1}), 100), r#"{"a":1}"#);
        assert_eq!(plain.summarize(&json!({}), 100), "");
        assert_eq!(plain.summarize(&json!({"a": "xxxxxxxx"}), 4), "{\"a\"…");
    }

    #[test]
    fn outcomes_serialize_as_snake_case_and_classify() {
        for o in [ToolOutcome::BlockedByPlanMode, ToolOutcome::DeniedUnattended, ToolOutcome::Ran] {
            assert_eq!(serde_json::to_value(o).unwrap(), json!(o.as_str()));
        }
        assert!(ToolOutcome::HardDenied.is_denial());
        assert!(!ToolOutcome::UnknownTool.is_denial());
        assert!(ToolOutcome::Failed.ran());
        assert_eq!(ToolOutput::error("x").outcome(), ToolOutcome::Failed);
        assert_eq!(ToolOutput::refused("x", ToolOutcome::HardDenied).outcome(), ToolOutcome::HardDenied);
    }
}
