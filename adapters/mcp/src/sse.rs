//! Reading `text/event-stream` bodies (the WHATWG "server-sent events" format): one JSON-RPC
//! message per event's `data` (MCP 2026-07-28 basic/transports/streamable-http § Responses).
//! Comments (keep-alives), `event:`, `id:` and `retry:` lines are skipped.

use bytes::{Buf as _, BytesMut};
use futures_util::{Stream, StreamExt as _};

/// Reads events from a body stream.
pub struct SseReader<S> {
    body: S,
    buf: BytesMut,
    max_event_bytes: usize,
    done: bool,
}

impl<S> std::fmt::Debug for SseReader<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SseReader").field("buffered", &self.buf.len()).finish_non_exhaustive()
    }
}

impl<S, E> SseReader<S>
where
    S: Stream<Item = Result<bytes::Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    /// A reader of `body` refusing events larger than `max_event_bytes`.
    pub fn new(body: S, max_event_bytes: usize) -> Self {
        Self { body, buf: BytesMut::new(), max_event_bytes, done: false }
    }

    /// The `data` of the next event (its `data:` lines joined by `\n`); `None` at the end.
    pub async fn next_data(&mut self) -> Result<Option<String>, String> {
        loop {
            if let Some(event) = self.take_event() {
                let data = data_of(&event);
                if data.is_some() {
                    return Ok(data);
                }
                continue;
            }
            if self.done {
                return Ok(None);
            }
            match self.body.next().await {
                Some(Ok(chunk)) => {
                    self.buf.extend_from_slice(&chunk);
                    if self.buf.len() > self.max_event_bytes {
                        return Err(format!("an event is longer than {} bytes", self.max_event_bytes));
                    }
                }
                Some(Err(e)) => return Err(format!("the stream broke: {e}")),
                None => self.done = true,
            }
        }
    }

    /// One complete event (up to a blank line), without the blank line.
    fn take_event(&mut self) -> Option<String> {
        let bytes = &self.buf[..];
        let end = (0..bytes.len()).find_map(|i| {
            if bytes[i..].starts_with(b"\n\n") || bytes[i..].starts_with(b"\r\r") {
                Some((i, 2))
            } else if bytes[i..].starts_with(b"\r\n\r\n") {
                Some((i, 4))
            } else {
                None
            }
        });
        let (at, len) = match end {
            Some(e) => e,
            // A last event without its blank line still counts when the stream ended.
            None if self.done && !self.buf.is_empty() => (self.buf.len(), 0),
            None => return None,
        };
        let event = String::from_utf8_lossy(&self.buf[..at]).into_owned();
        self.buf.advance(at + len);
        Some(event)
    }
}

/// The joined `data:` lines of one event, `None` when it has none.
fn data_of(event: &str) -> Option<String> {
    let mut data: Option<String> = None;
    for line in event.split(['\n', '\r']) {
        let value = match line.strip_prefix("data") {
            Some("") => "",
            Some(rest) => match rest.strip_prefix(':') {
                Some(v) => v.strip_prefix(' ').unwrap_or(v),
                None => continue,
            },
            None => continue,
        };
        match &mut data {
            Some(d) => {
                d.push('\n');
                d.push_str(value);
            }
            None => data = Some(value.to_owned()),
        }
    }
    // An event whose data is empty is not dispatched (WHATWG HTML § Interpreting an event
    // stream): SDK servers send such "priming" events carrying only an `id`.
    data.filter(|d| !d.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(chunks: Vec<&'static str>) -> SseReader<impl Stream<Item = Result<bytes::Bytes, String>> + Unpin> {
        let items: Vec<Result<bytes::Bytes, String>> =
            chunks.into_iter().map(|c| Ok(bytes::Bytes::from_static(c.as_bytes()))).collect();
        SseReader::new(futures_util::stream::iter(items), 1024)
    }

    #[tokio::test]
    async fn events_split_across_chunks_and_comments_skipped() {
        let mut r = reader(vec![
            ": keep-alive\n\nevent: message\nda",
            "ta: {\"a\":1}\n\n",
            "data: x\r\ndata: y\r\n\r\n",
            "data: last",
        ]);
        assert_eq!(r.next_data().await.unwrap().as_deref(), Some("{\"a\":1}"));
        assert_eq!(r.next_data().await.unwrap().as_deref(), Some("x\ny"));
        assert_eq!(r.next_data().await.unwrap().as_deref(), Some("last"));
        assert_eq!(r.next_data().await.unwrap(), None);
    }

    #[tokio::test]
    async fn an_endless_event_is_refused() {
        let long: &'static str = Box::leak("x".repeat(2000).into_boxed_str());
        let mut r = reader(vec!["data: ", long]);
        assert!(r.next_data().await.unwrap_err().contains("longer than 1024"));
    }
}
