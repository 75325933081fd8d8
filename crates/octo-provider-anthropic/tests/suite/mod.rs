mod common;
mod recovery;
mod request_bodies;
mod wire;
