//! The differential suite: one scenario through pinned Claude Code (npm
//! `@anthropic-ai/claude-code`, installed by `.ci/run`, found through `OCTO_CLAUDE_CODE`) and
//! through octo, both against the same scripted Anthropic-wire model on loopback, with the same
//! home (`~/.claude/settings.json`) and workspace; what matters is compared. The model's calls
//! are written in Claude Code's names and given to octo in its own. Without `OCTO_CLAUDE_CODE`
//! the suite says so and passes, except under CI, where it fails: CI never skips silently.

use super::common::home_for;
use octo_testkit::anthropic::Reply;
use octo_testkit::{MockLlm, Scripted, TempHome};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The Claude Code binary to compare with.
pub(super) fn claude_code() -> Option<PathBuf> {
    match std::env::var_os("OCTO_CLAUDE_CODE").map(PathBuf::from) {
        Some(p) if p.is_file() => Some(p),
        other => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "OCTO_CLAUDE_CODE ({other:?}) names no Claude Code binary: .ci/run installs it"
            );
            eprintln!("differential suite not run: set OCTO_CLAUDE_CODE to a Claude Code binary");
            None
        }
    }
}

/// A call in Claude Code's terms, and the same call for octo.
#[derive(Clone)]
pub(super) struct Call {
    claude: (&'static str, Value),
    octo: (&'static str, Value),
}

impl Call {
    /// A call written `claude` in Claude Code's terms and `octo` in octo's.
    pub(super) fn both(claude: (&'static str, Value), octo: (&'static str, Value)) -> Self {
        Self { claude, octo }
    }
}

pub(super) fn bash(command: &str) -> Call {
    Call { claude: ("Bash", json!({"command": command})), octo: ("terminal", json!({"command": command})) }
}

fn read(path: &str) -> Call {
    Call { claude: ("Read", json!({"file_path": path})), octo: ("read_file", json!({"path": path})) }
}

/// An agent's command in `home`, offline against `llm` (which octo's config in `home` names too).
pub(super) fn agent(bin: &PathBuf, home: &TempHome, llm: &MockLlm) -> Command {
    std::fs::write(home.home().join("config.toml"), llm.config_toml()).unwrap();
    let mut cmd = Command::new(bin);
    home.isolate(&mut cmd);
    cmd.env("ANTHROPIC_BASE_URL", llm.uri())
        .env("ANTHROPIC_API_KEY", "sk-mock")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1");
    cmd
}

/// What one run came to: the result object, and the request bodies the model received.
pub(super) struct Run {
    pub result: Value,
    pub requests: Vec<Value>,
}

/// Runs `args` of one agent against a mock that answers `call` (if any), then "Done.".
pub(super) async fn run(
    agent: &str,
    bin: &PathBuf,
    home: &TempHome,
    call: Option<&Call>,
    args: &[&str],
) -> Run {
    let llm = MockLlm::start().await;
    let mut replies = Vec::new();
    if let Some(c) = call {
        let (name, input) = if agent == "claude" { &c.claude } else { &c.octo };
        replies.push(Scripted::sse(Reply::new().tool_use("toolu_d1", *name, input.clone()).sse()));
    }
    replies.push(Scripted::sse(Reply::new().text("Done.").sse()));
    llm.script_anthropic(replies).await;
    let mut cmd = self::agent(bin, home, &llm);
    cmd.args(args).stdin(Stdio::null());
    let out = tokio::task::spawn_blocking(move || cmd.output()).await.unwrap().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let result = stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str::<Value>(l).ok().filter(|v| v["type"] == "result"))
        .unwrap_or_else(|| {
            panic!("{agent} {args:?} printed no result: {stdout}\n{}", String::from_utf8_lossy(&out.stderr))
        });
    Run { result, requests: llm.request_bodies().await }
}

/// The tool names a run's `permission_denials` name.
fn denied(r: &Run) -> Vec<String> {
    r.result["permission_denials"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| d["tool_name"].as_str().unwrap_or("?").to_owned())
        .collect()
}

/// One permission case: settings, a call, and whether both agents refused it alike.
async fn same_decision(bin: &PathBuf, settings: &Value, call: Call, what: &str) -> (bool, bool) {
    let home = {
        let llm = MockLlm::start().await;
        home_for(&llm)
    };
    std::fs::create_dir_all(home.home().join(".claude")).unwrap();
    // `{"project": …}` is the project's `.claude/settings.json`; anything else the user's.
    match settings.get("project") {
        Some(p) => drop(home.write(".claude/settings.json", p.to_string()).unwrap()),
        None => std::fs::write(home.home().join(".claude/settings.json"), settings.to_string()).unwrap(),
    }
    home.write(".env", "SECRET=1\n").unwrap();
    home.write("sub/.env", "SECRET=2\n").unwrap();
    home.write("src/a.txt", "a\n").unwrap();
    let octo = assert_cmd::cargo::cargo_bin("octo");
    let args = ["-p", "--output-format", "json", "go"];
    let c = run("claude", bin, &home, Some(&call), &args).await;
    let o =
        run("octo", &octo, &home, Some(&call), &["--no-save", "-p", "--output-format", "json", "go"]).await;
    let (cd, od) = (!denied(&c).is_empty(), !denied(&o).is_empty());
    if cd && od {
        // A refusal names the call with its arguments, under Claude Code's names. (Claude Code
        // also makes a relative `file_path` absolute there; octo gives it as the model wrote it.)
        let input = |r: &Run| keys(&r.result["permission_denials"][0]["tool_input"]);
        assert_eq!(input(&c), input(&o), "{what}: the refused call's input\n{}\n{}", c.result, o.result);
    }
    assert_eq!(
        cd, od,
        "{what}: Claude Code refused: {cd}, octo refused: {od}\nclaude: {}\nocto: {}",
        c.result, o.result
    );
    (cd, od)
}

#[tokio::test(flavor = "multi_thread")]
async fn permission_rules_decide_as_in_claude_code() {
    let Some(bin) = claude_code() else { return };
    let ws = |p: &str| p.to_owned();
    let rules =
        json!({"permissions": {"allow": ["Bash(git status:*)", "Bash(ls:*)"], "deny": ["Read(./.env)"]}});
    let cases: Vec<(Value, Call, &str)> = vec![
        (rules.clone(), bash("git status && ls"), "a compound command whose parts are allowed"),
        (rules.clone(), bash("git status && rm -f src/a.txt"), "a compound command with a part not allowed"),
        (rules.clone(), bash("ls > out.txt"), "a redirection to a file"),
        (rules.clone(), bash("ls $(echo src)"), "a command substitution"),
        (rules.clone(), read(&ws(".env")), "Read(./.env) against .env"),
        (json!({"permissions": {"deny": ["Read(.env)"]}}), read(&ws(".env")), "Read(.env) against .env"),
        (json!({"permissions": {"deny": ["Read(src/**)"]}}), read(&ws("src/a.txt")), "Read(src/**)"),
        (
            json!({"permissions": {"deny": ["Read(//etc/hostname)"]}}),
            read("/etc/hostname"),
            "an absolute rule",
        ),
        (rules.clone(), read("sub/.env"), "Read(./.env) against sub/.env"),
        (json!({"permissions": {"deny": ["Read(.env)"]}}), read("sub/.env"), "Read(.env) against sub/.env"),
        (
            json!({"permissions": {"deny": ["Read(*.txt)"]}}),
            read("src/a.txt"),
            "Read(*.txt) against src/a.txt",
        ),
        // In the user's settings a leading `/` is the home's: `~/src/**`, not the project's.
        (json!({"permissions": {"deny": ["Read(/src/**)"]}}), read("src/a.txt"), "the user's Read(/src/**)"),
        (
            json!({"project": {"permissions": {"deny": ["Read(/src/**)"]}}}),
            read("src/a.txt"),
            "the project's Read(/src/**)",
        ),
        (
            json!({"project": {"permissions": {"deny": ["Read(./.env)"]}}}),
            read("sub/.env"),
            "the project's Read(./.env)",
        ),
        (rules.clone(), bash("git status > /dev/null && ls"), "a redirection to /dev/null"),
        (rules.clone(), bash("git status; ls -la"), "`;` between allowed commands"),
        (rules.clone(), bash("FOO=1 ls"), "an assignment before an allowed command"),
    ];
    for (settings, call, what) in cases {
        let (refused, _) = same_decision(&bin, &settings, call, what).await;
        eprintln!("{what}: {}", if refused { "refused by both" } else { "run by both" });
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_headless_result_has_claude_codes_keys() {
    let Some(bin) = claude_code() else { return };
    let llm = MockLlm::start().await;
    let home = home_for(&llm);
    drop(llm);
    let octo = assert_cmd::cargo::cargo_bin("octo");
    let c = run("claude", &bin, &home, None, &["-p", "--output-format", "json", "say hi"]).await;
    let o = run("octo", &octo, &home, None, &["-p", "--output-format", "json", "say hi"]).await;
    // The keys scripts read; octo's own extras are allowed beside them.
    for key in [
        "type",
        "subtype",
        "is_error",
        "duration_ms",
        "duration_api_ms",
        "num_turns",
        "result",
        "session_id",
        "total_cost_usd",
        "usage",
        "permission_denials",
        "uuid",
        "modelUsage",
        "stop_reason",
    ] {
        assert!(c.result.get(key).is_some(), "Claude Code's result has no `{key}` (pinned version changed?)");
        assert!(o.result.get(key).is_some(), "octo's result has no `{key}`: {}", o.result);
    }
    assert_eq!(c.result["result"], o.result["result"]);
    assert_eq!(
        (c.result["subtype"].as_str(), o.result["subtype"].as_str()),
        (Some("success"), Some("success"))
    );
    assert!(c.requests.len() == 1 && o.requests.len() == 1);
}

/// The keys of a JSON object, sorted.
fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
    k.sort();
    k
}

#[tokio::test(flavor = "multi_thread")]
async fn hooks_receive_what_claude_code_gives_them() {
    let Some(bin) = claude_code() else { return };
    let octo = assert_cmd::cargo::cargo_bin("octo");
    // Each agent's hooks write files named after it.
    let hooks = |agent: &str| {
        json!({"hooks": {
            "PreToolUse": [{"matcher": "Bash|Write", "hooks": [{"type": "command", "command": format!("cat > \"$CLAUDE_PROJECT_DIR/pre-{agent}.json\"")}]}],
            "UserPromptSubmit": [{"hooks": [{"type": "command", "command": format!("cat > \"$CLAUDE_PROJECT_DIR/prompt-{agent}.json\"")}]}]
        }, "permissions": {"allow": ["Bash(ls:*)", "Write"]}})
    };
    for call in [
        bash("ls"),
        Call {
            claude: ("Write", json!({"file_path": "notes.txt", "content": "x\n"})),
            octo: ("write_file", json!({"path": "notes.txt", "content": "x\n"})),
        },
    ] {
        let llm = MockLlm::start().await;
        let home = home_for(&llm);
        drop(llm);
        std::fs::create_dir_all(home.home().join(".claude")).unwrap();
        let mut seen = Vec::new();
        for (agent, bin, args) in [
            ("claude", &bin, vec!["-p", "--output-format", "json", "go"]),
            ("octo", &octo, vec!["--no-save", "-p", "--output-format", "json", "go"]),
        ] {
            std::fs::write(home.home().join(".claude/settings.json"), hooks(agent).to_string()).unwrap();
            let r = run(agent, bin, &home, Some(&call), &args).await;
            let pre = home.workspace().join(format!("pre-{agent}.json"));
            let text = std::fs::read_to_string(&pre)
                .unwrap_or_else(|e| panic!("{agent}: no PreToolUse payload ({e}): {}", r.result));
            let prompt =
                std::fs::read_to_string(home.workspace().join(format!("prompt-{agent}.json"))).unwrap();
            seen.push((
                serde_json::from_str::<Value>(&text).unwrap(),
                serde_json::from_str::<Value>(&prompt).unwrap(),
            ));
        }
        let ((c_pre, c_prompt), (o_pre, o_prompt)) = (&seen[0], &seen[1]);
        let missing = |c: &Value, o: &Value| -> Vec<String> {
            keys(c).into_iter().filter(|k| o.get(k).is_none()).collect()
        };
        assert_eq!(
            missing(c_pre, o_pre),
            Vec::<String>::new(),
            "PreToolUse keys octo lacks\nclaude: {c_pre}\nocto: {o_pre}"
        );
        assert_eq!(
            missing(&c_pre["tool_input"], &o_pre["tool_input"]),
            Vec::<String>::new(),
            "tool_input keys\nclaude: {c_pre}\nocto: {o_pre}"
        );
        assert_eq!(c_pre["tool_name"], o_pre["tool_name"]);
        assert_eq!(c_pre["hook_event_name"], o_pre["hook_event_name"]);
        assert_eq!(c_pre["permission_mode"], o_pre["permission_mode"], "{c_pre}\n{o_pre}");
        assert_eq!(
            missing(c_prompt, o_prompt),
            Vec::<String>::new(),
            "UserPromptSubmit keys\nclaude: {c_prompt}\nocto: {o_prompt}"
        );
    }
}

/// The text of the last user message of a request body.
fn last_user_text(body: &Value) -> String {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let last = messages.iter().rev().find(|m| m["role"] == "user").cloned().unwrap_or_default();
    match &last["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_expands_as_in_claude_code() {
    let Some(bin) = claude_code() else { return };
    let octo = assert_cmd::cargo::cargo_bin("octo");
    let llm = MockLlm::start().await;
    let home = home_for(&llm);
    drop(llm);
    // As plugins write them: an unquoted description with `: ` and an `<example>`, a ```! block.
    home.write(
        ".claude/commands/ctx.md",
        "---\ndescription: Show context: the status <example>user: hi</example>\nallowed-tools: Bash(echo:*)\n---\nStatus follows.\n```!\necho BLOCK-OUTPUT\n```\nArgs: $ARGUMENTS\n",
    )
    .unwrap();
    let c = run("claude", &bin, &home, None, &["-p", "--output-format", "json", "/ctx hello there"]).await;
    let o =
        run("octo", &octo, &home, None, &["--no-save", "-p", "--output-format", "json", "/ctx hello there"])
            .await;
    for (agent, r) in [("claude", &c), ("octo", &o)] {
        let text = r.requests.first().map(last_user_text).unwrap_or_default();
        assert!(text.contains("Status follows."), "{agent}: {text}");
        assert!(text.contains("BLOCK-OUTPUT"), "{agent} ran the block: {text}");
        assert!(!text.contains("echo BLOCK-OUTPUT"), "{agent} replaced the block by its output: {text}");
        assert!(text.contains("Args: hello there"), "{agent}: {text}");
    }
}

/// The stream-json lines of one agent's `-p … "hi"` (the model answers "Hello.").
pub(super) async fn stream_lines(agent: &str, bin: &PathBuf, home: &TempHome, more: &[&str]) -> Vec<Value> {
    let llm = MockLlm::start().await;
    llm.script_anthropic([Scripted::sse(Reply::new().text("Hello.").sse())]).await;
    let mut cmd = self::agent(bin, home, &llm);
    let extra: &[&str] = if agent == "claude" { &["--verbose"] } else { &["--no-save"] };
    cmd.args(extra).args(more).args(["-p", "--output-format", "stream-json", "hi"]).stdin(Stdio::null());
    let out = tokio::task::spawn_blocking(move || cmd.output()).await.unwrap().unwrap();
    String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

/// Runs Claude Code's own `claude plugin …` subcommand in `home`.
fn claude_plugin(bin: &PathBuf, home: &TempHome, args: &[&str]) {
    let mut cmd = Command::new(bin);
    home.isolate(&mut cmd);
    let out = cmd
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .arg("plugin")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "claude plugin {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

#[tokio::test(flavor = "multi_thread")]
async fn plugins_claude_code_installed_from_a_marketplace_bring_the_same_commands_and_agents() {
    let Some(bin) = claude_code() else { return };
    let octo = assert_cmd::cargo::cargo_bin("octo");
    let llm = MockLlm::start().await;
    let home = home_for(&llm);
    drop(llm);
    // A marketplace as plugin repositories lay one out: a plugin in a folder, and one whose
    // entry declares its parts (`"strict": false`, a command outside `commands/`).
    let m = home.home().join("market");
    let put = |rel: &str, text: &str| {
        let p = m.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    put("plugins/alpha/commands/hi.md", "---\ndescription: Say hi\n---\nSay hi.\n");
    put("beta/prompts/x.md", "---\ndescription: Do x\n---\nDo x.\n");
    put("beta/agents/rev.md", "---\nname: rev\ndescription: Reviews\n---\nYou review.\n");
    put("beta/agents/anon.md", "---\ntools: Read\n---\nNo name, no description.\n");
    let listing = json!({"name": "team-market", "owner": {"name": "T"}, "plugins": [
        {"name": "alpha", "source": "./plugins/alpha"},
        {"name": "beta", "source": "./beta", "strict": false, "commands": ["./prompts/x.md"]}
    ]});
    put(".claude-plugin/marketplace.json", &listing.to_string());
    claude_plugin(&bin, &home, &["marketplace", "add", m.to_str().unwrap()]);
    claude_plugin(&bin, &home, &["install", "alpha@team-market"]);
    claude_plugin(&bin, &home, &["install", "beta@team-market"]);
    let seen =
        [stream_lines("claude", &bin, &home, &[]).await, stream_lines("octo", &octo, &home, &[]).await];
    for (agent, lines) in ["claude", "octo"].iter().zip(&seen) {
        let init = lines.iter().find(|l| l["subtype"] == "init").cloned().unwrap_or_default();
        let has = |key: &str, v: &str| init[key].as_array().is_some_and(|l| l.iter().any(|x| x == v));
        for (key, v) in [("slash_commands", "alpha:hi"), ("slash_commands", "beta:x"), ("agents", "beta:rev")]
        {
            assert!(has(key, v), "{agent}: {key} lacks {v}: {init}");
        }
        let sources: Vec<&str> =
            init["plugins"].as_array().into_iter().flatten().filter_map(|p| p["source"].as_str()).collect();
        for id in ["alpha@team-market", "beta@team-market"] {
            assert!(sources.contains(&id), "{agent}: plugins lack {id}: {init}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn stream_json_lines_have_claude_codes_keys() {
    let Some(bin) = claude_code() else { return };
    let octo = assert_cmd::cargo::cargo_bin("octo");
    let llm = MockLlm::start().await;
    let home = home_for(&llm);
    drop(llm);
    let seen =
        [stream_lines("claude", &bin, &home, &[]).await, stream_lines("octo", &octo, &home, &[]).await];
    let find =
        |lines: &[Value], kind: &str| lines.iter().find(|l| l["type"] == kind).cloned().unwrap_or_default();
    for (kind, keys_scripts_read) in [
        (
            "system",
            &[
                "type",
                "subtype",
                "session_id",
                "cwd",
                "model",
                "tools",
                "mcp_servers",
                "permissionMode",
                "slash_commands",
                "skills",
                "agents",
                "uuid",
                "apiKeySource",
                "output_style",
                "plugins",
                "claude_code_version",
            ][..],
        ),
        ("assistant", &["type", "message", "session_id", "parent_tool_use_id", "uuid"][..]),
        (
            "result",
            &["type", "subtype", "result", "session_id", "uuid", "usage", "modelUsage", "permission_denials"]
                [..],
        ),
    ] {
        let (c, o) = (find(&seen[0], kind), find(&seen[1], kind));
        for key in keys_scripts_read {
            assert!(c.get(*key).is_some(), "Claude Code's {kind} line has no `{key}`: {c}");
            assert!(o.get(*key).is_some(), "octo's {kind} line has no `{key}`: {o}");
        }
    }
    let (c, o) = (find(&seen[0], "assistant"), find(&seen[1], "assistant"));
    for key in ["id", "type", "role", "content", "model", "usage", "stop_reason"] {
        assert!(
            c["message"].get(key).is_some() && o["message"].get(key).is_some(),
            "message.{key}\n{c}\n{o}"
        );
    }
    let tools = |l: &Value| l["tools"].as_array().cloned().unwrap_or_default();
    for name in ["Bash", "Read", "Edit", "Write", "Task", "WebFetch"] {
        let has = |l: &Value| tools(l).iter().any(|t| t == name);
        assert!(has(&find(&seen[0], "system")) && has(&find(&seen[1], "system")), "tool {name}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn folder_and_path_rules_reach_the_model_when_work_reaches_their_files() {
    let Some(bin) = claude_code() else { return };
    let octo = assert_cmd::cargo::cargo_bin("octo");
    for (file, mark) in [("pkg/a.txt", "NESTED-RULE-MARK"), ("src/api/x.ts", "PATH-RULE-MARK")] {
        let home = {
            let llm = MockLlm::start().await;
            home_for(&llm)
        };
        home.write("pkg/CLAUDE.md", "NESTED-RULE-MARK: keep it short.\n").unwrap();
        home.write(".claude/rules/api.md", "---\npaths:\n  - \"src/api/**/*.ts\"\n---\nPATH-RULE-MARK\n")
            .unwrap();
        home.write(file, "content\n").unwrap();
        let args = ["-p", "--output-format", "json", "go"];
        let c = run("claude", &bin, &home, Some(&read(file)), &args).await;
        let o = run(
            "octo",
            &octo,
            &home,
            Some(&read(file)),
            &["--no-save", "-p", "--output-format", "json", "go"],
        )
        .await;
        for (agent, r) in [("claude", &c), ("octo", &o)] {
            let text = |i: usize| r.requests.get(i).map(Value::to_string).unwrap_or_default();
            assert!(!text(0).contains(mark), "{agent}: {mark} is read only when work reaches {file}");
            assert!(text(r.requests.len() - 1).contains(mark), "{agent}: {mark} after reading {file}");
        }
    }
}
