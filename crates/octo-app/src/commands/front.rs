//! A front end's side of the command table: it declares what it can do, and the table says what
//! it offers, how a line it reads is dispatched, and why a command it cannot offer is refused.
//! No front end keeps a list of the shared commands' names.
//!
//! ```
//! use octo_app::commands::{Capabilities, FrontEnd, Parsed};
//!
//! const EDITOR: FrontEnd = FrontEnd::new("an editor", Capabilities::NONE);
//! assert!(matches!(EDITOR.read("/status"), Parsed::Command(_)));
//! assert!(matches!(EDITOR.read("/dream"), Parsed::Refused(why) if why.contains("asks for a yes")));
//! assert!(EDITOR.unknown("/stauts", []).contains("did you mean /status?"));
//! ```

use super::parse::{parse, Parsed};
use super::spec::{find, Capabilities, CommandSpec, COMMANDS};

/// A front end, as the command table sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrontEnd {
    /// Where it is, in words (`the REPL`, `a chat`), for refusals.
    place: &'static str,
    can: Capabilities,
}

impl FrontEnd {
    /// A front end at `place` (`"a chat"`) that can do `can`.
    pub const fn new(place: &'static str, can: Capabilities) -> Self {
        Self { place, can }
    }

    /// Why it cannot offer `spec` (`None`: it can).
    pub(crate) fn refusal(&self, spec: &CommandSpec) -> Option<String> {
        let why = self.can.lacking(spec.needs)?;
        Some(format!("{} is not available in {}: {why}", spec.name, self.place))
    }

    /// Whether it offers `spec`.
    pub fn offers(&self, spec: &CommandSpec) -> bool {
        self.refusal(spec).is_none()
    }

    /// The shared commands it offers, in help order.
    pub fn offered(&self) -> impl Iterator<Item = &'static CommandSpec> + '_ {
        COMMANDS.iter().filter(|c| self.offers(c))
    }

    /// `/help`'s lines here: `usage — what it does`, one per command offered.
    pub fn help_lines(&self) -> Vec<String> {
        self.offered().map(|c| format!("{} — {}", c.usage, c.about)).collect()
    }

    /// Reads `line` as this front end dispatches it: a shared command it cannot offer is
    /// [`Parsed::Refused`] with the reason.
    pub fn read<'a>(&self, line: &'a str) -> Parsed<'a> {
        match parse(line) {
            Parsed::Command(c) => match find(c.name()).and_then(|spec| self.refusal(spec)) {
                Some(why) => Parsed::Refused(why),
                None => Parsed::Command(c),
            },
            other => other,
        }
    }

    /// What to say of `/word` that is no command here, naming the nearest ones: the shared
    /// commands it offers and `others` (its own, the skills).
    pub fn unknown<'a>(&self, word: &str, others: impl IntoIterator<Item = &'a str>) -> String {
        let names: Vec<&str> = self.offered().map(|c| c.name).chain(others).collect();
        let near = octo_skills::near_matches(word, names.iter().copied());
        let hint = match near.as_slice() {
            [] => String::new(),
            [one] => format!("; did you mean {one}?"),
            many => format!("; did you mean one of {}?", many.join(", ")),
        };
        format!("unknown command {word}{hint} (/help lists the commands)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: Capabilities = Capabilities::TERMINAL
        .and(Capabilities::CONFIRM)
        .and(Capabilities::SWITCH_SESSION)
        .and(Capabilities::START_OVER)
        .and(Capabilities::STOP_BY_COMMAND);

    #[test]
    fn every_command_is_offered_where_its_needs_are_met_and_refused_with_a_reason_elsewhere() {
        let everything = FrontEnd::new("everywhere", ALL);
        let nothing = FrontEnd::new("nowhere", Capabilities::NONE);
        for spec in COMMANDS {
            assert!(everything.offers(spec), "{}", spec.name);
            let line = if spec.takes == super::super::Takes::Count {
                format!("{} 1", spec.name)
            } else {
                spec.name.to_owned()
            };
            match nothing.read(&line) {
                Parsed::Command(_) => assert_eq!(spec.needs, Capabilities::NONE, "{}", spec.name),
                Parsed::Refused(why) => {
                    assert!(
                        why.starts_with(&format!("{} is not available in nowhere: ", spec.name)),
                        "{why}"
                    );
                    assert_ne!(spec.needs, Capabilities::NONE);
                }
                other => panic!("{line}: {other:?}"),
            }
        }
    }

    #[test]
    fn unknown_words_get_the_nearest_names() {
        let f = FrontEnd::new("a chat", Capabilities::START_OVER);
        assert_eq!(
            f.unknown("/compactx", []),
            "unknown command /compactx; did you mean /compact? (/help lists the commands)"
        );
        assert!(f.unknown("/fil", ["/file"]).contains("did you mean /file?"));
        assert!(!f.unknown("/zzzzzzzz", []).contains("did you mean"));
    }
}
