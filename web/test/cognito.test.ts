import { afterEach, describe, expect, it, vi } from "vitest";
import { completeCognitoSignIn, getToken } from "../src/auth";

describe("deployed sign-in (Cognito hosted UI, PKCE)", () => {
  afterEach(() => window.history.replaceState(null, "", "/"));

  it("keeps the access token: the API's scoped methods accept nothing else", async () => {
    sessionStorage.setItem("podstart.pkce", JSON.stringify({ verifier: "v", state: "s1", route: "#/clusters" }));
    window.history.replaceState(null, "", "/?code=abc&state=s1");
    const fetchImpl = vi.fn(async () => new Response(JSON.stringify({ id_token: "id-tok", access_token: "acc-tok" })));
    const cfg = { auth: "cognito" as const, apiUrl: "https://api", userPoolDomain: "auth.example", clientId: "c1" };
    expect(await completeCognitoSignIn(cfg, fetchImpl as unknown as typeof fetch)).toBe(true);
    expect(getToken()).toBe("acc-tok");
    const body = String((fetchImpl.mock.calls[0] as unknown as [string, RequestInit])[1].body);
    expect(body).toContain("grant_type=authorization_code");
    expect(window.location.search).toBe("");
  });
});
