//! A real Prometheus (the Debian package, in a container: [`crate::images::prometheus`]) for
//! the observability check (tests/observability/run.sh, through the `mcp-e2e-parts` example).
//! It runs on the host's network, on a free loopback port: it scrapes a runtime on the host's
//! loopback, which a container in a network namespace of its own cannot reach.

use std::net::TcpListener;
use std::path::PathBuf;

use testcontainers::core::WaitFor;
use testcontainers::{CopyDataSource, ImageExt as _};

use crate::containers::{Container, Network};
use crate::images;

/// A running Prometheus.
pub struct Prometheus {
    _container: Container,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
}

impl Prometheus {
    /// Starts Prometheus with the configuration `config` (prometheus.yml), the `files` it names
    /// (rule files) copied in at the same paths, its TSDB inside the container; returns once
    /// it is ready to serve queries.
    pub async fn start(config: &str, files: &[PathBuf]) -> Self {
        let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("free port").port();
        let image = images::prometheus()
            .await
            .with_wait_for(WaitFor::message_on_stderr("Server is ready to receive web requests."));
        let mut request = image
            .with_cmd([
                "--config.file=/etc/prometheus/prometheus.yml".to_owned(),
                "--storage.tsdb.path=/prometheus".to_owned(),
                format!("--web.listen-address=127.0.0.1:{port}"),
            ])
            .with_copy_to("/etc/prometheus/prometheus.yml", CopyDataSource::Data(config.as_bytes().to_vec()));
        for file in files {
            let at = file.to_str().unwrap_or_else(|| panic!("{} is not UTF-8", file.display())).to_owned();
            request = request.with_copy_to(at, CopyDataSource::File(file.clone()));
        }
        let container = Container::start("prometheus", request, Network::Host).await;
        Self { _container: container, url: format!("http://127.0.0.1:{port}") }
    }
}
