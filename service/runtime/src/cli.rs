//! Command line: `mcp-runtime [--config FILE] [serve] [--listen ADDR]` and
//! `mcp-runtime [--config FILE] check [--offline]`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use std::time::Duration;

mod alloc;
mod reclaim;

pub use alloc::Allocator;

use clap::{Parser, Subcommand};

use crate::config::{Config, ConfigError, EMBEDDED_NAME, Source};
use crate::http::Listeners;
use crate::http::tls::Tls;
use crate::state::AppState;

/// Stateless MCP 2026-07-28 server runtime.
#[derive(Debug, Parser)]
#[command(name = "mcp-runtime", version, about)]
struct Args {
    /// Configuration file (TOML). Without it, the embedded demo configuration.
    #[arg(long, global = true, env = "MCP_RUNTIME_CONFIG")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve MCP over Streamable HTTP (the default).
    Serve {
        /// Address to listen on; overrides `server.listen`.
        #[arg(long)]
        listen: Option<SocketAddr>,
    },
    /// Validate a configuration, list the tools it would serve, and exit.
    Check {
        /// Check the file alone (syntax, types, keys), without resolving secrets or building
        /// the adapters: no secret or executable needs to exist (CI on a build machine).
        #[arg(long)]
        offline: bool,
    },
    /// Print the JSON Schema of the configuration file (as shipped in docs/config.schema.json).
    ConfigSchema,
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    // One crypto provider for the whole process (TLS serving, outbound HTTPS): ring.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let args = Args::parse();
    let result = match args.command.unwrap_or(Command::Serve { listen: None }) {
        Command::Serve { listen } => serve_main(args.config.as_deref(), listen),
        Command::ConfigSchema => {
            print!("{}", crate::config::schema::json());
            Ok(())
        }
        Command::Check { offline: true } => check_offline(args.config.as_deref()),
        Command::Check { offline: false } => {
            crate::telemetry::init_logs();
            runtime().and_then(|rt| rt.block_on(check(args.config.as_deref())))
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A configuration report stands alone, like a compiler's.
        Err(e) => match e.downcast_ref::<ConfigError>() {
            Some(report @ ConfigError::File(_)) => {
                eprintln!("{report}");
                ExitCode::FAILURE
            }
            _ => {
                eprintln!("mcp-runtime: {e:#}");
                ExitCode::FAILURE
            }
        },
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .on_thread_park(reclaim::on_park)
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

fn shown(path: Option<&std::path::Path>) -> String {
    path.map_or_else(|| EMBEDDED_NAME.to_owned(), |p| p.display().to_string())
}

/// Everything `serve` would do before binding: the file, secrets, adapters (executables on
/// PATH, upstream settings), the registry; then the tools it would serve.
async fn check(path: Option<&std::path::Path>) -> anyhow::Result<()> {
    let config = Config::load(path, std::env::vars())?;
    let state = AppState::build(&config).await.map_err(|e| config.locate(e))?;
    let registry = state.registry.load();
    let mut tools: Vec<_> = registry
        .tools()
        .map(|t| {
            let kind = registry.adapters().iter().find(|a| *a.name == *t.adapter_name).map_or("?", |a| a.kind);
            (t.tool.name.clone(), t.adapter_name.to_string(), kind)
        })
        .collect();
    tools.sort();
    println!("{}: ok ({} adapters, {} tools; {registry:?})", shown(path), config.adapters.len(), tools.len());
    if tools.is_empty() {
        eprintln!("warning: {} declares no tools: clients will find nothing to call", shown(path));
    } else {
        let width = tools.iter().map(|t| t.0.len()).max().unwrap_or(0).max(4);
        let adapter_width = tools.iter().map(|t| t.1.len()).max().unwrap_or(0).max(7);
        println!("  {:width$}  {:adapter_width$}  kind", "tool", "adapter");
        for (name, adapter, kind) in &tools {
            println!("  {name:width$}  {adapter:adapter_width$}  {kind}");
        }
    }
    for crate::registry::NamedAdapter { name, adapter, .. } in registry.adapters() {
        if let Some(report) = adapter.report() {
            println!("adapter {name}: {report}");
        }
    }
    Ok(())
}

/// The file alone: syntax, types, unknown and missing keys (no secret is resolved and no
/// adapter is built, so nothing the file points at needs to exist here).
fn check_offline(path: Option<&std::path::Path>) -> anyhow::Result<()> {
    let text = match path {
        Some(p) => std::fs::read_to_string(p).map_err(|e| anyhow::anyhow!("{}: cannot read it: {e}", p.display()))?,
        None => crate::config::EMBEDDED_DEFAULT.to_owned(),
    };
    let raw = Source::new(shown(path), text, std::env::vars(), crate::config::ENV_PREFIX).read()?;
    println!("{}: ok offline ({} adapters; secrets and adapters not checked)", shown(path), raw.adapters.len());
    if raw.adapters.is_empty() {
        eprintln!("warning: {} declares no adapters: clients will find no tools", shown(path));
    }
    Ok(())
}

async fn serve(mut config: Config, path: Option<PathBuf>) -> anyhow::Result<()> {
    let state = AppState::build(&config).await.map_err(|e| config.locate(e))?;
    // The adapters are built: their sections (most of a large catalog's config) are not kept.
    let adapters = std::mem::take(&mut config.adapters).len();
    // The load ran on this thread (the runtime's driver, never parked as a worker): its
    // parse and build garbage is returned now, and the workers' from here on.
    reclaim::collect(true);
    tokio::spawn(reclaim::tick());
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
    if !addr.ip().is_loopback() && config.server.hosts.is_loopback_only() {
        tracing::warn!(
            %addr,
            "listening beyond loopback while server.allowed_hosts accepts only localhost names: every remote client gets 403; set server.allowed_hosts (MCP_RUNTIME__SERVER__ALLOWED_HOSTS) to the names clients use"
        );
    }
    let shutdown = shutdown_signal();
    let scheme = if tls.is_some() { "https" } else { "http" };
    tracing::info!(%addr, path = %config.server.path, adapters, tls = tls.is_some(), "serving MCP");
    if let Some(m) = &metrics {
        println!("mcp-runtime metrics on http://{}/metrics", m.local_addr()?);
    }
    crate::reload::watch_catalogs(std::sync::Arc::clone(&state));
    if let Some(path) = path {
        crate::reload::spawn(std::sync::Arc::clone(&state), path, config.server.config_poll);
    }
    let metrics_addr = metrics.as_ref().map(|m| m.local_addr()).transpose()?;
    if let Some(line) = crate::console::start_line(&config, scheme, addr, metrics_addr) {
        println!("{line}");
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
