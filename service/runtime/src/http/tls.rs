//! Native TLS: rustls with the ring provider, HTTP/2 and HTTP/1.1 offered by ALPN, and the
//! certificate and key re-read when their files change (Kubernetes swaps mounted Secrets in
//! place). A new pair that does not load is logged and the old one keeps serving.

use std::sync::Arc;

use arc_swap::ArcSwap;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use crate::config::{ConfigProblem, TlsConfig};

/// A TLS acceptor whose certificate can be swapped while it runs.
#[derive(Clone)]
pub struct Tls {
    acceptor: TlsAcceptor,
    current: Arc<Current>,
    config: TlsConfig,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls").field("cert_file", &self.config.cert_file).finish()
    }
}

/// The certificate in use and the file contents it came from.
#[derive(Debug)]
struct Current {
    key: ArcSwap<CertifiedKey>,
    source: std::sync::Mutex<(Vec<u8>, Vec<u8>)>,
}

impl ResolvesServerCert for Current {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.key.load_full())
    }
}

impl Tls {
    /// Loads the certificate and key; the error names the config key that is wrong and the
    /// file it read.
    pub fn load(config: &TlsConfig) -> Result<Self, ConfigProblem> {
        let (cert, key) = read(config).map_err(|(k, e)| ConfigProblem::new(format!("tls.{k}"), e))?;
        let certified = certified(&cert, &key).map_err(|(k, e)| {
            let file = if k == "cert_file" { &config.cert_file } else { &config.key_file };
            ConfigProblem::new(format!("tls.{k}"), format!("{} {e}", file.display()))
        })?;
        let current =
            Arc::new(Current { key: ArcSwap::from_pointee(certified), source: std::sync::Mutex::new((cert, key)) });
        let mut server =
            rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                .map_err(|e| ConfigProblem::new("tls", e.to_string()))?
                .with_no_client_auth()
                .with_cert_resolver(Arc::clone(&current) as Arc<dyn ResolvesServerCert>);
        server.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Self { acceptor: TlsAcceptor::from(Arc::new(server)), current, config: config.clone() })
    }

    /// The handshake half of a connection.
    pub fn acceptor(&self) -> &TlsAcceptor {
        &self.acceptor
    }

    /// Re-reads the files every `tls.reload_interval_ms` until `stop`; swaps in a changed
    /// pair that loads, logs one that does not.
    pub fn spawn_reload(&self, stop: CancellationToken) {
        let tls = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(tls.config.reload_interval);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    _ = tick.tick() => tls.reload().await,
                }
            }
        });
    }

    async fn reload(&self) {
        let config = self.config.clone();
        let Ok(read) = tokio::task::spawn_blocking(move || read(&config)).await else { return };
        let (cert, key) = match read {
            Ok(pair) => pair,
            Err((k, e)) => {
                tracing::error!(key = %format!("tls.{k}"), error = %e, "TLS reload: cannot read the files; keeping the current certificate");
                return;
            }
        };
        let mut source = self.current.source.lock().expect("tls lock");
        if source.0 == cert && source.1 == key {
            return;
        }
        match certified(&cert, &key) {
            Ok(new) => {
                self.current.key.store(Arc::new(new));
                *source = (cert, key);
                tracing::info!(cert_file = %self.config.cert_file.display(), "TLS certificate reloaded");
            }
            Err((k, e)) => {
                // Remember the bad pair so it is reported once, not every interval.
                *source = (cert, key);
                tracing::error!(key = %format!("tls.{k}"), error = %e, "TLS reload: the new files do not load; keeping the current certificate");
            }
        }
    }
}

/// A problem with one of the two files: the key naming it (`cert_file`) and what is wrong.
type FileProblem = (&'static str, String);

/// Both files' bytes; the error names the key of the one that cannot be read, and its path.
fn read(config: &TlsConfig) -> Result<(Vec<u8>, Vec<u8>), FileProblem> {
    let cert = std::fs::read(&config.cert_file)
        .map_err(|e| ("cert_file", format!("cannot read {}: {e}", config.cert_file.display())))?;
    let key = std::fs::read(&config.key_file)
        .map_err(|e| ("key_file", format!("cannot read {}: {e}", config.key_file.display())))?;
    Ok((cert, key))
}

/// Parses a PEM chain and key into a certified key, checking that they belong together.
/// The error says which file is wrong.
fn certified(cert_pem: &[u8], key_pem: &[u8]) -> Result<CertifiedKey, FileProblem> {
    let chain = CertificateDer::pem_slice_iter(cert_pem).collect::<Result<Vec<_>, _>>().map_err(|_| {
        ("cert_file", "is not a PEM certificate chain (a -----BEGIN CERTIFICATE----- block)".to_owned())
    })?;
    if chain.is_empty() {
        return Err(("cert_file", "holds no -----BEGIN CERTIFICATE----- block".to_owned()));
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|_| {
        ("key_file", "is not a PEM private key (a -----BEGIN PRIVATE KEY----- or EC/RSA PRIVATE KEY block)".to_owned())
    })?;
    let signing = rustls::crypto::ring::sign::any_supported_type(&key).map_err(|_| {
        (
            "key_file",
            "holds a private key of a kind this server cannot use (RSA, ECDSA P-256/P-384 or Ed25519)".to_owned(),
        )
    })?;
    let certified = CertifiedKey::new(chain, signing);
    // rustls names the outcome with its Debug form (`KeyMismatch`): say it in words.
    certified.keys_match().map_err(|e| {
        let why = match e {
            rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch) => {
                "is not the private key of the certificate in tls.cert_file (the two files are of different pairs)"
                    .to_owned()
            }
            rustls::Error::InconsistentKeys(rustls::InconsistentKeys::Unknown) => {
                "cannot be matched with the certificate in tls.cert_file".to_owned()
            }
            other => format!("does not go with the certificate in tls.cert_file: {other}"),
        };
        ("key_file", why)
    })?;
    Ok(certified)
}
