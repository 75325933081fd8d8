mod config;
mod extension;
mod launcher;
mod session;
