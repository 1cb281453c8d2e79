//! Keying and think times of the TPC-C-like workload (`--tpcc-think[=SCALE]`): each
//! transaction's script is preceded by its constant keying time (§5.2.5.2) and followed
//! by its think time (§5.2.5.4), a negative exponential draw with the transaction's mean
//! (§5.2.5.7), truncated at ten times the mean, both as `\sleep` commands and both
//! multiplied by SCALE. The think time is drawn with `random_exponential` from the
//! client's generator, after the transaction's own inputs, so `--random-seed` gives the
//! same inputs with or without think times and reproduces the think times.

/// The keying times in seconds (§5.2.5.2), in [`crate::TPCC_SCRIPTS`]' order: New-Order,
/// Payment, Order-Status, Delivery, Stock-Level.
pub const TPCC_KEYING_S: [f64; 5] = [18.0, 3.0, 2.0, 2.0, 2.0];

/// The mean think times in seconds (§5.2.5.7), in [`crate::TPCC_SCRIPTS`]' order.
pub const TPCC_THINK_MEAN_S: [f64; 5] = [12.0, 12.0, 10.0, 5.0, 5.0];

/// The largest SCALE accepted: the keying and think times stay within a few days, far
/// from the script language's integer limits.
pub const TPCC_THINK_MAX_SCALE: f64 = 1000.0;

/// The think time is truncated at this many times its mean (§5.2.5.4).
const TRUNCATION: u32 = 10;

/// The text of the `index`-th TPC-C-like script (New-Order = 0, ... Stock-Level = 4)
/// `text` with its keying time before and its think time after, both times `scale`
/// (positive, at most [`TPCC_THINK_MAX_SCALE`]).
///
/// `random_exponential(0, n - 1, 10)` returns `floor(n × E / 10)` for an exponential
/// draw E with mean 1, redrawn in effect above 10 (the function's cut): with `n` ten
/// times the mean in microseconds, that is the spec's think time in whole microseconds,
/// truncated at ten times its mean.
pub fn with_keying_and_think(index: usize, text: &str, scale: f64) -> String {
    let keying_us = micros(TPCC_KEYING_S[index] * scale);
    let span_us = micros(TPCC_THINK_MEAN_S[index] * scale * f64::from(TRUNCATION)).max(1);
    format!(
        "\\sleep {keying_us} us\n{text}\
\\set tpcc_think_us random_exponential(0, {last}, {TRUNCATION})\n\
\\sleep :tpcc_think_us us\n",
        last = span_us - 1,
    )
}

/// `seconds` in whole microseconds, rounded.
fn micros(seconds: f64) -> i64 {
    (seconds * 1e6).round() as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{TPCC_CLIENT_SCRIPTS, TPCC_SCRIPTS};

    #[test]
    fn every_script_gets_its_keying_and_think_time() {
        for scripts in [&TPCC_SCRIPTS, &TPCC_CLIENT_SCRIPTS] {
            for (i, b) in scripts.iter().enumerate() {
                let text = with_keying_and_think(i, b.text, 0.001);
                crate::load_script(b.desc, &text, 1).unwrap();
                let keying = format!("\\sleep {} us\n", TPCC_KEYING_S[i] as i64 * 1000);
                assert!(text.starts_with(&keying), "{text}");
                let last = TPCC_THINK_MEAN_S[i] as i64 * 10_000 - 1;
                let draw = format!("random_exponential(0, {last}, 10)\n");
                assert!(text.contains(&draw), "{text}");
                assert!(text.ends_with("\\sleep :tpcc_think_us us\n"));
            }
        }
    }

    #[test]
    fn tiny_scales_sleep_nothing() {
        let text = with_keying_and_think(3, "SELECT 1;\n", 1e-9);
        assert!(text.starts_with("\\sleep 0 us\nSELECT 1;\n"));
        assert!(text.contains("random_exponential(0, 0, 10)"));
        crate::load_script("x", &text, 1).unwrap();
    }

    #[test]
    fn the_draw_has_the_spec_mean_truncated_at_ten_means() {
        let mut rng = crate::Prng::from_seed(42);
        let n = 200_000;
        let mean_us = 12_000_000_i64;
        let draws: Vec<i64> = (0..n)
            .map(|_| rng.exponential(0, mean_us * 10 - 1, 10.0))
            .collect();
        assert!(draws.iter().all(|&d| (0..mean_us * 10).contains(&d)));
        let mean = draws.iter().sum::<i64>() as f64 / f64::from(n);
        assert!((mean / mean_us as f64 - 1.0).abs() < 0.01, "{mean}");
    }
}
