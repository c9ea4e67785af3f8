//! A person's own connections (`/oauth/connections`): they sign in at the identity provider
//! `[auth]` trusts (as for a connect link) and see each configured upstream, connected or not,
//! and disconnect one. Stateless like the rest: the sign-in leaves a sealed ticket (who, a
//! form key, an expiry; the `requestState` key ring) in a cookie for this page only
//! ([`TICKET_COOKIE`]: `HttpOnly`, `SameSite=Lax`), and every form carries the form key as
//! well, so a form posted from another site changes nothing.

use serde::{Deserialize, Serialize};

use super::flow::{Refusal, Step};
use super::{Connections, Disconnect, oauth};
use crate::mrtr::Sealer;
use crate::mrtr::seal::now_secs;

/// The cookie holding the ticket (path `/oauth/connections`).
pub const TICKET_COOKIE: &str = "mcp_manage";

/// Sealing purpose of tickets.
const TICKET: &str = "manage1";

/// How long a sign-in shows one's connections: fifteen minutes.
pub const TICKET_SECS: u64 = 900;

/// A ticket's sealed content.
#[derive(Serialize, Deserialize)]
struct Ticket {
    /// The person (`issuer#subject`).
    c: String,
    /// The form key every form of the page carries.
    f: String,
    exp: u64,
}

/// Who is looking, and the key their forms must carry.
#[derive(Debug)]
pub struct Viewer {
    /// The person (`issuer#subject`).
    pub caller: String,
    /// The form key.
    pub form_key: String,
}

/// One configured upstream as the person's page shows it.
#[derive(Debug)]
pub struct Mine {
    /// The `[[upstream_auth]]` name.
    pub upstream: String,
    /// When they connected, if they are connected.
    pub connected_at_ms: Option<u64>,
}

impl Connections {
    /// The ticket of `caller`, who just signed in.
    pub(super) fn ticket(&self, sealer: &Sealer, caller: &str) -> String {
        let t = Ticket { c: caller.to_owned(), f: oauth::random(&self.rng, 16), exp: now_secs() + TICKET_SECS };
        sealer.seal_bytes(TICKET, &serde_json::to_vec(&t).expect("json"))
    }

    /// Who holds `ticket`, if it is one of ours and still good (else: sign in again).
    pub fn viewer(&self, sealer: &Sealer, ticket: Option<&str>) -> Option<Viewer> {
        let plain = sealer.open_bytes(TICKET, ticket?).ok()?;
        let t: Ticket = serde_json::from_slice(&plain).ok()?;
        (t.exp >= now_secs()).then_some(Viewer { caller: t.c, form_key: t.f })
    }

    /// To the sign-in, for a person who wants to see their connections.
    pub async fn sign_in_to_manage(&self, sealer: &Sealer) -> Result<Step, Refusal> {
        self.leg(sealer, &self.sign_in, "m", String::new(), String::new()).await.map_err(|r| r.titled("Not signed in"))
    }

    /// Each configured upstream, and whether `viewer` is connected there.
    pub async fn mine(&self, viewer: &Viewer) -> Vec<Mine> {
        let mut out = Vec::new();
        for upstream in self.upstream_names() {
            let grant = self.vault.get(&viewer.caller, upstream).await.ok().flatten();
            out.push(Mine { upstream: upstream.to_owned(), connected_at_ms: grant.map(|g| g.connected_at_ms) });
        }
        out
    }

    /// `viewer` disconnects `upstream` with a form that carried `form_key`.
    pub async fn disconnect_mine(&self, viewer: &Viewer, form_key: &str, upstream: &str) -> Result<(), Refusal> {
        if form_key != viewer.form_key {
            tracing::warn!(caller = %viewer.caller, upstream, "a disconnect form without this page's form key; nothing changed");
            return Err(Refusal::new(
                403,
                "form_key_mismatch",
                "This form did not come from your connections page; nothing changed. Open the page again.",
            )
            .titled("Nothing changed"));
        }
        match self.remove(&viewer.caller, upstream, "caller").await {
            Ok(()) => {
                tracing::info!(upstream, caller = %viewer.caller, "the caller disconnected an upstream account on their page");
                Ok(())
            }
            Err(Disconnect::Unknown) => {
                Err(Refusal::new(400, "upstream_unknown", format!("{upstream} is not configured here."))
                    .titled("Nothing changed"))
            }
            Err(Disconnect::Unavailable) => Err(Refusal::new(
                503,
                "store_unavailable",
                "The shared store is unavailable; nothing changed. Try again shortly.",
            )
            .titled("Nothing changed")),
        }
    }
}
