//! Bounded capture of a command's output: everything up to a cap stays in memory; past it the
//! head and tail are kept and the whole output is spilled to a file.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

#[derive(Debug)]
struct State {
    mem: Vec<u8>,
    head_len: usize,
    tail: VecDeque<u8>,
    total: u64,
    spill: Option<(PathBuf, File)>,
    spill_failed: Option<String>,
}

/// Output collected from a running command. Cheap to clone; all clones share the buffer.
#[derive(Debug, Clone)]
pub struct Capture {
    state: Arc<Mutex<State>>,
    cap: usize,
    spill_path: PathBuf,
}

impl Capture {
    /// Keeps up to `cap` bytes in memory; past that, the full output goes to `spill_path`.
    pub fn new(cap: usize, spill_path: PathBuf) -> Self {
        let cap = cap.max(64);
        Self {
            state: Arc::new(Mutex::new(State {
                mem: Vec::new(),
                head_len: cap / 2,
                tail: VecDeque::new(),
                total: 0,
                spill: None,
                spill_failed: None,
            })),
            cap,
            spill_path,
        }
    }

    /// Sends everything straight to `path` (keeping only a small tail in memory): for background
    /// commands, whose output is read back from the file.
    pub fn to_file(path: PathBuf) -> std::io::Result<Self> {
        if let Some(parent) = path.parent() {
            crate::private::create_dir(parent)?;
        }
        let file = crate::private::new_file(&path)?;
        let cap = 4096;
        Ok(Self {
            state: Arc::new(Mutex::new(State {
                mem: Vec::new(),
                head_len: 0,
                tail: VecDeque::new(),
                total: 0,
                spill: Some((path.clone(), file)),
                spill_failed: None,
            })),
            cap,
            spill_path: path,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Appends bytes as they arrive.
    pub fn push(&self, bytes: &[u8]) {
        let cap = self.cap;
        let mut s = self.lock();
        s.total += bytes.len() as u64;
        if s.spill.is_none() && s.spill_failed.is_none() {
            if s.mem.len() + bytes.len() <= cap {
                s.mem.extend_from_slice(bytes);
                return;
            }
            // Switch to spilling: everything so far goes to the file first.
            let opened = self
                .spill_path
                .parent()
                .map_or(Ok(()), crate::private::create_dir)
                .and_then(|()| crate::private::new_file(&self.spill_path));
            match opened {
                Ok(mut f) => {
                    let _ = f.write_all(&s.mem);
                    s.spill = Some((self.spill_path.clone(), f));
                }
                Err(e) => s.spill_failed = Some(e.to_string()),
            }
            // The head is filled from what came before and from this chunk.
            let mut all = std::mem::take(&mut s.mem);
            all.extend_from_slice(bytes);
            if let Some((_, f)) = s.spill.as_mut() {
                let _ = f.write_all(bytes);
            }
            let head_len = s.head_len.min(all.len());
            let rest = all.split_off(head_len);
            s.mem = all;
            s.tail.extend(rest);
        } else {
            if let Some((_, f)) = s.spill.as_mut() {
                let _ = f.write_all(bytes);
            }
            s.tail.extend(bytes.iter().copied());
        }
        let keep = cap - cap / 2;
        let excess = s.tail.len().saturating_sub(keep);
        s.tail.drain(..excess);
    }

    /// Total bytes seen.
    pub fn total(&self) -> u64 {
        self.lock().total
    }

    /// The output as text for the model: all of it, or head + marker + tail with the spill path.
    pub fn render(&self) -> String {
        let mut s = self.lock();
        if s.spill.is_none() && s.spill_failed.is_none() {
            return String::from_utf8_lossy(&s.mem).into_owned();
        }
        if let Some((_, f)) = s.spill.as_mut() {
            let _ = f.flush();
        }
        let head = String::from_utf8_lossy(&s.mem).into_owned();
        let tail_bytes: Vec<u8> = s.tail.iter().copied().collect();
        let tail = String::from_utf8_lossy(&tail_bytes).into_owned();
        let cut = s.total.saturating_sub((s.mem.len() + tail_bytes.len()) as u64);
        let where_ = match (&s.spill, &s.spill_failed) {
            (Some((p, _)), _) => format!("the full output ({} bytes) is in {}", s.total, p.display()),
            (None, Some(e)) => format!("the full output could not be saved: {e}"),
            (None, None) => String::new(),
        };
        format!("{head}\n[... {cut} bytes cut from the middle; {where_} — read it with read_file or grep ...]\n{tail}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_output_stays_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let c = Capture::new(100, tmp.path().join("out.txt"));
        c.push(b"hello ");
        c.push(b"world");
        assert_eq!(c.render(), "hello world");
        assert!(!tmp.path().join("out.txt").exists());
    }

    #[test]
    fn large_output_keeps_head_and_tail_and_spills_everything() {
        let tmp = tempfile::tempdir().unwrap();
        let spill = tmp.path().join("sub/out.txt");
        let c = Capture::new(100, spill.clone());
        let mut all = Vec::new();
        for i in 0..1000 {
            let line = format!("line {i}\n");
            all.extend_from_slice(line.as_bytes());
            c.push(line.as_bytes());
        }
        let r = c.render();
        assert!(r.starts_with("line 0\n"), "{r}");
        assert!(r.ends_with("line 999\n"), "{r}");
        assert!(r.contains(&spill.display().to_string()));
        assert!(r.len() < 400, "{}", r.len());
        assert_eq!(std::fs::read(&spill).unwrap(), all, "the spill file has every byte");
        assert_eq!(c.total(), all.len() as u64);
    }
}
