//! `make bench`: what diagnostics add to an edit. With a warm clangd (and basedpyright or
//! pyright when installed), a file is written and its diagnostics awaited, alternating a clean
//! and a broken version, against the write alone; medians and the 90th percentile.
// A benchmark panics on a broken setup, like a test.
#![allow(clippy::unwrap_used)]

use octo_lsp::{Lsp, Settings};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

const RUNS: usize = 40;

/// How long each edit waits for its diagnostics here.
const WAIT: Duration = Duration::from_secs(3);

fn percentile(times: &mut [Duration], p: usize) -> f64 {
    times.sort();
    times[(times.len() * p / 100).min(times.len() - 1)].as_secs_f64() * 1e3
}

async fn measure(lsp: &Lsp, file: &Path, clean: &str, broken: &str) -> (Vec<Duration>, Vec<Duration>, usize) {
    let (mut plain, mut with, mut wrong) = (Vec::new(), Vec::new(), 0);
    // Warm up: the server starts, indexes the file and answers once.
    std::fs::write(file, broken).unwrap();
    assert!(lsp.after_edit(file).await.is_some(), "the server reports the broken version");
    for i in 0..RUNS {
        let text = if i % 2 == 0 { clean } else { broken };
        let t = Instant::now();
        std::fs::write(file, text).unwrap();
        plain.push(t.elapsed());
        let t = Instant::now();
        std::fs::write(file, text).unwrap();
        let said = lsp.after_edit(file).await;
        with.push(t.elapsed());
        if said.is_some() != (i % 2 == 1) {
            wrong += 1;
        }
    }
    (plain, with, wrong)
}

async fn bench(name: &str, ext: &str, clean: &str, broken: &str) {
    let found = octo_lsp::resolve(&BTreeMap::new(), std::env::var_os("PATH").as_deref());
    let Some(server) = found.into_iter().find(|r| r.config.extensions.iter().any(|e| e == ext)) else {
        println!("lsp: no server for .{ext} installed; skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let file = root.join(format!("main.{ext}"));
    std::fs::write(&file, clean).unwrap();
    let settings = Settings { wait: WAIT, ..Settings::default() };
    let policy = octo_exec::sandbox::Policy::new(octo_exec::sandbox::Mode::WorkspaceWrite, &root);
    let sandbox = Arc::new(octo_exec::sandbox::Sandbox::new(policy));
    let lsp = Lsp::new(&root, vec![server], Some(sandbox), octo_exec::env::ShellEnv::default(), settings);
    let (mut plain, mut with, wrong) = measure(&lsp, &file, clean, broken).await;
    println!(
        "lsp ({name}, warm, sandboxed): write alone {:.3} ms; write + diagnostics median {:.1} ms, p90 {:.1} ms ({RUNS} runs, {wrong} without the right answer within the {} s wait)",
        percentile(&mut plain, 50),
        percentile(&mut with, 50),
        percentile(&mut with, 90),
        WAIT.as_secs()
    );
    lsp.shutdown().await;
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let body: String = (0..200).map(|i| format!("int f{i}(int a) {{ return a + {i}; }}\n")).collect();
        let clean = format!("{body}int main(void) {{ return f1(2); }}\n");
        let broken = format!("{body}int main(void) {{ return f1(y); }}\n");
        bench("clangd", "c", &clean, &broken).await;
        let body: String =
            (0..200).map(|i| format!("def f{i}(a: int) -> int:\n    return a + {i}\n\n")).collect();
        let clean = format!("{body}x: int = f1(2)\n");
        let broken = format!("{body}x: int = f1(\"two\")\n");
        bench("pyright", "py", &clean, &broken).await;
    });
}
