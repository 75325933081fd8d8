//! octo-skills' integration tests, on real temporary folders.

mod suite;
