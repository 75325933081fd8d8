//! Integration tests of octo-eval: one binary, the suites as modules.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
