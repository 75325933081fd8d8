//! Helpers shared by the adapter's tests.

#![allow(dead_code)]

use octo_agent::*;
use octo_provider::RetryPolicy;
use octo_provider_openai::{preset_by_id, OpenAiConfig, OpenAiSender};
use std::time::Duration;

pub const KEY: &str = "sk-openai-test-key-123";

/// A config for `preset` pointed at the mock server (keeping the preset's path prefix).
pub fn config(preset: &str, base: &str) -> OpenAiConfig {
    let p = preset_by_id(preset).unwrap();
    let mut cfg = OpenAiConfig::from_preset(p, None, Some(KEY.into())).with_base_url(format!("{base}/v1"));
    cfg.settings.http.retry = RetryPolicy {
        max_attempts: 3,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(10),
        ..RetryPolicy::default()
    };
    cfg.settings.http.stall_timeout = Duration::from_secs(3);
    cfg
}

pub fn sender(preset: &str, base: &str) -> OpenAiSender {
    OpenAiSender::new(config(preset, base)).unwrap()
}

/// Streams one request and assembles it (the kit's, for this sender).
pub async fn stream_once(
    s: &OpenAiSender,
    req: Request<'_>,
) -> (Vec<StreamEvent>, Result<Assembled, ProviderError>) {
    octo_testkit::sender::stream_once(s, req).await
}
