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

#[test]
fn check_accepts_the_example_configs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/examples");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let out = runtime().args(["check", "--config"]).arg(&path).output().unwrap();
            assert!(out.status.success(), "{}: {}", path.display(), String::from_utf8_lossy(&out.stderr));
            checked += 1;
        }
    }
    assert!(checked > 0, "no example configs in {}", dir.display());
}

#[test]
fn check_names_the_bad_key_of_a_rest_tool() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    let config = r#"
[[adapters]]
name = "api"
kind = "rest"
base_urls = ["http://127.0.0.1:9"]
[[adapters.tools]]
name = "get_user"
description = "d"
path = "/users/{login}"
"#;
    std::fs::write(&path, config).unwrap();
    let out = runtime().args(["check", "--config"]).arg(&path).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("adapters.api.tools.get_user.path: {login} must be a required property"), "{err}");
}
