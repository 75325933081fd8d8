mod common;
mod request_bodies;
mod wire;
