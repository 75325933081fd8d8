//! `todo_write` (the model's task list, shown by front ends) and `ask_user` (a question for the
//! user).

use octo_agent::{
    async_trait, parse_input, OutputKind, ToolContext, ToolDefinition, ToolExecutor, ToolMeta, ToolOutput,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The state of one task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

/// The tool-update kind the task list arrives as (its whole list, each time it changes).
pub const TODOS_UPDATE: &str = "todos";

/// One task of the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Todo {
    /// What to do, in the imperative ("Run the tests").
    pub content: String,
    /// Its state.
    pub status: TodoStatus,
    /// The same in the present continuous ("Running the tests"), for spinners.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "activeForm")]
    pub active_form: Option<String>,
}

/// Replaces the model's task list; front ends receive it as a `todos` tool update.
#[derive(Debug, Clone, Copy, Default)]
pub struct TodoWrite;

#[derive(Deserialize)]
struct TodoInput {
    todos: Vec<Todo>,
}

#[async_trait]
impl ToolExecutor for TodoWrite {
    fn summary(&self, input: &Value) -> Option<String> {
        let items = input.get("todos")?.as_array()?;
        let done =
            items.iter().filter(|t| t.get("status").and_then(Value::as_str) == Some("completed")).count();
        Some(format!("{} items, {done} done", items.len()))
    }

    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            "todo_write",
            "Your task list for work of several steps, sent whole each time. Keep one item in_progress; mark \
             each completed once done.",
            json!({
                "type": "object",
                "properties": {
                    "todos": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "content": {"type": "string"},
                                "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                                "active_form": {"type": "string"}
                            },
                            "required": ["content", "status"]
                        }
                    }
                },
                "required": ["todos"]
            }),
        )
    }

    // It changes nothing on disk, only what the user is shown; two lists at once would race.
    fn meta(&self) -> ToolMeta {
        ToolMeta::reads()
            .concurrency_safe(false)
            .output(OutputKind::Todos)
            .aliases(&["TodoWrite", "TodoRead"])
    }

    async fn execute(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let input: TodoInput = match parse_input("todo_write", input) {
            Ok(i) => i,
            Err(e) => return e,
        };
        if let Some(empty) = input.todos.iter().position(|t| t.content.trim().is_empty()) {
            return ToolOutput::error(format!("todo #{} has empty content", empty + 1));
        }
        let count = |s: TodoStatus| input.todos.iter().filter(|t| t.status == s).count();
        let (pending, doing, done) =
            (count(TodoStatus::Pending), count(TodoStatus::InProgress), count(TodoStatus::Completed));
        ctx.emit_update(TODOS_UPDATE, json!(input.todos));
        let mut out =
            format!("Todo list updated: {pending} pending, {doing} in progress, {done} completed.\n");
        for t in &input.todos {
            let mark = match t.status {
                TodoStatus::Pending => "[ ]",
                TodoStatus::InProgress => "[~]",
                TodoStatus::Completed => "[x]",
            };
            out.push_str(&format!("{mark} {}\n", t.content));
        }
        if doing > 1 {
            out.push_str("Note: more than one item is in progress; keep one at a time.\n");
        }
        ToolOutput::text(out)
    }
}

/// Asks the user a question through the front end.
#[derive(Debug, Clone, Copy, Default)]
pub struct AskUser;

#[derive(Deserialize)]
struct AskInput {
    question: String,
    #[serde(default)]
    options: Vec<String>,
}

#[async_trait]
impl ToolExecutor for AskUser {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            "ask_user",
            "Ask the user and wait for the answer (choices optional). Only for their decisions or an ambiguous \
             request, never for permissions.",
            json!({
                "type": "object",
                "properties": {
                    "question": {"type": "string"},
                    "options": {"type": "array", "items": {"type": "string"}}
                },
                "required": ["question"]
            }),
        )
    }

    // It only asks: nothing changes, so no approval (and it is allowed in plan mode).
    fn meta(&self) -> ToolMeta {
        ToolMeta::reads().concurrency_safe(false).aliases(&["AskUserQuestion"])
    }

    async fn execute(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let input: AskInput = match parse_input("ask_user", input) {
            Ok(i) => i,
            Err(e) => return e,
        };
        if input.question.trim().is_empty() {
            return ToolOutput::error("`question` is empty");
        }
        match ctx.ask_user(&input.question, &input.options).await {
            Some(answer) => ToolOutput::text(format!("The user answered: {answer}")),
            None => ToolOutput::error(
                "nobody could answer (this run is unattended, or the question was cancelled). Continue with \
                 your best judgment and say what you assumed, or end your turn with the question.",
            ),
        }
    }
}
