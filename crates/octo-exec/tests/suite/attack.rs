//! Attacks on the secret places: a sandboxed command trying to read (or write) `~/.ssh/id_rsa`,
//! `~/.netrc` and octo's key file, with namespaces and without (Landlock + seccomp supervisor).
//!
//! Every attack is run in both setups and the outcome printed as a table; the test fails at the
//! end listing every attack that leaked a secret (the text `PRIVATE KEY`) or changed one.
//! Run: `cargo test -p octo-exec --test all attack -- --nocapture --test-threads=1`.

use super::common::{place_with, run, Place};
use octo_exec::sandbox::{Mode, Policy, Sandbox};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const MARK: &str = "PRIVATE KEY";

/// The C helper (`attack/probe.c`), built once with the system's compiler.
fn probe() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite/attack/probe.c");
            let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("attack-probe");
            let ok = Command::new("cc").arg("-O1").arg("-o").arg(&out).arg(&src).status().unwrap();
            assert!(ok.success(), "the probe did not build");
            out
        })
        .clone()
}

/// A fake home with secrets, beside the workspace.
struct Home {
    p: Place,
    home: PathBuf,
}

fn home(prefix: &str) -> Home {
    let p = place_with(prefix, &[".git", "sub"]);
    let home = p.out.join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), format!("{MARK} ssh\n")).unwrap();
    std::fs::write(home.join(".netrc"), format!("{MARK} netrc\n")).unwrap();
    std::fs::create_dir_all(home.join(".octo")).unwrap();
    std::fs::write(home.join(".octo/keys.json"), format!("{MARK} octo\n")).unwrap();
    std::fs::write(home.join(".bashrc"), "plain\n").unwrap();
    Home { p, home }
}

fn policy_for(ws: &Path, home: &Path, secrets: &[&str], fallback: bool) -> Policy {
    let mut policy = Policy::new(Mode::WorkspaceWrite, ws);
    policy.secrets = secrets.iter().map(|s| home.join(s)).collect();
    policy.simulate_no_namespaces = fallback;
    policy
}

/// Runs `cmd` with `$H` (the home), `$P` (the probe), `$WS`, `$R` (`$H` relative to `/work`)
/// and `extra` exported; its output.
fn go(s: &Sandbox, ws: &Path, home: &Path, extra: &[(&str, String)], cmd: &str) -> String {
    let mut pre = format!(
        "H='{}'; P='{}'; WS='{}'; TESTPID={}; R=\"${{H#/work/}}\"; export H P WS TESTPID R; ",
        home.display(),
        probe().display(),
        ws.display(),
        std::process::id()
    );
    for (k, v) in extra {
        pre.push_str(&format!("{k}='{v}'; export {k}; "));
    }
    // Work in `sub` when there is one: without namespaces the workspace's top level takes no new
    // entries (they need approval), its existing folders do.
    let cmd = format!("cd sub 2>/dev/null; {cmd}");
    let (_, text) = run(s, ws, &format!("{pre}timeout 30 sh -c '{}'", cmd.replace('\'', "'\\''")));
    text
}

/// A process outside the sandbox that read the key and holds it: cwd in `.ssh`, the file open,
/// its text in memory and in its environment.
struct Holder(Child);

impl Holder {
    fn start(home: &Path) -> Self {
        let child = Command::new("python3")
            .args([
                "-c",
                "import os,time,sys\nf=open('id_rsa')\nd=f.read()\nos.set_inheritable(f.fileno(),True)\nsys.stdout.write(str(f.fileno())+'\\n');sys.stdout.flush()\ntime.sleep(300)",
            ])
            .current_dir(home.join(".ssh"))
            .env("KEYDATA", format!("{MARK} in holder env"))
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(400));
        Holder(child)
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[derive(Default)]
struct Table(Vec<(String, [Option<String>; 2])>);

impl Table {
    fn record(&mut self, name: &str, fallback: bool, outcome: String) {
        let i = match self.0.iter().position(|(n, _)| n == name) {
            Some(i) => i,
            None => {
                self.0.push((name.to_owned(), [None, None]));
                self.0.len() - 1
            }
        };
        self.0[i].1[usize::from(fallback)] = Some(outcome);
    }
    fn leaked(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (n, o) in &self.0 {
            for (i, x) in o.iter().enumerate() {
                if known(n, i == 1) {
                    continue;
                }
                if x.as_deref().is_some_and(|x| x.starts_with("LEAKED") || x.starts_with("WRITTEN")) {
                    out.push(format!("{n} ({})", if i == 0 { "namespaces" } else { "fallback" }));
                }
            }
        }
        out
    }
    fn print(&self) {
        eprintln!("\n| attack | namespaces | no namespaces |\n|---|---|---|");
        for (n, [a, b]) in &self.0 {
            eprintln!("| {n} | {} | {} |", a.as_deref().unwrap_or("-"), b.as_deref().unwrap_or("-"));
        }
    }
}

/// What the sandbox does not claim to stop, printed in the table but not failing the test: a
/// hard link the user made on the host before is the same file under another path (rules are
/// about paths); and without namespaces, a root command reads other processes' environments
/// (`dev-docs/sandbox.md`, "Limits, stated plainly").
fn known(name: &str, fallback: bool) -> bool {
    name.starts_with("hard link made before by the host")
        || (fallback
            && (name.starts_with("/proc/<holder>/environ")
                || name.starts_with("/proc/<octo (test) pid>/environ")))
}

fn verdict(text: &str) -> String {
    if text.contains(MARK) {
        "LEAKED".into()
    } else {
        "blocked".into()
    }
}

fn show(name: &str, fallback: bool, text: &str) {
    let short: String = text.chars().take(600).collect();
    eprintln!("--- {name} [fallback {fallback}] ---\n{short}");
}

#[test]
fn attacks_on_secret_places() {
    let _ = probe();
    let mut table = Table::default();
    for fallback in [false, true] {
        basic_attacks(&mut table, fallback);
        secret_is_a_link(&mut table, fallback);
        odd_names(&mut table, fallback);
        workspace_in_home(&mut table, fallback);
        workspace_is_home(&mut table, fallback);
        created_later(&mut table, fallback);
        replaced_later(&mut table, fallback);
        io_uring_with_network(&mut table, fallback);
    }
    table.print();
    let leaked = table.leaked();
    assert!(leaked.is_empty(), "secrets leaked: {leaked:#?}");
}

fn basic_attacks(table: &mut Table, fallback: bool) {
    let h = home("attack-");
    let (ws, home) = (&h.p.ws, &h.home);
    // A hard link made on the host before (the user's own backup, say).
    let _ = std::fs::create_dir_all(h.p.out.join("backup"));
    std::fs::hard_link(home.join(".ssh/id_rsa"), h.p.out.join("backup/id_rsa.bak")).unwrap();
    let s = Sandbox::new(policy_for(ws, home, &[".ssh", ".netrc", ".octo/keys.json"], fallback));
    assert!(s.is_active(), "{}", s.describe());
    let holder = Holder::start(home);
    let hpid = holder.0.id().to_string();
    let extra = [("HOLDER", hpid)];
    let attacks: &[(&str, &str)] = &[
        ("direct cat", r#"cat "$H/.ssh/id_rsa" "$H/.netrc" "$H/.octo/keys.json""#),
        (
            "`..`, `//`, `.` paths",
            r#"cat "$H/.ssh/../.ssh/id_rsa" "$H//.ssh/./id_rsa" "$OUT/../outside/home/.netrc" "$H/.octo/../.octo/keys.json""#,
        ),
        (
            "/proc/self/root, /proc/self/cwd/..",
            r#"cat "/proc/self/root$H/.ssh/id_rsa" /proc/self/cwd/../outside/home/.ssh/id_rsa "/proc/$$/root$H/.netrc""#,
        ),
        (
            "/proc/<every pid>/root and cwd",
            r#"for p in /proc/[0-9]*; do cat "$p/root$H/.ssh/id_rsa" "$p/cwd/id_rsa" "$p/root$H/.netrc"; done 2>/dev/null; true"#,
        ),
        (
            "/proc/<test pid>/root",
            r#"cat "/proc/$TESTPID/root$H/.ssh/id_rsa" "/proc/$TESTPID/cwd/../outside/home/.ssh/id_rsa""#,
        ),
        (
            "/proc/<holder>/cwd (outside process in .ssh)",
            r#"ls -la /proc/$HOLDER/cwd/; cat /proc/$HOLDER/cwd/id_rsa"#,
        ),
        (
            "/proc/<holder>/fd/* (outside process has it open)",
            r#"ls -la /proc/$HOLDER/fd/; for f in /proc/$HOLDER/fd/*; do cat "$f"; done"#,
        ),
        ("/proc/<holder>/environ", r#"tr "\0" "\n" < /proc/$HOLDER/environ | grep KEY"#),
        (
            "/proc/<holder>/mem",
            r#"python3 -c "
import re,sys
p=sys.argv[1]
m=open('/proc/%s/mem'%p,'rb')
for l in open('/proc/%s/maps'%p):
    a,b=[int(x,16) for x in l.split()[0].split('-')]
    if l.split()[1][0]!='r' or b-a>1<<26: continue
    try:
        m.seek(a); d=m.read(b-a)
    except Exception as e: continue
    i=d.find(b'PRIVATE KEY')
    if i>=0: print(d[i:i+20]); break
" $HOLDER"#,
        ),
        (
            "process_vm_readv(holder)",
            r#"$P vmread $HOLDER | grep -a -o "PRIVATE KEY[a-z ]*" | head -1; $P vmread $HOLDER | head -c 200"#,
        ),
        ("pidfd_getfd(holder, 3..5)", r#"for fd in 3 4 5; do $P getfd $HOLDER $fd; done"#),
        (
            "gdb -p holder (make it copy the key)",
            r#"gdb -q -batch -p $HOLDER -ex "call (int)system(\"cp id_rsa $WS/sub/gdbleak\")" >/dev/null 2>&1; cat gdbleak 2>&1 | head -2; gdb -q -batch -p $HOLDER 2>&1 | tail -2"#,
        ),
        ("strace -p holder", r#"timeout 2 strace -p $HOLDER 2>&1 | head -3"#),
        (
            "nsenter into test process / pid 1 mount ns",
            r#"nsenter -t $TESTPID -m cat "$H/.ssh/id_rsa"; nsenter -t 1 -m -U --preserve-credentials cat "$H/.ssh/id_rsa"; nsenter -t $HOLDER -m cat "$H/.netrc""#,
        ),
        (
            "umount -l the cover",
            r#"umount -l "$H/.ssh"; umount "$H/.netrc"; cat "$H/.ssh/id_rsa" "$H/.netrc""#,
        ),
        (
            "unshare -rm + umount (MNT_DETACH)",
            r#"unshare -rm sh -c "umount -l \"$H/.ssh\"; umount -l \"$H/.netrc\"; cat \"$H/.ssh/id_rsa\" \"$H/.netrc\"""#,
        ),
        (
            "unshare -m (root, no userns) + umount",
            r#"unshare -m sh -c "umount -l \"$H/.ssh\"; cat \"$H/.ssh/id_rsa\"""#,
        ),
        (
            "mount --move / --bind of the parent",
            r#"mkdir -p mv bd; mount --move "$H/.ssh" mv; mount --bind "$H" bd; mount --bind "$OUT" bd; cat bd/.ssh/id_rsa bd/home/.ssh/id_rsa "$H/.ssh/id_rsa""#,
        ),
        ("fresh mount of the disk", r#"mkdir -p d; mount /dev/vda d && cat "d/$R/.ssh/id_rsa""#),
        (
            "hard link made after (ln inside)",
            r#"ln "$H/.ssh/id_rsa" hl1; ln "$H/.netrc" hl2; ln "$H/.octo/keys.json" hl3; cat hl1 hl2 hl3"#,
        ),
        ("hard link made before by the host", r#"cat "$OUT/backup/id_rsa.bak""#),
        (
            "symlinks: file, parent, chain, relative ..",
            r#"ln -s "$H/.ssh/id_rsa" l1; ln -s "$H/.ssh" l2; ln -s l1 l3; ln -s l3 l4; ln -s ../outside/home l5; cat l1 l2/id_rsa l4 l5/.ssh/id_rsa l5/.netrc"#,
        ),
        (
            "cp -r / tar / find of the home",
            r#"cp -r "$H" cp1 2>&1 | head -3; cat cp1/.ssh/id_rsa cp1/.netrc; tar cf - -C "$H" . 2>/dev/null | tar xOf - 2>/dev/null | head -5; find "$H" -type f -exec cat {} + 2>/dev/null"#,
        ),
        (
            "O_PATH open + /proc/self/fd reopen",
            r#"python3 -c "
import os,sys
for p in [sys.argv[1]+'/.ssh/id_rsa', sys.argv[1]+'/.netrc', sys.argv[1]+'/.ssh']:
    try:
        fd=os.open(p, os.O_PATH)
        q='/proc/self/fd/%d'%fd
        if os.path.isdir(q): print(os.listdir(q)); print(open(q+'/id_rsa').read())
        else: print(open(q).read())
    except Exception as e: print(p, e)
" "$H""#,
        ),
        ("chroot into the home", r#"chroot "$H" /bin/cat /.ssh/id_rsa; chroot / cat "$H/.ssh/id_rsa""#),
        (
            "open_tree clone of /work (non-recursive)",
            r#"$P opentree /work "$R/.ssh/id_rsa"; $P opentree /work "$R/.netrc"; $P opentree /work "$R/.octo/keys.json""#,
        ),
        ("open_tree clone of / (non-recursive)", r#"$P opentree / "${H#/}/.ssh/id_rsa""#),
        ("open_tree clone of the home", r#"$P opentree "$H" .ssh/id_rsa; $P opentree "$H" .netrc"#),
        ("open_tree clone of /work (recursive)", r#"$P opentree /work "$R/.ssh/id_rsa" rec"#),
        ("open_by_handle_at (dir by ino, gen 0) via /work", r#"$P handle-dir /work "$H" .ssh id_rsa"#),
        ("open_by_handle_at (dir by ino, gen 0) via /", r#"$P handle-dir / "$H" .ssh id_rsa"#),
        (
            "open_by_handle_at (dir by stat ino, gen 0) via /usr, /work",
            r#"$P handle-ino /usr $(stat -c %i "$H/.ssh") id_rsa; $P handle-ino /work $(stat -c %i "$H/.ssh") id_rsa"#,
        ),
        (
            "/proc/<octo (test) pid>/environ",
            r#"tr "\0" "\n" < /proc/$TESTPID/environ | grep -q CARGO_MANIFEST_DIR && echo OCTO-ENV-READABLE"#,
        ),
        (
            "open_by_handle_at (file by stat ino)",
            r#"$P handle-file / "$H/.netrc"; $P handle-file /work "$H/.octo/keys.json""#,
        ),
        (
            "raw disk /dev/vda + debugfs",
            r#"grep -a -m1 -o "PRIVATE KEY [a-z]*" /dev/vda; debugfs -R "cat /$R/.ssh/id_rsa" /dev/vda 2>&1 | head -3"#,
        ),
        (
            "mknod the disk in the workspace",
            r#"mknod d b 254 0; debugfs -R "cat /$R/.ssh/id_rsa" d 2>&1 | head -3; mknod m c 1 1; head -c 10 m | od -c | head -1"#,
        ),
        (
            "loop device / losetup of the disk",
            r#"losetup -f --show /dev/vda 2>&1; losetup -f --show -r "$H/.ssh/id_rsa" 2>&1"#,
        ),
        (
            "inherited descriptors (/proc/self/fd/*)",
            r#"ls -l /proc/self/fd/; for f in /proc/self/fd/*; do cat "$f" </dev/null 2>/dev/null | head -c 100; done; true"#,
        ),
        ("io_uring openat (network off)", r#"$P uring "$H/.ssh/id_rsa""#),
        ("ls of the secret folder (names only)", r#"ls -la "$H/.ssh" 2>&1; stat -c %s "$H/.netrc""#),
        (
            "write into the secret folder",
            r#"echo evil >> "$H/.ssh/id_rsa"; echo evil > "$H/.ssh/authorized_keys"; echo evil >> "$H/.netrc"; mkdir "$H/.gnupg"; ls -la "$H/.ssh""#,
        ),
        (
            "write via open_tree clone + mount_setattr",
            r#"$P opentree-write /work "$R/.ssh/authorized_keys" evil; $P opentree-write "$H" .netrc evil"#,
        ),
    ];
    for (name, cmd) in attacks {
        let _ = std::fs::remove_file(ws.join("sub/gdbleak"));
        let text = go(&s, ws, home, &extra, cmd);
        show(name, fallback, &text);
        let mut v = verdict(&text);
        if name.starts_with("/proc/<holder>/environ") && v == "LEAKED" {
            v = "LEAKED (env of an outside process)".into();
        }
        if text.contains("ENV-READABLE") {
            v = "LEAKED (octo's own environment: API keys)".into();
        }
        let untouched = std::fs::read_to_string(home.join(".ssh/id_rsa")).unwrap() == format!("{MARK} ssh\n")
            && !home.join(".ssh/authorized_keys").exists()
            && std::fs::read_to_string(home.join(".netrc")).unwrap() == format!("{MARK} netrc\n")
            && !home.join(".gnupg").exists();
        if !untouched {
            v = format!("WRITTEN ({v})");
            let _ = std::fs::write(home.join(".ssh/id_rsa"), format!("{MARK} ssh\n"));
            let _ = std::fs::remove_file(home.join(".ssh/authorized_keys"));
            let _ = std::fs::write(home.join(".netrc"), format!("{MARK} netrc\n"));
            let _ = std::fs::remove_dir(home.join(".gnupg"));
        }
        table.record(name, fallback, v);
    }
    // Still usable: not secret.
    let text = go(&s, ws, home, &[], r#"cat "$H/.bashrc""#);
    assert!(text.contains("plain"), "fallback {fallback}: {text}");
    drop(holder);
}

/// The secret as named in the policy is a link to the real folder.
fn secret_is_a_link(table: &mut Table, fallback: bool) {
    let h = home("attack-link-");
    let home = &h.home;
    std::fs::create_dir_all(home.join("real-keys")).unwrap();
    std::fs::write(home.join("real-keys/id_ed25519"), format!("{MARK} linked\n")).unwrap();
    std::os::unix::fs::symlink(home.join("real-keys"), home.join(".keys")).unwrap();
    std::os::unix::fs::symlink(home.join(".ssh/id_rsa"), home.join(".keyfile")).unwrap();
    let s = Sandbox::new(policy_for(&h.p.ws, home, &[".keys", ".keyfile"], fallback));
    // .keyfile -> .ssh/id_rsa: hiding the link hides its target, .ssh/id_rsa.
    let cmd = r#"cat "$H/.keys/id_ed25519" "$H/real-keys/id_ed25519" "$H/.keyfile" "$H/.ssh/id_rsa""#;
    let text = go(&s, &h.p.ws, home, &[], cmd);
    show("secret is a symlink", fallback, &text);
    table.record("secret is itself a symlink (dir and file)", fallback, verdict(&text));
}

/// Secret folders with a space and a newline in their names.
fn odd_names(table: &mut Table, fallback: bool) {
    let h = home("attack-names-");
    let home = &h.home;
    for d in ["my keys", "new\nline", "tab\tand 'quote'"] {
        std::fs::create_dir_all(home.join(d)).unwrap();
        std::fs::write(home.join(d).join("k"), format!("{MARK} odd\n")).unwrap();
    }
    let s = Sandbox::new(policy_for(&h.p.ws, home, &["my keys", "new\nline", "tab\tand 'quote'"], fallback));
    let text = go(
        &s,
        &h.p.ws,
        home,
        &[],
        r#"for d in "$H"/*/; do cat "$d/k"; done; find "$H" -name k -exec cat {} +"#,
    );
    show("odd names", fallback, &text);
    table.record("secret folders named with space/newline/tab/quote", fallback, verdict(&text));
}

/// The workspace is a project inside the home.
fn workspace_in_home(table: &mut Table, fallback: bool) {
    let h = home("attack-inhome-");
    let home = &h.home;
    let ws = home.join("proj");
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    let s = Sandbox::new(policy_for(&ws, home, &[".ssh", ".netrc"], fallback));
    let cmds = [
        ("ws inside home: ../.ssh", r#"cat ../.ssh/id_rsa ../.netrc; ln -s .. up; cat up/.ssh/id_rsa"#),
        (
            "ws inside home: open_tree of /work, handle",
            r#"$P opentree /work "$R/.ssh/id_rsa"; $P handle-dir /work "$H" .ssh id_rsa"#,
        ),
        ("ws inside home: write ../.ssh", r#"echo evil > ../.ssh/authorized_keys; echo evil >> ../.netrc"#),
    ];
    for (name, cmd) in cmds {
        let text = go(&s, &ws, home, &[], cmd);
        show(name, fallback, &text);
        let mut v = verdict(&text);
        if home.join(".ssh/authorized_keys").exists()
            || std::fs::read_to_string(home.join(".netrc")).unwrap().contains("evil")
        {
            v = format!("WRITTEN ({v})");
        }
        table.record(name, fallback, v);
    }
}

/// The workspace is the home: the secret folder is inside the workspace.
fn workspace_is_home(table: &mut Table, fallback: bool) {
    let p = place_with("attack-ishome-", &[]);
    let ws = &p.ws;
    std::fs::create_dir_all(ws.join(".ssh")).unwrap();
    std::fs::write(ws.join(".ssh/id_rsa"), format!("{MARK} ws\n")).unwrap();
    std::fs::write(ws.join(".netrc"), format!("{MARK} ws netrc\n")).unwrap();
    let s = Sandbox::new(policy_for(ws, ws, &[".ssh", ".netrc"], fallback));
    let cmds = [
        (
            "ws is home: cat/ln/mv",
            r#"cat .ssh/id_rsa .netrc; ln .ssh/id_rsa x1; cat x1; mv .ssh s2 && cat s2/id_rsa; mv .netrc n2 && cat n2; cp -r . ../copy 2>/dev/null; cat ../copy/.ssh/id_rsa"#,
        ),
        (
            "ws is home: open_tree clone of the workspace",
            r#"$P opentree "$WS" .ssh/id_rsa; $P opentree "$WS" .netrc; $P opentree /work "${WS#/work/}/.ssh/id_rsa""#,
        ),
        (
            "ws is home: open_by_handle_at (.ssh by ino)",
            r#"$P handle-dir "$WS" "$WS" .ssh id_rsa; $P handle-dir /work "$WS" .ssh id_rsa"#,
        ),
        (
            "ws is home: write .ssh/authorized_keys",
            r#"echo evil > .ssh/authorized_keys; echo evil >> .netrc; rm -rf .ssh; ls -a"#,
        ),
        (
            "ws is home: write via open_tree clone",
            r#"$P opentree-write "$WS" .ssh/authorized_keys evil; $P opentree-write "$WS" .netrc evil"#,
        ),
    ];
    for (name, cmd) in cmds {
        let text = go(&s, ws, ws, &[], cmd);
        show(name, fallback, &text);
        let mut v = verdict(&text);
        let written = ws.join(".ssh/authorized_keys").exists()
            || !ws.join(".ssh/id_rsa").exists()
            || std::fs::read_to_string(ws.join(".netrc")).map_or(true, |t| t.contains("evil"));
        if written {
            v = format!("WRITTEN ({v})");
            let _ = std::fs::remove_file(ws.join(".ssh/authorized_keys"));
            let _ = std::fs::write(ws.join(".netrc"), format!("{MARK} ws netrc\n"));
        }
        table.record(name, fallback, v);
    }
}

/// A secret place that does not exist when the command starts, made later by the user while a
/// process the command left behind waits for it.
fn created_later(table: &mut Table, fallback: bool) {
    let h = home("attack-later-");
    let home = &h.home;
    let s = Sandbox::new(policy_for(&h.p.ws, home, &[".ssh", ".aws", ".octo/sessions"], fallback));
    let cmd = r#"(for i in $(seq 1 40); do cat "$H/.aws/credentials" "$H/.octo/sessions/s.jsonl" > "$WS/sub/later" 2>/dev/null && grep -q KEY "$WS/sub/later" && break; sleep 0.25; done) </dev/null >/dev/null 2>&1 & echo started"#;
    let text = go(&s, &h.p.ws, home, &[], cmd);
    assert!(text.contains("started"), "{text}");
    std::thread::sleep(Duration::from_millis(300));
    std::fs::create_dir_all(home.join(".aws")).unwrap();
    std::fs::write(home.join(".aws/credentials"), format!("{MARK} aws\n")).unwrap();
    std::fs::create_dir_all(home.join(".octo/sessions")).unwrap();
    std::fs::write(home.join(".octo/sessions/s.jsonl"), format!("{MARK} session\n")).unwrap();
    std::thread::sleep(Duration::from_secs(3));
    let got = std::fs::read_to_string(h.p.ws.join("sub/later")).unwrap_or_default();
    show("created later", fallback, &got);
    table.record("secret created after the command started (left-behind process)", fallback, verdict(&got));
    // The same with the missing secret alone in its folder (no sibling secret splits the home).
    let h2 = self::home("attack-later2-");
    let s2 = Sandbox::new(policy_for(&h2.p.ws, &h2.home, &[".aws"], fallback));
    let cmd2 = r#"(for i in $(seq 1 40); do cat "$H/.aws/credentials" > "$WS/sub/later" 2>/dev/null && grep -q KEY "$WS/sub/later" && break; sleep 0.25; done) </dev/null >/dev/null 2>&1 & echo started"#;
    let text = go(&s2, &h2.p.ws, &h2.home, &[], cmd2);
    assert!(text.contains("started"), "{text}");
    std::thread::sleep(Duration::from_millis(300));
    std::fs::create_dir_all(h2.home.join(".aws")).unwrap();
    std::fs::write(h2.home.join(".aws/credentials"), format!("{MARK} aws\n")).unwrap();
    std::thread::sleep(Duration::from_secs(3));
    let got = std::fs::read_to_string(h2.p.ws.join("sub/later")).unwrap_or_default();
    show("created later, alone", fallback, &got);
    table.record(
        "secret created later, the only secret in its folder (left-behind process)",
        fallback,
        verdict(&got),
    );
    // A new command sees it hidden.
    let text = go(&s, &h.p.ws, home, &[], r#"cat "$H/.aws/credentials""#);
    table.record("secret created before a later command", fallback, verdict(&text));
}

/// The key file is replaced (write to a temp file, rename over) and the key folder re-made while
/// a left-behind process waits.
fn replaced_later(table: &mut Table, fallback: bool) {
    let h = home("attack-replace-");
    let home = &h.home;
    let s = Sandbox::new(policy_for(&h.p.ws, home, &[".ssh", ".octo/keys.json"], fallback));
    let cmd = r#"(for i in $(seq 1 40); do cat "$H/.octo/keys.json" "$H/.ssh/id_rsa" > "$WS/sub/replaced" 2>/dev/null; grep -q NEW "$WS/sub/replaced" && break; sleep 0.25; done) </dev/null >/dev/null 2>&1 & cat "$H/.octo/keys.json"; echo started"#;
    let text = go(&s, &h.p.ws, home, &[], cmd);
    assert!(text.contains("started") && !text.contains(MARK), "{text}");
    std::thread::sleep(Duration::from_millis(300));
    std::fs::write(home.join(".octo/keys.json.tmp"), format!("{MARK} NEW octo\n")).unwrap();
    std::fs::rename(home.join(".octo/keys.json.tmp"), home.join(".octo/keys.json")).unwrap();
    std::fs::remove_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), format!("{MARK} NEW ssh\n")).unwrap();
    std::thread::sleep(Duration::from_secs(3));
    let got = std::fs::read_to_string(h.p.ws.join("sub/replaced")).unwrap_or_default();
    show("replaced later", fallback, &got);
    table.record(
        "secret replaced (rename over / rm+mkdir) while a left-behind process waits",
        fallback,
        verdict(&got),
    );
}

/// With the network on, the filter lets io_uring through.
fn io_uring_with_network(table: &mut Table, fallback: bool) {
    let h = home("attack-uring-");
    let home = &h.home;
    let mut policy = policy_for(&h.p.ws, home, &[".ssh"], fallback);
    policy.network = true;
    let s = Sandbox::new(policy);
    let text = go(&s, &h.p.ws, home, &[], r#"$P uring "$H/.ssh/id_rsa"; $P uring "$H/.bashrc""#);
    show("uring", fallback, &text);
    table.record("io_uring openat+read (network on)", fallback, verdict(&text));
}
