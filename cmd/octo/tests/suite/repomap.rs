//! The repository map behind a one-shot run: the model asks for the map centred on a file and
//! gets the definitions that file uses, the cache lands under octo's home, and `repo_map =
//! false` takes the tool away.

use super::common::{assert_async, home_for, octo};
use octo_testkit::anthropic::Reply;
use octo_testkit::{MockLlm, Scripted};
use serde_json::json;

fn tool_names(body: &serde_json::Value) -> Vec<String> {
    body["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_model_gets_the_map_of_what_a_file_uses() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(
            Reply::new().tool_use("t1", "repo_map", json!({"focus": ["src/app.rs"], "budget": 300})).sse(),
        ),
        Scripted::sse(Reply::new().text("The store opens it.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    home.write("src/store.rs", "pub struct Store;\npub fn open_store(path: &str) -> Store { Store }\n")
        .unwrap();
    home.write("src/net.rs", "pub fn connect_socket() {}\n").unwrap();
    home.write("src/app.rs", "pub fn run_app() { crate::store::open_store(\"db\"); }\n").unwrap();
    let mut c = octo(&home);
    c.args(["--no-save", "where is the store opened?"]);
    assert_async(c).await.success();
    let bodies = llm.request_bodies().await;
    assert!(tool_names(&bodies[0]).contains(&"repo_map".to_owned()));
    let result = bodies[1]["messages"].to_string();
    assert!(result.contains("src/store.rs"), "{result}");
    assert!(result.contains("pub fn open_store(path: &str) -> Store { Store }"), "{result}");
    let cached = std::fs::read_dir(home.home().join("repomap")).unwrap().count();
    assert_eq!(cached, 1, "one cache file for the workspace");
}

#[tokio::test(flavor = "multi_thread")]
async fn turned_off_or_without_source_there_is_no_map() {
    for (config, source) in [("repo_map = false\n", true), ("", false)] {
        let llm = MockLlm::start().await;
        llm.script_anthropic([Scripted::sse(Reply::new().text("ok").sse())]).await;
        let home = home_for(&llm);
        let old = std::fs::read_to_string(home.home().join("config.toml")).unwrap();
        std::fs::write(home.home().join("config.toml"), format!("{config}{old}")).unwrap();
        if source {
            home.write("main.py", "def main():\n    pass\n").unwrap();
        }
        let mut c = octo(&home);
        c.args(["--no-save", "hi"]);
        assert_async(c).await.success();
        let bodies = llm.request_bodies().await;
        assert!(!tool_names(&bodies[0]).contains(&"repo_map".to_owned()), "{config:?} {source}");
    }
}
