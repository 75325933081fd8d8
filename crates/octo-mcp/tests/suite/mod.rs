mod client;
mod oauth;
mod serve;
