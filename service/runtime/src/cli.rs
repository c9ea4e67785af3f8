//! Command line: `mcp-runtime [--config FILE|DIR]... [serve] [--listen ADDR]`,
//! `mcp-runtime [--config FILE|DIR]... check [--offline]` and `mcp-runtime config-schema`.
//!
//! `serve` and `check` go through one [`prepare`]: everything `serve` does before it listens
//! (the file, the adapters, the registry, TLS, the shared state), so `check` finds exactly
//! the problems `serve` would stop at, all of them in one report.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

mod alloc;
mod reclaim;
mod reports;

pub use alloc::Allocator;

use clap::{Parser, Subcommand};

use crate::adapters::Catalog;
use crate::config::{Config, ConfigError, Problems};
use crate::http::Listeners;
use crate::http::tls::Tls;
use crate::state::AppState;

/// Stateless MCP 2026-07-28 server runtime.
#[derive(Debug, Parser)]
// `--version` says whether the binary was built profile-guided (build.rs).
#[command(name = "mcp-runtime", version = concat!(env!("CARGO_PKG_VERSION"), env!("MCP_RUNTIME_BUILD")), about)]
struct Args {
    /// Configuration file (TOML, YAML or JSON, by extension) or folder of them (`conf.d/`:
    /// its files in name order). Give it several times for a set: later files override earlier
    /// ones key by key, lists of tables concatenate. Without it, the embedded demo
    /// configuration. Relative paths in a file start at that file's folder.
    #[arg(long, global = true, env = "MCP_RUNTIME_CONFIG", value_delimiter = ',', value_name = "FILE|DIR")]
    config: Vec<PathBuf>,
    /// `serve`'s options, also taken without the subcommand (`serve` is the default).
    #[command(flatten)]
    serve: ServeArgs,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, clap::Args)]
struct ServeArgs {
    /// Address to listen on; overrides `server.listen`.
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve MCP over Streamable HTTP (the default).
    Serve(ServeArgs),
    /// Validate a configuration as `serve` would before listening, list what it would serve,
    /// and exit: every problem of the file, its adapters and its TLS files in one report.
    Check {
        /// Check the file alone (every key, value and schema), without reading secrets,
        /// looking up programs, fetching remote documents or contacting MCP upstreams: no
        /// secret or executable needs to exist (CI on a build machine).
        #[arg(long)]
        offline: bool,
    },
    /// Pin the definitions of the `mcp` and `openapi` adapters as they are now: write
    /// `[pinning] lock_file` (review it in a pull request; with `mode = "enforce"` a definition
    /// that differs from it is withheld until it is pinned again).
    Pin,
    /// Print the JSON Schema of the configuration file (as shipped in docs/config.schema.json).
    ConfigSchema,
    /// The audit trail.
    #[command(subcommand)]
    Audit(AuditCommand),
}

#[derive(Debug, Subcommand)]
enum AuditCommand {
    /// Check the hash chains of audit trail files and name the first broken line. Give
    /// rotated files oldest first, then the current one (`audit.jsonl.* audit.jsonl`); or no
    /// files and the `--config` whose `[audit] file` it is: that file and its rotated ones.
    Verify {
        /// The files, in order.
        #[arg(value_name = "FILE")]
        files: Vec<PathBuf>,
    },
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    // One crypto provider for the whole process (TLS serving, outbound HTTPS): ring.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let args = Args::parse();
    if args.serve.listen.is_some() && !matches!(args.command, None | Some(Command::Serve(_))) {
        use clap::CommandFactory as _;
        Args::command()
            .error(clap::error::ErrorKind::ArgumentConflict, "--listen is an option of `serve`, which is the default")
            .exit();
    }
    let paths = &args.config;
    let result = match args.command {
        None => serve_main(paths, args.serve.listen),
        Some(Command::Serve(serve)) => serve_main(paths, serve.listen),
        Some(Command::ConfigSchema) => emit(&crate::config::schema::json()),
        Some(Command::Pin) => reports::pin_main(paths),
        Some(Command::Check { offline }) => reports::check_main(paths, offline),
        Some(Command::Audit(AuditCommand::Verify { files })) => audit_verify(paths, files),
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

/// Writes `text` to stdout. A reader that went away (`| head`) is not an error: the output
/// was for it alone.
fn emit(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(anyhow::anyhow!("cannot write to stdout: {e}")),
        _ => Ok(()),
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .on_thread_park(reclaim::on_park)
        .build()
        .map_err(|e| anyhow::anyhow!("cannot start the async runtime: {e}"))
}

/// `audit verify`: every chain of the files checked; the first broken line named.
fn audit_verify(paths: &[PathBuf], files: Vec<PathBuf>) -> anyhow::Result<()> {
    let files = if files.is_empty() { configured_trail(paths)? } else { files };
    let mut texts = Vec::with_capacity(files.len());
    for f in &files {
        let text = std::fs::read_to_string(f).map_err(|e| anyhow::anyhow!("{}: cannot read it: {e}", f.display()))?;
        texts.push((f.display().to_string(), text));
    }
    match crate::telemetry::audit::verify::verify(&texts) {
        Ok(v) => {
            let count = |n: u64, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
            emit(&format!(
                "ok: {} and {} in {} ({}), every line linked to the one before\n",
                count(v.calls, "call record"),
                count(v.checkpoints, "checkpoint"),
                count(v.chains as u64, "chain"),
                count(files.len() as u64, "file"),
            ))
        }
        Err(broken) => Err(anyhow::anyhow!("the trail is broken at {broken}")),
    }
}

/// The trail the configuration's `[audit]` writes: its rotated files oldest first (their
/// names sort as their times: `<file>.<UTC time>-<seq>`), then the current one.
fn configured_trail(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let none = || {
        anyhow::anyhow!(
            "name the trail's files (rotated ones oldest first: audit verify audit.jsonl.* audit.jsonl), \
             or give the --config whose [audit] writes to a file"
        )
    };
    if paths.is_empty() {
        return Err(none());
    }
    let config = Config::read(paths, std::env::vars(), true)?;
    let Some(crate::config::AuditSink::File { path, .. }) = config.audit.map(|a| a.sink) else {
        return Err(none());
    };
    let folder = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    let prefix = format!("{}.", path.file_name().unwrap_or_default().to_string_lossy());
    let mut files: Vec<PathBuf> = std::fs::read_dir(folder)
        .map_err(|e| anyhow::anyhow!("{}: cannot list it: {e}", folder.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(&prefix)))
        .collect();
    files.sort();
    files.push(path);
    Ok(files)
}

/// What [`prepare`] made: a configuration ready to serve.
struct Prepared {
    config: Config,
    /// The shared state (`None` for an offline check, which connects nothing).
    state: Option<Arc<AppState>>,
    /// The catalog of an offline check (online, the state holds it).
    catalog: Option<Catalog>,
    tls: Option<Tls>,
}

/// Everything `serve` does before it listens: the adapters and the registry, the TLS files,
/// the shared state; every problem found on the way, with those the file already had, in
/// one report located in the file. Offline, only what the file alone shows.
async fn prepare(config: Config, offline: bool) -> Result<Prepared, ConfigError> {
    let mut problems = Problems::new();
    let catalog = problems.ok(Catalog::load(&config).await);
    let tls = if offline { None } else { problems.ok(config.tls.as_ref().map(Tls::load).transpose()).flatten() };
    if !offline && let Some(audit) = &config.audit {
        problems.ok(crate::telemetry::audit::check_writable(audit));
    }
    let (Some(catalog), true, true) = (catalog, problems.is_empty(), config.problems.is_empty()) else {
        return Err(config.rejected(problems));
    };
    if offline {
        return Ok(Prepared { config, state: None, catalog: Some(catalog), tls });
    }
    let state = AppState::with_catalog(&config, catalog).map_err(|e| config.locate(e))?;
    Ok(Prepared { config, state: Some(state), catalog: None, tls })
}

/// Config, then telemetry (its exporters must exist before the async runtime), then the
/// runtime; after serving, the runtime is dropped (cancelling whatever outlived the grace
/// period) and only then is telemetry flushed.
fn serve_main(paths: &[PathBuf], listen: Option<SocketAddr>) -> anyhow::Result<()> {
    let mut config = Config::read(paths, std::env::vars(), false)?;
    if let Some(addr) = listen {
        config.server.listen = addr;
    }
    // A config with problems is only reported: nothing is started for it.
    let telemetry = config.problems.is_empty().then(|| crate::telemetry::init(&config.telemetry)).transpose()?;
    let rt = runtime()?;
    let result = rt.block_on(async {
        let prepared = prepare(config, false).await?;
        serve(prepared, paths.to_vec(), listen.is_some()).await
    });
    // Blocking tasks cannot be cancelled: do not wait for them past a moment.
    rt.shutdown_timeout(Duration::from_secs(2));
    if let Some(telemetry) = telemetry {
        telemetry.shutdown();
    }
    result
}

/// Binds `addr`; the error names where the address came from (`--listen` or the config key)
/// and, for an address in use, what to do.
async fn bind(addr: SocketAddr, from: &str) -> anyhow::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(addr).await.map_err(|e| {
        let hint = match e.kind() {
            std::io::ErrorKind::AddrInUse => {
                "; another mcp-runtime (or another program) is listening there: stop it, or choose another address \
                 with --listen ADDR or server.listen"
            }
            std::io::ErrorKind::PermissionDenied => "; ports below 1024 need privileges: choose a port above 1023",
            std::io::ErrorKind::AddrNotAvailable => "; no interface of this machine has that address",
            _ => "",
        };
        anyhow::anyhow!("{from}: cannot listen on {addr}: {e}{hint}")
    })
}

async fn serve(prepared: Prepared, paths: Vec<PathBuf>, listen_flag: bool) -> anyhow::Result<()> {
    let Prepared { mut config, state, tls, .. } = prepared;
    let state = state.ok_or_else(|| anyhow::anyhow!("internal: an online preparation has a state"))?;
    state.start_records(&config).map_err(|e| config.locate(e))?;
    // The adapters are built: their sections (most of a large catalog's config) are not kept.
    let adapters = std::mem::take(&mut config.adapters).len();
    // The load ran on this thread (the runtime's driver, never parked as a worker): its
    // parse and build garbage is returned now, and the workers' from here on.
    reclaim::collect(true);
    tokio::spawn(reclaim::tick());
    let main = bind(config.server.listen, if listen_flag { "--listen" } else { "server.listen" }).await?;
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
        let _ = emit(&format!("mcp-runtime metrics on http://{}/metrics\n", m.local_addr()?));
    }
    crate::reload::watch_catalogs(Arc::clone(&state));
    if !paths.is_empty() {
        crate::reload::spawn(Arc::clone(&state), paths, config.server.config_poll);
    }
    let metrics_addr = metrics.as_ref().map(|m| m.local_addr()).transpose()?;
    if let Some(line) = crate::console::start_line(&config, scheme, addr, metrics_addr) {
        let _ = emit(&format!("{line}\n"));
    }
    // One machine-readable line on stdout: tests and scripts read the bound port from it.
    let _ = emit(&format!("mcp-runtime listening on {scheme}://{addr}{}\n", config.server.path));
    for e in &config.endpoints {
        let _ = emit(&format!("mcp-runtime endpoint on {scheme}://{addr}{}\n", e.path));
    }
    let grace = config.server.shutdown_grace;
    let records = state.records.get().cloned();
    crate::http::serve_with(Listeners { main, tls, metrics }, state, shutdown).await?;
    // Every call has ended: their records are written (the audit trail gets its last
    // checkpoint) before the process goes.
    if let Some(records) = records {
        tokio::task::spawn_blocking(move || records.finish(grace)).await.ok();
    }
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
