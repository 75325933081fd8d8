//! octo-repomap's integration tests: one binary, a module per area.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
