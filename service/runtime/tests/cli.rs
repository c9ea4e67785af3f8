//! The binary's command line: `check` accepts the shipped configs and names the key of a bad one.
//! (Also makes `cargo test` build the `mcp-runtime` binary the black-box tests in `tests/` run.)

use std::path::Path;
use std::process::Command;

fn runtime() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mcp-runtime"))
}

fn config(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../config").join(name).to_string_lossy().into_owned()
}

#[test]
fn check_accepts_the_shipped_configs() {
    for name in ["default.toml", "conformance.toml"] {
        let out = runtime().args(["check", "--config", &config(name)]).output().unwrap();
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stdout).contains(": ok"), "{name}");
    }
}

#[test]
fn check_names_the_bad_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, "[server]\npage_size = 0\n").unwrap();
    let out = runtime().args(["check", "--config"]).arg(&path).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("server.page_size"), "{err}");
}

#[test]
fn missing_config_file_is_a_clear_error() {
    let out = runtime().args(["check", "--config", "/nonexistent/mcp.toml"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/mcp.toml"));
}
