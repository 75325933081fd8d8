//! The routes the web UI's sessions, commands and pictures use: saved sessions (list with a broken
//! file named, rename, fork, delete while open), the new-session choices, Markdown, the command
//! list, images over the limit, rewind's bad input, and the OpenAPI table against the router.

use super::common::{start, Server};
use octo_testkit::anthropic::Reply;
use octo_testkit::Scripted;
use serde_json::{json, Value};
use std::time::Duration;

async fn idle(s: &Server, id: &str) -> Value {
    for _ in 0..200 {
        let (_, st) = s.get(&format!("/api/sessions/{id}")).await;
        if st["running"] == json!(false) && st["turns"].as_u64() >= Some(1) {
            return st;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the session never finished its turn");
}

async fn call(s: &Server, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
    let mut r = s.req(method, path);
    if let Some(b) = body {
        r = r.json(&b);
    }
    let resp = r.send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saved_sessions_are_listed_renamed_forked_and_deleted() {
    let s = start(vec![Scripted::sse(Reply::new().text("Hello there.").sse())]).await;
    let id = s.session().await;
    assert_eq!(s.post(&format!("/api/sessions/{id}/prompt"), json!({"text": "say hello"})).await.0, 202);
    let st = idle(&s, &id).await;
    let saved = st["saved_as"].as_str().unwrap().to_owned();
    std::fs::write(s.home.join("sessions/20990101-broken.jsonl"), "{not json\n").unwrap();
    let (status, list) = s.get("/api/saved").await;
    assert_eq!(status, 200, "{list}");
    let one =
        list["sessions"].as_array().unwrap().iter().find(|x| x["id"] == saved.as_str()).unwrap().clone();
    assert_eq!(one["open"], json!(id), "{one}");
    assert!(one["title"].as_str().unwrap().contains("say hello"), "{one}");
    assert!(list["unreadable"].as_array().unwrap().iter().any(|b| b["id"] == "20990101-broken"), "{list}");
    // Rename while open, then find it by the new title.
    let (status, _) =
        call(&s, reqwest::Method::PATCH, &format!("/api/saved/{saved}"), Some(json!({"title": "Greeting"})))
            .await;
    assert_eq!(status, 200);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (_, found) = s.get("/api/saved?q=greet").await;
    assert_eq!(found["sessions"][0]["title"], "Greeting", "{found}");
    let (status, _) =
        call(&s, reqwest::Method::PATCH, &format!("/api/saved/{saved}"), Some(json!({"title": "  "}))).await;
    assert_eq!(status, 400);
    // Fork: a new saved session with the same conversation, which opens.
    let (status, fork) = s.post(&format!("/api/saved/{saved}/fork"), json!({})).await;
    assert_eq!(status, 200, "{fork}");
    let fork_id = fork["id"].as_str().unwrap().to_owned();
    let (status, opened) = s.post("/api/sessions", json!({"resume": fork_id})).await;
    assert_eq!(status, 201, "{opened}");
    let (_, h) = s.get(&format!("/api/sessions/{}/history", opened["id"].as_str().unwrap())).await;
    assert!(
        h["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["kind"] == "assistant" && i["html"].as_str().unwrap().contains("Hello there.")),
        "{h}"
    );
    // Opening a saved session that is open already gives the open one.
    let (status, again) = s.post("/api/sessions", json!({"resume": saved})).await;
    assert_eq!((status, again["id"].clone()), (200, json!(id)));
    // Delete while open (a browser following its events): stopped, then gone from disk.
    let follower = s.req(reqwest::Method::GET, &format!("/api/sessions/{id}/events")).send().await.unwrap();
    let (status, body) = call(&s, reqwest::Method::DELETE, &format!("/api/saved/{saved}"), None).await;
    assert_eq!(status, 204, "{body}");
    assert!(!s.home.join(format!("sessions/{saved}.jsonl")).exists());
    assert_eq!(s.get(&format!("/api/sessions/{id}")).await.0, 404);
    drop(follower);
    let (status, _) = call(&s, reqwest::Method::DELETE, &format!("/api/saved/{saved}"), None).await;
    assert_eq!(status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn choices_markdown_commands_images_and_rewind_inputs() {
    let s = start(vec![]).await;
    std::fs::create_dir_all(s.ws.join("project")).unwrap();
    let (_, c) = s.get("/api/choices").await;
    assert!(
        c["workspaces"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().ends_with("/project")),
        "{c}"
    );
    assert_eq!(c["default"], "mock:claude-sonnet-4-5");
    let (_, m) = s.post("/api/markdown", json!({"text": "| a |\n|---|\n| <script>x</script> |"})).await;
    let html = m["html"].as_str().unwrap();
    assert!(html.contains("<table>") && !html.contains("<script"), "{html}");
    let id = s.session().await;
    let (_, list) = s.get(&format!("/api/sessions/{id}/commands")).await;
    assert!(list.as_array().unwrap().iter().any(|c| c["name"] == "/compact"), "{list}");
    // An image over the limit is refused with the limit; one that is no image says so.
    use base64::Engine;
    let mut big = b"\x89PNG\r\n\x1a\n".to_vec();
    big.resize(21 << 20, 0);
    let data = base64::engine::general_purpose::STANDARD.encode(&big);
    let (status, body) =
        s.post(&format!("/api/sessions/{id}/prompt"), json!({"text": "look", "images": [data]})).await;
    assert_eq!(status, 413, "{body}");
    assert!(body["error"].as_str().unwrap().contains("20"), "{body}");
    let text = base64::engine::general_purpose::STANDARD.encode(b"hello");
    let (status, body) =
        s.post(&format!("/api/sessions/{id}/prompt"), json!({"text": "look", "images": [text]})).await;
    assert_eq!(status, 400, "{body}");
    assert!(body["error"].as_str().unwrap().contains("not a PNG"), "{body}");
    let (status, body) =
        s.post(&format!("/api/sessions/{id}/rewind"), json!({"turns": 1, "what": "everything"})).await;
    assert_eq!(status, 400, "{body}");
    let (status, _) = s.post(&format!("/api/sessions/{id}/prompt"), json!({"text": "/no-such-skill"})).await;
    assert_eq!(status, 404);
}

/// Every route in the OpenAPI table is served (not the router's own 404 or 405), and every route
/// the router declares is in the table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openapi_table_matches_the_router() {
    let s = start(vec![]).await;
    for (method, path, _, _) in octo_server::ROUTES {
        let p = path.replace("{id}", "nope").replace("{approval}", "nope").replace("{question}", "nope");
        let m: reqwest::Method = method.to_uppercase().parse().unwrap();
        let mut r = s.req(m, &p);
        if matches!(*method, "post" | "put" | "patch") {
            r = r.json(&json!({}));
        }
        let resp = r.send().await.unwrap();
        let status = resp.status().as_u16();
        let body = resp.text().await.unwrap_or_default();
        assert_ne!(status, 405, "{method} {path}: the router has no such method");
        assert!(status != 404 || body.contains("error"), "{method} {path}: the router has no such route");
    }
    let source = include_str!("../../src/api/mod.rs");
    for line in source.lines().filter(|l| l.trim_start().starts_with(".route(\"")) {
        let path = line.split('"').nth(1).unwrap();
        assert!(
            octo_server::ROUTES.iter().any(|r| r.1 == path),
            "{path} is routed but not in the OpenAPI table"
        );
    }
}
