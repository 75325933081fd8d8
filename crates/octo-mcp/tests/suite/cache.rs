//! A server's tool list kept between sessions: the next session lists a server that is still
//! starting from it, so the first request neither waits nor misses its tools.

use super::client::{call, stdio};
use octo_agent::ToolSource;
use octo_mcp::{McpHub, McpSource};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread")]
async fn a_slow_server_is_listed_from_its_last_list_while_it_starts() {
    let cache = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let ws = std::env::temp_dir();
    let session = || {
        let hub = McpHub::new(vec![stdio("slow", &["--slow-start"])], ws.clone(), &|_| None, &|_| true);
        hub.use_tool_cache(cache.path());
        hub.start();
        let source = McpSource(Arc::clone(&hub));
        (hub, source)
    };

    // No list kept yet: the first request has to wait for the server.
    let (hub, source) = session();
    let t = Instant::now();
    source.ready().await;
    assert!(t.elapsed() >= Duration::from_millis(1000), "waited for the start");
    assert!(source.tools().iter().any(|t| t.definition().name == "mcp__slow__echo"));
    hub.shutdown();
    let kept = std::fs::read_dir(cache.path()).map(Iterator::count).unwrap_or(0);
    assert_eq!(kept, 1, "its list is kept");

    // The next session: listed at once from the kept list, the same tools, and a call waits
    // for the start and works.
    let (hub, source) = session();
    source.ready().await;
    // Ready from the kept list while the server is still starting (it takes a second).
    assert_eq!(hub.status()[0].state, "starting", "did not wait for the start");
    let names: Vec<String> = source.tools().iter().map(|t| t.definition().name).collect();
    assert!(names.contains(&"mcp__slow__echo".to_owned()), "{names:?}");
    assert_eq!(hub.status()[0].state, "starting");
    assert_eq!(
        call(&source, "mcp__slow__echo", serde_json::json!({"text": "late"})).await.text_content(),
        "late"
    );
    let after: Vec<String> = source.tools().iter().map(|t| t.definition().name).collect();
    assert_eq!(names, after, "the real list is the kept one: the tools did not change");
    hub.shutdown();
}
