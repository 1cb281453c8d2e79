//! HDR histograms as text: the standard HdrHistogram "V2 compressed" encoding (as written
//! by HdrHistogram's log writers and read by its plotters) in base64 (`HISTFAAA…`).

use pgrush_stats::histogram::HISTOGRAM_MAX_US;
use pgrush_stats::{INTERVAL_SIGFIG, LatencyHistogram, SparseHistogram, coarse_value};

use std::cell::RefCell;
use std::io::Read;

use flate2::read::ZlibDecoder;
use flate2::{Compress, Compression, FlushCompress, Status};
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};

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

/// The cookie of an uncompressed V2 histogram.
const V2_COOKIE: u32 = 0x1c84_9303 | 0x10;
/// The cookie of a compressed V2 histogram.
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9304 | 0x10;
/// Bytes of a V2 header: cookie, payload length, normalizing offset, significant
/// digits, lowest and highest value, integer-to-double ratio.
const V2_HEADER_LEN: usize = 40;
/// Most bytes one count takes in a V2 payload (a zig-zag LEB128 varint of 64 bits).
const MAX_BYTES_PER_COUNT: u64 = 9;
/// Most counts a histogram read back may have: 5 significant digits (the finest
/// HdrHistogram allows) over an hour in µs need about 2 M (16 MiB of counts); pgrush's own
/// (3 digits) need 23 552. A header claiming more is refused before anything is allocated.
pub const MAX_COUNTS: u64 = 1 << 21;

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
    ENCODER.with_borrow_mut(|e| e.encode(hist.inner()))
}

/// What encoding a histogram needs, kept from one histogram to the next (one per
/// thread): HdrHistogram's `V2DeflateSerializer` builds and zeroes a new zlib
/// compressor (hundreds of kilobytes) for every histogram, and a run document encodes
/// one per interval and script. Its output is the same, byte for byte.
struct Encoder {
    v2: V2Serializer,
    plain: Vec<u8>,
    packed: Vec<u8>,
    compress: Compress,
    /// The histogram [`encode_sparse`] fills (2 significant digits), reset each time.
    coarse: Option<Histogram<u64>>,
}

thread_local! {
    static ENCODER: RefCell<Encoder> = RefCell::new(Encoder {
        v2: V2Serializer::new(),
        plain: Vec::new(),
        packed: Vec::new(),
        compress: Compress::new(Compression::default(), true),
        coarse: None,
    });
}

impl Encoder {
    /// `h` in the V2 compressed encoding, in base64 (empty if it cannot be encoded:
    /// serializing into memory only fails on internal limits, and an empty string means
    /// "not available").
    fn encode(&mut self, h: &Histogram<u64>) -> String {
        match self.deflate(h) {
            Some(()) => base64_encode(&self.packed),
            None => String::new(),
        }
    }

    /// Writes `h`'s V2 compressed form into `packed`: the cookie, the compressed
    /// length, the zlib stream of the V2 encoding.
    fn deflate(&mut self, h: &Histogram<u64>) -> Option<()> {
        self.plain.clear();
        self.v2.serialize(h, &mut self.plain).ok()?;
        self.packed.clear();
        self.packed
            .extend_from_slice(&V2_COMPRESSED_COOKIE.to_be_bytes());
        self.packed.extend_from_slice(&[0; 4]);
        self.compress.reset();
        loop {
            // `compress_vec` writes into the spare capacity only.
            self.packed.reserve(self.plain.len() / 2 + 64);
            let read = usize::try_from(self.compress.total_in()).ok()?;
            let rest = self.plain.get(read..)?;
            let status = self
                .compress
                .compress_vec(rest, &mut self.packed, FlushCompress::Finish)
                .ok()?;
            if status == Status::StreamEnd {
                break;
            }
        }
        let len = u32::try_from(self.packed.len() - 8).ok()?;
        self.packed[4..8].copy_from_slice(&len.to_be_bytes());
        Some(())
    }

    /// [`encode_sparse`] with this thread's encoder.
    fn encode_sparse(&mut self, sparse: &SparseHistogram) -> String {
        let mut h = match self.coarse.take() {
            Some(mut h) => {
                h.reset();
                h
            }
            None => match Histogram::<u64>::new_with_bounds(1, HISTOGRAM_MAX_US, INTERVAL_SIGFIG) {
                Ok(h) => h,
                Err(_) => return String::new(),
            },
        };
        for &(value, count) in &sparse.buckets {
            h.saturating_record_n(u64::from(value), u64::from(count));
        }
        let text = self.encode(&h);
        self.coarse = Some(h);
        text
    }
}

/// The number of counts a histogram with these bounds has (HdrHistogram's layout),
/// `None` for bounds it refuses.
fn counts_len(low: u64, high: u64, digits: u32) -> Option<u64> {
    if !(1..=u64::MAX / 2).contains(&low) || high < 2 * low || digits > 5 {
        return None;
    }
    let largest = 2 * 10u64.pow(digits);
    let sub_bucket_magnitude = 64 - (largest - 1).leading_zeros();
    let unit_magnitude = 63 - low.leading_zeros();
    if unit_magnitude + sub_bucket_magnitude > 63 {
        return None;
    }
    let sub_bucket_count = 1u64 << sub_bucket_magnitude;
    let mut untrackable = sub_bucket_count << unit_magnitude;
    let mut buckets = 1u64;
    while untrackable <= high {
        if untrackable > u64::MAX / 2 {
            buckets += 1;
            break;
        }
        untrackable <<= 1;
        buckets += 1;
    }
    Some((buckets + 1) * (sub_bucket_count / 2))
}

fn be_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn be_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(a)
}

/// Checks a V2 header against what a histogram can hold; returns the payload length.
fn checked_payload_len(header: &[u8]) -> Result<u64, HdrError> {
    let bad = |what: String| Err(HdrError::Decode(what));
    if be_u32(header, 0) != V2_COOKIE {
        return bad("not a V2 histogram".to_string());
    }
    let payload_len = u64::from(be_u32(header, 4));
    let (digits, low, high) = (be_u32(header, 12), be_u64(header, 16), be_u64(header, 24));
    let Some(counts) = counts_len(low, high, digits) else {
        return bad(format!(
            "invalid bounds (lowest {low}, highest {high}, {digits} significant digits)"
        ));
    };
    if counts > MAX_COUNTS {
        return bad(format!(
            "{counts} counts (lowest {low}, highest {high}, {digits} significant digits) \
             exceed the limit of {MAX_COUNTS}"
        ));
    }
    if payload_len > counts * MAX_BYTES_PER_COUNT {
        return bad(format!(
            "payload of {payload_len} bytes is longer than {counts} counts can take"
        ));
    }
    Ok(payload_len)
}

/// Reads `len` bytes (no more) from `reader` into `out`, growing it only as bytes come.
fn read_exactly(reader: impl Read, len: u64, out: &mut Vec<u8>) -> Result<(), HdrError> {
    let before = out.len() as u64;
    reader
        .take(len)
        .read_to_end(out)
        .map_err(|e| HdrError::Decode(format!("compressed payload: {e}")))?;
    if out.len() as u64 - before != len {
        return Err(HdrError::Decode(format!(
            "payload of {} bytes is shorter than its stated {len}",
            out.len() as u64 - before
        )));
    }
    Ok(())
}

/// The uncompressed V2 form of an encoded histogram, with every length checked
/// against the bytes present and the bounds: what the decoder then allocates is at
/// most what a histogram of at most [`MAX_COUNTS`] counts needs.
fn bounded_v2(bytes: &[u8]) -> Result<Vec<u8>, HdrError> {
    let short = || HdrError::Decode("truncated header".to_string());
    if bytes.len() < 8 {
        return Err(short());
    }
    if be_u32(bytes, 0) != V2_COMPRESSED_COOKIE {
        if bytes.len() < V2_HEADER_LEN {
            return Err(short());
        }
        let payload_len = checked_payload_len(&bytes[..V2_HEADER_LEN])?;
        if (bytes.len() - V2_HEADER_LEN) as u64 != payload_len {
            return Err(HdrError::Decode(format!(
                "payload of {} bytes where the header states {payload_len}",
                bytes.len() - V2_HEADER_LEN
            )));
        }
        return Ok(bytes.to_vec());
    }
    let compressed_len = be_u32(bytes, 4) as usize;
    let Some(compressed) = bytes.get(8..8 + compressed_len) else {
        return Err(HdrError::Decode(format!(
            "compressed length {compressed_len} exceeds the {} bytes present",
            bytes.len() - 8
        )));
    };
    let mut inflate = ZlibDecoder::new(compressed);
    let mut out = Vec::with_capacity(V2_HEADER_LEN);
    read_exactly(&mut inflate, V2_HEADER_LEN as u64, &mut out)?;
    let payload_len = checked_payload_len(&out)?;
    read_exactly(&mut inflate, payload_len, &mut out)?;
    Ok(out)
}

/// Decodes an encoded histogram with every size bounded (see [`bounded_v2`]).
fn decode_bounded(text: &str) -> Result<Histogram<u64>, HdrError> {
    let bytes = bounded_v2(&base64_decode(text)?)?;
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| HdrError::Decode(format!("{e:?}")))
}

/// Checks that `text` decodes (as [`decode`] and [`decode_sparse`] would) without
/// building the result.
pub fn check(text: &str) -> Result<(), HdrError> {
    decode_bounded(text).map(drop)
}

/// Decodes [`encode`]'s output (any V2 or V2-compressed histogram of at most
/// [`MAX_COUNTS`] counts) into a [`LatencyHistogram`] (values above its range saturate).
pub fn decode(text: &str) -> Result<LatencyHistogram, HdrError> {
    let h = decode_bounded(text)?;
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
    ENCODER.with_borrow_mut(|e| e.encode_sparse(sparse))
}

/// Decodes [`encode_sparse`]'s output back into the per-interval form.
pub fn decode_sparse(text: &str) -> Result<SparseHistogram, HdrError> {
    let h = decode_bounded(text)?;
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
    fn the_reused_encoder_writes_what_hdrhistogram_writes() {
        use hdrhistogram::serialization::V2DeflateSerializer;
        let reference = |h: &Histogram<u64>| {
            let mut buf = Vec::new();
            V2DeflateSerializer::new()
                .serialize(h, &mut buf)
                .map(|_| base64_encode(&buf))
                .unwrap_or_default()
        };
        // Several in a row through one encoder: nothing of one is left in the next.
        for values in [
            &[1u64, 5, 5, 1000][..],
            &[],
            &[123_456, 3_000_000, 7],
            &[42],
        ] {
            let mut h = LatencyHistogram::new();
            for &v in values {
                h.record_u64_n(v, v % 5 + 1);
            }
            assert_eq!(encode(&h), reference(h.inner()));
            let sparse = SparseHistogram::from_histogram(&h);
            let mut coarse =
                Histogram::<u64>::new_with_bounds(1, HISTOGRAM_MAX_US, INTERVAL_SIGFIG)
                    .expect("the interval histograms' bounds");
            for &(v, c) in &sparse.buckets {
                coarse.saturating_record_n(u64::from(v), u64::from(c));
            }
            assert_eq!(encode_sparse(&sparse), reference(&coarse));
        }
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

    /// A V2 header (uncompressed cookie) with these fields.
    fn header(payload_len: u32, digits: u32, low: u64, high: u64) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&V2_COOKIE.to_be_bytes());
        b.extend_from_slice(&payload_len.to_be_bytes());
        b.extend_from_slice(&0u32.to_be_bytes());
        b.extend_from_slice(&digits.to_be_bytes());
        b.extend_from_slice(&low.to_be_bytes());
        b.extend_from_slice(&high.to_be_bytes());
        b.extend_from_slice(&1.0f64.to_be_bytes());
        b
    }

    /// `v2` compressed as HdrHistogram does (compressed cookie, length, zlib).
    fn compressed(v2: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(v2).unwrap_or_default();
        let body = z.finish().unwrap_or_default();
        let mut b = V2_COMPRESSED_COOKIE.to_be_bytes().to_vec();
        b.extend_from_slice(&(body.len() as u32).to_be_bytes());
        b.extend_from_slice(&body);
        b
    }

    fn decode_error(bytes: &[u8]) -> String {
        match decode(&base64_encode(bytes)) {
            Ok(_) => panic!("decoded"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn counts_len_is_hdrhistograms() {
        for (low, high, digits) in [
            (1, HISTOGRAM_MAX_US, 3),
            (1, HISTOGRAM_MAX_US, 2),
            (1, 2, 0),
            (7, u64::MAX, 5),
            (1, u64::MAX, 1),
            (1000, 1 << 40, 4),
        ] {
            let h = Histogram::<u8>::new_with_bounds(low, high, digits as u8)
                .map(|h| h.distinct_values() as u64);
            assert_eq!(
                counts_len(low, high, digits),
                h.ok(),
                "{low} {high} {digits}"
            );
        }
        assert_eq!(counts_len(0, 10, 3), None);
        assert_eq!(counts_len(1, 10, 6), None);
    }

    #[test]
    fn a_header_claiming_a_huge_payload_is_refused_before_allocating() {
        // 2^31 bytes claimed, none present.
        let e = decode_error(&header(1 << 31, 3, 1, HISTOGRAM_MAX_US));
        assert!(e.contains("longer than 23552 counts can take"), "{e}");
        let e = decode_error(&compressed(&header(u32::MAX, 3, 1, HISTOGRAM_MAX_US)));
        assert!(e.contains("longer than"), "{e}");
        // A plausible length, fewer bytes.
        let e = decode_error(&header(100, 3, 1, HISTOGRAM_MAX_US));
        assert!(
            e.contains("payload of 0 bytes where the header states 100"),
            "{e}"
        );
    }

    #[test]
    fn bounds_needing_too_many_counts_are_refused() {
        let e = decode_error(&header(0, 5, 1, u64::MAX));
        assert!(e.contains("exceed the limit of 2097152"), "{e}");
        let e = decode_error(&header(0, 9, 1, 100));
        assert!(e.contains("invalid bounds"), "{e}");
        // 5 digits over an hour fit.
        let ok = decode(&base64_encode(&header(0, 5, 1, HISTOGRAM_MAX_US)));
        assert_eq!(ok.map(|h| h.len()), Ok(0));
    }

    #[test]
    fn a_zlib_bomb_inflates_no_further_than_the_stated_payload() {
        // 16 MiB of zeros (zero counts) behind a header stating 10 bytes: only the 10
        // are inflated, and the trailing rest is ignored as HdrHistogram's reader does.
        let mut v2 = header(10, 3, 1, HISTOGRAM_MAX_US);
        v2.resize(v2.len() + (16 << 20), 0);
        let bomb = compressed(&v2);
        assert!(bomb.len() < 50_000, "{}", bomb.len());
        assert_eq!(decode(&base64_encode(&bomb)).map(|h| h.len()), Ok(0));
        // The compressed length may not point past the bytes present.
        let mut cut = bomb.clone();
        cut.truncate(100);
        let e = decode_error(&cut);
        assert!(e.contains("exceeds the 92 bytes present"), "{e}");
    }

    #[test]
    fn truncated_and_foreign_bytes_are_errors() {
        assert!(decode_error(b"").contains("truncated header"));
        assert!(decode_error(&V2_COOKIE.to_be_bytes()).contains("truncated header"));
        assert!(decode_error(&[0u8; 40]).contains("not a V2 histogram"));
        let inner = compressed(&[1, 2, 3]);
        assert!(decode_error(&inner).contains("shorter than its stated 40"));
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
            let text = base64_encode(&bytes);
            let _ = decode(&text);
            let _ = decode_sparse(&text);
        }

        #[test]
        fn mutated_histograms_never_panic(at in 0usize..400, value in proptest::num::u8::ANY) {
            let mut h = LatencyHistogram::new();
            for v in [1u64, 5, 1000, 123_456] {
                h.record_u64(v);
            }
            let mut bytes = base64_decode(&encode(&h)).unwrap_or_default();
            let n = bytes.len();
            bytes[at % n] = value;
            let text = base64_encode(&bytes);
            let _ = decode(&text);
            let _ = decode_sparse(&text);
        }
    }
}
