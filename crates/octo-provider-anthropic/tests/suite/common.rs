//! Helpers shared by the adapter's tests.

#![allow(dead_code)]

use octo_agent::*;
use octo_provider::RetryPolicy;
use octo_provider_anthropic::{AnthropicConfig, AnthropicSender};
use std::time::Duration;

pub const KEY: &str = "sk-ant-test-key-123";

pub fn config(base: &str) -> AnthropicConfig {
    let mut cfg = AnthropicConfig::new("claude-sonnet-4-5", Some(KEY.into())).with_base_url(base);
    cfg.settings.http.retry = RetryPolicy {
        max_attempts: 3,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(10),
        ..RetryPolicy::default()
    };
    cfg.settings.http.stall_timeout = Duration::from_secs(3);
    cfg
}

pub fn sender(base: &str) -> AnthropicSender {
    AnthropicSender::new(config(base)).unwrap()
}

/// Streams one request and assembles it, returning the items seen and the result (the kit's,
/// for this sender).
pub async fn stream_once(
    s: &AnthropicSender,
    req: Request<'_>,
) -> (Vec<StreamEvent>, Result<Response, ProviderError>) {
    let (seen, assembled) = octo_testkit::sender::stream_once(s, req).await;
    (seen, assembled.map(|a| a.response))
}
