//! A stream of agent events driven by the future that produces them, without spawning a task.

use crate::event::AgentEvent;
use futures_core::Stream;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::sync::mpsc;

/// The events of one or more turns, as they happen.
///
/// Polling the stream drives the turn. Dropping it abandons the turn at its current await point:
/// the history is cut back to the last committed round (the round in flight is lost, unlike a
/// cancellation through the token, which completes it with "interrupted" results), the turn's
/// tool cancellation token fires, and pending approvals are withdrawn.
pub struct AgentStream<'a> {
    driver: Option<Pin<Box<dyn Future<Output = ()> + Send + 'a>>>,
    events: mpsc::UnboundedReceiver<AgentEvent>,
}

impl<'a> AgentStream<'a> {
    pub(crate) fn new(
        driver: impl Future<Output = ()> + Send + 'a,
        events: mpsc::UnboundedReceiver<AgentEvent>,
    ) -> Self {
        Self { driver: Some(Box::pin(driver)), events }
    }
}

impl std::fmt::Debug for AgentStream<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentStream").field("running", &self.driver.is_some()).finish()
    }
}

impl Stream for AgentStream<'_> {
    type Item = AgentEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<AgentEvent>> {
        loop {
            if let Poll::Ready(Some(event)) = self.events.poll_recv(cx) {
                return Poll::Ready(Some(event));
            }
            match self.driver.as_mut() {
                Some(driver) => match driver.as_mut().poll(cx) {
                    Poll::Ready(()) => self.driver = None,
                    Poll::Pending => return Poll::Pending,
                },
                // The driver is done: hand out what it left, then end. A tool that leaked a clone of
                // its context must not keep the stream open, so this does not wait for the channel
                // to close.
                None => return Poll::Ready(self.events.try_recv().ok()),
            }
        }
    }
}
