//! # octo-repomap
//!
//! A ranked map of a repository, so a model knows where things are before it greps: the
//! files with their key definitions, the ones the rest of the code uses most first, in a few
//! hundred tokens.
//!
//! - [`Lang`]: the languages read (Rust, Python, JavaScript, TypeScript/TSX, Go, C, C++, Java),
//!   each with its tree-sitter grammar and the grammar's own tag query (plus a few reference
//!   patterns where the shipped query has none).
//! - [`tags`]: one file's definitions and references; binary, non-UTF-8, over-1-MB and mostly
//!   unparsable files are skipped, not guessed at.
//! - [`Cache`]: the tags of every file, on disk per workspace under octo's home, keyed by each
//!   file's modification time and size, so a warm build reads only what changed.
//! - [`scan`]: the walk (as git sees the tree; links not followed, nothing outside the
//!   workspace) and the parse on every core, within a time budget; what is not read in time
//!   is read by the next build, and the map says it is partial meanwhile.
//! - [`rank`]: PageRank over the reference graph, personalised towards the focus files and the
//!   conversation's files; names asked about weigh more.
//! - [`RepoMap`], [`RepoMapTool`] (`repo_map`) and [`SeenFilesPlugin`] (the conversation's
//!   files): the map as a tool, never pushed into every prompt.
//!
//! **Layer:** adapter. Depends on `octo-agent`.

mod cache;
mod lang;
mod map;
mod plugin;
pub mod rank;
mod render;
pub mod scan;
pub mod tags;
mod tool;

pub use cache::{Cache, Entry, Outcome};
pub use lang::Lang;
pub use map::{Built, RepoMap, Request, DEFAULT_BUDGET, MAX_BUDGET, MIN_BUDGET};
pub use plugin::SeenFilesPlugin;
pub use render::{render, tokens};
pub use scan::{Filter, Limits, Progress};
pub use tool::RepoMapTool;
