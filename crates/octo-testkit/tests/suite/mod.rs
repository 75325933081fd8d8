mod allowance;
mod architecture;
mod house;
mod mock_server;
