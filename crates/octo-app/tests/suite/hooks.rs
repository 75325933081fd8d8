//! Hooks in whole sessions with real shell scripts: every event's effect on a turn, Claude Code's
//! settings.json, trust, permissions holding over hooks, and the event log.

use octo_app::config::{Config, Overrides};
use octo_app::credentials::MemoryStore;
use octo_app::{AgentEvent, Mode, Session, SessionOptions, ToolOutcome, TurnEndReason};
use octo_testkit::anthropic::Reply;
use octo_testkit::scenario::{Built, Scenario};
use octo_testkit::{MockLlm, Scripted, TempHome};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;

struct Setup {
    _tmp: TempHome,
    home: PathBuf,
    ws: PathBuf,
    llm: MockLlm,
}

fn env(k: &str) -> Option<String> {
    (k == "MOCK_KEY").then(|| "sk-mock".to_owned())
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

async fn setup(files: &[(&str, &str)], user_config: &str, replies: Vec<Scripted>) -> Setup {
    let Built { home: tmp, llm, .. } = Scenario::new().config(user_config).replies(replies).build().await;
    let (home, ws) = (tmp.home(), tmp.workspace());
    // Hook scripts must be executable: written here rather than by the scenario.
    for (p, t) in files {
        write(&ws.join(p), t);
    }
    Setup { _tmp: tmp, home, ws, llm }
}

impl Setup {
    fn session(&self, mode: Mode, unattended: bool) -> Session {
        let config = Config::load(&self.home, &self.ws, &env, &Overrides::default()).unwrap();
        let options = SessionOptions {
            workspace: Some(self.ws.clone()),
            mode: Some(mode),
            unattended,
            ..SessionOptions::default()
        };
        Session::start(config, options, &MemoryStore::default(), &env).unwrap()
    }
}

async fn turn(s: &Session, text: &str) -> Vec<AgentEvent> {
    let mut rx = s.subscribe();
    s.prompt(text).unwrap();
    let mut events = Vec::new();
    loop {
        let e = tokio::time::timeout(Duration::from_secs(20), rx.recv()).await.unwrap().unwrap();
        if let AgentEvent::ApprovalRequired { approval_id, .. } = &e {
            s.approvals().approve(approval_id).unwrap();
        }
        let end = matches!(e, AgentEvent::TurnEnd { .. });
        events.push(e);
        if end {
            return events;
        }
    }
}

fn result(events: &[AgentEvent], id: &str) -> (ToolOutcome, String) {
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::ToolCallEnd { id: c, outcome, output, .. } if c == id => {
                Some((*outcome, output.clone()))
            }
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result for {id}: {events:#?}"))
}

fn answer(t: &str) -> Scripted {
    Scripted::sse(Reply::new().text(t).sse())
}

fn call(id: &str, tool: &str, input: serde_json::Value) -> Scripted {
    Scripted::sse(Reply::new().tool_use(id, tool, input).sse())
}

/// A project hook set as Claude Code documents `.claude/settings.json`: a PreToolUse command
/// validator on Bash reading the JSON from stdin with jq-free shell.
const SETTINGS: &str = r#"{
  "permissions": {"allow": ["Bash(npm run lint)"]},
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/validate.sh", "timeout": 10}
        ]
      }
    ]
  }
}"#;

const VALIDATE: &str = "#!/bin/sh\ninput=$(cat)\ncase \"$input\" in\n  *'rm -rf'*) echo 'Blocked: rm -rf is not allowed here' >&2; exit 2;;\nesac\nexit 0\n";

#[tokio::test]
async fn claude_code_settings_hooks_run_once_trusted_and_never_headless_untrusted() {
    let rm = json!({"command": "rm -rf build"});
    let t = setup(
        &[(".claude/settings.json", SETTINGS), (".claude/hooks/validate.sh", VALIDATE)],
        "",
        vec![
            call("t1", "terminal", rm.clone()),
            answer("ran"),
            call("t2", "terminal", rm),
            answer("blocked"),
        ],
    )
    .await;
    std::fs::create_dir_all(t.ws.join("build")).unwrap();
    // Headless, untrusted: skipped with a note; the command runs (auto mode).
    let s = t.session(Mode::Auto, true);
    assert!(
        s.conversation().notes().iter().any(|n| n.contains("project's hooks were not run")),
        "{:?}",
        s.conversation().notes()
    );
    let events = turn(&s, "clean").await;
    assert_eq!(result(&events, "t1").0, ToolOutcome::Ran);
    assert!(!t.ws.join("build").exists());
    drop(s);
    std::fs::create_dir_all(t.ws.join("build")).unwrap();
    // Trusted (as the REPL asks): the hook blocks, with its reason for the model.
    let s = t.session(Mode::Auto, false);
    let waiting = s.trust().untrusted_hooks();
    assert!(
        waiting.len() == 1
            && waiting[0].starts_with("PreToolUse Bash: \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/validate.sh"),
        "{waiting:?}"
    );
    s.trust().trust_hooks().unwrap();
    let events = turn(&s, "clean again").await;
    let (o, text) = result(&events, "t2");
    assert_ne!(o, ToolOutcome::Ran);
    assert!(text.contains("Blocked: rm -rf is not allowed here"), "{text}");
    assert!(t.ws.join("build").exists());
    // Remembered: the next session does not ask.
    assert!(t.session(Mode::Auto, true).trust().untrusted_hooks().is_empty());
    // A changed script is asked about again.
    write(&t.ws.join(".claude/hooks/validate.sh"), "#!/bin/sh\nexit 0\n");
    assert_eq!(t.session(Mode::Auto, true).trust().untrusted_hooks().len(), 1);
    // So is the same hook set in another repository.
    let other = t.ws.parent().unwrap().join("other");
    write(&other.join(".claude/settings.json"), SETTINGS);
    write(&other.join(".claude/hooks/validate.sh"), VALIDATE);
    let config = Config::load(&t.home, &other, &env, &Overrides::default()).unwrap();
    let options = SessionOptions { workspace: Some(other), unattended: true, ..SessionOptions::default() };
    let s = Session::start(config, options, &MemoryStore::default(), &env).unwrap();
    assert_eq!(s.trust().untrusted_hooks().len(), 1, "trust belongs to one workspace");
}

#[tokio::test]
async fn a_hooks_allow_never_beats_a_deny_rule_or_plan_mode_and_ask_is_a_deny_headless() {
    let allow =
        "#!/bin/sh\ncat >/dev/null\necho '{\"hookSpecificOutput\": {\"permissionDecision\": \"allow\"}}'\n";
    let ask = "#!/bin/sh\ncat >/dev/null\necho '{\"hookSpecificOutput\": {\"permissionDecision\": \"ask\", \"permissionDecisionReason\": \"double-check\"}}'\n";
    let hooks_dir = tempfile::tempdir().unwrap();
    write(&hooks_dir.path().join("allow.sh"), allow);
    write(&hooks_dir.path().join("ask.sh"), ask);
    let config = format!(
        "[permissions]\ndeny = [\"terminal(curl*)\"]\n[[hooks.PreToolUse]]\nmatcher = \"Bash\"\ncommand = \"{}\"\n[[hooks.PreToolUse]]\nmatcher = \"Write\"\ncommand = \"{}\"\n",
        hooks_dir.path().join("allow.sh").display(),
        hooks_dir.path().join("ask.sh").display()
    );
    let t = setup(
        &[],
        &config,
        vec![
            call("t1", "terminal", json!({"command": "curl http://example.com"})),
            call("t2", "write_file", json!({"path": "a.txt", "content": "x"})),
            answer("done"),
            call("t3", "terminal", json!({"command": "touch plan.txt"})),
            answer("planned"),
        ],
    )
    .await;
    let s = t.session(Mode::Auto, true);
    let events = turn(&s, "go").await;
    assert_eq!(result(&events, "t1").0, ToolOutcome::DeniedByRule, "deny rule holds over a hook's allow");
    assert_ne!(result(&events, "t2").0, ToolOutcome::Ran, "ask is a deny when nobody can answer");
    assert!(!t.ws.join("a.txt").exists());
    s.permissions().set_mode(Mode::Plan);
    let events = turn(&s, "plan").await;
    assert_ne!(result(&events, "t3").0, ToolOutcome::Ran, "plan mode holds over a hook's allow");
    assert!(!t.ws.join("plan.txt").exists());
}

#[tokio::test]
async fn prompt_stop_post_tool_and_session_start_hooks_shape_the_turn() {
    let hooks_dir = tempfile::tempdir().unwrap();
    let d = hooks_dir.path();
    write(&d.join("prompt.sh"), "#!/bin/sh\ninput=$(cat)\ncase \"$input\" in *password*) echo 'prompts may not contain passwords' >&2; exit 2;; esac\necho 'Team rule: answer in English.'\n");
    write(&d.join("start.sh"), "#!/bin/sh\ncat >/dev/null\necho 'The build is broken on main.'\n");
    write(&d.join("post.sh"), "#!/bin/sh\ncat >/dev/null\necho '{\"hookSpecificOutput\": {\"hookEventName\": \"PostToolUse\", \"additionalContext\": \"formatted with rustfmt\"}}'\n");
    // Stop blocks once (the marker file remembers), then lets the turn end.
    write(&d.join("stop.sh"), &format!("#!/bin/sh\ncat >/dev/null\nif [ -e {0}/stopped ]; then exit 0; fi\ntouch {0}/stopped\necho 'run the tests before you finish' >&2\nexit 2\n", d.display()));
    let config = format!(
        "[[hooks.UserPromptSubmit]]\ncommand = \"{0}/prompt.sh\"\n[[hooks.SessionStart]]\ncommand = \"{0}/start.sh\"\n[[hooks.PostToolUse]]\nmatcher = \"Edit|Write\"\ncommand = \"{0}/post.sh\"\n[[hooks.Stop]]\ncommand = \"{0}/stop.sh\"\n",
        d.display()
    );
    let t = setup(
        &[],
        &config,
        vec![
            call("t1", "write_file", json!({"path": "x.rs", "content": "fn main(){}"})),
            answer("Wrote it."),
            answer("Tests pass."),
        ],
    )
    .await;
    let s = t.session(Mode::Auto, false);
    let events = turn(&s, "my password is hunter2").await;
    assert!(events.iter().any(|e| matches!(e, AgentEvent::Error { message, .. } if message.contains("prompts may not contain passwords"))));
    assert!(matches!(events.last(), Some(AgentEvent::TurnEnd { reason: TurnEndReason::Failed, .. })));
    assert!(t.llm.request_bodies().await.is_empty(), "a refused prompt reaches no model");
    let events = turn(&s, "write x.rs").await;
    assert!(matches!(events.last(), Some(AgentEvent::TurnEnd { reason: TurnEndReason::Completed, .. })));
    let bodies = t.llm.request_bodies().await;
    let first = bodies[0]["messages"][0].to_string();
    assert!(
        first.contains("The build is broken on main.") && first.contains("Team rule: answer in English."),
        "{first}"
    );
    let tool_result = bodies[1]["messages"].to_string();
    assert!(tool_result.contains("formatted with rustfmt"), "{tool_result}");
    assert_eq!(bodies.len(), 3, "the Stop hook made the turn go on once");
    assert!(bodies[2]["messages"].to_string().contains("run the tests before you finish"));
    let history = s.conversation().history().await.unwrap();
    assert!(
        !history.iter().any(|m| m.text().contains("hunter2")),
        "the refused prompt is not in the history"
    );
}

#[tokio::test]
async fn the_event_log_has_every_event_and_no_credentials() {
    let t = setup(
        &[],
        "log_events = true\n",
        // The key arrives split across many deltas: it is redacted as a whole.
        vec![Scripted::sse(
            Reply::new()
                .text("the key sk-ant-api03-abcdefghijklmnopqrstuvwxyz is secret")
                .chunk_size(5)
                .sse(),
        )],
    )
    .await;
    let s = t.session(Mode::Default, false);
    turn(&s, "hello").await;
    let logs: Vec<PathBuf> =
        std::fs::read_dir(t.home.join("logs")).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    let text = std::fs::read_to_string(&logs[0]).unwrap();
    let kinds: Vec<String> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["event"]["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert!(kinds.contains(&"text_delta".to_owned()) && kinds.last().unwrap() == "turn_end", "{kinds:?}");
    assert!(!text.contains("sk-ant-api03") && text.contains("[redacted]"), "{text}");
    assert!(!text.contains("mnopqrst"), "no piece of the key is left: {text}");
}

/// Claude Code's own example hooks, as its documentation writes them: a Bash command validator
/// that checks `tool_name == "Bash"` and reads `tool_input.command`, a file guard reading
/// `tool_input.file_path` on `Edit|MultiEdit|Write`, and a rewrite through `updatedInput`.
const CLAUDE_SETTINGS: &str = r#"{
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/bash_validator.py"}]},
      {"matcher": "Edit|MultiEdit|Write", "hooks": [{"type": "command", "command": "python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/file_guard.py"}]}
    ],
    "PostToolUse": [
      {"matcher": "Write", "hooks": [{"type": "command", "command": "python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/log.py"}]}
    ]
  }
}"#;

const BASH_VALIDATOR: &str = r#"import json, sys
data = json.load(sys.stdin)
if data.get("tool_name") != "Bash":
    sys.exit(0)
command = data.get("tool_input", {}).get("command", "")
if command.startswith("grep "):
    print("Use 'rg' (ripgrep) instead of 'grep' for better performance", file=sys.stderr)
    sys.exit(2)
sys.exit(0)
"#;

const FILE_GUARD: &str = r#"import json, sys
data = json.load(sys.stdin)
path = data.get("tool_input", {}).get("file_path", "")
if path.endswith(".env"):
    print("Refusing to touch " + path, file=sys.stderr)
    sys.exit(2)
if path.endswith("notes.txt"):
    out = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
           "updatedInput": {"file_path": path, "content": "rewritten by the hook\n"}}}
    print(json.dumps(out))
sys.exit(0)
"#;

const LOG: &str = r#"import json, os, sys
data = json.load(sys.stdin)
r = data["tool_response"]
with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "hook.log"), "a") as f:
    f.write("%s %s %s\n" % (data["tool_name"], r.get("filePath"), r.get("success")))
"#;

#[tokio::test]
async fn claude_codes_example_hooks_see_claude_names_and_arguments() {
    if std::process::Command::new("python3").arg("-c").arg("1").status().map_or(true, |s| !s.success()) {
        eprintln!("SKIPPED: no python3");
        return;
    }
    let t = setup(
        &[
            (".claude/settings.json", CLAUDE_SETTINGS),
            (".claude/hooks/bash_validator.py", BASH_VALIDATOR),
            (".claude/hooks/file_guard.py", FILE_GUARD),
            (".claude/hooks/log.py", LOG),
            ("src/a.txt", "needle\n"),
        ],
        "",
        vec![
            call("t1", "terminal", json!({"command": "grep -r needle src"})),
            call("t2", "write_file", json!({"path": "config/.env", "content": "SECRET=1"})),
            call("t3", "write_file", json!({"path": "notes.txt", "content": "the model's text"})),
            answer("done"),
        ],
    )
    .await;
    let s = t.session(Mode::Auto, false);
    s.trust().trust_hooks().unwrap();
    let events = turn(&s, "go").await;
    let (o, text) = result(&events, "t1");
    assert_ne!(o, ToolOutcome::Ran, "the Bash validator fired: {text}");
    assert!(text.contains("Use 'rg' (ripgrep)"), "{text}");
    let (o, text) = result(&events, "t2");
    // Claude Code gives the hook the absolute path.
    let abs = t.ws.join("config/.env").display().to_string();
    assert!(o != ToolOutcome::Ran && text.contains(&format!("Refusing to touch {abs}")), "{text}");
    assert!(!t.ws.join("config/.env").exists());
    assert_eq!(result(&events, "t3").0, ToolOutcome::Ran);
    assert_eq!(std::fs::read_to_string(t.ws.join("notes.txt")).unwrap(), "rewritten by the hook\n");
    let log = std::fs::read_to_string(t.ws.join("hook.log")).unwrap();
    assert_eq!(log.trim(), format!("Write {} True", t.ws.join("notes.txt").display()), "{log}");
}

#[tokio::test]
async fn a_saved_session_is_named_from_its_first_event_in_its_log_and_its_hooks() {
    // The hook runs in the workspace and keeps what it was given.
    let config = "log_events = true\n[[hooks.UserPromptSubmit]]\ncommand = \"cat > hook-input.json\"\n";
    let t = setup(&[], config, vec![Scripted::sse(Reply::new().text("hi").sse())]).await;
    let seen = t.ws.join("hook-input.json");
    let config = Config::load(&t.home, &t.ws, &env, &Overrides::default()).unwrap();
    let options = SessionOptions { workspace: Some(t.ws.clone()), save: true, ..SessionOptions::default() };
    let s = Session::start(config, options, &MemoryStore::default(), &env).unwrap();
    turn(&s, "hello").await;
    let id = s.conversation().id().expect("saved after the first answer");
    let logs: Vec<String> = std::fs::read_dir(t.home.join("logs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(logs, vec![format!("{id}.jsonl")], "the log has the session's name");
    // The prompt's hook ran before the first save, and was told the session it belongs to.
    let input: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(input["session_id"], id.as_str(), "{input}");
    let transcript = input["transcript_path"].as_str().unwrap();
    assert!(
        transcript.ends_with(&format!("{id}.jsonl")) && std::path::Path::new(transcript).is_file(),
        "{input}"
    );
}

#[tokio::test]
async fn a_stop_hook_finds_the_answer_it_judges_in_the_transcript() {
    // As ralph-loop's Stop hook does: read the transcript's last assistant message, once, at
    // once. The answer is saved before the Stop hooks run. Confined, as hooks run by default:
    // octo's sessions are hidden from the sandbox, so the hook is given a copy in the run's own
    // folder.
    let script = "import json, sys\nd = json.load(sys.stdin)\np = d['transcript_path']\ntry:\n    t = open(p).read()\nexcept OSError as e:\n    t = ''\n    open('err.txt', 'w').write(repr(e))\nlast = [l for l in t.splitlines() if '\"role\":\"assistant\"' in l][-1:]\nif last and 'The final answer.' in last[0]:\n    open('seen.txt', 'w').write('yes')\n";
    let config = "[[hooks.Stop]]\ncommand = \"python3 stop.py\"\n";
    let t = setup(
        &[("stop.py", script)],
        config,
        vec![Scripted::sse(Reply::new().text("The final answer.").sse())],
    )
    .await;
    let config = Config::load(&t.home, &t.ws, &env, &Overrides::default()).unwrap();
    let options = SessionOptions { workspace: Some(t.ws.clone()), save: true, ..SessionOptions::default() };
    let s = Session::start(config, options, &MemoryStore::default(), &env).unwrap();
    turn(&s, "answer").await;
    let err = std::fs::read_to_string(t.ws.join("err.txt")).unwrap_or_default();
    assert_eq!(std::fs::read_to_string(t.ws.join("seen.txt")).ok().as_deref(), Some("yes"), "{err}");
}

#[tokio::test]
async fn what_a_session_start_hook_exports_reaches_later_commands_and_a_command_cannot_add_to_it() {
    // As Claude Code documents `CLAUDE_ENV_FILE`: a SessionStart hook appends `export` lines; the
    // session's commands see them. The file is the hooks' to write: a command that tries is
    // refused by the sandbox (when there is one), and its line never applies.
    let hook = "printf 'export GREETING=hello\\nexport PATH=\"$PATH:/opt/x\"\\n' >> \"$CLAUDE_ENV_FILE\"\nprintf '%s' \"$CLAUDE_ENV_FILE\" > envpath.txt\n";
    let config = "[[hooks.SessionStart]]\ncommand = \"sh start.sh\"\n";
    let t = setup(
        &[("start.sh", hook)],
        config,
        vec![
            call("t1", "terminal", json!({"command": "echo \"G=$GREETING P=$PATH\" > seen.txt"})),
            call(
                "t2",
                "terminal",
                json!({"command": "printf 'export PWNED=1\\n' >> \"$(cat envpath.txt)\""}),
            ),
            call("t3", "terminal", json!({"command": "echo \"X=$PWNED\" > pwned.txt"})),
            call("t4", "terminal", json!({"command": "cat \"$(cat envpath.txt)\" > leaked.txt"})),
            answer("done"),
        ],
    )
    .await;
    let s = t.session(Mode::Auto, false);
    let sandbox = s.status().sandbox;
    let confined = !sandbox.starts_with("none") && !sandbox.starts_with("off");
    let events = turn(&s, "go").await;
    assert_eq!(result(&events, "t1").0, ToolOutcome::Ran);
    let seen = std::fs::read_to_string(t.ws.join("seen.txt")).unwrap();
    assert!(seen.starts_with("G=hello P=") && seen.trim_end().ends_with(":/opt/x"), "{seen}");
    let path = PathBuf::from(std::fs::read_to_string(t.ws.join("envpath.txt")).unwrap());
    assert!(!path.starts_with(&t.ws), "outside the workspace: {}", path.display());
    if confined {
        assert_eq!(std::fs::read_to_string(t.ws.join("pwned.txt")).unwrap().trim(), "X=");
        // Hidden from commands, as other sessions' output is: a command cannot read it either.
        assert_eq!(std::fs::read_to_string(t.ws.join("leaked.txt")).unwrap_or_default(), "");
    }
    drop(s);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!path.exists(), "the file goes with the session");
}
