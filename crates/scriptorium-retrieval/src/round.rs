//! Python's `round(x, 6)`: the nearest multiple of 10⁻⁶ to the *exact* binary value of
//! `x`, ties to even, converted back to the nearest `f64` (CPython `float.__round__`).
//!
//! Rankings sort on rounded scores, so two events whose scores differ in the 7th decimal
//! tie and fall back to path order exactly as in the reference; the rounding must be
//! exact, not `(x * 1e6).round() / 1e6`, whose product is itself rounded.

/// `round(x, 6)` as Python computes it.
pub(crate) fn round6(x: f64) -> f64 {
    const SCALE: u128 = 1_000_000;
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    let bits = x.abs().to_bits();
    let biased = (bits >> 52) & 0x7ff;
    let fraction = bits & ((1 << 52) - 1);
    // x = mantissa · 2^exponent exactly.
    let (mantissa, exponent) =
        if biased == 0 { (fraction, -1074i32) } else { (fraction | 1 << 52, biased as i32 - 1075) };
    if exponent >= 0 {
        return x; // an integer already
    }
    let shift = exponent.unsigned_abs();
    let product = u128::from(mantissa) * SCALE; // < 2^73
    let quotient = if shift >= 74 {
        0 // x · 10⁶ < 2^73 / 2^74 < ½
    } else {
        let quotient = product >> shift;
        let remainder = product & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        if remainder > half || (remainder == half && quotient % 2 == 1) { quotient + 1 } else { quotient }
    };
    let rounded = if quotient < 1 << 53 {
        // Both exact in f64, so one correctly rounded division gives the nearest double,
        // as Python's conversion of the decimal string does.
        quotient as f64 / SCALE as f64
    } else {
        format!("{:.6}", x.abs()).parse().unwrap_or(x.abs())
    };
    rounded.copysign(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_python_round() {
        // Values checked against CPython 3.11 `round(x, 6)`.
        assert_eq!(round6(7.4980434), 7.498043);
        assert_eq!(round6(0.0000005), 0.0); // 5e-7 is just below the tie in binary
        assert_eq!(round6(0.0000015), 0.000002); // just above the tie in binary
        assert_eq!(round6(2.675e-4), 0.000267);
        assert_eq!(round6(1.0000005), 1.000001);
        assert_eq!(round6(-0.1234565), -0.123456);
        assert_eq!(round6(123456.0), 123456.0);
        assert_eq!(round6(0.1 + 0.2), 0.3);
        assert_eq!(round6(f64::MIN_POSITIVE), 0.0);
    }

    #[test]
    fn exact_binary_ties_go_to_even() {
        // 2^-7 · k values whose seventh decimal is an exact 5 in binary: 0.0078125 = 1/128.
        assert_eq!(round6(0.0078125), 0.007812);
        assert_eq!(round6(0.0234375), 0.023438);
    }
}
