//! Skills and custom commands in a session: where they are looked for, the narrowing a skill's
//! `allowed-tools` puts on the permission engine while it is active, and `/name args` turned into
//! a prompt — its `` !`command` `` spans and `@file` mentions checked by the permission engine
//! before anything runs or is read.

use crate::home::Home;
use crate::permissions::{PermissionEngine, Scope};
use octo_agent::{Access, Message, PermissionDecision, PermissionQuery, Subject, ToolMeta, ToolRegistry};
use octo_skills::{Activation, Catalog, Kind, Part, Root, RootKind, Skill};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The folders searched, in order (a later one wins per name): the user's Claude Code and octo
/// folders, then the project's, then a project's `SKILLS/*.md`; commands likewise. A folder
/// reached twice (the workspace is the home directory) is searched once.
pub(crate) fn roots(home: &Home, workspace: &Path, user_home: Option<&Path>) -> Vec<Root> {
    let mut roots = Vec::new();
    if let Some(h) = user_home {
        roots.push(Root::new(h.join(".claude/skills"), "~/.claude/skills", RootKind::Skills));
    }
    roots.push(Root::new(home.skills(), "~/.octo/skills", RootKind::Skills));
    roots.push(Root::new(workspace.join(".claude/skills"), "project .claude/skills", RootKind::Skills));
    roots.push(Root::new(workspace.join(".octo/skills"), "project .octo/skills", RootKind::Skills));
    roots.push(Root::new(
        workspace.join(crate::protected::SKILLS_DIR),
        "project SKILLS",
        RootKind::SkillFiles,
    ));
    if let Some(h) = user_home {
        roots.push(Root::new(h.join(".claude/commands"), "~/.claude/commands", RootKind::Commands));
    }
    roots.push(Root::new(home.commands(), "~/.octo/commands", RootKind::Commands));
    roots.push(Root::new(workspace.join(".claude/commands"), "project .claude/commands", RootKind::Commands));
    roots.push(Root::new(workspace.join(".octo/commands"), "project .octo/commands", RootKind::Commands));
    let mut seen: Vec<PathBuf> = Vec::new();
    roots.retain(|r| {
        let real = std::fs::canonicalize(&r.dir).unwrap_or_else(|_| r.dir.clone());
        let fresh = !seen.contains(&real);
        seen.push(real);
        fresh
    });
    roots
}

/// Reads the catalog from `roots`.
pub(crate) fn discover(roots: &[Root]) -> (Catalog, Vec<String>) {
    Catalog::discover(roots)
}

/// Grants a skill's `allowed-tools` on the permission engine when the model loads it.
pub(crate) struct EngineActivation(pub Arc<PermissionEngine>);

impl Activation for EngineActivation {
    fn activate(&self, skill: &Skill) -> Option<String> {
        let (scope, notes) = scope_of(skill, self.0.project_trusted())?;
        let how = if scope.is_trusted() {
            "run without asking"
        } else {
            "are asked about as usual (the skill came with the project, and you have not trusted the project's skills and commands)"
        };
        let text = format!(
            "While this skill is active (until this turn ends), these {how}: {}.{}",
            scope.allowed().join(", "),
            if notes.is_empty() { String::new() } else { format!(" ({})", notes.join("; ")) }
        );
        self.0.grant(scope);
        Some(text)
    }
}

/// The scope of a skill or command with `allowed-tools`, and notes about names octo lacks;
/// `project_trusted` says whether the user trusted the project's own files.
pub(crate) fn scope_of(skill: &Skill, project_trusted: bool) -> Option<(Scope, Vec<String>)> {
    if skill.allowed_tools.is_empty() {
        return None;
    }
    let what = match skill.kind {
        Kind::Skill => "the skill",
        Kind::Command => "the command",
    };
    let (scope, notes) = Scope::from_allowed_tools(&format!("{what} /{}", skill.name), &skill.allowed_tools);
    // A project's file arrives with a clone: it grants nothing without the user's trust.
    let scope = if is_project(skill) && !project_trusted { scope.untrusted() } else { scope };
    Some((scope, notes))
}

/// Whether a skill or command came with the project (its folders arrive with `git clone`).
pub fn is_project(skill: &Skill) -> bool {
    skill.source.starts_with("project")
}

/// The project's skills and commands that would grant tools (`/name: allowed-tools (file)`),
/// and the fingerprint trusting them is remembered by: the workspace and each such file's
/// contents, so a changed file, or the same files in another clone, are asked about again.
pub(crate) fn project_grants(catalog: &Catalog, workspace: &Path) -> (Vec<String>, Option<String>) {
    let granting: Vec<&Skill> =
        catalog.iter().filter(|s| is_project(s) && !s.allowed_tools.is_empty()).collect();
    if granting.is_empty() {
        return (Vec::new(), None);
    }
    let ws = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let mut files = Vec::new();
    let mut lines = Vec::new();
    for s in granting {
        let digest = crate::home::file_digest(&s.file).unwrap_or_default();
        files.push(serde_json::json!([s.file.display().to_string(), digest]));
        lines.push(format!("/{}: {} ({})", s.name, s.allowed_tools.join(", "), s.file.display()));
    }
    let what = serde_json::json!({"grants": files, "workspace": ws.display().to_string()});
    (lines, Some(crate::home::fingerprint(&what)))
}

/// Something an invocation wants to do before its prompt is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Run this command (`` !`…` ``) or read this file (`@path`).
    pub action: StepAction,
    /// Why it needs the user's yes, when it does.
    pub ask: Option<String>,
}

/// What a [`Step`] does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepAction {
    /// A command whose output goes into the prompt.
    Run(String),
    /// A file whose text goes into the prompt.
    Read(String),
}

impl std::fmt::Display for StepAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Run(c) => write!(f, "run `{c}`"),
            Self::Read(p) => write!(f, "read {p}"),
        }
    }
}

/// Why `/name args` cannot run; nothing of it ran.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvokeError {
    /// The skill's or command's file cannot be read as a template.
    #[error("/{skill} cannot run: {file}: {reason}")]
    Template {
        /// The skill.
        skill: String,
        /// Its file.
        file: String,
        /// Why.
        reason: String,
    },
    /// It runs commands and the session has no command tool.
    #[error("/{skill} runs commands (!`{command}`), and this session has no command tool (tools are off)")]
    NoCommandTool {
        /// The skill.
        skill: String,
        /// The first command.
        command: String,
    },
    /// A step is refused by the permission rules, the mode or a hook.
    #[error("/{skill}: octo will not {action}: {reason}")]
    Refused {
        /// The skill.
        skill: String,
        /// The step (`run `x``, `read p`).
        action: String,
        /// Why.
        reason: String,
    },
    /// A step needs the user's yes and nobody can be asked where it was run (a headless run, a
    /// chat, the web before a skill starts).
    #[error(
        "/{skill} would {action}, which needs your yes ({ask}), and nobody can answer {place}: allow it with a \
         permission rule (for a command: allow = [\"terminal(COMMAND*)\"] in [permissions]), or run /{skill} in the REPL"
    )]
    NeedsYes {
        /// The skill.
        skill: String,
        /// The step (`run `x``).
        action: String,
        /// Why it asks.
        ask: String,
        /// Where it was run, in words (`in a headless run`).
        place: String,
    },
    /// Ctrl-C while a step ran.
    #[error("/{skill}: cancelled")]
    Cancelled {
        /// The skill.
        skill: String,
    },
    /// A command of it failed.
    #[error("/{skill}: `{command}` failed: {output}")]
    Failed {
        /// The skill.
        skill: String,
        /// The command.
        command: String,
        /// What it printed.
        output: String,
    },
    /// A file it includes cannot be read.
    #[error("/{skill}: cannot read @{path}: {reason}")]
    Read {
        /// The skill.
        skill: String,
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
}

/// `/name args`, checked and ready to run: its steps (some may need the user's yes).
#[derive(Debug, Clone)]
pub struct Invocation {
    /// The skill or command.
    pub skill: Skill,
    parts: Vec<Part>,
    /// What runs or is read first, in order.
    pub steps: Vec<Step>,
}

impl Invocation {
    /// The steps that need the user's yes.
    pub fn questions(&self) -> impl Iterator<Item = &Step> {
        self.steps.iter().filter(|s| s.ask.is_some())
    }
}

/// A prompt ready to queue: the message, and the tools it may use while it runs.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The message.
    pub message: Message,
    /// The narrowing for its turn (a command's or skill's `allowed-tools`).
    pub scope: Option<Scope>,
    /// Notes for the user (allowed-tools entries octo does not know).
    pub notes: Vec<String>,
    /// The model its turn runs on (its `model:`), when not the session's.
    pub model: Option<Arc<crate::turn_models::TurnModel>>,
}

impl From<Message> for Prepared {
    fn from(message: Message) -> Self {
        Self { message, scope: None, notes: Vec::new(), model: None }
    }
}

impl From<String> for Prepared {
    fn from(text: String) -> Self {
        Message::user(text).into()
    }
}

impl From<&str> for Prepared {
    fn from(text: &str) -> Self {
        Message::user(text).into()
    }
}

impl From<&String> for Prepared {
    fn from(text: &String) -> Self {
        Message::user(text.as_str()).into()
    }
}

/// What an invocation may use to check and run its steps.
pub(crate) struct Runner<'a> {
    pub engine: &'a PermissionEngine,
    pub tools: &'a ToolRegistry,
    pub workspace: &'a Path,
    /// The session's hooks: a command's `` !`…` `` lines meet its PreToolUse hooks like any call.
    pub hooks: Option<Arc<octo_hooks::Hooks>>,
    /// The models entries ask for, by name.
    pub models: &'a std::collections::HashMap<String, Arc<crate::turn_models::TurnModel>>,
}

impl Runner<'_> {
    /// The command tool (known by what it declares).
    fn command_tool(&self) -> Option<(&str, &ToolMeta)> {
        self.tools.names().find_map(|n| {
            self.tools.meta(n).filter(|m| matches!(m.subject, Subject::Command { .. })).map(|m| (n, m))
        })
    }

    /// Checks `/name args` (`line` without the slash is `name args`).
    pub(crate) async fn invoke(&self, skill: &Skill, arguments: &str) -> Result<Invocation, InvokeError> {
        let template = skill.template().map_err(|e| InvokeError::Template {
            skill: skill.name.clone(),
            file: skill.file.display().to_string(),
            reason: e.to_string(),
        })?;
        let dir = skill.dir.as_deref().map(|d| d.display().to_string());
        let exists = |p: &str| self.workspace.join(p).is_file();
        let mentions: Option<&dyn Fn(&str) -> bool> = (skill.kind == Kind::Command).then_some(&exists as _);
        let plugin = skill.plugin_root.as_deref().map(|d| d.display().to_string());
        let dirs = octo_skills::Dirs { skill: dir.as_deref(), plugin: plugin.as_deref() };
        let parts = template.expand(arguments, dirs, mentions);
        let read_meta = ToolMeta::reads().subject(Subject::path("path", Access::Read));
        // The file-reading tool (known by what it declares), so read rules apply to mentions.
        let (read_tool, read_meta) = self
            .tools
            .names()
            .find_map(|n| {
                self.tools
                    .meta(n)
                    .filter(|m| {
                        m.read_only && matches!(m.subject, Subject::Path { access: Access::Read, .. })
                    })
                    .map(|m| (n, m))
            })
            .unwrap_or(("@file", &read_meta));
        let path_field = match &read_meta.subject {
            Subject::Path { field, .. } => field.clone(),
            _ => "path".to_owned(),
        };
        let scope = scope_of(skill, self.engine.project_trusted()).map(|(s, _)| s);
        let mut steps = Vec::new();
        for part in &parts {
            let (action, decision) = match part {
                Part::Text(_) => continue,
                Part::Run(c) => {
                    let Some((tool, meta)) = self.command_tool() else {
                        return Err(InvokeError::NoCommandTool {
                            skill: skill.name.clone(),
                            command: c.clone(),
                        });
                    };
                    let field = match &meta.subject {
                        Subject::Command { field } => field.clone(),
                        _ => "command".to_owned(),
                    };
                    let input = serde_json::json!({ field: c });
                    let mut decision = self.check(tool, meta, &input, scope.as_ref());
                    // PreToolUse hooks may refuse it or ask first; their allow never lifts the
                    // engine's question.
                    if let Some(h) = self.hooks.as_ref().filter(|h| h.has(octo_hooks::Event::PreToolUse)) {
                        match h.pre_tool(tool, &input).await.verdict {
                            octo_agent::ToolVerdict::Deny { reason } => {
                                decision = PermissionDecision::Deny {
                                    message: reason,
                                    kind: octo_agent::DenyKind::Rule,
                                };
                            }
                            octo_agent::ToolVerdict::Ask { reason }
                                if matches!(decision, PermissionDecision::Allow) =>
                            {
                                decision = PermissionDecision::Ask {
                                    summary: None,
                                    reason: Some(
                                        reason.unwrap_or_else(|| "a PreToolUse hook asks first".into()),
                                    ),
                                };
                            }
                            _ => {}
                        }
                    }
                    (StepAction::Run(c.clone()), decision)
                }
                Part::Include(p) => {
                    let input = serde_json::json!({ path_field.as_str(): p });
                    (StepAction::Read(p.clone()), self.check(read_tool, read_meta, &input, scope.as_ref()))
                }
            };
            let ask = match decision {
                PermissionDecision::Allow => None,
                PermissionDecision::Ask { reason, .. } => {
                    Some(reason.unwrap_or_else(|| "the permission mode asks first".to_owned()))
                }
                PermissionDecision::Deny { message, .. } => {
                    return Err(InvokeError::Refused {
                        skill: skill.name.clone(),
                        action: action.to_string(),
                        reason: message,
                    })
                }
            };
            steps.push(Step { action, ask });
        }
        Ok(Invocation { skill: skill.clone(), parts, steps })
    }

    fn check(
        &self,
        tool: &str,
        meta: &ToolMeta,
        input: &serde_json::Value,
        scope: Option<&Scope>,
    ) -> PermissionDecision {
        self.engine
            .check_within(&PermissionQuery { tool_use_id: "", tool, input, meta, cwd: self.workspace }, scope)
    }

    /// Runs the steps (the user said yes to those that asked) and builds the prompt.
    pub(crate) async fn finish(
        &self,
        inv: Invocation,
        cancel: octo_agent::CancellationToken,
    ) -> Result<Prepared, InvokeError> {
        let mut text = String::new();
        for part in inv.parts {
            match part {
                Part::Text(t) => text.push_str(&t),
                Part::Run(c) => text.push_str(&self.run(&inv.skill, &c, &cancel).await?),
                Part::Include(p) => text.push_str(&self.read(&inv.skill, &p)?),
            }
        }
        let (scope, notes) = match scope_of(&inv.skill, self.engine.project_trusted()) {
            Some((s, n)) => (Some(s), n),
            None => (None, Vec::new()),
        };
        let text = match inv.skill.kind {
            Kind::Skill => format!("<skill name=\"{}\">\n{}\n</skill>", inv.skill.name, text.trim_end()),
            Kind::Command => text.trim_end().to_owned(),
        };
        let model = self.models.get(&inv.skill.name).cloned();
        Ok(Prepared { message: Message::user(text), scope, notes, model })
    }

    async fn run(
        &self,
        skill: &Skill,
        command: &str,
        cancel: &octo_agent::CancellationToken,
    ) -> Result<String, InvokeError> {
        if cancel.is_cancelled() {
            return Err(InvokeError::Cancelled { skill: skill.name.clone() });
        }
        let no_tool =
            || InvokeError::NoCommandTool { skill: skill.name.clone(), command: command.to_owned() };
        let Some((tool, meta)) = self.command_tool() else { return Err(no_tool()) };
        let field = match &meta.subject {
            Subject::Command { field } => field.clone(),
            _ => "command".to_owned(),
        };
        let Some(exec) = self.tools.get(tool) else { return Err(no_tool()) };
        let ctx = octo_agent::ToolContext::detached(self.workspace)
            .with_user_approved(true)
            .with_cancel(cancel.clone());
        let out = exec.execute(serde_json::json!({ field: command }), &ctx).await;
        let body = out.text_content();
        if out.is_error {
            return Err(InvokeError::Failed {
                skill: skill.name.clone(),
                command: command.to_owned(),
                output: body.trim().to_owned(),
            });
        }
        // The command tool's own status line is for the model; the prompt gets the output alone,
        // as Claude Code splices it.
        let body = body.trim_end();
        let body = body.strip_suffix("[exit code 0]").unwrap_or(body);
        Ok(body.trim_end().to_owned())
    }

    fn read(&self, skill: &Skill, path: &str) -> Result<String, InvokeError> {
        use std::io::Read;
        const MAX: usize = 256 * 1024;
        let full = self.workspace.join(path);
        let mut bytes = Vec::new();
        std::fs::File::open(&full).and_then(|f| f.take(MAX as u64 + 1).read_to_end(&mut bytes)).map_err(
            |e| InvokeError::Read { skill: skill.name.clone(), path: path.to_owned(), reason: e.to_string() },
        )?;
        let cut = bytes.len() > MAX;
        let text = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX)]).into_owned();
        Ok(format!(
            "\n<file path=\"{path}\">\n{}{}\n</file>\n",
            text.trim_end(),
            if cut { "\n[cut at 256 KB]" } else { "" }
        ))
    }
}
