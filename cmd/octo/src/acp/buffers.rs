//! The editor's buffers as octo's file source and sink: with `fs/read_text_file` the model reads
//! what the user sees (unsaved changes included); with `fs/write_text_file` octo's edits of
//! existing files land in the editor's buffer, where its undo reaches them. Only where the call
//! goes changes: each read and write has passed octo's permission check first. A failed or slow
//! request goes to the disk instead.

use super::state::Acp;
use agent_client_protocol::v1::schema::{ReadTextFileRequest, WriteTextFileRequest};
use agent_client_protocol::{v1, Client};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// How long octo waits for the editor before using the disk.
const WAIT: Duration = Duration::from_secs(10);

type Cx = v1::ConnectionTo<Client>;

pub(super) struct EditorBuffers {
    cx: Cx,
    session: String,
    reads: bool,
    writes: bool,
}

impl EditorBuffers {
    /// The buffers of the client's session `id`, when it offered reading or writing files.
    pub(super) fn offered(acp: &Acp, cx: &Cx, id: &str) -> Option<Arc<dyn octo_app::Buffers>> {
        let reads = acp.client_reads.load(Ordering::SeqCst);
        let writes = acp.client_writes.load(Ordering::SeqCst);
        (reads || writes).then(|| {
            Arc::new(Self { cx: cx.clone(), session: id.to_owned(), reads, writes })
                as Arc<dyn octo_app::Buffers>
        })
    }
}

impl std::fmt::Debug for EditorBuffers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EditorBuffers")
            .field("session", &self.session)
            .field("reads", &self.reads)
            .field("writes", &self.writes)
            .finish_non_exhaustive()
    }
}

#[octo_app::async_trait]
impl octo_app::Buffers for EditorBuffers {
    async fn text(&self, path: &Path) -> Option<String> {
        if !self.reads {
            return None;
        }
        let req = ReadTextFileRequest::new(self.session.clone(), path.to_path_buf());
        match tokio::time::timeout(WAIT, self.cx.send_request(req).block_task()).await {
            Ok(Ok(r)) => Some(r.content),
            _ => None,
        }
    }

    async fn write(&self, path: &Path, text: &str) -> bool {
        if !self.writes {
            return false;
        }
        let req = WriteTextFileRequest::new(self.session.clone(), path.to_path_buf(), text.to_owned());
        matches!(tokio::time::timeout(WAIT, self.cx.send_request(req).block_task()).await, Ok(Ok(_)))
    }
}
