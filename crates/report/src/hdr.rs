//! HDR histograms as text: the standard HdrHistogram "V2 compressed" encoding (as written
//! by HdrHistogram's log writers and read by its plotters) in base64 (`HISTFAAA…`).

use pgrush_stats::histogram::HISTOGRAM_MAX_US;
use pgrush_stats::{INTERVAL_SIGFIG, LatencyHistogram, SparseHistogram, coarse_value};

use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};

/// An encoded histogram that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HdrError {
    /// Not base64.
    #[error("invalid base64 in histogram")]
    Base64,
    /// Not a V2 (compressed) HdrHistogram.
    #[error("invalid HDR histogram: {0}")]
    Decode(String),
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding.
pub fn base64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn sextet(c: u8) -> Option<u32> {
    match c {
        b'A'..=b'Z' => Some(u32::from(c - b'A')),
        b'a'..=b'z' => Some(u32::from(c - b'a') + 26),
        b'0'..=b'9' => Some(u32::from(c - b'0') + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// Decodes standard base64 (padding optional, ASCII whitespace ignored).
pub fn base64_decode(text: &str) -> Result<Vec<u8>, HdrError> {
    let clean: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    let body = clean
        .iter()
        .rposition(|&b| b != b'=')
        .map_or(&clean[..0], |last| &clean[..=last]);
    if clean.len() - body.len() > 2 || body.len() % 4 == 1 {
        return Err(HdrError::Base64);
    }
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    for chunk in body.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= sextet(c).ok_or(HdrError::Base64)? << (18 - 6 * i);
        }
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..chunk.len() - 1]);
    }
    Ok(out)
}

/// Encodes a histogram (V2 compressed, base64).
pub fn encode(hist: &LatencyHistogram) -> String {
    let mut buf = Vec::new();
    match V2DeflateSerializer::new().serialize(hist.inner(), &mut buf) {
        Ok(_) => base64_encode(&buf),
        // Serializing into memory only fails on internal limits; an empty string then
        // means "not available".
        Err(_) => String::new(),
    }
}

/// Decodes [`encode`]'s output (any V2 or V2-compressed histogram) into a
/// [`LatencyHistogram`] (values above its range saturate).
pub fn decode(text: &str) -> Result<LatencyHistogram, HdrError> {
    let bytes = base64_decode(text)?;
    let h: Histogram<u64> = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| HdrError::Decode(format!("{e:?}")))?;
    let mut out = LatencyHistogram::new();
    for v in h.iter_recorded() {
        out.record_u64_n(
            v.value_iterated_to().min(HISTOGRAM_MAX_US),
            v.count_at_value(),
        );
    }
    Ok(out)
}

/// Encodes a per-interval histogram (values at 2 significant digits) as a V2 compressed,
/// base64 HDR histogram of 2 significant digits: a few hundred bytes per interval.
pub fn encode_sparse(sparse: &SparseHistogram) -> String {
    let Ok(mut h) = Histogram::<u64>::new_with_bounds(1, HISTOGRAM_MAX_US, INTERVAL_SIGFIG) else {
        return String::new();
    };
    for &(value, count) in &sparse.buckets {
        h.saturating_record_n(u64::from(value), u64::from(count));
    }
    let mut buf = Vec::new();
    match V2DeflateSerializer::new().serialize(&h, &mut buf) {
        Ok(_) => base64_encode(&buf),
        Err(_) => String::new(),
    }
}

/// Decodes [`encode_sparse`]'s output back into the per-interval form.
pub fn decode_sparse(text: &str) -> Result<SparseHistogram, HdrError> {
    let bytes = base64_decode(text)?;
    let h: Histogram<u64> = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| HdrError::Decode(format!("{e:?}")))?;
    let mut out = SparseHistogram::default();
    for v in h.iter_recorded() {
        let value = coarse_value(v.value_iterated_to().min(HISTOGRAM_MAX_US));
        let value = u32::try_from(value).unwrap_or(u32::MAX);
        let count = u32::try_from(v.count_at_value()).unwrap_or(u32::MAX);
        match out.buckets.last_mut() {
            Some(last) if last.0 == value => last.1 = last.1.saturating_add(count),
            _ => out.buckets.push((value, count)),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_roundtrip() {
        assert_eq!(base64_encode(b""), "");
        assert_eq!(base64_encode(b"f"), "Zg==");
        assert_eq!(base64_encode(b"fo"), "Zm8=");
        assert_eq!(base64_encode(b"foo"), "Zm9v");
        assert_eq!(base64_encode(b"foobar"), "Zm9vYmFy");
        for s in ["", "f", "fo", "foo", "foob", "fooba", "foobar"] {
            assert_eq!(base64_decode(&base64_encode(s.as_bytes())), Ok(s.into()));
        }
        assert_eq!(base64_decode("Zm9v\nYg"), Ok(b"foob".to_vec()));
        assert!(base64_decode("Zm9v!").is_err());
        assert!(base64_decode("Z").is_err());
    }

    #[test]
    fn histogram_roundtrip() {
        let mut h = LatencyHistogram::new();
        for v in [1u64, 5, 5, 1000, 123_456, 3_000_000] {
            h.record_u64(v);
        }
        let text = encode(&h);
        assert!(text.starts_with("HISTF"), "{text}");
        let back = decode(&text).unwrap_or_default();
        assert_eq!(back.len(), 6);
        assert_eq!(back.max(), h.max());
        assert_eq!(back.min(), h.min());
        assert_eq!(back.value_at_quantile(0.5), h.value_at_quantile(0.5));
        assert!(decode("Zm9v").is_err());
        assert!(decode("***").is_err());
    }

    #[test]
    fn interval_histogram_roundtrip() {
        let mut h = LatencyHistogram::new();
        for v in [0u64, 1, 255, 256, 300, 1000, 1004, 123_456, 3_599_999_999] {
            h.record_u64_n(v, v % 7 + 1);
        }
        let sparse = SparseHistogram::from_histogram(&h);
        let text = encode_sparse(&sparse);
        assert!(text.starts_with("HISTF"), "{text}");
        assert_eq!(decode_sparse(&text), Ok(sparse));
        assert_eq!(
            decode_sparse(&encode_sparse(&SparseHistogram::default())),
            Ok(SparseHistogram::default())
        );
        assert!(decode_sparse("Zm9v").is_err());
    }
}
