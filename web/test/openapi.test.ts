// @vitest-environment node
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { RULES_TARGET, TARGET, generate, openapiDocument, rules } from "../scripts/openapi.mjs";

describe("the UI's types and rules follow the REST OpenAPI document", () => {
  it("src/api/openapi.ts and src/api/rules.ts are what a fresh generation from functions.api.handler gives (run `make openapi` when they are not)", async () => {
    const doc = openapiDocument();
    const fresh = await generate(doc);
    expect(fresh).toContain("OperationOut");
    // A diff here means a pydantic model changed: `make openapi` and commit web/src/api/openapi.ts and rules.ts.
    expect(readFileSync(TARGET, "utf8") === fresh ? "up to date" : "stale: run `make openapi`").toBe("up to date");
    const freshRules = rules(doc);
    expect(freshRules).toContain('"ClusterCreate"');
    expect(readFileSync(RULES_TARGET, "utf8") === freshRules ? "up to date" : "stale: run `make openapi`").toBe("up to date");
  }, 60_000);
});
