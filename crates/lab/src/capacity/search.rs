//! The search for the highest sustainable rate, as a state machine fed with each step's
//! outcome: double the rate while every step holds, halve it while none has, then bisect
//! (geometrically) between the highest rate that held and the lowest that did not, until
//! they are within the precision of each other.

/// Where the search stands.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Search {
    /// Every step so far held; the next rate is double the last.
    Climbing {
        /// The highest rate that held (`None` before the first step).
        good: Option<f64>,
        /// The rate to try next.
        next: f64,
    },
    /// Every step so far failed; the next rate is half the last.
    Descending {
        /// The lowest rate that failed.
        bad: f64,
        /// The rate to try next.
        next: f64,
    },
    /// Between a rate that held and one that did not.
    Bisecting {
        /// The highest rate that held.
        good: f64,
        /// The lowest rate that failed.
        bad: f64,
    },
    /// Finished.
    Done {
        /// The highest rate that held (`None`: none did, down to the lowest rate tried).
        good: Option<f64>,
        /// The lowest rate that failed (`None`: none did).
        bad: Option<f64>,
    },
}

/// The search's limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Stop when `(bad − good) / good` is at most this.
    pub precision: f64,
    /// Give up descending below this rate.
    pub lowest_rate: f64,
    /// Give up climbing above this rate.
    pub highest_rate: f64,
}

impl Search {
    /// A search starting at `rate`.
    pub fn start(rate: f64) -> Search {
        Search::Climbing {
            good: None,
            next: rate,
        }
    }

    /// The rate of the next step, `None` once done.
    pub fn next_rate(&self) -> Option<f64> {
        match *self {
            Search::Climbing { next, .. } | Search::Descending { next, .. } => Some(next),
            Search::Bisecting { good, bad } => Some((good * bad).sqrt()),
            Search::Done { .. } => None,
        }
    }

    /// The bracket so far: the highest rate that held and the lowest that failed.
    pub fn bracket(&self) -> (Option<f64>, Option<f64>) {
        match *self {
            Search::Climbing { good, .. } => (good, None),
            Search::Descending { bad, .. } => (None, Some(bad)),
            Search::Bisecting { good, bad } => (Some(good), Some(bad)),
            Search::Done { good, bad } => (good, bad),
        }
    }

    /// The search after the step at `rate` held (`held`) or not.
    pub fn after(self, rate: f64, held: bool, limits: &Limits) -> Search {
        let next = match (self, held) {
            (Search::Climbing { .. }, true) if rate * 2.0 > limits.highest_rate => Search::Done {
                good: Some(rate),
                bad: None,
            },
            (Search::Climbing { .. }, true) => Search::Climbing {
                good: Some(rate),
                next: rate * 2.0,
            },
            (
                Search::Climbing {
                    good: Some(good), ..
                },
                false,
            ) => Search::Bisecting { good, bad: rate },
            (Search::Climbing { good: None, .. } | Search::Descending { .. }, false) => {
                if rate / 2.0 < limits.lowest_rate {
                    return Search::Done {
                        good: None,
                        bad: Some(rate),
                    };
                }
                Search::Descending {
                    bad: rate,
                    next: rate / 2.0,
                }
            }
            (Search::Descending { bad, .. }, true) => Search::Bisecting { good: rate, bad },
            (Search::Bisecting { bad, .. }, true) => Search::Bisecting { good: rate, bad },
            (Search::Bisecting { good, .. }, false) => Search::Bisecting { good, bad: rate },
            (done @ Search::Done { .. }, _) => done,
        };
        match next {
            Search::Bisecting { good, bad } if (bad - good) / good <= limits.precision => {
                Search::Done {
                    good: Some(good),
                    bad: Some(bad),
                }
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        precision: 0.05,
        lowest_rate: 1.0,
        highest_rate: 1e9,
    };

    /// The rates a search tries against a server that sustains `capacity`, and its end.
    fn trace(start: f64, capacity: f64) -> (Vec<f64>, Search) {
        let mut search = Search::start(start);
        let mut rates = Vec::new();
        while let Some(rate) = search.next_rate() {
            rates.push(rate);
            search = search.after(rate, rate <= capacity, &LIMITS);
            assert!(rates.len() < 100, "{rates:?}");
        }
        (rates, search)
    }

    #[test]
    fn doubles_then_bisects_to_the_precision() {
        let (rates, end) = trace(100.0, 800.0);
        assert_eq!(rates[..4], [100.0, 200.0, 400.0, 800.0]);
        assert_eq!(rates[4], 1600.0);
        let Search::Done {
            good: Some(good),
            bad: Some(bad),
        } = end
        else {
            panic!("{end:?}");
        };
        assert!(good <= 800.0 && bad > 800.0, "{good} {bad}");
        assert!((bad - good) / good <= 0.05, "{good} {bad}");
    }

    #[test]
    fn halves_when_the_start_fails() {
        let (rates, end) = trace(1000.0, 300.0);
        assert_eq!(rates[..3], [1000.0, 500.0, 250.0]);
        let (good, bad) = end.bracket();
        assert!(good.unwrap() <= 300.0 && bad.unwrap() > 300.0, "{end:?}");
    }

    #[test]
    fn ends_without_a_good_rate_below_the_lowest() {
        let (rates, end) = trace(4.0, 0.5);
        assert_eq!(rates, [4.0, 2.0, 1.0]);
        assert_eq!(
            end,
            Search::Done {
                good: None,
                bad: Some(1.0)
            }
        );
    }

    #[test]
    fn ends_without_a_bad_rate_above_the_highest() {
        let limits = Limits {
            highest_rate: 1000.0,
            ..LIMITS
        };
        let search = Search::start(600.0).after(600.0, true, &limits);
        assert_eq!(
            search,
            Search::Done {
                good: Some(600.0),
                bad: None
            }
        );
    }
}
