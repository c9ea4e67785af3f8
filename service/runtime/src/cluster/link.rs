//! How a replica reaches Redis: one server, the master a Sentinel names, or a Redis Cluster;
//! over TLS for `rediss://` URLs (rustls on ring, the config's CA or the system's roots) and
//! as an ACL user when one is configured. Connections are made lazily and remade after a
//! failure, so start-up never waits for Redis and a Sentinel failover is followed.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig, MultiplexedConnection};
use redis::cluster::{ClusterClient, ClusterClientBuilder};
use redis::cluster_async::ClusterConnection;
use redis::sentinel::{SentinelClient, SentinelClientBuilder, SentinelServerType};
use redis::{
    AsyncConnectionConfig, Client, Cmd, ConnectionAddr, ConnectionInfo, IntoConnectionInfo, Pipeline, RedisFuture,
    RedisResult, TlsCertificates, TlsMode, Value,
};

use crate::config::{RedisConfig, RedisTopology};

/// One connection of whichever kind the topology uses; cheap to clone.
#[derive(Clone)]
pub enum Conn {
    /// One server, reconnecting by itself.
    Single(ConnectionManager),
    /// The current master of a Sentinel-monitored set.
    Master(MultiplexedConnection),
    /// A Redis Cluster: routes each command to its slot's node and follows `MOVED`.
    Cluster(ClusterConnection),
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Self::Single(c) => c.req_packed_command(cmd),
            Self::Master(c) => c.req_packed_command(cmd),
            Self::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Self::Single(c) => c.req_packed_commands(pipeline, offset, count),
            Self::Master(c) => c.req_packed_commands(pipeline, offset, count),
            Self::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Self::Single(c) => c.get_db(),
            Self::Master(c) => c.get_db(),
            Self::Cluster(c) => c.get_db(),
        }
    }
}

/// A connection slot filled on first use and emptied after a failure; the generation tells
/// a late failure report about an old connection from one about the current one.
struct Slot<C> {
    current: Mutex<(u64, Option<C>)>,
    /// Serialises (re)connecting, so a burst of calls after a failure makes one connection.
    connecting: tokio::sync::Mutex<()>,
}

impl<C: Clone> Slot<C> {
    fn new() -> Self {
        Self { current: Mutex::new((0, None)), connecting: tokio::sync::Mutex::new(()) }
    }

    fn get(&self) -> (u64, Option<C>) {
        let g = self.current.lock().expect("redis slot lock");
        (g.0, g.1.clone())
    }

    async fn get_or_connect<F: Future<Output = RedisResult<C>>>(&self, connect: F) -> RedisResult<(u64, C)> {
        if let (generation, Some(c)) = self.get() {
            return Ok((generation, c));
        }
        let _one = self.connecting.lock().await;
        if let (generation, Some(c)) = self.get() {
            return Ok((generation, c));
        }
        let c = connect.await?;
        let mut g = self.current.lock().expect("redis slot lock");
        g.0 += 1;
        g.1 = Some(c.clone());
        Ok((g.0, c))
    }

    fn forget(&self, generation: u64) {
        let mut g = self.current.lock().expect("redis slot lock");
        if g.0 == generation {
            g.1 = None;
        }
    }
}

enum Topology {
    Single { client: Client, manager: ConnectionManager },
    Sentinel { sentinel: tokio::sync::Mutex<SentinelClient>, master: Slot<MultiplexedConnection> },
    Cluster { client: ClusterClient, conn: Slot<ClusterConnection>, seeds: Vec<Client>, next_seed: AtomicUsize },
}

/// The way to Redis of one replica.
pub struct Link {
    topology: Topology,
    timeout: Duration,
}

/// A connection and the generation to report its failure with.
pub struct Lease {
    /// The connection.
    pub conn: Conn,
    generation: u64,
}

impl Link {
    /// Builds the clients; connects nothing yet.
    pub fn new(config: &RedisConfig) -> RedisResult<Self> {
        let timeout = config.timeout;
        let certs = || TlsCertificates { client_tls: None, root_cert: config.tls_ca.clone() };
        let topology = match &config.topology {
            RedisTopology::Single => {
                let client = node_client(config, config.url.expose_str())?;
                let manager_config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(timeout))
                    .set_response_timeout(Some(timeout))
                    .set_number_of_retries(1)
                    .set_max_delay(Duration::from_secs(2));
                let manager = ConnectionManager::new_lazy_with_config(client.clone(), manager_config)?;
                Topology::Single { client, manager }
            }
            RedisTopology::Sentinel { master_name, sentinels } => {
                let infos =
                    sentinels.iter().map(|u| u.as_str().into_connection_info()).collect::<RedisResult<Vec<_>>>()?;
                let tls = infos.iter().any(|i| matches!(i.addr(), ConnectionAddr::TcpTls { .. }));
                let mut b = SentinelClientBuilder::new(
                    infos.iter().map(|i| i.addr().clone()),
                    master_name,
                    SentinelServerType::Master,
                )?;
                // Credentials in a sentinel URL are the sentinels' own; the ACL user is the
                // data nodes'.
                if let Some(user) = infos[0].redis_settings().username() {
                    b = b.set_client_to_sentinel_username(user);
                }
                if let Some(password) = infos[0].redis_settings().password() {
                    b = b.set_client_to_sentinel_password(password);
                }
                if let Some(user) = &config.username {
                    b = b.set_client_to_redis_username(user);
                }
                if let Some(password) = &config.password {
                    b = b.set_client_to_redis_password(password.expose_str());
                }
                if tls {
                    b = b
                        .set_client_to_redis_tls_mode(TlsMode::Secure)
                        .set_client_to_sentinel_tls_mode(TlsMode::Secure)
                        .set_client_to_redis_certificates(certs())
                        .set_client_to_sentinel_certificates(certs());
                }
                Topology::Sentinel { sentinel: tokio::sync::Mutex::new(b.build()?), master: Slot::new() }
            }
            RedisTopology::Cluster { seeds } => {
                let mut b = ClusterClientBuilder::new(seeds.iter().map(String::as_str))
                    .connection_timeout(timeout)
                    .response_timeout(timeout)
                    .retries(2);
                if let Some(user) = &config.username {
                    b = b.username(user);
                }
                if let Some(password) = &config.password {
                    b = b.password(password.expose_str());
                }
                if seeds.iter().any(|s| s.starts_with("rediss:")) {
                    b = b.certs(certs());
                }
                let seeds = seeds.iter().map(|s| node_client(config, s)).collect::<RedisResult<Vec<_>>>()?;
                Topology::Cluster { client: b.build()?, conn: Slot::new(), seeds, next_seed: AtomicUsize::new(0) }
            }
        };
        Ok(Self { topology, timeout })
    }

    /// A connection, made now if there is none.
    pub async fn lease(&self) -> RedisResult<Lease> {
        match &self.topology {
            Topology::Single { manager, .. } => Ok(Lease { conn: Conn::Single(manager.clone()), generation: 0 }),
            Topology::Sentinel { sentinel, master } => {
                let (generation, c) = master
                    .get_or_connect(async {
                        let client = sentinel.lock().await.async_get_client().await?;
                        client.get_multiplexed_async_connection_with_config(&self.connection_config()).await
                    })
                    .await?;
                Ok(Lease { conn: Conn::Master(c), generation })
            }
            Topology::Cluster { client, conn, .. } => {
                let (generation, c) = conn.get_or_connect(client.get_async_connection()).await?;
                Ok(Lease { conn: Conn::Cluster(c), generation })
            }
        }
    }

    /// Reports that a call on `lease` failed: the next call asks the sentinels for the master
    /// again (it may have moved). A cluster connection refreshes its slot map by itself.
    pub fn failed(&self, lease: &Lease) {
        if let Topology::Sentinel { master, .. } = &self.topology {
            master.forget(lease.generation);
        }
    }

    /// A client for a dedicated connection (pub/sub): the server, the current master, or
    /// the next cluster seed (a cluster forwards every `PUBLISH` to all its nodes).
    pub async fn pubsub_client(&self) -> RedisResult<Client> {
        match &self.topology {
            Topology::Single { client, .. } => Ok(client.clone()),
            Topology::Sentinel { sentinel, .. } => sentinel.lock().await.async_get_client().await,
            Topology::Cluster { seeds, next_seed, .. } => {
                Ok(seeds[next_seed.fetch_add(1, Ordering::Relaxed) % seeds.len()].clone())
            }
        }
    }

    fn connection_config(&self) -> AsyncConnectionConfig {
        AsyncConnectionConfig::new().set_connection_timeout(Some(self.timeout)).set_response_timeout(Some(self.timeout))
    }
}

/// A client for one node URL with the configured ACL user and CA.
fn node_client(config: &RedisConfig, url: &str) -> RedisResult<Client> {
    let info: ConnectionInfo = url.into_connection_info()?;
    let mut settings = info.redis_settings().clone();
    if let Some(user) = &config.username {
        settings = settings.set_username(user);
    }
    if let Some(password) = &config.password {
        settings = settings.set_password(password.expose_str());
    }
    let info = info.set_redis_settings(settings);
    match (&config.tls_ca, info.addr()) {
        (Some(ca), ConnectionAddr::TcpTls { .. }) => {
            Client::build_with_tls(info, TlsCertificates { client_tls: None, root_cert: Some(ca.clone()) })
        }
        _ => Client::open(info),
    }
}
