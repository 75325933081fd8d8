mod checkpoints;
mod commands;
mod common;
mod config;
mod extension;
#[cfg(unix)]
mod hooks;
#[cfg(unix)]
mod hostile;
mod launcher;
mod marketplaces;
mod memory;
mod plugins;
mod responses;
#[cfg(target_os = "linux")]
mod sandbox;
mod session;
mod skills;
mod subagents;
