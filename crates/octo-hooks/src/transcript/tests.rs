//! The transcript's copy: kept up to date by appending, and never written through a link or a
//! second name a command planted.

#![allow(clippy::unwrap_used)]
use super::*;

fn append(path: &Path, text: &str) {
    use std::io::Write;
    OpenOptions::new().append(true).create(true).open(path).unwrap().write_all(text.as_bytes()).unwrap();
}

#[test]
fn the_copy_follows_the_transcript_as_it_grows_and_after_it_is_rewritten() {
    let t = tempfile::tempdir().unwrap();
    let (real, dir) = (t.path().join("s1.jsonl"), t.path().join("run"));
    append(&real, "{\"a\":1}\n");
    let m = Mirror::default();
    let copy = m.path_for(&real, &dir);
    assert_eq!(copy, dir.join("transcript-s1.jsonl"));
    append(&real, "{\"role\":\"assistant\"}\n");
    assert_eq!(m.path_for(&real, &dir), copy);
    assert_eq!(std::fs::read(&copy).unwrap(), std::fs::read(&real).unwrap());
    // A command spoils the copy (shorter): it is written afresh. The transcript is rewritten
    // shorter (a rewind): the same.
    std::fs::write(&copy, "x").unwrap();
    m.path_for(&real, &dir);
    assert_eq!(std::fs::read(&copy).unwrap(), std::fs::read(&real).unwrap());
    std::fs::write(&real, "{\"b\":2}\n").unwrap();
    m.path_for(&real, &dir);
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), "{\"b\":2}\n");
    // No transcript yet: the real path, nothing made.
    assert_eq!(m.path_for(&t.path().join("none.jsonl"), &dir), t.path().join("none.jsonl"));
}

#[cfg(unix)]
#[test]
fn a_link_or_second_name_planted_at_the_copy_never_gets_written_through() {
    let t = tempfile::tempdir().unwrap();
    let (real, dir) = (t.path().join("s1.jsonl"), t.path().join("run"));
    let victim = t.path().join("victim");
    std::fs::write(&victim, "KEEP").unwrap();
    append(&real, "one\n");
    let m = Mirror::default();
    let copy = m.path_for(&real, &dir);
    for plant in ["symlink", "hardlink"] {
        std::fs::remove_file(&copy).unwrap();
        if plant == "symlink" {
            std::os::unix::fs::symlink(&victim, &copy).unwrap();
        } else {
            std::fs::hard_link(&victim, &copy).unwrap();
        }
        append(&real, "more\n");
        assert_eq!(m.path_for(&real, &dir), copy, "{plant}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "KEEP", "{plant}");
        assert!(!std::fs::symlink_metadata(&copy).unwrap().file_type().is_symlink(), "{plant}");
        assert_eq!(std::fs::read(&copy).unwrap(), std::fs::read(&real).unwrap(), "{plant}");
    }
}

#[cfg(unix)]
#[test]
fn a_fifo_planted_at_the_copy_is_not_waited_on() {
    let t = tempfile::tempdir().unwrap();
    let (real, dir) = (t.path().join("s1.jsonl"), t.path().join("run"));
    append(&real, "one\n");
    let m = Mirror::default();
    let copy = m.path_for(&real, &dir);
    std::fs::remove_file(&copy).unwrap();
    let made = std::process::Command::new("mkfifo").arg(&copy).status().unwrap();
    assert!(made.success());
    append(&real, "two\n");
    assert_eq!(m.path_for(&real, &dir), copy);
    assert_eq!(std::fs::read(&copy).unwrap(), std::fs::read(&real).unwrap());
}
