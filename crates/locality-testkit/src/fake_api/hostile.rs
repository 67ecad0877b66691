//! Hostile answers of the fake API server (issue #40): a body far larger than any page,
//! one trickled a byte at a time, a list that never ends, a continue token that repeats,
//! an error `Status` with a message of the test's choosing (huge, control characters, an
//! echoed token). Set per path in [`super::Faults::hostile`].

use std::time::Duration;

use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::tcp::OwnedWriteHalf;

/// One hostile answer.
#[derive(Debug, Clone)]
pub enum Hostile {
    /// `200` with a body of this many bytes, generated as it is sent (never held): a
    /// `PodList` whose `items` is padded with spaces.
    Huge(u64),
    /// `200` with a small `PodList`, one byte every this often.
    Trickle(Duration),
    /// A list page with no items and a fresh continue token every time: the list never ends.
    Endless,
    /// A list page with no items and the same continue token every time.
    RepeatContinue,
    /// An error `Status` with this code and message.
    Status(u16, String),
}

/// Writes `h`'s answer to a request with the query `query` (the part after `?`).
pub(super) async fn answer(h: &Hostile, query: &str, write: &mut OwnedWriteHalf) -> std::io::Result<()> {
    match h {
        Hostile::Huge(bytes) => {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {bytes}\r\n\r\n"
            );
            write.write_all(head.as_bytes()).await?;
            let start = b"{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{},\"items\":[";
            let end = b"]}";
            write.write_all(start).await?;
            let mut left = bytes.saturating_sub((start.len() + end.len()) as u64);
            let chunk = vec![b' '; 1 << 16];
            while left > 0 {
                let n = left.min(chunk.len() as u64) as usize;
                write.write_all(&chunk[..n]).await?;
                left -= n as u64;
            }
            write.write_all(end).await?;
        }
        Hostile::Trickle(every) => {
            let body = b"{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{},\"items\":[]}";
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                body.len()
            );
            write.write_all(head.as_bytes()).await?;
            for b in body {
                write.write_all(&[*b]).await?;
                write.flush().await?;
                tokio::time::sleep(*every).await;
            }
        }
        Hostile::Endless | Hostile::RepeatContinue => {
            let page = query
                .split('&')
                .find_map(|p| p.strip_prefix("continue="))
                .and_then(|t| t.strip_prefix("page"))
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0);
            let token = if matches!(h, Hostile::Endless) {
                format!("page{}", page + 1)
            } else {
                "page1".to_owned()
            };
            let body = json!({
                "kind": "PodList", "apiVersion": "v1",
                "metadata": {"resourceVersion": "1", "continue": token}, "items": []
            })
            .to_string();
            respond(write, 200, &body).await?;
        }
        Hostile::Status(code, message) => {
            let body = json!({
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": message, "reason": "InternalError", "code": code,
            })
            .to_string();
            respond(write, *code, &body).await?;
        }
    }
    write.flush().await
}

async fn respond(write: &mut OwnedWriteHalf, code: u16, body: &str) -> std::io::Result<()> {
    let response = format!(
        "HTTP/1.1 {code} Hostile\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    write.write_all(response.as_bytes()).await
}
