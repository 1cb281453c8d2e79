//! The profile-guided release build (`pgo/`, `scripts/build-release`):
//! `pgo/downgrade-raw-profile` keeps every function and counter of a raw
//! profile and refuses what it cannot rewrite; the committed profile covers
//! the hot path; and the release build takes the profile, with no function of
//! the hot path left without it (when the compiler is the one that made it).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const RAW_MAGIC: u64 = 0xFF6C_7072_6F66_7281;
const IR_VARIANT: u64 = 1 << 56;

/// One function of a raw profile: name reference, hash, counters.
#[derive(Debug, Clone, PartialEq)]
struct Function {
    name_ref: u64,
    hash: u64,
    counters: Vec<u64>,
}

fn put(out: &mut Vec<u8>, words: &[u64]) {
    for w in words {
        out.extend_from_slice(&w.to_le_bytes());
    }
}

/// A version 10 raw profile as LLVM 19 and later write it: 16-word header,
/// binary ids, 64-byte records whose counter pointers are relative to each
/// record, counters, (empty) bitmap, names padded to 8 bytes.
fn raw_v10(functions: &[Function], names: &[u8], binary_ids: &[u8]) -> Vec<u8> {
    let num_counters: usize = functions.iter().map(|f| f.counters.len()).sum();
    // As in a real profile, the counters section lies before the data section
    // in memory: the header's delta is negative.
    let counters_delta: i64 = -0x1000;
    let mut out = Vec::new();
    put(
        &mut out,
        &[
            RAW_MAGIC,
            IR_VARIANT | 10,
            binary_ids.len() as u64,
            functions.len() as u64,
            0,
            num_counters as u64,
            0,
            0,
            0,
            names.len() as u64,
            counters_delta as u64,
            0,
            0x5555_0000,
            0,
            0,
            2,
        ],
    );
    out.extend_from_slice(binary_ids);
    let mut first = 0i64;
    for (i, f) in functions.iter().enumerate() {
        let relative = first * 8 + counters_delta - 64 * i as i64;
        put(
            &mut out,
            &[f.name_ref, f.hash, relative as u64, 0, 0x7000 + i as u64, 0],
        );
        out.extend_from_slice(&(f.counters.len() as u32).to_le_bytes());
        out.extend_from_slice(&[0; 6 + 4 + 2]); // value sites, bitmap bytes, padding
        first += f.counters.len() as i64;
    }
    for f in functions {
        put(&mut out, &f.counters);
    }
    out.extend_from_slice(names);
    out.resize(out.len() + (8 - names.len() % 8) % 8, 0);
    out
}

fn word(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

/// Reads a version 8 raw profile the way LLVM 14's reader does: 11-word
/// header, 48-byte records, each counter pointer less the header's delta,
/// which shrinks by one record per record. Returns (version, functions, names).
fn read_v8(bytes: &[u8]) -> (u64, Vec<Function>, Vec<u8>) {
    assert_eq!(word(bytes, 0), RAW_MAGIC);
    let version = word(bytes, 8);
    let binary_ids = word(bytes, 16) as usize;
    let num_data = word(bytes, 24) as usize;
    let pad_before = word(bytes, 32) as usize;
    let num_counters = word(bytes, 40) as usize;
    let pad_after = word(bytes, 48) as usize;
    let names_size = word(bytes, 56) as usize;
    let counters_delta = word(bytes, 64) as i64;
    assert_eq!(word(bytes, 80), 1, "value kinds of LLVM 14");
    let data_at = 88 + binary_ids;
    let counters_at = data_at + 48 * num_data + pad_before;
    let names_at = counters_at + 8 * num_counters + pad_after;
    assert_eq!(bytes.len(), names_at + names_size.next_multiple_of(8));
    let functions = (0..num_data)
        .map(|i| {
            let at = data_at + 48 * i;
            let offset = word(bytes, at + 16) as i64 - (counters_delta - 48 * i as i64);
            let n = u32::from_le_bytes(bytes[at + 40..at + 44].try_into().unwrap()) as usize;
            assert_eq!(&bytes[at + 44..at + 48], &[0; 4], "value sites");
            let start = counters_at + usize::try_from(offset).expect("offset >= 0");
            Function {
                name_ref: word(bytes, at),
                hash: word(bytes, at + 8),
                counters: (0..n).map(|k| word(bytes, start + 8 * k)).collect(),
            }
        })
        .collect();
    (
        version,
        functions,
        bytes[names_at..names_at + names_size].to_vec(),
    )
}

fn downgrade(input: &[u8], dir: &Path) -> (Output, PathBuf) {
    let (src, dst) = (dir.join("in.profraw"), dir.join("out.profraw"));
    fs::write(&src, input).unwrap();
    let out = Command::new(pgrush_testkit::repo_root().join("pgo/downgrade-raw-profile"))
        .args([&src, &dst])
        .output()
        .expect("run pgo/downgrade-raw-profile");
    (out, dst)
}

#[test]
fn downgraded_profile_keeps_every_function_and_counter() {
    let functions = vec![
        Function {
            name_ref: 11,
            hash: 0xAA,
            counters: vec![5, 0],
        },
        Function {
            name_ref: 22,
            hash: 0xBB,
            counters: vec![1_000_000],
        },
        Function {
            name_ref: 33,
            hash: 0xCC,
            counters: vec![7, 8, 9],
        },
    ];
    let names = b"\x03\x00compressed-or-not names";
    let dir = tempfile::tempdir().expect("temp dir");
    let (out, dst) = downgrade(&raw_v10(&functions, names, &[0xEE; 32]), dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let (version, read, read_names) = read_v8(&fs::read(dst).unwrap());
    assert_eq!(version, IR_VARIANT | 8, "version 8, IR variant kept");
    assert_eq!(read, functions);
    assert_eq!(read_names, names);
}

#[test]
fn downgrade_refuses_what_it_cannot_rewrite() {
    let one = [Function {
        name_ref: 1,
        hash: 2,
        counters: vec![3],
    }];
    let good = raw_v10(&one, b"name", &[]);
    let mut version_9 = good.clone();
    version_9[8] = 9;
    let mut bad_magic = good.clone();
    bad_magic[0] ^= 0xFF;
    let mut outside = good.clone();
    outside[128 + 16] = 0x40; // the counter pointer of the only record
    let cases: [(&str, &[u8], &str); 4] = [
        ("version", &version_9, "format version 9, not 10"),
        ("magic", &bad_magic, "bad magic"),
        ("truncated", &good[..good.len() - 16], "truncated"),
        ("outside", &outside, "record 0 points outside the counters"),
    ];
    for (name, input, says) in cases {
        let dir = tempfile::tempdir().expect("temp dir");
        let (out, dst) = downgrade(input, dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        assert!(stderr.contains(says), "{name}: {stderr}");
        assert!(!dst.exists(), "{name}: no output is written");
    }
}

/// The ends of the mangled names of the functions one select-only transaction
/// runs through (a lackey trace of the release build), up to the hash suffix
/// (`17h`), so that a closure inside one of them does not match. `Scheduler::run_ready`
/// and `Client::send_sql` (`#[inline(always)]`) are inlined into `run_thread` before the
/// instrumentation, so their counters are `run_thread`'s.
const HOT_PATH: [&str; 6] = [
    "6worker10run_thread17h",
    "18queue_bind_execute17h",
    "9record_tx17h",
    "10Connection9try_flush17h",
    "10Connection9read_some17h",
    "7backend10scan_plain17h",
];

#[test]
fn committed_profile_covers_the_hot_path() {
    let profile = fs::read(pgrush_testkit::repo_root().join("pgo/pgrush.profdata"))
        .expect("pgo/pgrush.profdata");
    assert_eq!(&profile[..8], b"\xfflprofi\x81", "an indexed profile");
    let text = String::from_utf8_lossy(&profile);
    for name in HOT_PATH {
        assert!(text.contains(name), "the profile has no {name}");
    }
    let trained_with =
        fs::read_to_string(pgrush_testkit::repo_root().join("pgo/trained-with")).unwrap();
    assert!(trained_with.starts_with("rustc "), "{trained_with}");
}

/// The warnings with which LLVM reports a function the profile does not fit.
const STALE: [&str; 2] = ["hash mismatch", "no profile data available for function"];

#[test]
fn release_build_takes_the_profile() {
    let root = pgrush_testkit::repo_root();
    // A target directory of its own: the one this test was built in may be locked by cargo.
    let out = Command::new(root.join("scripts/build-release"))
        .env("CARGO_TARGET_DIR", root.join("target/pgo-check"))
        // Report every function the profile misses, generic instantiations included.
        .env(
            "RUSTFLAGS",
            "-Cllvm-args=-pgo-warn-missing-function -Cllvm-args=-no-pgo-warn-mismatch-comdat-weak=false",
        )
        .output()
        .expect("run scripts/build-release");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "build-release: {}\n{stderr}",
        out.status
    );
    let stale: Vec<&str> = stderr
        .lines()
        .filter(|l| STALE.iter().any(|s| l.contains(s)))
        .collect();
    // Warnings at all show that the flags reached LLVM (training misses most of the code).
    assert!(
        !stale.is_empty(),
        "no warning from the profile's use:\n{stderr}"
    );
    let rustc = Command::new("rustc").arg("-V").output().expect("rustc -V");
    let trained_with = fs::read_to_string(root.join("pgo/trained-with")).unwrap();
    if String::from_utf8_lossy(&rustc.stdout) != trained_with {
        eprintln!("the profile was made with {trained_with}: not checking that it is current");
        return;
    }
    let hot: Vec<&&str> = stale
        .iter()
        .filter(|l| HOT_PATH.iter().any(|h| l.contains(h)))
        .collect();
    assert!(
        hot.is_empty(),
        "the profile is stale (pgo/train):\n{hot:#?}"
    );
}
