//! octo-provider's integration tests, in one binary: the transport and HTTP sender against loopback servers.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail loudly

mod suite;
