//! Password prompting: when the server asks for a password and none was given,
//! pgbench prompts once (`Password: `; without a terminal on stderr, reading
//! stdin) and every client reuses the answer.

mod bench_common;

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use bench_common::{Scratch, rename};
use pgrush_cluster::{Auth, Cluster};
use pgrush_testkit::mask_numbers;
use pgrush_testkit::oracle::{self, Which};

fn run_with_stdin(mut cmd: Command, input: &str) -> (String, String, i32) {
    // Detach from any controlling terminal so the prompt falls back to stdin/stderr.
    // SAFETY: setsid is async-signal-safe and only affects the child.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(input.as_bytes());
    }
    let out = child.wait_with_output().expect("wait");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn prompts_once_and_clients_reuse_the_password() {
    let cluster = Cluster::builder()
        .auth(Auth::Password)
        .user("bob", "secret")
        .start()
        .expect("cluster");
    let dir = Scratch::new(&[("one.sql", "select 1;\n")]);
    let args = ["-n", "-t", "2", "-c", "3", "-j", "2", "-f", "one.sql"];
    let setup = |mut cmd: Command| {
        cmd.current_dir(&dir.path)
            .envs(cluster.env())
            .env("PGHOST", cluster.tcp_host())
            .env("PGUSER", "bob")
            .env("PGDATABASE", "postgres")
            .env_remove("PGPASSWORD")
            .env("PGPASSFILE", dir.path.join("no-such-pgpass"))
            .args(args);
        cmd
    };
    let ours = run_with_stdin(
        setup(Command::new(env!("CARGO_BIN_EXE_pgrush"))),
        "secret\n",
    );
    let theirs = run_with_stdin(
        setup(oracle::require(Which::Pgbench18).command()),
        "secret\n",
    );
    assert_eq!(ours.2, 0, "{}\n{}", ours.0, ours.1);
    assert_eq!(theirs.2, 0, "{}\n{}", theirs.0, theirs.1);
    assert!(ours.1.starts_with("Password: "), "{}", ours.1);
    assert_eq!(
        mask_numbers(&rename(&ours.0)),
        mask_numbers(&rename(&theirs.0))
    );
    assert_eq!(ours.1, theirs.1.replace("pgbench: ", "pgrush: "));
    // A wrong password fails like pgbench.
    let ours = run_with_stdin(setup(Command::new(env!("CARGO_BIN_EXE_pgrush"))), "wrong\n");
    let theirs = run_with_stdin(
        setup(oracle::require(Which::Pgbench18).command()),
        "wrong\n",
    );
    assert_eq!(ours.2, 1);
    assert_eq!(ours.2, theirs.2);
    assert_eq!(ours.1, theirs.1.replace("pgbench: ", "pgrush: "));
}

#[test]
fn initialization_prompts_once_like_pgbench() {
    let cluster = Cluster::builder()
        .auth(Auth::Password)
        .user("carol", "secret")
        .start()
        .expect("cluster");
    cluster.create_database("pgb").expect("create pgb");
    for db in ["rush0", "rush1"] {
        cluster.create_database(db).expect("create database");
    }
    let dir = Scratch::new(&[]);
    let setup = |mut cmd: Command, db: &str, jobs: &[&str]| {
        cmd.current_dir(&dir.path)
            .envs(cluster.env())
            .env("PGHOST", cluster.tcp_host())
            .env("PGUSER", "carol")
            .env("PGDATABASE", db)
            .env_remove("PGPASSWORD")
            .env("PGPASSFILE", dir.path.join("no-such-pgpass"))
            .args(["-i", "-q"])
            .args(jobs);
        cmd
    };
    let theirs = run_with_stdin(
        setup(oracle::require(Which::Pgbench18).command(), "pgb", &[]),
        "secret\n",
    );
    assert_eq!(theirs.2, 0, "{}", theirs.1);
    // One connection or several (parallel loading): one prompt, the answer reused.
    for (db, jobs) in [("rush0", &[][..]), ("rush1", &["-j", "2"][..])] {
        let ours = run_with_stdin(
            setup(Command::new(env!("CARGO_BIN_EXE_pgrush")), db, jobs),
            "secret\n",
        );
        assert_eq!(ours.2, 0, "{}", ours.1);
        assert_eq!(ours.1.matches("Password: ").count(), 1, "{}", ours.1);
        assert_eq!(
            mask_numbers(&ours.1),
            mask_numbers(&theirs.1.replace("pgbench: ", "pgrush: ")),
            "-i {jobs:?}"
        );
        assert_eq!(
            cluster
                .psql_db(db, "SELECT count(*) FROM pgbench_accounts")
                .expect("count"),
            "100000"
        );
    }
    // A wrong password fails like pgbench, with the initialization wording.
    let ours = run_with_stdin(
        setup(Command::new(env!("CARGO_BIN_EXE_pgrush")), "rush0", &[]),
        "wrong\n",
    );
    let theirs = run_with_stdin(
        setup(oracle::require(Which::Pgbench18).command(), "pgb", &[]),
        "wrong\n",
    );
    assert_eq!(ours.2, 1);
    assert_eq!(ours.2, theirs.2);
    assert_eq!(ours.1, theirs.1.replace("pgbench: ", "pgrush: "));
    assert!(
        ours.1
            .ends_with("could not create connection for initialization\n"),
        "{}",
        ours.1
    );
}
