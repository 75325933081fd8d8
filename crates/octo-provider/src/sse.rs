//! An incremental Server-Sent Events decoder.
//!
//! Bytes go in as they arrive from the network, in chunks of any size; complete events come out.
//! It follows the WHATWG event-stream rules: lines end with LF, CRLF or a lone CR (also when the CR
//! and LF arrive in different chunks); `event:` names the event; consecutive `data:` lines join
//! with `\n`; lines starting with `:` are comments (keep-alives); one leading space after the colon
//! is dropped; a blank line dispatches; a record without data dispatches nothing; a leading UTF-8
//! BOM is skipped. `id:` and `retry:` are accepted and ignored.
//!
//! One leniency: [`SseDecoder::finish`] dispatches a last record that has data but no closing blank
//! line, since several OpenAI-compatible servers end their streams that way.

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One decoded event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field; empty when the record had none (the spec's default type `message`).
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// Decodes an event stream incrementally. See the module docs for the rules.
#[derive(Debug, Default)]
pub struct SseDecoder {
    /// Bytes of a line whose end has not arrived yet.
    partial: Vec<u8>,
    /// The previous chunk ended with CR: a leading LF in the next chunk belongs to it.
    after_cr: bool,
    /// Still at the very start of the stream (a BOM may follow).
    at_start: bool,
    /// The first bytes of the stream while deciding whether they are a BOM.
    bom: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self { at_start: true, ..Self::default() }
    }

    /// Feeds the next chunk; complete events are appended to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) {
        if !self.at_start {
            self.feed_bytes(chunk, out);
            return;
        }
        // The BOM may arrive split across chunks: collect up to three bytes before deciding.
        let take = (BOM.len() - self.bom.len()).min(chunk.len());
        self.bom.extend_from_slice(&chunk[..take]);
        if self.bom.len() < BOM.len() && BOM.starts_with(&self.bom) {
            return;
        }
        self.at_start = false;
        let head = std::mem::take(&mut self.bom);
        if head != BOM {
            self.feed_bytes(&head, out);
        }
        self.feed_bytes(&chunk[take..], out);
    }

    fn feed_bytes(&mut self, mut chunk: &[u8], out: &mut Vec<SseEvent>) {
        if chunk.is_empty() {
            // Nothing arrived: in particular, a pending CR still waits for its possible LF.
            return;
        }
        if self.after_cr {
            self.after_cr = false;
            if let Some(rest) = chunk.strip_prefix(b"\n") {
                chunk = rest;
            }
        }
        while let Some(pos) = chunk.iter().position(|&b| b == b'\n' || b == b'\r') {
            let (line, terminator) = (&chunk[..pos], chunk[pos]);
            if self.partial.is_empty() {
                self.line(line, out);
            } else {
                self.partial.extend_from_slice(line);
                let full = std::mem::take(&mut self.partial);
                self.line(&full, out);
                // Keep the allocation for the next partial line.
                self.partial = full;
                self.partial.clear();
            }
            chunk = &chunk[pos + 1..];
            if terminator == b'\r' {
                match chunk.first() {
                    Some(b'\n') => chunk = &chunk[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
        }
        self.partial.extend_from_slice(chunk);
    }

    /// Ends the stream: a last record with data but no closing blank line is dispatched.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if self.at_start {
            self.at_start = false;
            let head = std::mem::take(&mut self.bom);
            self.feed_bytes(&head, out);
        }
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.line(&line, out);
        }
        self.dispatch(out);
    }

    fn line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return; // comment / keep-alive
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &[][..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&String::from_utf8_lossy(value));
                self.has_data = true;
            }
            b"event" => {
                self.event.clear();
                self.event.push_str(&String::from_utf8_lossy(value));
            }
            _ => {} // id, retry and unknown fields
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        if self.has_data {
            out.push(SseEvent {
                event: std::mem::take(&mut self.event),
                data: std::mem::take(&mut self.data),
            });
        } else {
            self.event.clear();
        }
        self.has_data = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_chunks(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        for c in chunks {
            d.feed(c, &mut out);
        }
        d.finish(&mut out);
        out
    }

    fn ev(event: &str, data: &str) -> SseEvent {
        SseEvent { event: event.into(), data: data.into() }
    }

    const SAMPLE: &str = "\u{feff}: hello comment\r\n\
        event: message_start\r\ndata: {\"a\":1}\r\n\r\n\
        event: ping\ndata: {}\n\n\
        data: line one\rdata:line two\r\rid: 7\nretry: 100\n\
        event: ignored-without-data\n\n\
        data\n\n\
        event: é\ndata: ünïcode ✓\n\n\
        data: [DONE]\n\n";

    fn expected() -> Vec<SseEvent> {
        vec![
            ev("message_start", "{\"a\":1}"),
            ev("ping", "{}"),
            ev("", "line one\nline two"),
            ev("", ""),
            ev("é", "ünïcode ✓"),
            ev("", "[DONE]"),
        ]
    }

    #[test]
    fn decodes_every_line_ending_and_field_kind() {
        assert_eq!(decode_chunks(&[SAMPLE.as_bytes()]), expected());
    }

    #[test]
    fn the_same_events_at_every_split_point() {
        let bytes = SAMPLE.as_bytes();
        for i in 0..=bytes.len() {
            assert_eq!(decode_chunks(&[&bytes[..i], &bytes[i..]]), expected(), "split at byte {i}");
        }
    }

    #[test]
    fn the_same_events_byte_by_byte_and_in_random_pieces() {
        let bytes = SAMPLE.as_bytes();
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(decode_chunks(&singles), expected());
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..500 {
            let mut pieces = Vec::new();
            let mut rest = bytes;
            while !rest.is_empty() {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let n = (seed % 9) as usize + 1;
                let n = n.min(rest.len());
                pieces.push(&rest[..n]);
                rest = &rest[n..];
            }
            assert_eq!(decode_chunks(&pieces), expected());
        }
    }

    #[test]
    fn an_empty_chunk_between_cr_and_lf_changes_nothing() {
        let out = decode_chunks(&[b"data: a\r", b"", b"\ndata: b\r\n\r\n"]);
        assert_eq!(out, vec![ev("", "a\nb")]);
    }

    #[test]
    fn a_last_record_without_blank_line_is_kept() {
        assert_eq!(decode_chunks(&[b"data: {\"x\":1}"]), vec![ev("", "{\"x\":1}")]);
        assert_eq!(decode_chunks(&[b"data: a\n"]), vec![ev("", "a")]);
    }

    #[test]
    fn empty_and_comment_only_streams_yield_nothing() {
        assert!(decode_chunks(&[]).is_empty());
        assert!(decode_chunks(&[b": keep-alive\n\n: again\n\n"]).is_empty());
        assert!(decode_chunks(&[b"\xEF\xBB"]).is_empty());
    }

    #[test]
    fn a_partial_bom_is_data_not_swallowed() {
        // A stray 0xEF is the start of an (unknown) field line, not a BOM to drop silently.
        assert_eq!(decode_chunks(&[b"\xEF", b"\ndata: x\n\n"]), vec![ev("", "x")]);
        assert!(decode_chunks(&[b"\xEF", b"data: x\n\n"]).is_empty());
    }

    #[test]
    fn invalid_utf8_is_replaced_not_fatal() {
        let out = decode_chunks(&[b"data: a\xFFb\n\n"]);
        assert_eq!(out[0].data, "a\u{fffd}b");
    }
}
