//! Real servers: an edit that breaks the code gets the error in its result, a fix clears it,
//! definition and references answer, a crashed server is started again.

use super::*;
use octo_agent::{ToolContext, ToolExecutor};
use octo_lsp::LspTool;
use serde_json::json;

async fn ask(lsp: &Arc<Lsp>, input: serde_json::Value) -> String {
    let out = LspTool(Arc::clone(lsp)).execute(input, &ToolContext::detached("/")).await;
    assert!(!out.is_error, "{}", out.text_content());
    out.text_content()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clangd_reports_an_edit_error_and_its_fix_and_answers_where_things_are() {
    let Some(clangd) = server(&["clangd"]) else { return };
    let good = "int add(int a, int b) { return a + b; }\nint main(void) { return add(1, 2); }\n";
    let (_dir, root) = workspace(&[("main.c", good)]);
    let lsp = lsp(&root, vec![clangd], patient(), true);
    let file = root.join("main.c");
    assert_eq!(lsp.after_edit(&file).await, None, "clean code: nothing to add");
    std::fs::write(&file, "int add(int a, int b) { return a + b; }\nint main(void) { return add(1, y); }\n")
        .unwrap();
    let got = lsp.after_edit(&file).await.expect("the error is reported");
    assert!(got.contains("main.c:2:32 error") && got.contains("'y'"), "{got}");
    std::fs::write(&file, good).unwrap();
    assert_eq!(lsp.after_edit(&file).await, None, "the fix clears it");

    let def =
        ask(&lsp, json!({"operation": "definition", "path": "main.c", "line": 2, "symbol": "add"})).await;
    assert!(def.starts_with("main.c:1:5  int add(int a, int b)"), "{def}");
    let refs =
        ask(&lsp, json!({"operation": "references", "path": "main.c", "line": 1, "symbol": "add"})).await;
    assert_eq!(refs.lines().count(), 2, "{refs}");
    let syms = ask(&lsp, json!({"operation": "document_symbols", "path": "main.c"})).await;
    assert!(syms.contains("function add") && syms.contains("function main"), "{syms}");
    let hover = ask(&lsp, json!({"operation": "hover", "path": "main.c", "line": 2, "symbol": "add"})).await;
    assert!(hover.contains("int add(int a, int b)"), "{hover}");
    let status = lsp.status();
    assert_eq!(status[0].state, "running", "{status:?}");
    lsp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyright_reports_a_type_error_and_finds_a_definition_in_another_file() {
    let Some(pyright) = server(&["basedpyright", "pyright"]) else { return };
    let (_dir, root) = workspace(&[
        ("pyproject.toml", "[tool.basedpyright]\ntypeCheckingMode = \"basic\"\n"),
        ("util.py", "def helper(n: int) -> int:\n    return n + 1\n"),
        ("app.py", "from util import helper\n\nprint(helper(1))\n"),
    ]);
    // In the sandbox, as sessions run it.
    let lsp = lsp(&root, vec![pyright], patient(), true);
    let app = root.join("app.py");
    std::fs::write(&app, "from util import helper\n\ncount: int = helper(\"one\")\n").unwrap();
    let got = lsp.after_edit(&app).await.expect("the type error is reported");
    assert!(got.contains("app.py:3:") && got.contains(" error "), "{got}");
    std::fs::write(&app, "from util import helper\n\ncount: int = helper(1)\n").unwrap();
    assert_eq!(lsp.after_edit(&app).await, None, "the fix clears it");
    let def =
        ask(&lsp, json!({"operation": "definition", "path": "app.py", "line": 3, "symbol": "helper"})).await;
    assert!(def.starts_with("util.py:1:5"), "{def}");
    // Still alive past its parent-process probe (every 3 s in vscode-languageserver), which a
    // sandboxed server given octo's process id fails — and then exits.
    tokio::time::sleep(std::time::Duration::from_secs(7)).await;
    std::fs::write(&app, "from util import helper\n\ncount: int = helper(\"two\")\n").unwrap();
    let again = lsp.after_edit(&app).await.expect("the server is still there");
    assert!(again.contains("app.py:3:"), "{again}");
    assert_eq!(lsp.status()[0].state, "running", "{:?}", lsp.status());
    lsp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_server_is_started_again() {
    let Some(clangd) = server(&["clangd"]) else { return };
    let (dir, root) = workspace(&[("main.c", "int main(void) { return 0; }\n")]);
    let pids = dir.path().join("pids");
    let program = clangd.program.clone().unwrap();
    let mut wrapped = scripted(
        dir.path(),
        "clangd-wrapped",
        &format!("echo $$ >> '{}'\nexec '{}'", pids.display(), program.display()),
        &["c"],
    );
    wrapped.name = "clangd".into();
    let lsp = lsp(&root, vec![wrapped], patient(), false);
    let file = root.join("main.c");
    assert_eq!(lsp.after_edit(&file).await, None);
    let first: i32 = std::fs::read_to_string(&pids).unwrap().trim().parse().unwrap();
    // SAFETY-free: a plain kill of the server we started.
    std::process::Command::new("kill").arg("-9").arg(first.to_string()).status().unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(lsp.status()[0].state.starts_with("stopped"), "{:?}", lsp.status());
    std::fs::write(&file, "int main(void) { return z; }\n").unwrap();
    let mut got = lsp.after_edit(&file).await;
    for _ in 0..5 {
        if got.as_deref().is_some_and(|g| g.contains(" error ")) {
            break;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        got = lsp.after_edit(&file).await;
    }
    assert!(got.as_deref().is_some_and(|g| g.contains("main.c:1:25 error")), "{got:?}");
    assert_eq!(std::fs::read_to_string(&pids).unwrap().lines().count(), 2, "started once more");
    lsp.shutdown().await;
}
