mod config;
mod extension;
#[cfg(unix)]
mod hooks;
#[cfg(unix)]
mod hostile;
mod launcher;
mod memory;
mod session;
mod skills;
mod subagents;
