//! The spending limit (`max_cost`, `--max-budget-usd`): before each model request, what the
//! session has spent plus what the request is estimated to cost is held against the limit, and
//! the turn ends (as [`octo_agent::TurnEndReason::BudgetExceeded`]) rather than pass it.
//!
//! The estimate is deliberately on the high side: the whole prompt at the uncached input price
//! (as compaction estimates its tokens) and [`EXPECTED_OUTPUT`] tokens of answer (or the
//! request's cap, when lower) at the output price. A model without a known price stops at once,
//! saying so: octo does not guess a price it would then hold the user to.

use super::state::Core;
use async_trait::async_trait;
use octo_agent::plugin::SendInfo;
use std::sync::Mutex;

/// Output tokens a request is assumed to produce.
pub(crate) const EXPECTED_OUTPUT: u64 = 1_000;

/// Holds a session's requests to its spending limit.
pub(crate) struct BudgetPlugin {
    limit: f64,
    core: Core,
    /// What the session had spent when the running turn began.
    at_turn_start: Mutex<f64>,
}

impl BudgetPlugin {
    pub(crate) fn new(limit: f64, core: Core) -> Self {
        Self { limit, core, at_turn_start: Mutex::new(0.0) }
    }
}

#[async_trait]
impl octo_agent::Plugin for BudgetPlugin {
    fn name(&self) -> &str {
        "spending limit"
    }

    async fn before_send(&self, info: SendInfo) -> Option<String> {
        let (model, price, spent) = {
            let s = self.core.lock();
            (s.model.clone(), s.info.price, super::state::cost_with(s.info.price, &s.usage, &s.priced_apart))
        };
        let Some(price) = price else {
            return Some(format!(
                "stopped before sending: the spending limit (${:.2}) cannot be kept because octo knows no price for {model}. Give its prices as input_price and output_price under [endpoints.<id>.model_info.<model>] in the config, or leave the limit out",
                self.limit
            ));
        };
        let spent = spent.unwrap_or(0.0);
        let mut start = self.at_turn_start.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if info.request == 1 {
            *start = spent;
        }
        // The session's figure catches up with this turn's requests as their events are read;
        // the turn's own count is exact. Whichever is higher is what was spent.
        let spent = spent.max(*start + price.cost(&info.turn_usage));
        let output = info.max_output_tokens.map_or(EXPECTED_OUTPUT, |m| u64::from(m).min(EXPECTED_OUTPUT));
        let next = (info.prompt_tokens as f64 * price.input + output as f64 * price.output) / 1_000_000.0;
        (spent + next > self.limit).then(|| {
            format!(
                "stopped before the next request: ${spent:.4} spent and about ${next:.4} more for this one would pass the spending limit of ${:.2} (--max-budget-usd / max_cost)",
                self.limit
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use octo_agent::Plugin;

    fn core(price: Option<octo_provider::Price>) -> Core {
        let info = octo_provider::ModelInfo { context_window: 200_000, max_output: 8_192, price };
        let sender: std::sync::Arc<dyn octo_agent::Sender> = std::sync::Arc::new(Nothing);
        Core::new("mock:m".into(), info, sender)
    }

    struct Nothing;

    #[async_trait]
    impl octo_agent::Sender for Nothing {
        fn name(&self) -> &str {
            "nothing"
        }
        async fn send(
            &self,
            _: octo_agent::Request<'_>,
        ) -> Result<octo_agent::Response, octo_agent::ProviderError> {
            Err(octo_agent::ProviderError::Cancelled)
        }
    }

    const PRICE: octo_provider::Price =
        octo_provider::Price { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75 };

    fn send(request: u32, prompt_tokens: u64, turn_output: u64) -> SendInfo {
        let mut i = SendInfo::new(request, prompt_tokens);
        i.turn_usage.output_tokens = turn_output;
        i
    }

    #[tokio::test]
    async fn a_request_that_would_pass_the_limit_is_not_sent() {
        let core = core(Some(PRICE));
        // 10,000 prompt tokens ($0.03) and 1,000 out ($0.015): $0.045 for the first request.
        let p = BudgetPlugin::new(0.05, core.clone());
        assert_eq!(p.before_send(send(1, 10_000, 0)).await, None);
        // The first answer used 1,000 output tokens ($0.015): $0.015 + $0.045 > $0.05.
        let why = p.before_send(send(2, 10_000, 1_000)).await.unwrap();
        assert!(why.contains("spending limit of $0.05"), "{why}");
        // What earlier turns spent counts too.
        core.lock().usage.output_tokens = 4_000; // $0.06
        let why = BudgetPlugin::new(0.05, core).before_send(send(1, 10, 0)).await.unwrap();
        assert!(why.contains("$0.0600 spent"), "{why}");
    }

    #[tokio::test]
    async fn an_unknown_price_stops_instead_of_guessing() {
        let why = BudgetPlugin::new(5.0, core(None)).before_send(send(1, 10, 0)).await.unwrap();
        assert!(why.contains("knows no price for mock:m") && why.contains("input_price"), "{why}");
    }
}
