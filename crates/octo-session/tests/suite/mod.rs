mod checkpoint;
mod crash;
mod store;
