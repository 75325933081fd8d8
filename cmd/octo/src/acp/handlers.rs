//! The protocol's methods: initialize, sessions (new, load, list, close), prompts, cancel,
//! modes. Work that takes time (starting a session, a turn) runs in a task of its own, so the
//! dispatch loop keeps answering.

use super::state::{Acp, FRONT};
use super::{replay, turn};
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, CancelNotification,
    CloseSessionRequest, CloseSessionResponse, CurrentModeUpdate, Implementation, InitializeRequest,
    InitializeResponse, ListSessionsRequest, ListSessionsResponse, LoadSessionRequest, LoadSessionResponse,
    McpCapabilities, NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest,
    SessionCapabilities, SessionCloseCapabilities, SessionInfo, SessionListCapabilities, SessionMode,
    SessionModeId, SessionModeState, SessionNotification, SessionUpdate, SetSessionModeRequest,
    SetSessionModeResponse, UnstructuredCommandInput,
};
use agent_client_protocol::v1::schema::{
    McpServer, ResumeSessionRequest, ResumeSessionResponse, SessionResumeCapabilities,
};
use agent_client_protocol::{on_receive_notification, on_receive_request, v1, Agent, Client, Error, Stdio};
use octo_app::{McpServerSpec, Mode, Resume, Session};
use std::path::Path;
use std::sync::Arc;

type Cx = v1::ConnectionTo<Client>;

/// Serves the protocol on stdio until the client closes it.
pub(super) async fn serve(acp: Arc<Acp>) -> Result<(), Error> {
    let (a0, a1, a2, a3, a4, a5, a6, a7, a8) = (
        acp.clone(),
        acp.clone(),
        acp.clone(),
        acp.clone(),
        acp.clone(),
        acp.clone(),
        acp.clone(),
        acp.clone(),
        acp,
    );
    Agent
        .v1()
        .name("octo")
        .on_receive_request(
            async move |r: InitializeRequest, responder: v1::Responder<InitializeResponse>, _cx| {
                let fs = &r.client_capabilities.fs;
                a0.client_reads.store(fs.read_text_file, std::sync::atomic::Ordering::SeqCst);
                a0.client_writes.store(fs.write_text_file, std::sync::atomic::Ordering::SeqCst);
                responder.respond(initialize())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |r: NewSessionRequest, rs, cx| on_new(Arc::clone(&a1), r, rs, cx),
            on_receive_request!(),
        )
        .on_receive_request(
            async move |r: LoadSessionRequest, rs, cx| on_load(Arc::clone(&a2), r, rs, cx),
            on_receive_request!(),
        )
        .on_receive_request(
            async move |r: ListSessionsRequest, rs: v1::Responder<ListSessionsResponse>, _cx| {
                rs.respond_with_result(list_sessions(&a3, r.cwd.as_deref()))
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |r: CloseSessionRequest, rs, _cx| on_close(&a4, &r, rs),
            on_receive_request!(),
        )
        .on_receive_request(
            async move |r: ResumeSessionRequest, rs, cx| on_resume(Arc::clone(&a8), r, rs, cx),
            on_receive_request!(),
        )
        .on_receive_request(
            async move |r: PromptRequest, rs, cx| on_prompt(Arc::clone(&a5), r, rs, cx),
            on_receive_request!(),
        )
        .on_receive_request(
            async move |r: SetSessionModeRequest, rs, cx| on_mode(&a6, &r, rs, &cx),
            on_receive_request!(),
        )
        .on_receive_notification(
            async move |n: CancelNotification, _cx: Cx| {
                if let Some(live) = a7.get(&n.session_id.0) {
                    live.session.abort();
                }
                Ok(())
            },
            on_receive_notification!(),
        )
        .connect_to(Stdio::new())
        .await
}

fn on_new(
    acp: Arc<Acp>,
    req: NewSessionRequest,
    responder: v1::Responder<NewSessionResponse>,
    cx: Cx,
) -> Result<(), Error> {
    let cx2 = cx.clone();
    cx.spawn(async move {
        match new_session(&acp, &cx2, &req.cwd, &req.mcp_servers) {
            Ok((id, mode)) => {
                responder.respond(NewSessionResponse::new(id.clone()).modes(modes(mode)))?;
                announce_commands(&acp, &cx2, &id)
            }
            Err(e) => responder.respond_with_error(e),
        }
    })
}

fn on_load(
    acp: Arc<Acp>,
    req: LoadSessionRequest,
    responder: v1::Responder<LoadSessionResponse>,
    cx: Cx,
) -> Result<(), Error> {
    let cx2 = cx.clone();
    cx.spawn(async move {
        let id = req.session_id.0.to_string();
        match reopen(&acp, &cx2, &id, &req.cwd, &req.mcp_servers, true).await {
            Ok(mode) => {
                responder.respond(LoadSessionResponse::new().modes(modes(mode)))?;
                announce_commands(&acp, &cx2, &id)
            }
            Err(e) => responder.respond_with_error(e),
        }
    })
}

/// Like a load, without the replay (the editor still shows the conversation).
fn on_resume(
    acp: Arc<Acp>,
    req: ResumeSessionRequest,
    responder: v1::Responder<ResumeSessionResponse>,
    cx: Cx,
) -> Result<(), Error> {
    let cx2 = cx.clone();
    cx.spawn(async move {
        let id = req.session_id.0.to_string();
        match reopen(&acp, &cx2, &id, &req.cwd, &req.mcp_servers, false).await {
            Ok(mode) => {
                responder.respond(ResumeSessionResponse::new().modes(modes(mode)))?;
                announce_commands(&acp, &cx2, &id)
            }
            Err(e) => responder.respond_with_error(e),
        }
    })
}

fn on_close(
    acp: &Acp,
    req: &CloseSessionRequest,
    responder: v1::Responder<CloseSessionResponse>,
) -> Result<(), Error> {
    let Some(live) = acp.remove(&req.session_id.0) else {
        return responder.respond_with_error(unknown_session(&req.session_id.0));
    };
    live.session.abort();
    let _ = live.session.tools().stop_processes();
    responder.respond(CloseSessionResponse::new())
}

/// A prompt runs in a task of its own (so a cancel is heard); never two at once in a session.
fn on_prompt(
    acp: Arc<Acp>,
    req: PromptRequest,
    responder: v1::Responder<turn::Response>,
    cx: Cx,
) -> Result<(), Error> {
    let id = req.session_id.0.to_string();
    let Some(live) = acp.get(&id) else {
        return responder.respond_with_error(unknown_session(&id));
    };
    if !live.start_prompt() {
        return responder.respond_with_error(Error::new(
            -32600,
            "a prompt is already running in this session; wait for its answer or cancel it",
        ));
    }
    let cx2 = cx.clone();
    cx.spawn(async move {
        let result = turn::run(&acp, &cx2, &id, &live, req.prompt).await;
        live.end_prompt();
        responder.respond_with_result(result)
    })
}

fn on_mode(
    acp: &Acp,
    req: &SetSessionModeRequest,
    responder: v1::Responder<SetSessionModeResponse>,
    cx: &Cx,
) -> Result<(), Error> {
    let id = req.session_id.0.to_string();
    let Some(live) = acp.get(&id) else {
        return responder.respond_with_error(unknown_session(&id));
    };
    let mode: Mode = match req.mode_id.0.parse() {
        Ok(m) => m,
        Err(e) => return responder.respond_with_error(Error::new(-32602, format!("{e}"))),
    };
    live.session.permissions().set_mode(mode);
    responder.respond(SetSessionModeResponse::new())?;
    cx.send_notification(SessionNotification::new(
        id,
        SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(mode_id(mode))),
    ))
}

/// What octo is and offers: saved sessions can be loaded, listed and closed; prompts may carry
/// images and embedded files; no authentication (the endpoint's key is octo's configuration).
fn initialize() -> InitializeResponse {
    let capabilities = AgentCapabilities::new()
        .load_session(true)
        .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
        .mcp_capabilities(McpCapabilities::new().http(true))
        .session_capabilities(
            SessionCapabilities::new()
                .list(SessionListCapabilities::new())
                .resume(SessionResumeCapabilities::new())
                .close(SessionCloseCapabilities::new()),
        );
    InitializeResponse::new(ProtocolVersion::V1)
        .agent_capabilities(capabilities)
        .agent_info(Implementation::new("octo", env!("CARGO_PKG_VERSION")))
}

/// A session's error for the editor: a missing endpoint or key says how to set one up.
fn launch_error(e: &octo_app::LaunchError) -> Error {
    let message = e.to_string();
    if e.is_usage() {
        Error::new(-32000, format!("{message} (run `octo setup` in a terminal to choose a model)"))
    } else {
        Error::new(-32603, message)
    }
}

fn unknown_session(id: &str) -> Error {
    Error::new(-32002, format!("no session `{id}` here: create one with session/new or load a saved one"))
}

/// The editor's MCP servers in octo's terms (run as servers the user supplied).
fn client_servers(list: &[McpServer]) -> Vec<(String, McpServerSpec)> {
    list.iter()
        .filter_map(|s| match s {
            McpServer::Stdio(x) => Some((
                x.name.clone(),
                McpServerSpec {
                    command: Some(x.command.display().to_string()),
                    args: x.args.clone(),
                    env: x.env.iter().map(|e| (e.name.clone(), e.value.clone())).collect(),
                    ..McpServerSpec::default()
                },
            )),
            McpServer::Http(x) => Some((
                x.name.clone(),
                McpServerSpec {
                    kind: Some("http".into()),
                    url: Some(x.url.clone()),
                    headers: x.headers.iter().map(|h| (h.name.clone(), h.value.clone())).collect(),
                    ..McpServerSpec::default()
                },
            )),
            McpServer::Sse(x) => Some((
                x.name.clone(),
                McpServerSpec {
                    kind: Some("sse".into()),
                    url: Some(x.url.clone()),
                    ..McpServerSpec::default()
                },
            )),
            _ => None,
        })
        .collect()
}

fn start(
    acp: &Acp,
    cx: &Cx,
    id: &str,
    cwd: &Path,
    resume: Resume,
    servers: &[McpServer],
) -> Result<Session, Error> {
    if !cwd.is_absolute() {
        return Err(Error::new(-32602, format!("cwd must be an absolute path, not `{}`", cwd.display())));
    }
    let mut launch = crate::launch::launch_of(&acp.cli, false, None);
    launch.workspace = Some(cwd.to_path_buf());
    if matches!(resume, Resume::New) {
        // Saved under the id the editor knows, so `session/list` and `session/load` name it alike.
        launch.options.session_id = Some(id.to_owned());
    }
    launch.resume = resume;
    launch.options.buffers = super::buffers::EditorBuffers::offered(acp, cx, id);
    acp.launcher.start_with_servers(launch, client_servers(servers)).map_err(|e| launch_error(&e))
}

fn new_session(acp: &Acp, cx: &Cx, cwd: &Path, servers: &[McpServer]) -> Result<(String, Mode), Error> {
    let id = octo_app::session_store::new_id();
    let session = start(acp, cx, &id, cwd, Resume::New, servers)?;
    let mode = session.status().mode;
    acp.insert(id.clone(), session);
    Ok((id, mode))
}

/// A saved session opened again (`session/load`, `session/resume`); a load also replays it.
async fn reopen(
    acp: &Acp,
    cx: &Cx,
    id: &str,
    cwd: &Path,
    servers: &[McpServer],
    replay: bool,
) -> Result<Mode, Error> {
    let mode = load_session(acp, cx, id, cwd, servers)?;
    if let (true, Some(live)) = (replay, acp.get(id)) {
        replay::history(cx, id, &live.session).await?;
    }
    Ok(mode)
}

fn load_session(acp: &Acp, cx: &Cx, id: &str, cwd: &Path, servers: &[McpServer]) -> Result<Mode, Error> {
    // Already open on this connection: the same session, not a second writer of its file.
    if let Some(live) = acp.get(id) {
        return Ok(live.session.status().mode);
    }
    let session = start(acp, cx, id, cwd, Resume::Id(id.to_owned()), servers)?;
    let mode = session.status().mode;
    acp.insert(id.to_owned(), session);
    Ok(mode)
}

fn list_sessions(acp: &Acp, cwd: Option<&Path>) -> Result<ListSessionsResponse, Error> {
    let list = acp.launcher.sessions().list(cwd).map_err(|e| Error::new(-32603, e.to_string()))?;
    let infos = list.into_iter().take(100).map(|s| SessionInfo::new(s.id, s.cwd).title(s.title)).collect();
    Ok(ListSessionsResponse::new(infos))
}

pub(super) fn mode_id(mode: Mode) -> SessionModeId {
    SessionModeId::new(mode.to_string())
}

fn modes(current: Mode) -> SessionModeState {
    let all = [
        (Mode::Default, "Default", "asks before edits and commands"),
        (Mode::AcceptEdits, "Accept edits", "edits in the workspace run; commands still ask"),
        (Mode::Plan, "Plan", "read-only: anything that writes or runs is refused"),
        (Mode::Auto, "Auto", "runs what would be asked; deny rules and hard denies still hold"),
    ];
    SessionModeState::new(
        mode_id(current),
        all.iter().map(|(m, name, about)| SessionMode::new(mode_id(*m), *name).description(*about)).collect(),
    )
}

/// The commands the editor can offer: the shared ones octo runs here, and the skills and custom
/// commands the user can invoke.
fn announce_commands(acp: &Acp, cx: &Cx, id: &str) -> Result<(), Error> {
    let Some(live) = acp.get(id) else { return Ok(()) };
    let mut commands: Vec<AvailableCommand> = FRONT
        .offered()
        .map(|c| {
            let hint = c.usage.split_once(' ').map(|(_, rest)| rest.to_owned());
            let cmd = AvailableCommand::new(c.name.trim_start_matches('/'), c.about);
            match hint {
                Some(h) => cmd.input(AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(h))),
                None => cmd,
            }
        })
        .collect();
    for skill in live.session.skills().catalog().iter().filter(|s| s.user_invocable) {
        let cmd = AvailableCommand::new(skill.name.clone(), skill.description.clone());
        commands.push(match &skill.argument_hint {
            Some(h) => {
                cmd.input(AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(h.clone())))
            }
            None => cmd,
        });
    }
    cx.send_notification(SessionNotification::new(
        id.to_owned(),
        SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands)),
    ))
}
