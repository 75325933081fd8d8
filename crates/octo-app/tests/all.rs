//! octo-app's integration tests, in one binary: configuration layering, and whole sessions
//! through the facade and the launcher against a mock endpoint.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail loudly

mod suite;
