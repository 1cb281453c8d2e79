//! pgbench runs over GSSAPI encryption against a real KDC and a PostgreSQL 15
//! server (built with GSSAPI): select-only with the simple and the prepared
//! protocol, and reconnecting for every transaction (`-C`), each by pgbench 15
//! and by pgrush.

mod gss_common;

use gss_common::*;
use pgrush_cluster::Cluster;
use pgrush_testkit::krb::Kdc;
use pgrush_testkit::oracle::{self, Which};

#[test]
fn benchmark_over_gssapi_encryption() {
    let kdc = Kdc::start();
    kdc.add_user(USER, PASSWORD);
    kdc.kinit(USER, PASSWORD);
    let cluster = kerberos_cluster(&kdc);
    benchmark_over_encryption(&kdc, &cluster);
}

/// A short select-only run over GSSAPI encryption, with the simple and the
/// prepared protocol, and with a new connection per transaction: every
/// transaction completes, as with pgbench 15.
fn benchmark_over_encryption(kdc: &Kdc, cluster: &Cluster) {
    let home = tempfile::tempdir().expect("tempdir");
    let socket = format!(
        "host={} port={} user=postgres dbname=postgres",
        cluster.socket_dir().display(),
        cluster.port()
    );
    let setup = Setup {
        kdc,
        ccache: None,
        env: &[],
        script: "",
    };
    let init = run(
        oracle::require(Which::Pgbench15).command(),
        home.path(),
        &setup,
        &["-i", "-q", "-s", "1", &socket],
    );
    assert_eq!(init.code, 0, "pgbench -i: {}", init.stderr);
    let conninfo = conn(cluster, "gssencmode=require");
    // The last run reconnects for every transaction (-C).
    for (mode, reconnect) in [("simple", false), ("prepared", false), ("prepared", true)] {
        let (per_client, total) = if reconnect {
            ("10", "20/20")
        } else {
            ("200", "400/400")
        };
        let mut args = vec![
            "-n", "-S", "-c", "2", "-j", "2", "-t", per_client, "-M", mode,
        ];
        if reconnect {
            args.push("-C");
        }
        args.push(&conninfo);
        let theirs = run(
            oracle::require(Which::Pgbench15).command(),
            home.path(),
            &setup,
            &args,
        );
        let ours = run(pgrush(), home.path(), &setup, &args);
        for (who, out) in [("pgbench 15", &theirs), ("pgrush", &ours)] {
            assert_eq!(out.code, 0, "{who} -M {mode}: {}", out.stderr);
            assert!(
                out.stdout.contains(&format!(
                    "number of transactions actually processed: {total}"
                )),
                "{who} -M {mode}: {}",
                out.stdout
            );
        }
        assert_eq!(ours.stderr, theirs.stderr, "-M {mode}");
    }
}
