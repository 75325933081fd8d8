//! A real model end to end: the built-in local model (the test GGUF from `OCTO_TEST_GGUF`, run
//! by the `octo-engine` program) on two of octo's own tasks. The point is that the run completes
//! and reports, not its score: the test model is too small to call tools.

use super::common::{eval, own_tasks, records};
use octo_testkit::TempHome;
use std::path::PathBuf;

#[test]
fn the_local_model_runs_two_own_tasks_to_a_report() {
    let Some(model) = std::env::var_os("OCTO_TEST_GGUF").map(PathBuf::from).filter(|p| p.is_file()) else {
        assert!(std::env::var_os("CI").is_none(), "OCTO_TEST_GGUF must name the test GGUF in CI");
        eprintln!("\n*** SKIPPED: set OCTO_TEST_GGUF to run the local model ***\n");
        return;
    };
    let engine = assert_cmd::cargo::cargo_bin("octo-engine");
    if !engine.is_file() {
        assert!(std::env::var_os("CI").is_none(), "octo-engine is not built: {}", engine.display());
        eprintln!("\n*** SKIPPED: build octo-engine (cargo build -p octo-cli) to run the local model ***\n");
        return;
    }
    let home = TempHome::new().unwrap();
    let out = home.workspace().join("local.jsonl");
    let mut c = eval(&home);
    c.env("OCTO_ENGINE", &engine)
        .args(["run", "--endpoint", "local", "--model"])
        .arg(&model)
        .args(["--only", "python/median", "--only", "shell/backup", "--attempts", "1", "--max-turns", "2"])
        .args(["--timeout", "300", "--suite"])
        .arg(own_tasks())
        .arg("--out")
        .arg(&out)
        .timeout(std::time::Duration::from_secs(900));
    let assert = c.assert().success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(stdout.contains("octo local:") && stdout.contains("all"), "{stdout}");
    let recs = records(&out);
    assert_eq!(recs.len(), 2, "{recs:?}");
    for r in &recs {
        assert!(r["error_kind"].is_null(), "the local model could not be run: {r}");
        assert_eq!(r["attempts"].as_array().map(Vec::len), Some(1), "{r}");
    }
}
