mod transport;
