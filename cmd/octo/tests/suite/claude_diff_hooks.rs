//! More of the differential suite (`claude_diff` has the harness): what a SessionStart hook
//! exports through `CLAUDE_ENV_FILE` reaches the commands of both agents alike, and
//! `--include-partial-messages` streams a reply as the same sequence of events.

use super::claude_diff::{bash, claude_code, run, stream_lines};
use super::common::home_for;
use octo_testkit::MockLlm;

#[tokio::test(flavor = "multi_thread")]
async fn a_session_start_hooks_exports_reach_the_commands() {
    let Some(bin) = claude_code() else { return };
    let octo = assert_cmd::cargo::cargo_bin("octo");
    let home = {
        let llm = MockLlm::start().await;
        home_for(&llm)
    };
    let hook = "printf 'export DIFF_GREETING=hello-from-hook\\n' >> \"$CLAUDE_ENV_FILE\"";
    let settings = serde_json::json!({
        "permissions": {"allow": ["Bash(printenv:*)"]},
        "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": hook}]}]}
    });
    std::fs::create_dir_all(home.home().join(".claude")).unwrap();
    std::fs::write(home.home().join(".claude/settings.json"), settings.to_string()).unwrap();
    let call = bash("printenv DIFF_GREETING");
    let args = ["-p", "--output-format", "json", "go"];
    let c = run("claude", &bin, &home, Some(&call), &args).await;
    let o = run("octo", &octo, &home, Some(&call), &[&["--no-save"][..], &args[..]].concat()).await;
    for (agent, r) in [("claude", &c), ("octo", &o)] {
        // The tool result the model got back, in the last request.
        let last = r.requests.last().cloned().unwrap_or_default();
        let messages = last["messages"].as_array().cloned().unwrap_or_default();
        let result = messages.last().map(|m| m["content"].to_string()).unwrap_or_default();
        assert!(result.contains("hello-from-hook"), "{agent}: the command's output: {result}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn partial_messages_stream_a_reply_as_the_same_events() {
    let Some(bin) = claude_code() else { return };
    let octo = assert_cmd::cargo::cargo_bin("octo");
    let home = {
        let llm = MockLlm::start().await;
        home_for(&llm)
    };
    let kinds = |lines: &[serde_json::Value]| {
        let mut out: Vec<String> = Vec::new();
        for l in lines.iter().filter(|l| l["type"] == "stream_event") {
            assert!(l.get("uuid").is_some() && l.get("session_id").is_some(), "{l}");
            let kind = l["event"]["type"].as_str().unwrap_or("?").to_owned();
            if out.last() != Some(&kind) {
                out.push(kind);
            }
        }
        out
    };
    let more = ["--include-partial-messages"];
    let c = kinds(&stream_lines("claude", &bin, &home, &more).await);
    let o = kinds(&stream_lines("octo", &octo, &home, &more).await);
    assert_eq!(o, c, "octo's events, then Claude Code's");
}
