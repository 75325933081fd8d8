//! Session files on real disks: round trips, repair, refusal, locking, finding, branching.

use octo_agent::{ContentBlock, ImageSource, Message, Role, ToolResultPart};
use octo_session::{Found, SessionStore, StoreError};
use serde_json::json;
use std::io::Write;

fn every_block() -> Vec<Message> {
    vec![
        Message::user("Fix the bug in src/lib.rs"),
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::Thinking { thinking: "read it first".into(), signature: Some("sig".into()) },
                ContentBlock::RedactedThinking { data: "opaque".into() },
                ContentBlock::text("Reading."),
                ContentBlock::ToolUse {
                    id: "t1".into(),
                    name: "read_file".into(),
                    input: json!({"path": "src/lib.rs"}),
                },
            ],
        ),
        Message::new(
            Role::User,
            vec![ContentBlock::ToolResult {
                tool_use_id: "t1".into(),
                content: vec![
                    ToolResultPart::Text { text: "fn a() {}\n\"quoted\" \\ é ✓".into() },
                    ToolResultPart::Image {
                        source: ImageSource { media_type: "image/png".into(), data: "iVBOR".into() },
                    },
                ],
                is_error: true,
            }],
        ),
        Message::new(
            Role::User,
            vec![ContentBlock::Image {
                source: ImageSource { media_type: "image/jpeg".into(), data: "/9j/".into() },
            }],
        ),
        Message::assistant("Done."),
    ]
}

fn store() -> (tempfile::TempDir, SessionStore) {
    let dir = tempfile::tempdir().unwrap();
    let s = SessionStore::new(dir.path().join("sessions"));
    (dir, s)
}

#[test]
fn every_content_block_survives_save_and_load() {
    let (dir, s) = store();
    let mut w = s.create(dir.path(), "anthropic", "claude-sonnet-4-5", None).unwrap();
    let msgs = every_block();
    w.append(&msgs[..3]).unwrap();
    w.append(&msgs[3..]).unwrap();
    let l = s.load(w.id()).unwrap();
    assert_eq!(l.messages, msgs);
    assert!(l.warnings.is_empty());
    assert_eq!(l.meta.cwd, dir.path());
    assert_eq!(l.model, ("anthropic".to_owned(), "claude-sonnet-4-5".to_owned()));
}

fn path_of(s: &SessionStore, id: &str) -> std::path::PathBuf {
    s.dir().join(format!("{id}.jsonl"))
}

#[test]
fn a_torn_last_line_is_dropped_and_resume_continues_cleanly() {
    let (dir, s) = store();
    let mut w = s.create(dir.path(), "e", "m", None).unwrap();
    w.append(&[Message::user("one"), Message::assistant("two")]).unwrap();
    let id = w.id().to_owned();
    drop(w);
    let p = path_of(&s, &id);
    std::fs::OpenOptions::new()
        .append(true)
        .open(&p)
        .unwrap()
        .write_all(b"{\"type\":\"message\",\"at\":1,\"mess")
        .unwrap();
    let l = s.load(&id).unwrap();
    assert_eq!(l.messages.len(), 2);
    assert!(l.warnings[0].contains("repaired"), "{:?}", l.warnings);
    let (_, mut w) = s.resume(&id).unwrap();
    w.append(&[Message::user("three")]).unwrap();
    drop(w);
    let l = s.load(&id).unwrap();
    assert_eq!(l.messages.iter().map(Message::text).collect::<Vec<_>>(), ["one", "two", "three"]);
    assert!(l.warnings.is_empty(), "the tail was repaired on resume: {:?}", l.warnings);
}

#[test]
fn a_complete_last_record_without_newline_is_not_glued_to_the_next() {
    let (dir, s) = store();
    let mut w = s.create(dir.path(), "e", "m", None).unwrap();
    w.append(&[Message::user("one")]).unwrap();
    let id = w.id().to_owned();
    drop(w);
    // A hand-edited file whose last record lost its newline.
    let p = path_of(&s, &id);
    let text = std::fs::read_to_string(&p).unwrap();
    std::fs::write(&p, text.trim_end()).unwrap();
    let (l, mut w) = s.resume(&id).unwrap();
    assert_eq!(l.messages.len(), 1);
    w.append(&[Message::assistant("two")]).unwrap();
    drop(w);
    let l = s.load(&id).unwrap();
    assert_eq!(l.messages.iter().map(Message::text).collect::<Vec<_>>(), ["one", "two"]);
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);
}

#[test]
fn a_minimal_hand_written_file_loads() {
    // The fewest fields a version-1 file can have: optional meta fields, `at` and the structured
    // content form all missing, plus a record kind from a newer writer.
    let (dir, s) = store();
    std::fs::create_dir_all(s.dir()).unwrap();
    let cwd = serde_json::to_string(dir.path()).unwrap();
    let text = format!(
        "{{\"type\":\"meta\",\"version\":1,\"id\":\"old\",\"created\":1700000000,\"cwd\":{cwd}}}\n\
         {{\"type\":\"message\",\"message\":{{\"role\":\"user\",\"content\":\"plain string\"}}}}\n\
         {{\"type\":\"usage\",\"input_tokens\":5}}\n\
         {{\"type\":\"message\",\"at\":1,\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"ok\"}}]}}}}\n"
    );
    std::fs::write(path_of(&s, "old"), text).unwrap();
    let l = s.load("old").unwrap();
    assert_eq!(l.messages.iter().map(Message::text).collect::<Vec<_>>(), ["plain string", "ok"]);
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);
    assert_eq!(l.model, (String::new(), String::new()));
    let (_, mut w) = s.resume("old").unwrap();
    w.append(&[Message::user("more")]).unwrap();
    drop(w);
    assert_eq!(s.load("old").unwrap().messages.len(), 3);
}

#[test]
fn a_corrupt_middle_line_is_skipped_and_named() {
    let (dir, s) = store();
    let mut w = s.create(dir.path(), "e", "m", None).unwrap();
    let id = w.id().to_owned();
    w.append(&[Message::user("one")]).unwrap();
    w.record(&octo_session::Record::Title { title: "x".into() }).unwrap();
    drop(w);
    let p = path_of(&s, &id);
    let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    f.write_all(b"this is not json\n").unwrap();
    drop(f);
    let mut w = s.resume(&id).unwrap().1;
    w.append(&[Message::assistant("after")]).unwrap();
    let l = s.load(&id).unwrap();
    assert_eq!(l.messages.len(), 2);
    assert!(l.warnings.iter().any(|w| w.contains("line 4 is corrupt")), "{:?}", l.warnings);
}

#[test]
fn empty_and_future_files_are_refused_untouched() {
    let (dir, s) = store();
    std::fs::create_dir_all(s.dir()).unwrap();
    std::fs::write(path_of(&s, "empty"), "").unwrap();
    let e = s.load("empty").unwrap_err();
    assert!(e.to_string().contains("empty"), "{e}");
    let future = "{\"type\":\"meta\",\"version\":99,\"id\":\"f\",\"created\":1,\"cwd\":\"/x\",\"shiny_new_field\":true}\n{\"type\":\"hologram\"}\n";
    std::fs::write(path_of(&s, "f"), future).unwrap();
    let e = s.load("f").unwrap_err();
    assert!(matches!(e, StoreError::FutureVersion { found: 99, .. }), "{e:?}");
    assert!(e.to_string().contains("Update octo"));
    assert!(s.resume("f").is_err());
    assert_eq!(std::fs::read_to_string(path_of(&s, "f")).unwrap(), future, "nothing was changed");
    assert!(matches!(s.load("nope"), Err(StoreError::NotFound { .. })));
    let _ = dir;
}

#[test]
fn a_second_writer_is_refused() {
    let (dir, s) = store();
    let w = s.create(dir.path(), "e", "m", None).unwrap();
    let e = s.resume(w.id()).unwrap_err();
    assert!(matches!(e, StoreError::InUse { .. }), "{e:?}");
    assert!(e.to_string().contains("in use"));
    let e = s.remove(w.id()).unwrap_err();
    assert!(matches!(e, StoreError::InUse { .. }), "a running session is not deleted: {e:?}");
    assert!(path_of(&s, w.id()).exists());
    drop(w);
    assert!(s.resume(&s.list(None).unwrap()[0].id).is_ok(), "free again once the first writer is gone");
}

/// A session closed and resumed at once in the same process (its writer is dropped by the
/// closing session's task a moment later) is handed over, not refused; one held on is refused
/// after the handover time.
#[test]
fn a_writer_of_this_process_being_dropped_is_waited_for() {
    let (dir, s) = store();
    let w = s.create(dir.path(), "e", "m", None).unwrap();
    let id = w.id().to_owned();
    let closing = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(100));
        drop(w);
    });
    assert!(s.resume(&id).is_ok(), "handed over once the closing writer let go");
    closing.join().unwrap();
    let (_, held) = s.resume(&id).unwrap();
    let started = std::time::Instant::now();
    let e = s.resume(&id).unwrap_err();
    assert!(matches!(e, StoreError::InUse { .. }), "{e:?}");
    assert!(started.elapsed() >= octo_session::HANDOVER, "waited {:?}", started.elapsed());
    drop(held);
}

#[test]
fn finding_by_last_prefix_and_title_within_a_directory() {
    let (dir, s) = store();
    let here = dir.path().join("here");
    let there = dir.path().join("there");
    let mut a = s.create(&here, "e", "m", None).unwrap();
    a.append(&[Message::user("Refactor the parser\nmore")]).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let mut b = s.create(&here, "e", "m", None).unwrap();
    b.append(&[Message::user("Write parser tests")]).unwrap();
    b.record(&octo_session::Record::Title { title: "Parser tests".into() }).unwrap();
    let mut c = s.create(&there, "e", "m", None).unwrap();
    c.append(&[Message::user("Elsewhere")]).unwrap();
    let listed = s.list(Some(&here)).unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[1].title, "Refactor the parser");
    assert_eq!(listed[0].turns, 1);
    assert!(matches!(s.find("last", Some(&here)).unwrap(), Found::One(f) if f.id == b.id()));
    assert!(matches!(s.find(&a.id()[..18], Some(&here)).unwrap(), Found::One(f) if f.id == a.id()));
    assert!(matches!(s.find("refactor", Some(&here)).unwrap(), Found::One(f) if f.id == a.id()));
    assert!(matches!(s.find("parser", Some(&here)).unwrap(), Found::Several(v) if v.len() == 2));
    assert_eq!(s.find("Elsewhere", Some(&here)).unwrap(), Found::None);
    assert!(matches!(s.find("Elsewhere", None).unwrap(), Found::One(_)));
    assert_eq!(s.list(None).unwrap().len(), 3);
}

#[test]
fn branching_copies_a_prefix_and_leaves_the_original() {
    let (dir, s) = store();
    let mut w = s.create(dir.path(), "e", "m", None).unwrap();
    w.append(&every_block()).unwrap();
    let id = w.id().to_owned();
    drop(w);
    let before = std::fs::read(path_of(&s, &id)).unwrap();
    let child = s.fork(&id, 3).unwrap();
    let l = s.load(&child).unwrap();
    assert_eq!(l.messages, every_block()[..3]);
    assert_eq!(l.meta.parent.as_deref(), Some(id.as_str()));
    assert_eq!(std::fs::read(path_of(&s, &id)).unwrap(), before);
}

#[test]
fn export_is_a_readable_transcript() {
    let (dir, s) = store();
    let mut w = s.create(dir.path(), "e", "m", None).unwrap();
    w.append(&every_block()).unwrap();
    let md = s.export_markdown(w.id()).unwrap();
    assert!(md.contains("## User\n\nFix the bug in src/lib.rs"));
    assert!(md.contains("**Tool call** `read_file`"));
    assert!(md.contains("**Tool error**"));
    assert!(md.contains("## Assistant\n\nDone."));
    let id = w.id().to_owned();
    drop(w);
    s.remove(&id).unwrap();
    assert!(matches!(s.remove(&id), Err(StoreError::NotFound { .. })));
}

#[test]
fn a_50_mb_session_loads() {
    let (dir, s) = store();
    let mut w = s.create(dir.path(), "e", "m", None).unwrap();
    let big = "x".repeat(50_000);
    let msgs: Vec<Message> =
        (0..1000)
            .map(|i| {
                if i % 2 == 0 {
                    Message::user(format!("{i} {big}"))
                } else {
                    Message::assistant(big.clone())
                }
            })
            .collect();
    w.append(&msgs).unwrap();
    let l = s.load(w.id()).unwrap();
    assert_eq!(l.messages.len(), 1000);
}

#[cfg(unix)]
#[test]
fn an_unwritable_directory_is_a_clear_error() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o500)).unwrap();
    let s = SessionStore::new(ro.join("sessions"));
    let r = s.create(dir.path(), "e", "m", None);
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o700)).unwrap();
    // root may write anyway; then there is nothing to refuse.
    if let Err(e) = r {
        assert!(matches!(e, StoreError::Io { .. }) && e.to_string().contains("sessions"), "{e}");
    }
}

#[test]
fn a_prompt_whose_turn_never_completed_is_kept_as_unanswered() {
    let (_d, s) = store();
    let cwd = std::path::Path::new("/ws");
    let mut w = s.create(cwd, "mock", "m", None).unwrap();
    let id = w.id().to_owned();
    w.pending(&Message::user("first question")).unwrap();
    w.append(&[Message::user("first question"), Message::assistant("first answer")]).unwrap();
    w.pending(&Message::user("the lost one")).unwrap();
    drop(w); // as if octo were killed here
    let loaded = s.load(&id).unwrap();
    assert_eq!(loaded.messages.len(), 2, "the unanswered prompt is not in the history");
    assert_eq!(loaded.unanswered.map(|m| m.text()).as_deref(), Some("the lost one"));
    let listed = &s.list(None).unwrap()[0];
    assert_eq!(listed.turns, 1, "only committed prompts count as turns");

    // A turn that failed says so, and its prompt is still offered.
    let (_, mut w) = s.resume(&id).unwrap();
    w.pending(&Message::user("a failing one")).unwrap();
    w.rolled_back("failed").unwrap();
    drop(w);
    assert_eq!(s.load(&id).unwrap().unanswered.map(|m| m.text()).as_deref(), Some("a failing one"));

    // Once a round is committed, nothing is pending.
    let (_, mut w) = s.resume(&id).unwrap();
    w.pending(&Message::user("answered")).unwrap();
    w.append(&[Message::user("answered"), Message::assistant("yes")]).unwrap();
    drop(w);
    let loaded = s.load(&id).unwrap();
    assert_eq!(loaded.unanswered, None);
    assert_eq!(loaded.messages.len(), 4);
}

#[cfg(unix)]
#[test]
fn session_files_and_their_directory_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let s = SessionStore::new(d.path().join("deep/sessions"));
    let w = s.create(std::path::Path::new("/ws"), "mock", "m", None).unwrap();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(w.path()), 0o600);
    assert_eq!(mode(&d.path().join("deep/sessions")), 0o700);
    assert_eq!(mode(&d.path().join("deep")), 0o700);
}

#[test]
fn what_a_session_spent_is_the_last_record_and_impossible_costs_are_unknown() {
    let (dir, s) = store();
    let mut w = s.create(dir.path(), "anthropic", "claude-sonnet-4-5", None).unwrap();
    w.append(&[Message::user("hi"), Message::assistant("Hello.")]).unwrap();
    let usage = |n: u64| octo_agent::Usage { input_tokens: n, output_tokens: n, ..Default::default() };
    w.record(&octo_session::Record::Spent { usage: usage(5), cost_usd: Some(0.5) }).unwrap();
    w.record(&octo_session::Record::Spent { usage: usage(9), cost_usd: Some(0.75) }).unwrap();
    let id = w.id().to_owned();
    drop(w);
    assert_eq!(s.load(&id).unwrap().spent, (usage(9), Some(0.75)));
    for bad in [json!(-1.0), json!(1e300)] {
        let path = dir.path().join("sessions").join(format!("{id}.jsonl"));
        let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        writeln!(f, "{}", json!({"type": "spent", "usage": {"input_tokens": 1}, "cost_usd": bad})).unwrap();
        let spent = s.load(&id).unwrap().spent;
        assert_eq!(spent.1, None, "{bad}");
    }
}
