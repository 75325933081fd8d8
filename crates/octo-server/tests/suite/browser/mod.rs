//! The web UI in a real browser: headless Chromium, driven over the DevTools protocol, against
//! `octo serve` and the mock model. The tests write screenshots (desktop and 390 px wide) under
//! `target/test-artifacts/`, and one of the failing page when a wait runs out.

mod chat;
mod sessions;

pub use octo_testkit::browser::{chromium, launch, Page};

/// Logs a tab in with the server's link and waits for the page to be ready.
pub async fn login(page: &mut Page, s: &super::common::Server) {
    page.start().await;
    page.goto(&format!("{}/login?token={}", s.base, s.token)).await;
    page.wait("the composer", "!!document.querySelector('#prompt') && !!document.querySelector('#saved')")
        .await;
}

/// Types `text` into the composer and sends it.
pub async fn send(page: &mut Page, text: &str) {
    let js = format!(
        "document.querySelector('#prompt').value = {}; document.querySelector('#composer').requestSubmit(); true",
        serde_json::to_string(text).unwrap()
    );
    page.eval(&js).await;
}
