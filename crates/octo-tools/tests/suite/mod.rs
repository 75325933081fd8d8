mod files;
mod registry;
mod search;
mod shell;
mod web;
#[cfg(target_os = "linux")]
mod sandbox;
