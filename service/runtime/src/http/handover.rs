//! Long-lived HTTP/1.1 streams leave hyper once answered.
//!
//! hyper keeps two 8 KB buffers for each HTTP/1 connection as long as it lives: the read
//! buffer (the request's header values point into it) and the buffer it writes heads into,
//! with no setting to shrink either. An idle `subscriptions/listen` stream or 2025-era GET
//! stream paid those 16 KB, twice what the stream itself holds. So a response marked
//! [`long_lived`] on an HTTP/1.1 connection is handed over, as Go's `http.Hijacker` hands a
//! connection to its handler: the connection's task drops hyper's connection, buffers and all,
//! and writes the head and the chunked body itself ([`stream`]). The head says
//! `connection: close`: the stream's end ends the connection (the client went, or the server
//! is stopping), as it would for these streams anyway. HTTP/2 streams stay with hyper; their
//! buffers belong to the connection, shared by all its streams.
//!
//! A hand-over only happens when hyper holds nothing unwritten: hyper calls its IO's
//! `poll_flush` only once its write buffer is empty, so "flushed since the last write" (tracked
//! by [`Io`]) means no byte of an earlier response is left behind. Bytes a client pipelined
//! after the stream's request are dropped with hyper's read buffer: the closing head tells it
//! to send them again on another connection (RFC 9112, section 9.3.2).

use std::convert::Infallible;
use std::future::Future;
use std::io::Write as _;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, ready};

use axum::body::Body;
use axum::http::{HeaderName, Method, Version, header};
use axum::response::Response;
use http_body_util::BodyExt as _;
use hyper::body::Incoming;
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _, ReadBuf};

/// Marks a response whose body is a long-lived stream (see the module's documentation).
#[derive(Debug, Clone, Copy)]
struct LongLived;

/// `res`, marked as a long-lived stream: on HTTP/1.1 it is written outside hyper.
pub fn long_lived(mut res: Response) -> Response {
    res.extensions_mut().insert(LongLived);
    res
}

/// What one HTTP/1.1 connection's task shares with hyper's IO ([`Io`]) and service
/// ([`Service`]). hyper's reads and writes only touch the two flags; the lock is taken once,
/// at a hand-over.
pub(super) struct Conn<I> {
    /// hyper called `poll_flush` after its last write: its write buffer is empty.
    flushed: AtomicBool,
    /// A response was handed over: hyper's reads and writes wait from then on (its
    /// connection is dropped as soon as it yields).
    handed: AtomicBool,
    /// The response handed over, and the IO, put back when hyper drops its [`Io`].
    taken: Mutex<(Option<Response>, Option<I>)>,
}

impl<I> Conn<I> {
    pub(super) fn new() -> Arc<Self> {
        Arc::new(Self {
            flushed: AtomicBool::new(true),
            handed: AtomicBool::new(false),
            taken: Mutex::new((None, None)),
        })
    }

    fn taken(&self) -> MutexGuard<'_, (Option<Response>, Option<I>)> {
        // Nothing panics while holding it; a poisoned slot is still consistent.
        self.taken.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes `res` over if hyper has nothing left to write, answering hyper with an empty
    /// response it will never write; otherwise gives `res` back to hyper.
    fn offer(&self, res: Response) -> Response {
        if !self.flushed.load(Ordering::Acquire) || self.handed.swap(true, Ordering::AcqRel) {
            return res;
        }
        self.taken().0 = Some(res);
        Response::new(Body::empty())
    }

    /// Drives hyper's connection until it ends (`None`) or a response is handed over: then
    /// hyper's connection is dropped, and the IO comes back with the response (this state
    /// goes: the stream keeps nothing of hyper's).
    pub(super) async fn serve<F: Future + Unpin>(self: Arc<Self>, mut hyper: F) -> Option<(I, Response)> {
        let handed = std::future::poll_fn(|cx| {
            let polled = Pin::new(&mut hyper).poll(cx);
            if self.handed.load(Ordering::Acquire) { Poll::Ready(true) } else { polled.map(|_| false) }
        })
        .await;
        drop(hyper);
        let (res, io) = &mut *self.taken();
        if handed { io.take().zip(res.take()) } else { None }
    }
}

/// The IO hyper sees: the connection's, until a response is handed over; dropped with
/// hyper's connection, it puts the IO back for the connection's task.
pub(super) struct Io<I> {
    io: Option<I>,
    conn: Arc<Conn<I>>,
}

impl<I> Io<I> {
    pub(super) fn new(io: I, conn: &Arc<Conn<I>>) -> Self {
        Self { io: Some(io), conn: Arc::clone(conn) }
    }

    /// Runs `f` on the IO while hyper owns it; `Pending` once handed over (no wake-up is
    /// needed: hyper's connection is dropped at its next yield).
    fn with<T>(&mut self, f: impl FnOnce(Pin<&mut I>, &AtomicBool) -> Poll<T>) -> Poll<T>
    where
        I: Unpin,
    {
        match &mut self.io {
            Some(io) if !self.conn.handed.load(Ordering::Acquire) => f(Pin::new(io), &self.conn.flushed),
            _ => Poll::Pending,
        }
    }
}

impl<I> Drop for Io<I> {
    fn drop(&mut self) {
        if self.conn.handed.load(Ordering::Acquire) {
            self.conn.taken().1 = self.io.take();
        }
    }
}

impl<I: AsyncRead + Unpin> AsyncRead for Io<I> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        self.get_mut().with(|io, _| io.poll_read(cx, buf))
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for Io<I> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        self.get_mut().with(|io, flushed| {
            flushed.store(false, Ordering::Release);
            io.poll_write(cx, buf)
        })
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        self.get_mut().with(|io, flushed| {
            flushed.store(false, Ordering::Release);
            io.poll_write_vectored(cx, bufs)
        })
    }

    fn is_write_vectored(&self) -> bool {
        self.io.as_ref().is_some_and(I::is_write_vectored)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.get_mut().with(|io, flushed| {
            let done = ready!(io.poll_flush(cx));
            flushed.store(done.is_ok(), Ordering::Release);
            Poll::Ready(done)
        })
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.get_mut().with(|io, _| io.poll_shutdown(cx))
    }
}

/// The connection's service, offering each HTTP/1.1 response marked [`long_lived`].
pub(super) struct Service<S, I> {
    pub(super) inner: S,
    pub(super) conn: Arc<Conn<I>>,
}

impl<S, I> hyper::service::Service<axum::http::Request<Incoming>> for Service<S, I>
where
    S: hyper::service::Service<axum::http::Request<Incoming>, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Offer<S::Future, I>;

    fn call(&self, req: axum::http::Request<Incoming>) -> Self::Future {
        // Chunked bodies are HTTP/1.1's (RFC 9112, section 7.1): an HTTP/1.0 stream stays with
        // hyper, and so does a HEAD, whose answer has no body to write.
        let streams = req.version() == Version::HTTP_11 && req.method() != Method::HEAD;
        let conn = streams.then(|| Arc::clone(&self.conn));
        Offer { inner: self.inner.call(req), conn }
    }
}

pin_project_lite::pin_project! {
    /// The service's answer, offered for a hand-over when marked.
    pub(super) struct Offer<F, I> {
        #[pin]
        inner: F,
        conn: Option<Arc<Conn<I>>>,
    }
}

impl<F, I> Future for Offer<F, I>
where
    F: Future<Output = Result<Response, Infallible>>,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let Ok(res) = ready!(this.inner.poll(cx));
        Poll::Ready(Ok(match this.conn.take() {
            Some(conn) if res.extensions().get::<LongLived>().is_some() => conn.offer(res),
            _ => res,
        }))
    }
}

/// Writes a handed-over response: its head, its body in chunks as they come, then the last
/// chunk. Ends early when the client closes its side (what hyper noticed for the stream
/// before) or a write fails; the body is dropped then, which ends the stream behind it.
pub(super) async fn stream<I: AsyncRead + AsyncWrite + Unpin>(mut io: I, res: Response) {
    let (parts, mut body) = res.into_parts();
    if write(&mut io, &head(&parts)).await.is_err() {
        return;
    }
    // The client sends nothing more on a closing connection; whatever it does send is dropped.
    let mut scratch = [0u8; 64];
    loop {
        let frame = tokio::select! {
            frame = body.frame() => frame,
            read = io.read(&mut scratch) => match read {
                Ok(0) | Err(_) => return,
                Ok(_) => continue,
            },
        };
        match frame {
            Some(Ok(frame)) => {
                let Ok(data) = frame.into_data() else { continue };
                if !data.is_empty() && write(&mut io, &chunk(&data)).await.is_err() {
                    return;
                }
            }
            // A failed body is cut without the last chunk, so the client sees it incomplete.
            Some(Err(_)) => return,
            None => break,
        }
    }
    if write(&mut io, b"0\r\n\r\n").await.is_ok() {
        let _ = io.shutdown().await;
    }
}

async fn write<I: AsyncWrite + Unpin>(io: &mut I, bytes: &[u8]) -> std::io::Result<()> {
    io.write_all(bytes).await?;
    io.flush().await
}

/// The response head as hyper would write it, framed for a chunked body on a closing
/// connection (RFC 9112, sections 6.1 and 9.6).
fn head(parts: &axum::http::response::Parts) -> Vec<u8> {
    const FRAMING: [HeaderName; 3] = [header::CONTENT_LENGTH, header::TRANSFER_ENCODING, header::CONNECTION];
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(b"HTTP/1.1 ");
    out.extend_from_slice(parts.status.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(parts.status.canonical_reason().unwrap_or("").as_bytes());
    out.extend_from_slice(b"\r\n");
    for (name, value) in &parts.headers {
        if FRAMING.contains(name) {
            continue;
        }
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if !parts.headers.contains_key(header::DATE) {
        out.extend_from_slice(b"date: ");
        out.extend_from_slice(httpdate::fmt_http_date(std::time::SystemTime::now()).as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"transfer-encoding: chunked\r\nconnection: close\r\n\r\n");
    out
}

/// One chunk of a chunked body (RFC 9112, section 7.1).
fn chunk(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 12);
    // Writing to a Vec cannot fail.
    let _ = write!(out, "{:x}\r\n", data.len());
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    out
}

#[cfg(test)]
mod tests {
    use axum::http::StatusCode;

    use super::*;

    #[test]
    fn the_head_frames_a_chunked_body_on_a_closing_connection() {
        let res = Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, "text/event-stream")
            .header(header::CONTENT_LENGTH, "5")
            .header(header::CONNECTION, "keep-alive")
            .body(Body::empty())
            .unwrap();
        let (parts, _) = res.into_parts();
        let head = String::from_utf8(head(&parts)).unwrap();
        assert!(head.starts_with("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ndate: "), "{head}");
        assert!(head.ends_with("\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"), "{head}");
        assert!(!head.contains("content-length") && !head.contains("keep-alive"), "{head}");
        assert_eq!(chunk(b"data: x\n\n"), b"9\r\ndata: x\n\n\r\n");
    }
}
