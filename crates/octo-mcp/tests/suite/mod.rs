mod cache;
mod client;
mod elicit;
mod oauth;
mod serve;
