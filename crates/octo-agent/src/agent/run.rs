//! The running verbs of an [`Agent`]: one turn, a stream of turns, compaction on demand. Each
//! hands the turn's steps a channel for its events.

use super::state::{Agent, TurnOutcome};
use super::stream::AgentStream;
use super::{compact, turn};
use crate::channel::TurnChannel;
use crate::error::AgentError;
use crate::event::CompactReason;
use crate::message::Message;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

impl Agent {
    /// Compacts the history now (`/compact [focus]`): reclaims old tool output and summarizes
    /// older turns, as a stream of compaction events.
    pub fn compact_stream(&mut self, focus: Option<String>) -> AgentStream<'_> {
        let (tx, rx) = mpsc::unbounded_channel();
        let channel = Arc::new(TurnChannel::new(tx, self.approvals(), false));
        let driver = async move {
            let mut checkpoint = self.history.len();
            let _changed = compact::compact(
                self,
                &channel,
                &mut checkpoint,
                CompactReason::Manual,
                focus.as_deref(),
                true,
            )
            .await;
        };
        AgentStream::new(driver, rx)
    }

    /// Runs one turn without an event consumer: approvals that a rule would ask for are denied
    /// (the model is told nobody could be asked). Use [`Agent::turn_stream`] to answer them.
    pub async fn turn(
        &mut self,
        input: Message,
        cancel: CancellationToken,
    ) -> Result<TurnOutcome, AgentError> {
        let (tx, rx) = mpsc::unbounded_channel();
        drop(rx); // nobody listens: events are discarded as they are sent
        let channel = Arc::new(TurnChannel::new(tx, self.approvals(), false));
        turn::run_turn(self, input, &cancel, &channel).await
    }

    /// Runs one turn as a stream of events. Approvals are asked through
    /// [`crate::AgentEvent::ApprovalRequired`] and answered through [`Agent::approvals`]. The stream
    /// ends after [`crate::AgentEvent::TurnEnd`].
    pub fn turn_stream(&mut self, input: Message, cancel: CancellationToken) -> AgentStream<'_> {
        self.run_stream(vec![input], cancel)
    }

    /// Like [`Agent::turn_stream`], for a front end that shows events but cannot answer: approvals
    /// are denied and questions go unanswered, each with a message the model can act on.
    pub fn turn_stream_unattended(&mut self, input: Message, cancel: CancellationToken) -> AgentStream<'_> {
        let (tx, rx) = mpsc::unbounded_channel();
        let channel = Arc::new(TurnChannel::new(tx, self.approvals(), false));
        let driver = async move {
            let _ = turn::run_turn(self, input, &cancel, &channel).await;
        };
        AgentStream::new(driver, rx)
    }

    /// Runs several turns in order, stopping at the first that fails.
    pub async fn run(
        &mut self,
        inputs: Vec<Message>,
        cancel: CancellationToken,
    ) -> Result<Vec<TurnOutcome>, AgentError> {
        let mut outcomes = Vec::with_capacity(inputs.len());
        for input in inputs {
            outcomes.push(self.turn(input, cancel.clone()).await?);
        }
        Ok(outcomes)
    }

    /// Runs several turns in order as one stream of events; after a turn that fails, the rest
    /// are not started.
    pub fn run_stream(&mut self, inputs: Vec<Message>, cancel: CancellationToken) -> AgentStream<'_> {
        let (tx, rx) = mpsc::unbounded_channel();
        let channel = Arc::new(TurnChannel::new(tx, self.approvals(), true));
        let driver = async move {
            for input in inputs {
                if turn::run_turn(self, input, &cancel, &channel).await.is_err() {
                    break;
                }
            }
        };
        AgentStream::new(driver, rx)
    }
}
