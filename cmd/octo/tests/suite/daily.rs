//! The everyday commands users bring from Claude Code and Codex: spending limits, `/context`,
//! `/export`, `octo review`, `octo init`, worktrees.

use super::common::{assert_async, home_for, octo};

use octo_testkit::anthropic::Reply;
use octo_testkit::{MockLlm, Scripted};
use predicates::prelude::*;
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread")]
async fn a_spending_limit_stops_before_the_request_that_would_pass_it() {
    let llm = MockLlm::start().await;
    // The first answer asks for a tool and reports what it used: 5,000 tokens in ($0.015 at
    // claude-sonnet-4-5's $3) and 500 out ($0.0075 at $15).
    llm.script_anthropic([
        Scripted::sse(
            Reply::new().tool_use("t1", "list_dir", json!({"path": "."})).usage(5_000, 500, 0, 0).sse(),
        ),
        Scripted::sse(Reply::new().text("never sent").sse()),
    ])
    .await;
    let home = home_for(&llm);
    let mut c = octo(&home);
    c.args(["--no-save", "--output-format", "json", "--max-budget-usd", "0.03", "look around"]);
    let out = assert_async(c).await.code(1).get_output().stdout.clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["subtype"], "error_max_budget_usd", "{v}");
    assert_eq!(v["is_error"], true);
    assert_eq!(llm.request_bodies().await.len(), 1, "the second request was not sent");
    // A limit of nothing, or less, is refused before anything is sent.
    for bad in ["0", "-1", "lots"] {
        let mut c = octo(&home);
        c.args(["--no-save", &format!("--max-budget-usd={bad}"), "hi"]);
        assert_async(c)
            .await
            .code(2)
            .stderr(predicate::str::contains("--max-budget-usd").and(predicate::str::contains(bad)));
    }
    assert_eq!(llm.request_bodies().await.len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_limit_in_the_config_stops_a_model_without_a_price_at_once() {
    let llm = MockLlm::start().await;
    let home = home_for(&llm);
    let config = std::fs::read_to_string(home.home().join("config.toml")).unwrap();
    let config = config.replace("mock:claude-sonnet-4-5", "mock:a-model-nobody-prices");
    std::fs::write(home.home().join("config.toml"), format!("max_cost = 1.5\n{config}")).unwrap();
    let mut c = octo(&home);
    c.args(["--no-save", "hi"]);
    assert_async(c)
        .await
        .code(1)
        .stderr(predicate::str::contains("knows no price for mock:a-model-nobody-prices"));
    assert!(llm.request_bodies().await.is_empty());
}

/// A repository in `dir` with one commit of `src/lib.rs`.
fn repository(dir: &std::path::Path) {
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .current_dir(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), "pub fn add(a: u8, b: u8) -> u8 {\n    a - b\n}\n").unwrap();
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "first"]);
}

fn review_answer(findings: &str) -> Scripted {
    Scripted::sse(Reply::new().text(format!("Read it.\n```json\n{{\"findings\": {findings}}}\n```")).sse())
}

#[tokio::test(flavor = "multi_thread")]
async fn review_gathers_the_diff_and_fails_a_ci_step_on_a_severe_finding() {
    let llm = MockLlm::start().await;
    let home = home_for(&llm);
    // Not a repository, then nothing changed: said, and no model call.
    let mut c = octo(&home);
    c.args(["--no-save", "review"]);
    assert_async(c).await.code(2).stderr(predicate::str::contains("not in a git repository"));
    repository(&home.workspace());
    let mut c = octo(&home);
    c.args(["--no-save", "review"]);
    assert_async(c).await.success().stderr(predicate::str::contains("nothing to review"));
    assert!(llm.request_bodies().await.is_empty());
    std::fs::write(home.workspace().join("src/lib.rs"), "pub fn add(a: u8, b: u8) -> u8 {\n    a + b\n}\n")
        .unwrap();
    std::fs::write(home.workspace().join("src/new.rs"), "pub fn fresh() {}\n").unwrap();
    let high = r#"[{"file": "src/lib.rs", "line": 2, "severity": "high", "title": "overflow", "explanation": "u8 addition wraps", "suggestion": "use checked_add"}]"#;
    let low =
        r#"[{"file": "src/lib.rs", "line": 1, "severity": "low", "title": "naming", "explanation": "x"}]"#;
    llm.script_anthropic([
        review_answer(high),
        review_answer(low),
        Scripted::sse(Reply::new().text("Looks great to me!").sse()),
    ])
    .await;
    let mut c = octo(&home);
    c.args(["--no-save", "--output-format", "json", "review", "--fail-on", "high"]);
    let out = assert_async(c).await.code(1).get_output().stdout.clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!((v["status"].as_str(), v["verdict"].as_str()), (Some("fail"), Some("request_changes")), "{v}");
    assert_eq!(v["findings"][0]["file"], "src/lib.rs");
    assert_eq!(v["findings"][0]["line"], 2);
    let sent = llm.request_bodies().await[0]["messages"][0]["content"].to_string();
    assert!(
        sent.contains("+    a + b") && sent.contains("src/new.rs"),
        "the diff, untracked files too: {sent}"
    );
    // A low finding passes a high bar; the list is printed.
    let mut c = octo(&home);
    c.args(["--no-save", "review", "--fail-on", "high"]);
    assert_async(c).await.success().stdout(
        predicate::str::contains("review: comment, 1 finding(s)")
            .and(predicate::str::contains("[low] src/lib.rs:1  naming")),
    );
    // An answer without the findings is an error, never a pass.
    let mut c = octo(&home);
    c.args(["--no-save", "--output-format", "json", "review"]);
    let out = assert_async(c).await.code(1).get_output().stdout.clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["status"], "error", "{v}");
    assert_eq!(v["result"], "Looks great to me!");
}

#[tokio::test(flavor = "multi_thread")]
async fn init_proposes_agents_md_and_writes_it_only_when_asked() {
    let llm = MockLlm::start().await;
    let home = home_for(&llm);
    let mut c = octo(&home);
    c.args(["--no-save", "init"]);
    assert_async(c).await.code(2).stderr(predicate::str::contains("is empty"));
    assert!(llm.request_bodies().await.is_empty());
    repository(&home.workspace());
    let file = "# AGENTS.md\n\n- Test: `cargo test`\n```sh\ncargo test -p x\n```\n";
    let answer = || Scripted::sse(Reply::new().text(format!("Surveyed.\n```markdown\n{file}```")).sse());
    llm.script_anthropic([answer(), answer()]).await;
    let mut c = octo(&home);
    c.args(["--no-save", "init"]);
    assert_async(c)
        .await
        .success()
        .stdout(predicate::str::contains("+- Test: `cargo test`"))
        .stderr(predicate::str::contains("not written"));
    assert!(!home.workspace().join("AGENTS.md").exists());
    let sent = llm.request_bodies().await[0]["messages"][0]["content"].to_string();
    assert!(sent.contains("Write this repository's AGENTS.md"), "{sent}");
    let mut c = octo(&home);
    c.args(["--no-save", "init", "--write"]);
    assert_async(c).await.success();
    assert_eq!(std::fs::read_to_string(home.workspace().join("AGENTS.md")).unwrap(), file);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worktree_is_made_reused_kept_apart_and_removed_only_when_clean() {
    let llm = MockLlm::start().await;
    let home = home_for(&llm);
    let ws = std::fs::canonicalize(home.workspace()).unwrap();
    let mut c = octo(&home);
    c.args(["--worktree", "feat", "hi"]);
    assert_async(c).await.code(2).stderr(predicate::str::contains("not in a git repository"));
    repository(&ws);
    let name = ws.file_name().unwrap().to_string_lossy().into_owned();
    let wt = ws.parent().unwrap().join(format!("{name}.worktrees/feat"));
    llm.script_anthropic([
        Scripted::sse(Reply::new().text("One.").sse()),
        Scripted::sse(Reply::new().text("Two.").sse()),
    ])
    .await;
    let mut c = octo(&home);
    c.args(["-w", "feat", "where are you?"]);
    assert_async(c).await.success().stderr(predicate::str::contains(format!(
        "made worktree feat (branch octo/feat) at {}",
        wt.display()
    )));
    let system = llm.request_bodies().await[0]["system"].to_string();
    assert!(system.contains(&wt.display().to_string()), "the session works there: {system}");
    // The same name again is the same worktree, and `-c` there continues its session only.
    let mut c = octo(&home);
    c.args(["--worktree=feat", "-c", "and now?"]);
    assert_async(c).await.success().stderr(predicate::str::contains("reusing worktree feat"));
    assert_eq!(llm.request_bodies().await[1]["messages"].as_array().unwrap().len(), 3);
    // The main tree has no session of its own yet: `-c` there says where that one belongs.
    let mut c = octo(&home);
    c.args(["-c", "and here?"]);
    assert_async(c).await.code(2).stderr(predicate::str::contains(format!("belongs to {}", wt.display())));
    // Listed; removal refuses uncommitted work unless forced; the branch stays.
    let mut c = octo(&home);
    c.args(["worktrees", "list"]);
    assert_async(c).await.success().stdout(predicate::str::contains("feat  octo/feat  clean"));
    std::fs::write(wt.join("notes.txt"), "unsaved work\n").unwrap();
    let mut c = octo(&home);
    c.args(["worktrees", "remove", "feat"]);
    assert_async(c).await.code(1).stderr(predicate::str::contains("uncommitted changes"));
    assert!(wt.join("notes.txt").is_file());
    let mut c = octo(&home);
    c.args(["worktrees", "remove", "feat", "--force"]);
    assert_async(c).await.success().stderr(predicate::str::contains("branch octo/feat is kept"));
    assert!(!wt.exists());
    // A prompt is not a name; nothing is made and nothing sent.
    let mut c = octo(&home);
    c.args(["-w", "fix the bug"]);
    assert_async(c).await.code(2).stderr(predicate::str::contains("is not a worktree name"));
    assert_eq!(llm.request_bodies().await.len(), 2);
}
