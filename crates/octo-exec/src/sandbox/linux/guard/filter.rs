//! The guard's system-call filter: which calls go to the supervisor, which are refused outright.
//!
//! A classic BPF program over `struct seccomp_data` (the call's number at offset 0, the
//! architecture at 4, the arguments from 16 on, eight bytes each). seccompiler, which builds the
//! network filter, has no `SECCOMP_RET_USER_NOTIF` action, so this small one is written here.

use libc::sock_filter;

/// `AUDIT_ARCH_*` of the architecture octo was built for (linux/audit.h).
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;

/// System calls too new for the `libc` crate's tables (the same numbers on every architecture
/// since Linux 5.1's common table): octo answers them with `ENOSYS`, and callers fall back to
/// the older calls, which the supervisor checks.
pub(super) const SYS_FCHMODAT2: i64 = 452;
pub(super) const SYS_SETXATTRAT: i64 = 463;
pub(super) const SYS_REMOVEXATTRAT: i64 = 466;
pub(super) const SYS_FILE_SETATTR: i64 = 469;

/// `ioctl` requests that change an inode's flags or attributes (`chattr`, `xfs_io`).
pub(super) const FS_IOC_SETFLAGS: u32 = 0x4008_6602;
pub(super) const FS_IOC32_SETFLAGS: u32 = 0x4004_6602;
pub(super) const FS_IOC_FSSETXATTR: u32 = 0x401c_5820;

/// The calls that change a file's mode, owner, times, attributes or flags: Landlock has no right
/// for any of them.
fn metadata_calls() -> Vec<i64> {
    let mut v = vec![
        libc::SYS_fchmod,
        libc::SYS_fchmodat,
        libc::SYS_fchown,
        libc::SYS_fchownat,
        libc::SYS_utimensat,
        libc::SYS_setxattr,
        libc::SYS_lsetxattr,
        libc::SYS_fsetxattr,
        libc::SYS_removexattr,
        libc::SYS_lremovexattr,
        libc::SYS_fremovexattr,
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend([
        libc::SYS_chmod,
        libc::SYS_chown,
        libc::SYS_lchown,
        libc::SYS_utime,
        libc::SYS_utimes,
        libc::SYS_futimesat,
    ]);
    v
}

/// What the program does with one call.
enum Act {
    /// Ask the supervisor.
    Notify,
    /// By argument `.0`'s low 32 bits: the return for each listed value, else allow.
    ByArg(u32, Vec<(u32, u32)>),
    /// Refuse with this errno.
    Errno(u32),
    /// Refuse a Unix datagram socket (`socket` and `socketpair`: domain, then type).
    NoUnixDatagrams,
}

const RET_NOTIFY: u32 = libc::SECCOMP_RET_USER_NOTIF;
const RET_ALLOW: u32 = libc::SECCOMP_RET_ALLOW;

fn ret(v: u32) -> sock_filter {
    stmt(libc::BPF_RET | libc::BPF_K, v)
}

fn stmt(code: u32, k: u32) -> sock_filter {
    sock_filter { code: code as u16, jt: 0, jf: 0, k }
}

fn jeq(k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter { code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16, jt, jf, k }
}

fn load(offset: u32) -> sock_filter {
    stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, offset)
}

/// The low half of argument `i` (little-endian).
fn arg(i: u32) -> u32 {
    16 + 8 * i
}

/// The instructions after a matched call number, each path ending in a return.
fn body(act: &Act) -> Vec<sock_filter> {
    match act {
        Act::Notify => vec![ret(RET_NOTIFY)],
        Act::Errno(e) => vec![ret(libc::SECCOMP_RET_ERRNO | (e & libc::SECCOMP_RET_DATA))],
        Act::ByArg(i, cases) => {
            // load; a comparison per case, each jumping to its own return; allow; the returns.
            let n = cases.len();
            let mut out = vec![load(arg(*i))];
            for (v, _) in cases {
                // From comparison j to return j: past the n - j - 1 comparisons after it, the
                // allow, and the j returns before its own — n in all.
                out.push(jeq(*v, u8::try_from(n).unwrap_or(0), 0));
            }
            out.push(ret(RET_ALLOW));
            out.extend(cases.iter().map(|(_, r)| ret(*r)));
            out
        }
        Act::NoUnixDatagrams => vec![
            load(arg(0)),
            jeq(libc::AF_UNIX as u32, 0, 4),
            load(arg(1)),
            stmt(libc::BPF_ALU | libc::BPF_AND | libc::BPF_K, 0xf),
            jeq(libc::SOCK_DGRAM as u32, 0, 1),
            ret(libc::SECCOMP_RET_ERRNO | libc::EPERM as u32),
            ret(RET_ALLOW),
        ],
    }
}

/// The filter: metadata changes always go to the supervisor; with `sockets` (the network off)
/// so do `connect`s, and Unix datagram sockets (which can send to any named socket, connected or
/// not) are refused. `io_uring` (whose requests bypass this filter) is refused. Calls of another
/// architecture kill the process: their numbers mean other calls.
pub(super) fn program(sockets: bool) -> Vec<sock_filter> {
    let mut table: Vec<(i64, Act)> = metadata_calls().into_iter().map(|nr| (nr, Act::Notify)).collect();
    // (Keystrokes pushed into a terminal, `TIOCSTI`, are refused by the base filter in every setup.)
    table.push((
        libc::SYS_ioctl,
        Act::ByArg(
            1,
            vec![
                (FS_IOC_SETFLAGS, RET_NOTIFY),
                (FS_IOC32_SETFLAGS, RET_NOTIFY),
                (FS_IOC_FSSETXATTR, RET_NOTIFY),
            ],
        ),
    ));
    for nr in [SYS_FCHMODAT2, SYS_SETXATTRAT, SYS_REMOVEXATTRAT, SYS_FILE_SETATTR] {
        table.push((nr, Act::Errno(libc::ENOSYS as u32)));
    }
    table.push((libc::SYS_io_uring_setup, Act::Errno(libc::EPERM as u32)));
    if sockets {
        table.push((libc::SYS_connect, Act::Notify));
        table.push((libc::SYS_socket, Act::NoUnixDatagrams));
        table.push((libc::SYS_socketpair, Act::NoUnixDatagrams));
    }
    let mut prog = vec![load(4), jeq(AUDIT_ARCH, 1, 0), ret(libc::SECCOMP_RET_KILL_PROCESS), load(0)];
    // x32 numbers (the same architecture, bit 30 set) are refused: their arguments are laid
    // out differently, and nothing octo runs uses them.
    #[cfg(target_arch = "x86_64")]
    prog.extend([
        sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16,
            jt: 0,
            jf: 1,
            k: 0x4000_0000,
        },
        ret(libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32),
    ]);
    for (nr, act) in &table {
        let b = body(act);
        // Skip the body when the number differs. Every body ends in returns, so the next
        // comparison always sees the call's number, even after a body loaded an argument.
        prog.push(jeq(u32::try_from(*nr).unwrap_or(u32::MAX), 0, u8::try_from(b.len()).unwrap_or(u8::MAX)));
        prog.extend(b);
    }
    prog.push(ret(RET_ALLOW));
    prog
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the program on a call, as the kernel would (only what this program uses).
    fn run(prog: &[sock_filter], nr: i64, args: [u64; 6]) -> u32 {
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&(nr as u32).to_le_bytes());
        data[4..8].copy_from_slice(&AUDIT_ARCH.to_le_bytes());
        for (i, a) in args.iter().enumerate() {
            data[16 + 8 * i..24 + 8 * i].copy_from_slice(&a.to_le_bytes());
        }
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let f = prog[pc];
            let code = u32::from(f.code);
            match code {
                c if c == libc::BPF_LD | libc::BPF_W | libc::BPF_ABS => {
                    let k = f.k as usize;
                    acc = u32::from_le_bytes(data[k..k + 4].try_into().unwrap());
                    pc += 1;
                }
                c if c == libc::BPF_ALU | libc::BPF_AND | libc::BPF_K => {
                    acc &= f.k;
                    pc += 1;
                }
                c if c == libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K => {
                    pc += 1 + usize::from(if acc == f.k { f.jt } else { f.jf });
                }
                c if c == libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K => {
                    pc += 1 + usize::from(if acc >= f.k { f.jt } else { f.jf });
                }
                c if c == libc::BPF_RET | libc::BPF_K => return f.k,
                other => panic!("unexpected instruction {other:#x}"),
            }
        }
    }

    #[test]
    fn metadata_calls_are_supervised_and_the_rest_allowed() {
        let prog = program(true);
        assert!(prog.len() < 200, "{}", prog.len());
        assert_eq!(run(&prog, libc::SYS_fchmodat, [0; 6]), RET_NOTIFY);
        assert_eq!(run(&prog, libc::SYS_fremovexattr, [0; 6]), RET_NOTIFY);
        assert_eq!(run(&prog, libc::SYS_connect, [0; 6]), RET_NOTIFY);
        assert_eq!(run(&prog, libc::SYS_read, [0; 6]), RET_ALLOW);
        assert_eq!(run(&prog, libc::SYS_openat, [0; 6]), RET_ALLOW);
        assert_eq!(run(&prog, SYS_FCHMODAT2, [0; 6]), libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32);
        assert_eq!(run(&prog, libc::SYS_ioctl, [1, u64::from(FS_IOC_SETFLAGS), 0, 0, 0, 0]), RET_NOTIFY);
        assert_eq!(run(&prog, libc::SYS_ioctl, [1, u64::from(FS_IOC_FSSETXATTR), 0, 0, 0, 0]), RET_NOTIFY);
        assert_eq!(run(&prog, libc::SYS_ioctl, [1, 0x5401, 0, 0, 0, 0]), RET_ALLOW);
        assert_eq!(run(&prog, libc::SYS_ioctl, [1, u64::from(FS_IOC_SETFLAGS), 0, 0, 0, 0]), RET_NOTIFY);
        let dgram = [libc::AF_UNIX as u64, (libc::SOCK_DGRAM | libc::SOCK_CLOEXEC) as u64, 0, 0, 0, 0];
        let stream = [libc::AF_UNIX as u64, libc::SOCK_STREAM as u64, 0, 0, 0, 0];
        assert_eq!(run(&prog, libc::SYS_socket, dgram), libc::SECCOMP_RET_ERRNO | libc::EPERM as u32);
        assert_eq!(run(&prog, libc::SYS_socketpair, dgram), libc::SECCOMP_RET_ERRNO | libc::EPERM as u32);
        assert_eq!(run(&prog, libc::SYS_socket, stream), RET_ALLOW);
        // With the network allowed, sockets are left alone.
        let open = program(false);
        assert_eq!(run(&open, libc::SYS_connect, [0; 6]), RET_ALLOW);
        assert_eq!(run(&open, libc::SYS_socket, dgram), RET_ALLOW);
        assert_eq!(run(&open, libc::SYS_fchownat, [0; 6]), RET_NOTIFY);
    }
}
