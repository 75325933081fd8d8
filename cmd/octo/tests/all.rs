//! The `octo` binary's tests, in one binary: the binary as a process against a mock model
//! server, and the REPL in a pseudo-terminal.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail loudly

mod suite;
