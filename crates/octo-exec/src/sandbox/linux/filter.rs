//! The syscall filter every sandboxed command runs under, built once in the parent.

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
};
use std::collections::BTreeMap;

/// System calls that reach a file other than by its path, or remake the mounts a command sees
/// (a clone of a mount above a secret place's cover, a file handle): the sandbox's rules are
/// about paths, so a command never makes them.
const AROUND_PATHS: [i64; 8] = [
    libc::SYS_open_by_handle_at,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
];

/// The syscall filter: never keystrokes pushed into a terminal (`TIOCSTI`) or a virtual console
/// driven (`TIOCLINUX`) — a command has no controlling terminal, but root could open the user's
/// by name —, none of [`AROUND_PATHS`], and, without the network, no sockets but Unix ones and
/// no io_uring (which could open them).
pub(super) fn base_filter(network: bool) -> Result<BpfProgram, seccompiler::Error> {
    let arch =
        seccompiler::TargetArch::try_from(std::env::consts::ARCH).map_err(seccompiler::Error::Backend)?;
    let arg_is = |i: u8, v: u64, op: SeccompCmpOp| {
        SeccompCondition::new(i, SeccompCmpArgLen::Dword, op, v)
            .and_then(|c| SeccompRule::new(vec![c]))
            .map_err(seccompiler::Error::Backend)
    };
    const TIOCSTI: u64 = 0x5412;
    const TIOCLINUX: u64 = 0x541C;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    // The x32 ABI numbers its system calls with this bit set; the same filter must cover them.
    #[cfg(target_arch = "x86_64")]
    let abis: [i64; 2] = [0, 0x4000_0000];
    #[cfg(not(target_arch = "x86_64"))]
    let abis: [i64; 1] = [0];
    for abi in abis {
        rules.insert(
            libc::SYS_ioctl | abi,
            vec![arg_is(1, TIOCSTI, SeccompCmpOp::Eq)?, arg_is(1, TIOCLINUX, SeccompCmpOp::Eq)?],
        );
        if !network {
            rules.insert(libc::SYS_socket | abi, vec![arg_is(0, libc::AF_UNIX as u64, SeccompCmpOp::Ne)?]);
            rules.insert(libc::SYS_io_uring_setup | abi, Vec::new());
        }
        for call in AROUND_PATHS {
            rules.insert(call | abi, Vec::new());
        }
    }
    let filter =
        SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EPERM as u32), arch)
            .map_err(seccompiler::Error::Backend)?;
    filter.try_into().map_err(seccompiler::Error::Backend)
}
