//! A scripted Chat Completions server on loopback for the hook and watch tests: it stands
//! in for the remote writer model only. Each request's JSON body goes to a script that
//! returns the reply, so a reply can cite the refs the runtime put in the prompt.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// Every request body the server saw, in order.
pub(crate) type Seen = Arc<Mutex<Vec<Value>>>;

/// The script: the request number (0-based) and body to the reply.
pub(crate) type Script = Box<dyn Fn(usize, &Value) -> Value + Send>;

/// Serve `script` on a fresh loopback port, each reply after `delay`; the API root and the log.
pub(crate) fn serve(script: Script, delay: Duration) -> Result<(String, Seen), std::io::Error> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let url = format!("http://{}/v1", listener.local_addr()?);
    let seen: Seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().enumerate() {
            let Ok(mut stream) = stream else { return };
            let Ok(clone) = stream.try_clone() else { return };
            let mut reader = BufReader::new(clone);
            let (mut length, mut line) = (0usize, String::new());
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap_or(0);
                }
                line.clear();
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let reply = script(n, &body);
            if let Ok(mut log) = log.lock() {
                log.push(body);
            }
            std::thread::sleep(delay);
            let text = reply.to_string();
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                text.len()
            );
            let _ = stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(text.as_bytes()));
        }
    });
    Ok((url, seen))
}

/// A Chat Completions reply holding `message`.
pub(crate) fn completion(message: Value, finish_reason: &str) -> Value {
    json!({
        "id": "chatcmpl-hook", "object": "chat.completion", "created": 1_764_633_600, "model": "test-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
    })
}

/// The `ref` of the observed line whose content holds `needle`, from a write task's prompt.
pub(crate) fn ref_of(body: &Value, needle: &str) -> Option<String> {
    let messages = body["messages"].as_array()?;
    messages.iter().filter_map(|m| m["content"].as_str()).flat_map(str::lines).find_map(|line| {
        let record: Value = serde_json::from_str(line.trim()).ok()?;
        record["content"].as_str()?.contains(needle).then(|| record["ref"].as_str().map(str::to_owned))?
    })
}

/// A writer that files every fact in `facts` (needle, sentence) into `path` with one
/// `Write`, citing each needle's turn, then says it is done; any later request (organize) is
/// answered with no edit.
pub(crate) fn topic_writer(
    path: &'static str,
    heading: &'static str,
    facts: Vec<(&'static str, &'static str)>,
) -> Script {
    Box::new(move |n, body| {
        let is_write_task = body.to_string().contains("## Observed");
        if n == 0 && is_write_task {
            let mut topic = format!("# {heading}\n\n");
            let mut notes = String::new();
            for (i, (needle, sentence)) in facts.iter().enumerate() {
                let handle = ref_of(body, needle).unwrap_or_else(|| format!("missing/{needle}"));
                topic.push_str(&format!("{sentence}[^e{}]\n\n", i + 1));
                notes.push_str(&format!("[^e{}]: Time: `2024-05-01`; Sources: [tea preference]({handle})\n", i + 1));
            }
            topic.push_str(&notes);
            let call = json!({"file_path": path, "content": topic}).to_string();
            return completion(
                json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "Write", "arguments": call}}]}),
                "tool_calls",
            );
        }
        completion(json!({"role": "assistant", "content": "Done."}), "stop")
    })
}
