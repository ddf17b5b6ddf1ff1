//! Axis scales, "nice" tick generation and the data-to-pixel mapping.
//!
//! Linear axes use steps of 1, 2 or 5 times a power of ten; log axes put their major ticks on
//! decades (every k-th decade when the range is wide) and fall back to 1-2-5 ticks when the data
//! span less than a decade. Tick values are computed as integer × power of ten, so labels are exact.

/// How data values map to positions along an axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Scale {
    /// Position proportional to the value.
    #[default]
    Linear,
    /// Position proportional to log10 of the value; non-positive values are not drawn.
    Log,
}

/// A tick label: `text`, followed by `10` raised to `exponent` when there is one.
///
/// `{ text: "2.5×", exponent: Some(-6) }` reads 2.5×10⁻⁶; `{ text: "", exponent: Some(3) }` reads
/// 10³; `{ text: "0.25", exponent: None }` reads 0.25.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TickLabel {
    /// The plain part of the label.
    pub text: String,
    /// The power of ten that follows `text`, if any.
    pub exponent: Option<i32>,
}

impl TickLabel {
    fn plain(text: String) -> Self {
        TickLabel { text, exponent: None }
    }

    /// The label as one line of plain text, with `^` before the exponent (`"2.5×10^-6"`).
    pub fn to_plain_string(&self) -> String {
        match self.exponent {
            None => self.text.clone(),
            Some(k) => format!("{}10^{k}", self.text),
        }
    }

    /// The label as drawn: the exponent in Unicode superscripts (`"2.5×10⁻⁶"`).
    pub(crate) fn to_display_string(&self) -> String {
        const SUPERSCRIPTS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
        let Some(k) = self.exponent else { return self.text.clone() };
        let mut s = format!("{}10", self.text);
        if k < 0 {
            s.push('⁻');
        }
        for d in k.unsigned_abs().to_string().bytes() {
            s.push(SUPERSCRIPTS[usize::from(d - b'0')]);
        }
        s
    }

    /// The approximate width in character cells (an exponent counts as its digits at 70%).
    pub(crate) fn char_width(&self) -> f64 {
        let text = self.text.chars().count() as f64;
        match self.exponent {
            None => text,
            Some(k) => text + 2.0 + 0.7 * k.to_string().len() as f64,
        }
    }
}

/// The ticks of one axis and its limits.
#[derive(Debug, Clone, PartialEq)]
pub struct Ticks {
    /// Lower limit of the axis.
    pub lo: f64,
    /// Upper limit of the axis.
    pub hi: f64,
    /// Major tick positions, increasing, all within `[lo, hi]`.
    pub major: Vec<f64>,
    /// One label per major tick.
    pub labels: Vec<TickLabel>,
    /// Unlabelled minor tick positions (log axes only).
    pub minor: Vec<f64>,
}

/// Relative tolerance when deciding on which side of a tick a value falls.
const EPS: f64 = 1e-9;
/// Largest magnitude handled; larger values are clamped so that spans stay finite.
const MAX_ABS: f64 = 1e300;
/// Log axes whose labelled decades are further apart than this get no minor ticks.
const MAX_MINOR_STRIDE: i64 = 4;

impl Scale {
    /// Whether `v` can be drawn on this scale (finite, and positive on a log scale).
    pub fn accepts(self, v: f64) -> bool {
        v.is_finite() && (self == Scale::Linear || v > 0.0)
    }

    /// Ticks for data spanning `[lo, hi]`: the limits are widened outwards to the nearest tick
    /// (decade on log axes). About `target` major ticks are placed. Degenerate (`lo == hi`),
    /// reversed or non-finite ranges are replaced by a sensible range.
    pub fn auto_ticks(self, lo: f64, hi: f64, target: usize) -> Ticks {
        match self {
            Scale::Linear => linear_ticks(lo, hi, target, true),
            Scale::Log => log_ticks(lo, hi, target, true),
        }
    }

    /// Ticks for an axis whose limits are exactly `[lo, hi]` (after the same repairs as
    /// [`Scale::auto_ticks`] for degenerate ranges).
    pub fn fixed_ticks(self, lo: f64, hi: f64, target: usize) -> Ticks {
        match self {
            Scale::Linear => linear_ticks(lo, hi, target, false),
            Scale::Log => log_ticks(lo, hi, target, false),
        }
    }
}

/// `n × 10^e`, correctly rounded for moderate `e` (division for negative exponents keeps 0.3 exact).
fn scaled(n: i64, e: i32) -> f64 {
    let n = n as f64;
    if e >= 0 {
        n * 10f64.powi(e)
    } else if e >= -300 {
        n / 10f64.powi(-e)
    } else {
        n / 1e300 / 10f64.powi(-e - 300)
    }
}

/// A tick step `m × 10^e` with `m` in {1, 2, 5}.
#[derive(Debug, Clone, Copy)]
struct Step {
    m: i64,
    e: i32,
}

impl Step {
    fn nice(span: f64, target: usize) -> Step {
        let raw = span / target.max(1) as f64;
        let mut e = raw.log10().floor() as i32;
        let norm = raw / scaled(1, e);
        let m = if norm <= 1.0 + EPS {
            1
        } else if norm <= 2.0 + EPS {
            2
        } else if norm <= 5.0 + EPS {
            5
        } else {
            e += 1;
            1
        };
        Step { m, e }
    }

    fn size(self) -> f64 {
        scaled(self.m, self.e)
    }

    fn value(self, i: i64) -> f64 {
        scaled(i * self.m, self.e)
    }

    /// Labels for ticks `i0..=i1`: fixed decimals for moderate values, else mantissa × 10^k.
    fn labels(self, i0: i64, i1: i64) -> Vec<TickLabel> {
        let max_abs = self.value(i0).abs().max(self.value(i1).abs());
        if max_abs < 1e6 && self.e >= -4 {
            let decimals = (-self.e).max(0) as usize;
            (i0..=i1)
                .map(|i| {
                    let s = format!("{:.*}", decimals, self.value(i));
                    let s = if s.starts_with('-') && s[1..].chars().all(|c| c == '0' || c == '.') {
                        s[1..].to_owned()
                    } else {
                        s
                    };
                    TickLabel::plain(s)
                })
                .collect()
        } else {
            (i0..=i1).map(|i| sci_label(i * self.m, self.e)).collect()
        }
    }
}

/// The label of `n × 10^e` in scientific form (`2.5×10^-6`, `10^9`, `0`).
fn sci_label(mut n: i64, mut e: i32) -> TickLabel {
    if n == 0 {
        return TickLabel::plain("0".to_owned());
    }
    while n % 10 == 0 {
        n /= 10;
        e += 1;
    }
    let sign = if n < 0 { "-" } else { "" };
    let digits = n.unsigned_abs().to_string();
    let exponent = e + digits.len() as i32 - 1;
    let text = if digits == "1" {
        sign.to_owned()
    } else if digits.len() == 1 {
        format!("{sign}{digits}×")
    } else {
        format!("{sign}{}.{}×", &digits[..1], &digits[1..])
    };
    TickLabel { text, exponent: Some(exponent) }
}

/// Replaces a degenerate, reversed or non-finite linear range by a usable one.
fn repair_linear(lo: f64, hi: f64) -> (f64, f64) {
    if !(lo.is_finite() && hi.is_finite()) || lo > hi {
        return (0.0, 1.0);
    }
    let (lo, hi) = (lo.clamp(-MAX_ABS, MAX_ABS), hi.clamp(-MAX_ABS, MAX_ABS));
    if hi - lo > 1e-12 * lo.abs().max(hi.abs()) {
        return (lo, hi);
    }
    let c = 0.5 * (lo + hi);
    let d = if c == 0.0 { 1.0 } else { 0.1 * c.abs() };
    (c - d, c + d)
}

/// Replaces a degenerate, reversed, non-positive or non-finite log range by a usable one.
fn repair_log(lo: f64, hi: f64) -> (f64, f64) {
    let ok = |v: f64| v.is_finite() && v > 0.0;
    if !(ok(lo) && ok(hi)) || lo > hi {
        return (1.0, 10.0);
    }
    let (lo, hi) = (lo.clamp(1.0 / MAX_ABS, MAX_ABS), hi.clamp(1.0 / MAX_ABS, MAX_ABS));
    if hi > lo * (1.0 + 1e-9) { (lo, hi) } else { (lo / 2.0, hi * 2.0) }
}

fn linear_ticks(lo: f64, hi: f64, target: usize, snap: bool) -> Ticks {
    let (lo, hi) = repair_linear(lo, hi);
    let step = Step::nice(hi - lo, target);
    let s = step.size();
    let (i0, i1) = if snap {
        ((lo / s + EPS).floor() as i64, (hi / s - EPS).ceil() as i64)
    } else {
        ((lo / s - EPS).ceil() as i64, (hi / s + EPS).floor() as i64)
    };
    let (lo, hi) = if snap { (step.value(i0), step.value(i1)) } else { (lo, hi) };
    Ticks {
        lo,
        hi,
        major: (i0..=i1).map(|i| step.value(i)).collect(),
        labels: step.labels(i0, i1),
        minor: Vec::new(),
    }
}

fn log_ticks(lo: f64, hi: f64, target: usize, snap: bool) -> Ticks {
    let (lo, hi) = repair_log(lo, hi);
    let (a, b) = (lo.log10(), hi.log10());
    if b - a < 1.0 - EPS {
        // Less than a decade: 1-2-5 ticks on the log axis, keeping the lower limit positive.
        let t = linear_ticks(lo, hi, target, snap);
        return if t.lo > 0.0 { t } else { linear_ticks(lo, hi, target, false) };
    }
    let (ka, kb) = if snap {
        ((a + EPS).floor() as i64, (b - EPS).ceil() as i64)
    } else {
        ((a - EPS).ceil() as i64, (b + EPS).floor() as i64)
    };
    // Wide ranges label every `stride`-th decade (multiples of `stride`, so 10^0 stays labelled).
    let stride = ((kb - ka) as f64 / target.max(1) as f64).ceil().max(1.0) as i64;
    let (lo, hi) = if snap { (scaled(1, ka as i32), scaled(1, kb as i32)) } else { (lo, hi) };
    let decades: Vec<i64> = (ka..=kb).filter(|k| k.rem_euclid(stride) == 0).collect();
    if decades.len() < 2 {
        // Fixed limits that hold a single decade (e.g. 2 to 25): 1-2-5 ticks read better.
        return linear_ticks(lo, hi, target, false);
    }
    let mut minor = Vec::new();
    let inside = |v: f64| v >= lo * (1.0 - EPS) && v <= hi * (1.0 + EPS);
    for k in lo.log10().floor() as i64 - 1..=hi.log10().ceil() as i64 {
        if stride > MAX_MINOR_STRIDE {
            break;
        } else if stride == 1 {
            minor.extend((2..=9).map(|m| scaled(m, k as i32)).filter(|&v| inside(v)));
        } else if k.rem_euclid(stride) != 0 && inside(scaled(1, k as i32)) {
            minor.push(scaled(1, k as i32));
        }
    }
    Ticks {
        lo,
        hi,
        major: decades.iter().map(|&k| scaled(1, k as i32)).collect(),
        labels: decades
            .iter()
            .map(|&k| TickLabel { text: String::new(), exponent: Some(k as i32) })
            .collect(),
        minor,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(t: &Ticks) -> Vec<String> {
        t.labels.iter().map(TickLabel::to_plain_string).collect()
    }

    #[test]
    fn labels_display_exponents_as_superscripts() {
        let t = Scale::Linear.auto_ticks(1.2e-7, 4.9e-7, 4);
        let shown: Vec<String> = t.labels.iter().map(TickLabel::to_display_string).collect();
        assert_eq!(shown, ["10⁻⁷", "2×10⁻⁷", "3×10⁻⁷", "4×10⁻⁷", "5×10⁻⁷"]);
        let t = Scale::Log.auto_ticks(1.0, 1e12, 6);
        assert_eq!(t.labels[6].to_display_string(), "10¹²");
        assert_eq!(Scale::Linear.auto_ticks(0.0, 1.0, 5).labels[1].to_display_string(), "0.2");
    }

    #[test]
    fn unit_interval() {
        let t = Scale::Linear.auto_ticks(0.0, 1.0, 5);
        assert_eq!((t.lo, t.hi), (0.0, 1.0));
        assert_eq!(labels(&t), ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]);
        assert_eq!(t.major[3], 0.6);
    }

    #[test]
    fn negative_range_snaps_outwards() {
        let t = Scale::Linear.auto_ticks(-3.7, 12.1, 5);
        assert_eq!((t.lo, t.hi), (-5.0, 15.0));
        assert_eq!(labels(&t), ["-5", "0", "5", "10", "15"]);
        let t = Scale::Linear.auto_ticks(-0.03, -0.011, 5);
        assert_eq!(labels(&t), ["-0.030", "-0.025", "-0.020", "-0.015", "-0.010"]);
    }

    #[test]
    fn tiny_and_huge_ranges_use_powers_of_ten() {
        let t = Scale::Linear.auto_ticks(1.2e-7, 4.9e-7, 4);
        assert_eq!(labels(&t), ["10^-7", "2×10^-7", "3×10^-7", "4×10^-7", "5×10^-7"]);
        let t = Scale::Linear.auto_ticks(0.0, 2.6e9, 5);
        assert_eq!(labels(&t), ["0", "10^9", "2×10^9", "3×10^9"]);
        let t = Scale::Linear.auto_ticks(0.0, 7.5e6, 5);
        assert_eq!(labels(&t)[1], "2×10^6");
        let t = Scale::Linear.auto_ticks(0.0, 12_345.0, 5);
        assert_eq!(labels(&t), ["0", "5000", "10000", "15000"]);
        let t = Scale::Linear.auto_ticks(-1e299, 1e299, 4);
        assert!(t.major.iter().all(|v| v.is_finite()));
        assert_eq!(t.labels[0].to_plain_string(), "-10^299");
    }

    #[test]
    fn fixed_range_keeps_limits() {
        let t = Scale::Linear.fixed_ticks(0.05, 0.95, 5);
        assert_eq!((t.lo, t.hi), (0.05, 0.95));
        assert_eq!(labels(&t), ["0.2", "0.4", "0.6", "0.8"]);
    }

    #[test]
    fn degenerate_and_invalid_ranges() {
        let t = Scale::Linear.auto_ticks(2.0, 2.0, 5);
        assert!(t.lo < 2.0 && t.hi > 2.0 && t.major.len() >= 2);
        let t = Scale::Linear.auto_ticks(0.0, 0.0, 5);
        assert_eq!((t.lo, t.hi), (-1.0, 1.0));
        let t = Scale::Linear.auto_ticks(f64::INFINITY, f64::NEG_INFINITY, 5);
        assert_eq!((t.lo, t.hi), (0.0, 1.0));
        let t = Scale::Linear.auto_ticks(f64::NAN, 3.0, 5);
        assert_eq!((t.lo, t.hi), (0.0, 1.0));
        let t = Scale::Log.auto_ticks(-1.0, 0.0, 5);
        assert_eq!((t.lo, t.hi), (1.0, 10.0));
        let t = Scale::Log.auto_ticks(1e-3, 1e-3, 5);
        assert!(t.lo > 0.0 && t.lo < 1e-3 && t.hi > 1e-3);
    }

    #[test]
    fn log_decades() {
        let t = Scale::Log.auto_ticks(3.0, 8e4, 6);
        assert_eq!((t.lo, t.hi), (1.0, 1e5));
        assert_eq!(labels(&t), ["10^0", "10^1", "10^2", "10^3", "10^4", "10^5"]);
        assert_eq!(t.major[2], 100.0);
        assert_eq!(t.minor.len(), 8 * 5);
        assert!(t.minor.contains(&3.0) && t.minor.contains(&0.0002e5));
        let t = Scale::Log.auto_ticks(2e-4, 0.5, 6);
        assert_eq!(labels(&t), ["10^-4", "10^-3", "10^-2", "10^-1", "10^0"]);
        assert_eq!(t.lo, 1e-4);
    }

    #[test]
    fn wide_log_range_strides_decades() {
        let t = Scale::Log.auto_ticks(1e-250, 1e250, 6);
        assert_eq!(labels(&t), ["10^-168", "10^-84", "10^0", "10^84", "10^168"]);
        assert!(t.lo <= 1e-250 && t.hi >= 1e250);
        assert!(t.minor.is_empty());
        let t = Scale::Log.auto_ticks(1.0, 1e12, 6);
        assert_eq!(labels(&t), ["10^0", "10^2", "10^4", "10^6", "10^8", "10^10", "10^12"]);
        assert_eq!(t.minor, [10.0, 1e3, 1e5, 1e7, 1e9, 1e11]);
    }

    #[test]
    fn log_range_within_a_decade_uses_linear_steps() {
        let t = Scale::Log.auto_ticks(2.0, 8.0, 5);
        assert_eq!(labels(&t), ["2", "4", "6", "8"]);
        let t = Scale::Log.fixed_ticks(2.0, 25.0, 5);
        assert_eq!(labels(&t), ["5", "10", "15", "20", "25"]);
        let t = Scale::Log.auto_ticks(0.15, 0.9, 5);
        assert!(t.lo > 0.0);
        assert!(t.major.iter().all(|&v| v > 0.0));
    }
}
