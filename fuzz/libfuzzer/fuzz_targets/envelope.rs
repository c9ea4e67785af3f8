//! libFuzzer entry of `mcp_fuzz::envelope`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz::envelope(data));
