//! octo-testkit's integration tests, in one binary: the architecture rules and the mock server itself.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail loudly

mod suite;
