// @vitest-environment node
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { TARGET, generate } from "../scripts/openapi.mjs";

describe("src/api/openapi.ts follows the REST OpenAPI document", () => {
  it("is what a fresh generation from functions.api.handler gives (run `make openapi` when it is not)", async () => {
    const fresh = await generate();
    expect(fresh).toContain("OperationOut");
    const committed = readFileSync(TARGET, "utf8");
    // A diff here means a pydantic model changed: `make openapi` and commit web/src/api/openapi.ts.
    expect(committed === fresh ? "up to date" : "stale: run `make openapi`").toBe("up to date");
  }, 60_000);
});
