//! SSE decoding throughput and allocations per event.
//!
//! Decodes a synthetic multi-megabyte stream shaped like a model's text output (one small JSON
//! delta per event) in 16 KiB network-sized chunks, and counts heap allocations with a counting
//! global allocator.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark fails loudly

use octo_provider::sse::SseDecoder;
use std::time::Instant;

#[global_allocator]
static GLOBAL: octo_testkit::alloc::Counting = octo_testkit::alloc::Counting;

fn synthetic(events: usize) -> Vec<u8> {
    let mut s = String::new();
    for i in 0..events {
        s.push_str("event: content_block_delta\n");
        s.push_str(&format!(
            "data: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"token {i} of the answer \"}}}}\n\n"
        ));
    }
    s.into_bytes()
}

fn main() {
    let n = 60_000;
    let body = synthetic(n);
    let mb = body.len() as f64 / 1e6;
    let mut best = f64::MAX;
    let mut allocs_per_event = 0.0;
    for _ in 0..5 {
        let mut decoder = SseDecoder::new();
        let mut out = Vec::with_capacity(64);
        let mut count = 0usize;
        let a0 = octo_testkit::alloc::allocations();
        let t = Instant::now();
        for chunk in body.chunks(16 * 1024) {
            decoder.feed(chunk, &mut out);
            count += out.len();
            out.clear();
        }
        decoder.finish(&mut out);
        count += out.len();
        let secs = t.elapsed().as_secs_f64();
        assert_eq!(count, n);
        best = best.min(secs);
        allocs_per_event = (octo_testkit::alloc::allocations() - a0) as f64 / n as f64;
    }
    println!(
        "sse decode: {:.1} MB in {:.2} ms → {:.0} MB/s, {:.2} allocations per event",
        mb,
        best * 1e3,
        mb / best,
        allocs_per_event
    );
}
