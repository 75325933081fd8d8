//! Search tools: `glob` (names) and `grep` (contents).

pub mod glob;
pub mod grep;

pub use glob::Glob;
pub use grep::{Grep, GrepRequest, OutputMode};
