import { describe, expect, it } from "vitest";
import { fieldPath, mapProblem, type Problem } from "../src/lib/problems";

const KNOWN = ["name", "region", "vpc_cidr", "instance_groups.0.instance_type", "instance_groups.0.instance_count", "instance_groups.0", "storage.fsx_lustre"];

describe("problem+json -> field errors", () => {
  it("drops the request part from loc", () => {
    expect(fieldPath(["body", "instance_groups", 0, "instance_type"])).toBe("instance_groups.0.instance_type");
    expect(fieldPath(["query", "region"])).toBe("region");
    expect(fieldPath([])).toBe("");
  });

  it("puts each error at its field", () => {
    const p: Problem = {
      type: "https://podstart.dev/problems/validation",
      title: "Invalid request",
      status: 422,
      detail: "2 errors",
      errors: [
        { loc: ["body", "name"], msg: "String should match pattern '^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$'" },
        { loc: ["body", "instance_groups", 0, "instance_count"], msg: "5 x ml.p5.48xlarge exceeds the cluster-usage quota: 4 available" },
      ],
    };
    const m = mapProblem(p, KNOWN);
    expect(m.fields).toEqual({
      name: "String should match pattern '^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$'",
      "instance_groups.0.instance_count": "5 x ml.p5.48xlarge exceeds the cluster-usage quota: 4 available",
    });
    expect(m.unclaimed).toEqual([]);
  });

  it("lets the longest known prefix claim a deeper error, and joins two errors on one field", () => {
    const m = mapProblem(
      {
        status: 422,
        errors: [
          { loc: ["body", "storage", "fsx_lustre", "storage_capacity_gib"], msg: "multiple of 1200" },
          { loc: ["body", "instance_groups", 0], msg: "training_plan_arn is required" },
          { loc: ["body", "instance_groups", 0, "volume_size_gb"], msg: "too small" },
          { loc: ["body", "name"], msg: "first" },
          { loc: ["body", "name"], msg: "second" },
        ],
      },
      KNOWN,
    );
    expect(m.fields["storage.fsx_lustre"]).toBe("multiple of 1200");
    expect(m.fields["instance_groups.0"]).toBe("training_plan_arn is required; too small");
    expect(m.fields.name).toBe("first; second");
  });

  it("returns errors no field claims, and the detail when there are no errors", () => {
    expect(mapProblem({ status: 422, errors: [{ loc: ["body", "bogus"], msg: "Extra inputs are not permitted" }] }, KNOWN).unclaimed).toEqual([
      "bogus: Extra inputs are not permitted",
    ]);
    const conflict = mapProblem({ status: 409, title: "Conflict", detail: "cluster llm exists" }, KNOWN);
    expect(conflict).toEqual({ fields: {}, unclaimed: ["cluster llm exists"] });
  });

  it("renames server paths with aliases (an add-group form shows group fields without the index)", () => {
    const m = mapProblem({ errors: [{ loc: ["body", "instance_groups", 0, "instance_type"], msg: "not offered" }] }, ["g.instance_type"], {
      "instance_groups.0": "g",
    });
    expect(m.fields).toEqual({ "g.instance_type": "not offered" });
  });
});

describe("a refused plan says why", () => {
  it("names the fields of a 422 and the detail of a 409", async () => {
    const { refusal } = await import("../src/components/PlanPanel");
    expect(refusal(422, "Invalid request", { errors: [{ loc: ["query", "drain_timeout_s"], msg: "must be at most 3000" }] }))
      .toBe("The request would be refused (HTTP 422): drain_timeout_s: must be at most 3000");
    expect(refusal(409, "1 node(s) are not Schedulable and Running: i-1 (UnschedulablePendingReplacement)",
                   { errors: [{ loc: ["body", "group"], msg: "i-1 is UnschedulablePendingReplacement" }] }))
      .toBe("The request would be refused (HTTP 409): 1 node(s) are not Schedulable and Running: i-1 (UnschedulablePendingReplacement)");
    const many = Array.from({ length: 7 }, (_, i) => ({ loc: ["body", "node_ids", i], msg: "busy" }));
    expect(refusal(422, "d", { errors: many })).toMatch(/node_ids\.4: busy \(and 2 more\)$/);
  });
});
