//! The accept loop: one task per connection (plain or TLS), HTTP/1.1 and HTTP/2 on the same
//! port, and a graceful stop with a deadline. On stop the listener closes at once, every
//! connection finishes the responses in flight and closes, and whatever still runs when
//! `grace` is over is dropped: dropping a call's future cancels it (and a CLI adapter kills
//! its process group then), so nothing outlives the process.

use std::convert::Infallible;
use std::future::Future as _;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::response::Response;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::handover;
use super::head_timer::HeadTimer;
use super::tls::Tls;

/// What one listener allows each client: `limits.header_read_timeout_ms` for a request head
/// (HTTP/1) or a TLS handshake, `limits.max_connections` connections at once.
#[derive(Debug, Clone, Copy)]
pub struct ConnLimits {
    /// Time for a request head (HTTP/1) or a TLS handshake.
    pub header_read_timeout: Duration,
    /// Connections open at once; at the cap the listener stops accepting (new ones wait in
    /// the kernel's backlog) until one closes.
    pub max_connections: usize,
}

/// HTTP/2 streams one connection may have open at once. A gateway or mesh sidecar
/// multiplexes many callers on few connections; `limits.max_concurrent_requests` still caps
/// the endpoint as a whole, this only keeps one connection from taking all of it.
const H2_MAX_STREAMS: u32 = 256;

/// Largest HTTP/2 header list (decoded): as much as an HTTP/1.1 head may carry here, so the
/// `Mcp-Param-*` headers and a large bearer token fit on both.
const H2_MAX_HEADER_LIST: u32 = 64 * 1024;

/// Streams a client may reset before the server has answered them, per connection: the
/// "rapid reset" bound (CVE-2023-44487), kept at hyper's default and stated here.
const H2_MAX_PENDING_RESETS: usize = 20;

/// PING interval and timeout on idle HTTP/2 connections: a peer that vanished without a FIN
/// is noticed, and its streams (long `subscriptions/listen` ones too) are cancelled.
const H2_KEEPALIVE: (Duration, Duration) = (Duration::from_secs(30), Duration::from_secs(20));

/// A listener's service, made once per connection: told the peer's address, so what needs it
/// (the operator console's loopback check) can see it without a layer on every request.
pub trait PerConnection: Clone {
    /// The service for a connection from `peer`.
    fn for_peer(&self, peer: std::net::SocketAddr) -> Self;
}

/// Serves `service` on `listener` until `stop` fires, then drains for at most `grace`.
pub async fn run<S>(
    listener: TcpListener,
    tls: Option<Tls>,
    service: S,
    stop: CancellationToken,
    grace: Duration,
    limits: ConnLimits,
) -> std::io::Result<()>
where
    S: tower::Service<axum::http::Request<Incoming>, Response = Response, Error = Infallible>
        + PerConnection
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let mut builder = Builder::new(TokioExecutor::new());
    // Slowloris: a head trickled a byte at a time is cut at `header_read_timeout` (the timer
    // covers the whole head, and the idle time before it on a kept-alive connection). A
    // connection known to be HTTP/1 gets a timer of its own instead (`serve_io`).
    builder.http1().timer(TokioTimer::new()).header_read_timeout(limits.header_read_timeout);
    // HTTP/2 (ALPN `h2` over TLS, or cleartext with prior knowledge): the same protection in
    // its own terms. Flow-control windows stay at hyper's defaults (1 MiB per stream and
    // connection); the body limit applies to the bytes read either way.
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(H2_MAX_STREAMS)
        .max_header_list_size(H2_MAX_HEADER_LIST)
        .max_pending_accept_reset_streams(H2_MAX_PENDING_RESETS)
        .keep_alive_interval(H2_KEEPALIVE.0)
        .keep_alive_timeout(H2_KEEPALIVE.1);
    let builders =
        Arc::new(Builders { h1: builder.clone().http1_only(), h2: builder.clone().http2_only(), auto: builder });
    let graceful = GracefulShutdown::new();
    // HTTP/1 connections, whose streams may be handed over from hyper (`handover`) and so
    // leave its graceful shutdown: such a stream ends with the server's stop signal (a listen
    // stream sends its final response first) and is waited for here.
    let streams = TaskTracker::new();
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            () = stop.cancelled() => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            // At the cap, no accept until a connection ends (the branch above reaps it).
            accepted = listener.accept(), if connections.len() < limits.max_connections => {
                let (tcp, peer) = match accepted {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        // Usually out of file descriptors: back off instead of spinning.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let _ = tcp.set_nodelay(true);
                let service = TowerToHyperService::new(service.for_peer(peer));
                let builders = Arc::clone(&builders);
                let watch = Watch { watcher: graceful.watcher(), streams: streams.clone() };
                let tls = tls.clone();
                let stop = stop.clone();
                // A connection's task lives as long as the connection (an idle stream's too):
                // it holds little, and the TLS handshake and each protocol's state are boxed.
                connections.spawn(async move {
                    match tls {
                        None => {
                            // Until its first byte the connection is not hyper's, so hyper's
                            // graceful shutdown cannot close it: the stop signal does. A
                            // client's spare connection (a pool's, a browser's preconnect)
                            // would otherwise hold the shutdown for the head timeout.
                            let first = tokio::select! {
                                version = sniff(&tcp, limits.header_read_timeout) => version,
                                () = stop.cancelled() => None,
                            };
                            let Some(version) = first else { return };
                            let io = FirstByte::new(tcp, limits.header_read_timeout);
                            serve_io(&builders, version, io, service, watch).await;
                        }
                        Some(tls) => Box::pin(serve_tls(tls, tcp, &builders, service, watch, limits, &stop)).await,
                    }
                });
            }
        }
    }
    drop(listener);
    streams.close();
    let drained = tokio::time::timeout(grace, async {
        graceful.shutdown().await;
        streams.wait().await;
    });
    if drained.await.is_err() {
        tracing::warn!(
            connections = connections.len(),
            grace_ms = grace.as_millis() as u64,
            "shutdown grace period over; cancelling what still runs"
        );
    }
    connections.shutdown().await;
    Ok(())
}

/// The HTTP version of a connection, when known before hyper reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    H1,
    H2,
    /// Left to hyper-util's detection (it reads the first 24 bytes itself).
    Unknown,
}

/// The HTTP/2 connection preface (RFC 9113, section 3.4).
const H2_PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Tells HTTP/1.1 from cleartext HTTP/2 by peeking at the first bytes, without reading them.
/// hyper-util's own detection reads them and hands them back to hyper apart from the rest,
/// which makes hyper grow its HTTP/1 read buffer to 16 KB, kept for the life of the
/// connection (an idle `subscriptions/listen` stream paid it). `None`: no byte within
/// `within`, or the socket failed (the connection is dropped, as a silent one always was).
async fn sniff(tcp: &tokio::net::TcpStream, within: Duration) -> Option<Version> {
    let mut first = [0u8; H2_PREFACE.len()];
    let n = tokio::time::timeout(within, tcp.peek(&mut first)).await.ok()?.ok()?;
    match n {
        0 => None,
        _ if first[..n] != H2_PREFACE[..n] => Some(Version::H1),
        n if n == H2_PREFACE.len() => Some(Version::H2),
        // A preface split across segments: rare enough for the reading detection.
        _ => Some(Version::Unknown),
    }
}

/// The listener's connection builders: one per version known before hyper reads, and the
/// detecting one.
struct Builders {
    h1: Builder<TokioExecutor>,
    h2: Builder<TokioExecutor>,
    auto: Builder<TokioExecutor>,
}

/// What a connection's task is watched by: hyper's graceful shutdown while hyper serves it;
/// an HTTP/1 connection also by the tracker, which still holds it once a stream is handed
/// over from hyper.
struct Watch {
    watcher: hyper_util::server::graceful::Watcher,
    streams: TaskTracker,
}

/// The TLS handshake within the head timeout (and before the stop signal: until it is done,
/// hyper's graceful shutdown cannot close the connection), then the connection in the
/// protocol ALPN chose.
async fn serve_tls<S>(
    tls: Tls,
    tcp: tokio::net::TcpStream,
    builders: &Builders,
    service: TowerToHyperService<S>,
    watch: Watch,
    limits: ConnLimits,
    stop: &CancellationToken,
) where
    S: tower::Service<axum::http::Request<Incoming>, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    let handshake = tokio::time::timeout(limits.header_read_timeout, tls.acceptor().accept(tcp));
    let done = tokio::select! {
        done = handshake => Some(done),
        () = stop.cancelled() => None,
    };
    let Some(Ok(Ok(stream))) = done else { return };
    let version = match stream.get_ref().1.alpn_protocol() {
        Some(b"h2") => Version::H2,
        Some(b"http/1.1") => Version::H1,
        _ => Version::Unknown,
    };
    let io = FirstByte::new(stream, limits.header_read_timeout);
    serve_io(builders, version, io, service, watch).await;
}

/// Serves one connection with the version already told, or detected by hyper-util.
async fn serve_io<I, S>(builders: &Builders, version: Version, io: I, service: TowerToHyperService<S>, watch: Watch)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    S: tower::Service<axum::http::Request<Incoming>, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    let Watch { watcher, streams } = watch;
    // Each kind boxed on its own: the task holds only the one this connection speaks.
    let _ = match version {
        Version::H1 => {
            // HTTP/1.1 long-lived streams leave hyper once answered (see `handover`); the
            // tracker holds the connection from before hyper lets go of it.
            let _tracked = streams.token();
            let conn = handover::Conn::new();
            let service = handover::Service { inner: service, conn: Arc::clone(&conn) };
            // The head timeout on one timer for the connection's life (see `head_timer`).
            let mut h1 = builders.h1.clone();
            h1.http1().timer(HeadTimer::default());
            let served = h1.serve_connection(TokioIo::new(handover::Io::new(io, &conn)), service);
            let served = Box::pin(watcher.watch(served.into_owned()));
            if let Some((io, res)) = conn.serve(served).await {
                Box::pin(handover::stream(io, res)).await;
            }
            Ok(())
        }
        Version::H2 => {
            Box::pin(watcher.watch(builders.h2.serve_connection(TokioIo::new(io), service).into_owned())).await
        }
        Version::Unknown => {
            let io = TokioIo::new(io);
            Box::pin(watcher.watch(builders.auto.serve_connection_with_upgrades(io, service).into_owned())).await
        }
    };
}

/// A connection whose reads fail with `TimedOut` when not one byte arrived within the
/// deadline. hyper's HTTP/1 `header_read_timeout` only starts once hyper-util's auto builder
/// has seen enough bytes to tell HTTP/1 from HTTP/2 (the `Version::Unknown` path), and HTTP/2
/// has no head timer, so a client that connects (or completes a TLS handshake) and sends
/// nothing would otherwise hold the connection forever (slowloris); from the first byte on,
/// hyper's own timers take over. Every connection gets it: where `sniff` already saw a byte,
/// the first read drops the deadline.
struct FirstByte<I> {
    io: I,
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<I> FirstByte<I> {
    fn new(io: I, within: Duration) -> Self {
        Self { io, deadline: Some(Box::pin(tokio::time::sleep(within))) }
    }
}

impl<I: AsyncRead + Unpin> AsyncRead for FirstByte<I> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(read) => {
                if buf.filled().len() > before {
                    this.deadline = None;
                }
                Poll::Ready(read)
            }
            Poll::Pending => {
                let expired = this.deadline.as_mut().is_some_and(|d| d.as_mut().poll(cx).is_ready());
                if expired {
                    return Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "no request within the header read timeout",
                    )));
                }
                Poll::Pending
            }
        }
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for FirstByte<I> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncWriteExt;

    use super::*;

    /// What `sniff` makes of a connection whose client sent `first` (and then nothing).
    async fn sniffed(first: &[u8]) -> Option<Version> {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut client = tokio::net::TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
        client.write_all(first).await.unwrap();
        let (server, _) = listener.accept().await.unwrap();
        let version = sniff(&server, Duration::from_millis(300)).await;
        // Peeked, not read: hyper still gets every byte.
        let mut again = vec![0; first.len()];
        if !first.is_empty() {
            let n = server.peek(&mut again).await.unwrap();
            assert_eq!(&again[..n], &first[..n]);
        }
        version
    }

    #[tokio::test]
    async fn the_first_bytes_tell_the_version_without_being_consumed() {
        assert_eq!(sniffed(b"POST /mcp HTTP/1.1\r\n").await, Some(Version::H1));
        assert_eq!(sniffed(b"GET / HTTP/1.1\r\n").await, Some(Version::H1));
        assert_eq!(sniffed(H2_PREFACE).await, Some(Version::H2));
        // A preface cut short is left to hyper-util's reading detection.
        assert_eq!(sniffed(b"PRI * HTTP/2.0\r\n").await, Some(Version::Unknown));
        // Nothing within the head timeout: dropped, as before.
        assert_eq!(sniffed(b"").await, None);
    }
}
