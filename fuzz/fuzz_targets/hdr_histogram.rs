//! HDR histogram payloads of run documents: any bytes (as the base64 text a document
//! holds) must decode or fail with an error, with memory bounded by the counts its
//! bounds need (at most `hdr::MAX_COUNTS`), never by what its header claims.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pgrush_report::hdr;

fuzz_target!(|data: &[u8]| {
    let text = hdr::base64_encode(data);
    let checked = hdr::check(&text).is_ok();
    assert_eq!(hdr::decode(&text).is_ok(), checked);
    assert_eq!(hdr::decode_sparse(&text).is_ok(), checked);
    if let Ok(raw) = std::str::from_utf8(data) {
        let _ = hdr::decode(raw);
    }
});
