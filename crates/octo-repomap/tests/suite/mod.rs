mod fixture;
mod large;
mod map;
