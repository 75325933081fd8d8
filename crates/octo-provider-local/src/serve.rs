//! The engine program's loop ([`serve`]): the first stdin line names the model to load, each
//! later one a request to answer or to cancel; events go to stdout as lines. It ends when its
//! stdin closes (octo stopped or dropped the sender), without waiting for a request in flight.

use crate::stats::Stats;
use crate::wire::{FromEngine, ToEngine, WireError, WireEvent, WireStats};
use octo_agent::{ProviderError, StreamEvent};
use std::collections::HashSet;
use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::mpsc::UnboundedReceiver;

/// Where answers are written: one line at a time, whole.
#[derive(Clone)]
struct Out(Arc<Mutex<std::io::Stdout>>);

impl Out {
    fn send(&self, msg: &FromEngine) -> bool {
        let Ok(mut line) = serde_json::to_vec(msg) else { return true };
        line.push(b'\n');
        let mut out = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        out.write_all(&line).and_then(|()| out.flush()).is_ok()
    }
}

/// Runs the engine on this process's stdin and stdout; the exit code for `main`.
pub fn serve() -> std::process::ExitCode {
    let out = Out(Arc::new(Mutex::new(std::io::stdout())));
    let mut lines = std::io::stdin().lock().lines();
    let Some(Ok(ToEngine::Open(open))) =
        lines.next().and_then(Result::ok).map(|l| serde_json::from_str::<ToEngine>(&l))
    else {
        eprintln!("octo-engine: runs octo's local model for octo; it is started by octo, not by hand");
        return std::process::ExitCode::from(2);
    };
    let stats = Arc::new(Mutex::new(Stats::default()));
    let worker = match crate::inproc::open(&open, Arc::clone(&stats)) {
        Ok((worker, info)) => {
            out.send(&FromEngine::Ready(Ok(info)));
            worker
        }
        Err(e) => {
            out.send(&FromEngine::Ready(Err(e.to_string())));
            return std::process::ExitCode::SUCCESS;
        }
    };
    let cancelled = Arc::new(Mutex::new(HashSet::new()));
    for line in lines {
        let Ok(line) = line else { break };
        match serde_json::from_str::<ToEngine>(&line) {
            Ok(ToEngine::Job(spec)) => {
                let id = spec.id;
                let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
                if let Err(e) = worker.submit(crate::worker::Job { spec, events: tx }) {
                    out.send(&FromEngine::Error(id, WireError::from(&e)));
                    continue;
                }
                let (out, cancelled, stats) = (out.clone(), Arc::clone(&cancelled), Arc::clone(&stats));
                let spawned = std::thread::Builder::new()
                    .name("octo-engine-events".into())
                    .spawn(move || forward(id, rx, &out, &cancelled, &stats));
                if spawned.is_err() {
                    eprintln!("octo-engine: cannot start a thread");
                    break;
                }
            }
            Ok(ToEngine::Cancel(id)) => {
                cancelled.lock().unwrap_or_else(PoisonError::into_inner).insert(id);
            }
            Ok(ToEngine::Open(_)) | Err(_) => {}
        }
    }
    // octo has gone: nobody reads what is still being generated.
    std::process::exit(0)
}

/// Writes one request's events until it ends or is cancelled, then its end with the stats.
fn forward(
    id: u64,
    mut rx: UnboundedReceiver<Result<StreamEvent, ProviderError>>,
    out: &Out,
    cancelled: &Mutex<HashSet<u64>>,
    stats: &Mutex<Stats>,
) {
    while let Some(item) = rx.blocking_recv() {
        if cancelled.lock().unwrap_or_else(PoisonError::into_inner).remove(&id) {
            // Dropping the channel stops the worker at its next token.
            return;
        }
        let msg = match item {
            Ok(ev) => match WireEvent::from_event(ev) {
                Some(ev) => FromEngine::Event(id, ev),
                None => continue,
            },
            Err(e) => FromEngine::Error(id, WireError::from(&e)),
        };
        if !out.send(&msg) {
            return;
        }
    }
    let s = WireStats::from(&*stats.lock().unwrap_or_else(PoisonError::into_inner));
    out.send(&FromEngine::End(id, s));
}
