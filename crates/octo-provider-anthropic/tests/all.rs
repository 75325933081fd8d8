//! octo-provider-anthropic's integration tests, in one binary: the Anthropic adapter against scripted wiremock servers: wire behaviour and request bodies.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail loudly

mod suite;
