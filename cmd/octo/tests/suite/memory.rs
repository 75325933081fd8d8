//! Memory from the binary: a fact saved by the model in one run is listed, shown and deleted by
//! `octo memory`, and known to the next run; `/remember` and `/memory` in the REPL.

use super::common::{assert_async, home_for, leave, octo};

use octo_testkit::anthropic::Reply;
use octo_testkit::{MockLlm, Scripted};
use predicates::prelude::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn a_saved_fact_is_listed_shown_known_next_time_and_deleted() {
    let llm = MockLlm::start().await;
    let save = json!({"name": "deploy-day", "description": "deploys happen on tuesdays", "type": "project", "content": "Deploys are on Tuesdays only."});
    llm.script_anthropic([
        Scripted::sse(Reply::new().tool_use("t1", "memory_save", save).sse()),
        Scripted::sse(Reply::new().text("Noted.").sse()),
        Scripted::sse(Reply::new().text("Tuesdays.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    // Memory is read into every later prompt: headless, even auto mode saves only with a rule.
    let config = std::fs::read_to_string(home.home().join("config.toml")).unwrap();
    std::fs::write(
        home.home().join("config.toml"),
        format!("{config}[permissions]\nallow = [\"memory_save\"]\n"),
    )
    .unwrap();
    let mut c = octo(&home);
    c.args(["--no-save", "--permission-mode", "auto", "we deploy on tuesdays, remember that"]);
    assert_async(c).await.success().stdout(predicate::str::contains("Noted."));
    let mut c = octo(&home);
    c.args(["memory", "list"]);
    assert_async(c).await.success().stdout(predicate::str::contains("workspace\tdeploy-day\tproject\t"));
    let mut c = octo(&home);
    c.args(["memory", "show", "deploy-day"]);
    assert_async(c).await.success().stdout(predicate::str::contains("Deploys are on Tuesdays only."));
    let mut c = octo(&home);
    c.args(["--no-save", "when do we deploy?"]);
    assert_async(c).await.success();
    let system = llm.request_bodies().await[2]["system"][0]["text"].as_str().unwrap().to_owned();
    assert!(system.contains("[deploy-day](deploy-day.md): deploys happen on tuesdays"), "{system}");
    let mut c = octo(&home);
    c.args(["memory", "rm", "deploy-day"]);
    assert_async(c)
        .await
        .success()
        .stderr(predicate::str::contains("deleted the workspace memory `deploy-day`"));
    let mut c = octo(&home);
    c.args(["memory", "show", "deploy-day"]);
    assert_async(c).await.code(2).stderr(predicate::str::contains("no memory `deploy-day`"));
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn remember_and_memory_in_the_repl() {
    let llm = MockLlm::start().await;
    let home = home_for(&llm);
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("octo"));
    cmd.args(["--no-save"])
        .env("HOME", home.home())
        .env("OCTO_HOME", home.home())
        .env("OCTO_NO_KEYRING", "1")
        .env("MOCK_KEY", "sk-mock")
        .env("NO_COLOR", "1")
        .env("TERM", "xterm")
        .current_dir(home.workspace());
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("/remember the staging db is read-only on fridays").unwrap();
        p.exp_string("remembered in this workspace's Scratch Notes").unwrap();
        p.send_line("/remember password = hunter2hunter2hunter2").unwrap();
        p.exp_string("not remembered").unwrap();
        p.send_line("/memory").unwrap();
        p.exp_string("## Scratch Notes").unwrap();
        p.exp_string("read-only on fridays").unwrap();
        p.send_line("/memory staging").unwrap();
        p.exp_string("(workspace index)").unwrap();
        p.send_line("/memory nothing-matches-this").unwrap();
        p.exp_string("no memory matches").unwrap();
        leave(&mut p);
    })
    .await
    .unwrap();
    assert!(llm.request_bodies().await.is_empty(), "no model call");
    // `octo memory list` counts the note just remembered.
    let mut c = octo(&home);
    c.args(["memory", "list"]);
    assert_async(c)
        .await
        .success()
        .stderr(predicate::str::contains("workspace memory: 0 entries, 1 scratch note"));
}
