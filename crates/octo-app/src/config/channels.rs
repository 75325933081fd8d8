//! `[channels.<name>]`: the chat-app bridges `octo serve` starts. Only the user's own config may
//! define them — a repository must not open a bot to its authors.

use super::types::{ConfigError, EnvLookup, Source};
use std::path::PathBuf;

/// One `[channels.<name>]` table as written.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelToml {
    /// The platform: `telegram` (the default), `discord`, `slack`, `feishu` or `lark`.
    pub kind: Option<String>,
    /// The environment variable holding the bot token (Feishu/Lark: the app secret); by default
    /// `TELEGRAM_BOT_TOKEN`, `DISCORD_BOT_TOKEN`, `SLACK_BOT_TOKEN`, `FEISHU_APP_SECRET` or
    /// `LARK_APP_SECRET`; else the key store's entry named after the channel
    /// (`octo auth set <name>`).
    pub token_env: Option<String>,
    /// Slack only: the variable holding the app-level token for Socket Mode (default
    /// `SLACK_APP_TOKEN`; else the key store's entry `<name>-app`).
    pub app_token_env: Option<String>,
    /// Feishu/Lark only: the app's id (`cli_…`, not a secret).
    pub app_id: Option<String>,
    /// The platform's API address (a self-hosted Bot API server, a proxy).
    pub api_base: Option<String>,
    /// The user ids allowed to talk to octo (numbers or strings).
    #[serde(default)]
    pub allow: Vec<UserId>,
    /// Where the channel's sessions work (default: where `octo serve` runs).
    pub workspace: Option<PathBuf>,
    /// Their permission mode: `default` (asks), `accept-edits` or `plan`; never `auto`.
    pub mode: Option<String>,
}

/// A user id as a number or a string.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(untagged)]
pub enum UserId {
    /// A number (Telegram's ids).
    Number(i64),
    /// A string.
    Text(String),
}

impl UserId {
    fn text(&self) -> String {
        match self {
            Self::Number(n) => n.to_string(),
            Self::Text(s) => s.trim().to_owned(),
        }
    }
}

/// A chat-app bridge to start.
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelSpec {
    /// Its name (the table's).
    pub name: String,
    /// The platform.
    pub kind: ChannelKind,
    /// Where its token (or app secret) comes from.
    pub token_env: String,
    /// Slack: where the app-level token comes from.
    pub app_token_env: Option<String>,
    /// Feishu/Lark: the app id.
    pub app_id: Option<String>,
    /// The API address, when not the platform's own.
    pub api_base: Option<String>,
    /// Allowed user ids.
    pub allow: Vec<String>,
    /// The workspace, when configured.
    pub workspace: Option<PathBuf>,
    /// The permission mode.
    pub mode: crate::Mode,
}

/// The platforms a channel can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelKind {
    /// Telegram's Bot API.
    Telegram,
    /// A Discord bot (gateway + REST).
    Discord,
    /// A Slack app in Socket Mode.
    Slack,
    /// A Feishu app (long connection).
    Feishu,
    /// A Lark app (Feishu's international edition).
    Lark,
}

impl ChannelKind {
    /// The variable the token (or app secret) is read from by default.
    pub(crate) fn default_token_env(self) -> &'static str {
        match self {
            Self::Telegram => "TELEGRAM_BOT_TOKEN",
            Self::Discord => "DISCORD_BOT_TOKEN",
            Self::Slack => "SLACK_BOT_TOKEN",
            Self::Feishu => "FEISHU_APP_SECRET",
            Self::Lark => "LARK_APP_SECRET",
        }
    }
}

/// A secret a channel needs and where it is looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretSource {
    /// What it is, for messages ("bot token").
    pub what: &'static str,
    /// The environment variable tried first.
    pub env: String,
    /// The key store's entry tried next (`octo auth set <entry>`).
    pub entry: String,
}

impl ChannelSpec {
    /// The secrets the channel needs: its token (or app secret), and Slack's app-level token.
    pub fn secrets(&self) -> Vec<SecretSource> {
        let what = match self.kind {
            ChannelKind::Slack => "bot token (xoxb-…)",
            ChannelKind::Feishu | ChannelKind::Lark => "app secret",
            ChannelKind::Telegram | ChannelKind::Discord => "bot token",
        };
        let mut out = vec![SecretSource { what, env: self.token_env.clone(), entry: self.name.clone() }];
        if let Some(app) = &self.app_token_env {
            out.push(SecretSource {
                what: "app-level token (xapp-…)",
                env: app.clone(),
                entry: format!("{}-app", self.name),
            });
        }
        out
    }
}

impl SecretSource {
    /// The secret from the environment, else the key store; the error says how to provide it.
    pub fn read(
        &self,
        env: EnvLookup<'_>,
        store: &dyn crate::credentials::CredentialStore,
    ) -> Result<String, MissingSecret> {
        env(&self.env)
            .filter(|v| !v.trim().is_empty())
            .or_else(|| store.get(&self.entry).ok().flatten())
            .map(|v| v.trim().to_owned())
            .ok_or_else(|| MissingSecret {
                what: self.what.to_owned(),
                env: self.env.clone(),
                entry: self.entry.clone(),
            })
    }
}

/// A channel's secret that is neither in the environment nor in the key store.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no {what} (set {env} or run `octo auth set {entry}`)")]
pub struct MissingSecret {
    /// What it is (`Telegram bot token`).
    pub what: String,
    /// The environment variable.
    pub env: String,
    /// The key-store entry.
    pub entry: String,
}

/// The channels of one file; a project's are ignored with a warning.
pub fn parse(
    tables: &std::collections::BTreeMap<String, ChannelToml>,
    source: &Source,
    warnings: &mut Vec<String>,
) -> Result<Vec<ChannelSpec>, ConfigError> {
    let desc = source.to_string();
    if tables.is_empty() {
        return Ok(Vec::new());
    }
    if matches!(source, Source::Project(_)) {
        warnings.push(format!(
            "{desc}: [channels] are ignored in a project config (a chat bot answers to whoever the config allows); define them in your user config"
        ));
        return Ok(Vec::new());
    }
    let bad = |name: &str, message: String| ConfigError::Value {
        source_desc: format!("{desc} [channels.{name}]"),
        message,
    };
    let mut out = Vec::new();
    for (name, t) in tables {
        let kind = match t.kind.as_deref().unwrap_or("telegram") {
            "telegram" => ChannelKind::Telegram,
            "discord" => ChannelKind::Discord,
            "slack" => ChannelKind::Slack,
            "feishu" => ChannelKind::Feishu,
            "lark" => ChannelKind::Lark,
            other => {
                return Err(bad(
                    name,
                    format!("kind `{other}` is not supported (telegram, discord, slack, feishu or lark)"),
                ));
            }
        };
        let lark_like = matches!(kind, ChannelKind::Feishu | ChannelKind::Lark);
        let app_id = t.app_id.as_deref().map(str::trim).filter(|a| !a.is_empty()).map(str::to_owned);
        if lark_like && app_id.is_none() {
            return Err(bad(
                name,
                "`app_id` is required for a Feishu or Lark app (Credentials & Basic Info: App ID)".into(),
            ));
        }
        if !lark_like && app_id.is_some() {
            return Err(bad(name, "`app_id` is only for kind = \"feishu\" or \"lark\"".into()));
        }
        if kind != ChannelKind::Slack && t.app_token_env.is_some() {
            return Err(bad(name, "`app_token_env` is only for kind = \"slack\"".into()));
        }
        let allow: Vec<String> = t.allow.iter().map(UserId::text).filter(|a| !a.is_empty()).collect();
        if allow.is_empty() {
            return Err(bad(
                name,
                "`allow` must list the user ids that may talk to octo; nobody is allowed by default".into(),
            ));
        }
        let mode = match t.mode.as_deref() {
            None => crate::Mode::Default,
            Some(m) => match m.parse::<crate::Mode>() {
                Ok(crate::Mode::Auto) => {
                    return Err(bad(
                        name,
                        "mode `auto` is not allowed for a chat channel: approvals come from the chat".into(),
                    ));
                }
                Ok(mode) => mode,
                Err(e) => return Err(bad(name, e.to_string())),
            },
        };
        out.push(ChannelSpec {
            name: name.clone(),
            kind,
            token_env: t.token_env.clone().unwrap_or_else(|| kind.default_token_env().into()),
            app_token_env: (kind == ChannelKind::Slack)
                .then(|| t.app_token_env.clone().unwrap_or_else(|| "SLACK_APP_TOKEN".into())),
            app_id,
            api_base: t.api_base.clone(),
            allow,
            workspace: t.workspace.clone(),
            mode,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn tables(toml_text: &str) -> BTreeMap<String, ChannelToml> {
        #[derive(serde::Deserialize)]
        struct F {
            channels: BTreeMap<String, ChannelToml>,
        }
        toml::from_str::<F>(toml_text).unwrap().channels
    }

    #[test]
    fn channels_need_an_allow_list_and_never_run_in_auto() {
        let user = Source::User(PathBuf::from("/u/config.toml"));
        let ok = tables("[channels.phone]\nallow = [12345, \"678\"]\nmode = \"accept-edits\"\n");
        let specs = parse(&ok, &user, &mut Vec::new()).unwrap();
        assert_eq!(specs[0].allow, vec!["12345", "678"]);
        assert_eq!(specs[0].token_env, "TELEGRAM_BOT_TOKEN");
        assert!(parse(&tables("[channels.x]\nallow = []\n"), &user, &mut Vec::new()).is_err());
        let auto = parse(&tables("[channels.x]\nallow = [1]\nmode = \"auto\"\n"), &user, &mut Vec::new());
        assert!(auto.unwrap_err().to_string().contains("not allowed"));
        assert!(
            parse(&tables("[channels.x]\nkind = \"icq\"\nallow = [1]\n"), &user, &mut Vec::new()).is_err()
        );
        let slack =
            parse(&tables("[channels.s]\nkind = \"slack\"\nallow = [\"U1\"]\n"), &user, &mut Vec::new());
        let slack = slack.unwrap();
        assert_eq!(slack[0].token_env, "SLACK_BOT_TOKEN");
        assert_eq!(slack[0].app_token_env.as_deref(), Some("SLACK_APP_TOKEN"));
        let lark = tables("[channels.l]\nkind = \"lark\"\nallow = [\"ou_1\"]\n");
        assert!(parse(&lark, &user, &mut Vec::new()).unwrap_err().to_string().contains("app_id"));
        let lark = tables("[channels.l]\nkind = \"lark\"\napp_id = \"cli_1\"\nallow = [\"ou_1\"]\n");
        assert_eq!(parse(&lark, &user, &mut Vec::new()).unwrap()[0].token_env, "LARK_APP_SECRET");
        let stray = tables("[channels.d]\nkind = \"discord\"\napp_id = \"x\"\nallow = [1]\n");
        assert!(parse(&stray, &user, &mut Vec::new()).is_err());
        let mut w = Vec::new();
        let project = Source::Project(PathBuf::from("/r/.octo/config.toml"));
        assert!(parse(&ok, &project, &mut w).unwrap().is_empty());
        assert!(w[0].contains("ignored in a project config"));
    }
}
