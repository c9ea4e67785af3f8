//! Runtime processes for tests: one per [`Server`], killed when dropped.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::paths;

/// Runs the binary to its end with `args` in `cwd` (`None`: the test's) and an empty
/// environment (PATH only, plus `env`): a command as a person types it.
pub fn run(cwd: Option<&std::path::Path>, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = Command::new(paths::runtime_bin());
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(env.iter().copied())
        .output()
        .expect("run mcp-runtime")
}

/// A running `mcp-runtime serve`.
pub struct Server {
    child: Child,
    /// Bound address.
    pub addr: SocketAddr,
    /// `http://addr/mcp` (or the configured path; `https://` when the config has `[tls]`).
    pub url: String,
    /// The config file (kept alive with the server; tests may rewrite it for reloads).
    pub config_path: PathBuf,
    _dir: tempfile::TempDir,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Server {
    /// Starts the runtime with `config` (TOML) on a free loopback port.
    pub fn start(config: &str) -> Self {
        Self::start_with(config, &[])
    }

    /// Starts the runtime with `config` and extra environment variables. The child gets an
    /// almost empty environment (PATH and these), so nothing leaks in from the test runner.
    pub fn start_with(config: &str, env: &[(&str, &str)]) -> Self {
        Self::start_on(config, env, "127.0.0.1:0")
    }

    /// Like [`Server::start_with`] on a given listen address (restarts on a known port).
    pub fn start_on(config: &str, env: &[(&str, &str)], listen: &str) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let config_path = dir.path().join("config.toml");
        std::fs::write(&config_path, config).expect("write config");
        Self::spawn(dir, vec![config_path], env, listen)
    }

    /// Starts the runtime with a configuration set: `--config` for each of `paths` (files
    /// or folders, kept by the caller), on a free loopback port.
    pub fn start_set(paths: &[PathBuf], env: &[(&str, &str)]) -> Self {
        Self::spawn(tempfile::tempdir().expect("temp dir"), paths.to_vec(), env, "127.0.0.1:0")
    }

    fn spawn(dir: tempfile::TempDir, configs: Vec<PathBuf>, env: &[(&str, &str)], listen: &str) -> Self {
        crate::install_crypto_provider();
        let config_path = configs.first().cloned().unwrap_or_default();
        let mut cmd = Command::new(paths::runtime_bin());
        cmd.arg("serve");
        for c in &configs {
            cmd.arg("--config").arg(c);
        }
        cmd.args(["--listen", listen])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("RUST_LOG", std::env::var("TEST_RUST_LOG").unwrap_or_else(|_| "warn".into()))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn mcp-runtime");
        let stdout = child.stdout.take().expect("stdout");
        let stderr_pipe = child.stderr.take().expect("stderr");
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let sink = std::sync::Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr_pipe).lines().map_while(Result::ok) {
                sink.lock().expect("stderr lock").push_str(&(line + "\n"));
            }
        });
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("mcp-runtime listening on ") {
                    let _ = tx.send(url.to_owned());
                }
            }
        });
        let url = match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(url) => url,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("mcp-runtime did not start; stderr:\n{}", stderr.lock().expect("lock"));
            }
        };
        let authority = url.split_once("://").map_or(url.as_str(), |(_, rest)| rest);
        let addr = authority.split('/').next().expect("addr").parse().expect("socket addr");
        Self { child, addr, url, config_path, _dir: dir, stderr }
    }

    /// Starts and expects start-up to fail; returns the exit status and stderr.
    pub fn start_failing(config: &str, env: &[(&str, &str)]) -> (ExitStatus, String) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("config.toml");
        std::fs::write(&path, config).expect("write config");
        let out = Command::new(paths::runtime_bin())
            .args(["serve", "--config"])
            .arg(&path)
            .args(["--listen", "127.0.0.1:0"])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .envs(env.iter().copied())
            .output()
            .expect("run mcp-runtime");
        (out.status, String::from_utf8_lossy(&out.stderr).into_owned())
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the server logged so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().expect("lock").clone()
    }

    /// Waits up to 10 s for a log line containing `needle` and returns it (the log is read
    /// from the stderr pipe by another thread).
    pub async fn log_line(&self, needle: &str) -> String {
        crate::wait::eventually(
            Duration::from_secs(10),
            || format!("'{needle}' is not in the log:\n{}", self.stderr()),
            || std::future::ready(self.stderr().lines().find(|l| l.contains(needle)).map(str::to_owned)),
        )
        .await
    }

    /// Sends a signal by name (`"TERM"`, `"HUP"`, `"KILL"`) with kill(1).
    pub fn signal(&self, signal: &str) {
        let status =
            Command::new("kill").arg(format!("-{signal}")).arg(self.child.id().to_string()).status().expect("run kill");
        assert!(status.success(), "kill -{signal} {} failed", self.child.id());
    }

    /// Waits for the process to exit, up to `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let end = Instant::now() + timeout;
        while Instant::now() < end {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// An MCP client for this server.
    pub fn mcp(&self) -> crate::Mcp {
        crate::Mcp::new(&self.url)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
