// Sign-in. Sandbox: a bearer token from the URL fragment (#token=...) or pasted into the sign-in
// form, kept in sessionStorage only. Cloud: Cognito hosted sign-in, authorization code + PKCE,
// configured by /config.json ({"auth": "cognito", "userPoolDomain", "clientId", "apiUrl", "wsUrl"?}).

export interface AuthConfig {
  auth: "sandbox" | "cognito";
  userPoolDomain?: string;
  clientId?: string;
  apiUrl: string; // "" = same origin
  wsUrl?: string;
  scopes?: string;
}

const TOKEN_KEY = "podstart.token";
const PKCE_KEY = "podstart.pkce";

export const SANDBOX: AuthConfig = { auth: "sandbox", apiUrl: "" };

/** Read /config.json. The sandbox's SPA fallback answers it with index.html: that means sandbox mode. */
export async function loadConfig(fetchImpl: typeof fetch = fetch): Promise<AuthConfig> {
  try {
    const res = await fetchImpl("/config.json", { headers: { Accept: "application/json" } });
    if (!res.ok || !(res.headers.get("content-type") ?? "").includes("json")) return SANDBOX;
    const cfg = (await res.json()) as Partial<AuthConfig>;
    if (cfg.auth === "cognito" && cfg.userPoolDomain && cfg.clientId) {
      return {
        auth: "cognito",
        userPoolDomain: cfg.userPoolDomain.replace(/\/$/, ""),
        clientId: cfg.clientId,
        apiUrl: (cfg.apiUrl ?? "").replace(/\/$/, ""),
        wsUrl: cfg.wsUrl,
        scopes: cfg.scopes ?? "openid email profile",
      };
    }
    return { ...SANDBOX, apiUrl: (cfg.apiUrl ?? "").replace(/\/$/, "") };
  } catch {
    return SANDBOX;
  }
}

export function getToken(): string | null {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export function setToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token.trim());
}

export function clearToken(): void {
  sessionStorage.removeItem(TOKEN_KEY);
}

/**
 * Take a token from the fragment (#token=... , also #/route?token=... or #token=...&next=/route),
 * store it, and remove it from the address bar so it is neither bookmarked nor shared.
 */
export function captureTokenFromUrl(loc: Location = window.location, hist: History = window.history): boolean {
  const hash = loc.hash.replace(/^#/, "");
  const m = /(?:^|[?&/])token=([^&]+)/.exec(hash);
  if (!m) return false;
  setToken(decodeURIComponent(m[1]));
  const rest = hash.replace(/(^|[?&])token=[^&]*&?/, "$1").replace(/[?&]$/, "");
  const next = rest.startsWith("/") ? `#${rest}` : "#/clusters";
  hist.replaceState(null, "", `${loc.pathname}${loc.search}${next}`);
  return true;
}

export const SIGNED_IN_EVENT = "podstart:signed-in";

/**
 * A sign-in link opened in a tab that is already running the app changes only the fragment: the page
 * does not reload. Take the token on every hashchange too (sign in, or switch user), before the
 * router reads the address, and tell the app so it starts over as the new user.
 */
export function watchTokenLinks(target: Window = window): () => void {
  const on = () => {
    if (captureTokenFromUrl(target.location, target.history)) target.dispatchEvent(new Event(SIGNED_IN_EVENT));
  };
  target.addEventListener("hashchange", on);
  return () => target.removeEventListener("hashchange", on);
}

// ---- Cognito hosted UI, authorization code + PKCE --------------------------------------------

function b64url(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function randomString(n = 32): string {
  const bytes = new Uint8Array(n);
  crypto.getRandomValues(bytes);
  return b64url(bytes);
}

export async function pkceChallenge(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return b64url(new Uint8Array(digest));
}

function redirectUri(): string {
  return `${window.location.origin}/`;
}

/** Build the hosted sign-in URL and remember the verifier/state for the callback. */
export async function cognitoAuthorizeUrl(cfg: AuthConfig, route = window.location.hash): Promise<string> {
  const verifier = randomString(48);
  const state = randomString(16);
  sessionStorage.setItem(PKCE_KEY, JSON.stringify({ verifier, state, route }));
  const q = new URLSearchParams({
    response_type: "code",
    client_id: cfg.clientId ?? "",
    redirect_uri: redirectUri(),
    scope: cfg.scopes ?? "openid email profile",
    state,
    code_challenge: await pkceChallenge(verifier),
    code_challenge_method: "S256",
  });
  const domain = cfg.userPoolDomain!.startsWith("http") ? cfg.userPoolDomain : `https://${cfg.userPoolDomain}`;
  return `${domain}/oauth2/authorize?${q}`;
}

/** On return from the hosted UI (?code=&state=): exchange the code for tokens. Returns true when signed in. */
export async function completeCognitoSignIn(cfg: AuthConfig, fetchImpl: typeof fetch = fetch): Promise<boolean> {
  const params = new URLSearchParams(window.location.search);
  const code = params.get("code");
  if (!code) return false;
  const saved = JSON.parse(sessionStorage.getItem(PKCE_KEY) ?? "null") as
    | { verifier: string; state: string; route: string }
    | null;
  sessionStorage.removeItem(PKCE_KEY);
  window.history.replaceState(null, "", `${window.location.pathname}${saved?.route || "#/clusters"}`);
  if (!saved || saved.state !== params.get("state")) throw new Error("Sign-in state did not match; try again.");
  const domain = cfg.userPoolDomain!.startsWith("http") ? cfg.userPoolDomain : `https://${cfg.userPoolDomain}`;
  const res = await fetchImpl(`${domain}/oauth2/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      client_id: cfg.clientId ?? "",
      code,
      redirect_uri: redirectUri(),
      code_verifier: saved.verifier,
    }),
  });
  if (!res.ok) throw new Error(`Sign-in failed (${res.status})`);
  const tokens = (await res.json()) as { id_token?: string; access_token?: string };
  // The API's methods require OAuth scopes (podstart/read), so API Gateway's Cognito authorizer accepts
  // access tokens only; an access token also carries the user's cognito:groups (their role).
  const token = tokens.access_token;
  if (!token) throw new Error("Sign-in returned no token");
  setToken(token);
  return true;
}

export function cognitoSignOutUrl(cfg: AuthConfig): string {
  const domain = cfg.userPoolDomain!.startsWith("http") ? cfg.userPoolDomain : `https://${cfg.userPoolDomain}`;
  return `${domain}/logout?${new URLSearchParams({ client_id: cfg.clientId ?? "", logout_uri: redirectUri() })}`;
}
