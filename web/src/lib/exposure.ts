// Who can reach a self-managed endpoint, checked as the user types: the same rule as EndpointCreate's source_ranges
// validator (functions/domain/inference/endpoints.py), so the form says it at the field before any request; the API still
// judges (its 422 lands on the same field).

/** Everyone on the internet (functions.domain.inference.endpoints.OPEN_RANGES). */
export const OPEN_RANGES = ["0.0.0.0/0", "::/0"];

/** Source ranges as typed: one per line or comma-separated. */
export function parseRanges(typed: string): string[] {
  return typed.split(/[\n,]/).map((x) => x.trim()).filter(Boolean);
}

function ipv4Cidr(c: string): boolean {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(c);
  if (!m) return false;
  const octets = m.slice(1, 5).map(Number);
  const bits = Number(m[5]);
  if (octets.some((o) => o > 255) || bits > 32) return false;
  // strict, as the API reads it: no host bits set (203.0.113.7/24 is refused; 203.0.113.0/24 is the block)
  const addr = octets.reduce((a, o) => a * 256 + o, 0);
  const hostBits = 2 ** (32 - bits);
  return addr % hostBits === 0;
}

function ipv6Cidr(c: string): boolean {
  const m = /^([0-9a-fA-F:]+)\/(\d{1,3})$/.exec(c);
  return !!m && m[1].includes(":") && Number(m[2]) <= 128 && (m[1].match(/::/g) ?? []).length <= 1;
}

/** Why these exposure settings would be refused, or undefined. `internetFacing`/`isPublic` as the form has them. */
export function sourceRangesProblem(internetFacing: boolean, isPublic: boolean, ranges: string[]): string | undefined {
  if (internetFacing && !isPublic) {
    if (ranges.length === 0)
      return "An internet-facing endpoint names the CIDRs allowed to reach it (e.g. your office's 203.0.113.0/24); an admin may make it public instead.";
    const everyone = ranges.find((r) => OPEN_RANGES.includes(r));
    if (everyone) return `${everyone} is everyone on the internet: name narrower ranges, or an admin makes the endpoint public.`;
  }
  const bad = ranges.find((r) => !ipv4Cidr(r) && !ipv6Cidr(r));
  if (bad) return `${bad} is not a CIDR block (e.g. 203.0.113.0/24, with no host bits set).`;
  return undefined;
}
