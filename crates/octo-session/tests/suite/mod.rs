mod crash;
mod store;
