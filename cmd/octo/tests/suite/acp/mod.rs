//! `octo acp` driven as an editor drives it: the real binary as a subprocess, the
//! `agent-client-protocol` crate's client side, octo-testkit's scripted model behind it.

use super::common::home_for;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, ContentBlock, Implementation, InitializeRequest,
    ListSessionsRequest, LoadSessionRequest, NewSessionRequest, PermissionOptionKind, PromptRequest,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse, SelectedPermissionOutcome,
    SessionNotification, SessionUpdate, SetSessionModeRequest, StopReason, ToolCallContent, ToolCallStatus,
    ToolKind,
};
use agent_client_protocol::{
    on_receive_notification, on_receive_request, v1, AcpAgent, AcpAgentConfig, Agent, Client,
};
use octo_testkit::anthropic::Reply;
use octo_testkit::{MockLlm, Scripted, TempHome};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod editor;

/// What the client saw and how it answers permission requests.
#[derive(Default)]
struct Seen {
    updates: Vec<SessionUpdate>,
    asked: Vec<RequestPermissionRequest>,
    /// Files octo read through the editor.
    reads: Vec<std::path::PathBuf>,
    /// What octo wrote into the editor's buffers (the disk is left alone, as a buffer would).
    writes: Vec<(std::path::PathBuf, String)>,
}

/// The editor's unsaved text of a file named `open.rs`.
const BUFFER: &str = "fn unsaved() {} // only in the editor\n";

fn agent(home: &TempHome) -> AcpAgent {
    // A test that needs retries writes how many attempts a request gets to `attempts`.
    let attempts = std::fs::read_to_string(home.home().join("attempts")).unwrap_or_else(|_| "1".into());
    let config = AcpAgentConfig::new(assert_cmd::cargo::cargo_bin("octo"))
        .arg("acp")
        .env("HOME", home.home().display().to_string())
        .env("OCTO_HOME", home.home().display().to_string())
        .env("OCTO_NO_KEYRING", "1")
        .env("OCTO_MAX_ATTEMPTS", attempts.trim())
        .env("MOCK_KEY", "sk-mock")
        .env("NO_COLOR", "1");
    AcpAgent::new(config)
}

fn text(t: &str) -> ContentBlock {
    ContentBlock::from(t.to_owned())
}

/// The text the agent streamed.
fn answer(seen: &Seen) -> String {
    seen.updates
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::AgentMessageChunk(c) => match &c.content {
                ContentBlock::Text(t) => Some(t.text.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// Runs `script` against `octo acp`; permission requests are answered with the option of
/// `answer`'s kind (none: cancelled).
async fn drive<F>(home: &TempHome, answer: Option<PermissionOptionKind>, script: F) -> Arc<Mutex<Seen>>
where
    F: AsyncFnOnce(v1::ConnectionTo<Agent>, Arc<Mutex<Seen>>) -> Result<(), agent_client_protocol::Error>,
{
    drive_with(home, answer, ClientCapabilities::new(), script).await
}

/// [`drive`] with the client offering `caps`; file reads are answered from [`BUFFER`] for
/// `open.rs` and refused otherwise; writes are kept in [`Seen::writes`].
async fn drive_with<F>(
    home: &TempHome,
    answer: Option<PermissionOptionKind>,
    caps: ClientCapabilities,
    script: F,
) -> Arc<Mutex<Seen>>
where
    F: AsyncFnOnce(v1::ConnectionTo<Agent>, Arc<Mutex<Seen>>) -> Result<(), agent_client_protocol::Error>,
{
    use agent_client_protocol::v1::schema::{
        ReadTextFileRequest, ReadTextFileResponse, WriteTextFileRequest, WriteTextFileResponse,
    };
    let seen = Arc::new(Mutex::new(Seen::default()));
    let (s1, s2, s3, s4) = (Arc::clone(&seen), Arc::clone(&seen), Arc::clone(&seen), Arc::clone(&seen));
    let s5 = Arc::clone(&seen);
    let result = Client
        .v1()
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                s1.lock().unwrap().updates.push(n.update);
                Ok(())
            },
            on_receive_notification!(),
        )
        .on_receive_request(
            async move |req: RequestPermissionRequest, responder, _cx| {
                let pick = answer
                    .and_then(|k| req.options.iter().find(|o| o.kind == k).map(|o| o.option_id.clone()));
                s2.lock().unwrap().asked.push(req);
                responder.respond(RequestPermissionResponse::new(match pick {
                    Some(id) => RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id)),
                    None => RequestPermissionOutcome::Cancelled,
                }))
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ReadTextFileRequest, responder, _cx| {
                let open = req.path.ends_with("open.rs");
                s4.lock().unwrap().reads.push(req.path);
                if open {
                    responder.respond(ReadTextFileResponse::new(BUFFER))
                } else {
                    responder.respond_with_error(agent_client_protocol::Error::new(-32002, "not open"))
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: WriteTextFileRequest, responder, _cx| {
                s5.lock().unwrap().writes.push((req.path, req.content));
                responder.respond(WriteTextFileResponse::new())
            },
            on_receive_request!(),
        )
        .connect_with(agent(home), async move |cx: v1::ConnectionTo<Agent>| {
            let init = cx
                .send_request(
                    InitializeRequest::new(ProtocolVersion::V1)
                        .client_capabilities(caps)
                        .client_info(Implementation::new("octo-test", "0.1")),
                )
                .block_task()
                .await?;
            assert!(init.agent_capabilities.load_session);
            script(cx, s3).await
        })
        .await;
    if let Err(e) = result {
        panic!("the ACP exchange failed: {e:?}");
    }
    seen
}

async fn new_session(
    cx: &v1::ConnectionTo<Agent>,
    home: &TempHome,
) -> agent_client_protocol::v1::schema::SessionId {
    cx.send_request(NewSessionRequest::new(home.workspace())).block_task().await.unwrap().session_id
}

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_streams_to_its_end_and_the_session_loads_again() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(Reply::new().text("Hello from octo over ACP.").sse()),
        Scripted::sse(Reply::new().text("A title").sse()),
    ])
    .await;
    llm.script_anthropic_matching("again", [Scripted::sse(Reply::new().text("Second answer.").sse())]).await;
    let home = home_for(&llm);
    let h = &home;
    let first_id: Arc<Mutex<Option<String>>> = Arc::default();
    let keep = Arc::clone(&first_id);
    let seen = drive(&home, None, async move |cx, _seen| {
        let id = new_session(&cx, h).await;
        *keep.lock().unwrap() = Some(id.0.to_string());
        let r = cx.send_request(PromptRequest::new(id.clone(), vec![text("say hello")])).block_task().await?;
        assert_eq!(r.stop_reason, StopReason::EndTurn);
        // A /command runs through the shared vocabulary without reaching the model.
        let r = cx.send_request(PromptRequest::new(id.clone(), vec![text("/status")])).block_task().await?;
        assert_eq!(r.stop_reason, StopReason::EndTurn);
        // One the editor cannot offer is refused with the reason; an unknown one gets the nearest.
        cx.send_request(PromptRequest::new(id.clone(), vec![text("/dream")])).block_task().await?;
        cx.send_request(PromptRequest::new(id.clone(), vec![text("/stauts")])).block_task().await?;
        Ok(())
    })
    .await;
    {
        let s = seen.lock().unwrap();
        let said = answer(&s);
        assert!(said.contains("Hello from octo over ACP."), "{said}");
        assert!(said.contains("permission mode: default"), "/status answered: {said}");
        assert!(said.contains("/dream is not available in an editor: "), "{said}");
        assert!(said.contains("did you mean /status?"), "{said}");
        // The commands announced are the table's for a front end that only shows replies.
        use octo_app::commands::{Capabilities, FrontEnd, COMMANDS};
        let editor = FrontEnd::new("an editor", Capabilities::NONE);
        let announced: Vec<String> = s
            .updates
            .iter()
            .find_map(|u| match u {
                SessionUpdate::AvailableCommandsUpdate(c) => {
                    Some(c.available_commands.iter().map(|c| format!("/{}", c.name)).collect())
                }
                _ => None,
            })
            .unwrap();
        for spec in COMMANDS {
            assert_eq!(
                announced.contains(&spec.name.to_owned()),
                editor.offers(spec),
                "{}: {announced:?}",
                spec.name
            );
        }
        assert!(
            s.updates.iter().any(|u| matches!(u, SessionUpdate::AvailableCommandsUpdate(c) if c.available_commands.iter().any(|c| c.name == "status"))),
            "the shared commands are offered"
        );
    }
    let bodies = llm.request_bodies().await;
    assert!(!bodies.iter().any(|b| b.to_string().contains("/status")), "no command reached the model");

    // The saved session is listed and loaded in a new connection: its history is replayed.
    let seen = drive(&home, None, async move |cx, _seen| {
        let list = cx.send_request(ListSessionsRequest::new().cwd(h.workspace())).block_task().await?;
        let saved = list.sessions.first().expect("the session was saved").session_id.clone();
        assert_eq!(
            Some(&*saved.0),
            first_id.lock().unwrap().as_deref(),
            "saved under the id session/new gave"
        );
        cx.send_request(LoadSessionRequest::new(saved.clone(), h.workspace())).block_task().await?;
        // Resuming the same saved session (no replay) works too; the prompt goes to it.
        cx.send_request(agent_client_protocol::v1::schema::ResumeSessionRequest::new(
            saved.clone(),
            h.workspace(),
        ))
        .block_task()
        .await?;
        let r = cx.send_request(PromptRequest::new(saved, vec![text("again")])).block_task().await?;
        assert_eq!(r.stop_reason, StopReason::EndTurn);
        Ok(())
    })
    .await;
    {
        let s = seen.lock().unwrap();
        assert!(s.updates.iter().any(|u| matches!(u, SessionUpdate::UserMessageChunk(c) if matches!(&c.content, ContentBlock::Text(t) if t.text.contains("say hello")))));
        assert!(answer(&s).contains("Second answer."));
    }
    let last = llm.request_bodies().await.pop().unwrap();
    assert!(last["messages"].to_string().contains("say hello"), "the loaded history went to the model");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edit_is_shown_as_a_diff_and_approved_in_the_editor() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(
            Reply::new()
                .tool_use(
                    "t1",
                    "edit_file",
                    json!({"path": "a.txt", "old_string": "old line", "new_string": "new line"}),
                )
                .sse(),
        ),
        Scripted::sse(Reply::new().text("Edited.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    home.write("a.txt", "old line\n").unwrap();
    let h = &home;
    let seen = drive(&home, Some(PermissionOptionKind::AllowOnce), async move |cx, _seen| {
        let id = new_session(&cx, h).await;
        let r = cx.send_request(PromptRequest::new(id, vec![text("fix a.txt")])).block_task().await?;
        assert_eq!(r.stop_reason, StopReason::EndTurn);
        Ok(())
    })
    .await;
    assert_eq!(std::fs::read_to_string(home.workspace().join("a.txt")).unwrap(), "new line\n");
    let s = seen.lock().unwrap();
    let asked = s.asked.first().expect("the edit was asked about");
    assert!(asked.tool_call.fields.content.as_ref().is_some_and(|c| c.iter().any(|c| matches!(c, ToolCallContent::Diff(d) if d.new_text == "new line" && d.old_text.as_deref() == Some("old line")))), "{asked:?}");
    assert!(asked.options.iter().any(|o| o.kind == PermissionOptionKind::AllowAlways));
    let call = s.updates.iter().find_map(|u| match u {
        SessionUpdate::ToolCall(t) => Some(t.clone()),
        _ => None,
    });
    let call = call.expect("a tool_call update");
    assert_eq!(call.kind, ToolKind::Edit, "the kind comes from the tool's metadata");
    assert_eq!(call.status, ToolCallStatus::Pending, "announced before the question about it");
    let t1_updates = s
        .updates
        .iter()
        .filter(|u| matches!(u, SessionUpdate::ToolCall(t) if &*t.tool_call_id.0 == "t1"))
        .count();
    assert_eq!(t1_updates, 1, "created once, then updated");
    assert!(call.locations.iter().any(|l| l.path.ends_with("a.txt")));
    assert!(answer(&s).contains("Edited."));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rejected_command_and_plan_mode_leave_the_workspace_alone() {
    let llm = MockLlm::start().await;
    // Each prompt's requests answered by its own script (a title request may come between).
    // The later prompt first: its requests carry the earlier prompt too.
    llm.script_anthropic_matching(
        "write it",
        [
            Scripted::sse(
                Reply::new().tool_use("t2", "write_file", json!({"path": "plan.txt", "content": "x"})).sse(),
            ),
            Scripted::sse(Reply::new().text("Refused in plan mode.").sse()),
        ],
    )
    .await;
    llm.script_anthropic_matching(
        "run it",
        [
            Scripted::sse(
                Reply::new().tool_use("t1", "terminal", json!({"command": "touch made-by-command"})).sse(),
            ),
            Scripted::sse(Reply::new().text("Not run.").sse()),
        ],
    )
    .await;
    llm.script_anthropic([Scripted::sse(Reply::new().text("A title").sse())]).await;
    let home = home_for(&llm);
    let h = &home;
    let seen = drive(&home, Some(PermissionOptionKind::RejectOnce), async move |cx, seen| {
        let id = new_session(&cx, h).await;
        cx.send_request(PromptRequest::new(id.clone(), vec![text("run it")])).block_task().await?;
        assert_eq!(seen.lock().unwrap().asked.len(), 1, "the command was asked about");
        cx.send_request(SetSessionModeRequest::new(id.clone(), "plan")).block_task().await?;
        cx.send_request(PromptRequest::new(id, vec![text("write it")])).block_task().await?;
        Ok(())
    })
    .await;
    assert!(!home.workspace().join("made-by-command").exists());
    assert!(!home.workspace().join("plan.txt").exists());
    let s = seen.lock().unwrap();
    assert_eq!(s.asked.len(), 1, "plan mode refuses without asking");
    assert!(
        s.updates.iter().any(|u| matches!(u, SessionUpdate::ToolCall(t) if &*t.tool_call_id.0 == "t2" && t.status == ToolCallStatus::Failed)),
        "a call refused before it ran is still shown, as failed: {:?}",
        s.updates.iter().filter(|u| matches!(u, SessionUpdate::ToolCall(_) | SessionUpdate::ToolCallUpdate(_))).collect::<Vec<_>>()
    );
    assert!(s
        .updates
        .iter()
        .any(|u| matches!(u, SessionUpdate::CurrentModeUpdate(m) if &*m.current_mode_id.0 == "plan")));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancel_mid_stream_ends_the_prompt_as_cancelled_and_a_second_prompt_is_refused() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(Reply::new().text("too slow").sse()).delay(Duration::from_secs(5)),
        Scripted::sse(Reply::new().text("After the cancel.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    let h = &home;
    drive(&home, None, async move |cx, _seen| {
        let id = new_session(&cx, h).await;
        let running = cx.send_request(PromptRequest::new(id.clone(), vec![text("long one")]));
        tokio::time::sleep(Duration::from_millis(500)).await;
        let second =
            cx.send_request(PromptRequest::new(id.clone(), vec![text("meanwhile")])).block_task().await;
        assert!(second.is_err(), "never two turns at once: {second:?}");
        cx.send_notification(CancelNotification::new(id.clone()))?;
        let r = running.block_task().await?;
        assert_eq!(r.stop_reason, StopReason::Cancelled);
        let unknown =
            cx.send_request(PromptRequest::new("no-such-session", vec![text("hi")])).block_task().await;
        assert!(unknown.is_err());
        let r = cx.send_request(PromptRequest::new(id, vec![text("and now")])).block_task().await?;
        assert_eq!(r.stop_reason, StopReason::EndTurn, "the session goes on after a cancel");
        Ok(())
    })
    .await;
}

/// Raw lines on stdin: a request before `initialize`, a malformed line and an unknown method get
/// JSON-RPC errors and the connection stays up; stdout carries nothing but protocol messages.
#[tokio::test(flavor = "multi_thread")]
async fn bad_input_gets_errors_and_the_connection_stays_up() {
    use std::io::{BufRead, Write};
    let llm = MockLlm::start().await;
    let home = home_for(&llm);
    let mut child = super::common::octo_std(&home)
        .arg("acp")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let ws = home.workspace().display().to_string();
    let first = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": ws, "mcpServers": []}})
            .to_string(),
        "{not json".to_owned(),
        json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": 1}})
            .to_string(),
    ];
    // As clients do, the rest is sent once `initialize` is answered.
    let then = [
        json!({"jsonrpc": "2.0", "id": 3, "method": "octo/nothing", "params": {}}).to_string(),
        json!({"jsonrpc": "2.0", "id": 4, "method": "session/prompt", "params": {"sessionId": "nope", "prompt": []}}).to_string(),
    ];
    let replies = tokio::task::spawn_blocking(move || {
        let mut out = Vec::new();
        let mut read = |out: &mut Vec<serde_json::Value>, n: usize| {
            for _ in 0..n {
                let mut line = String::new();
                if stdout.read_line(&mut line).unwrap() == 0 {
                    break;
                }
                out.push(
                    serde_json::from_str::<serde_json::Value>(&line).expect("stdout carries only JSON-RPC"),
                );
            }
        };
        for l in first {
            writeln!(stdin, "{l}").unwrap();
        }
        stdin.flush().unwrap();
        read(&mut out, 3);
        for l in then {
            writeln!(stdin, "{l}").unwrap();
        }
        stdin.flush().unwrap();
        read(&mut out, 2);
        drop(stdin);
        out
    })
    .await
    .unwrap();
    let by_id = |id: i64| {
        replies.iter().find(|r| r["id"] == id).unwrap_or_else(|| panic!("no reply {id}: {replies:?}"))
    };
    assert!(by_id(1)["error"].is_object(), "before initialize: {replies:?}");
    assert!(
        replies.iter().any(|r| r["id"].is_null() && r["error"]["code"] == -32700),
        "the bad line: {replies:?}"
    );
    assert_eq!(by_id(2)["result"]["protocolVersion"], 1);
    assert_eq!(by_id(3)["error"]["code"], -32601, "{replies:?}");
    assert!(by_id(4)["error"]["message"].as_str().unwrap().contains("no session"), "{replies:?}");
    let status = child.wait().unwrap();
    assert!(status.success(), "closing stdin ends octo acp cleanly: {status:?}");
}

/// The editor's own MCP servers join the session: a working one's tool is used in the turn, one
/// that cannot start is named and the session goes on.
#[tokio::test(flavor = "multi_thread")]
async fn the_editors_mcp_servers_are_used_and_a_broken_one_is_named() {
    use agent_client_protocol::v1::schema::{McpServer, McpServerStdio};
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(
            Reply::new().tool_use("t1", "mcp__ed__echo", json!({"text": "from the editor's server"})).sse(),
        ),
        Scripted::sse(Reply::new().text("Used it.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    let h = &home;
    let seen = drive(&home, None, async move |cx, _seen| {
        let servers = vec![
            McpServer::Stdio(McpServerStdio::new("ed", octo_testkit::mcp::server_bin())),
            McpServer::Stdio(McpServerStdio::new("broken", "/no/such/mcp-server")),
        ];
        let id = cx
            .send_request(NewSessionRequest::new(h.workspace()).mcp_servers(servers))
            .block_task()
            .await?
            .session_id;
        let r =
            cx.send_request(PromptRequest::new(id, vec![text("use the editor's tool")])).block_task().await?;
        assert_eq!(r.stop_reason, StopReason::EndTurn);
        Ok(())
    })
    .await;
    let bodies = llm.request_bodies().await;
    assert!(
        bodies[0]["tools"].to_string().contains("mcp__ed__echo"),
        "the editor's server's tools are offered"
    );
    assert!(bodies[1]["messages"].to_string().contains("from the editor's server"), "its tool ran");
    let said = answer(&seen.lock().unwrap());
    assert!(said.contains("Used it.") && said.contains("`broken` could not be used"), "{said}");
}

/// A sub-agent's work shows as the progress of its `task` call.
#[tokio::test(flavor = "multi_thread")]
async fn a_sub_agents_progress_shows_on_its_task_call() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(
            Reply::new()
                .tool_use("t1", "task", json!({"subagent_type": "explore", "description": "look around", "prompt": "list the files"}))
                .sse(),
        ),
        Scripted::sse(Reply::new().tool_use("c1", "list_dir", json!({"path": "."})).sse()),
        Scripted::sse(Reply::new().text("Two files.").sse()),
        Scripted::sse(Reply::new().text("The sub-agent looked.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    let h = &home;
    let seen = drive(&home, None, async move |cx, _seen| {
        let id = new_session(&cx, h).await;
        cx.send_request(PromptRequest::new(id, vec![text("explore")])).block_task().await?;
        Ok(())
    })
    .await;
    let s = seen.lock().unwrap();
    let progress: Vec<String> = s
        .updates
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::ToolCallUpdate(t) if &*t.tool_call_id.0 == "t1" => t.fields.content.clone(),
            _ => None,
        })
        .flatten()
        .filter_map(|c| match c {
            ToolCallContent::Content(c) => match c.content {
                ContentBlock::Text(t) => Some(t.text),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert!(progress.iter().any(|p| p.contains("started: look around")), "{progress:?}");
    assert!(progress.iter().any(|p| p.contains("finished")), "{progress:?}");
    assert!(answer(&s).contains("The sub-agent looked."));
}

/// The editor going away mid-turn cancels the turn and leaves a whole session file; a saved
/// session whose file is corrupt cannot be loaded, and says so, with the connection up.
#[tokio::test(flavor = "multi_thread")]
async fn stdin_closed_mid_turn_and_a_corrupt_session_file() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(Reply::new().text("never seen").sse()).delay(Duration::from_secs(30))
    ])
    .await;
    let home = home_for(&llm);
    let h = &home;
    let keep: Arc<Mutex<Option<String>>> = Arc::default();
    let k = Arc::clone(&keep);
    drive(&home, None, async move |cx, _seen| {
        let id = new_session(&cx, h).await;
        *k.lock().unwrap() = Some(id.0.to_string());
        // The prompt is sent and the client leaves before it is answered.
        cx.send_request(PromptRequest::new(id, vec![text("a long one")])).detach();
        tokio::time::sleep(Duration::from_millis(500)).await;
        Ok(())
    })
    .await;
    let id = keep.lock().unwrap().clone().unwrap();
    let file = home.home().join("sessions").join(format!("{id}.jsonl"));
    let text = std::fs::read_to_string(&file).expect("the session file was written");
    for line in text.lines() {
        serde_json::from_str::<serde_json::Value>(line)
            .expect("every line of the session file is whole JSON");
    }
    assert!(text.contains("a long one"), "the prompt in flight is kept: {text}");

    std::fs::write(home.home().join("sessions").join("20260101-000000-dead.jsonl"), "{broken\n").unwrap();
    drive(&home, None, async move |cx, _seen| {
        let bad = cx
            .send_request(LoadSessionRequest::new("20260101-000000-dead", h.workspace()))
            .block_task()
            .await;
        let err = bad.expect_err("a corrupt file is not loaded");
        assert!(
            err.message.contains("20260101-000000-dead") || err.to_string().contains("usable"),
            "{err:?}"
        );
        // The connection is still up.
        let id = new_session(&cx, h).await;
        assert!(!id.0.is_empty());
        Ok(())
    })
    .await;
}

/// A reply that broke off mid-stream starts again as a new message (ACP cannot take back what
/// was sent; a new `messageId` starts a new message): the answer's message holds it once, and
/// the broken one says it was discarded.
#[tokio::test(flavor = "multi_thread")]
async fn a_restarted_reply_is_a_new_message_holding_it_once() {
    let llm = MockLlm::start().await;
    let [broken, good] = super::common::broken_then("Hello world.");
    llm.script_anthropic([broken, good, Scripted::sse(Reply::new().text("A title").sse())]).await;
    let home = home_for(&llm);
    std::fs::write(home.home().join("attempts"), "3").unwrap();
    let h = &home;
    let seen = drive(&home, None, async move |cx, _seen| {
        let id = new_session(&cx, h).await;
        let r = cx.send_request(PromptRequest::new(id, vec![text("say hello")])).block_task().await?;
        assert_eq!(r.stop_reason, StopReason::EndTurn);
        Ok(())
    })
    .await;
    let s = seen.lock().unwrap();
    let mut messages: Vec<(String, String)> = Vec::new();
    for u in &s.updates {
        if let SessionUpdate::AgentMessageChunk(c) = u {
            let ContentBlock::Text(t) = &c.content else { continue };
            let id = c.message_id.as_ref().map(|m| m.0.to_string()).expect("every chunk names its message");
            match messages.last_mut() {
                Some((last, text)) if *last == id => text.push_str(&t.text),
                _ => messages.push((id, t.text.clone())),
            }
        }
    }
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(messages[1].1, "Hello world.", "{messages:?}");
    assert!(messages[0].1.starts_with("Hello wor") && messages[0].1.contains("discarded"), "{messages:?}");
}
