//! Each caller's own access to upstreams behind other authorization servers (`[user_auth]`,
//! `[[upstream_auth]]`; docs/user-auth.md). A call to a tool whose adapter names an upstream
//! with `user_auth` takes the caller's token there from the [`vault`], refreshed when due.
//! When the caller has none, the call answers with a URL-mode elicitation (MCP 2026-07-28
//! client/elicitation § URL mode; an MRTR input request) pointing at `/oauth/start` here: the
//! person signs in at the identity provider `[auth]` trusts (so the link serves nobody but the
//! caller it was made for), then allows access at the upstream, whose code the runtime trades
//! for the token it stores. The client's retry of the call then finds it.
//!
//! Nothing of a flow is kept between its steps but what is sealed into the link and the OAuth
//! `state` (the `requestState` key ring: caller, upstream, PKCE verifier, expiry), so each step
//! may land on any replica; a `state` is accepted once.
//!
//! - [`oauth`]: the runtime as an OAuth client (endpoints, PKCE, token requests).
//! - [`vault`]: the grants, sealed under their own key ring.
//! - [`flow`]: `/oauth/start` and `/oauth/callback`, transport-neutral.
//! - [`manage`]: a person's own connections page (`/oauth/connections`).

pub mod flow;
pub mod manage;
pub mod oauth;
pub mod vault;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use mcp_adapter_api::{Identity, InputRequired, UserToken};
use mcp_protocol::mrtr::InputRequest;
use ring::rand::SystemRandom;
use serde_json::Value;

use crate::cluster::redis::Redis;
use crate::config::UserAuthConfig;
use crate::mrtr::Sealer;
use crate::telemetry::metrics::Metrics;

/// Refresh an access token this long before it expires.
const REFRESH_MARGIN: Duration = Duration::from_secs(60);

/// Sealing purpose of connect links.
const LINK: &str = "link1";

/// What a call gets for its upstream.
#[derive(Debug)]
pub enum Credential {
    /// The caller's token.
    Token(UserToken),
    /// Ask the caller to connect (a URL-mode elicitation).
    Ask(InputRequired),
    /// The call cannot go on: the text says why and what to do (a tool error).
    Refuse(String),
}

/// Why a disconnect did not happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disconnect {
    /// No such upstream here.
    Unknown,
    /// The store did not answer.
    Unavailable,
}

/// A call that needs the caller's token at an upstream.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    /// Seals the connect link (the `requestState` key ring).
    pub sealer: &'a Sealer,
    /// The caller.
    pub identity: Option<&'a Identity>,
    /// The `[[upstream_auth]]` name.
    pub upstream: &'a str,
    /// The tool, as the caller knows it.
    pub tool: &'a str,
    /// The request's client capabilities (URL elicitation or not).
    pub capabilities: &'a Value,
}

/// The connections service of a replica (see the module).
pub struct Connections {
    /// As configured.
    pub config: UserAuthConfig,
    sign_in: oauth::Client,
    upstreams: HashMap<String, oauth::Client>,
    /// The grants.
    pub vault: vault::Vault,
    http: reqwest::Client,
    redis: Option<Arc<Redis>>,
    /// Without Redis: the `state` nonces already used.
    used: moka::sync::Cache<String, ()>,
    rng: SystemRandom,
    metrics: Arc<Metrics>,
}

impl std::fmt::Debug for Connections {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connections").field("upstreams", &self.upstreams.keys()).finish_non_exhaustive()
    }
}

impl Connections {
    /// The service for `config`, keeping grants in Redis when there is one.
    pub fn new(config: UserAuthConfig, redis: Option<Arc<Redis>>, metrics: Arc<Metrics>) -> Result<Self, String> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("no HTTP client for the authorization servers: {e}"))?;
        let sealer = Sealer::ring(&config.vault_keys, config.vault_ttl, 64 * 1024);
        if config.vault_keys.is_empty() {
            tracing::warn!(
                "no user_auth.vault_keys configured: connections are sealed with a random per-process key and \
                 are lost when this process ends"
            );
        }
        Ok(Self {
            sign_in: oauth::Client::new(config.sign_in.clone()),
            upstreams: config.upstreams.iter().map(|u| (u.name.clone(), oauth::Client::new(u.clone()))).collect(),
            vault: vault::Vault::new(sealer, redis.clone(), config.vault_ttl),
            http,
            used: moka::sync::Cache::builder().max_capacity(100_000).time_to_live(config.link_ttl).build(),
            redis,
            rng: SystemRandom::new(),
            metrics,
            config,
        })
    }

    /// The caller's token at `upstream` for a call of `tool`, refreshed when due; or the
    /// request to connect (when `capabilities` allow URL elicitation), or a refusal that says
    /// where to go.
    pub async fn credential(&self, call: &Call<'_>) -> Credential {
        let Call { identity, upstream, tool, .. } = *call;
        let Some(caller) = identity else {
            return Credential::Refuse(format!(
                "The tool '{tool}' acts as you at {upstream}, which needs a signed-in caller."
            ));
        };
        let key = caller.key();
        let Ok(grant) = self.current(key, upstream).await else {
            return Credential::Refuse(format!(
                "The tool '{tool}' cannot reach your {upstream} connection now (the shared store is unavailable); \
                 try again shortly."
            ));
        };
        match grant {
            Some(g) => match g.bearer() {
                Some(token) => Credential::Token(token),
                None => Credential::Refuse(format!(
                    "The tool '{tool}' cannot send your {upstream} token: its authorization server issued one \
                     that is not a valid header value."
                )),
            },
            None => self.ask(call, key),
        }
    }

    /// The caller's token at `upstream` when connected (refreshed when due), without asking:
    /// for listing what only connected callers see.
    pub async fn token(&self, identity: &Identity, upstream: &str) -> Option<UserToken> {
        self.current(identity.key(), upstream).await.ok().flatten()?.bearer()
    }

    /// The grant of `caller` at `upstream`, refreshed when due; `Ok(None)` when not connected
    /// (an entry that does not open here counts as none, logged); `Err` when the store did not
    /// answer.
    async fn current(&self, caller: &str, upstream: &str) -> Result<Option<Arc<oauth::Grant>>, vault::VaultError> {
        let grant = match self.vault.get(caller, upstream).await {
            Ok(g) => g,
            Err(vault::VaultError::Unavailable) => return Err(vault::VaultError::Unavailable),
            Err(e) => {
                tracing::warn!(upstream, caller, error = %e, "a stored connection was refused; asking to connect again");
                None
            }
        };
        Ok(match grant {
            Some(g) if g.expires_within(REFRESH_MARGIN) => self.refreshed(caller, upstream).await,
            other => other,
        })
    }

    /// The upstream refused the caller's token (revoked before it expired): the connection is
    /// removed and the caller asked to connect again.
    pub async fn refused(&self, call: &Call<'_>) -> Credential {
        let upstream = call.upstream;
        let Some(caller) = call.identity else { return Credential::Refuse(format!("{upstream} refused the call")) };
        tracing::info!(upstream, caller = caller.key(), "the upstream refused the caller's token; it is removed");
        self.metrics.count("mcp_user_auth_disconnected_total", &[("upstream", upstream), ("by", "upstream")]);
        if self.vault.delete(caller.key(), upstream).await.is_err() {
            self.vault.forget_local(caller.key(), upstream);
        }
        self.ask(call, caller.key())
    }

    /// A grant that is due, refreshed once across the cluster; `None` when it cannot be (no
    /// refresh token, or the server refused it): the caller connects again.
    async fn refreshed(&self, caller: &str, upstream: &str) -> Option<Arc<oauth::Grant>> {
        let client = self.upstreams.get(upstream)?;
        let done = self
            .vault
            .refresh_once(caller, upstream, || async {
                let current = self.vault.get(caller, upstream).await.ok().flatten()?;
                if !current.expires_within(REFRESH_MARGIN) {
                    return Some(current);
                }
                let refresh_token = current.refresh_token.as_deref()?;
                match client.refresh(&self.http, refresh_token).await {
                    Ok(mut g) => {
                        g.connected_at_ms = current.connected_at_ms;
                        let g = Arc::new(g);
                        if let Err(e) = self.vault.put(caller, upstream, (*g).clone()).await {
                            tracing::warn!(upstream, caller, error = %e, "a refreshed token could not be stored");
                        }
                        tracing::info!(upstream, caller, "refreshed the caller's upstream token");
                        self.metrics.count("mcp_user_auth_refreshed_total", &[("upstream", upstream), ("outcome", "ok")]);
                        Some(g)
                    }
                    Err(e) => {
                        tracing::warn!(upstream, caller, error = %e, "refreshing the caller's upstream token failed; asking to connect again");
                        self.metrics.count("mcp_user_auth_refreshed_total", &[("upstream", upstream), ("outcome", "refused")]);
                        let _ = self.vault.delete(caller, upstream).await;
                        None
                    }
                }
            })
            .await;
        match done {
            Some(g) => g,
            // Another replica is refreshing: its result, or (not yet stored) the old grant
            // while it still holds.
            None => {
                tokio::time::sleep(Duration::from_millis(200)).await;
                self.vault.get(caller, upstream).await.ok().flatten().filter(|g| !g.expires_within(Duration::ZERO))
            }
        }
    }

    /// The request to connect `upstream`: a URL-mode elicitation with a link sealed for this
    /// caller, or, for a client that cannot open URLs, the link in a refusal.
    fn ask(&self, call: &Call<'_>, caller: &str) -> Credential {
        let Call { sealer, upstream, tool, capabilities, .. } = *call;
        let link = self.link(sealer, caller, upstream);
        let request = InputRequest::url(
            format!(
                "Connect your {upstream} account to use '{tool}': open the link, sign in and allow access, then \
                 continue."
            ),
            link.clone(),
        );
        if request.is_supported_by(capabilities) {
            Credential::Ask(InputRequired::ask(format!("connect-{upstream}"), request))
        } else {
            Credential::Refuse(format!(
                "The tool '{tool}' acts as you at {upstream}, which you have not connected yet. Open {link} in a \
                 browser, sign in and allow access, then call the tool again."
            ))
        }
    }

    /// `<public_url>/oauth/start?link=<sealed caller, upstream, expiry>`.
    fn link(&self, sealer: &Sealer, caller: &str, upstream: &str) -> String {
        let exp = crate::mrtr::seal::now_secs() + self.config.link_ttl.as_secs();
        let plain = serde_json::to_vec(&serde_json::json!({ "c": caller, "u": upstream, "exp": exp })).expect("json");
        format!("{}/oauth/start?link={}", self.config.public_url, sealer.seal_bytes(LINK, &plain))
    }

    /// The caller forgets their connection to `upstream` (`/oauth/disconnect`).
    pub async fn disconnect(&self, caller: &Identity, upstream: &str) -> Result<(), Disconnect> {
        self.remove(caller.key(), upstream, "caller").await?;
        tracing::info!(upstream, caller = caller.key(), "the caller disconnected an upstream account");
        Ok(())
    }

    /// An administrator removes `caller`'s connection to `upstream` (the console); other
    /// replicas stop using it within [`vault::LOCAL_FOR`].
    pub async fn revoke(&self, admin: &Identity, caller: &str, upstream: &str) -> Result<(), Disconnect> {
        self.remove(caller, upstream, "admin").await?;
        tracing::warn!(
            upstream,
            caller,
            admin = admin.key(),
            "an administrator removed a caller's upstream connection"
        );
        Ok(())
    }

    /// Removes the connection, then revokes its grant at the upstream's authorization server
    /// when that names a revocation endpoint (RFC 7009; best effort: a failure is logged, and
    /// the grant lapses there with its expiry).
    async fn remove(&self, caller: &str, upstream: &str, by: &str) -> Result<(), Disconnect> {
        let Some(client) = self.upstreams.get(upstream) else { return Err(Disconnect::Unknown) };
        let grant = self.vault.get(caller, upstream).await.ok().flatten();
        self.vault.delete(caller, upstream).await.map_err(|_| Disconnect::Unavailable)?;
        self.metrics.count("mcp_user_auth_disconnected_total", &[("upstream", upstream), ("by", by)]);
        let Some(grant) = grant else { return Ok(()) };
        match client.revoke(&self.http, &grant).await {
            Ok(true) => tracing::info!(upstream, caller, "revoked the caller's grant at the upstream (RFC 7009)"),
            Ok(false) => {
                tracing::debug!(upstream, caller, "the upstream names no revocation endpoint: its grant lapses there");
            }
            Err(e) => {
                tracing::warn!(upstream, caller, error = %e, "revoking the caller's grant at the upstream failed: it lapses there with its expiry");
            }
        }
        Ok(())
    }

    /// The configured upstreams' names, sorted.
    pub fn upstream_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.upstreams.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }

    /// Marks a `state` nonce used; `false` when it already was (a replay).
    async fn first_use(&self, nonce: &str) -> Result<bool, vault::VaultError> {
        let Some(redis) = &self.redis else {
            let fresh = self.used.entry(nonce.to_owned()).or_insert(()).is_fresh();
            return Ok(fresh);
        };
        redis
            .claim(&format!("oauth-state:{nonce}"), self.config.link_ttl)
            .await
            .map_err(|_| vault::VaultError::Unavailable)
    }
}
