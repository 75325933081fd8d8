mod config;
mod session;
