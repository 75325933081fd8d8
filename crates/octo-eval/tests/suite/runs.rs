//! Runs of the binary against a scripted model (and a script as an outside agent): full marks
//! with the known solutions, none without, a second attempt that uses the test output, hanging
//! verify commands, results resumed, and agents that try to cheat.

use super::common::{eval, home_for, own_tasks, point, records, run, writes};
use octo_testkit::{MockLlm, Scripted};
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;

fn task_ids() -> Vec<String> {
    let mut ids: Vec<String> =
        octo_eval::suite::Suite::load(&own_tasks()).unwrap().tasks.into_iter().map(|t| t.id).collect();
    ids.sort();
    ids
}

#[tokio::test(flavor = "multi_thread")]
async fn the_own_tasks_score_full_marks_with_their_solutions_and_none_with_the_start() {
    let llm = MockLlm::start().await;
    let ids = task_ids();
    assert_eq!(ids.len(), 12, "{ids:?}");
    let script: Vec<Scripted> =
        ids.iter().flat_map(|id| writes(&own_tasks().join(id).join("solution"))).collect();
    llm.script_anthropic(script).await;
    let home = home_for(&llm);
    let out = home.workspace().join("solved.jsonl");
    let mut c = eval(&home);
    c.args(["run", "--suite"]).arg(own_tasks()).args(["-j", "1", "--out"]).arg(&out);
    run(c).await.success().stdout(predicate::str::contains("all").and(predicate::str::contains("100.0%")));
    let recs = records(&out);
    assert_eq!(recs.len(), 12);
    for r in &recs {
        assert_eq!(
            (r["passed"].as_bool(), r["attempts"].as_array().map(Vec::len)),
            (Some(true), Some(1)),
            "{r}"
        );
        assert_eq!(r["turns"], 2, "{r}");
        assert!(r["cost_usd"].as_f64().unwrap() > 0.0, "{r}");
    }
    let md = std::fs::read_to_string(out.with_extension("md")).unwrap();
    assert!(md.contains("| python/median | pass@1 |"), "{md}");

    // The start's own (wrong) code written back: nothing passes, in either attempt.
    let python: Vec<&String> = ids.iter().filter(|i| i.starts_with("python/")).collect();
    let script: Vec<Scripted> = python
        .iter()
        .flat_map(|id| {
            let start = own_tasks().join(id).join("repo");
            [writes(&start), writes(&start)].concat()
        })
        .collect();
    let llm = MockLlm::start().await;
    llm.script_anthropic(script).await;
    point(&home, &llm);
    let out = home.workspace().join("wrong.jsonl");
    let mut c = eval(&home);
    c.args(["run", "--only", "python/", "--suite"]).arg(own_tasks()).arg("--out").arg(&out);
    let assert = run(c).await.success();
    let recs = records(&out);
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(stdout.contains("0.0%"), "{stdout}\n{recs:#?}");
    assert_eq!(recs.len(), python.len());
    assert!(recs.iter().all(|r| r["passed"] == false && r["attempts"].as_array().unwrap().len() == 2));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_attempt_sees_the_test_output_and_the_tests_stay_hidden() {
    let llm = MockLlm::start().await;
    let task = own_tasks().join("python/roman");
    llm.script_anthropic([writes(&task.join("repo")), writes(&task.join("solution"))].concat()).await;
    let home = home_for(&llm);
    let out = home.workspace().join("r.jsonl");
    let mut c = eval(&home);
    c.args(["run", "--only", "python/roman", "--keep", "--suite"]).arg(own_tasks()).arg("--out").arg(&out);
    let assert = run(c).await.success();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    let recs = records(&out);
    assert_eq!(recs[0]["attempts"][0]["passed"], false);
    assert_eq!(recs[0]["attempts"][1]["passed"], true, "{}", recs[0]);
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(stdout.contains("0.0%") && stdout.contains("100.0%"), "pass@1 0, pass@2 100: {stdout}");
    let bodies = llm.request_bodies().await;
    let second = bodies[2]["messages"].to_string();
    assert!(second.contains("hidden tests still fail") && second.contains("NotImplementedError"), "{second}");
    // The agent's folder never held the hidden tests.
    let kept =
        stderr.lines().find_map(|l| l.strip_prefix("octo-eval: the tasks' folders are kept in ")).unwrap();
    let work = Path::new(kept.trim()).join("python_roman/work");
    assert!(work.join("roman.py").is_file());
    assert!(!work.join("tests").exists(), "hidden tests in the agent's folder");
    // Under octo's home (not inside the repository the run started in), a repository of its own.
    assert!(work.starts_with(home.home().join("eval-work")), "{}", work.display());
    let top = std::process::Command::new("git")
        .current_dir(&work)
        .args(["rev-parse", "--show-toplevel"])
        .output()
        .unwrap();
    assert_eq!(
        std::fs::canonicalize(String::from_utf8_lossy(&top.stdout).trim()).unwrap(),
        std::fs::canonicalize(&work).unwrap(),
        "git in the task sees the task"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_outside_agent_is_scored_and_one_that_cheats_fails_within_its_sandbox() {
    let llm = MockLlm::start().await;
    let home = home_for(&llm);
    let solution = own_tasks().join("python/roman/solution/roman.py");
    let out = home.workspace().join("cmd.jsonl");
    let mut c = eval(&home);
    let agent =
        format!("cp '{}' roman.py && printf '%s' {{prompt}} > ../prompt-seen.txt", solution.display());
    c.args(["run", "--only", "python/roman", "--no-octo", "--agent-cmd", &agent, "--suite"])
        .arg(own_tasks())
        .arg("--out")
        .arg(&out);
    run(c).await.success().stdout(predicate::str::contains("cmd: cp"));
    assert_eq!(records(&out)[0]["passed"], true);
    assert!(llm.request_bodies().await.is_empty(), "octo's model is not used");

    // An agent that deletes the tests it was shown and writes outside its folder.
    let canary =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("octo-eval-canary-{}", std::process::id()));
    let _ = std::fs::remove_file(&canary);
    let out = home.workspace().join("cheat.jsonl");
    let mut c = eval(&home);
    let agent = format!(": {{prompt}}; rm -rf tests; echo pwned > '{}'", canary.display());
    c.args([
        "run",
        "--only",
        "python/median",
        "--attempts",
        "1",
        "--no-octo",
        "--agent-cmd",
        &agent,
        "--suite",
    ])
    .arg(own_tasks())
    .arg("--out")
    .arg(&out);
    run(c).await.success();
    assert_eq!(records(&out)[0]["passed"], false, "the hidden tests came back and fail");
    if octo_eval::verify::sandbox_for(home.workspace().as_path()).is_active() {
        assert!(!canary.exists(), "the sandbox let the agent write outside its folder");
    }
}

/// A suite of one task whose verify command is `verify`.
fn one_task_suite(dir: &Path, verify: &str, timeout: u32) {
    std::fs::create_dir_all(dir.join("t/repo")).unwrap();
    std::fs::write(dir.join("t/repo/a.txt"), "x\n").unwrap();
    std::fs::write(
        dir.join("t/task.toml"),
        format!("prompt = \"do it\"\nverify = \"{verify}\"\ntimeout = {timeout}\n"),
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hanging_verify_is_killed_at_its_limit_and_scored_as_a_failure() {
    let llm = MockLlm::start().await;
    let home = home_for(&llm);
    let suite = home.workspace().join("hang");
    one_task_suite(&suite, "sleep 30", 1);
    let out = home.workspace().join("h.jsonl");
    let mut c = eval(&home);
    c.args(["run", "--attempts", "1", "--no-octo", "--agent-cmd", ": {prompt}", "--suite"])
        .arg(&suite)
        .arg("--out")
        .arg(&out);
    run(c).await.success();
    let r = &records(&out)[0];
    // `sleep 30` exits 0: a failure means it was killed at its limit, not waited out.
    assert_eq!(r["passed"], false);
    assert!(r["error_kind"].is_null(), "a failure, not an error: {r}");
    assert!(r["attempts"][0]["verify"].as_str().unwrap().contains("killed after 1 s"), "{r}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_endpoint_failure_is_an_error_resumed_later_and_another_suites_file_is_refused() {
    let llm = MockLlm::start().await;
    let home = home_for(&llm);
    let currency = own_tasks().join("python/currency/solution");
    let median = own_tasks().join("python/median/solution");
    let mut script = writes(&currency);
    script.push(Scripted::json(
        500,
        &serde_json::json!({"type": "error", "error": {"type": "api_error", "message": "down"}}),
    ));
    llm.script_anthropic(script).await;
    let out = home.workspace().join("e.jsonl");
    let only = ["--only", "python/currency", "--only", "python/median", "--attempts", "1"];
    let mut c = eval(&home);
    c.args(["run"]).args(only).arg("--suite").arg(own_tasks()).arg("--out").arg(&out);
    run(c).await.success();
    let recs = records(&out);
    let by = |id: &str| recs.iter().find(|r| r["task"] == id).cloned().unwrap_or(Value::Null);
    assert_eq!(by("python/currency")["passed"], true);
    assert_eq!(by("python/median")["error_kind"], "endpoint", "{}", by("python/median"));
    assert_eq!(by("python/median")["passed"], false);
    assert_eq!(llm.request_bodies().await.len(), 3, "{recs:?}");

    // Resumed: only the task that met the error runs again.
    let llm = MockLlm::start().await;
    llm.script_anthropic(writes(&median)).await;
    point(&home, &llm);
    let mut c = eval(&home);
    c.args(["run"]).args(only).arg("--suite").arg(own_tasks()).arg("--resume").arg(&out);
    run(c)
        .await
        .success()
        .stderr(predicate::str::contains("1 task(s) already scored"))
        .stdout(predicate::str::contains("100.0%"));
    let bodies = llm.request_bodies().await;
    assert_eq!(bodies.len(), 2, "only median ran again");
    assert!(bodies[0]["messages"][0].to_string().contains("tests/test_stats.py"));

    // Another suite's results are refused, and the file is left as it was.
    let other = home.workspace().join("other");
    one_task_suite(&other, "true", 5);
    let before = std::fs::read_to_string(&out).unwrap();
    let mut c = eval(&home);
    c.args(["run", "--no-octo", "--agent-cmd", ": {prompt}", "--suite"])
        .arg(&other)
        .arg("--resume")
        .arg(&out);
    run(c).await.code(2).stderr(predicate::str::contains("another suite"));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), before);
}

/// A results file of `agent` where the tasks in `passed` passed (in the attempt given).
fn results_file(path: &Path, agent: &str, tasks: &[(&str, Option<usize>)]) {
    let mut text = format!(
        "{{\"type\":\"run\",\"suite_id\":\"s\",\"suite\":\"x\",\"agent\":\"{agent}\",\"attempts\":2,\"started\":0}}\n"
    );
    for (task, passed_in) in tasks {
        let attempts: Vec<Value> = (1..=passed_in.unwrap_or(2))
            .map(|n| serde_json::json!({"passed": Some(n) == *passed_in, "verify": "v", "output_tail": ""}))
            .collect();
        let record = serde_json::json!({"type": "task", "task": task, "language": "python", "attempts": attempts,
            "passed": passed_in.is_some(), "turns": 3, "tool_calls": 2, "tokens_in": 100, "tokens_out": 10,
            "tokens_cached": 0, "cost_usd": 0.5, "wall_secs": 2.0, "error_kind": null, "error": null});
        text.push_str(&format!("{record}\n"));
    }
    std::fs::write(path, text).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn runs_are_reported_compared_with_a_sign_test_and_charted() {
    let llm = MockLlm::start().await;
    let home = home_for(&llm);
    let (a, b) = (home.workspace().join("a.jsonl"), home.workspace().join("b.jsonl"));
    let names: Vec<String> = (0..10).map(|i| format!("t{i}")).collect();
    let a_tasks: Vec<(&str, Option<usize>)> = names.iter().map(|n| (n.as_str(), Some(1))).collect();
    let b_tasks: Vec<(&str, Option<usize>)> =
        names.iter().enumerate().map(|(i, n)| (n.as_str(), (i == 0).then_some(2))).collect();
    results_file(&a, "octo strong", &a_tasks);
    results_file(&b, "octo weak", &b_tasks);
    let mut c = eval(&home);
    c.arg("report").arg(&b);
    run(c).await.success().stdout(predicate::str::contains("all          10    0.0%   10.0%       0"));
    assert!(std::fs::read_to_string(b.with_extension("md"))
        .unwrap()
        .contains("| t0 | pass@2 | 2 | 3 | $0.5000 |"));
    let mut c = eval(&home);
    c.arg("compare").arg(&a).arg(&b);
    run(c).await.success().stdout(
        predicate::str::contains("9 won by A, 0 won by B, 1 passed by both")
            .and(predicate::str::contains("p = 0.004 (a difference unlikely to be chance)")),
    );
    let svg = home.workspace().join("runs.svg");
    let mut c = eval(&home);
    c.arg("chart").arg(&a).arg(&b).arg("-o").arg(&svg);
    run(c).await.success();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.starts_with("<svg") && text.contains("octo strong") && text.contains("pass@1: 100.0%"),
        "{text}"
    );
    assert!(!text.contains("<script"), "a chart runs nothing");
}

#[tokio::test(flavor = "multi_thread")]
async fn octo_and_another_agent_are_scored_on_the_same_tasks_in_one_run() {
    let llm = MockLlm::start().await;
    let task = own_tasks().join("python/roman");
    llm.script_anthropic(writes(&task.join("solution"))).await;
    let home = home_for(&llm);
    let out = home.workspace().join("both.jsonl");
    // The peer "agent" writes nothing useful: octo wins the task.
    let mut c = eval(&home);
    c.args([
        "run",
        "--only",
        "python/roman",
        "--attempts",
        "1",
        "--agent-cmd",
        "printf '%s' {prompt} > /dev/null",
    ])
    .arg("--suite")
    .arg(own_tasks())
    .arg("--out")
    .arg(&out);
    run(c).await.success().stdout(
        predicate::str::contains("A: octo the configured model")
            .and(predicate::str::contains("B: cmd: printf"))
            .and(predicate::str::contains("1 won by A, 0 won by B")),
    );
    let (octo, peer) = (home.workspace().join("both.octo.jsonl"), home.workspace().join("both.cmd1.jsonl"));
    assert_eq!(records(&octo)[0]["passed"], true);
    assert_eq!(records(&peer)[0]["passed"], false);
    assert!(records(&peer)[0]["cost_usd"].is_null(), "an outside agent's cost is not known");
    // Resuming needs one agent; nothing to score is refused.
    let mut c = eval(&home);
    c.args(["run", "--agent-cmd", ": {prompt}", "--resume"]).arg(&octo).arg("--suite").arg(own_tasks());
    run(c).await.code(2).stderr(predicate::str::contains("--resume continues one agent's run"));
    let mut c = eval(&home);
    c.args(["run", "--no-octo", "--suite"]).arg(own_tasks());
    run(c).await.code(2).stderr(predicate::str::contains("nothing to score"));
}
