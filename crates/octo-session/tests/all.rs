//! octo-session's integration tests, in one binary: the session store on real files, including a writer killed mid-write.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail loudly

mod suite;
