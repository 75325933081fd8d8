//! `octo-no-userns COMMAND [ARGS…]`: runs a command where no namespace can be made, as on hosts
//! that restrict unprivileged user namespaces (Ubuntu 24.04's AppArmor default, most
//! containers). A seccomp filter refuses `unshare`, `setns` and a `clone` asking for a new
//! namespace with `EPERM`, and `clone3` with `ENOSYS` (its flags sit in memory a filter cannot
//! read, so callers fall back to `clone`). octo's sandbox then finds no namespace for real and
//! takes its Landlock-only fallback, the setup `scripts/sandbox-as-user` tests.
//!
//! `octo-no-userns --no-supervisor COMMAND …` also refuses a seccomp filter with a listener
//! (`SECCOMP_FILTER_FLAG_NEW_LISTENER`, with `EINVAL`, as a kernel before 5.0 answers), so the
//! fallback runs without the seccomp supervisor that stands in for the namespace.

#[cfg(target_os = "linux")]
fn main() -> std::process::ExitCode {
    use std::os::unix::process::CommandExt;
    let mut args = std::env::args_os().skip(1).peekable();
    let no_supervisor = args.next_if(|a| a == "--no-supervisor").is_some();
    let Some(program) = args.next() else {
        eprintln!("usage: octo-no-userns [--no-supervisor] COMMAND [ARGS...]");
        return std::process::ExitCode::from(2);
    };
    if let Err(e) = deny_namespaces(no_supervisor) {
        eprintln!("octo-no-userns: the seccomp filter could not be installed: {e}");
        return std::process::ExitCode::from(2);
    }
    let err = std::process::Command::new(&program).args(args).exec();
    eprintln!("octo-no-userns: {}: {err}", program.to_string_lossy());
    std::process::ExitCode::from(127)
}

#[cfg(target_os = "linux")]
fn deny_namespaces(no_supervisor: bool) -> Result<(), seccompiler::Error> {
    use seccompiler::{
        BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule,
    };
    use std::collections::BTreeMap;
    let arch = std::env::consts::ARCH.try_into().map_err(seccompiler::Error::Backend)?;
    let new_ns = [
        libc::CLONE_NEWUSER,
        libc::CLONE_NEWNS,
        libc::CLONE_NEWPID,
        libc::CLONE_NEWNET,
        libc::CLONE_NEWIPC,
        libc::CLONE_NEWUTS,
        libc::CLONE_NEWCGROUP,
    ];
    let mut clone_rules = Vec::new();
    for flag in new_ns {
        let bit = flag as u64;
        let cond = SeccompCondition::new(0, SeccompCmpArgLen::Qword, SeccompCmpOp::MaskedEq(bit), bit)
            .map_err(seccompiler::Error::Backend)?;
        clone_rules.push(SeccompRule::new(vec![cond]).map_err(seccompiler::Error::Backend)?);
    }
    let eperm: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::from([
        (libc::SYS_unshare, Vec::new()),
        (libc::SYS_setns, Vec::new()),
        (libc::SYS_clone, clone_rules),
    ]);
    let mut einval: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    if no_supervisor {
        let bit = libc::SECCOMP_FILTER_FLAG_NEW_LISTENER;
        let cond = SeccompCondition::new(1, SeccompCmpArgLen::Qword, SeccompCmpOp::MaskedEq(bit), bit)
            .map_err(seccompiler::Error::Backend)?;
        einval.insert(
            libc::SYS_seccomp,
            vec![SeccompRule::new(vec![cond]).map_err(seccompiler::Error::Backend)?],
        );
    }
    let einval =
        SeccompFilter::new(einval, SeccompAction::Allow, SeccompAction::Errno(libc::EINVAL as u32), arch)
            .map_err(seccompiler::Error::Backend)?;
    let eperm =
        SeccompFilter::new(eperm, SeccompAction::Allow, SeccompAction::Errno(libc::EPERM as u32), arch)
            .map_err(seccompiler::Error::Backend)?;
    let enosys = SeccompFilter::new(
        BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .map_err(seccompiler::Error::Backend)?;
    for filter in [eperm, enosys, einval] {
        let program: BpfProgram = filter.try_into().map_err(seccompiler::Error::Backend)?;
        seccompiler::apply_filter(&program)?;
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn main() -> std::process::ExitCode {
    eprintln!("octo-no-userns: Linux only");
    std::process::ExitCode::from(2)
}
