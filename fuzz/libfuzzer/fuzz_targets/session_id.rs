//! libFuzzer entry of `mcp_fuzz::session_id`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz::session_id(data));
