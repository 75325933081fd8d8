//! The API's OpenAPI description, from one table of its routes (a test checks the table against
//! the router).

use serde_json::{json, Value};

/// Every API route: method, path, what it does, its JSON body's fields.
pub const ROUTES: &[(&str, &str, &str, &[&str])] = &[
    ("get", "/login", "Exchange the one-time login link's token for the session cookie.", &[]),
    ("get", "/api/openapi.json", "This description.", &[]),
    ("get", "/api/choices", "What a new session may use: workspaces under the roots, configured models, the default.", &[]),
    ("post", "/api/markdown", "Markdown as sanitised HTML (what the page shows while an answer streams).", &["text"]),
    ("get", "/api/saved", "Saved sessions under the roots (?q= searches titles and ids), and the files that cannot be read.", &[]),
    ("patch", "/api/saved/{id}", "Rename a saved session.", &["title"]),
    ("delete", "/api/saved/{id}", "Delete a saved session (stopped first if open).", &[]),
    ("post", "/api/saved/{id}/fork", "Copy a saved session (its first `at` messages, or all) into a new one.", &["at?"]),
    ("get", "/api/sessions", "List the live sessions.", &[]),
    (
        "post",
        "/api/sessions",
        "Start a session (in a workspace under the roots; `resume` continues a saved one).",
        &["workspace?", "resume?", "model?", "mode?"],
    ),
    ("get", "/api/sessions/{id}", "A session's status: model, mode, usage, cost, context, todos.", &[]),
    ("delete", "/api/sessions/{id}", "Stop and forget a session (its saved conversation stays).", &[]),
    (
        "post",
        "/api/sessions/{id}/prompt",
        "Send a prompt (queued while a turn runs); `images` are base64; `/skill args` runs a skill or custom command.",
        &["text", "images?"],
    ),
    ("post", "/api/sessions/{id}/abort", "Cancel the running turn.", &[]),
    (
        "post",
        "/api/sessions/{id}/approvals/{approval}",
        "Answer an approval: allow, always, deny or deny_always.",
        &["decision", "message?"],
    ),
    ("post", "/api/sessions/{id}/questions/{question}", "Answer the model's question.", &["answer"]),
    ("put", "/api/sessions/{id}/model", "Switch the model (endpoint:model).", &["model"]),
    ("put", "/api/sessions/{id}/mode", "Switch the permission mode.", &["mode"]),
    (
        "post",
        "/api/sessions/{id}/command",
        "Run a shared command (`/status`, `/mode plan`, `/compact` …); answers its kind and lines.",
        &["line"],
    ),
    ("get", "/api/sessions/{id}/commands", "What `/` completes to: shared commands, skills and custom commands.", &[]),
    ("get", "/api/sessions/{id}/turns", "The last turns, newest first, with the files each changed.", &[]),
    (
        "post",
        "/api/sessions/{id}/rewind",
        "Go back over the last `turns` turns: `what` is both, code or conversation.",
        &["turns", "what?", "overwrite?"],
    ),
    (
        "get",
        "/api/sessions/{id}/history",
        "The committed messages, the cards they make, and the last event they include (then follow the events after it); never waits for a running turn.",
        &[],
    ),
    (
        "get",
        "/api/sessions/{id}/events",
        "Live events (Server-Sent Events), numbered; resume with Last-Event-ID or ?since=N.",
        &[],
    ),
    (
        "get",
        "/api/sessions/{id}/ws",
        "Live events over WebSocket as {\"seq\", \"event\"}; ?since=N resumes.",
        &[],
    ),
];

/// The OpenAPI 3.1 description, built from [`ROUTES`].
pub fn openapi() -> Value {
    let mut paths = serde_json::Map::new();
    for (method, path, about, fields) in ROUTES {
        let mut op = json!({"summary": about, "security": [{"token": []}], "responses": {"200": {"description": "OK"}}});
        if !fields.is_empty() {
            let props: serde_json::Map<String, Value> = fields
                .iter()
                .map(|f| (f.trim_end_matches('?').to_owned(), json!({"type": "string"})))
                .collect();
            let required: Vec<&str> = fields.iter().filter(|f| !f.ends_with('?')).copied().collect();
            op["requestBody"] = json!({"required": true, "content": {"application/json": {"schema": {
                "type": "object", "properties": props, "required": required
            }}}});
        }
        let entry = paths.entry((*path).to_owned()).or_insert_with(|| json!({}));
        entry[*method] = op;
    }
    json!({
        "openapi": "3.1.0",
        "info": {"title": "octo serve", "version": env!("CARGO_PKG_VERSION")},
        "components": {"securitySchemes": {"token": {"type": "http", "scheme": "bearer"}}},
        "paths": paths
    })
}
