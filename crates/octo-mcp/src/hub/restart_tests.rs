//! When a crashed server is started again.

use super::{may_restart, RESTART_WINDOW};
use std::time::{Duration, Instant};

#[test]
fn crashes_now_and_then_are_restarted_and_a_crash_loop_is_given_up() {
    let start = Instant::now();
    // Four crashes across an hour, each restart having worked: all started again.
    let mut recent = Vec::new();
    for i in 0..4u64 {
        let at = start + Duration::from_secs(i * 20 * 60);
        assert!(may_restart(&mut recent, at).is_some(), "crash {} at minute {}", i + 1, i * 20);
    }
    // Four within a minute: the fourth is given up.
    let mut recent = Vec::new();
    for i in 0..3u64 {
        assert_eq!(may_restart(&mut recent, start + Duration::from_secs(i * 10)), Some(i as usize + 1));
    }
    assert_eq!(may_restart(&mut recent, start + Duration::from_secs(40)), None);
    // Once the window has passed, it may be started again.
    assert!(may_restart(&mut recent, start + RESTART_WINDOW + Duration::from_secs(30)).is_some());
}
