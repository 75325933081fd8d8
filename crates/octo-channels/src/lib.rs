//! # octo-channels
//!
//! Chat-app bridges: a user drives an octo session from a chat app — starts a task from a phone,
//! approves a command with a button, reads the result. Each platform implements
//! [`Platform`] (poll, send, edit, buttons, acknowledge); a [`Bridge`] maps each chat to a
//! session in the configured workspace, answers only allow-listed users, takes approvals only
//! from the session's owner, never runs in auto mode, streams by editing one message, and splits
//! long answers at the platform's limit without breaking code blocks.
//!
//! Platforms: Telegram (Bot API long polling). Discord, Slack and Feishu are to come.
//!
//! **Layer:** front end, hosted by `octo serve`. Depends on `octo-app` only.

mod bridge;
mod platform;
pub mod split;
pub mod telegram;

pub use bridge::{Bridge, BridgeConfig};
pub use platform::{Incoming, Platform, PlatformError, Sent};
