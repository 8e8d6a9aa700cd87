/**
 * The rates of the analytics (README "E-mail analytics"), as fractions 0..1 rounded to 4 decimals; 0 when
 * the base is 0. The base of open, click and complaint rates is `delivered`, or `sent` while no delivery
 * was reported (no provider webhook configured). Unique counts are used, so one person opening ten times
 * counts once, and automated opens and clicks never count.
 */
export interface RateInputs {
  sent: number;
  delivered: number;
  uniqueOpens: number;
  uniqueClicks: number;
  bounced: number;
  complained: number;
}

export interface Rates {
  openRate: number;
  clickThroughRate: number;
  bounceRate: number;
  complaintRate: number;
}

export function ratesOf(inputs: RateInputs): Rates {
  const base = inputs.delivered > 0 ? inputs.delivered : inputs.sent;
  return {
    openRate: ratio(inputs.uniqueOpens, base),
    clickThroughRate: ratio(inputs.uniqueClicks, base),
    bounceRate: ratio(inputs.bounced, inputs.sent),
    complaintRate: ratio(inputs.complained, base),
  };
}

function ratio(part: number, whole: number): number {
  return whole > 0 ? Math.round((part / whole) * 10_000) / 10_000 : 0;
}
