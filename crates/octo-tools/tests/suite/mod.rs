mod files;
mod registry;
#[cfg(target_os = "linux")]
mod sandbox;
mod search;
mod shell;
mod web;
