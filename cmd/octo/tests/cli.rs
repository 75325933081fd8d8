//! The `octo` binary as a process.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use assert_cmd::Command;
use predicates::prelude::*;

fn octo() -> Command {
    let mut c = Command::cargo_bin("octo").unwrap();
    c.env_remove("OCTO_HOME").env("NO_COLOR", "1");
    c
}

#[test]
fn version_prints_name_and_version() {
    octo().arg("--version").assert().success().stdout(format!("octo {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn help_says_what_octo_is_and_what_works() {
    octo()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("AI coding agent for the terminal"))
        .stdout(predicate::str::contains("agent core only"))
        .stdout(predicate::str::contains("--version"));
}

#[test]
fn unknown_flag_is_a_usage_error() {
    octo()
        .arg("--frobnicate")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unexpected argument '--frobnicate'"));
}

#[test]
fn bare_run_explains_the_status_without_failing() {
    octo().assert().success().stderr(predicate::str::contains("not available yet"));
}
