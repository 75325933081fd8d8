//! `octo serve` as a process: refuses a remote address without --allow-remote, stops cleanly on
//! SIGTERM, and runs as a daemon with a pid file.

use super::common::{assert_async, home_for, octo_std as octo};
use assert_cmd::Command;
use octo_testkit::{MockLlm, TempHome};
use predicates::prelude::*;
use std::time::{Duration, Instant};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn wait_listening(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "octo serve never listened");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `GET /api/sessions` with the token: its status.
fn sessions_status(home: &TempHome, port: u16) -> u16 {
    use std::io::{Read, Write};
    let token = std::fs::read_to_string(home.home().join("server-token")).unwrap();
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(s, "GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {}\r\nConnection: close\r\n\r\n", token.trim()).unwrap();
    let mut buf = String::new();
    let _ = s.read_to_string(&mut buf);
    buf.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0)
}

/// `octo serve` on a free loopback port, listening; the child and the port.
#[cfg(unix)]
fn start_serve(home: &TempHome, stderr: std::process::Stdio) -> (std::process::Child, u16) {
    let port = free_port();
    let child =
        octo(home).args(["serve", "--listen", &format!("127.0.0.1:{port}")]).stderr(stderr).spawn().unwrap();
    wait_listening(port);
    (child, port)
}

/// Sends SIGTERM and waits (at most `within`) for the exit; the status and how long it took.
#[cfg(unix)]
fn terminate(child: &mut std::process::Child, within: Duration) -> (std::process::ExitStatus, Duration) {
    stop_with(child, nix::sys::signal::Signal::SIGTERM, within)
}

/// Sends `signal` to `child` and waits for it to end (at most `within`).
fn stop_with(
    child: &mut std::process::Child,
    signal: nix::sys::signal::Signal,
    within: Duration,
) -> (std::process::ExitStatus, Duration) {
    let started = Instant::now();
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return (s, started.elapsed());
        }
        assert!(started.elapsed() < within, "octo serve did not stop on {signal} within {within:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_remote_address_needs_allow_remote() {
    let home = TempHome::new().unwrap();
    let mut c = Command::from_std(octo(&home));
    c.args(["serve", "--listen", "0.0.0.0:0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--allow-remote"));
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_answers_and_stops_on_sigterm() {
    let llm = MockLlm::start().await;
    let home = home_for(&llm);
    let (mut child, port) = start_serve(&home, std::process::Stdio::piped());
    assert_eq!(sessions_status(&home, port), 200);
    let (status, _) = terminate(&mut child, Duration::from_secs(10));
    assert!(status.success(), "{status}");
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(err.contains("/login?code="), "{err}");
}

/// An open event stream (a browser tab left open) does not keep the server from stopping: it is
/// gone within about two seconds of SIGTERM.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_stops_on_sigterm_with_an_event_stream_open() {
    use nix::sys::signal::Signal;
    use std::io::{Read, Write};
    let llm = MockLlm::start().await;
    // Ctrl-C (SIGINT) and SIGTERM alike, with a browser's event stream held open.
    for signal in [Signal::SIGINT, Signal::SIGTERM] {
        let home = home_for(&llm);
        let (mut child, port) = start_serve(&home, std::process::Stdio::null());
        let token = std::fs::read_to_string(home.home().join("server-token")).unwrap();
        let auth = format!("Authorization: Bearer {}\r\nHost: 127.0.0.1:{port}\r\n", token.trim());
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(s, "POST /api/sessions HTTP/1.1\r\n{auth}Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}").unwrap();
        let mut created = String::new();
        let _ = s.read_to_string(&mut created);
        let id = created
            .split("\"id\":\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .unwrap_or_default()
            .to_owned();
        assert!(!id.is_empty(), "{created}");
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(stream, "GET /api/sessions/{id}/events HTTP/1.1\r\n{auth}\r\n").unwrap();
        let mut head = [0u8; 64];
        let _ = stream.read(&mut head).unwrap();
        // The event stream stays open until after: a server that waited for it would never stop.
        let _ = stop_with(&mut child, signal, Duration::from_secs(30));
        drop(stream);
    }
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_runs_as_a_daemon_with_a_pid_file() {
    let llm = MockLlm::start().await;
    let home = home_for(&llm);
    let port = free_port();
    let out =
        octo(&home).args(["serve", "--daemon", "--listen", &format!("127.0.0.1:{port}")]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("running in the background") && err.contains("/login?code="), "{err}");
    let pid_file = home.home().join("serve.pid");
    let pid: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    assert_eq!(sessions_status(&home, port), 200);
    // A second daemon is refused while the first runs.
    let again =
        octo(&home).args(["serve", "--daemon", "--listen", &format!("127.0.0.1:{port}")]).output().unwrap();
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already running"));
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGTERM).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while pid_file.exists() {
        assert!(Instant::now() < deadline, "the daemon did not remove its pid file");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn channels_that_cannot_start_are_named_and_the_rest_go_on() {
    let llm = MockLlm::start().await;
    let home = home_for(&llm);
    // A fake Bot API that refuses the token.
    let refused = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(wiremock::ResponseTemplate::new(401).set_body_json(serde_json::json!({
            "ok": false, "error_code": 401, "description": "Unauthorized"
        })))
        .mount(&refused)
        .await;
    let cfg = std::fs::read_to_string(home.home().join("config.toml")).unwrap();
    std::fs::write(
        home.home().join("config.toml"),
        format!(
            "{cfg}\n[channels.phone]\nallow = [42]\ntoken_env = \"PHONE_TOKEN\"\napi_base = \"{}\"\n[channels.tablet]\nallow = [42]\ntoken_env = \"TABLET_TOKEN\"\n[channels.team]\nkind = \"slack\"\nallow = [\"U1\"]\ntoken_env = \"TEAM_BOT\"\napp_token_env = \"TEAM_APP\"\n",
            refused.uri()
        ),
    )
    .unwrap();
    let mut c = octo(&home);
    c.env("PHONE_TOKEN", "123:abc").env("TEAM_BOT", "xoxb-1").args(["serve", "--channels-only"]);
    let out = tokio::task::spawn_blocking(move || c.output().unwrap()).await.unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("channel `phone` not started: the platform refused the bot's credentials"), "{err}");
    assert!(err.contains("Unauthorized"), "{err}");
    assert!(err.contains("channel `tablet` not started: no bot token (set TABLET_TOKEN"), "{err}");
    assert!(err.contains("channel `team` not started: no app-level token (xapp-…) (set TEAM_APP"), "{err}");
    assert!(err.contains("no chat channel started"), "{err}");
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_that_starts_runs_beside_one_that_cannot() {
    use std::io::BufRead;
    let llm = MockLlm::start().await;
    let home = home_for(&llm);
    let api = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::path("/botGOOD/getMe"))
        .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "ok": true, "result": {"id": 1, "is_bot": true, "username": "okbot"}
        })))
        .mount(&api)
        .await;
    wiremock::Mock::given(wiremock::matchers::path("/botGOOD/getUpdates"))
        .respond_with(
            wiremock::ResponseTemplate::new(200)
                .set_body_json(serde_json::json!({"ok": true, "result": []}))
                .set_delay(Duration::from_millis(200)),
        )
        .mount(&api)
        .await;
    wiremock::Mock::given(wiremock::matchers::any())
        .respond_with(wiremock::ResponseTemplate::new(401).set_body_json(serde_json::json!({
            "ok": false, "error_code": 401, "description": "Unauthorized"
        })))
        .mount(&api)
        .await;
    let cfg = std::fs::read_to_string(home.home().join("config.toml")).unwrap();
    std::fs::write(
        home.home().join("config.toml"),
        format!(
            "{cfg}\n[channels.bad]\nallow = [42]\ntoken_env = \"BAD_TOKEN\"\napi_base = \"{0}\"\n[channels.good]\nallow = [42]\ntoken_env = \"GOOD_TOKEN\"\napi_base = \"{0}\"\n",
            api.uri()
        ),
    )
    .unwrap();
    let mut child = octo(&home)
        .env("BAD_TOKEN", "BAD")
        .env("GOOD_TOKEN", "GOOD")
        .args(["serve", "--channels-only"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let lines = tokio::task::spawn_blocking(move || {
        let mut seen = Vec::new();
        for line in std::io::BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            let done = line.contains("is @okbot on Telegram");
            seen.push(line);
            if done {
                break;
            }
        }
        seen.join("\n")
    });
    let lines = tokio::time::timeout(Duration::from_secs(20), lines)
        .await
        .expect("the good channel started")
        .unwrap();
    // Still running: the good channel polls on.
    std::thread::sleep(Duration::from_millis(300));
    assert!(child.try_wait().unwrap().is_none(), "{lines}");
    let _ = child.kill();
    let _ = child.wait();
    assert!(lines.contains("channel `bad` not started: the platform refused"), "{lines}");
    assert!(lines.contains("channel `good` is @okbot on Telegram"), "{lines}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_says_which_channels_lack_a_secret() {
    let llm = MockLlm::start().await;
    let home = home_for(&llm);
    let cfg = std::fs::read_to_string(home.home().join("config.toml")).unwrap();
    std::fs::write(
        home.home().join("config.toml"),
        format!("{cfg}\n[channels.phone]\nallow = [42]\ntoken_env = \"PHONE_TOKEN\"\n[channels.team]\nkind = \"slack\"\nallow = [\"U1\"]\ntoken_env = \"TEAM_BOT\"\napp_token_env = \"TEAM_APP\"\n"),
    )
    .unwrap();
    let mut c = octo(&home);
    c.env("PHONE_TOKEN", "123:abc").env("TEAM_BOT", "xoxb-1").arg("doctor");
    let out = tokio::task::spawn_blocking(move || c.output().unwrap()).await.unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("ok   channel `phone` (Telegram, 1 allowed): secrets present"), "{text}");
    assert!(
        text.contains("warn channel `team` (Slack, 1 allowed): no app-level token (xapp-…) (set TEAM_APP"),
        "{text}"
    );
    assert!(!text.contains("123:abc") && !text.contains("xoxb-1"), "no secret is shown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_after_endpoint_flags_is_the_server_and_an_unknown_endpoint_is_said_at_once() {
    let llm = MockLlm::start().await;
    let home = home_for(&llm);
    let mut c = Command::from_std(octo(&home));
    c.args(["--endpoint", "nowhere", "serve", "--listen", "127.0.0.1:0"]);
    assert_async(c)
        .await
        .code(2)
        .stderr(predicate::str::contains("unknown endpoint `nowhere`"))
        .stdout(predicate::str::is_empty());
    assert!(llm.requests().await.is_empty(), "`serve` was not taken as a prompt");
}
