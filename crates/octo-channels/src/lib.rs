//! # octo-channels
//!
//! Chat-app bridges: a user drives an octo session from a chat app — starts a task from a phone,
//! approves a command with a button, reads the result, asks for a file. Each platform
//! implements [`Platform`] (poll, send, edit, buttons, acknowledge, attach); a [`Bridge`] maps
//! each chat to a session in the configured workspace, answers only allow-listed users, takes
//! approvals only from the session's owner, never runs in auto mode, streams by editing one
//! message, and splits long answers at the platform's limit without breaking code blocks.
//!
//! Platforms, each through its official bot interface: Telegram (Bot API long polling), Discord
//! (gateway WebSocket + REST), Slack (Socket Mode + Web API), Feishu and Lark (long connection +
//! Open API). [`open`] builds one from a `[channels.<name>]` table and checks its credentials.
//!
//! **Layer:** front end, hosted by `octo serve`. Depends on `octo-app` only.

mod bridge;
pub mod discord;
pub mod feishu;
mod http;
mod platform;
pub mod slack;
pub mod split;
pub mod telegram;
mod ws;

pub use bridge::{Bridge, BridgeConfig, MAX_PROMPT};
pub use platform::{Incoming, Platform, PlatformError, Sent};

use octo_app::channels::{ChannelKind, ChannelSpec};
use std::sync::Arc;

/// Seconds a Telegram long poll waits for updates.
const TELEGRAM_POLL: u64 = 25;

/// Why a channel could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// A secret is missing.
    #[error(transparent)]
    Secret(#[from] octo_app::channels::MissingSecret),
    /// The channel's kind names no secret (a configuration octo does not know).
    #[error("no secret is configured")]
    NoSecret,
    /// The HTTP client could not be set up.
    #[error(transparent)]
    Client(#[from] octo_app::HttpClientError),
    /// The platform refused the credentials or could not be reached.
    #[error(transparent)]
    Platform(#[from] PlatformError),
}

/// The platform of `spec`, its secrets read from the environment or the key store, its
/// credentials checked; with who the bot is ("@octo_bot on Telegram"). The error names what is
/// missing or refused.
pub async fn open(
    spec: &ChannelSpec,
    launcher: &octo_app::Launcher,
) -> Result<(Arc<dyn Platform>, String), OpenError> {
    let secrets = spec.secrets();
    let secret = |i: usize| match secrets.get(i) {
        Some(s) => s.read(launcher.env(), launcher.credentials()).map_err(OpenError::Secret),
        None => Err(OpenError::NoSecret),
    };
    let base = spec.api_base.as_deref();
    let client = octo_app::http_client()?;
    let platform: Arc<dyn Platform> = match spec.kind {
        ChannelKind::Telegram => {
            let token = secret(0)?;
            // The bot's id (before the `:` of its token) names the file; the secret part never
            // reaches the disk.
            let bot = token
                .split(':')
                .next()
                .unwrap_or("bot")
                .chars()
                .filter(char::is_ascii_alphanumeric)
                .collect::<String>();
            let kept = launcher.home().root().join("channels").join(format!("telegram-{bot}.offset"));
            Arc::new(telegram::Telegram::new(client, &token, base, TELEGRAM_POLL).with_offset_file(kept))
        }
        ChannelKind::Discord => {
            let token = secret(0)?;
            Arc::new(discord::Discord::new(client, &token, base))
        }
        ChannelKind::Slack => {
            let (bot, app) = (secret(0)?, secret(1)?);
            Arc::new(slack::Slack::new(client, &bot, &app, base))
        }
        ChannelKind::Feishu | ChannelKind::Lark => {
            let app_secret = secret(0)?;
            let app_id = spec.app_id.as_deref().unwrap_or_default();
            Arc::new(feishu::Feishu::new(client, app_id, &app_secret, spec.kind == ChannelKind::Lark, base))
        }
    };
    let who = platform.check().await?;
    Ok((platform, who))
}
