//! Command line: `mcp-runtime [serve] [--config FILE] [--listen ADDR]` and
//! `mcp-runtime check --config FILE`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use tracing_subscriber::EnvFilter;

use crate::config::Config;
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
    // The one TLS crypto provider of the process (outbound HTTPS of the REST adapter): ring,
    // installed before anything builds a client (TOOLING.md trap #4).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")))
        .with_writer(std::io::stderr)
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcp-runtime: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = match args.command.unwrap_or(Command::Serve { config: None, listen: None }) {
        Command::Serve { config, listen } => runtime.block_on(serve(config, listen)),
        Command::Check { config } => runtime.block_on(check(config)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-runtime: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn load(path: Option<&std::path::Path>) -> anyhow::Result<Config> {
    Ok(Config::load(path, std::env::vars())?)
}

async fn check(path: PathBuf) -> anyhow::Result<()> {
    let config = load(Some(&path)).await?;
    let state = AppState::build(&config).await?;
    let registry = state.registry.load();
    println!("{}: ok ({} adapters; {registry:?})", path.display(), config.adapters.len());
    Ok(())
}

async fn serve(path: Option<PathBuf>, listen: Option<SocketAddr>) -> anyhow::Result<()> {
    let mut config = load(path.as_deref()).await?;
    if let Some(addr) = listen {
        config.server.listen = addr;
    }
    let state = AppState::build(&config).await?;
    if let Some(path) = path {
        crate::reload::spawn(std::sync::Arc::clone(&state), path, config.server.config_poll);
    }
    let listener = tokio::net::TcpListener::bind(config.server.listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", config.server.listen))?;
    let addr = listener.local_addr()?;
    tracing::info!(%addr, path = %config.server.path, adapters = config.adapters.len(), "serving MCP");
    // One machine-readable line on stdout: tests and scripts read the bound port from it.
    println!("mcp-runtime listening on http://{addr}{}", config.server.path);
    crate::http::serve(listener, state, shutdown_signal()).await?;
    tracing::info!("stopped");
    Ok(())
}

/// SIGINT or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutdown signal received");
}
