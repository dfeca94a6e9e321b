//! The proleptic Gregorian calendar on days since the Unix epoch: one conversion that
//! history's ISO times and the layers above (the writer runtime's record stamps) share.

/// The (year, month, day) of `days` since 1970-01-01, proleptic Gregorian (Howard Hinnant's algorithm).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    // Both stay in 1..=31 and 1..=12 by the algorithm, so the casts cannot truncate.
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}
