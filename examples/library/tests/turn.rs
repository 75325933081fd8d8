//! A tool-using turn against a scripted Anthropic endpoint on loopback: the model asks for
//! `read_file`, the tool reads the real file, the model's answer comes back.

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One streamed reply in the Messages API's event format.
fn sse(blocks: &str, stop: &str) -> String {
    let mut out = String::from(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n",
    );
    out.push_str(blocks);
    out.push_str(&format!(
        "event: message_delta\ndata: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"{stop}\"}},\"usage\":{{\"output_tokens\":5}}}}\n\nevent: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n"
    ));
    out
}

fn tool_call() -> String {
    sse(
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"read_file\",\"input\":{}}}\n\n\
         event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\":\\\"notes.txt\\\"}\"}}\n\n\
         event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "tool_use",
    )
}

fn answer(text: &str) -> String {
    sse(
        &format!(
            "event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{{\"type\":\"text\",\"text\":\"\"}}}}\n\n\
             event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"{text}\"}}}}\n\n\
             event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":0}}\n\n"
        ),
        "end_turn",
    )
}

/// Serves `replies` in order, one per request, and hands back the bodies it was sent.
async fn serve(replies: Vec<String>) -> (String, tokio::task::JoinHandle<Vec<String>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let mut bodies = Vec::new();
        for reply in replies {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = Vec::new();
            let mut buf = [0u8; 65536];
            // Headers, then as many body bytes as Content-Length says.
            loop {
                let n = socket.read(&mut buf).await.unwrap();
                request.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&request).to_string();
                if let Some((head, body)) = text.split_once("\r\n\r\n") {
                    let len = head
                        .lines()
                        .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse::<usize>().unwrap()))
                        .unwrap_or(0);
                    if body.len() >= len {
                        bodies.push(body.to_owned());
                        break;
                    }
                }
            }
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                reply.len()
            );
            socket.write_all(head.as_bytes()).await.unwrap();
            socket.write_all(reply.as_bytes()).await.unwrap();
            socket.shutdown().await.unwrap();
        }
        bodies
    });
    (base, task)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_using_turn_reads_the_file_and_answers() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "the launch is on Tuesday\n").unwrap();
    let (base, server) = serve(vec![tool_call(), answer("It says the launch is on Tuesday.")]).await;
    let said = octo_library_example::ask(&base, Some("sk-test".into()), "claude-sonnet-4-5", dir.path(), "what does notes.txt say?")
        .await
        .unwrap();
    assert_eq!(said, "It says the launch is on Tuesday.");
    let bodies = server.await.unwrap();
    assert_eq!(bodies.len(), 2);
    assert!(bodies[1].contains("the launch is on Tuesday"), "the tool's output went back to the model: {}", bodies[1]);
}
