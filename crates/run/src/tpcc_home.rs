//! `--workload tpcc`: the home warehouses a run's clients take. A run of its own takes
//! all `W`; shard `i` of `n` takes the `i`-th of `n` disjoint ranges, as even as
//! possible (`i·W/n + 1` to `(i+1)·W/n`), so that shards never share a home warehouse.
//! The scripts read the range from two startup variables: a client's home is
//! `:w_first + :client_id % :w_count` (with `:client_id` global in a shard, the clients of
//! a shard still spread evenly over its range and wrap within it), and its Stock-Level
//! district `:client_id / :w_count % 10 + 1`. A run of its own has `w_first` 1 and
//! `w_count` W: the home `:client_id % :scale + 1` of every client, as before shards had
//! ranges.

use crate::failure::Failure;
use crate::shard::ShardIdentity;

/// The startup variable holding the first home warehouse.
pub const FIRST_VARIABLE: &str = "w_first";
/// The startup variable holding the number of home warehouses.
pub const COUNT_VARIABLE: &str = "w_count";

/// A range of home warehouses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HomeWarehouses {
    /// The first warehouse id (from 1).
    pub first: i64,
    /// How many, from `first` on (at least 1).
    pub count: i64,
}

impl HomeWarehouses {
    /// The home warehouses of a run (`shard`: `None` for a run of its own) on a database
    /// with `warehouses` warehouses; an error when there are fewer warehouses than shards
    /// (or none at all), whose hint names `prog`'s loading command.
    pub fn of(
        prog: &str,
        shard: Option<ShardIdentity>,
        warehouses: i64,
    ) -> Result<HomeWarehouses, Failure> {
        let (index, count) = shard.map_or((0, 1), |s| (i64::from(s.index), i64::from(s.count)));
        if warehouses < count {
            return Err(too_few(prog, shard, warehouses));
        }
        let start = index * warehouses / count;
        let end = (index + 1) * warehouses / count;
        Ok(HomeWarehouses {
            first: start + 1,
            count: end - start,
        })
    }

    /// The last warehouse id of the range.
    pub fn last(&self) -> i64 {
        self.first + self.count - 1
    }

    /// What a shard says about its range (`shard 1 of 2: home warehouses 3 to 5 of 5`).
    pub fn describe(&self, shard: ShardIdentity, warehouses: i64) -> String {
        format!(
            "shard {} of {}: home warehouses {} to {} of {warehouses}",
            shard.index,
            shard.count,
            self.first,
            self.last()
        )
    }
}

/// The failure of a database with fewer warehouses than shards.
fn too_few(prog: &str, shard: Option<ShardIdentity>, warehouses: i64) -> Failure {
    let load = format!("\"{prog} -i --workload tpcc -s WAREHOUSES\"");
    match shard {
        None => Failure::error("the warehouse table is empty: there is no home warehouse")
            .hint(format!("Load the TPC-C-like tables with {load}.")),
        Some(s) => Failure::error(format!(
            "{} shards need at least {} warehouses (each shard's clients take their own), but the database has {warehouses}",
            s.count, s.count
        ))
        .hint(format!("Load more warehouses ({load}) or run fewer shards.")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shard::identity::ShardSource;

    fn shard(index: u32, count: u32) -> Option<ShardIdentity> {
        Some(ShardIdentity {
            index,
            count,
            source: ShardSource::Option,
        })
    }

    fn range(h: HomeWarehouses) -> (i64, i64) {
        (h.first, h.last())
    }

    #[test]
    fn shards_split_the_warehouses_evenly_and_disjointly() {
        let alone = HomeWarehouses::of("pgrush", None, 7).unwrap();
        assert_eq!(alone, HomeWarehouses { first: 1, count: 7 });
        let five: Vec<(i64, i64)> = (0..2)
            .map(|i| range(HomeWarehouses::of("pgrush", shard(i, 2), 5).unwrap()))
            .collect();
        assert_eq!(five, [(1, 2), (3, 5)]);
        let ten: Vec<i64> = (0..3)
            .map(|i| HomeWarehouses::of("pgrush", shard(i, 3), 10).unwrap().count)
            .collect();
        assert_eq!(ten, [3, 3, 4]);
        for n in 1..=6u32 {
            for w in i64::from(n)..=13 {
                let mut next = 1;
                for i in 0..n {
                    let h = HomeWarehouses::of("pgrush", shard(i, n), w).unwrap();
                    assert_eq!(h.first, next, "{i}/{n} of {w}");
                    assert!(h.count == w / i64::from(n) || h.count == w / i64::from(n) + 1);
                    next = h.last() + 1;
                }
                assert_eq!(next, w + 1);
            }
        }
        let h = HomeWarehouses::of("pgrush", shard(1, 2), 5).unwrap();
        assert_eq!(
            h.describe(shard(1, 2).unwrap(), 5),
            "shard 1 of 2: home warehouses 3 to 5 of 5"
        );
    }

    /// The value the `\set NAME` of `script` gives with these variables.
    fn set_value(script: &pgrush_script::Script, name: &[u8], vars: &[(&str, i64)]) -> i64 {
        use pgrush_script::{CommandKind, EvalContext, Prng, Value, Variables};
        let expr = script
            .commands
            .iter()
            .find_map(|c| match &c.kind {
                CommandKind::Set { var, expr, .. } if &*var.name == name => Some(expr),
                _ => None,
            })
            .expect("\\set");
        let mut variables = Variables::new();
        for (n, v) in vars {
            variables.put_value("startup", n, Value::Int(*v)).unwrap();
        }
        let mut debug_out = Vec::new();
        let mut ctx = EvalContext {
            vars: &variables,
            rng: &mut Prng::from_seed(1),
            script: 0,
            command: 0,
            debug_out: &mut debug_out,
        };
        match expr.eval(&mut ctx).unwrap() {
            Value::Int(v) => v,
            other => panic!("{other:?}"),
        }
    }

    /// The five scripts' home warehouse and Stock-Level's district, as the run's
    /// variables give them: a run of its own keeps `:client_id % :scale + 1` and
    /// `:client_id / :scale % 10 + 1` (so its inputs stay those of a run before shards
    /// had ranges); a shard's clients (global ids) stay in its range, spread evenly.
    #[test]
    fn the_scripts_take_their_home_in_the_range() {
        let scripts: Vec<_> = pgrush_script::TPCC_SCRIPTS
            .iter()
            .map(|b| b.load(1).unwrap())
            .collect();
        let stock_level = &scripts[4];
        for w in [1i64, 2, 7] {
            let home = HomeWarehouses::of("pgrush", None, w).unwrap();
            for c in 0..40i64 {
                let vars = [
                    ("client_id", c),
                    ("scale", w),
                    (FIRST_VARIABLE, home.first),
                    (COUNT_VARIABLE, home.count),
                ];
                for script in &scripts {
                    assert_eq!(set_value(script, b"w_id", &vars), c % w + 1);
                }
                assert_eq!(set_value(stock_level, b"d_id", &vars), c / w % 10 + 1);
            }
        }
        let (w, clients) = (5i64, 7i64);
        for index in 0..2u32 {
            let home = HomeWarehouses::of("pgrush", shard(index, 2), w).unwrap();
            let mut per_warehouse = vec![0; w as usize + 1];
            let first_client = i64::from(index) * clients;
            for c in first_client..first_client + clients {
                let vars = [
                    ("client_id", c),
                    ("scale", w),
                    (FIRST_VARIABLE, home.first),
                    (COUNT_VARIABLE, home.count),
                ];
                let w_id = set_value(&scripts[0], b"w_id", &vars);
                assert!((home.first..=home.last()).contains(&w_id), "{c}: {w_id}");
                per_warehouse[w_id as usize] += 1;
            }
            let used: Vec<i64> = per_warehouse.into_iter().filter(|n| *n > 0).collect();
            assert_eq!(used.len() as i64, home.count, "shard {index}");
            assert!(used.iter().max().unwrap() - used.iter().min().unwrap() <= 1);
        }
    }

    #[test]
    fn more_shards_than_warehouses_is_an_error() {
        let failure = HomeWarehouses::of("pgrush", shard(0, 3), 2).unwrap_err();
        let mut text = Vec::new();
        failure.write_to("pgrush", "pgrush", &mut text);
        let text = String::from_utf8_lossy(&text);
        assert_eq!(
            text,
            "pgrush: error: 3 shards need at least 3 warehouses (each shard's clients take their own), but the database has 2\n\
             pgrush: hint: Load more warehouses (\"pgrush -i --workload tpcc -s WAREHOUSES\") or run fewer shards.\n"
        );
        assert_eq!(failure.status(), 1);
        assert!(HomeWarehouses::of("pgrush", None, 0).is_err());
        assert!(HomeWarehouses::of("pgrush", shard(2, 3), 3).is_ok());
    }
}
