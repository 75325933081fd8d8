//! octo-lsp's integration tests: real language servers (clangd, basedpyright or pyright, when
//! installed; required when `OCTO_TEST_LSP=1`, as `.ci/run` sets) and scripted broken ones.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail loudly

mod suite;
