mod client;
mod serve;
