//! Sharded runs started by real launchers, each against a throwaway cluster, then merged
//! with `pgrush merge`: `srun -n 4` on a private single-node Slurm, the Slurm batch
//! script of `deploy/slurm`, Open MPI's `mpirun -np 4` and MPICH's `mpiexec.hydra -n 4`
//! (PMI) through `deploy/mpi/run.sh`, four shards in network namespaces reaching the
//! server over veth, and the Kubernetes Indexed Job of `deploy/kubernetes` run under the
//! environment Kubernetes gives its pods.

mod shard_launch_common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use pgrush_testkit::{self as testkit, mpi, netns, slurm};
use serde_json::Value;
use shard_launch_common::{
    CLIENTS, SHARDS, check_merged, check_merged_document, check_merged_report, check_shards,
    merge_and_check, merged_sources, pgrush, pgrush_bin, read_document, shard_args, shard_files,
    write_script,
};

/// A database of its own on the shared cluster (the tests of one process share it).
fn database(name: &str) -> Vec<(String, String)> {
    let cluster = testkit::shared();
    cluster
        .create_database(name)
        .unwrap_or_else(|e| panic!("create database {name}: {e}"));
    let mut env = cluster.env();
    env.retain(|(k, _)| k != "PGDATABASE");
    env.push(("PGDATABASE".into(), name.into()));
    env
}

/// Starts every command at once (as a launcher would), then waits for all; each must
/// succeed (`what` and its position name a failure).
fn run_together(commands: Vec<Command>, what: &str) {
    let children: Vec<Child> = commands
        .into_iter()
        .map(|mut cmd| {
            cmd.stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| panic!("start a {what}: {e}"))
        })
        .collect();
    for (i, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().expect("wait for a child");
        assert!(
            out.status.success(),
            "{what} {i}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("pgrush-launch-")
        .tempdir()
        .expect("tempdir")
}

/// What a launcher test on the shared cluster starts from: its database's connection
/// environment, and a directory holding the workload, where the shards write.
struct Launch {
    env: Vec<(String, String)>,
    tmp: tempfile::TempDir,
    script: PathBuf,
}

impl Launch {
    fn new(db: &str) -> Launch {
        let tmp = temp_dir();
        let script = write_script(tmp.path());
        Launch {
            env: database(db),
            tmp,
            script,
        }
    }

    fn dir(&self) -> &Path {
        self.tmp.path()
    }

    /// Each shard's options ([`shard_args`]).
    fn args(&self) -> Vec<String> {
        shard_args(self.dir(), &self.script)
    }
}

#[test]
fn srun_starts_four_shards_that_merge_into_one_run() {
    let launch = Launch::new("launch_srun");
    let dir = launch.dir();
    let slurm = slurm::Slurm::start();
    let mut srun = slurm.srun(SHARDS);
    testkit::clear_pg_env(&mut srun);
    srun.arg(pgrush_bin())
        .args(launch.args())
        .envs(launch.env.clone())
        .current_dir(dir);
    let out = testkit::run(&mut srun);
    assert_eq!(
        out.code,
        0,
        "srun: {}{}\n{}",
        out.stdout,
        out.stderr,
        slurm.log()
    );
    let files = shard_files(dir);
    let shards = check_shards(&files, "slurm");
    let (_, merged) = merge_and_check(dir, &files, &shards);
    assert_eq!(merged_sources(&merged), ["slurm"; SHARDS as usize]);
}

#[test]
fn the_slurm_batch_script_runs_the_shards_then_merges_them() {
    let launch = Launch::new("launch_sbatch");
    let dir = launch.dir();
    let slurm = slurm::Slurm::start();
    let mut sbatch = slurm.sbatch();
    testkit::clear_pg_env(&mut sbatch);
    sbatch
        .arg(format!("--output={}", dir.join("job.out").display()))
        .arg(pgrush_testkit::repo_root().join("deploy/slurm/pgrush.sbatch"))
        .args(launch.args())
        .envs(launch.env.clone())
        .env("PGRUSH", pgrush_bin())
        .env("PGRUSH_OUT", dir)
        .current_dir(dir);
    let out = testkit::run(&mut sbatch);
    let job_out = std::fs::read_to_string(dir.join("job.out")).unwrap_or_default();
    assert_eq!(
        out.code,
        0,
        "sbatch: {}{}\n{job_out}\n{}",
        out.stdout,
        out.stderr,
        slurm.log()
    );
    let shards = check_shards(&shard_files(dir), "slurm");
    // The script's own merge: the report in merged.txt and in the job's output (where
    // the merge's standard error may come between its lines), the shards' block in the
    // job's output, the document in merged.json.
    let report = std::fs::read_to_string(dir.join("merged.txt")).expect("merged.txt");
    check_merged_report(&report, &shards);
    check_merged_report(&job_out, &shards);
    assert!(
        job_out.contains("merged from 4 shards (benchmark "),
        "{job_out}"
    );
    check_merged_document(&read_document(&dir.join("merged.json")), &shards);
}

/// Runs `deploy/mpi/run.sh 4` with the launcher `mpirun` and its options `args` (and
/// `env`), then checks the shards (source `mpi`) and the script's merge.
fn run_mpi_script(db: &str, mpirun: &str, args: &str, env: &[(&str, &str)]) {
    let launch = Launch::new(db);
    let dir = launch.dir();
    let mut run = Command::new(pgrush_testkit::repo_root().join("deploy/mpi/run.sh"));
    testkit::clear_pg_env(&mut run);
    testkit::clear_launcher_env(&mut run);
    run.arg(SHARDS.to_string())
        .args(launch.args())
        .envs(launch.env.clone())
        .envs(env.iter().copied())
        .env("MPIRUN", mpirun)
        .env("MPIRUN_ARGS", args)
        .env("PGRUSH", pgrush_bin())
        .env("PGRUSH_OUT", dir)
        .current_dir(dir);
    let out = testkit::run(&mut run);
    assert_eq!(
        out.code, 0,
        "run.sh with {mpirun}: {}{}",
        out.stdout, out.stderr
    );
    let files = shard_files(dir);
    let shards = check_shards(&files, "mpi");
    // The script's merge wrote the report; merging again gives the same report.
    let report = std::fs::read_to_string(dir.join("merged.txt")).expect("merged.txt");
    let (again, merged) = merge_and_check(dir, &files, &shards);
    assert_eq!(report, again.stdout);
    assert_eq!(merged_sources(&merged), ["mpi"; SHARDS as usize]);
}

#[test]
fn open_mpi_starts_four_shards_through_the_deploy_script() {
    run_mpi_script(
        "launch_open_mpi",
        mpi::open_mpi_launcher(),
        &mpi::LOCAL_ARGS.join(" "),
        &mpi::ROOT_ENV,
    );
}

#[test]
fn mpich_hydra_starts_four_shards_through_pmi_and_the_deploy_script() {
    run_mpi_script("launch_hydra", mpi::HYDRA_LAUNCHER, "", &[]);
}

#[test]
fn shards_in_network_namespaces_reach_the_server_over_veth() {
    let hosts = netns::Hosts::create(SHARDS as usize);
    let cluster = pgrush_cluster::Cluster::builder()
        .setting("listen_addresses", hosts.listen_addresses())
        .hba([hosts.hba_line("trust")])
        .setting("log_connections", "on")
        .start()
        .unwrap_or_else(|e| panic!("start a cluster listening on the veth addresses: {e}"));
    cluster
        .create_database("launch_netns")
        .unwrap_or_else(|e| panic!("create database: {e}"));
    let tmp = temp_dir();
    let dir = tmp.path();
    let script = write_script(dir);
    let shards: Vec<Command> = hosts
        .hosts()
        .iter()
        .enumerate()
        .map(|(i, host)| {
            let mut cmd = host.command(pgrush_bin());
            testkit::clear_pg_env(&mut cmd);
            testkit::clear_launcher_env(&mut cmd);
            cmd.arg("--shard")
                .arg(format!("{i}/{SHARDS}"))
                .args(shard_args(dir, &script))
                .args(["-h", &host.gateway().to_string()])
                .args(["-p", &cluster.port().to_string()])
                .args(["-U", cluster.superuser(), "launch_netns"])
                .current_dir(dir);
            cmd
        })
        .collect();
    run_together(shards, "shard");
    let files = shard_files(dir);
    let shards = check_shards(&files, "option");
    let names: Vec<Option<String>> = shards.iter().map(|d| d.client.hostname.clone()).collect();
    let expected: Vec<Option<String>> = hosts
        .hosts()
        .iter()
        .map(|h| Some(h.host_name().to_string()))
        .collect();
    assert_eq!(names, expected);
    // Every shard's clients came from its namespace's address, over its veth pair.
    let log = cluster.log_contents();
    for host in hosts.hosts() {
        let received = format!("connection received: host={} ", host.address());
        assert!(
            log.contains(&received),
            "{received:?} not in the server log:\n{log}"
        );
    }
    let (out, merged) = merge_and_check(dir, &files, &shards);
    let block = merged.merged.as_ref().expect("merged block");
    let merged_hosts: BTreeSet<Option<String>> =
        block.shards.iter().map(|s| s.host.clone()).collect();
    assert_eq!(merged_hosts.len(), SHARDS as usize, "{merged_hosts:?}");
    for host in hosts.hosts() {
        assert!(
            out.stderr.contains(&format!("host {},", host.host_name())),
            "{}",
            out.stderr
        );
    }
}

/// A YAML file of `deploy/kubernetes`, as JSON values.
fn manifest(name: &str) -> Value {
    let path = pgrush_testkit::repo_root()
        .join("deploy/kubernetes")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The first container of a Job's pod template.
fn container(job: &Value) -> &Value {
    &job["spec"]["template"]["spec"]["containers"][0]
}

/// The value of the option `name` in `args` (the next argument).
fn option_value<'a>(args: &'a [String], name: &str) -> &'a str {
    let at = args
        .iter()
        .position(|a| a == name)
        .unwrap_or_else(|| panic!("no {name} in {args:?}"));
    &args[at + 1]
}

/// A container's command line with its image paths made local: `/pgrush` becomes the
/// binary under test and the results volume's mount path `results`.
fn local_command_line(container: &Value, results: &Path) -> Vec<String> {
    let mount = container["volumeMounts"][0]["mountPath"]
        .as_str()
        .expect("a volume mount");
    let command = container["command"].as_array().expect("command");
    let args = container["args"].as_array().expect("args");
    assert_eq!(command.len(), 1, "{command:?}");
    assert_eq!(
        command[0], "/pgrush",
        "the image's binary (deploy/kubernetes/Containerfile)"
    );
    args.iter()
        .map(|a| {
            let a = a.as_str().expect("a string argument");
            a.replacen(mount, &results.display().to_string(), 1)
        })
        .collect()
}

/// The environment a container sets: plain values, and the Secret's keys mapped by
/// `secret` (key to value).
fn container_env(container: &Value, secret: &dyn Fn(&str) -> String) -> Vec<(String, String)> {
    let list = container["env"].as_array().expect("env");
    list.iter()
        .map(|var| {
            let name = var["name"].as_str().expect("a name").to_string();
            let value = match var["value"].as_str() {
                Some(value) => value.to_string(),
                None => {
                    let key = var["valueFrom"]["secretKeyRef"]["key"]
                        .as_str()
                        .expect("a secret key");
                    secret(key)
                }
            };
            (name, value)
        })
        .collect()
}

#[test]
fn the_kubernetes_indexed_job_runs_its_pods_as_shards_then_the_merge_job_merges_them() {
    let job = manifest("job.yaml");
    assert_eq!(job["kind"], "Job");
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    let completions = spec["completions"].as_u64().expect("completions");
    assert_eq!(
        spec["parallelism"].as_u64(),
        Some(completions),
        "all shards run at once"
    );
    let pod = container(&job);
    let cluster = testkit::shared();
    cluster
        .create_database("launch_k8s")
        .unwrap_or_else(|e| panic!("create database: {e}"));
    let secret = |key: &str| match key {
        "host" => cluster.tcp_host().to_string(),
        "port" => cluster.port().to_string(),
        "user" => cluster.superuser().to_string(),
        "password" => String::new(),
        "dbname" => "launch_k8s".to_string(),
        other => panic!("the test has no value for the secret's key {other:?}"),
    };
    let env = container_env(pod, &secret);
    let shards_env = env
        .iter()
        .find(|(k, _)| k == "PGRUSH_SHARDS")
        .expect("PGRUSH_SHARDS");
    assert_eq!(
        shards_env.1,
        completions.to_string(),
        "PGRUSH_SHARDS = completions"
    );
    assert_eq!(
        completions,
        u64::from(SHARDS),
        "the checks below expect {SHARDS} shards"
    );
    let tmp = temp_dir();
    let dir = tmp.path();
    let mut args = local_command_line(pod, dir);
    assert_eq!(
        option_value(&args, "--json"),
        format!("{}/run.shard{{shard}}.json", dir.display())
    );
    // The manifest's workload is the default builtin: its tables first.
    let init = testkit::run(pgrush().args(["-i", "-s", "1", "-q"]).envs(env.clone()));
    assert_eq!(init.code, 0, "pgrush -i: {}", init.stderr);
    // Shorter and smaller than the manifest's run, else as the pods run it.
    for (name, value) in [("-T", "3"), ("-c", &CLIENTS.to_string()[..]), ("-j", "1")] {
        let at = args.iter().position(|a| a == name).expect("the option");
        args[at + 1] = value.to_string();
    }
    let pods: Vec<Command> = (0..completions)
        .map(|index| {
            let mut cmd = pgrush();
            cmd.args(&args)
                .envs(env.clone())
                .env("JOB_COMPLETION_INDEX", index.to_string())
                .current_dir(dir);
            cmd
        })
        .collect();
    run_together(pods, "pod");
    let files = shard_files(dir);
    let shards = check_shards(&files, "kubernetes");
    // The merge Job's command, on the same volume.
    let merge_job = manifest("merge-job.yaml");
    let merge_args = local_command_line(container(&merge_job), dir);
    let listed: Vec<PathBuf> = merge_args
        .iter()
        .filter(|a| a.ends_with(".json") && !a.ends_with("merged.json"))
        .map(PathBuf::from)
        .collect();
    assert_eq!(listed, files, "the merge Job lists every shard of the Job");
    let out = testkit::run(pgrush().args(&merge_args).current_dir(dir));
    assert_eq!(out.code, 0, "merge job: {}", out.stderr);
    let merged = read_document(&PathBuf::from(option_value(&merge_args, "--json")));
    check_merged(&out, &merged, &shards);
    assert_eq!(merged_sources(&merged), ["kubernetes"; SHARDS as usize]);
}

#[test]
fn the_container_image_holds_the_static_binary_at_the_path_the_jobs_run() {
    let root = pgrush_testkit::repo_root();
    let containerfile = std::fs::read_to_string(root.join("deploy/kubernetes/Containerfile"))
        .expect("deploy/kubernetes/Containerfile");
    let build =
        std::fs::read_to_string(root.join("scripts/build-static")).expect("scripts/build-static");
    // Where scripts/build-static puts the release binary: $TARGET_DIR/$TARGET/$PROFILE_DIR/pgrush
    // with the default target dir (target) and profile (release).
    let variable = |name: &str| -> String {
        build
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}=")))
            .unwrap_or_else(|| panic!("scripts/build-static sets no {name}"))
            .to_string()
    };
    assert_eq!(
        variable("BINARY"),
        "$TARGET_DIR/$TARGET/$PROFILE_DIR/pgrush"
    );
    assert_eq!(variable("TARGET_DIR"), "${CARGO_TARGET_DIR:-$ROOT/target}");
    let static_binary = format!(
        "target/{}/{}/pgrush",
        variable("TARGET"),
        variable("PROFILE_DIR")
    );
    let copy: Vec<&str> = containerfile
        .lines()
        .find(|l| l.starts_with("COPY "))
        .expect("a COPY line")
        .split_whitespace()
        .collect();
    assert_eq!(
        copy[1], static_binary,
        "the COPY source is build-static's binary"
    );
    let entry = containerfile
        .lines()
        .find_map(|l| l.strip_prefix("ENTRYPOINT "))
        .expect("an ENTRYPOINT");
    let entry: Vec<String> = serde_json::from_str(entry).expect("ENTRYPOINT in exec form");
    assert_eq!(entry, [copy[2]], "the entry point is the copied binary");
    for job in ["job.yaml", "merge-job.yaml"] {
        let doc = manifest(job);
        assert_eq!(
            container(&doc)["command"][0],
            copy[2],
            "{job} runs the image's binary"
        );
    }
    let base = containerfile
        .lines()
        .find(|l| l.starts_with("FROM "))
        .expect("FROM");
    assert!(
        base == "FROM scratch" || base.starts_with("FROM gcr.io/distroless/static"),
        "a base with no libc for a static binary: {base}"
    );
}
