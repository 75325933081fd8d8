//! The model's memory tools: `memory_save`, `memory_delete` and `memory_search`.

use crate::entry::{Entry, Kind};
use crate::memory::{Memory, Scope};
use async_trait::async_trait;
use octo_agent::{parse_input, ToolContext, ToolDefinition, ToolExecutor, ToolList, ToolMeta, ToolOutput};
use serde_json::{json, Value};
use std::sync::Arc;

/// Says what kind of credential a text seems to hold, if any.
pub type Guard = Arc<dyn Fn(&str) -> Option<&'static str> + Send + Sync>;

/// What the tools are given by the application.
#[derive(Clone)]
pub struct ToolEnv {
    /// What kind of credential a text seems to hold, if any (such text is never saved).
    pub guard: Guard,
    /// The time now, as entries record it (`YYYY-MM-DD HH:MM`, UTC).
    pub now: Arc<dyn Fn() -> String + Send + Sync>,
}

impl std::fmt::Debug for ToolEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ToolEnv")
    }
}

/// The three tools over `memory`, as a tool source.
pub fn tools(memory: Arc<Memory>, env: ToolEnv) -> ToolList {
    ToolList::extension(
        "memory",
        vec![
            Arc::new(Save { memory: Arc::clone(&memory), env }),
            Arc::new(Delete { memory: Arc::clone(&memory) }),
            Arc::new(Search { memory }),
        ],
    )
}

struct Save {
    memory: Arc<Memory>,
    env: ToolEnv,
}

#[derive(serde::Deserialize)]
struct SaveInput {
    name: String,
    description: String,
    #[serde(rename = "type")]
    kind: String,
    content: String,
    #[serde(default)]
    scope: Option<String>,
}

fn scope_of(s: Option<&str>) -> Result<Scope, ToolOutput> {
    s.map_or(Ok(Scope::Workspace), |s| s.parse().map_err(ToolOutput::error))
}

impl Save {
    /// The user's memory is read into every later session in every workspace: saving there
    /// always takes the user's own yes, whatever the mode or a rule allowed, with the change
    /// shown (octo's permission engine asks for the workspace's memory in every mode). A call
    /// the user already approved is not asked twice.
    async fn approve(&self, ctx: &ToolContext, entry: &Entry, scope: Scope) -> Result<(), ToolOutput> {
        if scope == Scope::Workspace || ctx.user_approved() {
            return Ok(());
        }
        let store = self.memory.store(scope);
        let whose = if scope == Scope::User { "your user memory" } else { "this workspace's memory" };
        let mut request = octo_agent::ApprovalRequest::new(
            ctx.tool_use_id(),
            "memory_save",
            json!({"name": entry.name, "scope": scope_name(scope)}),
            format!("save `{}` to {whose}, read into every later session: {}", entry.name, entry.description),
        );
        request.preview = Some(change(store.get(&entry.name).as_ref(), entry));
        let (decision, _) = ctx.ask_approval(request).await;
        if decision.is_allowed() {
            return Ok(());
        }
        Err(ToolOutput::error(format!(
            "not saved: memory is read into every later session's prompt, so saving to {whose} needs the user's yes, which was not given; tell the user what you would save, or ask them"
        )))
    }
}

fn scope_name(scope: Scope) -> &'static str {
    if scope == Scope::User {
        "user"
    } else {
        "workspace"
    }
}

/// The entry's file before and after, as a unified diff.
fn change(old: Option<&Entry>, new: &Entry) -> octo_agent::Preview {
    let before = old.map(Entry::render).unwrap_or_default();
    let after = new.render();
    let name = format!("{}.md", new.name);
    let diff = similar::TextDiff::from_lines(&before, &after);
    octo_agent::Preview::diff(diff.unified_diff().header(&name, &name).to_string())
}

#[async_trait]
impl ToolExecutor for Save {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            "memory_save",
            "Save (or update, by name) what later sessions should know: the user's preferences (type user), corrections (feedback), project facts not in the code (project), where things are (reference). Never secrets or this task's details.",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "e.g. test-command"},
                    "description": {"type": "string", "description": "Its line in the index."},
                    "type": {"type": "string", "enum": ["user", "feedback", "project", "reference"]},
                    "content": {"type": "string"},
                    "scope": {"type": "string", "enum": ["workspace", "user"], "description": "user: every project."}
                },
                "required": ["name", "description", "type", "content"]
            }),
        )
    }

    fn summary(&self, input: &Value) -> Option<String> {
        let name = input.get("name").and_then(Value::as_str)?;
        let scope = input.get("scope").and_then(Value::as_str).unwrap_or("workspace");
        Some(format!("{name} ({scope} memory)"))
    }

    fn preview(&self, input: &Value, _cwd: &std::path::Path) -> Option<octo_agent::Preview> {
        let i: SaveInput = serde_json::from_value(input.clone()).ok()?;
        let scope = scope_of(i.scope.as_deref()).ok()?;
        let entry = Entry {
            name: i.name.trim().to_owned(),
            description: i.description,
            kind: i.kind.parse().ok()?,
            updated: (self.env.now)(),
            body: i.content,
        };
        Some(change(self.memory.store(scope).get(&entry.name).as_ref(), &entry))
    }

    async fn execute(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let i: SaveInput = match parse_input("memory_save", input) {
            Ok(i) => i,
            Err(e) => return e,
        };
        let kind = match i.kind.parse::<Kind>() {
            Ok(k) => k,
            Err(e) => return ToolOutput::error(e),
        };
        let scope = match scope_of(i.scope.as_deref()) {
            Ok(s) => s,
            Err(e) => return e,
        };
        if let Some(what) = [&i.name, &i.description, &i.content].iter().find_map(|t| (self.env.guard)(t)) {
            return ToolOutput::error(format!(
                "not saved: the memory seems to contain {what}, and memory is read into later prompts in plain text. Save where to find it instead (a reference), never the value."
            ));
        }
        if i.content.trim().is_empty() {
            return ToolOutput::error("not saved: `content` is empty");
        }
        let entry = Entry {
            name: i.name.trim().to_owned(),
            description: i.description,
            kind,
            updated: (self.env.now)(),
            body: i.content,
        };
        if let Err(refused) = self.approve(ctx, &entry, scope).await {
            return refused;
        }
        let store = self.memory.store(scope);
        match store.save(&entry) {
            Ok(s) => ToolOutput::text(format!(
                "{} the {} memory `{}`{}. Later sessions see it in their prompt; this one already knows it.",
                if s.updated { "Updated" } else { "Saved" },
                store.label(),
                entry.name,
                if s.indexed {
                    ""
                } else {
                    " (its index was edited by hand, so no line was added there; the user can tidy it with /dream)"
                }
            )),
            Err(e) => ToolOutput::error(format!("not saved: {e}")),
        }
    }
}

struct Delete {
    memory: Arc<Memory>,
}

#[derive(serde::Deserialize)]
struct DeleteInput {
    name: String,
    #[serde(default)]
    scope: Option<String>,
}

#[async_trait]
impl ToolExecutor for Delete {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            "memory_delete",
            "Delete a memory that is wrong or no longer true.",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "scope": {"type": "string", "enum": ["workspace", "user"]}
                },
                "required": ["name"]
            }),
        )
    }

    fn summary(&self, input: &Value) -> Option<String> {
        input.get("name").and_then(Value::as_str).map(str::to_owned)
    }

    async fn execute(&self, input: Value, _ctx: &ToolContext) -> ToolOutput {
        let i: DeleteInput = match parse_input("memory_delete", input) {
            Ok(i) => i,
            Err(e) => return e,
        };
        let scopes = match i.scope.as_deref() {
            Some(s) => match s.parse::<Scope>() {
                Ok(s) => vec![s],
                Err(e) => return ToolOutput::error(e),
            },
            None => vec![Scope::Workspace, Scope::User],
        };
        for scope in scopes {
            let store = self.memory.store(scope);
            match store.delete(i.name.trim()) {
                Ok(true) => {
                    return ToolOutput::text(format!("Deleted the {} memory `{}`.", store.label(), i.name))
                }
                Ok(false) => {}
                Err(e) => return ToolOutput::error(format!("not deleted: {e}")),
            }
        }
        ToolOutput::error(format!("there is no memory `{}`; memory_search finds names", i.name))
    }
}

struct Search {
    memory: Arc<Memory>,
}

#[derive(serde::Deserialize)]
struct SearchInput {
    query: String,
}

#[async_trait]
impl ToolExecutor for Search {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            "memory_search",
            "Find saved memories that contain every word of the query.",
            json!({
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"]
            }),
        )
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::reads()
    }

    async fn execute(&self, input: Value, _ctx: &ToolContext) -> ToolOutput {
        let i: SearchInput = match parse_input("memory_search", input) {
            Ok(i) => i,
            Err(e) => return e,
        };
        let hits = self.memory.search(&i.query, 10);
        if hits.is_empty() {
            return ToolOutput::text(format!("No memory matches `{}`.", i.query));
        }
        let mut out = String::new();
        for h in hits {
            match (h.entry, h.line) {
                (Some(e), _) => out.push_str(&format!(
                    "## {} ({} memory, {}, updated {})\n{}\n\n{}\n\n",
                    e.name,
                    h.scope,
                    e.kind.as_str(),
                    e.updated,
                    e.description,
                    e.body
                )),
                (None, Some(line)) => {
                    out.push_str(&format!(
                        "- {} ({} memory index)\n",
                        line.trim_start_matches("- "),
                        h.scope
                    ));
                }
                (None, None) => {}
            }
        }
        ToolOutput::text(out.trim_end().to_owned())
    }
}
