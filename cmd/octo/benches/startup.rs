//! What a user feels first: how long `octo --version` and a whole one-shot answer (against a
//! local mock server) take, the one-shot as a ratio to `curl` sending octo's very request (the
//! budget's yardstick) and to a minimal client (this bench's own binary, started as a process),
//! the most memory either needs, and the first request's size — each printed beside its budget.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark fails loudly

use octo_testkit::anthropic::Reply;
use octo_testkit::{MockLlm, Scripted, TempHome};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The binary measured: `OCTO_STARTUP_BIN` (`make bench` sets it to the release build `make
/// build` ships), else the one cargo built for this bench — which has the dev-dependencies'
/// features unified in, and is about 1 MiB heavier at start.
fn bin() -> std::path::PathBuf {
    std::env::var_os("OCTO_STARTUP_BIN").map_or_else(|| env!("CARGO_BIN_EXE_octo").into(), Into::into)
}

fn peak_rss_mb() -> f64 {
    #[cfg(unix)]
    {
        use nix::sys::resource::{getrusage, UsageWho};
        // ru_maxrss is the largest child so far, in KiB on Linux.
        getrusage(UsageWho::RUSAGE_CHILDREN).map(|u| u.max_rss() as f64 / 1024.0).unwrap_or(0.0)
    }
    #[cfg(not(unix))]
    {
        0.0
    }
}

/// Runs a one-shot to its end: its wall time and its own peak RSS in MiB (`wait4`'s
/// `ru_maxrss`, which counts every page it touched, the binary's shared ones too).
// `wait4` reaps the child: clippy cannot see that.
#[allow(unsafe_code, clippy::zombie_processes)]
fn measured(mut c: Command) -> (Duration, f64) {
    let t = Instant::now();
    let child = c.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let pid = i32::try_from(child.id()).unwrap();
    let mut status = 0;
    // SAFETY: `rusage` is plain data; wait4 fills it and the status for the child just started.
    let (rc, usage) = unsafe {
        let mut usage: nix::libc::rusage = std::mem::zeroed();
        (nix::libc::wait4(pid, &raw mut status, 0, &raw mut usage), usage)
    };
    let elapsed = t.elapsed();
    assert!(rc == pid && nix::libc::WIFEXITED(status) && nix::libc::WEXITSTATUS(status) == 0, "{c:?} failed");
    (elapsed, usage.ru_maxrss as f64 / 1024.0)
}

fn time(runs: usize, mut make: impl FnMut() -> Command) -> (Duration, Duration) {
    let mut all = Vec::with_capacity(runs);
    for _ in 0..runs {
        let mut c = make();
        let t = Instant::now();
        let status = c.stdout(Stdio::null()).stderr(Stdio::null()).status().unwrap();
        all.push(t.elapsed());
        assert!(status.success(), "{c:?} failed");
    }
    all.sort();
    (all[0], all[all.len() / 2])
}

/// The one-shot's budgets (issue 31).
const RATIO_BUDGET: f64 = 1.2;
const RSS_BUDGET_MIB: f64 = 12.0;
const REQUEST_BUDGET: usize = 16 * 1024;

/// Run as `startup --raw-client ADDR FILE`: sends FILE's bytes to ADDR over plain TCP and reads
/// the answer to its end — what a minimal HTTP client costs, process start included.
fn raw_client(addr: &str, file: &str) -> ! {
    use std::io::{Read, Write};
    let request = std::fs::read(file).unwrap();
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_nodelay(true).unwrap();
    s.write_all(&request).unwrap();
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).unwrap();
    assert!(answer.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&answer));
    std::process::exit(0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 4 && args[1] == "--raw-client" {
        raw_client(&args[2], &args[3]);
    }
    println!("startup: measuring {}", bin().display());
    let (min, median) = time(50, || {
        let mut c = Command::new(bin());
        c.arg("--version");
        c
    });
    let rss = peak_rss_mb();
    println!(
        "octo --version:       min {:>6.2} ms, median {:>6.2} ms, peak RSS {rss:.1} MiB",
        ms(min),
        ms(median)
    );

    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let runs = 20;
    let llm = rt.block_on(async {
        let llm = MockLlm::start().await;
        // Every octo run, raw request and curl request gets the same streamed answer.
        llm.script_anthropic(
            (0..4 * runs + 2).map(|_| Scripted::sse(Reply::new().text("The answer is 42.").sse())),
        )
        .await;
        llm
    });
    let home = TempHome::new().unwrap();
    std::fs::write(
        home.home().join("config.toml"),
        format!("default = \"mock:claude-sonnet-4-5\"\n[endpoints.mock]\nprotocol = \"anthropic\"\nbase_url = \"{}\"\napi_key_env = \"MOCK_KEY\"\n", llm.uri()),
    )
    .unwrap();
    let one_shot = || {
        let mut c = Command::new(bin());
        c.arg("what is the answer?")
            .env("OCTO_HOME", home.home())
            .env("OCTO_NO_KEYRING", "1")
            .env("MOCK_KEY", "sk-mock")
            .current_dir(home.workspace())
            .stdin(Stdio::null());
        c
    };
    // octo's first request, as bytes on the wire, for the raw client to send.
    time(1, one_shot);
    let recorded = rt.block_on(llm.requests()).remove(0);
    let request_bytes = recorded.body.len();
    let wire = home.home().join("request.http");
    let addr = llm.uri().trim_start_matches("http://").to_owned();
    let mut head = format!("POST {} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n", recorded.path);
    for (k, v) in recorded.headers.iter().filter(|(k, _)| !matches!(k.as_str(), "host" | "connection")) {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    std::fs::write(&wire, [head.as_bytes(), &recorded.body].concat()).unwrap();
    let me = std::env::current_exe().unwrap();
    let raw = || {
        let mut c = Command::new(&me);
        c.args(["--raw-client", &addr]).arg(&wire);
        c
    };
    // `curl` sending the same request (the issue's own yardstick), where it is installed.
    let body = home.home().join("request.body");
    std::fs::write(&body, &recorded.body).unwrap();
    let url = format!("{}{}", llm.uri(), recorded.path);
    let headers: Vec<String> = recorded
        .headers
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "host" | "connection" | "content-length"))
        .map(|(k, v)| format!("{k}: {v}"))
        .collect();
    let curl = || {
        let mut c = Command::new("curl");
        c.args(["-sS", "--fail", "-o", "/dev/null", "-X", "POST", &url]);
        for h in &headers {
            c.arg("-H").arg(h);
        }
        c.arg("--data-binary").arg(format!("@{}", body.display()));
        c
    };
    let has_curl =
        Command::new("curl").arg("--version").stdout(Stdio::null()).status().is_ok_and(|s| s.success());
    // Alternating, so all see the same machine.
    let (mut octo, mut bare, mut curls) = (Vec::new(), Vec::new(), Vec::new());
    let mut rss: f64 = 0.0;
    for _ in 0..runs {
        let (t, peak) = measured(one_shot());
        octo.push(t);
        rss = rss.max(peak);
        bare.push(time(1, raw).0);
        if has_curl {
            curls.push(time(1, curl).0);
        }
    }
    octo.sort();
    bare.sort();
    curls.sort();
    let (o, r) = (ms(octo[runs / 2]), ms(bare[runs / 2]));
    println!("one-shot answer:      min {:>6.2} ms, median {o:>6.2} ms", ms(octo[0]));
    match curls.get(runs / 2) {
        Some(c) => println!(
            "  against curl sending the same request: median {:>6.2} ms: {:.2}× (budget {RATIO_BUDGET}×)",
            ms(*c),
            o / ms(*c)
        ),
        None => println!("  against curl: not installed here"),
    }
    println!(
        "  against a minimal client (this bench's own binary: connect, write, read): median {r:>6.2} ms: {:.2}×",
        o / r
    );
    println!("one-shot peak RSS:    {rss:.1} MiB, the largest of {runs} runs (budget {RSS_BUDGET_MIB} MiB)");
    println!("first request:        {request_bytes} bytes (budget {REQUEST_BUDGET})");
    drop(llm);
    skills(&rt);
    mcp(&rt, octo[runs / 2]);
}

/// 200 skills in `~/.octo/skills`: discovery and the prompt listing measured in-process, and a
/// one-shot answer with them against one without (run alternately, so both see the same machine).
fn skills(rt: &tokio::runtime::Runtime) {
    use octo_app::skill_files::{listing, Catalog, Root, RootKind, LISTING_BUDGET};
    let runs = 20;
    let llm = rt.block_on(async {
        let llm = MockLlm::start().await;
        llm.script_anthropic(
            (0..2 * runs).map(|_| Scripted::sse(Reply::new().text("The answer is 42.").sse())),
        )
        .await;
        llm
    });
    let config = format!("default = \"mock:claude-sonnet-4-5\"\n[endpoints.mock]\nprotocol = \"anthropic\"\nbase_url = \"{}\"\napi_key_env = \"MOCK_KEY\"\n", llm.uri());
    let (with, without) = (TempHome::new().unwrap(), TempHome::new().unwrap());
    for h in [&with, &without] {
        std::fs::write(h.home().join("config.toml"), &config).unwrap();
    }
    let dir = with.home().join("skills");
    for i in 0..200 {
        let d = dir.join(format!("skill-{i:03}"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("SKILL.md"),
            format!("---\nname: skill-{i:03}\ndescription: Does task number {i} the way this team likes it done\nallowed-tools: Read, Grep\n---\n{}", "Step.\n".repeat(200)),
        )
        .unwrap();
    }
    let roots = [Root::new(&dir, "~/.octo/skills", RootKind::Skills)];
    let mut times: Vec<Duration> = (0..50)
        .map(|_| {
            let t = Instant::now();
            let (c, _) = Catalog::discover(&roots);
            let _ = listing(&c, "skill", LISTING_BUDGET);
            t.elapsed()
        })
        .collect();
    times.sort();
    let one_shot = |home: &TempHome| {
        let mut c = Command::new(bin());
        c.arg("what is the answer?")
            .env("OCTO_HOME", home.home())
            .env("OCTO_NO_KEYRING", "1")
            .env("MOCK_KEY", "sk-mock")
            .current_dir(home.workspace())
            .stdin(Stdio::null())
            .stderr(Stdio::null());
        c
    };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        a.push(time(1, || one_shot(&with)).0);
        b.push(time(1, || one_shot(&without)).0);
    }
    a.sort();
    b.sort();
    println!(
        "200 skills: discovery + listing median {:>5.2} ms in-process; one-shot median {:>6.2} ms with them, {:>6.2} ms without ({:+.2} ms)",
        ms(times[times.len() / 2]),
        ms(a[runs / 2]),
        ms(b[runs / 2]),
        ms(a[runs / 2]) - ms(b[runs / 2])
    );
    drop(llm);
}

/// With six stdio MCP servers configured: how long one server takes to start on its own, and
/// how much longer a one-shot answer takes than without servers — with no tool lists kept (the
/// first request waits for the servers, which start in parallel with the rest of octo's
/// start-up) and with their lists kept from the last run (it waits for none; issue 34's goal is
/// within 200 ms of none).
fn mcp(rt: &tokio::runtime::Runtime, without: Duration) {
    use rmcp::ServiceExt;
    let server = octo_testkit::mcp::server_bin();
    let runs = 10;
    let mut starts = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        rt.block_on(async {
            let child =
                rmcp::transport::TokioChildProcess::new(tokio::process::Command::new(&server)).unwrap();
            let client = ().serve(child).await.unwrap();
            client.list_all_tools().await.unwrap();
            starts.push(t.elapsed());
            let _ = client.cancel().await;
        });
    }
    starts.sort();
    let one = starts[runs / 2];
    let llm = rt.block_on(async {
        let llm = MockLlm::start().await;
        llm.script_anthropic(
            (0..2 * runs + 1).map(|_| Scripted::sse(Reply::new().text("The answer is 42.").sse())),
        )
        .await;
        llm
    });
    let home = TempHome::new().unwrap();
    let mut config = format!("default = \"mock:claude-sonnet-4-5\"\n[endpoints.mock]\nprotocol = \"anthropic\"\nbase_url = \"{}\"\napi_key_env = \"MOCK_KEY\"\n", llm.uri());
    for name in ["a", "b", "c", "d", "e", "f"] {
        config.push_str(&format!("[mcp_servers.{name}]\ncommand = \"{}\"\n", server.display()));
    }
    std::fs::write(home.home().join("config.toml"), config).unwrap();
    let kept = home.home().join("mcp-tools");
    let one_shot = || {
        let mut c = Command::new(bin());
        c.arg("what is the answer?")
            .env("OCTO_HOME", home.home())
            .env("OCTO_NO_KEYRING", "1")
            .env("MOCK_KEY", "sk-mock")
            .current_dir(home.workspace())
            .stdin(Stdio::null());
        c
    };
    let (cold_min, cold) = time(runs, || {
        let _ = std::fs::remove_dir_all(&kept);
        one_shot()
    });
    let _ = one_shot().stdout(Stdio::null()).stderr(Stdio::null()).status();
    let (min, median) = time(runs, one_shot);
    println!(
        "one MCP server start: median {:>6.2} ms; one-shot with 6 MCP servers: no lists kept min {:>6.2} ms, median {:>6.2} ms ({:+.2} ms over none); lists kept min {:>6.2} ms, median {:>6.2} ms ({:+.2} ms over none)",
        ms(one),
        ms(cold_min),
        ms(cold),
        ms(cold) - ms(without),
        ms(min),
        ms(median),
        ms(median) - ms(without)
    );
    drop(llm);
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
