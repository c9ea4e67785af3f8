//! libFuzzer entry of `mcp_fuzz::config`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz::config(data));
