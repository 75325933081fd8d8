mod api;
mod browser;
mod common;
