mod tls;
mod transport;
