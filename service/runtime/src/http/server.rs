//! The accept loop: one task per connection (plain or TLS), HTTP/1.1 and HTTP/2 on the same
//! port, and a graceful stop with a deadline. On stop the listener closes at once, every
//! connection finishes the responses in flight and closes, and whatever still runs when
//! `grace` is over is dropped: dropping a call's future cancels it (and a CLI adapter kills
//! its process group then), so nothing outlives the process.

use std::convert::Infallible;
use std::future::Future as _;
use std::pin::Pin;
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
    // covers the whole head, and the idle time before it on a kept-alive connection).
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
    let graceful = GracefulShutdown::new();
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
                let builder = builder.clone();
                let watcher = graceful.watcher();
                let tls = tls.clone();
                connections.spawn(async move {
                    match tls {
                        None => {
                            let io = FirstByte::new(tcp, limits.header_read_timeout);
                            let conn = builder.serve_connection_with_upgrades(TokioIo::new(io), service);
                            let _ = watcher.watch(conn.into_owned()).await;
                        }
                        Some(tls) => {
                            let Ok(Ok(stream)) = tokio::time::timeout(limits.header_read_timeout, tls.acceptor().accept(tcp)).await
                            else {
                                return;
                            };
                            let io = FirstByte::new(stream, limits.header_read_timeout);
                            let conn = builder.serve_connection_with_upgrades(TokioIo::new(io), service);
                            let _ = watcher.watch(conn.into_owned()).await;
                        }
                    }
                });
            }
        }
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(grace) => {
            tracing::warn!(
                connections = connections.len(),
                grace_ms = grace.as_millis() as u64,
                "shutdown grace period over; cancelling what still runs"
            );
        }
    }
    connections.shutdown().await;
    Ok(())
}

/// A connection whose reads fail with `TimedOut` when not one byte arrived within the
/// deadline. hyper's HTTP/1 `header_read_timeout` only starts once hyper-util's auto builder
/// has seen enough bytes to tell HTTP/1 from HTTP/2, so a client that connects and sends
/// nothing would otherwise hold the connection forever (slowloris); from the first byte on,
/// hyper's own timer takes over.
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
