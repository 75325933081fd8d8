//! octo-agent's integration tests, in one binary (one link of the dependency tree).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail loudly

mod suite;
