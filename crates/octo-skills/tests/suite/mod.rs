mod discover;
mod tool;
