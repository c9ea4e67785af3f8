//! The browser's way through a connection, transport-neutral (`http::oauth` serves it):
//!
//! 1. `/oauth/start?link=…`: the link (sealed: caller, upstream, expiry) sends the browser to
//!    the identity provider's sign-in, with PKCE and a sealed `state`. Nothing in the request
//!    but the link is used: no redirect target can be passed in.
//! 2. `/oauth/callback` with the sign-in's code: the code is traded for a token for this
//!    runtime (`[auth] resource`), which the runtime's own authenticator checks; the person
//!    signed in must be the caller the link was made for, else nothing is stored. The browser
//!    then goes to the upstream's authorization server, with a new PKCE and `state`.
//! 3. `/oauth/callback` with the upstream's code: traded for the caller's grant, which the
//!    vault stores, when the browser is the one that signed in (a cookie set at step 2 and
//!    named in the upstream leg's `state`): an authorization link of that leg forwarded to
//!    another person cannot put their upstream account under this caller.
//!
//! Every `state` is sealed (the `requestState` key ring) and accepted once; every refusal is
//! logged with its reason, and no message quotes a code or a token.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::{Connections, LINK, oauth};
use crate::auth::Authenticator;
use crate::mrtr::seal::now_secs;
use crate::mrtr::{Sealer, StateError};

/// Sealing purpose of the OAuth `state`.
const STATE: &str = "oauth1";

/// The cookie that binds the upstream leg to the browser that signed in (path
/// `/oauth/callback`, HTTP only, `SameSite=Lax`).
pub const BROWSER_COOKIE: &str = "mcp_connect";

/// Where a step sends the browser.
#[derive(Debug)]
pub enum Step {
    /// To this URL (an authorization server's; never one from the request), setting
    /// [`BROWSER_COOKIE`] to `bind` when given.
    Redirect {
        /// Where.
        to: String,
        /// The browser's binding for the next leg.
        bind: Option<String>,
    },
    /// Done: the caller's connection to `upstream` is stored.
    Connected {
        /// The upstream's name.
        upstream: String,
    },
    /// A person signed in to see their connections: to `/oauth/connections`, with this
    /// sealed ticket in [`super::manage::TICKET_COOKIE`].
    Manage {
        /// The ticket.
        ticket: String,
    },
}

/// A step refused: the HTTP status and the words for the person in the browser.
#[derive(Debug)]
pub struct Refusal {
    /// 400 (a bad or used link), 403 (another person), 502 (an authorization server failed).
    pub status: u16,
    /// The page's heading.
    pub title: &'static str,
    /// What happened and what to do.
    pub message: String,
    /// Why, as logged and counted (`link_invalid`, `caller_mismatch`, ...).
    pub reason: &'static str,
}

impl Refusal {
    /// A refusal headed "Not connected" (a step of connecting an upstream).
    pub(super) fn new(status: u16, reason: &'static str, message: impl Into<String>) -> Self {
        let message = message.into();
        tracing::warn!(reason, status, "a connection step was refused: {message}");
        Self { status, title: "Not connected", message, reason }
    }

    /// The same refusal under another heading.
    pub(super) fn titled(self, title: &'static str) -> Self {
        Self { title, ..self }
    }
}

/// The sealed link.
#[derive(Deserialize)]
struct Link {
    c: String,
    u: String,
    exp: u64,
}

/// The sealed `state` of one leg.
#[derive(Serialize, Deserialize)]
struct State {
    /// `s`: the sign-in; `u`: the upstream.
    k: String,
    c: String,
    u: String,
    /// PKCE verifier.
    v: String,
    /// Nonce: accepted once.
    n: String,
    /// The upstream leg: the browser's binding ([`BROWSER_COOKIE`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    b: Option<String>,
    exp: u64,
}

const AGAIN: &str = "Ask your agent to run the tool again for a new link.";

impl Connections {
    /// Step 1: the link opened; the browser goes to the sign-in.
    pub async fn start(&self, sealer: &Sealer, link: Option<&str>) -> Result<Step, Refusal> {
        let link = link.ok_or_else(|| {
            Refusal::new(400, "link_missing", format!("This address needs the link your agent gave you. {AGAIN}"))
        })?;
        let plain = sealer
            .open_bytes(LINK, link)
            .map_err(|e| Refusal::new(400, "link_invalid", format!("This link is not valid ({}). {AGAIN}", why(&e))))?;
        let link: Link = serde_json::from_slice(&plain)
            .map_err(|_| Refusal::new(400, "link_invalid", format!("This link is not valid. {AGAIN}")))?;
        if link.exp < now_secs() {
            return Err(Refusal::new(400, "link_expired", format!("This link has expired. {AGAIN}")));
        }
        if !self.upstreams.contains_key(&link.u) {
            return Err(Refusal::new(400, "upstream_unknown", format!("{} is no longer configured here.", link.u)));
        }
        self.leg(sealer, &self.sign_in, "s", link.c, link.u).await
    }

    /// Steps 2 and 3: an authorization server sent the browser back with `params`; `browser`
    /// is its [`BROWSER_COOKIE`], if it sent one.
    pub async fn callback(
        &self,
        sealer: &Sealer,
        auth: Option<&Authenticator>,
        params: &HashMap<String, String>,
        browser: Option<&str>,
    ) -> Result<Step, Refusal> {
        let state = params.get("state").ok_or_else(|| {
            Refusal::new(400, "state_missing", format!("The sign-in came back without its state. {AGAIN}"))
        })?;
        let plain = sealer.open_bytes(STATE, state).map_err(|e| {
            Refusal::new(
                400,
                "state_invalid",
                format!("The sign-in came back with a state that is not valid ({}). {AGAIN}", why(&e)),
            )
        })?;
        let state: State = serde_json::from_slice(&plain)
            .map_err(|_| Refusal::new(400, "state_invalid", format!("The sign-in's state is not valid. {AGAIN}")))?;
        if state.k == "m" {
            // A person who came to see their connections: that page's words.
            return self.answered(sealer, auth, params, browser, state).await.map_err(|r| r.titled("Not signed in"));
        }
        self.answered(sealer, auth, params, browser, state).await
    }

    /// The rest of a callback, its `state` opened.
    async fn answered(
        &self,
        sealer: &Sealer,
        auth: Option<&Authenticator>,
        params: &HashMap<String, String>,
        browser: Option<&str>,
        state: State,
    ) -> Result<Step, Refusal> {
        // A person who came to see their connections starts again there, not at an agent.
        let again = if state.k == "m" { "Open /oauth/connections again." } else { AGAIN };
        if state.exp < now_secs() {
            return Err(Refusal::new(400, "state_expired", format!("The sign-in took too long. {again}")));
        }
        let client = match state.k.as_str() {
            "s" | "m" => &self.sign_in,
            _ => self.upstreams.get(&state.u).ok_or_else(|| {
                Refusal::new(400, "upstream_unknown", format!("{} is no longer configured here.", state.u))
            })?,
        };
        let leg = if state.k == "u" { state.u.as_str() } else { "the sign-in" };
        if state.k == "u" && (state.b.is_none() || state.b.as_deref() != browser) {
            tracing::warn!(link_for = %state.c, upstream = %state.u, "an upstream consent came back to another browser than the one that signed in; nothing stored");
            return Err(Refusal::new(
                403,
                "browser_mismatch",
                format!(
                    "This consent was started in another browser. Open the link your agent gave you in this \
                     browser. {again}"
                ),
            ));
        }
        match self.first_use(&state.n).await {
            Ok(true) => {}
            Ok(false) => {
                return Err(Refusal::new(400, "state_replayed", format!("This sign-in was already used. {again}")));
            }
            Err(_) => {
                return Err(Refusal::new(
                    503,
                    "store_unavailable",
                    "The shared store is unavailable; try again shortly.",
                ));
            }
        }
        if let Some(error) = params.get("error") {
            let what = if error == "access_denied" { "access was not allowed" } else { "it answered with an error" };
            return Err(Refusal::new(
                400,
                "authorization_error",
                format!("At {leg}, {what} ({}). {again}", short(error)),
            ));
        }
        // RFC 9207: the server that answers names itself; a different one is a mix-up.
        if let (Some(iss), Some(expected)) = (params.get("iss"), client.config.issuer.as_deref())
            && iss != expected
        {
            return Err(Refusal::new(
                400,
                "issuer_mismatch",
                format!("The answer for {leg} came from another server. {again}"),
            ));
        }
        let code = params.get("code").ok_or_else(|| {
            Refusal::new(400, "code_missing", format!("{leg} sent no authorization code back. {again}"))
        })?;
        let callback = self.config.callback();
        let grant = client.redeem(&self.http, code, &state.v, &callback).await.map_err(|e| match e {
            oauth::TokenError::Refused(why) => {
                Refusal::new(400, "code_refused", format!("{leg} did not accept the sign-in ({why}). {again}"))
            }
            oauth::TokenError::Failed(why) => {
                Refusal::new(502, "token_request_failed", format!("{leg} could not be reached ({why}); try again."))
            }
        })?;
        if state.k != "u" {
            let signed_in = match auth {
                Some(a) => a.authenticate(Some(&grant.access_token)).await.map_err(|e| {
                    Refusal::new(
                        403,
                        "sign_in_token_refused",
                        format!("Your sign-in could not be verified ({e}). {again}"),
                    )
                })?,
                None => return Err(Refusal::new(503, "auth_off", "Sign-in is not configured here.")),
            };
            if state.k == "m" {
                return Ok(Step::Manage { ticket: self.ticket(sealer, signed_in.key()) });
            }
            if signed_in.key() != state.c {
                tracing::warn!(link_for = %state.c, signed_in = %signed_in.key(), upstream = %state.u, "a connect link was opened by another person; nothing stored");
                return Err(Refusal::new(
                    403,
                    "caller_mismatch",
                    "This link was made for another person. Sign in as the person whose agent asked, or ask your \
                     own agent for a link.",
                ));
            }
            return self.leg(sealer, &self.upstreams[&state.u], "u", state.c, state.u).await;
        }
        self.vault.put(&state.c, &state.u, grant).await.map_err(|_| {
            Refusal::new(
                503,
                "store_unavailable",
                "The connection could not be stored (the shared store is unavailable); try again.",
            )
        })?;
        tracing::info!(upstream = %state.u, caller = %state.c, "the caller connected an upstream account");
        self.metrics.count("mcp_user_auth_connected_total", &[("upstream", &state.u)]);
        Ok(Step::Connected { upstream: state.u })
    }

    /// Sends the browser to `client`'s authorization endpoint with a fresh PKCE pair and
    /// `state` for leg `k` (`s`: the sign-in of a link, `u`: the upstream, `m`: the sign-in to
    /// see one's connections) of `caller` at `upstream`.
    pub(super) async fn leg(
        &self,
        sealer: &Sealer,
        client: &oauth::Client,
        k: &str,
        caller: String,
        upstream: String,
    ) -> Result<Step, Refusal> {
        let endpoints = client.endpoints(&self.http).await.map_err(|e| {
            Refusal::new(
                502,
                "metadata_unavailable",
                format!("The authorization server could not be reached ({e}); try again."),
            )
        })?;
        let (verifier, challenge) = oauth::pkce(&self.rng);
        let bind = (k == "u").then(|| oauth::random(&self.rng, 16));
        let state = State {
            k: k.to_owned(),
            c: caller,
            u: upstream,
            v: verifier,
            n: oauth::random(&self.rng, 16),
            b: bind.clone(),
            exp: now_secs() + self.config.link_ttl.as_secs(),
        };
        let sealed = sealer.seal_bytes(STATE, &serde_json::to_vec(&state).expect("json"));
        let to = client.authorize_url(&endpoints.authorize, &self.config.callback(), &sealed, &challenge);
        Ok(Step::Redirect { to, bind })
    }
}

/// Why a sealed link or `state` did not open, in a person's words (the seal's own errors
/// speak of `requestState`, which a person following a link never saw).
fn why(e: &StateError) -> &'static str {
    match e {
        StateError::TooLarge => "it is too long",
        StateError::UnknownKey(_) => "it was made by another deployment, or with a key retired since",
        StateError::Integrity => "it was changed",
        _ => "it was cut short or changed",
    }
}

/// An `error` code as shown: printable, short.
fn short(s: &str) -> String {
    s.chars().filter(|c| c.is_ascii_graphic()).take(64).collect()
}
