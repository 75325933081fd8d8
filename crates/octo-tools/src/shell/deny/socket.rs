//! Commands that talk to a local daemon over its named Unix socket: `docker`, `podman`,
//! `systemctl`, `busctl`, `dbus-send`, `nc -U`, `socat … UNIX-CONNECT:`, `curl --unix-socket`,
//! and interpreter one-liners opening an `AF_UNIX` socket. A daemon's socket can be a way out (the
//! Docker socket starts a container with the host's root mounted), so where the sandbox cannot
//! hide the daemons' sockets octo asks before such a command ([`reaches_local_daemon`]).

use super::inner::first_command;
use super::interp::one_liner;
use super::words::basename;
use crate::shell::syntax::Word;
use std::path::Path;

/// Programs whose work is talking to a daemon over its socket.
const CLIENTS: &[&str] = &[
    "docker",
    "podman",
    "nerdctl",
    "ctr",
    "crictl",
    "kubectl",
    "systemctl",
    "busctl",
    "dbus-send",
    "gdbus",
    "loginctl",
    "machinectl",
    "journalctl",
    "snap",
    "lxc",
    "virsh",
];

/// What in `command` would reach a local daemon's named socket, as a reason to ask; `None`
/// when nothing does.
pub fn reaches_local_daemon(command: &str, cwd: &Path, home: &Path) -> Option<String> {
    first_command(command, cwd, home, &|_, words| simple(words))
}

fn simple(words: &[Word]) -> Option<String> {
    let (prog, args) = words.split_first()?;
    let name = basename(&prog.text);
    let text = |a: &Word| a.text.to_ascii_lowercase();
    if CLIENTS.contains(&name) {
        return Some(format!("`{name}` talks to a local daemon over its socket"));
    }
    let named = match name {
        "nc" | "ncat" | "netcat" => args.iter().any(|a| a.text == "-U" || a.text == "--unixsock"),
        "socat" => args.iter().any(|a| text(a).starts_with("unix") || text(a).contains(":/run/")),
        "curl" => args
            .iter()
            .any(|a| a.text.starts_with("--unix-socket") || a.text.starts_with("--abstract-unix-socket")),
        _ => false,
    };
    if named {
        return Some(format!("`{name}` connects to a named Unix socket"));
    }
    let code = one_liner(name, args)?;
    let opens =
        ["AF_UNIX", "UNIXConnect", "UNIXSocket", "net.connect(\"/", "net.connect('/", "/var/run/", "/run/"]
            .iter()
            .any(|needle| code.contains(needle));
    opens.then(|| format!("its {name} code opens a Unix socket"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(cmd: &str) -> Option<String> {
        reaches_local_daemon(cmd, Path::new("/ws"), Path::new("/home/u"))
    }

    #[test]
    fn daemon_clients_and_socket_connections_are_named() {
        for cmd in [
            "docker run -v /:/host alpine sh",
            "sudo podman ps",
            "systemctl --user start evil",
            "busctl call org.freedesktop.systemd1 /x y z",
            "nc -U /var/run/docker.sock",
            "socat - UNIX-CONNECT:/run/docker.sock",
            "curl --unix-socket /var/run/docker.sock http://x/containers/json",
            "python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('/run/x.sock')\"",
            "sh -c 'docker ps'",
            "env DOCKER_HOST=unix:///run/docker.sock docker info",
        ] {
            assert!(check(cmd).is_some(), "{cmd}");
        }
    }

    #[test]
    fn ordinary_commands_are_not() {
        for cmd in [
            "cargo test",
            "curl https://example.com",
            "nc -z localhost 80",
            "python3 -c 'print(1)'",
            "ls /run",
        ] {
            assert_eq!(check(cmd), None, "{cmd}");
        }
    }
}
