//! # octo-eval
//!
//! Measures whether an agent solves coding tasks: each task runs in a fresh copy of its starting
//! files, the agent (octo in-process, or another agent's command line) works on it in `auto`
//! mode inside octo's OS sandbox with the network off and limits on turns, time and cost, and
//! hidden tests — never in the agent's folder — decide. A failed attempt's test output is given
//! back for the next one (as Aider's polyglot harness does). Results go to a JSON Lines file one
//! task at a time, so a run can be resumed; summaries (pass@1 … pass@N, per language, tokens,
//! cost), comparisons with a sign test and SVG charts are made from those files.
//!
//! Task formats: octo's own (`task.toml`, `repo/`, `hidden/`, `solution/`; see [`task`]) and
//! Aider's polyglot benchmark as it is checked out (see [`polyglot`]).
//!
//! **Layer:** front end (its own binary, `octo-eval`); reaches models only through `octo-app`,
//! runs commands only through `octo-exec`.
//!
//! Rooms: [`suite`] finds [`task`]s ([`polyglot`] reads Aider's layout) → [`workdir`] makes the
//! folders → [`agent`] works, [`verify`] checks → [`runner`] drives attempts and parallel tasks,
//! writing [`results`] → [`report`], [`compare`] and [`chart`] read them.

pub mod agent;
pub mod chart;
pub mod compare;
pub mod polyglot;
pub mod report;
pub mod results;
pub mod runner;
pub mod suite;
pub mod task;
pub mod verify;
pub mod workdir;
