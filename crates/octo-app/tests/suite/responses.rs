//! Endpoints that speak the Responses API, configured as users write them: a server of one's
//! own (`protocol = "responses"`), Azure's preset with its `api-key` header; a whole session's
//! tool loop with reasoning carried to the next request, saved and resumed.

use octo_app::config::{Config, Overrides, Protocol};
use octo_app::credentials::MemoryStore;
use octo_app::{Mode, Session, SessionOptions};
use octo_testkit::responses::Reply;
use octo_testkit::{MockLlm, Scripted};
use serde_json::json;

fn env(k: &str) -> Option<String> {
    match k {
        "MOCK_KEY" | "AZURE_OPENAI_API_KEY" => Some("sk-mock".to_owned()),
        _ => None,
    }
}

async fn config(replies: Vec<Scripted>) -> (tempfile::TempDir, Config, MockLlm) {
    let tmp = tempfile::tempdir().unwrap();
    let (home, ws) = (tmp.path().join("home"), tmp.path().join("ws"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    let llm = MockLlm::start().await;
    llm.script_responses(replies).await;
    std::fs::write(
        home.join("config.toml"),
        format!(
            "default = \"vllm:gpt-5-mini\"\n\
             [endpoints.vllm]\nprotocol = \"responses\"\nbase_url = \"{0}/v1\"\n\
             [endpoints.az]\nprotocol = \"responses\"\npreset = \"azure\"\nbase_url = \"{0}/openai/v1\"\n",
            llm.uri()
        ),
    )
    .unwrap();
    let config = Config::load(&home, &ws, &env, &Overrides::default()).unwrap();
    (tmp, config, llm)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_loop_carries_reasoning_and_a_resume_keeps_it() {
    let (tmp, config, llm) = config(vec![
        Scripted::sse(
            Reply::new()
                .reasoning("rs_1", "List first.", "ENC-1")
                .call("c1", "glob", r#"{"pattern":"*"}"#)
                .sse(),
        ),
        Scripted::sse(Reply::new().text("Nothing here.").sse()),
        Scripted::sse(Reply::new().text("Still nothing.").sse()),
    ])
    .await;
    let ws = tmp.path().join("ws");
    let options = || SessionOptions {
        workspace: Some(ws.clone()),
        mode: Some(Mode::Auto),
        save: true,
        ..SessionOptions::default()
    };
    let s = Session::start(config.clone(), options(), &MemoryStore::default(), &env).unwrap();
    assert_eq!(s.run("what is here?").await.unwrap().answer, "Nothing here.");
    let id = s.conversation().id().unwrap();
    drop(s);
    let resumed = Session::start(
        config,
        SessionOptions { resume: Some(id), ..options() },
        &MemoryStore::default(),
        &env,
    )
    .unwrap();
    assert_eq!(resumed.run("and now?").await.unwrap().answer, "Still nothing.");
    let bodies = llm.request_bodies().await;
    assert!(bodies[0]["tools"].as_array().is_some_and(|t| !t.is_empty()));
    assert_eq!(bodies[0]["include"], json!(["reasoning.encrypted_content"]));
    for (i, b) in bodies.iter().enumerate().skip(1) {
        let input = b["input"].to_string();
        assert!(
            input.contains("\"encrypted_content\":\"ENC-1\""),
            "request {i} carries the reasoning: {input}"
        );
    }
    assert_eq!(llm.requests().await[0].header("authorization"), None, "a server of one's own gets no key");
}

#[tokio::test]
async fn azure_sends_its_key_as_api_key() {
    let (_tmp, config, llm) =
        config(vec![Scripted::json(200, &Reply::new().text("hi").response_json())]).await;
    let r = octo_app::factory::resolve(&config, Some("az:gpt-5.1"), &MemoryStore::default(), &env).unwrap();
    assert_eq!(r.protocol, Protocol::Responses);
    let sender = octo_app::factory::build_sender(&r, octo_provider::HttpConfig::default()).unwrap();
    let history = [octo_app::Message::user("hi")];
    let reply = sender.send(octo_agent::Request::new(&history)).await.unwrap();
    assert_eq!(reply.message.text(), "hi");
    let req = &llm.requests().await[0];
    assert_eq!(req.path, "/openai/v1/responses");
    assert_eq!(req.header("api-key"), Some("sk-mock"));
}
