//! Plugin marketplaces as Claude Code lays them out (`.claude-plugin/marketplace.json`): added
//! by octo from a folder or a git repository, installed from by `name@marketplace` (a folder
//! inside it, a `git-subdir` repository, an entry with `"strict": false` that declares the
//! plugin's parts), the ones Claude Code added read, and every bad source refused with a reason.

use octo_app::plugins::PluginError;
use octo_app::Home;
use serde_json::json;
use std::path::Path;
use std::process::Command;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
}

/// A marketplace folder: a plugin in a subfolder, one declared by its entry alone
/// (`strict: false`, a command file outside `commands/`), one in a git repository's subfolder,
/// one whose path leaves the marketplace, one with an npm source.
fn market(root: &Path, repo: &Path) {
    write(&root.join("plugins/alpha/commands/hi.md"), "---\ndescription: Say hi\n---\nSay hi.\n");
    write(&root.join("beta/prompts/x.md"), "---\ndescription: Do x\n---\nDo x.\n");
    write(&root.join("../outside/commands/o.md"), "---\ndescription: o\n---\nO.\n");
    write(&repo.join("tools/gamma/agents/g.md"), "---\nname: g\ndescription: G\n---\nYou are g.\n");
    git(repo, &["init", "-q"]);
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "x"]);
    let listing = json!({"name": "team-market", "owner": {"name": "T"}, "plugins": [
        {"name": "alpha", "source": "./plugins/alpha"},
        {"name": "beta", "source": "./beta", "strict": false, "commands": ["./prompts/x.md"]},
        {"name": "gamma", "source": {"source": "git-subdir", "url": format!("file://{}", repo.display()), "path": "tools/gamma"}},
        {"name": "escape", "source": "../outside"},
        {"name": "npmish", "source": {"source": "npm", "package": "x"}}
    ]});
    write(&root.join(".claude-plugin/marketplace.json"), &listing.to_string());
}

#[test]
fn plugins_install_from_a_marketplace_octo_added_and_bad_sources_say_why() {
    let t = tempfile::tempdir().unwrap();
    let (root, repo) = (t.path().join("m"), t.path().join("repo"));
    std::fs::create_dir_all(&repo).unwrap();
    market(&root, &repo);
    let home = Home::new(t.path().join("home"));

    // A marketplace folder given to `install` says what it is and what to do.
    let err = octo_app::plugins::install(&home, None, root.to_str().unwrap()).unwrap_err();
    assert!(matches!(err, PluginError::IsAMarketplace { .. }), "{err}");
    assert!(err.to_string().contains("octo plugin marketplace add"), "{err}");
    assert!(matches!(
        octo_app::plugins::install(&home, None, "alpha@team-market"),
        Err(PluginError::NoMarketplace(_))
    ));

    // Added by the path of its listing file, as Claude Code allows.
    let m =
        octo_app::marketplaces::add(&home, root.join(".claude-plugin/marketplace.json").to_str().unwrap())
            .unwrap();
    assert_eq!(m.name, "team-market");
    assert_eq!(octo_app::marketplaces::plugin_names(&m.location).len(), 5);
    assert!(matches!(
        octo_app::marketplaces::add(&home, root.to_str().unwrap()),
        Err(PluginError::MarketExists(..))
    ));

    let alpha = octo_app::plugins::install(&home, None, "alpha@team-market").unwrap();
    assert_eq!(octo_app::plugin_parts::summary(&alpha), "1 command");
    let beta = octo_app::plugins::install(&home, None, "beta@team-market").unwrap();
    assert_eq!(octo_app::plugin_parts::summary(&beta), "1 command", "its entry declares the command");
    let gamma = octo_app::plugins::install(&home, None, "gamma@team-market").unwrap();
    assert_eq!(octo_app::plugin_parts::summary(&gamma), "1 agent");
    assert!(home.root().join("plugins/gamma/agents/g.md").is_file());

    for (id, why) in [
        ("escape@team-market", "source"),
        ("npmish@team-market", "source"),
        ("nope@team-market", "lists no plugin"),
    ] {
        let err = octo_app::plugins::install(&home, None, id).unwrap_err();
        assert!(err.to_string().contains(why), "{id}: {err}");
    }
    assert!(!home.root().join("plugins/escape").exists());

    // Every installed plugin is on, by its own name.
    let mut notes = Vec::new();
    let mut on: Vec<String> = octo_app::plugins::all(&home, (None, None), &[], &mut notes)
        .into_iter()
        .filter(|l| l.enabled)
        .map(|l| l.plugin.name)
        .collect();
    on.sort();
    assert_eq!(on, ["alpha", "beta", "gamma"], "{notes:?}");

    octo_app::marketplaces::remove(&home, "team-market").unwrap();
    assert!(octo_app::marketplaces::list(&home, None).is_empty());
    assert!(root.join(".claude-plugin/marketplace.json").is_file(), "a folder marketplace is left in place");
    assert!(home.root().join("plugins/alpha").is_dir(), "its plugins stay installed");
}

#[test]
fn a_marketplace_is_cloned_from_git_and_claude_codes_marketplaces_are_read() {
    let t = tempfile::tempdir().unwrap();
    let (root, repo) = (t.path().join("m"), t.path().join("repo"));
    std::fs::create_dir_all(&repo).unwrap();
    market(&root, &repo);
    git(&root, &["init", "-q"]);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "x"]);
    let home = Home::new(t.path().join("home"));
    let m = octo_app::marketplaces::add(&home, &format!("file://{}", root.display())).unwrap();
    assert_eq!(m.location, home.root().join("marketplaces/team-market"));
    octo_app::plugins::install(&home, None, "alpha@team-market").unwrap();
    octo_app::marketplaces::remove(&home, "team-market").unwrap();
    assert!(!home.root().join("marketplaces/team-market").exists(), "octo's clone goes with it");

    // Not a marketplace: no listing, or a listing without a usable name.
    write(&t.path().join("bad/.claude-plugin/marketplace.json"), r#"{"name": "../x", "plugins": []}"#);
    for bad in [t.path().join("plain"), t.path().join("bad")] {
        std::fs::create_dir_all(&bad).unwrap();
        let err = octo_app::marketplaces::add(&home, bad.to_str().unwrap()).unwrap_err();
        assert!(matches!(err, PluginError::NotAMarketplace(_)), "{err}");
    }

    // Claude Code's own `claude plugin marketplace add` record is read (and never written).
    let claude = t.path().join(".claude");
    let known = json!({"team-market": {"source": {"source": "directory", "path": root.display().to_string()},
        "installLocation": root.display().to_string()}});
    write(&claude.join("plugins/known_marketplaces.json"), &known.to_string());
    let listed = octo_app::marketplaces::list(&home, Some(&claude));
    assert!(listed.iter().any(|m| m.name == "team-market" && m.by_claude));
    let beta = octo_app::plugins::install(&home, Some(&claude), "beta@team-market").unwrap();
    assert_eq!(octo_app::plugin_parts::summary(&beta), "1 command");
    assert!(matches!(
        octo_app::marketplaces::remove(&home, "team-market"),
        Err(PluginError::NoMarketplace(_))
    ));
}

#[test]
fn a_plugin_claude_code_installed_from_a_non_strict_entry_brings_what_the_entry_declares() {
    let t = tempfile::tempdir().unwrap();
    let (root, repo) = (t.path().join("m"), t.path().join("repo"));
    std::fs::create_dir_all(&repo).unwrap();
    market(&root, &repo);
    // As `claude plugin install beta@team-market` leaves it: a copy in the cache, no manifest.
    let claude = t.path().join(".claude");
    let cache = claude.join("plugins/cache/team-market/beta/unknown");
    write(&cache.join("prompts/x.md"), "---\ndescription: Do x\n---\nDo x.\n");
    let installs = json!({"version": 2, "plugins": {"beta@team-market": [{"scope": "user", "installPath": cache.display().to_string()}]}});
    write(&claude.join("plugins/installed_plugins.json"), &installs.to_string());
    let known = json!({"team-market": {"installLocation": root.display().to_string()}});
    write(&claude.join("plugins/known_marketplaces.json"), &known.to_string());
    write(&claude.join("settings.json"), r#"{"enabledPlugins": {"beta@team-market": true}}"#);
    let plugins = octo_app::claude_plugins::installed(&claude);
    assert_eq!(plugins.len(), 1);
    assert_eq!(octo_app::plugin_parts::summary(&plugins[0]), "1 command");
}

#[cfg(unix)]
#[test]
fn links_and_fifos_a_marketplace_plugin_brings_are_never_written_through_or_waited_on() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("m");
    let victim = t.path().join("victim");
    std::fs::create_dir_all(t.path().join("victim-dir")).unwrap();
    std::fs::write(&victim, "KEEP").unwrap();
    // A link at the entry's own name, a `.claude-plugin` that is a link to a folder, a FIFO.
    write(&root.join("a/.claude-plugin/plugin.json"), r#"{"name": "a"}"#);
    write(&root.join("a/commands/x.md"), "---\ndescription: x\n---\nX.\n");
    std::os::unix::fs::symlink(&victim, root.join("a/.claude-plugin/octo-marketplace-entry.json")).unwrap();
    write(&root.join("b/commands/x.md"), "---\ndescription: x\n---\nX.\n");
    std::os::unix::fs::symlink(t.path().join("victim-dir"), root.join("b/.claude-plugin")).unwrap();
    let fifo = root.join("a/commands/pipe");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let listing =
        json!({"name": "mk", "plugins": [{"name": "a", "source": "./a"}, {"name": "b", "source": "./b"}]});
    write(&root.join(".claude-plugin/marketplace.json"), &listing.to_string());
    let home = Home::new(t.path().join("home"));
    octo_app::marketplaces::add(&home, root.to_str().unwrap()).unwrap();
    let a = octo_app::plugins::install(&home, None, "a@mk").unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "KEEP");
    assert!(!std::fs::symlink_metadata(a.root.join(".claude-plugin/octo-marketplace-entry.json"))
        .unwrap()
        .file_type()
        .is_symlink());
    let err = octo_app::plugins::install(&home, None, "b@mk").unwrap_err();
    assert!(err.to_string().contains("not a folder"), "{err}");
    assert_eq!(std::fs::read_dir(t.path().join("victim-dir")).unwrap().count(), 0);
}
