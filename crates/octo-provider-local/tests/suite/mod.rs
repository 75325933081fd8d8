mod model;
mod pull;
