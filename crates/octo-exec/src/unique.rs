//! Suffixes that keep names apart.

/// Nanoseconds of the clock: a cheap suffix so names never collide with an earlier process's.
pub fn unique() -> u32 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0)
}
