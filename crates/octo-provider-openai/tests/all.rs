//! octo-provider-openai's integration tests, in one binary: the OpenAI-compatible adapter against scripted wiremock servers: wire behaviour and request bodies.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail loudly

mod suite;
