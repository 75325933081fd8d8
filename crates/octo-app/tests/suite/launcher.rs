//! The launcher: one call from a front end to a ready session, and the errors it explains.

use octo_app::credentials::{KeyStore, MemoryStore};
use octo_app::{Home, Launch, LaunchError, Launcher, Resume, SessionOptions};
use octo_testkit::anthropic::Reply;
use octo_testkit::{MockLlm, Scripted};
use std::sync::Arc;

fn launcher(home: &std::path::Path) -> Launcher {
    let env = |k: &str| (k == "MOCK_KEY").then(|| "sk-mock".to_owned());
    Launcher::new(Home::new(home), KeyStore::None, Arc::new(MemoryStore::default()), Arc::new(env))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_call_builds_a_session_that_saves_where_the_home_says() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(Reply::new().text("first").sse()),
        Scripted::sse(Reply::new().text("second").sse()),
    ])
    .await;
    let tmp = tempfile::tempdir().unwrap();
    let (home, ws) = (tmp.path().join("home"), tmp.path().join("ws"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(
        home.join("config.toml"),
        format!(
            "default = \"mock:claude-sonnet-4-5\"\n[endpoints.mock]\nprotocol = \"anthropic\"\nbase_url = \"{}\"\napi_key_env = \"MOCK_KEY\"\n",
            llm.uri()
        ),
    )
    .unwrap();
    let l = launcher(&home);
    let err = l.find_session("last", &ws).unwrap_err();
    assert!(matches!(err, LaunchError::NoSessionYet) && err.is_usage(), "{err}");
    let launch = |resume| Launch {
        workspace: Some(ws.clone()),
        resume,
        options: SessionOptions { save: true, ..SessionOptions::default() },
        ..Launch::default()
    };
    let s = l.start(launch(Resume::New)).unwrap();
    assert_eq!(s.run("hello").await.unwrap().answer, "first");
    let id = s.conversation().id().unwrap();
    drop(s);
    assert!(l.sessions().load(&id).is_ok(), "saved under the launcher's home");
    let s = l.start(launch(Resume::Find("last".into()))).unwrap();
    assert_eq!(s.conversation().id().as_deref(), Some(id.as_str()), "-c continues the last one");
    assert_eq!(s.conversation().history().await.unwrap().len(), 2);
    assert_eq!(s.run("again").await.unwrap().answer, "second");

    let err =
        l.start(Launch { workspace: Some(tmp.path().join("missing")), ..Launch::default() }).unwrap_err();
    assert!(matches!(err, LaunchError::Workspace(_)) && err.is_usage(), "{err}");
    let other = tmp.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let err = l.find_session(&id, &other).unwrap_err();
    assert!(matches!(err, LaunchError::OtherDirectory { .. }), "{err}");
    assert!(err.to_string().contains("cd "), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_launcher_with_a_model_starts_every_session_on_it_unless_the_launch_names_one() {
    let tmp = tempfile::tempdir().unwrap();
    let (home, ws) = (tmp.path().join("home"), tmp.path().join("ws"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    let table = |id: &str| {
        format!("[endpoints.{id}]\nprotocol = \"anthropic\"\nbase_url = \"http://127.0.0.1:9\"\napi_key_env = \"MOCK_KEY\"\n")
    };
    std::fs::write(
        home.join("config.toml"),
        format!("default = \"mock:claude-sonnet-4-5\"\n{}{}", table("mock"), table("other")),
    )
    .unwrap();
    let l = launcher(&home).with_model(Some("other".into()), Some("m2".into()));
    let launch = |overrides| Launch { workspace: Some(ws.clone()), overrides, ..Launch::default() };
    let s = l.start(launch(octo_app::config::Overrides::default())).unwrap();
    assert_eq!(s.status().model, "other:m2");
    let own = octo_app::config::Overrides { endpoint: Some("mock".into()), ..Default::default() };
    assert_eq!(l.start(launch(own)).unwrap().status().model, "mock:claude-sonnet-4-5");
    // `octo --sandbox read-only --permission-mode plan serve`: every session takes them.
    let flags = octo_app::config::Overrides {
        sandbox: Some("read-only".into()),
        permission_mode: Some("plan".into()),
        ..Default::default()
    };
    let l = launcher(&home).with_defaults(flags, false);
    let st = l.start(launch(octo_app::config::Overrides::default())).unwrap().status();
    assert!(st.sandbox.starts_with("read-only") || st.sandbox.starts_with("none"), "{}", st.sandbox);
    assert_eq!(st.mode.to_string(), "plan", "{st:?}");
}
