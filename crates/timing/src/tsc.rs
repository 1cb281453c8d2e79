//! The CPU time-stamp counter as a clock: invariant-TSC detection (CPUID leaf
//! 0x80000007, EDX bit 8) and calibration against `CLOCK_MONOTONIC`.
//! Available on x86_64 only.

use crate::clock::{ClockSource, ClockUnavailable, monotonic_ns};

/// How long calibration watches the TSC against `CLOCK_MONOTONIC`.
const CALIBRATION_NS: i64 = 20_000_000;

/// True when the CPU advertises an invariant TSC (constant rate in every
/// P-, C- and T-state), the only kind worth using as a clock.
pub fn invariant_tsc() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::__cpuid;
        #[allow(unused_unsafe)]
        // SAFETY: CPUID exists on every x86_64 CPU; leaf 0x80000000 reports the
        // highest extended leaf, checked before leaf 0x80000007 is read.
        let max_ext = unsafe { __cpuid(0x8000_0000) }.eax;
        if max_ext < 0x8000_0007 {
            return false;
        }
        #[allow(unused_unsafe)]
        // SAFETY: as above; the leaf is within the supported range.
        let edx = unsafe { __cpuid(0x8000_0007) }.edx;
        edx & (1 << 8) != 0
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Reads the raw counter.
#[inline]
fn rdtsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        #[allow(unused_unsafe)]
        // SAFETY: RDTSC is available on every x86_64 CPU (callers check for an
        // invariant TSC before relying on its rate).
        unsafe {
            core::arch::x86_64::_rdtsc()
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

/// The TSC converted to nanoseconds with a calibrated fixed-point factor.
#[derive(Debug, Clone, Copy)]
pub struct TscClock {
    /// Counter value at the end of calibration (reading 0 ns).
    base: u64,
    /// Nanoseconds per tick, 32.32 fixed point.
    mult: u64,
}

impl TscClock {
    /// Checks for an invariant TSC and measures its rate against `CLOCK_MONOTONIC`
    /// over about 20 ms.
    pub fn calibrate() -> Result<TscClock, ClockUnavailable> {
        if !invariant_tsc() {
            return Err(ClockUnavailable::NoInvariantTsc);
        }
        let t0 = monotonic_ns();
        let c0 = rdtsc();
        let mut t1 = t0;
        while t1 - t0 < CALIBRATION_NS {
            t1 = monotonic_ns();
        }
        let c1 = rdtsc();
        let ticks = c1.wrapping_sub(c0);
        if ticks == 0 || ticks > i64::MAX as u64 {
            return Err(ClockUnavailable::Calibration);
        }
        let ns = (t1 - t0) as u128;
        let mult = (ns << 32) / u128::from(ticks);
        if mult == 0 || mult > u128::from(u64::MAX) {
            return Err(ClockUnavailable::Calibration);
        }
        Ok(TscClock {
            base: c1,
            mult: mult as u64,
        })
    }

    /// Nanoseconds per tick (the clock's resolution).
    pub fn ns_per_tick(&self) -> f64 {
        self.mult as f64 / 4_294_967_296.0
    }

    /// The counter's frequency in MHz.
    pub fn mhz(&self) -> f64 {
        1000.0 / self.ns_per_tick()
    }
}

impl ClockSource for TscClock {
    #[inline]
    fn now_ns(&mut self) -> i64 {
        let ticks = rdtsc().wrapping_sub(self.base) as i64;
        ((i128::from(ticks) * i128::from(self.mult)) >> 32) as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibrated_tsc_tracks_monotonic() {
        let Ok(mut tsc) = TscClock::calibrate() else {
            assert!(!invariant_tsc() || cfg!(not(target_arch = "x86_64")));
            return;
        };
        assert!(tsc.mhz() > 100.0 && tsc.mhz() < 10_000.0, "{}", tsc.mhz());
        let m0 = monotonic_ns();
        let a = tsc.now_ns();
        std::thread::sleep(std::time::Duration::from_millis(30));
        let b = tsc.now_ns();
        let m1 = monotonic_ns();
        let (tsc_ns, mono_ns) = ((b - a) as f64, (m1 - m0) as f64);
        assert!(
            (tsc_ns - mono_ns).abs() < mono_ns * 0.02,
            "{tsc_ns} vs {mono_ns}"
        );
    }
}
