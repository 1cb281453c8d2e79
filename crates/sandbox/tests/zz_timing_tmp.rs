#[test]
fn timing() {
    for _ in 0..3 {
        let t = std::time::Instant::now();
        let c = pgrush_sandbox::Cluster::start().unwrap();
        let t1 = t.elapsed();
        c.psql("select 1").unwrap();
        let t2 = t.elapsed();
        drop(c);
        eprintln!("start {:?} psql {:?} drop {:?}", t1, t2 - t1, t.elapsed() - t2);
    }
}
