//! grep and glob over a generated tree (default 100,000 files, about 1 GB), side by side with
//! `rg` and `fd` when they are installed (this benchmark installs neither; without them it says so
//! and skips the comparison).
//!
//! The tree is generated once under `target/octo-bench-tree` and reused. Scale it with
//! `OCTO_BENCH_FILES` and `OCTO_BENCH_FILE_KB`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark fails loudly

use octo_tools::search::glob::find;
use octo_tools::search::grep::{search, GrepRequest, OutputMode};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn generate(root: &Path, files: usize, kb: usize) {
    let marker = root.join(format!(".generated-{files}-{kb}"));
    if marker.exists() {
        return;
    }
    let _ = std::fs::remove_dir_all(root);
    let started = Instant::now();
    let line = "let value = compute(alpha, beta, gamma); // ordinary code line padding text\n";
    let lines_per_file = (kb * 1024) / line.len();
    for i in 0..files {
        let dir = root.join(format!("d{:03}/s{:02}", i % 1000, (i / 1000) % 100));
        std::fs::create_dir_all(&dir).unwrap();
        let ext = ["rs", "ts", "py", "go", "md"][i % 5];
        let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join(format!("f{i}.{ext}"))).unwrap());
        for l in 0..lines_per_file {
            if l == lines_per_file / 2 && i % 997 == 0 {
                writeln!(f, "fn needle_function_{i}() {{}}").unwrap();
            } else {
                f.write_all(line.as_bytes()).unwrap();
            }
        }
    }
    std::fs::write(marker, "").unwrap();
    eprintln!("generated {files} files of ~{kb} KB in {:.1}s", started.elapsed().as_secs_f64());
}

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..runs {
        let t = Instant::now();
        let r = f();
        best = best.min(t.elapsed());
        last = Some(r);
    }
    (best, last.unwrap())
}

fn external(program: &str, args: &[&str], dir: &Path) -> Option<Duration> {
    Command::new(program).arg("--version").output().ok().filter(|o| o.status.success())?;
    let (d, _) = best_of(3, || Command::new(program).args(args).current_dir(dir).output().unwrap());
    Some(d)
}

fn main() {
    let files = env_usize("OCTO_BENCH_FILES", 100_000);
    let kb = env_usize("OCTO_BENCH_FILE_KB", 10);
    let root: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/octo-bench-tree");
    generate(&root, files, kb);
    // Warm the page cache so both tools are measured on the same footing.
    let _ = search(&root, &GrepRequest { pattern: "warmup_nothing".into(), ..req() });

    let literal = GrepRequest {
        pattern: "needle_function".into(),
        output_mode: OutputMode::FilesWithMatches,
        limit: Some(1_000_000),
        ..req()
    };
    let (d, out) = best_of(3, || search(&root, &literal).unwrap());
    let hits = out.lines().filter(|l| !l.starts_with('[')).count();
    println!(
        "grep literal, {files} files (~{} MB): {:>8.1} ms, {hits} files",
        files * kb / 1024,
        d.as_secs_f64() * 1e3
    );
    report("rg", external("rg", &["-l", "needle_function"], &root), d);

    let regex = GrepRequest {
        pattern: r"needle_function_\d+\(\)".into(),
        output_mode: OutputMode::Content,
        limit: Some(1_000_000),
        ..req()
    };
    let (d, _) = best_of(3, || search(&root, &regex).unwrap());
    println!("grep regex + line numbers:        {:>8.1} ms", d.as_secs_f64() * 1e3);
    report("rg", external("rg", &["-n", r"needle_function_\d+\(\)"], &root), d);

    let (d, (_, total)) = best_of(3, || find(&root, "**/*.rs").unwrap());
    println!("glob **/*.rs:                     {:>8.1} ms, {total} files", d.as_secs_f64() * 1e3);
    report(
        "fd",
        external("fd", &["-e", "rs", "--type", "f"], &root)
            .or_else(|| external("fdfind", &["-e", "rs", "--type", "f"], &root)),
        d,
    );
}

fn report(tool: &str, theirs: Option<Duration>, ours: Duration) {
    match theirs {
        Some(t) => println!(
            "  {tool}: {:>8.1} ms → octo is {:.2}x {tool}'s time",
            t.as_secs_f64() * 1e3,
            ours.as_secs_f64() / t.as_secs_f64()
        ),
        None => println!("  {tool}: not installed; comparison skipped"),
    }
}

fn req() -> GrepRequest {
    serde_json::from_value(serde_json::json!({"pattern": ""})).unwrap()
}
