/**
 * The tests an experiment's arms are compared with (docs/decisions/058): a two-proportion z-test
 * for success rates, Welch's t-test for the creator margin per call. Pure functions of counts,
 * means and variances (computed in SQL), so they are tested on their own.
 */

/** The standard normal distribution function (Abramowitz & Stegun 26.2.17, error < 7.5e-8). */
export function normalCdf(x: number): number {
  const t = 1 / (1 + 0.2316419 * Math.abs(x));
  const d = 0.3989422804014327 * Math.exp((-x * x) / 2);
  const tail =
    d * t * (0.31938153 + t * (-0.356563782 + t * (1.781477937 + t * (-1.821255978 + t * 1.330274429))));
  return x >= 0 ? 1 - tail : tail;
}

function logGamma(x: number): number {
  const c = [
    76.18009172947146, -86.50532032941678, 24.01409824083091, -1.231739572450155, 0.1208650973866179e-2,
    -0.5395239384953e-5,
  ];
  let y = x;
  const tmp = x + 5.5 - (x + 0.5) * Math.log(x + 5.5);
  let ser = 1.000000000190015;
  for (const coefficient of c) ser += coefficient / ++y;
  return -tmp + Math.log((2.5066282746310007 * ser) / x);
}

/** Continued fraction of the incomplete beta function (Numerical Recipes' betacf). */
function betaFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a - 1 + m2) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + 1 + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const step = d * c;
    h *= step;
    if (Math.abs(step - 1) < 1e-12) break;
  }
  return h;
}

/** The regularized incomplete beta function I_x(a, b). */
function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  return x < (a + 1) / (a + b + 2)
    ? (front * betaFraction(a, b, x)) / a
    : 1 - (front * betaFraction(b, a, 1 - x)) / b;
}

/** Two-sided p-value of Student's t with `df` degrees of freedom. */
export function studentTwoSidedP(t: number, df: number): number {
  if (!Number.isFinite(t)) return 0;
  return incompleteBeta(df / (df + t * t), df / 2, 0.5);
}

/** The t with two-sided p = 0.05 (the 97.5th percentile) for `df`, by bisection. */
export function studentCritical95(df: number): number {
  let lo = 0;
  let hi = 1000;
  for (let i = 0; i < 100; i++) {
    const mid = (lo + hi) / 2;
    if (studentTwoSidedP(mid, df) > 0.05) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

export interface TestResult {
  difference: number;
  statistic: number;
  p_value: number;
  ci95: [number, number];
}

/** Two-proportion z-test of `s2/n2` (the arm) against `s1/n1` (the control). */
export function twoProportionZ(s1: number, n1: number, s2: number, n2: number): TestResult | null {
  if (n1 < 1 || n2 < 1) return null;
  const p1 = s1 / n1;
  const p2 = s2 / n2;
  const difference = p2 - p1;
  const pooled = (s1 + s2) / (n1 + n2);
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2));
  const statistic = se === 0 ? 0 : difference / se;
  const p_value = se === 0 ? 1 : 2 * (1 - normalCdf(Math.abs(statistic)));
  const seDiff = Math.sqrt((p1 * (1 - p1)) / n1 + (p2 * (1 - p2)) / n2);
  return { difference, statistic, p_value, ci95: [difference - 1.96 * seDiff, difference + 1.96 * seDiff] };
}

export interface Sample {
  n: number;
  mean: number;
  /** The sample variance (n − 1). */
  variance: number;
}

/** Welch's t-test of the arm's mean against the control's. */
export function welchT(control: Sample, arm: Sample): (TestResult & { df: number }) | null {
  if (control.n < 2 || arm.n < 2) return null;
  const difference = arm.mean - control.mean;
  const a = control.variance / control.n;
  const b = arm.variance / arm.n;
  const se = Math.sqrt(a + b);
  if (se === 0) {
    // Every call of both arms made the same margin: a difference is certain, none is none.
    return {
      difference,
      statistic: difference === 0 ? 0 : Math.sign(difference) * Number.MAX_VALUE,
      p_value: difference === 0 ? 1 : 0,
      ci95: [difference, difference],
      df: control.n + arm.n - 2,
    };
  }
  const df = (a + b) ** 2 / (a ** 2 / (control.n - 1) + b ** 2 / (arm.n - 1));
  const statistic = difference / se;
  const p_value = studentTwoSidedP(statistic, df);
  const critical = studentCritical95(df);
  return {
    difference,
    statistic,
    p_value,
    ci95: [difference - critical * se, difference + critical * se],
    df,
  };
}
