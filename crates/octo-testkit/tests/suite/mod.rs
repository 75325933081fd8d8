mod architecture;
mod mock_server;
