//! Elicitation: a server asking the user for input in the middle of a call (MCP's form mode).
//! The question goes to whoever can answer it: the front end of the call that is running (its
//! `ask_user`, one question per field, so the REPL, the web UI, the chats and ACP all show it),
//! else an [`Elicitor`] the embedding program set on the hub. Nobody to ask (a headless run)
//! declines, and the user is told once what was asked.

use octo_agent::ToolContext;
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex};

/// What a server asks.
#[derive(Debug, Clone, PartialEq)]
pub struct Elicitation {
    /// The server's name.
    pub server: String,
    /// Its message to the user.
    pub message: String,
    /// The form: an object schema of primitive fields (JSON Schema, as the server sent it).
    pub schema: Value,
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitAnswer {
    /// The form's values.
    Accept(Map<String, Value>),
    /// The user said no.
    Decline,
    /// The question was dismissed (or nobody could answer).
    Cancel,
}

/// Answers servers' questions for a program that embeds the hub (the conformance client, a
/// test).
#[octo_agent::async_trait]
pub trait Elicitor: Send + Sync {
    /// The answer to `question`.
    async fn answer(&self, question: Elicitation) -> ElicitAnswer;
}

/// The form's defaults (what an answer that changes nothing holds).
pub fn defaults(schema: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, p) in props {
            if let Some(d) = p.get("default") {
                out.insert(name.clone(), d.clone());
            }
        }
    }
    out
}

/// Who answers a server's questions: its running calls' front ends, else the hub's elicitor;
/// what nobody could answer, to tell the user.
#[derive(Default)]
pub(crate) struct Asking {
    /// The calls running on the server.
    pub askers: Askers,
    /// Who answers when no running call's front end can.
    pub elicitor: std::sync::OnceLock<Arc<dyn Elicitor>>,
    /// Questions nobody could answer.
    pub unanswered: Mutex<Vec<String>>,
}

/// The calls of a server that are running, newest last: a question goes to the newest.
#[derive(Default, Clone)]
pub(crate) struct Askers(Arc<Mutex<Vec<(u64, ToolContext)>>>);

impl Askers {
    /// Registers the call's context until the guard is dropped.
    pub fn during(&self, id: u64, ctx: &ToolContext) -> AskerGuard {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push((id, ctx.clone()));
        AskerGuard { askers: self.clone(), id }
    }

    fn newest(&self) -> Option<ToolContext> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).last().map(|(_, c)| c.clone())
    }
}

/// Unregisters a call's context.
pub(crate) struct AskerGuard {
    askers: Askers,
    id: u64,
}

impl Drop for AskerGuard {
    fn drop(&mut self) {
        self.askers
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .retain(|(i, _)| *i != self.id);
    }
}

/// Asks through the running call's front end, field by field; `None` when nobody can answer.
async fn ask_fields(ctx: &ToolContext, q: &Elicitation) -> Option<ElicitAnswer> {
    let opening = format!("The MCP server `{}` asks: {}", q.server, q.message);
    let go = ctx.ask_user(&opening, &["answer".to_owned(), "decline".to_owned()]).await?;
    if go != "answer" {
        return Some(ElicitAnswer::Decline);
    }
    let required: Vec<&str> = q
        .schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut values = Map::new();
    let Some(props) = q.schema.get("properties").and_then(Value::as_object) else {
        return Some(ElicitAnswer::Accept(values));
    };
    for (name, p) in props {
        let (prompt, options) = field_prompt(name, p);
        let answer = ctx.ask_user(&prompt, &options).await?;
        match field_value(p, answer.trim()) {
            Some(v) => {
                values.insert(name.clone(), v);
            }
            None if required.contains(&name.as_str()) => return Some(ElicitAnswer::Decline),
            None => {}
        }
    }
    Some(ElicitAnswer::Accept(values))
}

fn field_prompt(name: &str, p: &Value) -> (String, Vec<String>) {
    let title = p.get("title").and_then(Value::as_str).unwrap_or(name);
    let mut prompt = title.to_owned();
    if let Some(d) = p.get("description").and_then(Value::as_str) {
        prompt.push_str(&format!(" — {d}"));
    }
    if let Some(d) = p.get("default") {
        prompt.push_str(&format!(" (empty: {d})"));
    }
    let options = match (p.get("type").and_then(Value::as_str), p.get("enum").and_then(Value::as_array)) {
        (_, Some(e)) => e.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect(),
        (Some("boolean"), _) => vec!["yes".into(), "no".into()],
        _ => Vec::new(),
    };
    (prompt, options)
}

/// An answer as the field's type; an empty answer is the default (or nothing).
fn field_value(p: &Value, answer: &str) -> Option<Value> {
    if answer.is_empty() {
        return p.get("default").cloned();
    }
    match p.get("type").and_then(Value::as_str) {
        Some("boolean") => {
            Some(Value::Bool(matches!(answer.to_ascii_lowercase().as_str(), "yes" | "y" | "true")))
        }
        Some("integer") => answer.parse::<i64>().ok().map(Value::from),
        Some("number") => {
            answer.parse::<f64>().ok().and_then(|n| serde_json::Number::from_f64(n).map(Value::Number))
        }
        _ => Some(Value::String(answer.to_owned())),
    }
}

/// The answer to a server's `elicitation/create`: from the running call's front end, else the
/// hub's [`Elicitor`], else declined (and the user told).
pub(crate) async fn answer(
    server: &str,
    signals: &Asking,
    request: rmcp::model::ElicitRequestParams,
) -> rmcp::model::ElicitResult {
    use rmcp::model::{ElicitResult, ElicitationAction};
    let rmcp::model::ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } = request
    else {
        // Only the form mode is offered.
        return ElicitResult::new(ElicitationAction::Decline);
    };
    let q = Elicitation {
        server: server.to_owned(),
        message,
        schema: serde_json::to_value(&requested_schema).unwrap_or_default(),
    };
    let mut got = None;
    if let Some(ctx) = signals.askers.newest() {
        got = ask_fields(&ctx, &q).await;
    }
    if got.is_none() {
        if let Some(e) = signals.elicitor.get() {
            got = Some(e.answer(q.clone()).await);
        }
    }
    let answer = got.unwrap_or_else(|| {
        let shown: String = q.message.chars().take(200).collect();
        signals.unanswered.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(format!(
            "the MCP server `{server}` asked for input (\"{shown}\"), but nobody can answer in this run; it was declined"
        ));
        ElicitAnswer::Decline
    });
    match answer {
        ElicitAnswer::Accept(values) => {
            ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(values))
        }
        ElicitAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
        ElicitAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_take_the_fields_type_and_empty_is_the_default() {
        let int = json!({"type": "integer", "default": 30});
        assert_eq!(field_value(&int, ""), Some(json!(30)));
        assert_eq!(field_value(&int, "41"), Some(json!(41)));
        assert_eq!(field_value(&int, "many"), None);
        assert_eq!(field_value(&json!({"type": "boolean"}), "yes"), Some(json!(true)));
        assert_eq!(field_value(&json!({"type": "string"}), ""), None);
        let (prompt, options) =
            field_prompt("status", &json!({"type": "string", "enum": ["a", "b"], "default": "a"}));
        assert!(prompt.contains("empty: \"a\""), "{prompt}");
        assert_eq!(options, ["a", "b"]);
        let form =
            json!({"properties": {"name": {"type": "string", "default": "J"}, "n": {"type": "number"}}});
        assert_eq!(defaults(&form), serde_json::Map::from_iter([("name".to_owned(), json!("J"))]));
    }
}
