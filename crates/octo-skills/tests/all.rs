//! octo-skills' integration tests, on real temporary folders.
// The helpers that build the folders panic on failure, like the tests they serve.
#![allow(clippy::unwrap_used)]

mod suite;
