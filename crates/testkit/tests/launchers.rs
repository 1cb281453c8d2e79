//! The launcher helpers work on this machine: a private Slurm runs `srun -n 4`, `mpirun
//! -np 4` and `mpiexec.hydra -n 4` run four ranks, and network namespaces reach this machine over their veth
//! pairs under their own host names.

use std::collections::BTreeSet;
use std::net::TcpListener;

use pgrush_testkit::{mpi, netns, run, slurm};

/// The sorted values of one variable printed by each task, one per line.
fn printed_values(stdout: &str) -> Vec<u32> {
    let mut values: Vec<u32> = stdout
        .lines()
        .map(|line| line.trim().parse().expect("a number per line"))
        .collect();
    values.sort_unstable();
    values
}

#[test]
fn srun_gives_each_of_four_tasks_its_rank_and_the_task_count() {
    let slurm = slurm::Slurm::start();
    let out = run(slurm.srun(4).args(["printenv", "SLURM_PROCID"]));
    assert_eq!(out.code, 0, "{}\n{}", out.stderr, slurm.log());
    assert_eq!(printed_values(&out.stdout), [0, 1, 2, 3]);
    let out = run(slurm.srun(4).args(["printenv", "SLURM_NTASKS"]));
    assert_eq!(printed_values(&out.stdout), [4, 4, 4, 4], "{}", out.stderr);
}

#[test]
fn mpirun_gives_each_of_four_processes_its_rank_and_the_world_size() {
    let out = run(mpi::mpirun(4).args(["printenv", "OMPI_COMM_WORLD_RANK"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(printed_values(&out.stdout), [0, 1, 2, 3]);
    let out = run(mpi::mpirun(4).args(["printenv", "OMPI_COMM_WORLD_SIZE"]));
    assert_eq!(printed_values(&out.stdout), [4, 4, 4, 4], "{}", out.stderr);
}

#[test]
fn hydra_gives_each_of_four_processes_its_pmi_rank_and_size() {
    let out = run(mpi::hydra(4).args(["printenv", "PMI_RANK"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(printed_values(&out.stdout), [0, 1, 2, 3]);
    let out = run(mpi::hydra(4).args(["printenv", "PMI_SIZE"]));
    assert_eq!(printed_values(&out.stdout), [4, 4, 4, 4], "{}", out.stderr);
}

#[test]
fn namespaces_have_their_own_host_names_and_reach_this_machine_over_veth() {
    let hosts = netns::Hosts::create(3);
    let names: BTreeSet<String> = hosts
        .hosts()
        .iter()
        .map(|host| {
            let out = run(&mut host.command("hostname"));
            assert_eq!(out.code, 0, "{}", out.stderr);
            out.stdout.trim().to_string()
        })
        .collect();
    let expected: BTreeSet<String> = hosts
        .hosts()
        .iter()
        .map(|h| h.host_name().to_string())
        .collect();
    assert_eq!(names, expected);
    assert_eq!(names.len(), 3);
    // A listener on one gateway sees the namespace's own address as the peer.
    let host = hosts.get(2);
    let listener = TcpListener::bind((host.gateway(), 0)).expect("bind on the gateway");
    let port = listener.local_addr().unwrap().port();
    let accept = std::thread::spawn(move || listener.accept().map(|(_, peer)| peer.ip()));
    let out = run(host
        .command("bash")
        .args(["-c", &format!("echo > /dev/tcp/{}/{port}", host.gateway())]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let peer = accept.join().unwrap().expect("accept");
    assert_eq!(peer, std::net::IpAddr::V4(host.address()));
    // Loopback inside is the namespace's own: this machine's port is not there.
    let out = run(host
        .command("bash")
        .args(["-c", &format!("echo > /dev/tcp/127.0.0.1/{port}")]));
    assert_ne!(out.code, 0);
    let namespaces: Vec<String> = hosts
        .hosts()
        .iter()
        .map(|h| h.namespace().to_string())
        .collect();
    drop(hosts);
    let list = run(std::process::Command::new("ip").args(["netns", "list"]));
    for ns in namespaces {
        assert!(!list.stdout.contains(&ns), "{ns} left behind");
    }
}
