//! The agent: history, configuration, and the turn loop's public entry points. Its rooms, leaf
//! first: `state` (the agent and its builder) → the turn's steps (`exec`, `compact`, `turn`) →
//! `run` (the verbs front ends call).

mod compact;
mod cut;
mod exec;
mod run;
mod send;
mod state;
mod stream;
mod turn;

pub use state::{
    Agent, AgentBuilder, AgentConfig, TurnOutcome, DEFAULT_MAX_TOOL_OUTPUT_BYTES, DEFAULT_MAX_TURNS,
};
pub use stream::AgentStream;
