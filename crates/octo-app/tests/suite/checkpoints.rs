//! Checkpoints in whole sessions: whatever a turn changed — through a shell command, octo's
//! file tools or a sub-agent — is undone by `/rewind`, the conversation goes back with a branch
//! kept, and it works after the session is resumed.

use octo_app::commands::{parse, Parsed, Reply, SessionCommand};
use octo_app::{Launch, Launcher, Mode, Resume, Session, SessionOptions};
use octo_testkit::anthropic::Reply as Answer;
use octo_testkit::scenario::{Built, Scenario};
use octo_testkit::{MockLlm, Scripted, TempHome};
use serde_json::{json, Value};
use std::path::PathBuf;

fn has_git() -> bool {
    std::process::Command::new("git").arg("--version").output().is_ok_and(|o| o.status.success())
}

async fn setup(replies: Vec<Scripted>) -> (TempHome, Launcher, PathBuf, MockLlm) {
    let Built { home, llm, .. } = Scenario::new().replies(replies).build().await;
    let l = super::common::launcher(&home);
    let ws = home.workspace();
    (home, l, ws, llm)
}

fn start(l: &Launcher, ws: &std::path::Path, resume: Resume) -> Session {
    let options = SessionOptions { save: true, mode: Some(Mode::Auto), ..SessionOptions::default() };
    l.start(Launch { workspace: Some(ws.to_path_buf()), options, resume, ..Launch::default() }).unwrap()
}

fn command(line: &str) -> SessionCommand {
    match parse(line) {
        Parsed::Command(c) => c,
        other => panic!("{line}: {other:?}"),
    }
}

fn calls(list: &[(&str, &str, Value)]) -> Scripted {
    let mut r = Answer::new();
    for (id, tool, input) in list {
        r = r.tool_use(*id, *tool, input.clone());
    }
    Scripted::sse(r.sse())
}

fn answer(t: &str) -> Scripted {
    Scripted::sse(Answer::new().text(t).sse())
}

async fn plan(s: &Session, l: &Launcher, line: &str) -> octo_app::RewindPlan {
    match s.command(l, command(line)).await.unwrap() {
        Reply::Rewind(p) => *p,
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_agents_and_a_shell_commands_changes_are_undone_and_named() {
    if !has_git() {
        return;
    }
    let task = json!({"subagent_type": "general", "description": "write", "prompt": "write child.txt"});
    let (_tmp, l, ws, _llm) = setup(vec![
        calls(&[("t1", "task", task)]),
        calls(&[("c1", "write_file", json!({"path": "child.txt", "content": "from the child"}))]),
        answer("Child done."),
        calls(&[("t2", "terminal", json!({"command": "printf shell > shell.txt && rm keep.txt"}))]),
        answer("All done."),
    ])
    .await;
    std::fs::write(ws.join("keep.txt"), "precious").unwrap();
    let s = start(&l, &ws, Resume::New);
    assert_eq!(s.run("do the work").await.unwrap().answer, "All done.");
    assert!(ws.join("child.txt").exists() && ws.join("shell.txt").exists() && !ws.join("keep.txt").exists());
    let p = plan(&s, &l, "/rewind 1 code").await;
    let names: Vec<_> =
        p.files.iter().map(|f| f.path.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["child.txt", "keep.txt", "shell.txt"], "{p:?}");
    let child = p.files.iter().find(|f| f.path.ends_with("child.txt")).unwrap();
    assert!(child.by.as_deref().is_some_and(|b| b.starts_with("sub-agent")), "named: {child:?}");
    let text = Reply::Rewind(Box::new(p.clone())).text();
    assert!(text.contains("changed by sub-agent"), "{text}");
    let report = s.conversation().rewind(&p, &[]).await.unwrap();
    assert_eq!(report.restored.len(), 3, "{report:?}");
    assert!(!ws.join("child.txt").exists() && !ws.join("shell.txt").exists());
    assert_eq!(std::fs::read_to_string(ws.join("keep.txt")).unwrap(), "precious");
    assert_eq!(report.turns, 0, "code only: the conversation stays");
    assert_eq!(s.conversation().turns(10).await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_conversation_goes_back_with_a_branch_kept_after_a_resume() {
    if !has_git() {
        return;
    }
    let (_tmp, l, ws, _llm) = setup(vec![
        calls(&[("a1", "write_file", json!({"path": "a.txt", "content": "one"}))]),
        answer("Wrote one."),
        calls(&[("a1", "write_file", json!({"path": "a.txt", "content": "two"}))]),
        answer("Wrote two."),
    ])
    .await;
    let s = start(&l, &ws, Resume::New);
    s.run("write one").await.unwrap();
    s.run("write two").await.unwrap();
    let id = s.conversation().id().unwrap();
    drop(s);
    // Resumed (`octo -c`): the same call id in both turns does not confuse anything.
    let s = start(&l, &ws, Resume::Id(id.clone()));
    let turns = s.conversation().turns(10).await.unwrap();
    assert_eq!(
        turns.iter().map(|t| (t.back, t.files.clone())).collect::<Vec<_>>(),
        [(1, vec!["a.txt".to_owned()]), (2, vec!["a.txt".to_owned()])]
    );
    let p = plan(&s, &l, "/rewind 1").await;
    let report = s.conversation().rewind(&p, &[]).await.unwrap();
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "one");
    assert_eq!(report.turns, 1);
    let fork = report.fork.clone().expect("the old conversation is kept as a branch");
    let store = l.sessions();
    assert_eq!(store.load(&id).unwrap().messages.len(), 4, "the session file is loadable and rewound");
    assert_eq!(store.load(&fork).unwrap().messages.len(), 8, "the branch has both turns");
    assert_eq!(s.conversation().history().await.unwrap().len(), 4);
    // Going back once more takes the files to before the first turn.
    let p = plan(&s, &l, "/rewind").await;
    s.conversation().rewind(&p, &[]).await.unwrap();
    assert!(!ws.join("a.txt").exists());
    assert!(s.conversation().history().await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_store_turns_checkpoints_off_with_a_notice_and_the_turn_goes_on() {
    if !has_git() {
        return;
    }
    let (tmp, l, ws, _llm) = setup(vec![
        calls(&[("a1", "write_file", json!({"path": "a.txt", "content": "one"}))]),
        answer("Wrote it."),
    ])
    .await;
    let canonical = std::fs::canonicalize(&ws).unwrap();
    let store =
        tmp.home().join("checkpoints").join(octo_app::session_store::checkpoint::workspace_id(&canonical));
    std::fs::create_dir_all(&store).unwrap();
    std::fs::write(store.join("HEAD"), "not a ref").unwrap();
    let s = start(&l, &ws, Resume::New);
    let mut rx = s.subscribe();
    assert_eq!(s.run("write a").await.unwrap().answer, "Wrote it.");
    s.settle().await;
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "one", "the turn went on");
    let mut notices = Vec::new();
    while let Ok(e) = rx.try_recv() {
        if let octo_app::AgentEvent::Notice { message } = e {
            notices.push(message);
        }
    }
    assert!(
        notices.iter().any(|n| n.contains("cannot be used") && n.contains("checkpoints are off")),
        "{notices:?}"
    );
    let p = plan(&s, &l, "/rewind 1").await;
    assert!(p.note.as_deref().is_some_and(|n| n.contains("cannot be restored")), "{p:?}");
    assert_eq!(
        std::fs::read_to_string(store.join("HEAD")).unwrap(),
        "not a ref",
        "the store was not repaired by deleting"
    );
}

/// Runs `git` in `ws` (no user config needed).
fn git(ws: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(ws)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_sandboxed_rm_and_git_clean_delete_in_accept_edits_comes_back_with_rewind() {
    let (_tmp, l, ws, _llm) = setup(vec![
        calls(&[("t1", "terminal", json!({"command": "rm app/README.md && git clean -fd app"}))]),
        answer("Cleaned."),
    ])
    .await;
    git(&ws, &["init", "-q"]);
    std::fs::write(ws.join(".gitignore"), "app/build/\n").unwrap();
    std::fs::create_dir_all(ws.join("app")).unwrap();
    std::fs::write(ws.join("app/README.md"), "# tracked\n").unwrap();
    git(&ws, &["add", "."]);
    git(&ws, &["commit", "-qm", "first"]);
    std::fs::write(ws.join("app/notes.txt"), "untracked notes").unwrap();
    std::fs::create_dir_all(ws.join("app/scratch")).unwrap();
    std::fs::write(ws.join("app/scratch/draft.txt"), "untracked draft").unwrap();
    std::fs::create_dir_all(ws.join("app/build")).unwrap();
    std::fs::write(ws.join("app/build/out.bin"), "ignored").unwrap();
    // In a folder: without a namespace nothing at the workspace's root can be removed.
    // Accept-edits runs the command sandboxed without asking where the sandbox holds it.
    let mut policy =
        octo_tools::shell::sandbox::Policy::new(octo_tools::shell::sandbox::Mode::WorkspaceWrite, &ws);
    policy.protected_entries = vec!["AGENTS.md".into()];
    let asks = octo_tools::shell::sandbox::Sandbox::new(policy).accept_edits_gap().is_some();
    let mode = if asks { Mode::Auto } else { Mode::AcceptEdits };
    let options = SessionOptions { save: true, mode: Some(mode), ..SessionOptions::default() };
    let s = l.start(Launch { workspace: Some(ws.clone()), options, ..Launch::default() }).unwrap();
    assert_eq!(s.run("clean up").await.unwrap().answer, "Cleaned.");
    assert!(!ws.join("app/README.md").exists() && !ws.join("app/notes.txt").exists());
    assert!(!ws.join("app/scratch/draft.txt").exists());
    let p = plan(&s, &l, "/rewind 1 code").await;
    s.conversation().rewind(&p, &[]).await.unwrap();
    assert_eq!(std::fs::read_to_string(ws.join("app/README.md")).unwrap(), "# tracked\n");
    assert_eq!(std::fs::read_to_string(ws.join("app/notes.txt")).unwrap(), "untracked notes");
    assert_eq!(std::fs::read_to_string(ws.join("app/scratch/draft.txt")).unwrap(), "untracked draft");
    // `-fd` keeps ignored files; they are never checkpointed (see checkpoints.md).
    assert_eq!(std::fs::read_to_string(ws.join("app/build/out.bin")).unwrap(), "ignored");
}
