//! An HTTP server behind OAuth 2.1 (octo-testkit's authorization server and protected MCP
//! server): reported as needing a login, one login through the "browser", the stored login used
//! by the next session, an expired token refreshed mid-session, a refused refresh explained, a
//! redirect with the wrong `state` refused, a refused authorization; and the older HTTP+SSE
//! transport.

#![allow(clippy::unwrap_used)] // test helpers: fail loudly

use super::client::call;
use octo_mcp::oauth::{oauth_entry, token_entry, OAuthSettings, SecretStore};
use octo_mcp::{Login, LoginError, McpHub, McpSource, Origin, ServerConfig, ServerSpec};
use serde_json::json;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Default)]
struct Secrets(Mutex<HashMap<String, String>>);

impl SecretStore for Secrets {
    fn get(&self, entry: &str) -> std::io::Result<Option<String>> {
        Ok(self.0.lock().unwrap().get(entry).cloned())
    }
    fn set(&self, entry: &str, value: &str) -> std::io::Result<()> {
        self.0.lock().unwrap().insert(entry.to_owned(), value.to_owned());
        Ok(())
    }
    fn remove(&self, entry: &str) -> std::io::Result<bool> {
        Ok(self.0.lock().unwrap().remove(entry).is_some())
    }
}

fn remote(url: &str) -> ServerConfig {
    ServerConfig {
        name: "remote".into(),
        spec: ServerSpec {
            url: Some(url.into()),
            startup_timeout: Some(10.0),
            call_timeout: Some(10.0),
            ..ServerSpec::default()
        },
        origin: Origin::User,
    }
}

async fn session(config: ServerConfig, store: &Arc<dyn SecretStore>) -> (Arc<McpHub>, McpSource) {
    let hub = McpHub::new(vec![config], std::env::temp_dir(), &|_| None, &|_| true);
    hub.use_secrets(Arc::clone(store));
    hub.start();
    hub.wait_ready(Duration::from_secs(20)).await;
    let source = McpSource(Arc::clone(&hub));
    (hub, source)
}

/// A login whose "browser" is `browse`, run on a thread.
async fn log_in(
    url: &str,
    store: &Arc<dyn SecretStore>,
    browse: impl Fn(String) + Send + Sync + Clone + 'static,
) -> (Result<(), LoginError>, Vec<String>) {
    let said = Mutex::new(Vec::new());
    let open = move |a: &str| {
        let (a, b) = (a.to_owned(), browse.clone());
        std::thread::spawn(move || b(a));
        true
    };
    let r = octo_mcp::login(Login {
        server: "remote",
        url,
        settings: &OAuthSettings::default(),
        store: Arc::clone(store),
        open: &open,
        say: &|m: &str| said.lock().unwrap().push(m.to_owned()),
        attended: false,
        wait: Duration::from_secs(20),
    })
    .await;
    (r, said.into_inner().unwrap())
}

fn param(address: &str, key: &str) -> String {
    let u = url::Url::parse(address).unwrap();
    u.query_pairs().find(|(k, _)| k == key).map(|(_, v)| v.into_owned()).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_behind_oauth_works_after_one_login_and_its_tokens_are_refreshed() {
    let srv = octo_testkit::oauth::serve_http_oauth(octo_testkit::mcp::Options::default()).await;
    let store: Arc<dyn SecretStore> = Arc::new(Secrets::default());

    // Before a login: the 401 is explained with the command to run (no type names).
    let (hub, _) = session(remote(&srv.url), &store).await;
    let notices = hub.take_notices().join("\n");
    assert!(notices.contains("octo mcp login remote"), "{notices}");
    assert!(!notices.contains("rmcp::") && !notices.contains("WorkerTransport"), "{notices}");
    hub.shutdown();

    // One login: discovery from the challenge, dynamic registration, PKCE, the redirect.
    let (r, said) = log_in(&srv.url, &store, |a| octo_testkit::oauth::browse(&a)).await;
    r.unwrap();
    assert!(said.iter().any(|s| s.contains("/authorize?")), "the address is shown: {said:?}");
    assert_eq!(srv.state.registrations.load(Ordering::SeqCst), 1);
    assert_eq!(srv.state.code_grants.load(Ordering::SeqCst), 1);
    let kept = store.get(&oauth_entry("remote", &srv.url)).unwrap().expect("tokens in the key store");
    assert!(kept.contains("access_token"), "{kept}");

    // The next session uses the stored login; the token expires mid-session and is refreshed.
    srv.state.token_ttl.store(1, Ordering::SeqCst);
    let (r, _) = log_in(&srv.url, &store, |a| octo_testkit::oauth::browse(&a)).await;
    r.unwrap();
    let (hub, source) = session(remote(&srv.url), &store).await;
    assert!(hub.take_notices().is_empty());
    assert_eq!(call(&source, "mcp__remote__echo", json!({"text": "hi"})).await.text_content(), "hi");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let again = call(&source, "mcp__remote__echo", json!({"text": "again"})).await;
    assert_eq!(again.text_content(), "again", "{again:?}");
    assert!(srv.state.refreshes.load(Ordering::SeqCst) >= 1, "the expired token was refreshed");

    // A refresh the server refuses: the call fails saying to log in again.
    srv.state.refuse_refresh.store(true, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let refused = call(&source, "mcp__remote__echo", json!({"text": "third"})).await;
    assert!(refused.is_error, "{refused:?}");
    assert!(refused.text_content().contains("octo mcp login remote"), "{}", refused.text_content());
    hub.shutdown();

    // Logging out forgets the tokens.
    assert!(octo_mcp::login::logout(store.as_ref(), "remote", &srv.url).unwrap());
    assert!(store.get(&oauth_entry("remote", &srv.url)).unwrap().is_none());
    srv.stop.cancel();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_redirect_with_the_wrong_state_is_refused_and_a_refusal_ends_the_login() {
    let srv = octo_testkit::oauth::serve_http_oauth(octo_testkit::mcp::Options::default()).await;
    let store: Arc<dyn SecretStore> = Arc::new(Secrets::default());
    // A forged answer first (another state), then the real approval.
    let (r, said) = log_in(&srv.url, &store, |a| {
        let forged = format!("{}?code=stolen&state=not-yours", param(&a, "redirect_uri"));
        octo_testkit::oauth::browse(&forged);
        octo_testkit::oauth::browse(&a);
    })
    .await;
    r.unwrap();
    assert!(said.iter().any(|s| s.contains("wrong state")), "{said:?}");
    assert_eq!(srv.state.code_grants.load(Ordering::SeqCst), 1, "the forged code was never exchanged");

    // The user says no.
    let (r, _) = log_in(&srv.url, &store, |a| {
        let no = format!("{}?error=access_denied&state={}", param(&a, "redirect_uri"), param(&a, "state"));
        octo_testkit::oauth::browse(&no);
    })
    .await;
    assert!(matches!(&r, Err(LoginError::Refused(why)) if why.contains("access_denied")), "{r:?}");
    srv.stop.cancel();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bearer_token_from_the_key_store_is_sent() {
    let (url, stop) = octo_testkit::mcp::serve_http(octo_testkit::mcp::Options::default()).await;
    let store: Arc<dyn SecretStore> = Arc::new(Secrets::default());
    store.set(&token_entry("remote", &url), "s3cret").unwrap();
    let (hub, source) = session(remote(&url), &store).await;
    let seen = call(&source, "mcp__remote__getenv", json!({"name": "http:authorization"})).await;
    assert_eq!(seen.text_content(), "Bearer s3cret");
    hub.shutdown();
    // The same name pointed elsewhere (a project's server taking the user's server's name)
    // gets no token.
    let (other, stop_other) = octo_testkit::mcp::serve_http(octo_testkit::mcp::Options::default()).await;
    let (hub, source) = session(remote(&other), &store).await;
    let seen = call(&source, "mcp__remote__getenv", json!({"name": "http:authorization"})).await;
    assert_eq!(seen.text_content(), "(none)");
    hub.shutdown();
    stop_other.cancel();
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_type_sse_server_is_reached_over_the_older_http_sse_transport() {
    let (url, stop) =
        octo_testkit::legacy_sse::serve_http_legacy_sse(octo_testkit::mcp::Options::default()).await;
    let mut config = remote(&url);
    config.spec.kind = Some("sse".into());
    let store: Arc<dyn SecretStore> = Arc::new(Secrets::default());
    let (hub, source) = session(config, &store).await;
    assert!(hub.take_notices().is_empty());
    assert_eq!(hub.status()[0].transport, "sse");
    assert_eq!(
        call(&source, "mcp__remote__echo", json!({"text": "old but fine"})).await.text_content(),
        "old but fine"
    );
    hub.shutdown();
    stop.cancel();

    // Streamable HTTP at the same kind of URL is not mistaken for it: the missing `endpoint`
    // event is named.
    let (http_url, stop) = octo_testkit::mcp::serve_http(octo_testkit::mcp::Options::default()).await;
    let mut wrong = remote(&http_url);
    wrong.spec.kind = Some("sse".into());
    let (hub, _) = session(wrong, &store).await;
    let notices = hub.take_notices().join("\n");
    assert!(notices.contains("`endpoint`") || notices.contains("HTTP"), "{notices}");
    hub.shutdown();
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_refused_for_its_scope_makes_the_next_login_ask_for_that_scope() {
    let srv = octo_testkit::oauth::serve_http_oauth(octo_testkit::mcp::Options::default()).await;
    *srv.state.call_scope.lock().unwrap() = Some("mcp:write".into());
    let store: Arc<dyn SecretStore> = Arc::new(Secrets::default());
    let (r, _) = log_in(&srv.url, &store, |a| octo_testkit::oauth::browse(&a)).await;
    r.unwrap();

    // Listing works with the first token; a call needs more (403 insufficient_scope).
    let (hub, source) = session(remote(&srv.url), &store).await;
    let refused = call(&source, "mcp__remote__echo", json!({"text": "hi"})).await;
    assert!(refused.is_error, "{refused:?}");
    let said = refused.text_content();
    assert!(said.contains("scope") && said.contains("octo mcp login remote"), "{said}");
    assert!(store.get(&octo_mcp::oauth::challenge_entry("remote", &srv.url)).unwrap().is_some());
    hub.shutdown();

    // Logging in again asks for the scope the refusal named; then the call goes through.
    let (r, _) = log_in(&srv.url, &store, |a| octo_testkit::oauth::browse(&a)).await;
    r.unwrap();
    let asked = srv.state.asked_scopes.lock().unwrap().clone();
    assert!(asked.last().is_some_and(|s| s.contains("mcp:write")), "{asked:?}");
    assert!(store.get(&octo_mcp::oauth::challenge_entry("remote", &srv.url)).unwrap().is_none(), "used once");
    let (hub, source) = session(remote(&srv.url), &store).await;
    assert_eq!(call(&source, "mcp__remote__echo", json!({"text": "now"})).await.text_content(), "now");
    hub.shutdown();
    srv.stop.cancel();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_client_credentials_grant_needs_no_user_and_a_wrong_secret_is_explained() {
    let srv = octo_testkit::oauth::serve_http_oauth(octo_testkit::mcp::Options::default()).await;
    let m2m = |secret: &'static str| {
        let mut c = remote(&srv.url);
        c.spec.oauth = Some(octo_mcp::OAuthSpec {
            client_id: Some("m2m".into()),
            client_secret_env: Some("M2M_SECRET".into()),
            grant: Some("client_credentials".into()),
            ..octo_mcp::OAuthSpec::default()
        });
        (c, move |k: &str| (k == "M2M_SECRET").then(|| secret.to_owned()))
    };
    let (config, env) = m2m("m2m-secret");
    let hub = McpHub::new(vec![config], std::env::temp_dir(), &env, &|_| true);
    hub.start();
    hub.wait_ready(Duration::from_secs(20)).await;
    let source = McpSource(Arc::clone(&hub));
    assert_eq!(call(&source, "mcp__remote__echo", json!({"text": "m2m"})).await.text_content(), "m2m");
    hub.shutdown();

    let (config, env) = m2m("wrong");
    let hub = McpHub::new(vec![config], std::env::temp_dir(), &env, &|_| true);
    hub.start();
    hub.wait_ready(Duration::from_secs(20)).await;
    let notices = hub.take_notices().join("\n");
    assert!(notices.contains("client-credentials grant failed"), "{notices}");
    hub.shutdown();
    srv.stop.cancel();
}
