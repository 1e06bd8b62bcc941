// The request target as routing reads it. One route has many spellings, and every component that
// picks something by route (the lean lane, express's router, and through them the rate-limit class)
// must see the same one, or a spelling one of them does not know slips past it (docs/edge.md, "Rate
// limits by route class"). Two rewrites make equivalent targets equal, before anything matches:
//
// - a fragment (`#…`) is cut off: it is never part of an HTTP request target (RFC 9112 §3.2), a raw
//   client can still send one, and express's URL parser ignores it while a pattern ending in
//   `(?:\?|$)` does not — the PDF budget was escaped that way;
// - percent-encoded unreserved characters in the path (`%70df`) are decoded (RFC 3986 §6.2.2.2 — they
//   are the same URI); everything else stays encoded (`%2F` is not a `/`), and the query string is
//   left alone (its parser decodes it anyway).
//
// - an absolute-form target (`http://host/path`, RFC 9112 §3.2.2, which a server must accept) becomes
//   its origin form (`/path`): express's router reads it, but the route groups and the lean lane
//   read the path from the target's first character.
//
// Case and a trailing slash need nothing here: both matchers ignore them. Double slashes are not
// equivalent paths (RFC 3986) and match no route (404). The common target starts with `/` and has
// neither `#` nor `%`: a character test and two native scans, nothing else.

/** ALPHA / DIGIT / "-" / "." / "_" / "~" (RFC 3986 §2.3). */
function isUnreserved(code: number): boolean {
  return (
    (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39) || code === 0x2d || code === 0x2e || code === 0x5f || code === 0x7e
  );
}

const ESCAPE = /%([0-9A-Fa-f]{2})/g;
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

/** The origin form of an absolute-form target; any other target as it is (`*` of OPTIONS included). */
function originForm(url: string): string {
  if (url.charCodeAt(0) === 0x2f) return url;
  const authority = ABSOLUTE_FORM.exec(url);
  if (!authority) return url;
  const rest = url.slice(authority[0].length);
  return rest.charCodeAt(0) === 0x2f ? rest : `/${rest}`;
}

/** `target` in origin form, without its fragment, with the percent-encoded unreserved characters of its path decoded. */
export function normalizeTarget(target: string): string {
  const hash = target.indexOf('#');
  if (hash >= 0) target = target.slice(0, hash);
  target = originForm(target);
  if (target.indexOf('%') < 0) return target;
  const queryAt = target.indexOf('?');
  const path = queryAt < 0 ? target : target.slice(0, queryAt);
  const query = queryAt < 0 ? '' : target.slice(queryAt);
  const decoded = path.replace(ESCAPE, (escape: string, hex: string) => {
    const code = parseInt(hex, 16);
    return isUnreserved(code) ? String.fromCharCode(code) : escape;
  });
  return decoded + query;
}
