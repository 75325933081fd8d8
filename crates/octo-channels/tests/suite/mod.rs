mod common;
mod discord;
mod feishu;
mod slack;
mod telegram;
