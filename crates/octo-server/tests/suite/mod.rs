mod api;
mod browser;
mod common;
mod saved;
