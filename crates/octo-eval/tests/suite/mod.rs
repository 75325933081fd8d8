mod common;
mod formats;
mod harbor;
mod local;
mod runs;
