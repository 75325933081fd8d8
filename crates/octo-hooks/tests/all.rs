//! octo-hooks with real shell scripts on temporary folders.
#![cfg(unix)]
// The helpers that build the scripts panic on failure, like the tests they serve.
#![allow(clippy::unwrap_used)]

mod suite;
