//! More of the differential suite (`claude_diff` has the harness): the headless flags scripts
//! chain — `--session-id`, `--resume`, `--continue`, `--input-format stream-json` — a tool call
//! streamed with `--include-partial-messages`, and the plugins that failed to load, each run
//! through Claude Code and octo alike.

use super::claude_diff::claude_code;
use super::common::home_for;
use octo_testkit::anthropic::Reply;
use octo_testkit::{MockLlm, Scripted, TempHome};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::Stdio;

/// What one run printed and sent.
struct Lines {
    lines: Vec<Value>,
    requests: Vec<Value>,
    ok: bool,
    stderr: String,
}

/// Runs `args` of one agent against a mock answering `replies` in order, `stdin` piped in.
async fn lines(bin: &PathBuf, home: &TempHome, replies: Vec<Scripted>, args: &[&str], stdin: &str) -> Lines {
    lines_with(bin, home, replies, args, (stdin, &[])).await
}

/// [`lines`] with more environment variables.
async fn lines_with(
    bin: &PathBuf,
    home: &TempHome,
    replies: Vec<Scripted>,
    args: &[&str],
    (stdin, env): (&str, &[(&str, &str)]),
) -> Lines {
    let llm = MockLlm::start().await;
    llm.script_anthropic(replies).await;
    let mut cmd = super::claude_diff::agent(bin, home, &llm);
    cmd.envs(env.iter().copied())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let stdin = stdin.to_owned();
    let out = tokio::task::spawn_blocking(move || {
        let mut child = cmd.spawn().unwrap();
        let mut pipe = child.stdin.take().unwrap();
        std::io::Write::write_all(&mut pipe, stdin.as_bytes()).unwrap();
        drop(pipe);
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    Lines {
        lines: String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect(),
        requests: llm.request_bodies().await,
        ok: out.status.success(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn text(t: &str) -> Scripted {
    Scripted::sse(Reply::new().text(t).sse())
}

/// A request's conversation as `role: text` lines, without what an agent adds of its own
/// (Claude Code's `<system-reminder>` blocks, system entries).
fn conversation(request: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for m in request["messages"].as_array().into_iter().flatten() {
        let role = m["role"].as_str().unwrap_or("?");
        if role == "system" {
            continue;
        }
        let blocks = match &m["content"] {
            Value::String(s) => vec![s.clone()],
            Value::Array(a) => a.iter().filter_map(|b| b["text"].as_str().map(str::to_owned)).collect(),
            _ => Vec::new(),
        };
        for b in blocks.into_iter().filter(|b| !b.starts_with("<system-reminder>")) {
            out.push(format!("{role}: {}", b.trim()));
        }
    }
    out
}

fn result(l: &Lines) -> Value {
    l.lines.iter().rev().find(|v| v["type"] == "result").cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_goes_on_by_its_id_and_as_the_last_one() {
    let Some(bin) = claude_code() else { return };
    let octo = assert_cmd::cargo::cargo_bin("octo");
    let id = "0b1e5c3a-7d42-4f7e-9a1b-5c6d7e8f9a0b";
    for (agent, bin) in [("claude", &bin), ("octo", &octo)] {
        let home = {
            let llm = MockLlm::start().await;
            home_for(&llm)
        };
        let json = ["-p", "--output-format", "json"];
        let first =
            lines(bin, &home, vec![text("One.")], &[&json[..], &["--session-id", id, "first"]].concat(), "")
                .await;
        let second =
            lines(bin, &home, vec![text("Two.")], &[&json[..], &["--resume", id, "second"]].concat(), "")
                .await;
        let third =
            lines(bin, &home, vec![text("Three.")], &[&json[..], &["--continue", "third"]].concat(), "")
                .await;
        for (what, run) in [("--session-id", &first), ("--resume", &second), ("--continue", &third)] {
            assert!(run.ok, "{agent} {what}: {}\n{:?}", run.stderr, run.lines);
            assert_eq!(result(run)["session_id"], id, "{agent} {what}: the result's session_id");
        }
        assert_eq!(
            conversation(third.requests.last().unwrap()),
            ["user: first", "assistant: One.", "user: second", "assistant: Two.", "user: third"],
            "{agent}: what the model got on --continue"
        );
        // The session's cost goes on from the earlier runs' (`usage` is this run's).
        let cost = |l: &Lines| result(l)["total_cost_usd"].as_f64().unwrap_or(0.0);
        assert!(cost(&first) > 0.0 && cost(&second) > cost(&first) * 1.5, "{agent}: total_cost_usd");
        assert_eq!(
            result(&second)["usage"]["output_tokens"],
            result(&first)["usage"]["output_tokens"],
            "{agent}"
        );
        // A taken id, and an id no session has, are refused before anything runs.
        let taken =
            lines(bin, &home, vec![text("x")], &[&json[..], &["--session-id", id, "again"]].concat(), "")
                .await;
        let unknown = lines(
            bin,
            &home,
            vec![text("x")],
            &[&json[..], &["--resume", "99999999-2222-4333-8444-555555555555", "x"]].concat(),
            "",
        )
        .await;
        for (what, run) in [("a taken --session-id", &taken), ("an unknown --resume", &unknown)] {
            assert!(!run.ok && run.requests.is_empty(), "{agent}: {what} ran: {:?}", run.lines);
            assert!(!run.stderr.trim().is_empty(), "{agent}: {what} said nothing");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn stream_json_input_runs_each_message_as_a_turn_of_one_session() {
    let Some(bin) = claude_code() else { return };
    let octo = assert_cmd::cargo::cargo_bin("octo");
    let home = {
        let llm = MockLlm::start().await;
        home_for(&llm)
    };
    let input = [
        json!({"type": "user", "message": {"role": "user", "content": "one"}}),
        json!({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "two"}]}}),
    ]
    .iter()
    .map(|v| format!("{v}\n"))
    .collect::<String>();
    let args = ["-p", "--input-format", "stream-json", "--output-format", "stream-json"];
    let mut seen = Vec::new();
    for (agent, bin, extra) in [("claude", &bin, "--verbose"), ("octo", &octo, "--no-save")] {
        let run =
            lines(bin, &home, vec![text("First."), text("Second.")], &[&args[..], &[extra]].concat(), &input)
                .await;
        assert!(run.ok, "{agent}: {}", run.stderr);
        assert_eq!(
            conversation(run.requests.last().unwrap()),
            ["user: one", "assistant: First.", "user: two"],
            "{agent}: the second turn's request"
        );
        let shape: Vec<String> = run
            .lines
            .iter()
            .map(|l| format!("{}/{}", l["type"].as_str().unwrap_or("?"), l["subtype"].as_str().unwrap_or("")))
            .collect();
        seen.push(shape);
    }
    assert_eq!(seen[1], seen[0], "octo's line types, then Claude Code's");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_call_streams_as_the_same_blocks_and_lines() {
    let Some(bin) = claude_code() else { return };
    let octo = assert_cmd::cargo::cargo_bin("octo");
    let home = {
        let llm = MockLlm::start().await;
        home_for(&llm)
    };
    std::fs::create_dir_all(home.home().join(".claude")).unwrap();
    let settings = json!({"permissions": {"allow": ["Bash(echo:*)"]}});
    std::fs::write(home.home().join(".claude/settings.json"), settings.to_string()).unwrap();
    let mut seen = Vec::new();
    for (agent, bin, extra, tool) in
        [("claude", &bin, "--verbose", "Bash"), ("octo", &octo, "--no-save", "terminal")]
    {
        let replies = vec![
            Scripted::sse(
                Reply::new().text("Looking.").tool_use("toolu_s1", tool, json!({"command": "echo hi"})).sse(),
            ),
            text("Done."),
        ];
        let args = ["-p", "--output-format", "stream-json", "--include-partial-messages", extra, "go"];
        let run = lines(bin, &home, replies, &args, "").await;
        assert!(run.ok, "{agent}: {}", run.stderr);
        // Each line's kind (a stream event's type and block index), repeated deltas once.
        let mut shape: Vec<String> = Vec::new();
        for l in &run.lines {
            let kind = match l["type"].as_str() {
                Some("stream_event") => {
                    let e = &l["event"];
                    let block =
                        e["content_block"]["type"].as_str().or(e["delta"]["type"].as_str()).unwrap_or("");
                    format!("event {} {} {block}", e["type"].as_str().unwrap_or("?"), e["index"])
                }
                Some("assistant") => {
                    format!("assistant {}", l["message"]["content"][0]["type"].as_str().unwrap_or("?"))
                }
                Some(t) => format!("{t} {}", l["subtype"].as_str().unwrap_or("")),
                None => "?".to_owned(),
            };
            if shape.last() != Some(&kind) {
                shape.push(kind);
            }
        }
        let tool_start =
            run.lines.iter().find(|l| l["event"]["content_block"]["type"] == "tool_use").cloned();
        let started = tool_start.unwrap_or_default()["event"]["content_block"].clone();
        assert_eq!(
            (started["id"].as_str(), started["name"].as_str()),
            (Some("toolu_s1"), Some("Bash")),
            "{agent}"
        );
        let input: String = run
            .lines
            .iter()
            .filter(|l| l["event"]["delta"]["type"] == "input_json_delta")
            .filter_map(|l| l["event"]["delta"]["partial_json"].as_str())
            .collect();
        assert_eq!(
            serde_json::from_str::<Value>(&input).ok(),
            Some(json!({"command": "echo hi"})),
            "{agent}"
        );
        seen.push(shape);
    }
    assert_eq!(seen[1], seen[0], "octo's lines, then Claude Code's");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plugin_that_fails_to_load_is_in_plugin_errors() {
    let Some(bin) = claude_code() else { return };
    let octo = assert_cmd::cargo::cargo_bin("octo");
    let home = {
        let llm = MockLlm::start().await;
        home_for(&llm)
    };
    let bad = home.home().join("plugins-here/broken");
    std::fs::create_dir_all(bad.join(".claude-plugin")).unwrap();
    std::fs::write(bad.join(".claude-plugin/plugin.json"), "{\"name\": \"broken\",").unwrap();
    let good = home.home().join("plugins-here/fine");
    std::fs::create_dir_all(good.join("commands")).unwrap();
    std::fs::write(good.join("commands/hello.md"), "Say hello.\n").unwrap();
    let (bad_s, good_s) = (bad.display().to_string(), good.display().to_string());
    for (agent, bin, extra) in [("claude", &bin, "--verbose"), ("octo", &octo, "--no-save")] {
        let args = [
            "-p",
            "hi",
            "--output-format",
            "stream-json",
            extra,
            "--plugin-dir",
            &bad_s,
            "--plugin-dir",
            &good_s,
        ];
        let run = lines(bin, &home, vec![text("Hello.")], &args, "").await;
        assert!(run.ok, "{agent}: {}", run.stderr);
        let init = run.lines.iter().find(|l| l["subtype"] == "init").cloned().unwrap_or_default();
        let errors = init["plugin_errors"].as_array().cloned().unwrap_or_default();
        assert_eq!(errors.len(), 1, "{agent}: {init}");
        assert_eq!(
            (errors[0]["plugin"].as_str(), errors[0]["path"].as_str()),
            (Some("inline[0]"), Some(&*bad_s))
        );
        assert!(
            errors[0]["message"].as_str().is_some_and(|m| m.contains("plugin.json")),
            "{agent}: {errors:?}"
        );
        let fine = init["plugins"].as_array().into_iter().flatten().any(|p| p["source"] == "fine@inline");
        assert!(fine, "{agent}: {init}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_settings_file_claude_code_ignores_is_ignored_alike() {
    let Some(bin) = claude_code() else { return };
    let octo = assert_cmd::cargo::cargo_bin("octo");
    let allow = r#""permissions": {"allow": ["Bash(touch:*)"]"#;
    let cases = [
        (format!("{{{allow}}}, \"unknownKey\": 1}}"), "an unknown key"),
        (r#"{"permissions": {"allow": ["Bash(touch:*)", 5]}}"#.to_owned(), "a rule that is not text"),
        (r#"{"permissions": {"allow": ["Bash(touch:*)"], "deny": "x"}}"#.to_owned(), "deny as text"),
        (format!("{{{allow}}}, \"model\": 5}}"), "model as a number"),
        (
            format!("{{{allow}}}, \"hooks\": {{\"PreToolUse\": [{{\"matcher\": \"x\"}}]}}}}"),
            "a hook entry without hooks",
        ),
        (format!("{{{allow}}}, \"statusLine\": \"x\"}}"), "statusLine as text"),
        (format!("{{{allow}}}"), "a file cut short"),
    ];
    for (settings, what) in cases {
        let home = {
            let llm = MockLlm::start().await;
            home_for(&llm)
        };
        std::fs::create_dir_all(home.home().join(".claude")).unwrap();
        std::fs::write(home.home().join(".claude/settings.json"), &settings).unwrap();
        let call = super::claude_diff::Call::both(
            ("Bash", json!({"command": "touch made.txt"})),
            ("terminal", json!({"command": "touch made.txt"})),
        );
        let args = ["-p", "--output-format", "json", "go"];
        let c = super::claude_diff::run("claude", &bin, &home, Some(&call), &args).await;
        let o = super::claude_diff::run(
            "octo",
            &octo,
            &home,
            Some(&call),
            &[&["--no-save"][..], &args[..]].concat(),
        )
        .await;
        let refused = |r: &super::claude_diff::Run| {
            r.result["permission_denials"].as_array().is_some_and(|d| !d.is_empty())
        };
        assert_eq!(refused(&c), refused(&o), "{what}: {settings}\nclaude: {}\nocto: {}", c.result, o.result);
        eprintln!("{what}: {}", if refused(&c) { "the file is ignored by both" } else { "used by both" });
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_permission_flags_scripts_use_decide_alike() {
    let Some(bin) = claude_code() else { return };
    let octo = assert_cmd::cargo::cargo_bin("octo");
    let cases: [(&[&str], &str); 9] = [
        (&["--allowedTools", "Bash(touch:*)"], "an --allowedTools rule"),
        (&["--allowedTools", "Bash"], "--allowedTools naming the whole tool"),
        (
            &["--allowedTools", "Bash(touch:*)", "--disallowedTools", "Bash"],
            "--disallowedTools over --allowedTools",
        ),
        (&["--permission-mode", "dontAsk"], "dontAsk"),
        (&["--permission-mode", "dontAsk", "--allowedTools", "Bash(touch:*)"], "dontAsk with a rule"),
        (&["--permission-mode", "acceptEdits"], "acceptEdits and `touch`"),
        (&["--permission-mode", "bypassPermissions"], "bypassPermissions"),
        (&["--dangerously-skip-permissions"], "--dangerously-skip-permissions"),
        (&["--max-turns", "1", "--allowedTools", "Bash(touch:*)"], "--max-turns 1"),
    ];
    for (flags, what) in cases {
        let mut seen = Vec::new();
        for (agent, bin, tool, extra) in
            [("claude", &bin, "Bash", &[][..]), ("octo", &octo, "terminal", &["--no-save"][..])]
        {
            let home = {
                let llm = MockLlm::start().await;
                home_for(&llm)
            };
            let replies = vec![
                Scripted::sse(
                    Reply::new().tool_use("toolu_f1", tool, json!({"command": "touch made.txt"})).sse(),
                ),
                text("Done."),
            ];
            let args = [&["-p", "--output-format", "json"][..], extra, flags, &["--", "go"]].concat();
            // Claude Code refuses to skip permissions as root unless told it runs in a sandbox.
            let run = lines_with(bin, &home, replies, &args, ("", &[("IS_SANDBOX", "1")])).await;
            let r = result(&run);
            let made = home.workspace().join("made.txt").exists();
            let first = run.requests.first().cloned().unwrap_or_default();
            let offered = first["tools"].as_array().into_iter().flatten().any(|t| t["name"] == tool);
            seen.push((made, run.ok, r["subtype"].clone(), offered));
            eprintln!("{what}: {agent}: made {made}, {} {}", r["subtype"], run.stderr.trim());
        }
        assert_eq!(
            seen[1], seen[0],
            "{what}: octo (ran the command, exit 0, subtype, the tool offered), then Claude Code"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn append_system_prompt_and_mcp_config_reach_the_model_alike() {
    let Some(bin) = claude_code() else { return };
    let octo = assert_cmd::cargo::cargo_bin("octo");
    // octo's own MCP server is a real one both agents can start.
    let server = json!({"mcpServers": {"octo_tools": {"command": octo.display().to_string(), "args": ["mcp", "serve"]}}});
    let config = server.to_string();
    for (agent, bin, extra) in [("claude", &bin, "--verbose"), ("octo", &octo, "--no-save")] {
        let home = {
            let llm = MockLlm::start().await;
            home_for(&llm)
        };
        let args = [
            "-p",
            "--output-format",
            "stream-json",
            extra,
            "--append-system-prompt",
            "APPENDED-MARK-7",
            "--mcp-config",
            &config,
            "--",
            "hi",
        ];
        let run = lines(bin, &home, vec![text("Hello.")], &args, "").await;
        assert!(run.ok, "{agent}: {}", run.stderr);
        let first = run.requests.first().cloned().unwrap_or_default();
        assert!(first["system"].to_string().contains("APPENDED-MARK-7"), "{agent}: the system prompt");
        let init = run.lines.iter().find(|l| l["subtype"] == "init").cloned().unwrap_or_default();
        let server =
            init["mcp_servers"].as_array().into_iter().flatten().find(|s| s["name"] == "octo_tools").cloned();
        assert_eq!(server.unwrap_or_default()["status"], "connected", "{agent}: {init}");
        let tools: Vec<&str> =
            init["tools"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        assert!(tools.contains(&"mcp__octo_tools__read_file"), "{agent}: {tools:?}");
    }
}

/// A call in Claude Code's terms and in octo's.
type Pair = ((&'static str, Value), (&'static str, Value));

#[tokio::test(flavor = "multi_thread")]
async fn the_settings_users_write_take_effect_alike() {
    let Some(bin) = claude_code() else { return };
    let octo = assert_cmd::cargo::cargo_bin("octo");
    let bash = |c: &str| (("Bash", json!({"command": c})), ("terminal", json!({"command": c})));
    // `{HOME}` is the temporary home, filled in per run.
    let cases: Vec<(&str, Value, Pair, &[&str])> = vec![
        (
            "env",
            json!({"env": {"DIFF_VAR": "from-settings"}, "permissions": {"allow": ["Bash(printenv:*)"]}}),
            bash("printenv DIFF_VAR"),
            &[],
        ),
        (
            "an ask rule over an allow rule",
            json!({"permissions": {"allow": ["Bash(touch:*)"], "ask": ["Bash(touch:*)"]}}),
            bash("touch made.txt"),
            &[],
        ),
        (
            "disableBypassPermissionsMode",
            json!({"permissions": {"disableBypassPermissionsMode": "disable"}}),
            bash("touch made.txt"),
            &["--permission-mode", "bypassPermissions"],
        ),
        (
            "a read outside the workspace",
            json!({}),
            (
                ("Read", json!({"file_path": "{HOME}/extra/note.txt"})),
                ("read_file", json!({"path": "{HOME}/extra/note.txt"})),
            ),
            &[],
        ),
        (
            "additionalDirectories",
            json!({"permissions": {"additionalDirectories": ["{HOME}/extra"]}}),
            (
                ("Read", json!({"file_path": "{HOME}/extra/note.txt"})),
                ("read_file", json!({"path": "{HOME}/extra/note.txt"})),
            ),
            &[],
        ),
    ];
    for (what, settings, (claude_call, octo_call), flags) in cases {
        let mut seen = Vec::new();
        for (agent, bin, (tool, input), extra) in
            [("claude", &bin, &claude_call, &[][..]), ("octo", &octo, &octo_call, &["--no-save"][..])]
        {
            let home = {
                let llm = MockLlm::start().await;
                home_for(&llm)
            };
            let h = home.home().display().to_string();
            std::fs::create_dir_all(home.home().join("extra")).unwrap();
            std::fs::write(home.home().join("extra/note.txt"), "NOTE-TEXT-5\n").unwrap();
            std::fs::create_dir_all(home.home().join(".claude")).unwrap();
            let settings = settings.to_string().replace("{HOME}", &h);
            std::fs::write(home.home().join(".claude/settings.json"), settings).unwrap();
            let input: Value = serde_json::from_str(&input.to_string().replace("{HOME}", &h)).unwrap();
            let replies =
                vec![Scripted::sse(Reply::new().tool_use("toolu_s2", *tool, input).sse()), text("Done.")];
            let args = [&["-p", "--output-format", "json"][..], extra, flags, &["--", "go"]].concat();
            let run = lines_with(bin, &home, replies, &args, ("", &[("IS_SANDBOX", "1")])).await;
            let r = result(&run);
            let denied = r["permission_denials"].as_array().is_some_and(|d| !d.is_empty());
            let back = run.requests.last().map(|b| b["messages"].to_string()).unwrap_or_default();
            let saw = ["from-settings", "NOTE-TEXT-5"].iter().any(|m| back.contains(m));
            let made = home.workspace().join("made.txt").exists();
            eprintln!("{what}: {agent}: refused {denied}, ran {}", saw || made);
            seen.push((denied, saw || made));
        }
        assert_eq!(seen[1], seen[0], "{what}: octo (refused, ran), then Claude Code");
    }
}
