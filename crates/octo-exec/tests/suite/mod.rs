#[cfg(target_os = "linux")]
mod attack;
#[cfg(target_os = "linux")]
mod common;
#[cfg(target_os = "linux")]
mod guard;
#[cfg(target_os = "linux")]
mod sandbox;
#[cfg(target_os = "linux")]
mod secrets;
#[cfg(target_os = "linux")]
mod terminal;
