//! Keeping the conversation inside the context window during a turn: when to compact, how to
//! summarize, and recovery when the provider says the request is too long.

use super::state::Agent;
use crate::channel::TurnChannel;
use crate::event::{AgentEvent, CompactReason};
use std::sync::Arc;

pub(super) fn needs_compaction(agent: &Agent) -> bool {
    let c = &agent.config.context;
    if c.window == 0 || c.threshold < 0.0 {
        return false;
    }
    agent.context_tokens() as f64 > c.window as f64 * c.threshold
}

/// Overflow recovery, one tier per failed attempt: reclaim hard, then summarize, then fold
/// nearly everything.
pub(super) async fn recover_overflow(agent: &mut Agent, ch: &TurnChannel, checkpoint: &mut usize, stage: u8) {
    let focus = agent.plugins.before_compaction(CompactReason::Overflow).await;
    let before = agent.context_tokens();
    ch.emit(AgentEvent::CompactionStart { reason: CompactReason::Overflow, tokens_before: before });
    let (reclaimed, folded, archive) = match stage {
        1 => (crate::context::reclaim(&mut agent.history, 2, 1_024, &agent.tools), 0, None),
        _ => {
            // The provider said no, whatever our estimate says, so the budget is a share of what
            // is there now. Stage 2 summarizes down to the usual keep share; the newest messages
            // (the turn's uncommitted ones) are held out of the fold and stay after the summary.
            // Stage 3 folds about half of whatever is still there.
            let total = crate::context::estimate_tokens(&agent.history);
            let share = if stage == 2 { agent.config.context.keep_ratio.clamp(0.0, 1.0) } else { 0.5 };
            let keep = (total as f64 * share) as u64;
            summarize(agent, ch, checkpoint, keep, focus.as_deref()).await
        }
    };
    agent.occupancy = crate::context::Occupancy::default();
    let after = agent.context_tokens();
    ch.emit(AgentEvent::CompactionEnd { tokens_after: after, reclaimed, messages_folded: folded, archive });
    if reclaimed > 0 || folded > 0 {
        let upto = (*checkpoint).min(agent.history.len());
        ch.emit(AgentEvent::HistoryReplaced { messages: agent.history[..upto].to_vec() });
    }
}

/// Folds everything before a tail of `keep` tokens. Returns (0, folded, archive).
pub(super) async fn summarize(
    agent: &mut Agent,
    ch: &TurnChannel,
    checkpoint: &mut usize,
    keep: u64,
    focus: Option<&str>,
) -> (usize, usize, Option<String>) {
    // Only committed messages are folded: what the turn has not committed yet must stay as it is,
    // or a rollback could take the summary (and everything before it) with it.
    let split = crate::context::split_point(&agent.history, keep).map(|s| s.min(*checkpoint));
    let Some(split) = split.filter(|&s| s > 0) else { return (0, 0, None) };
    let archive = agent.archiver.as_ref().and_then(|a| a.archive(&agent.history[..split]));
    let sender = agent.compaction_sender.clone().unwrap_or_else(|| Arc::clone(&agent.sender));
    match crate::context::fold(sender.as_ref(), &mut agent.history, split, focus, archive.clone()).await {
        Ok(n) => {
            // n messages became one committed summary message.
            *checkpoint = checkpoint.saturating_sub(n) + 1;
            (0, n, archive.map(|p| p.display().to_string()))
        }
        Err(e) => {
            ch.emit(AgentEvent::Notice { message: format!("could not summarize the conversation: {e}") });
            (0, 0, None)
        }
    }
}

/// Automatic (or requested) compaction: reclaim, then summarize if still over the threshold
/// (unless that would fold too little). `force` summarizes whatever the occupancy.
pub(super) async fn compact(
    agent: &mut Agent,
    ch: &TurnChannel,
    checkpoint: &mut usize,
    reason: CompactReason,
    focus: Option<&str>,
    force: bool,
) -> bool {
    let extra = agent.plugins.before_compaction(reason).await;
    let focus = match (focus, extra) {
        (Some(f), Some(e)) => Some(format!("{f}\n{e}")),
        (f, e) => f.map(str::to_owned).or(e),
    };
    let focus = focus.as_deref();
    let c = agent.config.context.clone();
    let before = agent.context_tokens();
    ch.emit(AgentEvent::CompactionStart { reason, tokens_before: before });
    let reclaimed =
        crate::context::reclaim(&mut agent.history, c.keep_recent_results, c.reclaim_min_bytes, &agent.tools);
    agent.occupancy = crate::context::Occupancy::default();
    let limit = if c.window == 0 { u64::MAX } else { (c.window as f64 * c.threshold.max(0.0)) as u64 };
    let mut folded = 0;
    let mut archive = None;
    if force || agent.context_tokens() > limit {
        // Asked for explicitly (a command or the tool): fold everything but the latest turn.
        let keep = if force || c.window == 0 { 0 } else { (c.window as f64 * c.keep_ratio) as u64 };
        let total = crate::context::estimate_tokens(&agent.history).max(1);
        let foldable = crate::context::split_point(&agent.history, keep)
            .map_or(0, |s| crate::context::estimate_tokens(&agent.history[..s]));
        if force || foldable as f64 / total as f64 >= c.anti_thrash {
            let (_, n, a) = summarize(agent, ch, checkpoint, keep, focus).await;
            folded = n;
            archive = a;
        }
    }
    let after = agent.context_tokens();
    ch.emit(AgentEvent::CompactionEnd { tokens_after: after, reclaimed, messages_folded: folded, archive });
    let changed = reclaimed > 0 || folded > 0;
    if changed {
        let upto = (*checkpoint).min(agent.history.len());
        ch.emit(AgentEvent::HistoryReplaced { messages: agent.history[..upto].to_vec() });
    }
    changed
}
