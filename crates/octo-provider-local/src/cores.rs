//! How many threads the engine runs on by default.

/// Physical CPU cores (the default thread count): distinct (package, core) pairs on Linux, else
/// half the logical processors.
pub fn physical_cores() -> usize {
    let logical = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    #[cfg(target_os = "linux")]
    if let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") {
        let mut cores = std::collections::HashSet::new();
        let (mut package, mut core) = (None, None);
        for line in info.lines().chain(std::iter::once("")) {
            let value = |l: &str| l.split(':').nth(1).map(|v| v.trim().to_owned());
            if line.starts_with("physical id") {
                package = value(line);
            } else if line.starts_with("core id") {
                core = value(line);
            } else if line.trim().is_empty() {
                if let (Some(p), Some(c)) = (package.take(), core.take()) {
                    cores.insert((p, c));
                }
            }
        }
        if !cores.is_empty() {
            return cores.len().min(logical);
        }
    }
    (logical / 2).max(1)
}
