//! The test MCP server on stdio (see `octo_testkit::mcp`). Flags: `--garbage` (print non-JSON on
//! stdout first), `--silent` (never answer), `--bad-schema`, `--weird-names`, `--catalog` (ten tools the size of a real server's); `--slow-start` (1.5 s before it answers);
//! `--browse URL` (not a server: a browser for the OAuth tests, following redirects).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fixture: fail loudly

use rmcp::ServiceExt;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let has = |f: &str| args.iter().any(|a| a == f);
    if let Some(i) = args.iter().position(|a| a == "--browse") {
        // A stand-in for the user's browser ($BROWSER in the login tests): follow the redirects.
        octo_testkit::oauth::browse(args.get(i + 1).map_or("", String::as_str));
        return;
    }
    eprintln!("octo-test-mcp starting");
    if has("--slow-start") {
        // A server that takes its time to start (the tool-list cache's test).
        std::thread::sleep(std::time::Duration::from_millis(1500));
    }
    if has("--silent") {
        // Reads and never answers.
        let mut sink = String::new();
        loop {
            sink.clear();
            if std::io::stdin().read_line(&mut sink).unwrap_or(0) == 0 {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            }
        }
    }
    if has("--garbage") {
        println!("this is not JSON-RPC");
        println!("<html>nor is this</html>");
    }
    let options = octo_testkit::mcp::Options {
        bad_schema: has("--bad-schema"),
        weird_names: has("--weird-names"),
        catalog: has("--catalog"),
    };
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async move {
        let running =
            octo_testkit::mcp::TestServer::new(options).serve(rmcp::transport::stdio()).await.unwrap();
        let _ = running.waiting().await;
    });
}
