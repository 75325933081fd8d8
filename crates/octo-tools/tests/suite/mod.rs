mod files;
mod registry;
mod search;
mod shell;
mod web;
