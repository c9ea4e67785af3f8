//! The wall clock in Unix milliseconds, for timestamps, expiry and rate limits.

use std::time::{SystemTime, UNIX_EPOCH};

/// Unix milliseconds now.
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `2026-12-03T10:15:00.123Z`: Unix milliseconds as RFC 3339 UTC, written into `out`. The
/// call-records writer writes one per call, most in the same second as the one before: the
/// date and time up to the second are kept per thread and only the milliseconds written anew.
pub fn write_rfc3339(out: &mut Vec<u8>, ms: u64) {
    thread_local! {
        /// The last second written, and its text up to the `.`.
        static LAST: std::cell::Cell<(u64, [u8; 19])> = const { std::cell::Cell::new((u64::MAX, [0; 19])) };
    }
    let secs = ms / 1000;
    let seconds = LAST.with(|last| {
        let (at, text) = last.get();
        if at == secs {
            return text;
        }
        let text = seconds_text(secs);
        last.set((secs, text));
        text
    });
    out.extend_from_slice(&seconds);
    let mut millis = *b".000Z";
    put_digits(&mut millis[1..4], ms % 1000);
    out.extend_from_slice(&millis);
}

/// `2026-12-03T10:15:00` of Unix seconds.
fn seconds_text(secs: u64) -> [u8; 19] {
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil(i64::try_from(days).unwrap_or(0));
    let mut text = *b"0000-00-00T00:00:00";
    put_digits(&mut text[0..4], u64::try_from(y).unwrap_or(0));
    put_digits(&mut text[5..7], m.into());
    put_digits(&mut text[8..10], d.into());
    put_digits(&mut text[11..13], rest / 3600);
    put_digits(&mut text[14..16], rest % 3600 / 60);
    put_digits(&mut text[17..19], rest % 60);
    text
}

/// The last `slots.len()` decimal digits of `n`, zero-padded, into `slots`.
fn put_digits(slots: &mut [u8], mut n: u64) {
    for slot in slots.iter_mut().rev() {
        *slot = b'0' + u8::try_from(n % 10).unwrap_or(0);
        n /= 10;
    }
}

/// The last `width` decimal digits of `n` (up to 20, all a `u64` has), zero-padded.
pub fn digits(out: &mut Vec<u8>, n: u64, width: usize) {
    let mut text = [0; 20];
    let text = &mut text[..width.min(20)];
    put_digits(text, n);
    out.extend_from_slice(text);
}

/// Days since 1970-01-01 → (year, month, day) (Howard Hinnant's `civil_from_days`).
pub fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let m = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_timestamps() {
        assert_eq!(civil(0), (1970, 1, 1));
        assert_eq!(civil(20_790), (2026, 12, 3));
        assert_eq!(civil(11_016), (2000, 2, 29));
        let stamp = |ms| {
            let mut out = Vec::new();
            write_rfc3339(&mut out, ms);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(stamp(1_796_299_838_268), "2026-12-03T12:10:38.268Z");
        // The same second again (its text kept), the next one, and back to an earlier one.
        assert_eq!(stamp(1_796_299_838_007), "2026-12-03T12:10:38.007Z");
        assert_eq!(stamp(1_796_299_839_000), "2026-12-03T12:10:39.000Z");
        assert_eq!(stamp(951_782_400_999), "2000-02-29T00:00:00.999Z");
    }
}
