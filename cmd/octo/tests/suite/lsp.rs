//! A real language server behind a one-shot run: the model's edit that breaks the code gets the
//! server's error in the same tool result (clangd, installed by `.ci/run`; skipped where it is
//! missing unless `OCTO_TEST_LSP=1`).

use super::common::{assert_async, home_for, octo};
use octo_testkit::anthropic::Reply;
use octo_testkit::{MockLlm, Scripted};
use serde_json::json;

fn clangd_installed() -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("clangd").is_file()));
    if !found {
        assert!(
            std::env::var("OCTO_TEST_LSP").as_deref() != Ok("1"),
            "OCTO_TEST_LSP=1 but clangd is not on PATH"
        );
        eprintln!("skipped: clangd is not installed");
    }
    found
}

/// A one-shot in auto mode over a workspace with a clean `main.c`, whose model makes one tool
/// call and then answers; `before` prepares the home first. The requests' bodies, and the home.
async fn one_shot(
    tool: &str,
    input: serde_json::Value,
    before: impl FnOnce(&octo_testkit::TempHome),
) -> (Vec<serde_json::Value>, octo_testkit::TempHome) {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(Reply::new().tool_use("t1", tool, input).sse()),
        Scripted::sse(Reply::new().text("I see the error.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    before(&home);
    let config = std::fs::read_to_string(home.home().join("config.toml")).unwrap();
    std::fs::write(home.home().join("config.toml"), format!("lsp_wait_ms = 20000\n{config}")).unwrap();
    home.write("main.c", "int main(void) { return 0; }\n").unwrap();
    let mut c = octo(&home);
    c.args(["--permission-mode", "auto", "--no-save", "change main.c"]);
    assert_async(c).await.success();
    (llm.request_bodies().await, home)
}

const BROKEN: &str = "int main(void) { return y; }\n";

#[tokio::test(flavor = "multi_thread")]
async fn an_edit_that_breaks_the_code_gets_the_error_in_its_result() {
    if !clangd_installed() {
        return;
    }
    let (bodies, _home) = one_shot("write_file", json!({"path": "main.c", "content": BROKEN}), |_| {}).await;
    let result = bodies[1]["messages"].to_string();
    assert!(result.contains("The language server (clangd) reports for this file"), "{result}");
    assert!(result.contains("main.c:1:25 error"), "{result}");
    let tools: Vec<String> = bodies[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(tools.contains(&"lsp".to_owned()), "{tools:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_that_breaks_the_code_gets_the_error_in_its_result() {
    if !clangd_installed() {
        return;
    }
    let command = "printf 'int main(void) { return y; }\\n' > main.c";
    let (bodies, _home) = one_shot("terminal", json!({"command": command}), |_| {}).await;
    let result = bodies[1]["messages"].to_string();
    assert!(result.contains("The command changed files."), "{result}");
    assert!(result.contains("main.c:1:25 error"), "{result}");
}

/// A Claude Code plugin's `.lsp.json`, installed and enabled as Claude Code's own install
/// leaves it under `~/.claude`.
fn install_claude_plugin(home: &octo_testkit::TempHome) {
    let claude = home.home().join(".claude");
    let root = claude.join("plugins/cache/market/c-tools/1.0.0");
    std::fs::create_dir_all(root.join(".claude-plugin")).unwrap();
    std::fs::write(root.join(".claude-plugin/plugin.json"), r#"{"name": "c-tools"}"#).unwrap();
    let lsp = json!({"clangd-plugin": {"command": "clangd", "args": ["--background-index=false"], "extensionToLanguage": {".c": "c", ".h": "c"}}});
    std::fs::write(root.join(".lsp.json"), lsp.to_string()).unwrap();
    let installed =
        json!({"version": 2, "plugins": {"c-tools@market": [{"scope": "user", "installPath": root}]}});
    std::fs::write(claude.join("plugins/installed_plugins.json"), installed.to_string()).unwrap();
    std::fs::write(claude.join("settings.json"), r#"{"enabledPlugins": {"c-tools@market": true}}"#).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_claude_code_plugins_language_server_is_used() {
    if !clangd_installed() {
        return;
    }
    let (bodies, home) =
        one_shot("write_file", json!({"path": "main.c", "content": BROKEN}), install_claude_plugin).await;
    let result = bodies[1]["messages"].to_string();
    assert!(result.contains("The language server (clangd-plugin) reports for this file"), "{result}");
    let doctor = octo(&home).arg("doctor").output().unwrap();
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert!(text.contains("language server clangd-plugin"), "{text}");
}
