mod model;
mod process;
mod pull;
