//! octo-provider-responses' integration tests, in one binary: the Responses adapter against scripted wiremock servers: event streams written from the documented wire format, reasoning carried between requests, bad input, request bodies.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail loudly

mod suite;
