//! The API on loopback against the mock model: a whole session with a tool call approved over
//! HTTP, events over SSE and WebSocket, reconnecting, and every bad input the issue names.

use super::common::{start, Server};
use futures_util::StreamExt;
use octo_testkit::anthropic::Reply;
use octo_testkit::Scripted;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

fn write_call() -> Scripted {
    Scripted::sse(
        Reply::new()
            .text("Writing.")
            .tool_use("toolu_1", "write_file", json!({"path": "hello.txt", "content": "hi\n"}))
            .sse(),
    )
}

fn answer(t: &str) -> Scripted {
    Scripted::sse(Reply::new().text(t).sse())
}

/// Reads SSE events from `path` until `stop` matches one; their (id, JSON) pairs.
async fn sse_until(
    s: &Server,
    path: &str,
    last_id: Option<&str>,
    stop: impl Fn(&Value) -> bool,
) -> Vec<(u64, Value)> {
    let mut req = s.req(reqwest::Method::GET, path);
    if let Some(id) = last_id {
        req = req.header("Last-Event-ID", id);
    }
    let mut resp = req.send().await.unwrap();
    assert_eq!(resp.status(), 200);
    read_until(&mut resp, stop).await
}

/// Reads SSE events from an open response until `stop` matches one; their (id, JSON) pairs.
async fn read_until(resp: &mut reqwest::Response, stop: impl Fn(&Value) -> bool) -> Vec<(u64, Value)> {
    let (mut buf, mut out, mut id) = (String::new(), Vec::new(), 0u64);
    loop {
        let chunk = tokio::time::timeout(Duration::from_secs(20), resp.chunk())
            .await
            .expect("events stalled")
            .unwrap()
            .unwrap();
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buf.find("\n\n") {
            let block = buf[..end].to_owned();
            buf.drain(..end + 2);
            let mut data = String::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("id:") {
                    id = v.trim().parse().unwrap();
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push_str(v.trim_start());
                }
            }
            if data.is_empty() {
                continue;
            }
            let v: Value = serde_json::from_str(&data).unwrap();
            let done = stop(&v);
            out.push((id, v));
            if done {
                return out;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_session_with_a_tool_call_approved_over_http() {
    let s = start(vec![write_call(), answer("Done.")]).await;
    let id = s.session().await;
    let (status, _) =
        s.post(&format!("/api/sessions/{id}/prompt"), json!({"text": "create hello.txt"})).await;
    assert_eq!(status, 202);
    let events =
        sse_until(&s, &format!("/api/sessions/{id}/events"), None, |v| v["type"] == "approval_required")
            .await;
    let approval = events.last().unwrap().1["approval_id"].as_str().unwrap().to_owned();
    // Ids are numbered from 1, in order.
    let ids: Vec<u64> = events.iter().map(|e| e.0).collect();
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>());
    let (status, _) =
        s.post(&format!("/api/sessions/{id}/approvals/{approval}"), json!({"decision": "allow"})).await;
    assert_eq!(status, 204);
    // Answering again: nothing is waiting.
    let (status, body) =
        s.post(&format!("/api/sessions/{id}/approvals/{approval}"), json!({"decision": "allow"})).await;
    assert_eq!(status, 409, "{body}");
    // Reconnect after the last event seen: the rest, without repeats.
    let last = events.last().unwrap().0;
    let rest = sse_until(&s, &format!("/api/sessions/{id}/events"), Some(&last.to_string()), |v| {
        v["type"] == "turn_end"
    })
    .await;
    assert_eq!(rest[0].0, last + 1);
    assert!(rest.iter().any(
        |(_, v)| v["type"] == "tool_call_end" && v["output"].as_str().unwrap_or("").contains("hello.txt")
    ));
    assert_eq!(std::fs::read_to_string(s.ws.join("hello.txt")).unwrap(), "hi\n");
    let (_, st) = s.get(&format!("/api/sessions/{id}")).await;
    assert_eq!(st["turns"], 1);
    assert!(st["usage"]["output_tokens"].as_u64().unwrap() > 0);
    let (_, history) = s.get(&format!("/api/sessions/{id}/history")).await;
    assert!(history["messages"].as_array().is_some_and(|m| m.len() >= 3), "{history}");
    // The history holds everything up to the turn's last commit; what follows it is the turn's end.
    let committed = rest.iter().rev().find(|(_, v)| v["type"] == "committed").unwrap().0;
    assert_eq!(history["last_event"].as_u64().unwrap(), committed);
    let items = history["items"].as_array().unwrap();
    assert!(
        items
            .iter()
            .any(|i| i["kind"] == "tool" && i["summary"].as_str().is_some_and(|t| t.contains("hello.txt"))),
        "{history}"
    );
    // The same events over WebSocket, from the start.
    let ws_url = format!("{}/api/sessions/{id}/ws?since=0", s.base.replace("http://", "ws://"));
    let mut req =
        tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(ws_url).unwrap();
    req.headers_mut().insert("authorization", format!("Bearer {}", s.token).parse().unwrap());
    let (mut ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
    let mut seen = Vec::new();
    while let Some(Ok(m)) = tokio::time::timeout(Duration::from_secs(10), ws.next()).await.unwrap() {
        let v: Value = serde_json::from_str(m.to_text().unwrap()).unwrap();
        seen.push(v["seq"].as_u64().unwrap());
        if v["event"]["type"] == "turn_end" {
            break;
        }
    }
    assert_eq!(seen.first(), Some(&1));
    assert_eq!(*seen.last().unwrap(), rest.last().unwrap().0);
    ws.close(None).await.unwrap();
    // Delete: gone.
    let r = s.req(reqwest::Method::DELETE, &format!("/api/sessions/{id}")).send().await.unwrap();
    assert_eq!(r.status(), 204);
    assert_eq!(s.get(&format!("/api/sessions/{id}")).await.0, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_disconnects_mid_stream_misses_nothing() {
    let s = start(vec![write_call(), answer("Finished after the approval.")]).await;
    let id = s.session().await;
    s.post(&format!("/api/sessions/{id}/prompt"), json!({"text": "go"})).await;
    // Read up to the approval, then drop the connection.
    let first =
        sse_until(&s, &format!("/api/sessions/{id}/events"), None, |v| v["type"] == "approval_required")
            .await;
    let approval = first.last().unwrap().1["approval_id"].as_str().unwrap().to_owned();
    s.post(&format!("/api/sessions/{id}/approvals/{approval}"), json!({"decision": "allow"})).await;
    // The turn went on without a client; `?since=` picks up right after.
    let since = first.last().unwrap().0;
    let rest =
        sse_until(&s, &format!("/api/sessions/{id}/events?since={since}"), None, |v| v["type"] == "turn_end")
            .await;
    assert_eq!(rest[0].0, since + 1);
    let text: String = rest
        .iter()
        .filter(|(_, v)| v["type"] == "text_delta")
        .map(|(_, v)| v["text"].as_str().unwrap())
        .collect();
    assert!(text.contains("Finished after the approval."), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_the_token_or_from_elsewhere_are_refused() {
    let s = start(vec![]).await;
    let url = format!("{}/api/sessions", s.base);
    let none = s.client.get(&url).send().await.unwrap();
    assert_eq!(none.status(), 401);
    let body = none.text().await.unwrap();
    assert!(!body.contains(&s.token) && body.contains("unauthorized"));
    let wrong = s.client.get(&url).bearer_auth("0".repeat(64)).send().await.unwrap();
    assert_eq!(wrong.status(), 401);
    // DNS rebinding: the right token but another host name.
    let host =
        s.client.get(&url).bearer_auth(&s.token).header("host", "evil.example:80").send().await.unwrap();
    assert_eq!(host.status(), 403);
    let origin = s
        .client
        .get(&url)
        .bearer_auth(&s.token)
        .header("origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(origin.status(), 403);
    // The login link sets the cookie, which then works alone.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let noredirect = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let bad = noredirect.get(format!("{}/login?token=nope", s.base)).send().await.unwrap();
    assert_eq!(bad.status(), 401);
    let login = noredirect.get(format!("{}/login?token={}", s.base, s.token)).send().await.unwrap();
    assert_eq!(login.status(), 303);
    let cookie = login.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"));
    let pair = cookie.split(';').next().unwrap().to_owned();
    let ok = noredirect.get(&url).header("cookie", pair.clone()).send().await.unwrap();
    assert_eq!(ok.status(), 200);
    let page = noredirect.get(format!("{}/", s.base)).header("cookie", pair.clone()).send().await.unwrap();
    assert!(page.text().await.unwrap().contains("<title>octo</title>"));
    assert!(!pair.contains(&s.token), "the cookie is a session, not the permanent token");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_link_works_once() {
    let s = start(vec![]).await;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let noredirect = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let code = s.state.logins.new_code().unwrap();
    let link = format!("{}/login?code={code}", s.base);
    let first = noredirect.get(&link).send().await.unwrap();
    assert_eq!(first.status(), 303);
    let pair = first.headers()["set-cookie"].to_str().unwrap().split(';').next().unwrap().to_owned();
    let api = noredirect.get(format!("{}/api/sessions", s.base)).header("cookie", pair).send().await.unwrap();
    assert_eq!(api.status(), 200);
    let again = noredirect.get(&link).send().await.unwrap();
    assert_eq!(again.status(), 401);
    assert!(again.text().await.unwrap().contains("used already"));
    let made_up = noredirect
        .get(format!("{}/api/sessions", s.base))
        .header("cookie", "octo_token=abc")
        .send()
        .await
        .unwrap();
    assert_eq!(made_up.status(), 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_bodies_and_bad_calls_get_clear_errors() {
    let s = start(vec![]).await;
    let id = s.session().await;
    let bad = s
        .req(reqwest::Method::POST, &format!("/api/sessions/{id}/prompt"))
        .header("content-type", "application/json")
        .body("{\"text\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    assert!(bad.text().await.unwrap().contains("malformed JSON"));
    let (status, body) = s.post(&format!("/api/sessions/{id}/prompt"), json!({"txt": "hi"})).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("txt") || body["error"].as_str().unwrap().contains("text"),
        "{body}"
    );
    let (status, _) =
        s.post(&format!("/api/sessions/{id}/approvals/nope"), json!({"decision": "allow"})).await;
    assert_eq!(status, 409);
    let (status, body) =
        s.post(&format!("/api/sessions/{id}/approvals/nope"), json!({"decision": "maybe"})).await;
    assert_eq!(status, 400, "{body}");
    let (status, _) = s.post("/api/sessions/s999/prompt", json!({"text": "hi"})).await;
    assert_eq!(status, 404);
    // A 40 MB prompt: refused from its announced length, before the body is read (a raw socket,
    // so the answer is seen whether or not the client finished sending).
    {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let addr = s.base.trim_start_matches("http://").to_owned();
        let mut sock = tokio::net::TcpStream::connect(&addr).await.unwrap();
        let head = format!(
            "POST /api/sessions/{id}/prompt HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            s.token,
            40 << 20
        );
        sock.write_all(head.as_bytes()).await.unwrap();
        let _ = sock.write_all(&vec![b'x'; 64 << 10]).await;
        let mut buf = vec![0u8; 512];
        let n = tokio::time::timeout(Duration::from_secs(10), sock.read(&mut buf)).await.unwrap().unwrap();
        let answer = String::from_utf8_lossy(&buf[..n]);
        assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    }
    // A workspace outside the roots.
    let (status, body) = s.post("/api/sessions", json!({"workspace": "/"})).await;
    assert_eq!(status, 403, "{body}");
    let (status, body) = s.post("/api/sessions", json!({"mode": "sometimes"})).await;
    assert_eq!(status, 400, "{body}");
    let (status, doc) = s.get("/api/openapi.json").await;
    assert_eq!(status, 200);
    assert!(doc["paths"]["/api/sessions/{id}/prompt"]["post"]["requestBody"].is_object());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_sessions_created_rapidly() {
    let s = Arc::new(start(vec![]).await);
    let mut tasks = Vec::new();
    for _ in 0..100 {
        let s = Arc::clone(&s);
        tasks.push(tokio::spawn(async move { s.post("/api/sessions", json!({})).await.0 }));
    }
    for t in tasks {
        assert_eq!(t.await.unwrap(), 201);
    }
    let (_, list) = s.get("/api/sessions").await;
    assert_eq!(list.as_array().unwrap().len(), 100);
    let mut ids: Vec<&str> = list.as_array().unwrap().iter().map(|v| v["id"].as_str().unwrap()).collect();
    ids.dedup();
    assert_eq!(ids.len(), 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_and_mode_plan_run_through_the_shared_commands() {
    let s = start(vec![]).await;
    let id = s.session().await;
    let run = |line: &'static str| {
        let (s, id) = (&s, id.clone());
        async move {
            let r = s
                .req(reqwest::Method::POST, &format!("/api/sessions/{id}/command"))
                .json(&json!({ "line": line }))
                .send()
                .await
                .unwrap();
            (r.status().as_u16(), r.json::<Value>().await.unwrap())
        }
    };
    let (status, body) = run("/mode plan").await;
    assert_eq!((status, body["kind"].as_str()), (200, Some("mode")), "{body}");
    assert_eq!(body["lines"][0], "permission mode: plan");
    assert_eq!(s.get(&format!("/api/sessions/{id}")).await.1["mode"], "plan");
    let (status, body) = run("/status").await;
    assert_eq!(status, 200, "{body}");
    let text =
        body["lines"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect::<Vec<_>>().join("\n");
    assert!(
        text.contains("permission mode: plan") && text.contains("model: mock:claude-sonnet-4-5"),
        "{text}"
    );
    let (status, body) = run("/mode sideways").await;
    assert!(status == 400 && body["error"].as_str().unwrap().contains("Usage: /mode"), "{body}");
    let (status, body) = run("/rewind").await;
    assert!(
        status == 400 && body["error"].as_str().unwrap().contains("not available in the web UI: "),
        "{body}"
    );
    let (status, body) = run("/statsu").await;
    assert!(status == 404 && body["error"].as_str().unwrap().contains("did you mean /status?"), "{body}");
}

/// The table decides what the web offers: every command whose needs the web meets is in the
/// menu, and every other is refused with the reason, never "not a command".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_table_is_walked_through_the_api() {
    use octo_app::commands::{Capabilities, FrontEnd, Takes, COMMANDS};
    let web = FrontEnd::new("the web UI", Capabilities::START_OVER.and(Capabilities::STOP_BY_COMMAND));
    let s = start(vec![]).await;
    let id = s.session().await;
    let (_, menu) = s.get(&format!("/api/sessions/{id}/commands")).await;
    let listed: Vec<&str> = menu.as_array().unwrap().iter().filter_map(|c| c["name"].as_str()).collect();
    for spec in COMMANDS {
        if web.offers(spec) {
            assert!(listed.contains(&spec.name), "{} is offered: {listed:?}", spec.name);
            continue;
        }
        let line = if spec.takes == Takes::Count { format!("{} 1", spec.name) } else { spec.name.to_owned() };
        let r = s
            .req(reqwest::Method::POST, &format!("/api/sessions/{id}/command"))
            .json(&json!({ "line": line }))
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        let body = r.json::<Value>().await.unwrap();
        let why = body["error"].as_str().unwrap_or_default();
        assert!(
            status == 400 && why.starts_with(&format!("{} is not available in the web UI: ", spec.name)),
            "{body}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mode_and_model_can_be_changed() {
    let s = start(vec![]).await;
    let id = s.session().await;
    let r = s
        .req(reqwest::Method::PUT, &format!("/api/sessions/{id}/mode"))
        .json(&json!({"mode": "plan"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(s.get(&format!("/api/sessions/{id}")).await.1["mode"], "plan");
    let r = s
        .req(reqwest::Method::PUT, &format!("/api/sessions/{id}/model"))
        .json(&json!({"model": "mock:claude-haiku-4-5"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap()["model"], "mock:claude-haiku-4-5");
    // The switch reaches the session between turns, at once when it is idle.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while s.get(&format!("/api/sessions/{id}")).await.1["model"] != "mock:claude-haiku-4-5" {
        assert!(std::time::Instant::now() < deadline, "the model switch never showed in the status");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let r = s
        .req(reqwest::Method::PUT, &format!("/api/sessions/{id}/model"))
        .json(&json!({"model": "nowhere:x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
}

/// A background sub-agent asks to write after the parent's turn ended: the request reaches the
/// web UI's event stream labelled with the child, waits there, and an answer over HTTP lets the
/// child go on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_childs_approval_between_turns_is_answered_over_http() {
    let bg = json!({"subagent_type": "general", "description": "write later", "prompt": "write late.txt", "background": true});
    let s = start(vec![Scripted::sse(Reply::new().tool_use("t1", "task", bg).sse()), answer("Started it.")])
        .await;
    s.llm
        .script_anthropic_matching(
            "You are a sub-agent of octo",
            [
                Scripted::sse(
                    Reply::new()
                        .tool_use("c1", "write_file", json!({"path": "late.txt", "content": "late\n"}))
                        .sse(),
                )
                .delay(Duration::from_millis(300)),
                answer("Wrote it."),
            ],
        )
        .await;
    let id = s.session().await;
    let (status, _) =
        s.post(&format!("/api/sessions/{id}/prompt"), json!({"text": "write in the background"})).await;
    assert_eq!(status, 202);
    let events =
        sse_until(&s, &format!("/api/sessions/{id}/events"), None, |v| v["type"] == "approval_required")
            .await;
    assert!(events.iter().any(|(_, v)| v["type"] == "turn_end"), "the parent's turn ended first");
    let asked = &events.last().unwrap().1;
    assert!(
        asked["request"]["summary"].as_str().unwrap_or("").starts_with("[background sub-agent general-1]"),
        "{asked}"
    );
    assert!(!s.ws.join("late.txt").exists());
    let approval = asked["approval_id"].as_str().unwrap();
    let (status, _) =
        s.post(&format!("/api/sessions/{id}/approvals/{approval}"), json!({"decision": "allow"})).await;
    assert_eq!(status, 204);
    for _ in 0..100 {
        if s.ws.join("late.txt").exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(std::fs::read_to_string(s.ws.join("late.txt")).unwrap(), "late\n");
}

/// A client that reads slowly while ten thousand events are produced (more than the live
/// channel holds) sees every one of them, numbered without a gap: what it fell behind on is
/// caught up from the kept log (or, were that gone, it would be told with a `lagged` event).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_client_sees_every_event_or_is_told_what_it_missed() {
    let long = "x".repeat(10_000);
    let s = start(vec![Scripted::sse(Reply::new().text(long.clone()).chunk_size(1).sse())]).await;
    let id = s.session().await;
    let mut resp = s.req(reqwest::Method::GET, &format!("/api/sessions/{id}/events")).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let (status, _) = s.post(&format!("/api/sessions/{id}/prompt"), json!({"text": "talk a lot"})).await;
    assert_eq!(status, 202);
    // Fall behind: nothing is read while the turn produces its events.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let events = read_until(&mut resp, |v| v["type"] == "turn_end").await;
    let ids: Vec<u64> = events.iter().map(|(id, _)| *id).collect();
    let text: String = events
        .iter()
        .filter(|(_, v)| v["type"] == "text_delta")
        .filter_map(|(_, v)| v["text"].as_str())
        .collect();
    let lagged = events.iter().any(|(_, v)| v["type"] == "lagged");
    assert!(ids.windows(2).all(|w| w[1] > w[0]), "numbers only go up");
    let gaps = ids.windows(2).filter(|w| w[1] != w[0] + 1).count();
    assert!(
        lagged || (gaps == 0 && text == long),
        "a silent gap: {gaps} gaps, {} of {} characters",
        text.len(),
        long.len()
    );
    assert!(ids.len() > 10_000 || lagged, "{}", ids.len());
    // Told it missed some, the client reads the history again: the whole answer is there.
    let (status, history) = s.get(&format!("/api/sessions/{id}/history")).await;
    assert_eq!(status, 200);
    let said = history["messages"].as_array().unwrap().last().unwrap()["content"][0]["text"].clone();
    assert_eq!(said.as_str().map(str::len), Some(long.len()), "{}", history["messages"]);
}
