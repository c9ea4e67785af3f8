//! libFuzzer entry of `mcp_fuzz::rest_template`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz::rest_template(data));
