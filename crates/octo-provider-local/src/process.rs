//! The engine program as a child process: requests written to its stdin as lines, events read
//! back from its stdout on a thread and handed to each request's stream. The program holds the
//! model and its KV cache; this side links no llama.cpp.
//!
//! A dropped stream sends `cancel`; a dropped sender stops the program (closing its stdin
//! ends it too, so it never outlives octo). When the program dies, every open request fails
//! with its exit status and the last lines it wrote to stderr, and the next request starts it
//! again.

use crate::stats::Stats;
use crate::wire::{FromEngine, Info, Open, ToEngine, WireJob};
use crate::LocalError;
use octo_agent::{EventStream, ProviderError, StreamEvent};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use tokio::sync::mpsc::UnboundedSender;

type Events = UnboundedSender<Result<StreamEvent, ProviderError>>;

/// How much of the program's stderr is kept for the message when it dies.
const STDERR_TAIL: usize = 2048;

/// Environment variables the program keeps (the rest of octo's environment, keys included,
/// is not passed): what llama.cpp and the GPU runtimes read, and what a process needs to run.
const KEPT_ENV: &[&str] =
    &["PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH"];
const KEPT_PREFIXES: &[&str] = &["GGML_", "LLAMA_", "CUDA_", "HIP_", "ROCR_", "VK_", "MTL_", "GPU_"];

/// A running (or restartable) engine program.
pub struct Process {
    inner: Arc<Inner>,
}

struct Inner {
    program: PathBuf,
    open: Open,
    stats: Arc<Mutex<Stats>>,
    next: AtomicU64,
    live: Mutex<Live>,
}

/// The current child, if one runs, and the requests waiting for its events.
#[derive(Default)]
struct Live {
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    /// Which start of the program this is (a reader of an older one changes nothing).
    run: u64,
    jobs: HashMap<u64, Events>,
}

impl Inner {
    fn live(&self) -> MutexGuard<'_, Live> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn line(msg: &ToEngine) -> Vec<u8> {
    let mut v = serde_json::to_vec(msg).unwrap_or_default();
    v.push(b'\n');
    v
}

impl Process {
    /// Starts `program`, has it load the model and waits until it is ready.
    pub fn start(program: &Path, open: Open, stats: Arc<Mutex<Stats>>) -> Result<(Self, Info), LocalError> {
        let inner = Arc::new(Inner {
            program: program.to_path_buf(),
            open,
            stats,
            next: AtomicU64::new(1),
            live: Mutex::default(),
        });
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        {
            let mut live = inner.live();
            launch(&inner, &mut live, Some(ready_tx))?;
        }
        let info = match ready_rx.recv() {
            Ok(Ok(info)) => info,
            Ok(Err(message)) => return Err(LocalError::Reported(message)),
            Err(_) => {
                return Err(LocalError::Engine(format!(
                    "the engine program {} stopped while loading the model",
                    program.display()
                )))
            }
        };
        Ok((Self { inner }, info))
    }

    /// Sends a request; its events arrive on the returned stream (dropping it cancels).
    pub fn submit(&self, mut spec: WireJob) -> Result<EventStream, ProviderError> {
        let id = self.inner.next.fetch_add(1, Ordering::Relaxed);
        spec.id = id;
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        {
            let mut live = self.inner.live();
            if live.stdin.is_none() {
                launch(&self.inner, &mut live, None)
                    .map_err(|e| ProviderError::Server { status: None, message: e.to_string() })?;
            }
            live.jobs.insert(id, tx);
            let sent = live
                .stdin
                .as_mut()
                .map(|s| s.write_all(&line(&ToEngine::Job(spec))).and_then(|()| s.flush()));
            if !matches!(sent, Some(Ok(()))) {
                live.jobs.remove(&id);
                return Err(ProviderError::Server {
                    status: None,
                    message: "the local model engine stopped before it took the request".into(),
                });
            }
        }
        let guard = Cancel { inner: Arc::clone(&self.inner), id };
        Ok(Box::pin(futures_util::stream::unfold((rx, guard), |(mut rx, guard)| async move {
            rx.recv().await.map(|e| (e, (rx, guard)))
        })))
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let mut live = self.inner.live();
        live.stdin = None;
        if let Some(mut child) = live.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Sends `cancel` for a request whose stream is dropped before its end.
struct Cancel {
    inner: Arc<Inner>,
    id: u64,
}

impl Drop for Cancel {
    fn drop(&mut self) {
        let mut live = self.inner.live();
        if live.jobs.remove(&self.id).is_some() {
            if let Some(stdin) = live.stdin.as_mut() {
                let _ = stdin.write_all(&line(&ToEngine::Cancel(self.id))).and_then(|()| stdin.flush());
            }
        }
    }
}

/// Starts the program, sends it the model to load and starts the thread reading its answers.
fn launch(
    inner: &Arc<Inner>,
    live: &mut Live,
    ready: Option<std::sync::mpsc::Sender<Result<Info, String>>>,
) -> Result<(), LocalError> {
    let mut cmd = Command::new(&inner.program);
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).env_clear();
    for (k, v) in std::env::vars_os() {
        let name = k.to_string_lossy();
        if KEPT_ENV.contains(&name.as_ref()) || KEPT_PREFIXES.iter().any(|p| name.starts_with(p)) {
            cmd.env(&k, v);
        }
    }
    let mut child = cmd.spawn().map_err(|e| {
        LocalError::Engine(format!(
            "cannot start the engine program {}: {e} (it is installed beside the octo binary; set OCTO_ENGINE to its path)",
            inner.program.display()
        ))
    })?;
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        let _ = child.kill();
        return Err(LocalError::Engine("the engine program's pipes could not be opened".into()));
    };
    if stdin.write_all(&line(&ToEngine::Open(inner.open.clone()))).and_then(|()| stdin.flush()).is_err() {
        let _ = child.kill();
        let _ = child.wait();
        return Err(LocalError::Engine(format!(
            "the engine program {} stopped at once",
            inner.program.display()
        )));
    }
    live.run += 1;
    let run = live.run;
    live.child = Some(child);
    live.stdin = Some(stdin);
    let tail = Arc::new(Mutex::new(Vec::new()));
    let errors = {
        let tail = Arc::clone(&tail);
        std::thread::Builder::new().name("octo-engine-stderr".into()).spawn(move || keep_tail(stderr, &tail))
    }
    .map_err(|e| LocalError::Engine(format!("cannot start a thread: {e}")))?;
    let reader = Arc::clone(inner);
    std::thread::Builder::new()
        .name("octo-engine-reader".into())
        .spawn(move || {
            read_answers(&reader, run, stdout, ready);
            let _ = errors.join();
            let tail =
                String::from_utf8_lossy(&tail.lock().unwrap_or_else(PoisonError::into_inner)).into_owned();
            ended(&reader, run, &tail);
        })
        .map_err(|e| LocalError::Engine(format!("cannot start a thread: {e}")))?;
    Ok(())
}

/// Keeps the last [`STDERR_TAIL`] bytes the program writes to stderr.
fn keep_tail(mut stderr: impl Read, tail: &Mutex<Vec<u8>>) {
    let mut buf = [0u8; 1024];
    while let Ok(n) = stderr.read(&mut buf) {
        if n == 0 {
            break;
        }
        let mut t = tail.lock().unwrap_or_else(PoisonError::into_inner);
        t.extend_from_slice(&buf[..n]);
        if t.len() > STDERR_TAIL {
            let cut = t.len() - STDERR_TAIL;
            t.drain(..cut);
        }
    }
}

/// Hands each line of the program's stdout to its request until the pipe closes.
fn read_answers(
    inner: &Inner,
    run: u64,
    stdout: impl Read,
    mut ready: Option<std::sync::mpsc::Sender<Result<Info, String>>>,
) {
    for text in BufReader::new(stdout).lines() {
        let Ok(text) = text else { break };
        // Anything else on stdout (a library printing) is not for us.
        let Ok(msg) = serde_json::from_str::<FromEngine>(&text) else { continue };
        match msg {
            FromEngine::Ready(r) => match (ready.take(), r) {
                (Some(tx), r) => {
                    let _ = tx.send(r);
                }
                (None, Ok(_)) => {}
                (None, Err(message)) => {
                    fail_all(inner, run, &ProviderError::InvalidRequest { status: None, message });
                }
            },
            FromEngine::Event(id, ev) => {
                let mut live = inner.live();
                if let Some(tx) = live.jobs.get(&id) {
                    if tx.send(Ok(ev.into_event())).is_err() {
                        live.jobs.remove(&id);
                    }
                }
            }
            FromEngine::Error(id, e) => {
                if let Some(tx) = inner.live().jobs.remove(&id) {
                    let _ = tx.send(Err(e.into()));
                }
            }
            FromEngine::End(id, stats) => {
                *inner.stats.lock().unwrap_or_else(PoisonError::into_inner) = stats.into();
                inner.live().jobs.remove(&id);
            }
        }
    }
}

/// The program's stdout closed: it has stopped. Every open request fails saying how, and the
/// next request starts it again.
fn ended(inner: &Inner, run: u64, tail: &str) {
    let status = {
        let mut live = inner.live();
        if live.run != run {
            return;
        }
        live.stdin = None;
        live.child.take().and_then(|mut c| c.wait().ok())
    };
    let how = status.map_or_else(|| "it stopped".to_owned(), |s| format!("it stopped ({s})"));
    let last = tail.trim();
    let message = if last.is_empty() {
        format!("the local model engine failed: {how}; the next request starts it again")
    } else {
        format!("the local model engine failed: {how}: {last}; the next request starts it again")
    };
    fail_all(inner, run, &ProviderError::Server { status: None, message });
}

fn fail_all(inner: &Inner, run: u64, e: &ProviderError) {
    let jobs: Vec<Events> = {
        let mut live = inner.live();
        if live.run != run {
            return;
        }
        live.jobs.drain().map(|(_, tx)| tx).collect()
    };
    for tx in jobs {
        let _ = tx.send(Err(e.clone()));
    }
}
