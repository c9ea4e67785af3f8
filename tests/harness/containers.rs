//! Containers for the parts the tests start (Redis, nginx, Prometheus), through testcontainers:
//! the engine (Docker, or podman's Docker API), checked once per process; the labels every
//! container carries; and [`Container`], a running container removed when it is dropped, also
//! when the test panics.
//!
//! Every engine call runs on one runtime of the harness's own ([`on_engine`], [`block_on`]).
//! testcontainers' client is shared by the whole process and pools its connections on the
//! runtime that opened them; a test's runtime sits idle between `block_on` calls, or is gone
//! when its test ends, and a request of another test on such a connection would never finish.

use std::future::Future;
use std::io::{Read as _, Write as _};
use std::sync::{Arc, OnceLock};

use testcontainers::{ContainerAsync, ContainerRequest, GenericImage, ImageExt as _, runners::AsyncRunner as _};

/// The label on every container the harness starts (`podman ps --filter label=...`).
pub const LABEL: &str = "mcp-runtime.test";
/// The label naming the run: `$MCP_TEST_RUN` (tests/run.sh sets it and removes that run's
/// containers at its end, whatever killed a test process), else `local`.
pub const RUN_LABEL: &str = "mcp-runtime.test.run";

/// How a container is reached.
#[derive(Clone, Copy)]
pub enum Network<'a> {
    /// Its own network namespace, with these ports published on the host's 127.0.0.1 under
    /// the same numbers inside (so an address a server announces works on both sides).
    Published(&'a [u16]),
    /// The network namespace of another container: the same loopback, the same published ports.
    JoinedTo(&'a Container),
    /// The host's: for parts that must reach processes on the host's loopback (nginx in front
    /// of runtime replicas, Prometheus scraping one), which no bridged container can.
    Host,
}

/// A running container, removed (SIGKILL, then deleted) when dropped.
pub struct Container {
    inner: Option<Arc<ContainerAsync<GenericImage>>>,
    /// The engine's id.
    pub id: String,
    what: String,
}

impl Container {
    /// Starts `request` (`what` names it in failures) with `network`.
    pub async fn start(what: &str, request: ContainerRequest<GenericImage>, network: Network<'_>) -> Self {
        Self::try_start(what, request, network).await.unwrap_or_else(|e| panic!("starting the {what} container: {e}"))
    }

    /// [`Container::start`], with the engine's refusal (a published port taken, say) as an
    /// error; a container created but not started is removed. No engine at all still panics.
    pub async fn try_start(
        what: &str,
        request: ContainerRequest<GenericImage>,
        network: Network<'_>,
    ) -> Result<Self, String> {
        let name = unique_name(what);
        let request = labelled(connect(request, network)).with_container_name(&name);
        let what = what.to_owned();
        on_engine(async move {
            check_engine().await;
            match request.start().await {
                Ok(c) => Ok(Container { id: c.id().to_owned(), inner: Some(Arc::new(c)), what }),
                Err(e) => {
                    if let Ok(docker) = testcontainers::core::client::docker_client_instance().await {
                        let force = testcontainers::bollard::query_parameters::RemoveContainerOptionsBuilder::new()
                            .force(true)
                            .build();
                        let _ = docker.remove_container(&name, Some(force)).await;
                    }
                    Err(e.to_string())
                }
            }
        })
        .await
    }

    /// What it wrote to stdout so far.
    pub fn stdout(&self) -> String {
        let c = self.handle();
        block_on(async move { String::from_utf8_lossy(&c.stdout_to_vec().await.unwrap_or_default()).into_owned() })
    }

    /// What it wrote to stderr so far.
    pub fn stderr(&self) -> String {
        let c = self.handle();
        block_on(async move { String::from_utf8_lossy(&c.stderr_to_vec().await.unwrap_or_default()).into_owned() })
    }

    fn handle(&self) -> Arc<ContainerAsync<GenericImage>> {
        self.inner.clone().expect("a live container")
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        let Some(inner) = self.inner.take() else { return };
        let (id, what) = (self.id.clone(), self.what.clone());
        // Waits for the removal: a test's containers are gone when the test is. Never panics
        // (this runs while a failed test unwinds); tests/run.sh sweeps what a failure leaves.
        block_on(async move {
            let removed = match Arc::try_unwrap(inner) {
                Ok(container) => container.rm().await.map_err(|e| e.to_string()),
                Err(_) => Err("still in use".to_owned()),
            };
            if let Err(e) = removed {
                eprintln!("could not remove the {what} container {id}: {e}");
            }
        });
    }
}

/// `mcp-test-<what>-<pid>-<n>`: readable in `podman ps`, and known before the engine
/// answers, so a container it created but could not start can be removed.
fn unique_name(what: &str) -> String {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let what: String = what.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    format!("mcp-test-{what}-{}-{n}-{nanos:x}", std::process::id())
}

fn labelled(request: ContainerRequest<GenericImage>) -> ContainerRequest<GenericImage> {
    let run = std::env::var("MCP_TEST_RUN").unwrap_or_else(|_| "local".to_owned());
    request.with_label(LABEL, "e2e").with_label(RUN_LABEL, run)
}

/// The network settings go through the host-config hook: testcontainers would take a
/// `container:<id>` or `host` network mode for the name of a network to create.
fn connect(request: ContainerRequest<GenericImage>, network: Network<'_>) -> ContainerRequest<GenericImage> {
    match network {
        Network::Published(ports) => {
            let request =
                ports.iter().fold(request, |r, &p| r.with_mapped_port(p, testcontainers::core::ContainerPort::Tcp(p)));
            // Loopback only: nothing a test starts is reachable from the network.
            request.with_host_config_modifier(|host| {
                for binding in host.port_bindings.iter_mut().flat_map(|m| m.values_mut()).flatten().flatten() {
                    binding.host_ip = Some("127.0.0.1".to_owned());
                }
            })
        }
        Network::JoinedTo(holder) => {
            let mode = format!("container:{}", holder.id);
            request.with_host_config_modifier(move |host| {
                host.network_mode = Some(mode.clone());
                host.publish_all_ports = Some(false);
                host.port_bindings = None;
            })
        }
        Network::Host => request.with_host_config_modifier(|host| {
            host.network_mode = Some("host".to_owned());
            host.publish_all_ports = Some(false);
            host.port_bindings = None;
        }),
    }
}

/// The runtime every engine call runs on.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("container-engine")
            .enable_all()
            .build()
            .expect("the container engine's runtime")
    })
}

/// Runs `work` on the engine's runtime; awaitable from any runtime. A panic in `work` is the
/// caller's panic.
pub async fn on_engine<T: Send + 'static>(work: impl Future<Output = T> + Send + 'static) -> T {
    runtime().spawn(work).await.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}

/// [`on_engine`] for synchronous code (a plain `#[test]`, a `Drop`).
pub fn block_on<T: Send + 'static>(work: impl Future<Output = T> + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    let task = runtime().spawn(work);
    runtime().spawn(async move {
        let _ = tx.send(task.await);
    });
    rx.recv()
        .expect("the container engine's runtime stopped")
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}

/// Fails every test that needs a container, loudly, when no engine answers: there is one code
/// path, and it is the one CI runs.
pub(crate) async fn check_engine() {
    static ANSWERED: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();
    ANSWERED
        .get_or_init(|| async {
            let docker = testcontainers::core::client::docker_client_instance().await.map_err(|e| e.to_string());
            let pong = match docker {
                Ok(docker) => docker.ping().await.map(drop).map_err(|e| e.to_string()),
                Err(e) => Err(e),
            };
            if let Err(error) = pong {
                panic!("{}", no_engine(&error));
            }
        })
        .await;
}

/// Where testcontainers looked, why it failed, and the commands that give it an engine.
fn no_engine(error: &str) -> String {
    let tried = std::env::var("DOCKER_HOST")
        .map_or_else(|_| "unix:///var/run/docker.sock".to_owned(), |h| format!("DOCKER_HOST={h}"));
    // testcontainers reads DOCKER_HOST and nothing else (the harness never changes the
    // environment): a podman service already running elsewhere only needs the export.
    let repo = crate::paths::repo();
    let podman = [
        "/run/podman/podman.sock".into(),
        format!("{}/podman/podman.sock", std::env::var("XDG_RUNTIME_DIR").unwrap_or_default()),
        repo.join("target/podman/podman.sock").display().to_string(),
    ]
    .into_iter()
    .find(|socket| answers_ping(socket));
    let fix = match podman {
        Some(socket) => format!("podman answers at {socket}: export DOCKER_HOST=unix://{socket}"),
        None => "start one and point DOCKER_HOST at it:\n  \
                 eval \"$(bash tests/containers.sh)\"   (podman + runc from apt, podman's Docker-API service on \
                 target/podman/podman.sock; prints the `export DOCKER_HOST=...` it evaluates)\n  \
                 or Docker: `sudo systemctl start docker`"
            .to_owned(),
    };
    format!(
        "no container engine answers at {tried} ({error}). The tests run Redis, nginx and Prometheus in \
         containers (testcontainers, Docker Engine API); {fix}"
    )
}

/// `GET /_ping` over a Unix socket answers `OK`.
fn answers_ping(socket: &str) -> bool {
    let Ok(mut stream) = std::os::unix::net::UnixStream::connect(socket) else { return false };
    let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(2)));
    let mut answer = String::new();
    stream.write_all(b"GET /_ping HTTP/1.0\r\nHost: engine\r\n\r\n").is_ok()
        && stream.read_to_string(&mut answer).is_ok()
        && answer.ends_with("\r\n\r\nOK")
}
