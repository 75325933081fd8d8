# A model endpoint for scripts/startup-order: answers every Anthropic request with one streamed
# text reply (or, with "hang", reads the request and never answers: for measuring RSS while a
# one-shot waits).
import sys, socket, threading, json
mode = sys.argv[2] if len(sys.argv) > 2 else "answer"
port = int(sys.argv[1])
def ev(name, data):
    return f"event: {name}\ndata: {json.dumps(data)}\n\n"
body = "".join([
    ev("message_start", {"type":"message_start","message":{"id":"m1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":None,"usage":{"input_tokens":10,"output_tokens":1}}}),
    ev("content_block_start", {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
    ev("content_block_delta", {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"The answer is 42."}}),
    ev("content_block_stop", {"type":"content_block_stop","index":0}),
    ev("message_delta", {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}),
    ev("message_stop", {"type":"message_stop"}),
]).encode()
def handle(c):
    data = b""
    while b"\r\n\r\n" not in data:
        d = c.recv(65536)
        if not d: return
        data += d
    head, rest = data.split(b"\r\n\r\n", 1)
    n = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"): n = int(line.split(b":")[1])
    while len(rest) < n:
        d = c.recv(65536)
        if not d: break
        rest += d
    if mode == "hang":
        threading.Event().wait(60); return
    c.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: %d\r\nconnection: close\r\n\r\n" % len(body) + body)
    c.close()
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port)); s.listen(64)
while True:
    c, _ = s.accept()
    threading.Thread(target=handle, args=(c,), daemon=True).start()
