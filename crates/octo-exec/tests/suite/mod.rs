#[cfg(target_os = "linux")]
mod sandbox;
