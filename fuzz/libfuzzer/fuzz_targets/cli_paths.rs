//! libFuzzer entry of `mcp_fuzz::cli_paths`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz::cli_paths(data));
