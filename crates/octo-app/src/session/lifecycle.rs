//! The end of a session: its processes stopped, its servers and sub-agents shut down, and the
//! SessionEnd hooks run once.

use super::facade::Session;

impl Session {
    /// Waits until the session has done what follows a turn (its checkpoint is stored), so a
    /// front end about to exit loses nothing.
    pub async fn settle(&self) {
        let _ = self.history().await;
    }

    /// Stops every process the session's commands left running (background shells and
    /// daemonised grandchildren alike) and returns the background commands that were still
    /// running, to be named to the user (`shell-1 (`npm run dev`)`). Front ends call it when
    /// the session ends; dropping the session does the same without naming them.
    pub fn stop_processes(&self) -> Vec<String> {
        self.end_hooks();
        let tools = &self.setup.tools;
        if let Some(hub) = &tools.mcp {
            hub.shutdown();
        }
        if let Some(s) = &tools.spawner {
            s.cancel_all();
        }
        tools.shells.as_ref().map(|s| s.stop_all()).unwrap_or_default()
    }

    /// Runs the SessionEnd hooks once (on a thread of their own, as the session's runtime may be
    /// ending).
    fn end_hooks(&self) {
        if self.setup.hooks.ended.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let Some(hooks) = self.setup.hooks.cell.as_ref().map(|c| c.get()) else { return };
        if !hooks.has(octo_hooks::Event::SessionEnd) {
            return;
        }
        let _ = std::thread::spawn(move || {
            if let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() {
                rt.block_on(hooks.session_end("exit"));
            }
        })
        .join();
    }
}
