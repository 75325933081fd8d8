//! End-to-end streaming throughput of the Responses adapter: a local mock server sends a
//! multi-megabyte SSE response; the adapter decodes, parses and yields it as stream events.
//! Reports MB/s and heap allocations per event (counting global allocator).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark fails loudly

use futures_util::StreamExt;
use octo_agent::{Message, Request, StreamingSender};
use octo_provider_responses::{ResponsesConfig, ResponsesSender};
use octo_testkit::responses::Reply;
use octo_testkit::{MockLlm, Scripted};
use std::time::Instant;

#[global_allocator]
static GLOBAL: octo_testkit::alloc::Counting = octo_testkit::alloc::Counting;

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let text: String = (0..400_000).map(|i| format!("w{} ", i % 1000)).collect();
        let body = Reply::new().text(text).chunk_size(24).sse();
        let mb = body.len() as f64 / 1e6;
        let llm = MockLlm::start().await;
        llm.script_responses((0..6).map(|_| Scripted::sse(body.clone()))).await;
        let sender = ResponsesSender::new(ResponsesConfig::custom(format!("{}/v1", llm.uri()), "gpt-4.1", Some("k".into()))).unwrap();
        let history = vec![Message::user("go")];
        let mut best = f64::MAX;
        let mut per_event = 0.0;
        let mut events = 0u64;
        for _ in 0..6 {
            let a0 = octo_testkit::alloc::allocations();
            let t = Instant::now();
            let mut s = sender.send_stream(Request::new(&history)).await.unwrap();
            events = 0;
            while let Some(item) = s.next().await {
                item.unwrap();
                events += 1;
            }
            best = best.min(t.elapsed().as_secs_f64());
            per_event = (octo_testkit::alloc::allocations() - a0) as f64 / events as f64;
        }
        println!(
            "responses stream: {:.1} MB, {} events in {:.1} ms → {:.0} MB/s, {:.0} k events/s, {:.2} allocations per event (HTTP included)",
            mb,
            events,
            best * 1e3,
            mb / best,
            events as f64 / best / 1e3,
            per_event
        );
    });
}
