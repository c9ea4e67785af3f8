//! The wall clock in Unix milliseconds, for timestamps, expiry and rate limits.

use std::time::{SystemTime, UNIX_EPOCH};

/// Unix milliseconds now.
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `2026-12-03T10:15:00.123Z`: Unix milliseconds as RFC 3339 UTC, written into `out` (into
/// a stack array first, then one copy: the call-records writer writes one per call).
pub fn write_rfc3339(out: &mut Vec<u8>, ms: u64) {
    let secs = ms / 1000;
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil(i64::try_from(days).unwrap_or(0));
    let y = u64::try_from(y).unwrap_or(0);
    let mut text = *b"0000-00-00T00:00:00.000Z";
    let mut put = |at: usize, mut n: u64, width: usize| {
        for slot in text[at..at + width].iter_mut().rev() {
            *slot = b'0' + u8::try_from(n % 10).unwrap_or(0);
            n /= 10;
        }
    };
    put(0, y, 4);
    put(5, m.into(), 2);
    put(8, d.into(), 2);
    put(11, rest / 3600, 2);
    put(14, rest % 3600 / 60, 2);
    put(17, rest % 60, 2);
    put(20, ms % 1000, 3);
    out.extend_from_slice(&text);
}

/// The last `width` decimal digits of `n`, zero-padded.
pub fn digits(out: &mut Vec<u8>, n: u64, width: u32) {
    for i in (0..width).rev() {
        out.push(b'0' + u8::try_from(n / 10u64.pow(i) % 10).unwrap_or(0));
    }
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
        let mut out = Vec::new();
        write_rfc3339(&mut out, 1_796_299_838_268);
        assert_eq!(String::from_utf8(out).unwrap(), "2026-12-03T12:10:38.268Z");
    }
}
