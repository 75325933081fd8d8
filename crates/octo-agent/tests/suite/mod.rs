mod agent_loop;
mod common;
mod context;
mod seats;
