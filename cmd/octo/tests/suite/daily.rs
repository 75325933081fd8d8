//! The everyday commands users bring from Claude Code and Codex: spending limits, `/context`,
//! `/export`, `octo review`, `octo init`.

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
