//! Task formats: Aider's polyglot layout in each of its languages, octo's own, and folders that
//! are neither quite (skipped and named, the rest still read).

use octo_eval::suite::Suite;
use std::path::Path;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// An exercise as the polyglot benchmark lays it out.
fn exercise(root: &Path, language: &str, solution: &str, test: &str, example: &str, test_text: &str) {
    let dir = root.join(language).join("exercises/practice/leap");
    write(&dir.join(".docs/instructions.md"), "Tell whether a year is a leap year.\n");
    write(&dir.join(".docs/instructions.append.md"), "Mind the centuries.\n");
    write(
        &dir.join(".meta/config.json"),
        &format!(
            r#"{{"authors": ["x"], "files": {{"solution": ["{solution}"], "test": ["{test}"], "example": ["{example}"]}}, "blurb": "b"}}"#
        ),
    );
    write(&dir.join(solution), "// stub\n");
    write(&dir.join(test), test_text);
    write(&dir.join(example), "// the reference solution\n");
}

#[test]
fn the_polyglot_layout_is_read_in_each_language_and_a_broken_exercise_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    exercise(root, "python", "leap.py", "leap_test.py", ".meta/example.py", "def test(): pass\n");
    exercise(
        root,
        "rust",
        "src/lib.rs",
        "tests/leap.rs",
        ".meta/example.rs",
        "#[test] #[ignore] fn t() {}\n",
    );
    exercise(root, "go", "leap.go", "leap_test.go", ".meta/example.go", "package leap\n");
    exercise(
        root,
        "javascript",
        "leap.js",
        "leap.spec.js",
        ".meta/proof.ci.js",
        "test('a', () => {});\nxtest('b', () => {});\n",
    );
    exercise(
        root,
        "java",
        "src/main/java/Leap.java",
        "src/test/java/LeapTest.java",
        ".meta/src/reference/java/Leap.java",
        "@Disabled(\"Remove to run test\")\n@Test\n",
    );
    exercise(root, "cpp", "leap.cpp", "leap_test.cpp", ".meta/example.cpp", "TEST_CASE(\"x\") {}\n");
    write(&root.join("python/exercises/practice/broken/.meta/config.json"), "{not json");

    let suite = Suite::load(root).unwrap();
    let ids: Vec<&str> = suite.tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids.len(), 6, "{ids:?}");
    assert_eq!(suite.skipped.len(), 1);
    assert!(
        suite.skipped[0].0.ends_with("broken") && suite.skipped[0].1.contains("not an exercise config"),
        "{:?}",
        suite.skipped
    );
    for t in &suite.tasks {
        let language = t.id.split('/').next().unwrap();
        assert_eq!(t.language, language);
        assert!(t.prompt.contains("leap year") && t.prompt.contains("Mind the centuries"), "{}", t.prompt);
        assert!(t.withheld.iter().any(|w| w == Path::new(".meta")), "{t:?}");
        assert_eq!(t.hidden.len(), 1);
        assert_eq!(t.solution.len(), 1, "the example is the reference solution");
        assert!(!t.verify.is_empty());
    }
    let by = |l: &str| suite.tasks.iter().find(|t| t.language == l).unwrap();
    assert!(by("rust").verify.contains("--include-ignored"));
    assert!(by("python").prompt.contains("leap.py"));
    assert!(by("java").prompt.contains("src/main/java/Leap.java"));

    // The agent's copy has no tests; the verify copy has them, turned on.
    let js = by("javascript");
    let work = tmp.path().join("work");
    octo_eval::workdir::prepare(js, &work).unwrap();
    assert!(
        work.join("leap.js").is_file() && !work.join("leap.spec.js").exists() && !work.join(".meta").exists()
    );
    let check = tmp.path().join("check");
    octo_eval::workdir::verify_copy(js, &work, &check).unwrap();
    let tests = std::fs::read_to_string(check.join("leap.spec.js")).unwrap();
    assert!(!tests.contains("xtest(") && tests.matches("test(").count() == 2, "{tests}");
    let java = by("java");
    let (work, check) = (tmp.path().join("jw"), tmp.path().join("jc"));
    octo_eval::workdir::prepare(java, &work).unwrap();
    octo_eval::workdir::verify_copy(java, &work, &check).unwrap();
    assert!(!std::fs::read_to_string(check.join("src/test/java/LeapTest.java"))
        .unwrap()
        .contains("@Disabled"));
}

#[test]
fn octo_tasks_that_cannot_be_read_are_skipped_and_named() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write(&root.join("good/task.toml"), "prompt = \"fix it\"\nverify = \"true\"\n");
    write(&root.join("good/repo/a.txt"), "a");
    write(&root.join("no-verify/task.toml"), "prompt = \"fix it\"\n");
    write(&root.join("no-verify/repo/a.txt"), "a");
    write(&root.join("no-repo/task.toml"), "prompt = \"x\"\nverify = \"true\"\n");
    write(&root.join("bad-timeout/task.toml"), "prompt = \"x\"\nverify = \"true\"\ntimeout = -1\n");
    write(&root.join("bad-timeout/repo/a.txt"), "a");
    write(&root.join("unknown-key/task.toml"), "prompt = \"x\"\nverify = \"true\"\nverfy = 1\n");
    let suite = Suite::load(root).unwrap();
    assert_eq!(suite.tasks.len(), 1);
    let skipped: Vec<(&str, &str)> = suite.skipped.iter().map(|(i, w)| (i.as_str(), w.as_str())).collect();
    assert_eq!(skipped.len(), 4, "{skipped:?}");
    let why = |id: &str| skipped.iter().find(|(i, _)| *i == id).unwrap().1;
    assert!(why("no-verify").contains("verify"), "{skipped:?}");
    assert!(why("no-repo").contains("repo/"));
    assert!(why("bad-timeout").contains("timeout"));
    assert!(why("unknown-key").contains("verfy"));
    assert!(Suite::load(&root.join("good/repo")).is_err(), "a folder without tasks is an error");
}
