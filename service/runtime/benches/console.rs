//! Cost of the operator console on the MCP path: a whole in-process `tools/call` (static
//! bearer token) with the console off against the same call with the console on and idle
//! (its sampling task running, nobody looking; each call pushes one record into the
//! recent-calls ring). Ratio from one run, interleaved rounds, best of 5.
//! Run: `cargo bench -p mcp-runtime --bench console`.

mod support;

use mcp_runtime::{AppState, Config};
use support::{Side, compare};

const TOKEN: &str = "bench-admin-token-0123456789";

fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let base = format!(
            "{}\n[[auth.tokens]]\nsubject = \"ops\"\nsecret = \"{TOKEN}\"\n",
            mcp_runtime::config::EMBEDDED_DEFAULT
        );
        let on_toml = format!("{base}\n[console]\nenabled = true\nadmin_subjects = [\"ops\"]\n");
        let off_state = AppState::build(&Config::from_toml(&base).unwrap()).await.unwrap();
        let on_state = AppState::build(&Config::from_toml(&on_toml).unwrap()).await.unwrap();
        assert!(off_state.console.is_none() && on_state.console.is_some());
        mcp_runtime::console::sample::spawn(&on_state);
        let off = mcp_runtime::app(off_state);
        let on = mcp_runtime::app(on_state);
        compare(
            Side::new("console off", &off, Some(TOKEN)),
            Side::new("console on and idle", &on, Some(TOKEN)),
            "no measurable cost, >= 0.97",
        )
        .await;
    });
}
