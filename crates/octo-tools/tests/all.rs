//! octo-tools' integration tests, in one binary: every tool on real temp directories, real
//! processes and loopback servers.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail loudly

mod suite;
