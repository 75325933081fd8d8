mod config;
mod extension;
#[cfg(unix)]
mod hostile;
mod launcher;
mod session;
