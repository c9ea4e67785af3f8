//! Command line: `mcp-runtime [serve] [--config FILE] [--listen ADDR]` and
//! `mcp-runtime check --config FILE`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use std::time::Duration;

use clap::{Parser, Subcommand};

use crate::config::Config;
use crate::http::Listeners;
use crate::http::tls::Tls;
use crate::state::AppState;

/// Stateless MCP 2026-07-28 server runtime.
#[derive(Debug, Parser)]
#[command(name = "mcp-runtime", version, about)]
struct Args {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve MCP over Streamable HTTP (the default).
    Serve {
        /// Configuration file (TOML). Without it, the embedded demo configuration.
        #[arg(long, env = "MCP_RUNTIME_CONFIG")]
        config: Option<PathBuf>,
        /// Address to listen on; overrides `server.listen`.
        #[arg(long)]
        listen: Option<SocketAddr>,
    },
    /// Validate a configuration (adapters and registry included) and exit.
    Check {
        /// Configuration file (TOML).
        #[arg(long)]
        config: PathBuf,
    },
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    // One crypto provider for the whole process (TLS serving, outbound HTTPS): ring.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let args = Args::parse();
    let result = match args.command.unwrap_or(Command::Serve { config: None, listen: None }) {
        Command::Serve { config, listen } => serve_main(config.as_deref(), listen),
        Command::Check { config } => {
            crate::telemetry::init_logs();
            runtime().and_then(|rt| rt.block_on(check(config)))
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-runtime: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| anyhow::anyhow!("cannot start the async runtime: {e}"))
}

/// Config, then telemetry (its exporters must exist before the async runtime), then the
/// runtime; after serving, the runtime is dropped (cancelling whatever outlived the grace
/// period) and only then is telemetry flushed.
fn serve_main(path: Option<&std::path::Path>, listen: Option<SocketAddr>) -> anyhow::Result<()> {
    let mut config = Config::load(path, std::env::vars())?;
    if let Some(addr) = listen {
        config.server.listen = addr;
    }
    let telemetry = crate::telemetry::init(&config.telemetry)?;
    let rt = runtime()?;
    let result = rt.block_on(serve(config, path.map(std::path::Path::to_path_buf)));
    // Blocking tasks cannot be cancelled: do not wait for them past a moment.
    rt.shutdown_timeout(Duration::from_secs(2));
    telemetry.shutdown();
    result
}

async fn check(path: PathBuf) -> anyhow::Result<()> {
    let config = Config::load(Some(&path), std::env::vars())?;
    let (state, adapters) = AppState::build_with_adapters(&config).await?;
    let registry = state.registry.load();
    println!("{}: ok ({} adapters; {registry:?})", path.display(), config.adapters.len());
    for (name, adapter) in &adapters {
        if let Some(report) = adapter.report() {
            println!("adapter {name}: {report}");
        }
    }
    Ok(())
}

async fn serve(config: Config, path: Option<PathBuf>) -> anyhow::Result<()> {
    let state = AppState::build(&config).await?;
    let tls = config.tls.as_ref().map(Tls::load).transpose().map_err(|e| anyhow::anyhow!(e))?;
    let bind = |addr: SocketAddr, key: &'static str| async move {
        tokio::net::TcpListener::bind(addr).await.map_err(|e| anyhow::anyhow!("{key}: cannot listen on {addr}: {e}"))
    };
    let main = bind(config.server.listen, "server.listen").await?;
    let metrics = match config.telemetry.metrics_listen {
        Some(addr) => Some(bind(addr, "telemetry.metrics_listen").await?),
        None => None,
    };
    let addr = main.local_addr()?;
    let shutdown = shutdown_signal();
    let scheme = if tls.is_some() { "https" } else { "http" };
    tracing::info!(%addr, path = %config.server.path, adapters = config.adapters.len(), tls = tls.is_some(), "serving MCP");
    if let Some(m) = &metrics {
        println!("mcp-runtime metrics on http://{}/metrics", m.local_addr()?);
    }
    if let Some(path) = path {
        crate::reload::spawn(std::sync::Arc::clone(&state), path, config.server.config_poll);
    }
    // One machine-readable line on stdout: tests and scripts read the bound port from it.
    println!("mcp-runtime listening on {scheme}://{addr}{}", config.server.path);
    crate::http::serve_with(Listeners { main, tls, metrics }, state, shutdown).await?;
    tracing::info!("stopped");
    Ok(())
}

/// SIGINT or SIGTERM. The handlers are installed when this is called (before the
/// "listening" line is printed), so a signal sent right after start-up is never missed.
#[cfg(unix)]
fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    use tokio::signal::unix::{SignalKind, signal};
    let int = signal(SignalKind::interrupt());
    let term = signal(SignalKind::terminate());
    async move {
        let (Ok(mut int), Ok(mut term)) = (int, term) else {
            tracing::warn!("cannot install signal handlers; stop the process with SIGKILL");
            return std::future::pending().await;
        };
        tokio::select! {
            _ = int.recv() => {},
            _ = term.recv() => {},
        }
        tracing::info!("shutdown signal received");
    }
}

/// Ctrl-C.
#[cfg(not(unix))]
fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}
