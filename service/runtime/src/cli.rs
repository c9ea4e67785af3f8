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

pub use alloc::Allocator;

use clap::{Parser, Subcommand};

use crate::adapters::Catalog;
use crate::config::{Config, ConfigError, Problems};
use crate::http::Listeners;
use crate::http::tls::Tls;
use crate::state::AppState;

/// Stateless MCP 2026-07-28 server runtime.
#[derive(Debug, Parser)]
#[command(name = "mcp-runtime", version, about)]
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
    /// rotated files oldest first, then the current one (`audit.jsonl.* audit.jsonl`).
    Verify {
        /// The files, in order.
        #[arg(required = true, value_name = "FILE")]
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
        Some(Command::Pin) => pin_main(paths),
        Some(Command::Check { offline }) => check_main(paths, offline),
        Some(Command::Audit(AuditCommand::Verify { files })) => audit_verify(&files),
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
fn audit_verify(files: &[PathBuf]) -> anyhow::Result<()> {
    let mut texts = Vec::with_capacity(files.len());
    for f in files {
        let text = std::fs::read_to_string(f).map_err(|e| anyhow::anyhow!("{}: cannot read it: {e}", f.display()))?;
        texts.push((f.display().to_string(), text));
    }
    match crate::telemetry::audit::verify::verify(&texts) {
        Ok(v) => emit(&format!(
            "ok: {} call records and {} checkpoints in {} chain(s), every line linked to the one before\n",
            v.calls, v.checkpoints, v.chains
        )),
        Err(broken) => Err(anyhow::anyhow!("the trail is broken at {broken}")),
    }
}

/// `pin`: the adapters built as `serve` builds them, their upstream definitions written to
/// the lock file, and what changed since the last one said.
fn pin_main(paths: &[PathBuf]) -> anyhow::Result<()> {
    let config = Config::read(paths, std::env::vars(), false)?;
    let name = config.source.name.clone();
    let Some(lock_file) = config.pinning.lock_file.clone() else {
        anyhow::bail!("{name}: [pinning] has no lock_file: set one (e.g. lock_file = \"mcp-runtime.lock\") to pin to");
    };
    let rt = runtime()?;
    let prepared = rt.block_on(prepare(config, false))?;
    let adapters = prepared.state.as_ref().map(|s| s.registry.load().adapters().to_vec()).unwrap_or_default();
    drop(rt);
    let old = &prepared.config.pinning.lock;
    let new = crate::registry::pins::lock_of(&adapters);
    let changed = new.items.iter().filter(|(k, p)| old.items.get(*k).is_some_and(|o| o.sha256 != p.sha256)).count();
    let added = new.items.keys().filter(|k| !old.items.contains_key(*k)).count();
    let removed = old.items.keys().filter(|k| !new.items.contains_key(*k)).count();
    let mut text = serde_json::to_string_pretty(&new)?;
    text.push('\n');
    std::fs::write(&lock_file, text).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", lock_file.display()))?;
    emit(&format!(
        "{}: {} definitions pinned ({changed} changed, {added} new, {removed} gone since the last pin)\n",
        lock_file.display(),
        new.items.len()
    ))
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

/// `check`: [`prepare`], then what would be served. Only the report and the problems are
/// printed: no log line of the stages (they would bury a problem among INFO lines).
fn check_main(paths: &[PathBuf], offline: bool) -> anyhow::Result<()> {
    let config = Config::read(paths, std::env::vars(), offline)?;
    let rt = runtime()?;
    let prepared = rt.block_on(prepare(config, offline))?;
    let name = prepared.config.source.name.clone();
    let (report, tools) = check_report(&prepared, &name, offline);
    drop(rt);
    emit(&report)?;
    if tools == 0 {
        eprintln!("warning: {name} declares no tools: clients will find nothing to call");
    }
    Ok(())
}

/// What `check` prints of a configuration that is ready: a summary line, then each tool
/// with its adapter and kind, then each adapter's own report (an import's figures); and how
/// many tools there are.
fn check_report(prepared: &Prepared, name: &str, offline: bool) -> (String, usize) {
    use std::fmt::Write as _;
    let loaded;
    let registry = match (&prepared.state, &prepared.catalog) {
        (Some(state), _) => {
            loaded = state.registry.load_full();
            &*loaded
        }
        (None, Some(catalog)) => &catalog.registry,
        (None, None) => return (format!("{name}: ok\n"), 0),
    };
    let config = &prepared.config;
    let kind_of = |adapter: &str| registry.adapters().iter().find(|a| *a.name == *adapter).map_or("", |a| a.kind);
    let mut tools: Vec<_> =
        registry.tools().map(|t| (t.tool.name.as_str(), &*t.adapter_name, kind_of(&t.adapter_name))).collect();
    tools.sort_unstable();
    let counts = registry.counts();
    let mut out = format!(
        "{name}: ok{} ({}; {}, {}, {}, {})\n",
        if offline { " offline" } else { "" },
        plural(config.adapters.len(), "adapter", "adapters"),
        plural(tools.len(), "tool", "tools"),
        plural(counts.resources, "resource", "resources"),
        plural(counts.templates, "resource template", "resource templates"),
        plural(counts.prompts, "prompt", "prompts"),
    );
    if registry.search.is_some() {
        out.push_str(
            "  discovery: search (tools/list shows search_tools, describe_tools and call_tool; the tools below are found through them)\n",
        );
    }
    if let Some(mode) = config.pinning.mode {
        let lock = config.pinning.lock_file.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
        let held = registry.unpinned.iter().filter(|u| u.withheld).count();
        let _ = writeln!(
            out,
            "  pinning: {} against {lock} ({} pinned; {held} withheld, {} served unpinned)",
            if mode == crate::config::pinning::PinMode::Enforce { "enforce" } else { "warn" },
            config.pinning.lock.items.len(),
            registry.unpinned.len() - held,
        );
        for u in registry.unpinned.iter() {
            let what = if u.pinned.is_some() { "differs from its pin" } else { "has no pin" };
            let _ = writeln!(out, "    {} {what}{}", u.key, if u.withheld { ": withheld" } else { "" });
        }
    }
    if offline {
        out.push_str(
            "  offline: secrets, programs, TLS files, remote OpenAPI documents and MCP upstreams were not checked\n",
        );
    }
    if !tools.is_empty() {
        let width = tools.iter().map(|t| t.0.len()).max().unwrap_or(0).max(4);
        let adapter_width = tools.iter().map(|t| t.1.len()).max().unwrap_or(0).max(7);
        let _ = writeln!(out, "  {:width$}  {:adapter_width$}  kind", "tool", "adapter");
        for (name, adapter, kind) in &tools {
            let _ = writeln!(out, "  {name:width$}  {adapter:adapter_width$}  {kind}");
        }
    }
    for endpoint in registry.endpoints() {
        endpoint_report(&mut out, endpoint);
    }
    for crate::registry::NamedAdapter { name: adapter_name, adapter, .. } in registry.adapters() {
        if let Some(report) = adapter.report() {
            let _ = writeln!(out, "adapter {adapter_name}: {report}");
        }
    }
    (out, tools.len())
}

/// A virtual endpoint's part of the `check` report: its path and counts, then each tool with
/// the catalog tool it serves, its adapter and the arguments it fixes.
fn endpoint_report(out: &mut String, registry: &crate::registry::Registry) {
    use std::fmt::Write as _;
    let counts = registry.counts();
    let path = registry.endpoint.as_deref().unwrap_or_default();
    let _ = writeln!(
        out,
        "endpoint {path}: {}, {}, {}, {}",
        plural(counts.tools, "tool", "tools"),
        plural(counts.resources, "resource", "resources"),
        plural(counts.templates, "resource template", "resource templates"),
        plural(counts.prompts, "prompt", "prompts"),
    );
    let mut tools: Vec<_> = registry.tools().collect();
    tools.sort_unstable_by(|a, b| a.tool.name.cmp(&b.tool.name));
    let fixed = |t: &crate::registry::ToolEntry| {
        t.origin.as_ref().map(|o| o.fixed.keys().map(String::as_str).collect::<Vec<_>>().join(", ")).unwrap_or_default()
    };
    let width = tools.iter().map(|t| t.tool.name.len()).max().unwrap_or(0).max(4);
    let from_width = tools.iter().map(|t| t.catalog_name().len()).max().unwrap_or(0).max(4);
    let adapter_width = tools.iter().map(|t| t.adapter_name.len()).max().unwrap_or(0).max(7);
    if !tools.is_empty() {
        let _ = writeln!(out, "  {:width$}  {:from_width$}  {:adapter_width$}  fixed", "tool", "from", "adapter");
    }
    for t in tools {
        let line = format!(
            "  {:width$}  {:from_width$}  {:adapter_width$}  {}",
            t.tool.name,
            t.catalog_name(),
            t.adapter_name,
            fixed(t)
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
}

/// `1 tool`, `2 tools`.
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
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
